"""fx_sdk's bulk conversions (python/torch_fx_reader.cc, from_torch_fx;
python/torch_fx_builder.cc, to_torch_fx): the GraphModule that comes back
is what torch.fx itself builds, checked against torch.fx's own objects (the
original GraphModule, a fresh recompile, a copy made by torch.fx's
graph_copy). Run by fx_sdk_test.sh.
"""

import copy
import inspect
import operator
import pickle

import pytest
import torch
import torch.fx
from torch.fx.immutable_collections import immutable_dict, immutable_list
from torch.fx.passes.shape_prop import ShapeProp

import fx_sdk


def mixed_graph(repeat=50):
    """A graph built with torch.fx's Graph API: every op, kwargs, lists,
    slices, dtypes, a placeholder default, names that collide (add,
    add_1, ...), several users per node."""
    root = torch.nn.Module()
    root.register_buffer("w", torch.rand(4, 4))
    root.lin = torch.nn.Linear(4, 4)
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    scale = graph.placeholder("scale", default_value=2.0)
    w = graph.get_attr("w")
    for _ in range(repeat):
        y = graph.call_function(torch.add, (x, w), {"alpha": 2})
        y = graph.call_function(operator.mul, (y, scale))
        y = graph.call_module("lin", (y,))
        y = graph.call_method("to", (y,), {"dtype": torch.float32})
        z = graph.call_function(torch.cat, ([y, x],), {"dim": 0})
        z = graph.call_function(operator.getitem, (z, slice(0, 4, None)))
        x = graph.call_function(operator.add, (z, y))
        x = graph.call_function(torch.relu, (x,))
    graph.output((x, [y, w]))
    return torch.fx.GraphModule(root, graph)


def round_trip(gm, lazy=True):
    return fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm), lazy=lazy)


def describe(graph):
    """Everything torch.fx keeps on each node, as comparable text."""
    out = []
    for n in graph.nodes:
        out.append((n.name, n.op, repr(n.target), repr(n.args),
                    repr(dict(n.kwargs)), repr(n.type), repr(n.meta),
                    [u.name for u in n.users],
                    [i.name for i in n.all_input_nodes],
                    type(n.args).__name__, type(n.kwargs).__name__,
                    repr(n.prev), repr(n.next)))
    return out


def container_types(value):
    if isinstance(value, (list, tuple)):
        return [type(value).__name__] + [container_types(v) for v in value]
    if isinstance(value, dict):
        return [type(value).__name__] + [container_types(v)
                                         for v in value.values()]
    return type(value).__name__


@pytest.mark.parametrize("lazy", [True, False])
def test_same_graph_code_and_numbers_as_torch_fx(lazy):
    gm = mixed_graph()
    back = round_trip(gm, lazy=lazy)
    assert isinstance(back, torch.fx.GraphModule)
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    assert describe(back.graph) == describe(gm.graph)
    assert len(back.graph.nodes) == len(gm.graph.nodes)
    for a, b in zip(gm.graph.nodes, back.graph.nodes):
        assert container_types(a.args) == container_types(b.args), a.name
        assert container_types(a.kwargs) == container_types(b.kwargs)
        assert b.graph is back.graph
    x = torch.rand(4, 4)
    assert all(torch.equal(p, q) for p, q in
               zip(torch.utils._pytree.tree_flatten(back(x))[0],
                   torch.utils._pytree.tree_flatten(gm(x))[0]))
    # torch.fx regenerates the same code from the graph built in bulk.
    code = back.code
    back.recompile()
    assert back.code == code


def test_nodes_have_node_init_s_attributes_in_its_order():
    # The builder stores them as Node.__init__ does (object.__setattr__,
    # in its order), so the Nodes are laid out as torch.fx's own.
    gm = mixed_graph(repeat=2)
    back = round_trip(gm)
    assert ([list(vars(n)) for n in back.graph.nodes] ==
            [list(vars(n)) for n in gm.graph.nodes])
    assert type(back.graph._root._next) is torch.fx.Node


def test_lists_and_dicts_are_torch_fxs_immutable_ones():
    gm = mixed_graph(repeat=1)
    back = round_trip(gm)
    cat = next(n for n in back.graph.nodes if n.target is torch.cat)
    assert type(cat.args[0]) is immutable_list
    assert type(cat.kwargs) is immutable_dict
    with pytest.raises(NotImplementedError):
        cat.args[0].append(None)


def test_forward_compiles_on_first_use_when_lazy():
    gm = mixed_graph(repeat=2)
    back = round_trip(gm)
    assert not inspect.isfunction(type(back).__dict__["forward"])
    assert inspect.signature(back.forward) == inspect.signature(gm.forward)
    assert inspect.isfunction(type(back).__dict__["forward"])
    eager = round_trip(gm, lazy=False)
    assert inspect.isfunction(type(eager).__dict__["forward"])
    # Traced again by torch.fx (which reads forward's code object).
    traced = torch.fx.symbolic_trace(round_trip(gm))
    x = torch.rand(4, 4)
    assert torch.equal(traced(x)[0], gm(x)[0])


def test_later_torch_fx_edits_and_recompile():
    gm = mixed_graph(repeat=3)
    back = round_trip(gm)
    reference = copy.deepcopy(gm)
    names = []
    for g in (back.graph, reference.graph):
        relu = [n for n in g.nodes if n.target is torch.relu][0]
        with g.inserting_after(relu):
            new = g.call_function(torch.sigmoid, (relu,))
        relu.replace_all_uses_with(new, lambda user: user is not new)
        add = g.call_function(torch.add, (new, new))  # a name in use
        names.append((new.name, add.name))
        g.erase_node(add)
        g.lint()
    assert names[0] == names[1]
    assert names[0][0] == "sigmoid" and names[0][1].startswith("add_")
    back.recompile()
    reference.recompile()
    assert str(back.graph) == str(reference.graph)
    assert back.code == reference.code
    x = torch.rand(4, 4)
    assert torch.equal(back(x)[0], reference(x)[0])


def test_new_nodes_get_the_names_torch_fx_gives():
    gm = mixed_graph(repeat=4)
    back = round_trip(gm)
    fresh = torch.fx.Graph()
    # torch.fx's own copy, node by node.
    fresh.output(fresh.graph_copy(gm.graph, {}))
    names = []
    for g in (back.graph, fresh):
        out = [n for n in g.nodes if n.op == "output"][0]
        with g.inserting_before(out):
            names.append([
                g.call_function(torch.add, (out.args[0][0], 1)).name,
                g.call_method("relu", (out.args[0][0],)).name,
                g.get_attr("w").name, g.placeholder("x").name])
    assert names[0] == names[1]
    assert names[0][0].startswith("add_")


def test_meta_carried_both_ways():
    gm = mixed_graph(repeat=1)
    ShapeProp(gm).propagate(torch.rand(4, 4))
    for n in gm.graph.nodes:
        n.meta["tag"] = {"pass": n.name, "rank": [1, 2.5, None]}
        n.meta["tensor"] = torch.ones(1)  # not representable: left out
    back = round_trip(gm)
    for a, b in zip(gm.graph.nodes, back.graph.nodes):
        assert b.meta["tag"] == a.meta["tag"]
        assert "tensor" not in b.meta
        if "tensor_meta" in a.meta and type(a.meta["tensor_meta"]).__name__ \
                == "TensorMetadata":
            assert b.meta["tensor_meta"].shape == a.meta["tensor_meta"].shape
            assert b.meta["tensor_meta"].dtype == a.meta["tensor_meta"].dtype
            assert b.meta["tensor_meta"].stride == a.meta["tensor_meta"].stride


def test_pickle_and_deepcopy_of_the_result():
    """As torch.fx's own copies of gm (pickling re-traces the code: a
    buffer read twice is read again at each use)."""
    gm = mixed_graph(repeat=2)
    back = round_trip(gm)
    x = torch.rand(4, 4)
    for make in (copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))):
        other, want = make(back), make(gm)
        assert other.code == want.code
        assert torch.equal(other(x)[0], want(x)[0])


def test_unsupported_value_in_kwargs_names_the_node():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.add, (x, 1), {"alpha": 1 + 2j}))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    with pytest.raises(ValueError, match="node 'add' kwargs"):
        fx_sdk.from_torch_fx(gm)


def test_weights_shared_not_copied():
    gm = mixed_graph(repeat=1)
    back = round_trip(gm)
    assert back.w.data_ptr() == gm.w.data_ptr()
    assert back.lin.weight.data_ptr() == gm.lin.weight.data_ptr()
