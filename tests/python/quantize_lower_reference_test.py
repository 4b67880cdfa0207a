"""PyTorch's own reference quantized pattern lowered to int8 kernels (issue
33, item 2): convert_to_reference_fx leaves reference Conv2d / Linear
modules (alone or inside torch.ao.nn.intrinsic's ConvReLU2d / LinearReLU)
between dequantize and quantize_per_tensor; quantize_lower turns each into
the quantized module convert_fx builds from the same prepared model, under
the same name. The expected graph and numbers are PyTorch's: convert_fx's model,
calibrated on the same batches, its code, run by PyTorch; the lowered graph
must have that code and compute those numbers bit for bit (the same oneDNN int8 kernels, the weight quantized
as torch.quantize_per_channel quantizes it).
"""

import copy
import os
import subprocess
import tempfile

import pytest
import torch
import torchvision
from torch.ao.quantization import QConfigMapping, get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import (convert_fx,
                                               convert_to_reference_fx,
                                               prepare_fx)

import fx_sdk
from fx_command import fx_binary
from fx_sdk import torchfx_export, torchfx_import
from quantize_models import MLP


def prepared(model, x, mapping):
    """`model` prepared with `mapping` and calibrated on four batches."""
    torch.backends.quantized.engine = "onednn"
    torch.manual_seed(1)
    p = prepare_fx(copy.deepcopy(model), mapping, (x,))
    with torch.no_grad():
        for _ in range(4):
            p(torch.randn((2,) + tuple(x.shape[1:])))
    return p


def lowered(model, x, mapping):
    """(quantize_lower of convert_to_reference_fx's model, convert_fx's)."""
    p = prepared(model, x, mapping)
    reference = convert_to_reference_fx(copy.deepcopy(p))
    gm, _ = fx_sdk.run_pipeline(reference, "quantize_lower")
    return gm, convert_fx(copy.deepcopy(p))


def body(code):
    """Generated code without its `def forward(...)` line."""
    return code.split("\n", 4)[4]


def module_classes(gm):
    return {name: type(m).__name__ for name, m in gm.named_modules()
            if type(m).__module__.startswith("torch.ao.nn")}


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(),
                 torch.randn(1, 3, 64, 64)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(),
                     torch.randn(1, 3, 64, 64)),
    "mlp": (MLP, torch.randn(3, 12)),
}
MAPPINGS = {
    # onednn's default: per-channel qint8 weights, histogram observers.
    "onednn": lambda: get_default_qconfig_mapping("onednn"),
    # qnnpack's: per-tensor qint8 weights.
    "per_tensor": lambda: get_default_qconfig_mapping("qnnpack"),
}


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_reference_pattern_becomes_convert_fx_s_int8_model(name, mapping):
    torch.manual_seed(0)
    make, x = MODELS[name]
    model = make().eval()
    gm, theirs = lowered(model, x, MAPPINGS[mapping]())
    # Every reference module became the quantized module convert_fx made
    # under the same name, and the graph is convert_fx's, line for line
    # (what PyTorch leaves in float, such as the MLP's torch.relu between
    # two quantized Linears, stays in float here too).
    assert not any("reference" in type(m).__module__ for m in gm.modules())
    assert module_classes(gm) == module_classes(theirs)
    assert gm.code == theirs.code
    plan = fx_sdk.compile(gm, [x])
    with torch.no_grad():
        for batch in (x, torch.randn((2,) + tuple(x.shape[1:]))):
            want = theirs(batch)
            torch.testing.assert_close(gm(batch), want, rtol=0, atol=0)
            torch.testing.assert_close(plan(batch), want, rtol=0, atol=0)


def test_a_layer_kept_in_float_stays_as_it_is():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(3, 12)
    mapping = get_default_qconfig_mapping("onednn").set_module_name(
        "fc2", None)
    gm, theirs = lowered(model, x, mapping)
    assert type(gm.fc2) is torch.nn.Linear
    assert type(gm.fc1) is type(theirs.fc1)
    assert type(gm.fc1).__module__.startswith("torch.ao.nn.quantized")
    assert gm.code == theirs.code
    with torch.no_grad():
        torch.testing.assert_close(gm(x), theirs(x), rtol=0, atol=0)


def test_weights_pytorch_cannot_lower_stay_reference():
    """float16 weights (a reference module whose weight_qparams are not
    qint8): convert_fx keeps them in float, and so does quantize_lower."""
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(3, 12)
    mapping = QConfigMapping().set_global(torch.ao.quantization.float16_static_qconfig)
    p = prepared(model, x, mapping)
    reference = convert_to_reference_fx(copy.deepcopy(p))
    gm, _ = fx_sdk.run_pipeline(reference, "quantize_lower")
    with torch.no_grad():
        torch.testing.assert_close(gm(x), reference(x), rtol=0, atol=0)
    assert not any(type(m).__module__.startswith("torch.ao.nn.quantized.modules")
                   for m in gm.modules())


def test_a_reference_bundle_lowers_through_fx_run():
    """The file path: convert_to_reference_fx's resnet18 exported as a
    bundle, `fx run --isolate --pipeline quantize_lower`, the result loaded
    in PyTorch: convert_fx's code and numbers."""
    torch.manual_seed(0)
    make, x = MODELS["resnet18"]
    p = prepared(make().eval(), x, get_default_qconfig_mapping("onednn"))
    reference = convert_to_reference_fx(copy.deepcopy(p))
    theirs = convert_fx(copy.deepcopy(p))
    with tempfile.TemporaryDirectory() as out:
        torchfx_export.export(reference, [x], out)
        lowered = os.path.join(out, "lowered", "graph.fx.json")
        os.makedirs(os.path.dirname(lowered))
        subprocess.run([fx_binary(), "run", os.path.join(out, "graph.fx.json"),
                        "--pipeline", "quantize_lower", "--isolate", "-o",
                        lowered], check=True, capture_output=True)
        loaded = torchfx_import.load_bundle(os.path.dirname(lowered))
    assert module_classes(loaded) == module_classes(theirs)
    # The body is convert_fx's; the exporter gave the placeholder its
    # example input's type (x : torch.Tensor), which the traced one lacks.
    assert body(loaded.code) == body(theirs.code)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), theirs(x), rtol=0, atol=0)
