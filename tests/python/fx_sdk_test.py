"""fx_sdk (python/fx_sdk.py): torch.fx GraphModules to the SDK and back in
memory, the SDK's plans and pipelines on them. Run by fx_sdk_test.sh with
PYTHONPATH at the built package and FX_SDK_REFERENCE at ../shared/reference.
"""

import os
import re

import pytest
import torch
import torch.fx

import fx_sdk
from fx_sdk import torchfx_import

REFERENCE = os.environ.get("FX_SDK_REFERENCE", "")
BUNDLES = sorted(
    name for name in (os.listdir(REFERENCE) if os.path.isdir(REFERENCE) else [])
    if os.path.exists(os.path.join(REFERENCE, name, "graph.fx.json")))


def num_users(text):
    """torch 1.13 prints [#users=N]; the SDK prints the current docs'
    [num_users=N]."""
    return re.sub(r"\[#users=", "[num_users=", text)


def flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flatten(v)]
    return []


def assert_same_outputs(got, want):
    got, want = flatten(got), flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g, w) or torch.allclose(g, w, equal_nan=True, rtol=0, atol=0)


def assert_round_trip(gm, inputs, sdk_rtol=1e-4, sdk_atol=1e-5):
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text.rstrip() == num_users(str(gm.graph)).rstrip()
    assert sdk_gm.code == gm.code
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert isinstance(back, torch.fx.GraphModule)
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    with torch.no_grad():
        want = gm(*inputs)
        assert_same_outputs(back(*inputs), want)
        for g, w in zip(flatten(sdk_gm(*inputs)), flatten(want)):
            torch.testing.assert_close(g, w, rtol=sdk_rtol, atol=sdk_atol,
                                       equal_nan=True)
    # Shared, not copied: the same storage on all three sides.
    original = dict(gm.named_parameters())
    original.update(gm.named_buffers())
    for name, tensor in list(back.named_parameters()) + list(back.named_buffers()):
        assert tensor.data_ptr() == original[name].data_ptr(), name
    return sdk_gm, back


@pytest.mark.parametrize("name", BUNDLES)
def test_reference_bundle_round_trip(name):
    directory = os.path.join(REFERENCE, name)
    gm = torchfx_import.load_bundle(directory)
    with open(os.path.join(directory, "graph.txt")) as f:
        reference_text = f.read()
    with open(os.path.join(directory, "code.py")) as f:
        reference_code = f.read()
    inputs_path = os.path.join(directory, "input.pt")
    inputs = torch.load(inputs_path) if os.path.exists(inputs_path) else None
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text.rstrip() == reference_text.rstrip()
    assert sdk_gm.code == reference_code
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert num_users(str(back.graph)).rstrip() == reference_text.rstrip()
    assert back.code == reference_code
    if inputs is not None and os.path.exists(os.path.join(directory, "expected.pt")):
        expected = torch.load(os.path.join(directory, "expected.pt"))
        with torch.no_grad():
            if gm.training:  # dropout: only the module's own output is stable
                return
            assert_same_outputs(back(*inputs), gm(*inputs))
            for g, w in zip(flatten(sdk_gm(*inputs)), flatten(expected)):
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


# torchvision models torch.fx traces (shufflenet_v2 and vit_b_16 it cannot):
# wrapped functions (efficientnet's stochastic_depth), namedtuple outputs
# (googlenet, inception_v3 without aux_logits), grouped convolutions, dense
# concatenation, windowed attention (swin_t).
TORCHVISION = ["resnet18", "mobilenet_v2", "efficientnet_b0",
               "mobilenet_v3_small", "squeezenet1_0", "regnet_x_400mf",
               "mnasnet0_5", "googlenet", "inception_v3", "densenet121",
               "swin_t"]


@pytest.mark.parametrize("model", TORCHVISION)
def test_torchvision_round_trip(model):
    import torchvision.models
    torch.manual_seed(0)
    config = ({"aux_logits": False, "init_weights": False}
              if model in ("googlenet", "inception_v3") else {})
    module = getattr(torchvision.models, model)(**config).eval()
    size = 299 if model == "inception_v3" else 224
    gm = torch.fx.symbolic_trace(module)
    assert_round_trip(gm, [torch.rand(1, 3, size, size)])


def test_parameters_are_shared_in_both_directions():
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(torch.nn.Sequential(
        torch.nn.Linear(4, 3), torch.nn.ReLU()).eval())
    sdk_gm = fx_sdk.from_torch_fx(gm)
    back = fx_sdk.to_torch_fx(sdk_gm)
    x = torch.rand(2, 4)
    with torch.no_grad():
        gm.get_submodule("0").weight.mul_(2)
        torch.testing.assert_close(sdk_gm(x), gm(x))
        torch.testing.assert_close(back(x), gm(x))


def test_call_function_targets_and_argument_values():
    class M(torch.nn.Module):
        def forward(self, x, y):
            a = torch.cat([x, y], dim=0)[1:, ...]
            b = a.to(torch.float64).to(torch.float32)
            c = torch.nn.functional.relu(b.reshape((-1,)))
            d = torch.sum(x, dim=-1, keepdim=True) * 0.5
            return {"c": c, "d": d + float("inf") * 0, "n": x.size(0)}
    gm = torch.fx.symbolic_trace(M())
    assert_round_trip(gm, [torch.rand(2, 3), torch.rand(2, 3)])


def test_get_attr_tensor_constant():
    class M(torch.nn.Module):
        def forward(self, x):
            return x + torch.tensor([1.0, 2.0])
    gm = torch.fx.symbolic_trace(M())
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    assert_round_trip(gm, [torch.rand(3, 2)])


def test_pipeline_with_first_party_dce():
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    graph = gm.graph
    x = next(iter(graph.nodes))
    with graph.inserting_after(x):
        graph.call_function(torch.neg, (x,))  # unused: dce removes it
    gm.recompile()
    out, report = fx_sdk.run_pipeline(gm, "dce")
    assert [r["pass"] for r in report] == ["dce"]
    assert report[0]["outcome"] == "ran"
    assert report[0]["changed"] is True
    assert report[0]["seconds"] >= 0
    assert isinstance(out, torch.fx.GraphModule)
    assert "neg" not in out.code and "neg" in gm.code
    x = torch.randn(4)
    torch.testing.assert_close(out(x), gm(x))


def test_pipeline_with_plugin_files_and_options():
    import torchvision.models
    gm = torch.fx.symbolic_trace(torchvision.models.resnet18().eval())
    plugins = [os.path.join(fx_sdk.PLUGIN_DIR, name) for name in
               ("libfx_shape_prop.so", "libfx_decompose.so", "libfx_passes.so")]
    out, report = fx_sdk.run_pipeline(
        gm, "shape_prop{shapes=1x3x224x224},decompose{rules=relu},dce",
        plugins=plugins, default_plugins=False)
    assert [r["pass"] for r in report] == ["shape_prop", "decompose", "dce"]
    assert all(r["outcome"] == "ran" for r in report)
    x = torch.rand(1, 3, 224, 224)
    with torch.no_grad():
        torch.testing.assert_close(out(x), gm(x), rtol=1e-4, atol=1e-5)


def test_unsupported_argument_names_the_node():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.add, (x, 1 + 2j)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    with pytest.raises(ValueError, match="node 'add'"):
        fx_sdk.from_torch_fx(gm)


def test_target_without_kernel_runs_in_python_and_files_name_it():
    def my_function(x):
        return x + 1
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(my_function, (x,)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    sdk_gm = fx_sdk.from_torch_fx(gm)  # python_callables_test has the rest
    x = torch.rand(3)
    torch.testing.assert_close(sdk_gm(x), gm(x))
    with pytest.raises(ValueError, match="my_function"):
        fx_sdk._C._to_bundle(sdk_gm)


def test_unknown_module_kind_runs_in_python_and_files_name_it():
    class Custom(torch.nn.Module):
        def forward(self, x):
            return x

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.custom = Custom()

        def forward(self, x):
            return self.custom(x)

    class Tracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Custom) or super().is_leaf_module(m, qualname)
    root = M()
    gm = torch.fx.GraphModule(root, Tracer().trace(root))
    sdk_gm = fx_sdk.from_torch_fx(gm)  # kept as the Python object
    with pytest.raises(ValueError, match="'custom'.*Custom"):
        fx_sdk._C._to_bundle(sdk_gm)


def test_pipeline_errors():
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    with pytest.raises(ValueError, match="no_such_pass"):
        fx_sdk.run_pipeline(gm, "no_such_pass")
    with pytest.raises(ValueError):
        fx_sdk.run_pipeline(gm, "dce{")


def test_type_errors():
    with pytest.raises(TypeError):
        fx_sdk.from_torch_fx(torch.nn.ReLU())
    with pytest.raises(TypeError):
        fx_sdk.to_torch_fx(torch.fx.symbolic_trace(torch.nn.ReLU()))


def _relu_graph_module():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.relu, (x,)))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.mark.parametrize("target", ["torch.relu", None])
def test_a_call_function_target_that_is_no_callable_is_named(target):
    """torch.fx refuses it when the node is made; a target set afterwards
    gets a ValueError naming the node, not an AttributeError."""
    gm = _relu_graph_module()
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    node.target = target
    with pytest.raises(ValueError, match=r"node 'relu' \(call_function\): "
                       r"its target is a (str|NoneType) .*not a callable"):
        fx_sdk.from_torch_fx(gm)


def test_a_str_that_is_not_utf8_is_named_with_its_node():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.add, (x, x), {"alpha": "\udc80"}))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    with pytest.raises(ValueError, match="node 'add' kwargs cannot be "
                       "encoded as UTF-8"):
        fx_sdk.from_torch_fx(gm)


def test_meta_crosses_both_ways():
    """shape_prop's tensor_meta and other representable meta survive the
    round trip; what the format has no form for (a tensor, a type) is left
    out."""
    from torch.fx.passes.shape_prop import ShapeProp
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(torch.nn.Sequential(
        torch.nn.Linear(4, 3), torch.nn.ReLU()).eval())
    ShapeProp(gm).propagate(torch.rand(2, 4))
    nodes = list(gm.graph.nodes)
    nodes[1].meta["note"] = {"stage": 2, "tags": ["a", "b"]}
    nodes[1].meta["tensor"] = torch.zeros(2)
    nodes[1].meta["cls"] = torch.nn.Linear
    sdk_gm = fx_sdk.from_torch_fx(gm)
    sdk_node = sdk_gm.graph.nodes[1]
    assert sdk_node.meta["note"] == {"stage": 2, "tags": ["a", "b"]}
    assert sdk_node.meta["tensor_meta"]["shape"] == [2, 3]
    assert "tensor" not in sdk_node.meta and "cls" not in sdk_node.meta
    back = fx_sdk.to_torch_fx(sdk_gm)
    for original, copy in zip(nodes, back.graph.nodes):
        assert copy.meta.get("tensor_meta") == original.meta.get("tensor_meta")
    assert list(back.graph.nodes)[1].meta["note"] == nodes[1].meta["note"]


class ResultTypes(torch.nn.Module):
    def forward(self, x):
        s = x.size()
        m = torch.max(x, 1)
        return (s, x.shape[1:], m, m.values, x.sort(1),
                torch.ops.aten.max.dim(x, 1), {"s": [s]})


def python_types(value):
    if isinstance(value, (tuple, list)):
        return (type(value), [python_types(v) for v in value])
    if isinstance(value, dict):
        return (dict, {k: python_types(v) for k, v in value.items()})
    return type(value)


def test_results_have_pythons_types():
    """torch.Size and torch.return_types come back as those classes."""
    gm = torch.fx.symbolic_trace(ResultTypes())
    x = torch.randn(3, 4)
    want = gm(x)
    got = fx_sdk.from_torch_fx(gm)(x)
    assert python_types(got) == python_types(want)
    assert got[0] == want[0] and got[1] == want[1]
    assert torch.equal(got[2].indices, want[2].indices)
    compiled = fx_sdk.compile(gm, [x])
    assert python_types(compiled(x)) == python_types(want)
