"""Graphs torch.fx builds and runs that a stricter reader would refuse
(issue 32, item 5), against torch.fx 1.13 in the same process: a graph
without an output node, a node's meta naming a node defined later or one
erased, a call whose keywords the SDK's hand-written signature for the
target leaves out (torch.div(..., out=None), as tracing through
F.normalize records it).
"""

import tempfile

import pytest
import torch
import torch.fx

import fx_sdk


def sdk_text(sdk_gm):
    return sdk_gm.graph_text.replace("[num_users=", "[#users=")


def torch_text(graph):
    return str(graph)


def graph_without_output():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.relu, (x,))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_a_graph_without_output_prints_generates_and_runs_as_torch_fx():
    gm = graph_without_output()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_text(sdk_gm) == torch_text(gm.graph)
    assert sdk_gm.code == gm.code
    x = torch.randn(3)
    assert sdk_gm(x) is None and gm(x) is None
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert back.code == gm.code and back(x) is None


def test_a_graph_without_output_is_refused_by_the_file_writer():
    sdk_gm = fx_sdk.from_torch_fx(graph_without_output())
    with pytest.raises(ValueError, match="no output node"):
        fx_sdk._C._to_bundle(sdk_gm)


def graph_with_meta_naming_a_later_node():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    relu = graph.call_function(torch.relu, (x,))
    neg = graph.call_function(torch.neg, (relu,))
    relu.meta["partner"] = neg
    graph.output(neg)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_meta_may_name_a_node_defined_later():
    gm = graph_with_meta_naming_a_later_node()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    x = torch.randn(3)
    torch.testing.assert_close(sdk_gm(x), gm(x))
    back = fx_sdk.to_torch_fx(sdk_gm)
    relu = next(n for n in back.graph.nodes if n.name == "relu")
    assert relu.meta["partner"] is relu.next
    assert back.code == gm.code


def test_meta_naming_an_erased_node_is_left_out():
    """torch.fx keeps the erased Node object in meta; the SDK has no node
    to give for it, so the entry is left out rather than invented."""
    gm = graph_with_meta_naming_a_later_node()
    graph = gm.graph
    x = next(iter(graph.nodes))
    extra = graph.call_function(torch.sin, (x,))
    relu = next(n for n in graph.nodes if n.name == "relu")
    relu.meta["erased"] = extra
    graph.erase_node(extra)
    gm.recompile()
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    relu = next(n for n in back.graph.nodes if n.name == "relu")
    assert "erased" not in relu.meta and "partner" in relu.meta
    assert back.code == gm.code


def test_a_keyword_a_hand_written_signature_lacks_binds_to_aten():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    y = graph.placeholder("y")
    div = graph.call_function(torch.div, (x, y), {"out": None})
    floor = graph.call_function(torch.div, (div, y),
                                {"rounding_mode": "floor", "out": None})
    graph.output(floor)
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.code == gm.code
    x, y = torch.randn(4), torch.rand(4) + 0.5
    torch.testing.assert_close(sdk_gm(x, y), gm(x, y))


def test_concrete_none_arguments_keep_their_assertion():
    """concrete_args={'y': None}: torch.fx records _assert_is_none, which the
    runtime knows without the SDK's tracer (split_module's children have
    it too)."""
    def f(x, y=None):
        return x + 1 if y is None else x + y
    gm = torch.fx.symbolic_trace(f, concrete_args={"y": None})
    assert "_assert_is_none" in gm.code
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.code == gm.code
    x = torch.randn(3)
    torch.testing.assert_close(sdk_gm(x, None), gm(x, None))
    with pytest.raises(RuntimeError, match="y has been specialized"):
        sdk_gm(x, 2)
    with pytest.raises(AssertionError, match="y has been specialized"):
        gm(x, 2)


def test_out_given_by_a_placeholder_defaulting_to_none():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    y = graph.placeholder("y")
    out = graph.placeholder("out", default_value=None)
    graph.output(graph.call_function(torch.div, (x, y), {"out": out}))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    sdk_gm = fx_sdk.from_torch_fx(gm)
    x, y = torch.randn(4), torch.rand(4) + 0.5
    torch.testing.assert_close(sdk_gm(x, y), gm(x, y))


def test_a_builtin_wrapped_by_the_user_keeps_its_wrap_statement():
    """torch.fx.wrap('getattr') at a module's top level: torch.fx's code
    starts with the wrap statement that makes the next trace keep it."""
    import sys
    import types
    module = types.ModuleType("wraps_getattr")
    sys.modules["wraps_getattr"] = module
    exec("import torch, torch.fx\n"
         "torch.fx.wrap('getattr')\n"
         "class M(torch.nn.Module):\n"
         "    def forward(self, x):\n"
         "        return getattr(x, 'missing', torch.Tensor([2, 3]))\n",
         module.__dict__)
    gm = torch.fx.symbolic_trace(module.M())
    assert "wrap(\"getattr\")" in gm.code
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.code == gm.code
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert back.code == gm.code
    x = torch.randn(2)
    torch.testing.assert_close(sdk_gm(x), gm(x))
    # Through a bundle: the file says the builtin is wrapped (a reader
    # would not assume it), so the code read back keeps the statement.
    from fx_sdk import torchfx_export, torchfx_import
    document, _ = torchfx_export.graph_document(gm)
    getattr_entry = next(n for n in document["nodes"]
                         if n["target"] == "builtins.getattr")
    assert getattr_entry["meta"]["is_wrapped"] is True
    with tempfile.TemporaryDirectory() as out:
        torchfx_export.export(gm, [x], out)
        assert torchfx_import.load_bundle(out).code == gm.code


def test_a_call_module_the_root_lacks_is_taken_as_torch_fx_takes_it():
    """A graph edited to call a submodule the root does not have, then
    recompiled (a state torch.fx 1.13's replace_pattern passes through
    before it copies the replacement's submodules in): torch.fx's
    recompile() takes it and its gm(x) raises AttributeError. from_torch_fx
    takes it too (text and code as torch.fx's), a call raises naming the
    node and the missing attribute, and to_torch_fx gives back the same
    state: the target absent, and once the submodule is added, torch.fx's
    numbers. A file cannot hold it: the exporter names the node."""
    from fx_sdk import torchfx_export
    gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Sigmoid()))
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    node.target = "tanh"
    gm.recompile()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_text(sdk_gm) == torch_text(gm.graph)
    assert sdk_gm.code == gm.code
    x = torch.randn(3)
    with pytest.raises(AttributeError) as torch_error:
        gm(x)
    with pytest.raises(Exception) as sdk_error:
        sdk_gm(x)
    assert f"node '{node.name}'" in str(sdk_error.value)
    assert str(torch_error.value) in str(sdk_error.value)
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert torch_text(back.graph) == torch_text(gm.graph)
    assert back.code == gm.code
    assert not hasattr(back, "tanh")
    with pytest.raises(AttributeError):
        back(x)
    message = (r"node '.*' \(call_module\) refers to 'tanh', which the "
               r"module does not have")
    with pytest.raises(ValueError, match=message):
        torchfx_export.graph_document(gm)
    gm.add_module("tanh", torch.nn.Tanh())
    back.add_module("tanh", torch.nn.Tanh())
    torch.testing.assert_close(back(x), gm(x), rtol=0, atol=0)


def test_mkldnn_weights_run_in_process_and_a_file_refuses_them():
    """optimize_for_inference's MKLDNN-layout weights have no storage:
    in process the SDK runs the graph with torch.fx's numbers; exporting it
    to a bundle is a ValueError naming the weight (torch.save would fail
    with "Cannot access data pointer")."""
    import torch.fx.experimental.optimization as optimization
    from fx_sdk import torchfx_export
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(16, 32, 3), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 32, 3), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 32, 3)).eval()
    gm = optimization.optimize_for_inference(model)
    assert any(t.is_mkldnn for t in gm.state_dict().values())
    x = torch.randn(1, 16, 12, 12)
    with torch.no_grad():
        torch.testing.assert_close(fx_sdk.from_torch_fx(gm)(x), gm(x))
    with tempfile.TemporaryDirectory() as out:
        with pytest.raises(ValueError, match=r"weight '.*' is an "
                           r"MKLDNN-layout tensor"):
            torchfx_export.export(gm, [x], out)
