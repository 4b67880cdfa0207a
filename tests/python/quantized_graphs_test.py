"""PyTorch's lowered quantized graphs (torch.ao.quantization's convert_fx,
engine onednn) through the SDK (issue 33, item 1): the quantized Conv2d,
ConvReLU2d, Linear, LinearReLU, Conv1d, Conv3d, LeakyReLU, ELU, LayerNorm,
GroupNorm and InstanceNorm modules, the dynamic Linear and eager mode's
Quantize / DeQuantize stubs, and convert_to_reference_fx's reference
Conv/Linear modules inside fused containers run on
LibTorch's int8 kernels in C++, in process and from bundle files, with
PyTorch's numbers; text and
code as torch.fx's; to_torch_fx and the Python importer give back
quantized modules with the same int8 weights. Every expected value is
PyTorch's own, computed here.
"""

import copy
import json
import os
import subprocess
import tempfile

import pytest
import torch
import torch.fx
import torchvision
from torch.ao.quantization import (QConfigMapping, default_dynamic_qconfig,
                                   default_qconfig, get_default_qconfig_mapping)
from torch.ao.quantization.quantize_fx import (convert_fx,
                                               convert_to_reference_fx,
                                               prepare_fx)

import fx_sdk
from fx_command import fx_binary
from fx_sdk import torchfx_export, torchfx_import


class MLP(torch.nn.Module):
    """Linear + ReLU (LinearReLU when lowered), a plain Linear, no bias on
    the last."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 16)
        self.fc2 = torch.nn.Linear(16, 8)
        self.fc3 = torch.nn.Linear(8, 4, bias=False)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.fc3(self.fc2(self.relu(self.fc1(x))))


def lowered(model, example, calibration, convert=convert_fx, qconfig=None):
    """convert_fx (or `convert`) of `model` prepared with onednn's default
    qconfig (or `qconfig`) and calibrated on `calibration`."""
    torch.backends.quantized.engine = "onednn"
    examples = example if isinstance(example, tuple) else (example,)
    prepared = prepare_fx(copy.deepcopy(model).eval(),
                          qconfig or get_default_qconfig_mapping("onednn"),
                          examples)
    with torch.no_grad():
        for batch in calibration:
            prepared(*(batch if isinstance(batch, tuple) else (batch,)))
    return convert(prepared)


@pytest.fixture(scope="module")
def resnet():
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(2, 3, 64, 64)
    q = lowered(model, x, [torch.randn(2, 3, 64, 64) for _ in range(3)])
    return q, x


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(1)
    x = torch.randn(5, 12)
    return lowered(MLP(), x, [torch.randn(5, 12) for _ in range(3)]), x


@pytest.fixture(scope="module")
def mixed():
    """A standalone BatchNorm2d and a Hardswish after a ConvReLU2d: the
    quantized BatchNorm2d and Hardswish modules (scale and zero_point as
    buffers or as constructor arguments)."""
    torch.manual_seed(2)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.BatchNorm2d(4),
        torch.nn.Hardswish(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(4, 3)).eval()
    model[2].running_mean.uniform_(-1, 1)
    model[2].running_var.uniform_(0.5, 2)
    x = torch.randn(2, 3, 8, 8)
    return lowered(model, x, [torch.randn(2, 3, 8, 8) for _ in range(3)]), x


@pytest.fixture(scope="module")
def dynamic():
    """convert_fx with the default dynamic qconfig: torch.ao.nn.quantized.
    dynamic's Linear (float in and out, the input quantized per call)."""
    torch.manual_seed(3)
    torch.backends.quantized.engine = "onednn"
    x = torch.randn(5, 12)
    prepared = prepare_fx(MLP().eval(),
                          QConfigMapping().set_global(default_dynamic_qconfig),
                          (x,))
    return convert_fx(prepared), x


class MoreKinds(torch.nn.Module):
    """Conv1d with LeakyReLU and ELU after it, Conv3d with a BatchNorm3d
    (fused into it), Conv2d with ReLU: their quantized modules."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(4, 8, 3)
        self.leaky = torch.nn.LeakyReLU(0.1)
        self.elu = torch.nn.ELU()
        self.c3 = torch.nn.Conv3d(2, 4, 3)
        self.bn3 = torch.nn.BatchNorm3d(4)
        self.c2 = torch.nn.Conv2d(3, 4, 3)

    def forward(self, a, b, c):
        return (self.elu(self.leaky(self.c1(a))), self.bn3(self.c3(b)),
                torch.relu(self.c2(c)))


@pytest.fixture(scope="module")
def more():
    torch.manual_seed(5)
    torch.backends.quantized.engine = "onednn"
    x = (torch.randn(2, 4, 10), torch.randn(1, 2, 6, 6, 6),
         torch.randn(1, 3, 8, 8))
    prepared = prepare_fx(MoreKinds().eval(),
                          get_default_qconfig_mapping("onednn"), x)
    with torch.no_grad():
        prepared(*x)
    return convert_fx(prepared), x


@pytest.fixture(scope="module")
def norms():
    """The quantized LayerNorm, GroupNorm and InstanceNorm2d (constructed
    as torch.ao.nn.quantized builds them from float modules) between the
    eager-mode Quantize and DeQuantize stubs, traced."""
    torch.manual_seed(6)
    nnq = torch.ao.nn.quantized

    def affine(*shape):  # the float module's parameters, as from_float
        return (torch.nn.Parameter(torch.rand(*shape) + 0.5),
                torch.nn.Parameter(torch.randn(*shape)))
    model = torch.nn.Sequential(
        nnq.Quantize(0.05, 64, torch.quint8),
        nnq.GroupNorm(2, 4, *affine(4), 0.04, 60),
        nnq.InstanceNorm2d(4, *affine(4), 0.04, 70, affine=True),
        nnq.LayerNorm([4, 6, 6], *affine(4, 6, 6), 0.05, 64),
        nnq.DeQuantize()).eval()
    return torch.fx.symbolic_trace(model), torch.randn(2, 4, 6, 6)


@pytest.fixture(scope="module")
def norms_int_scale():
    """The quantized norms with whole-number output scales, which torch
    keeps as int64 buffers (torch.tensor(2)): a file then says `2`, not
    `2.0`."""
    torch.manual_seed(7)
    nnq = torch.ao.nn.quantized
    weight = torch.nn.Parameter(torch.rand(4) + 0.5)
    bias = torch.nn.Parameter(torch.randn(4))
    model = torch.nn.Sequential(
        nnq.Quantize(0.05, 64, torch.quint8),
        nnq.GroupNorm(2, 4, weight, bias, 1, 60),
        nnq.LayerNorm([6], torch.nn.Parameter(torch.rand(6) + 0.5),
                      torch.nn.Parameter(torch.randn(6)), 2, 64),
        nnq.DeQuantize()).eval()
    return torch.fx.symbolic_trace(model), torch.randn(2, 4, 6, 6) * 8


@pytest.fixture(scope="module")
def eager():
    """Eager-mode quantization (torch.ao.quantization.prepare / convert on
    torchvision's quantizable resnet18, fused), traced by torch.fx: the
    Quantize and DeQuantize stubs, QFunctional's add_relu, the quantized
    modules."""
    torch.manual_seed(4)
    torch.backends.quantized.engine = "onednn"
    model = torchvision.models.quantization.resnet18(quantize=False).eval()
    model.fuse_model()
    model.qconfig = torch.ao.quantization.get_default_qconfig("onednn")
    torch.ao.quantization.prepare(model, inplace=True)
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn_like(x))
    torch.ao.quantization.convert(model, inplace=True)
    return torch.fx.symbolic_trace(model), x


@pytest.fixture(scope="module")
def reference_resnet():
    """convert_to_reference_fx's form: quantize/dequantize around float ops,
    reference Conv2d/Linear (per-channel qint8 weights) inside fused
    ConvReLU2d containers."""
    torch.manual_seed(5)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(2, 3, 64, 64)
    return lowered(model, x, [torch.randn(2, 3, 64, 64) for _ in range(3)],
                   convert=convert_to_reference_fx), x


class ReferenceKinds(torch.nn.Module):
    """Conv1d, a bias-free Conv3d and Linear + ReLU (LinearReLU)."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(4, 6, 3, padding=1)
        self.c3 = torch.nn.Conv3d(2, 3, 2, bias=False)
        self.fc = torch.nn.Linear(6, 5)
        self.relu = torch.nn.ReLU()

    def forward(self, x, v):
        return self.relu(self.fc(self.c1(x).mean(-1))), self.c3(v)


@pytest.fixture(scope="module")
def reference_kinds():
    """The reference form with per-tensor weights (default_qconfig)."""
    torch.manual_seed(6)
    x = (torch.randn(2, 4, 8), torch.randn(1, 2, 4, 4, 4))
    calibration = [(torch.randn(2, 4, 8), torch.randn(1, 2, 4, 4, 4))
                   for _ in range(3)]
    return lowered(ReferenceKinds(), x, calibration,
                   convert=convert_to_reference_fx,
                   qconfig=QConfigMapping().set_global(default_qconfig)), x


def reference_modules(gm):
    return {name: m for name, m in gm.named_modules()
            if hasattr(m, "weight_qscheme")}


def test_the_reference_graphs_hold_reference_modules(reference_resnet,
                                                     reference_kinds):
    ours = {type(m).__module__ + "." + type(m).__name__
            for m in reference_resnet[0].modules()}
    assert {"torch.ao.nn.intrinsic.modules.fused.ConvReLU2d",
            "torch.ao.nn.quantized.reference.modules.conv.Conv2d",
            "torch.ao.nn.quantized.reference.modules.linear.Linear"} <= ours
    kinds = reference_modules(reference_kinds[0])
    assert {type(m).__name__ for m in kinds.values()} == {
        "Conv1d", "Conv3d", "Linear"}
    assert {m.weight_qscheme for m in kinds.values()} == {
        torch.per_tensor_affine}


def sdk_text(sdk_gm):
    return sdk_gm.graph_text.replace("[num_users=", "[#users=")


def quantized_module_types(gm):
    return sorted({type(m).__name__ for m in gm.modules()
                   if callable(getattr(m, "set_weight_bias", None))
                   and hasattr(m, "scale")})


def test_the_lowered_graphs_hold_the_quantized_modules(resnet, mlp, mixed,
                                                       dynamic, more):
    assert {type(m).__name__ for m in more[0].modules()} >= {
        "Conv1d", "Conv2d", "Conv3d", "LeakyReLU", "ELU"}
    assert quantized_module_types(resnet[0]) == ["Conv2d", "ConvReLU2d",
                                                 "Linear"]
    assert {type(m).__module__ for m in dynamic[0].modules()} >= {
        "torch.ao.nn.quantized.dynamic.modules.linear"}
    assert quantized_module_types(mlp[0]) == ["Linear", "LinearReLU"]
    quantized = {type(m).__module__ + "." + type(m).__name__
                 for m in mixed[0].modules()}
    assert {"torch.ao.nn.quantized.modules.batchnorm.BatchNorm2d",
            "torch.ao.nn.quantized.modules.activation.Hardswish"} <= quantized


@pytest.mark.parametrize("which", ["resnet", "mlp", "mixed", "dynamic",
                                   "eager", "more", "norms",
                                   "reference_resnet", "reference_kinds"])
def test_in_process_text_code_and_int8_numbers(which, request):
    gm, x = request.getfixturevalue(which)
    inputs = list(x) if isinstance(x, tuple) else [x]
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_text(sdk_gm) == str(gm.graph)
    assert sdk_gm.code == gm.code
    # C++ modules, not the Python objects called back.
    python_modules, _, _ = fx_sdk._C._python_objects(sdk_gm)
    assert python_modules == []
    with torch.no_grad():
        torch.testing.assert_close(sdk_gm(*inputs), gm(*inputs), rtol=0,
                                   atol=0)


@pytest.mark.parametrize("which", ["resnet", "mlp", "mixed", "dynamic",
                                   "eager", "more", "norms",
                                   "reference_resnet", "reference_kinds"])
def test_to_torch_fx_gives_back_quantized_modules(which, request):
    gm, x = request.getfixturevalue(which)
    inputs = list(x) if isinstance(x, tuple) else [x]
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert str(back.graph) == str(gm.graph) and back.code == gm.code
    ours = dict(back.named_modules())
    for name, module in gm.named_modules():
        if not (callable(getattr(module, "set_weight_bias", None))
                and hasattr(module, "scale")):
            continue
        other = ours[name]
        assert type(other) is type(module), name
        assert torch.equal(other.weight().int_repr(),
                           module.weight().int_repr()), name
        assert other.scale == module.scale, name
        assert other.zero_point == module.zero_point, name
    for name, module in reference_modules(gm).items():
        other = ours[name]
        assert type(other) is type(module), name
        assert (other.weight_qscheme, other.weight_dtype) == (
            module.weight_qscheme, module.weight_dtype), name
        for key in ("weight", "weight_scale", "weight_zero_point",
                    "weight_axis"):
            assert torch.equal(getattr(other, key), getattr(module, key)), key
    with torch.no_grad():
        torch.testing.assert_close(back(*inputs), gm(*inputs), rtol=0,
                                   atol=0)


@pytest.mark.parametrize("which", ["resnet", "mlp", "mixed", "dynamic",
                                   "eager", "more", "norms",
                                   "norms_int_scale", "reference_resnet",
                                   "reference_kinds"])
def test_bundles_print_run_and_load_back(which, request):
    gm, x = request.getfixturevalue(which)
    inputs = list(x) if isinstance(x, tuple) else [x]
    fx = fx_binary()
    with torch.no_grad():
        expected = gm(*inputs)
    with tempfile.TemporaryDirectory() as out:
        torchfx_export.export(gm, inputs, out)
        graph = os.path.join(out, "graph.fx.json")
        for command, want in (("print", str(gm.graph)), ("code", gm.code)):
            run = subprocess.run([fx, command, graph], capture_output=True,
                                 text=True, check=True)
            got = run.stdout.replace("[num_users=", "[#users=")
            assert got.strip() == want.strip(), command
        in_path, outputs = (os.path.join(out, name)
                            for name in ("in.pt", "out.pt"))
        torch.save(inputs, in_path)
        subprocess.run([fx, "exec", graph, "--inputs", in_path, "--outputs",
                        outputs], check=True, capture_output=True)
        torch.testing.assert_close(torch.load(outputs), expected, rtol=0,
                                   atol=0)
        loaded = torchfx_import.load_bundle(out)
        assert quantized_module_types(loaded) == quantized_module_types(gm)
        with torch.no_grad():
            torch.testing.assert_close(loaded(*inputs), expected, rtol=0,
                                       atol=0)


def test_a_whole_number_scale_written_as_an_int(norms_int_scale):
    # torchfx_export writes the scale as a float; another writer may say
    # `2` as torch's own int64 buffer holds it: the same numbers either way.
    gm, x = norms_int_scale
    with torch.no_grad():
        expected = gm(x)
    with tempfile.TemporaryDirectory() as out:
        torchfx_export.export(gm, [x], out)
        graph = os.path.join(out, "graph.fx.json")
        with open(graph) as f:
            doc = json.load(f)
        ints = 0
        for spec in doc["modules"].values():
            scale = spec["config"].get("scale")
            if isinstance(scale, float) and scale.is_integer():
                spec["config"]["scale"] = int(scale)
                ints += 1
        assert ints == 2
        with open(graph, "w") as f:
            json.dump(doc, f)
        in_path, outputs = (os.path.join(out, name)
                            for name in ("in.pt", "out.pt"))
        torch.save([x], in_path)
        subprocess.run([fx_binary(), "exec", graph, "--inputs", in_path,
                        "--outputs", outputs], check=True,
                       capture_output=True)
        torch.testing.assert_close(torch.load(outputs), expected, rtol=0,
                                   atol=0)


def test_a_pass_pipeline_keeps_the_quantized_modules(resnet):
    gm, x = resnet
    back, report = fx_sdk.run_pipeline(gm, "dce")
    assert [r["outcome"] for r in report] == ["ran"]
    assert quantized_module_types(back) == quantized_module_types(gm)
    with torch.no_grad():
        torch.testing.assert_close(back(x), gm(x), rtol=0, atol=0)


def test_a_float_weight_for_a_quantized_module_is_named(mlp):
    gm, x = mlp
    fx = fx_binary()
    with tempfile.TemporaryDirectory() as out:
        torchfx_export.export(gm, [x], out)
        name = torchfx_export.current_weights_name(out)
        path = os.path.join(out, name)
        weights = torch.load(path)
        weights["fc2.weight"] = weights["fc2.weight"].dequantize()
        torch.save(weights, path)
        inputs = os.path.join(out, "in.pt")
        torch.save([x], inputs)
        run = subprocess.run([fx, "exec", os.path.join(out, "graph.fx.json"),
                              "--inputs", inputs, "--outputs",
                              os.path.join(out, "out.pt")],
                             capture_output=True, text=True)
        assert run.returncode != 0
        assert "fc2" in run.stderr and "qint8" in run.stderr, run.stderr
        with pytest.raises(torchfx_import.BundleError, match="fc2"):
            torchfx_import.load_bundle(out)
