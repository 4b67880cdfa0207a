"""fx_sdk's graph API (python/graph.py, python/graph_api.cc) against torch.fx
itself: each edit is written once and run on a torch.fx graph and on the
SDK's graph of the same module; the printed graphs, the generated code and
the numbers must agree. Run by fx_sdk_test.sh under /usr/bin/python3."""

import operator
import re

import pytest
import torch
import torch.fx

import fx_sdk


def num_users(text):
    """torch 1.13 prints [#users=N]; the SDK prints [num_users=N]."""
    return re.sub(r"\[#users=", "[num_users=", text)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.register_buffer("scale", torch.full((4,), 0.5))

    def forward(self, x, y):
        a = torch.relu(self.linear(x))
        b = a[:, 1:].sum(dim=-1, keepdim=True) * self.scale
        c = torch.cat([b, y], dim=0).to(torch.float32)
        return {"out": c + x.size(0), "a": a}


def twins(module=None):
    """A torch.fx GraphModule and the SDK's GraphModule of the same module."""
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(module if module is not None else Model())
    return gm, fx_sdk.from_torch_fx(gm)


def inputs():
    return [torch.rand(3, 4), torch.rand(2, 4)]


def assert_same_graphs(gm, sdk_gm):
    """Text, code after recompile, and numbers (the SDK's module and the
    torch.fx module made from it)."""
    assert str(sdk_gm.graph).rstrip() == num_users(str(gm.graph)).rstrip()
    gm.recompile()
    sdk_gm.recompile()
    assert sdk_gm.code == gm.code
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert back.code == gm.code
    xs = inputs()
    with torch.no_grad():
        want = gm(*xs)
        for key, value in back(*xs).items():
            torch.testing.assert_close(value, want[key])


def edit_both(edit, module=None):
    gm, sdk_gm = twins(module)
    results = (edit(gm.graph), edit(sdk_gm.graph))
    assert_same_graphs(gm, sdk_gm)
    return results


def names(value):
    """Nodes replaced by their names, so both sides compare."""
    if isinstance(value, (torch.fx.Node, fx_sdk.Node)):
        return ("node", value.name)
    if isinstance(value, (list, tuple)):
        return type(value)(names(v) for v in value)
    if isinstance(value, dict):
        return {k: names(v) for k, v in value.items()}
    return value


def named(graph, name):
    return next(n for n in graph.nodes if n.name == name)


def test_nodes_read_as_torch_fx():
    gm, sdk_gm = twins()
    fx_nodes = list(gm.graph.nodes)
    sdk_nodes = sdk_gm.graph.nodes
    assert [n.name for n in sdk_nodes] == [n.name for n in fx_nodes]
    for f, s in zip(fx_nodes, sdk_nodes):
        assert s.op == f.op, f.name
        if f.op == "call_function":
            assert s.target is f.target, f.name  # the function itself
        else:
            assert s.target == f.target, f.name
        assert names(s.args) == names(f.args), f.name
        assert names(s.kwargs) == names(f.kwargs), f.name
        assert [u.name for u in s.users] == [u.name for u in f.users], f.name
        assert isinstance(s.users, dict)
        assert ([n.name for n in s.all_input_nodes]
                == [n.name for n in f.all_input_nodes]), f.name
        assert s.format_node() == num_users(f.format_node()), f.name
        assert s.graph.owning_module is sdk_gm
    assert sdk_nodes[1].prev == sdk_nodes[0] and sdk_nodes[0].next == sdk_nodes[1]
    assert sdk_nodes[0].prev is None and sdk_nodes[-1].next is None


def test_argument_values_round_trip_through_the_sdk():
    values = [None, True, 3, -2.5, float("inf"), "s", (1, 2), [3, [4]],
              {"k": 1.0}, slice(1, None, 2), Ellipsis, torch.float16,
              torch.device("cpu"), torch.channels_last, torch.strided,
              torch.Size([2, 3])]
    gm, sdk_gm = twins()
    node = named(sdk_gm.graph, "relu")
    for value in values:
        node.update_kwarg("v", value)
        got = node.kwargs["v"]
        want = tuple(value) if isinstance(value, torch.Size) else value
        assert got == want and type(got) is type(want), value


def test_replace_a_function_and_erase():
    def edit(graph):
        for node in graph.nodes:
            if node.op == "call_function" and node.target is torch.relu:
                with graph.inserting_after(node):
                    new = graph.call_function(torch.sigmoid, (node.args[0],))
                changed = node.replace_all_uses_with(new)
                graph.erase_node(node)
                graph.lint()
                return [n.name for n in changed]
    fx_changed, sdk_changed = edit_both(edit)
    assert sdk_changed == fx_changed


def test_insertion_points():
    """inserting_after(n) puts each new node right after n (reverse order);
    inserting_before(None) is the start, inserting_after(None) the end."""
    def edit(graph):
        nodes = list(graph.nodes)
        linear = next(n for n in nodes if n.op == "call_module")
        with graph.inserting_after(linear):
            graph.call_function(torch.neg, (linear,))
            graph.call_method("abs", (linear,))  # goes before neg
        with graph.inserting_before(linear):
            graph.call_function(operator.mul, (nodes[0], 2))
        with graph.inserting_before(None):
            graph.placeholder("z", type_expr=torch.Tensor)
        with graph.inserting_after(nodes[1]):
            graph.placeholder("scale_by", default_value=2.0)
            graph.placeholder("opt", default_value=None)
        with graph.inserting_before(nodes[-1]):
            graph.get_attr("scale")
        graph.eliminate_dead_code()
    gm, sdk_gm = twins()
    edit(gm.graph)
    edit(sdk_gm.graph)
    assert str(sdk_gm.graph).rstrip() == num_users(str(gm.graph)).rstrip()
    gm.recompile()
    sdk_gm.recompile()
    assert sdk_gm.code == gm.code


def test_new_nodes_get_torch_fx_names_and_types():
    def edit(graph):
        x = list(graph.nodes)[0]
        output = list(graph.nodes)[-1]
        with graph.inserting_before(output):
            a = graph.create_node("call_function", operator.add, (x, 1),
                                  name="add")  # taken: add_1, ...
            b = graph.call_function(torch.add, (a, x), {"alpha": 2},
                                    type_expr=torch.Tensor)
            c = graph.call_method("sum", (b,), {"dim": 0})
            d = graph.call_module("linear", (c,))
        return [n.name for n in (a, b, c, d)]
    fx_names, sdk_names = edit_both(edit)
    assert sdk_names == fx_names


def test_args_kwargs_and_users_order():
    """Setting a node's arguments moves it to the end of each input's users,
    as torch.fx does."""
    def edit(graph):
        nodes = {n.name: n for n in graph.nodes}
        x, y = nodes["x"], nodes["y"]
        nodes["cat"].update_arg(0, [nodes["mul"], y])
        nodes["sum_1"].update_kwarg("keepdim", True)
        nodes["to"].args = (nodes["cat"], torch.float64)
        nodes["to"].kwargs = {"copy": True}
        nodes["size"].replace_input_with(x, y)
        return {n: [u.name for u in nodes[n].users] for n in ("x", "y", "mul")}
    fx_users, sdk_users = edit_both(edit)
    assert sdk_users == fx_users


def test_replace_all_uses_with_filter_and_propagate_meta():
    def edit(graph):
        nodes = {n.name: n for n in graph.nodes}
        a = nodes["relu"]
        with graph.inserting_after(a):
            b = graph.call_function(torch.tanh, (a,))
        a.meta["tag"] = "kept"
        changed = a.replace_all_uses_with(
            b, delete_user_cb=lambda user: user is not b and user.op != "output")
        return [n.name for n in changed]
    fx_changed, sdk_changed = edit_both(edit)
    assert sdk_changed == fx_changed
    gm, sdk_gm = twins()
    a = {n.name: n for n in sdk_gm.graph.nodes}["relu"]
    with sdk_gm.graph.inserting_after(a):
        b = sdk_gm.graph.call_function(torch.tanh, (a,))
    a.meta["tag"] = "kept"
    a.replace_all_uses_with(b, lambda user: user != b, propagate_meta=True)
    assert b.meta["tag"] == "kept"


def test_move_nodes():
    def edit(graph):
        nodes = {n.name: n for n in graph.nodes}
        nodes["y"].append(nodes["size"])     # size moves right after y
        nodes["x"].append(nodes["scale"])    # the get_attr right after x
    edit_both(edit)


def test_erase_a_node_with_users_raises():
    gm, sdk_gm = twins()
    relu = [n for n in sdk_gm.graph.nodes if n.name == "relu"][0]
    with pytest.raises(RuntimeError, match="still had 2 users"):
        sdk_gm.graph.erase_node(relu)
    fx_relu = [n for n in gm.graph.nodes if n.name == "relu"][0]
    with pytest.raises(RuntimeError, match="still had 2 users"):
        gm.graph.erase_node(fx_relu)
    assert str(sdk_gm.graph).rstrip() == num_users(str(gm.graph)).rstrip()


def test_lint_finds_a_use_before_its_definition():
    for gm in twins():
        graph = gm.graph
        nodes = {n.name: n for n in graph.nodes}
        nodes["x"].append(nodes["relu"])  # relu before its input linear
        with pytest.raises(RuntimeError, match="used before it has been defined"):
            graph.lint()


def test_eliminate_dead_code():
    def edit(graph):
        x = list(graph.nodes)[0]
        with graph.inserting_after(x):
            graph.call_function(torch.neg, (x,))
            graph.call_method("relu", (x,))
        return graph.eliminate_dead_code()
    assert edit_both(edit) == (True, True)


def test_meta_is_a_live_dict_of_representable_values():
    gm, sdk_gm = twins()
    node = named(sdk_gm.graph, "linear")
    node.meta["note"] = {"shape": (3, 4), "dtype": torch.float32}
    assert node.meta["note"] == {"shape": (3, 4), "dtype": torch.float32}
    assert "note" in node.meta and len(node.meta) == 1
    del node.meta["note"]
    assert dict(node.meta) == {}
    with pytest.raises(KeyError):
        node.meta["missing"]
    with pytest.raises(ValueError, match="node 'linear' meta 'value'"):
        node.meta["value"] = torch.zeros(2)  # tensors are not representable


def test_meta_crosses_from_the_sdk_to_torch_fx():
    gm, sdk_gm = twins()
    named(sdk_gm.graph, "linear").meta["stage"] = 2
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert named(back.graph, "linear").meta.get("stage") == 2


def test_errors():
    gm, sdk_gm = twins()
    other = fx_sdk.from_torch_fx(gm)
    graph = sdk_gm.graph
    x = graph.nodes[0]
    with pytest.raises(ValueError, match="belongs to another graph"):
        graph.call_function(torch.neg, (other.graph.nodes[0],))
    with pytest.raises(ValueError, match="cannot hold a Node"):
        graph.call_function(torch.neg, (list(gm.graph.nodes)[0],))  # torch.fx's
    with pytest.raises(ValueError, match="node 'x' args"):
        x.args = (object(),)
    with pytest.raises(ValueError, match="unknown op"):
        graph.create_node("call_nothing", "f")
    with pytest.raises(TypeError):
        graph.call_module(torch.nn.ReLU())


def test_handles_raise_once_a_rollback_replaced_the_graph():
    gm, sdk_gm = twins()
    node = named(sdk_gm.graph, "linear")
    # dce edits in place: the handles stay good.
    fx_sdk._C._run_pipeline(sdk_gm, "dce", [], [fx_sdk.PLUGIN_DIR], True, [])
    assert node.name == "linear"
    # A failing pass is rolled back: the graph is a snapshot now, which may
    # even sit where the old graph was. Twice, to reuse the freed address.
    for _ in range(2):
        with pytest.raises(RuntimeError, match="rolled back"):
            fx_sdk._C._run_pipeline(sdk_gm, "shape_prop{shapes=7x7}", [],
                                    [fx_sdk.PLUGIN_DIR], True, [])
        with pytest.raises(RuntimeError, match="read gm.graph again"):
            node.name
        with pytest.raises(RuntimeError, match="read gm.graph again"):
            node.graph.nodes
    assert named(sdk_gm.graph, "linear").op == "call_module"
