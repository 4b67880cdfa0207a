"""The reinplace pass (libfx_optimization) against torch 1.13's
torch.fx.passes.reinplace.reinplace, on PyTorch's own tests of it and on
torchvision models: after fx_sdk.run_pipeline(gm, "reinplace") the graph
text and code are torch's, and the numbers eager's. Run by fx_sdk_test.sh.

PyTorch's test_fx_reinplace_pass.py (tools/setup.sh fetches it to
$FX_PYTORCH_TESTS) runs with its `reinplace` replaced by one that runs
both passes on the same graph, checks that they agree and hands the test
the SDK's result, on which the test's own assertions (expected code,
numbers) then run.
"""

import copy
import importlib.util
import os
import sys
import unittest

import pytest
import torch
import torchvision
from functorch import functionalize, make_functional_with_buffers
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.reinplace import reinplace as torch_reinplace

import fx_sdk

TESTS = os.environ.get("FX_PYTORCH_TESTS") or \
    "/var/cache/fx-sdk/pytorch-1.13.1-tests"


def sdk_reinplace(gm, *sample_args):
    """fx_sdk's reinplace; the pass must have run (not rolled back)."""
    out, report = fx_sdk.run_pipeline(gm, "reinplace",
                                      example_inputs=sample_args)
    assert report[0]["outcome"] == "ran", report
    return out


def checked_reinplace(gm, *sample_args):
    """Both passes on gm: the graph text and code must agree."""
    ours = sdk_reinplace(gm, *sample_args)
    theirs = torch_reinplace(gm, *sample_args)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    return ours


def pytorch_reinplace_tests():
    path = os.path.join(TESTS, "test_fx_reinplace_pass.py")
    if not os.path.exists(path):
        return None, []
    # expecttest, which Debian lacks: the conformance suite's stand-in.
    sdk_root = os.path.dirname(os.path.dirname(fx_sdk.__file__))
    sys.path.append(os.path.join(os.path.dirname(sdk_root), "tools",
                                 "conformance", "shims"))
    spec = importlib.util.spec_from_file_location("test_fx_reinplace_pass",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = module.TestReinplacePass
    names = sorted(n for n in dir(cls) if n.startswith("test_"))
    return module, names


MODULE, NAMES = pytorch_reinplace_tests()


@pytest.mark.parametrize("name", NAMES or ["missing"])
def test_pytorch_reinplace_tests(name, monkeypatch):
    if MODULE is None:
        pytest.skip(f"PyTorch's test_fx_reinplace_pass.py is not in {TESTS}")
    monkeypatch.setattr(MODULE, "reinplace", checked_reinplace)
    result = unittest.TestResult()
    MODULE.TestReinplacePass(name).run(result)
    problems = result.errors + result.failures
    assert not problems, problems[0][1]
    assert result.testsRun == 1 and not result.skipped


def functional_graph(model, x):
    """make_fx(functionalize(...)) of the model with its parameters and
    buffers as inputs (torch 1.13's reinplace runs the graph on FakeTensors,
    which a graph reading real parameters fails), and the flat inputs."""
    fmodel, params, buffers = make_functional_with_buffers(model)

    def call(params, buffers, x):
        return fmodel(params, buffers, x)

    gm = make_fx(functionalize(call))(params, buffers, x)
    return gm, [*params, *buffers, x], (params, buffers, x)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small",
                                  "squeezenet1_1"])
def test_torchvision_models(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        expected = model(x)
        gm, inputs, args = functional_graph(model, x)
        ours = sdk_reinplace(gm, *inputs)
        theirs = torch_reinplace(copy.deepcopy(gm), *inputs)
        assert str(ours.graph) == str(theirs.graph)
        assert ours.code == theirs.code
        assert "_.default" in ours.code or "_.Tensor" in ours.code
        torch.testing.assert_close(ours(*args), expected)


class SelfAttention(torch.nn.Module):
    """vit_b_16's attention: _native_multi_head_attention without weights
    returns an undefined tensor as its second output (None in Python)."""

    def __init__(self):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0].relu()


def test_attention_without_weights():
    model = SelfAttention().eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        gm, inputs, args = functional_graph(model, x)
        ours = sdk_reinplace(gm, *inputs)
        theirs = torch_reinplace(copy.deepcopy(gm), *inputs)
        assert ours.code == theirs.code
        assert "relu_.default" in ours.code
        torch.testing.assert_close(ours(*args), model(x))
        # shape_prop records the undefined output as torch's ShapeProp does:
        # type NoneType, no tensor_meta.
        sdk = fx_sdk.from_torch_fx(gm)
        fx_sdk._C._run_pipeline(sdk, "shape_prop{meta=true}", [],
                                [fx_sdk.PLUGIN_DIR], True, inputs,
                                recompile=False, example_batches=[])
        weights = [n for n in sdk.graph.nodes if n.name == "getitem_1"][0]
        assert weights.meta["type"] == "NoneType"
        assert "tensor_meta" not in weights.meta


def test_tensor_meta_instead_of_example_inputs():
    def f(x):
        a = x.clone()
        return a.add(1).mul(2)

    x = torch.ones(3)
    gm = make_fx(f)(x)
    ours, report = fx_sdk.run_pipeline(gm, "shape_prop,reinplace",
                                       example_inputs=[x])
    assert report[1]["outcome"] == "ran"
    theirs = torch_reinplace(gm, x)
    assert ours.code == theirs.code


def test_graph_input_never_written():
    def f(x):
        return x.add(1)

    x = torch.ones(3)
    gm = make_fx(f)(x)
    ours = sdk_reinplace(gm, x)
    assert "add_" not in ours.code
    ours(x)
    assert torch.equal(x, torch.ones(3))


def test_parameter_never_written():
    class AddToWeight(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(3), requires_grad=False)

        def forward(self, x):
            return self.w.add(1) + x

    model = AddToWeight()
    x = torch.ones(3)
    gm = make_fx(model)(x)
    ours = sdk_reinplace(gm, x)
    ours(x)
    ours(x)
    assert torch.equal(ours(x), model(x))


def test_mutating_graph_refused():
    def f(x):
        a = x.clone()
        a.add_(1)
        return a

    gm = make_fx(f)(torch.ones(2))
    code = gm.code
    with pytest.raises(RuntimeError, match=r"rolled back: .*reinplace: node "
                       r"'add_' calls torch.ops.aten.add_.Tensor, which "
                       r"writes its input: reinplace takes a functional "
                       r"graph"):
        fx_sdk.run_pipeline(gm, "reinplace", example_inputs=[torch.ones(2)])
    assert gm.code == code


def test_no_sample_inputs_refused():
    def f(x):
        return torch.ops.aten.add.Tensor(torch.ops.aten.clone.default(x), 1)

    gm = torch.fx.symbolic_trace(f)  # no tensor_meta
    with pytest.raises(RuntimeError, match=r"reinplace needs sample inputs.*"
                       r"placeholder 'x' has neither"):
        fx_sdk.run_pipeline(gm, "reinplace")
