"""The inference passes' fused ops in torch.fx (issue 35 item 4): importing
fx_sdk registers them as PyTorch custom ops, torch.ops.fx_inference.*, so
a pipeline's result goes back to torch.fx, prints and generates code as
torch.fx does for it, runs in Python with the original model's numbers, and
comes back to the SDK unchanged. Files that name the ops as before
(`fx_inference.conv2d`) still load.
"""

import json
import os
import subprocess

import torch
import torch.fx
import torch.nn.functional as F
import torchvision

import fx_sdk
from fx_command import fx_binary

PASSES = "shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,fuse_pointwise"


class Model(torch.nn.Module):
    """Every fused op: conv + bn + residual + relu6, linear + gelu, a scaled
    matmul, a chain of pointwise ops."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(x)) + x)
        t = y.flatten(2).transpose(1, 2)
        t = F.gelu(self.lin(t))
        a = torch.matmul(t, t.transpose(1, 2)) * 0.5
        return torch.sigmoid(a) * 2.0 + 1.0


def pipeline_result():
    torch.manual_seed(0)
    model = Model().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    x = torch.rand(2, 4, 6, 6)
    gm = torch.fx.symbolic_trace(model)
    fused, report = fx_sdk.run_pipeline(gm, PASSES, example_inputs=(x,))
    assert all(r["outcome"] == "ran" for r in report), report
    return model, fused, x


def fused_targets(gm):
    return sorted({str(n.target) for n in gm.graph.nodes
                   if n.op == "call_function" and "fx_inference" in str(n.target)})


def test_a_pipeline_result_is_a_torch_fx_module_with_the_same_numbers():
    model, fused, x = pipeline_result()
    assert fused_targets(fused) == [
        "fx_inference.conv2d", "fx_inference.linear", "fx_inference.matmul",
        "fx_inference.pointwise"]
    assert "torch.ops.fx_inference.conv2d(" in fused.code
    with torch.no_grad():
        torch.testing.assert_close(fused(x), model(x), rtol=1e-4, atol=1e-5)


def test_it_comes_back_to_the_sdk_with_torch_fx_text_and_code():
    _, fused, x = pipeline_result()
    sdk = fx_sdk.from_torch_fx(fused)
    assert sdk.graph_text.replace("[num_users=", "[#users=") == \
        str(fused.graph)
    assert sdk.code == fused.code
    with torch.no_grad():
        torch.testing.assert_close(sdk(x), fused(x))


def test_a_batch_norm_without_a_convolution_before_it_is_pointwise():
    """densenet's BatchNorm2d before each ReLU (pre-activation, after a
    concatenation) cannot fold into a convolution: fuse_pointwise makes it
    x * scale + shift with the ReLU in one fx_inference.pointwise, whose
    numbers in torch.fx are eager's."""
    torch.manual_seed(0)
    model = torchvision.models.DenseNet(growth_rate=4, block_config=(2,),
                                        num_init_features=8, bn_size=2,
                                        num_classes=3).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    x = torch.rand(2, 3, 32, 32)
    fused, report = fx_sdk.run_pipeline(torch.fx.symbolic_trace(model),
                                        PASSES, example_inputs=(x,))
    assert all(r["outcome"] == "ran" for r in report), report
    assert not any(isinstance(m, torch.nn.BatchNorm2d)
                   for m in fused.modules())
    # norm1 + relu1 of each layer, norm5 + the final relu.
    pointwise = [n for n in fused.graph.nodes
                 if n.target == torch.ops.fx_inference.pointwise]
    assert len(pointwise) == 3
    assert pointwise[0].args[1] == ["mul i0 i1", "add t0 i2", "relu t1"]
    with torch.no_grad():
        torch.testing.assert_close(fused(x), model(x), rtol=1e-5, atol=1e-6)
        plan = fx_sdk.compile(fused, [x], pipeline="")
        torch.testing.assert_close(plan(x), model(x), rtol=1e-5, atol=1e-6)


def test_the_custom_ops_compute_the_unfused_ops():
    torch.manual_seed(1)
    x, w, b = torch.rand(1, 3, 5, 5), torch.rand(2, 3, 3, 3), torch.rand(2)
    r = torch.rand(1, 2, 3, 3)
    got = torch.ops.fx_inference.conv2d(x, w, b, residual=r,
                                        activation="hardtanh", min_val=0.2,
                                        max_val=1.5)
    torch.testing.assert_close(
        got, F.hardtanh(F.conv2d(x, w, b) + r, 0.2, 1.5))
    got = torch.ops.fx_inference.linear(x, torch.rand(4, 5),
                                        activation="gelu_tanh")
    assert got.shape == (1, 3, 5, 4)
    got = torch.ops.fx_inference.pointwise([x, x], ["mul i0 i1", "sub t0 s0"],
                                           [1])
    torch.testing.assert_close(got, x * x - 1)
    # Composite kernels: the meta device gives shapes without data.
    meta = torch.ops.fx_inference.matmul(torch.empty(2, 3, device="meta"),
                                         torch.empty(3, 4, device="meta"), 2.0)
    assert meta.shape == (2, 4) and meta.device.type == "meta"


def test_a_bundle_naming_the_ops_as_before_still_runs(tmp_path):
    """A bundle written before the rename (`fx_inference.conv2d`) runs in
    fx exec and in the Python importer with the model's numbers."""
    model, fused, x = pipeline_result()
    text, weights = fx_sdk._C._to_bundle(fx_sdk.from_torch_fx(fused))
    doc = json.loads(text)
    doc["weights"] = "model.weights.pt"
    text = json.dumps(doc).replace("torch.ops.fx_inference.", "fx_inference.")
    assert '"fx_inference.conv2d"' in text
    (tmp_path / "graph.fx.json").write_text(text)
    torch.save(dict(weights), tmp_path / "model.weights.pt")
    torch.save([x], tmp_path / "input.pt")
    with torch.no_grad():
        torch.save(model(x), tmp_path / "expected.pt")
    out = tmp_path / "out.pt"
    r = subprocess.run([fx_binary(), "exec", str(tmp_path / "graph.fx.json"),
                        "--inputs", str(tmp_path / "input.pt"), "--outputs",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with torch.no_grad():
        torch.testing.assert_close(torch.load(out), model(x), rtol=1e-4,
                                   atol=1e-5)
    r = subprocess.run(["/usr/bin/python3", "-m", "fx_sdk.torchfx_import",
                        str(tmp_path)], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert "allclose" in r.stdout, r.stdout
