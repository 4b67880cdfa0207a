"""The InferencePlan's own int8 convolutions and linear layers (issue 33,
item 2; fx_core/compile/quantized_steps.h): the calls of
torch.ao.nn.quantized's Conv2d and ConvReLU2d modules in PyTorch's
convert_fx graphs run on fx::OnednnQConv, and those of its Linear and
LinearReLU on fx::OnednnQLinear, oneDNN's int8 kernels set up as LibTorch's
onednn engine sets them up, with the module's weights packed once and
results in planned buffers. Every expected value is PyTorch's own, computed here: the plan's
outputs must equal the convert_fx model's bit for bit.
"""

import copy
import os

import pytest
import torch
import torch.fx
import torchvision
from torch.nn.intrinsic.quantized import ConvReLU2d, LinearReLU
from torch.ao.nn.quantized import Conv2d as QConv2d
from torch.ao.nn.quantized import Linear as QLinear
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

import fx_sdk


def convert(model, x, calibration):
    """PyTorch's convert_fx of `model` (onednn's default qconfig),
    calibrated on `calibration`."""
    torch.backends.quantized.engine = "onednn"
    prepared = prepare_fx(copy.deepcopy(model).eval(),
                          get_default_qconfig_mapping("onednn"), (x,))
    with torch.no_grad():
        for batch in calibration:
            prepared(batch)
    return convert_fx(prepared)


def quantized_calls(gm, types):
    """How many calls of modules of `types` `gm` makes."""
    modules = dict(gm.named_modules())
    return sum(1 for n in gm.graph.nodes if n.op == "call_module" and
               type(modules[n.target]) in types)


def quantized_convs(gm):
    """How many 2-d quantized convolution modules `gm` calls."""
    return quantized_calls(gm, (QConv2d, ConvReLU2d))


def quantizes(gm):
    """How many torch.quantize_per_tensor calls `gm` makes."""
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and
               n.target is torch.quantize_per_tensor)


# The plan computes quantized adds itself only where its kernel gives
# LibTorch's numbers: where LibTorch runs its AVX2 kernels (as here).
PLAN_ADDS = "CPU capability usage: AVX2" in torch.__config__.show()


def quantized_adds(gm):
    """How many quantized::add / add_relu calls `gm` makes that the plan
    runs itself."""
    return PLAN_ADDS * sum(1 for n in gm.graph.nodes
                           if n.op == "call_function" and
                           n.target in (torch.ops.quantized.add,
                                        torch.ops.quantized.add_relu))


def quantized_linears(gm):
    """How many quantized Linear / LinearReLU modules `gm` calls."""
    return quantized_calls(gm, (QLinear, LinearReLU))


def fused_clamps(gm):
    """How many ReLU6 / Hardtanh / ReLU modules of `gm` read a quantized
    convolution's result that nothing else reads (the plan fuses those)."""
    modules = dict(gm.named_modules())
    clamps = (torch.nn.ReLU6, torch.nn.Hardtanh, torch.nn.ReLU)
    count = 0
    for n in gm.graph.nodes:
        if n.op != "call_module" or type(modules[n.target]) not in clamps:
            continue
        conv = n.args[0]
        if (conv.op == "call_module" and len(conv.users) == 1 and
                type(modules[conv.target]) is QConv2d):
            count += 1
    return count


@pytest.mark.parametrize("name,size", [("resnet18", 64),
                                       ("mobilenet_v2", 96),
                                       ("mobilenet_v3_small", 64)])
def test_pytorchs_int8_models_run_on_the_plans_convolutions(name, size):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, size, size)
    q = convert(model, x, [torch.randn_like(x) for _ in range(3)])
    plan = fx_sdk.compile(fx_sdk.from_torch_fx(q), [x])
    # Every quantized convolution and the classifier's quantized Linear is
    # an int8 step of the plan (a graph of quantized modules has no other
    # oneDNN step), and the ReLU6s after the convolutions are fused: none
    # runs LibTorch's kernel any more.
    # The input's quantize_per_tensor and the residual quantized adds are
    # steps of the plan too (with FX_INT8_CONV=registry as well).
    layers = quantized_convs(q) + quantized_linears(q)
    assert quantized_linears(q) >= 1 and quantized_adds(q) >= 6 * PLAN_ADDS
    assert (plan.stats["onednn_steps"] ==
            layers + quantizes(q) + quantized_adds(q))
    os.environ["FX_INT8_CONV"] = "registry"
    try:
        registry = fx_sdk.compile(fx_sdk.from_torch_fx(q), [x])
    finally:
        del os.environ["FX_INT8_CONV"]
    assert (plan.stats["fallback_steps"] == registry.stats["fallback_steps"] -
            layers - fused_clamps(q))
    if name == "mobilenet_v2":
        assert fused_clamps(q) == 35
    with torch.no_grad():
        for batch in (x, torch.randn_like(x), 3 * torch.randn_like(x)):
            torch.testing.assert_close(plan(batch), q(batch), rtol=0, atol=0)
    assert plan.plan_builds == 1


class OneConv(torch.nn.Module):
    """A quantized convolution alone, on a quint8 input: the input's scale
    and zero point are whatever the caller's tensor holds."""

    def __init__(self, conv):
        super().__init__()
        self.conv = conv

    def forward(self, x):
        return self.conv(x)


def quantized_conv(relu, groups=1):
    torch.manual_seed(0)
    cls = ConvReLU2d if relu else QConv2d
    conv = cls(8, 16, 3, stride=2, padding=1, groups=groups)
    w = torch.randn(16, 8 // groups, 3, 3) * 0.2
    scales = w.abs().amax(dim=(1, 2, 3)).double() / 127
    qw = torch.quantize_per_channel(w, scales, torch.zeros(16, dtype=torch.long),
                                    0, torch.qint8)
    conv.set_weight_bias(qw, torch.randn(16) * 0.1)
    conv.scale, conv.zero_point = 0.07, 40
    return conv


def qinput(shape, scale, zero_point, seed):
    torch.manual_seed(seed)
    return torch.quantize_per_tensor(torch.randn(shape), scale, zero_point,
                                     torch.quint8)


@pytest.mark.parametrize("relu,groups", [(False, 1), (True, 1), (True, 2)])
def test_each_input_scale_and_zero_point_as_pytorch_computes_it(relu, groups):
    torch.backends.quantized.engine = "onednn"
    module = OneConv(quantized_conv(relu, groups))
    traced = torch.fx.symbolic_trace(module)
    first = qinput((2, 8, 11, 11), 0.05, 128, 0)
    plan = fx_sdk.compile(fx_sdk.from_torch_fx(traced), [first])
    assert plan.stats["onednn_steps"] == 1
    for i, (scale, zero_point) in enumerate([(0.05, 128), (0.013, 0),
                                             (0.2, 255), (0.05, 128)]):
        x = qinput((2, 8, 11, 11), scale, zero_point, i)
        got, want = plan(x), module(x)
        assert (got.q_scale(), got.q_zero_point()) == (0.07, 40)
        assert torch.equal(got.int_repr(), want.int_repr()), (scale, zero_point)
    assert plan.plan_builds == 1


class ConvThen(torch.nn.Module):
    """A quantized convolution, then `after` on its result; with `twice`
    the result is read a second time (the clamp is then not fused)."""

    def __init__(self, after, twice=False):
        super().__init__()
        self.conv = quantized_conv(False)
        self.after = after
        self.twice = twice

    def forward(self, x):
        y = self.conv(x)
        z = self.after(y)
        return (z, y.dequantize()) if self.twice else z


@pytest.mark.parametrize("after,twice", [
    (torch.nn.ReLU6(), False), (torch.nn.ReLU6(inplace=True), False),
    (torch.nn.Hardtanh(-0.5, 0.75), False), (torch.nn.ReLU(), False),
    (torch.nn.ReLU6(), True)])
def test_a_clamp_after_a_convolution_is_pytorchs_clamp(after, twice):
    torch.backends.quantized.engine = "onednn"
    module = ConvThen(after, twice)
    traced = torch.fx.symbolic_trace(module)
    x = qinput((1, 8, 11, 11), 0.05, 128, 0)
    plan = fx_sdk.compile(fx_sdk.from_torch_fx(traced), [x])
    os.environ["FX_INT8_CONV"] = "registry"
    try:
        registry = fx_sdk.compile(fx_sdk.from_torch_fx(traced), [x])
    finally:
        del os.environ["FX_INT8_CONV"]
    # The convolution, and the clamp unless its input is read twice, leave
    # LibTorch's kernels.
    assert (registry.stats["fallback_steps"] - plan.stats["fallback_steps"] ==
            (1 if twice else 2))
    for i in range(3):
        x = qinput((1, 8, 11, 11), 0.05 + 0.01 * i, 100 + i, i)
        got, want = plan(x), module(x)
        if twice:
            assert torch.equal(got[1], want[1])
            got, want = got[0], want[0]
        assert (got.q_scale(), got.q_zero_point()) == (0.07, 40)
        assert torch.equal(got.int_repr(), want.int_repr())


def test_inputs_the_step_does_not_take_run_as_pytorch_runs_them():
    """An input of other sizes leaves the planned step (a new plan); then
    the first sizes again."""
    torch.backends.quantized.engine = "onednn"
    module = OneConv(quantized_conv(True))
    traced = torch.fx.symbolic_trace(module)
    plan = fx_sdk.compile(fx_sdk.from_torch_fx(traced),
                          [qinput((1, 8, 9, 9), 0.05, 128, 0)])
    bigger = qinput((1, 8, 13, 7), 0.05, 128, 1)
    assert torch.equal(plan(bigger).int_repr(), module(bigger).int_repr())
    x = qinput((1, 8, 9, 9), 0.05, 128, 2)
    assert torch.equal(plan(x).int_repr(), module(x).int_repr())


def test_a_dynamic_plan_runs_every_batch_size():
    torch.backends.quantized.engine = "onednn"
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    q = convert(model, x, [torch.randn(2, 3, 64, 64) for _ in range(2)])
    plan = fx_sdk.compile(fx_sdk.from_torch_fx(q), [x], dynamic=True)
    with torch.no_grad():
        for batch in (1, 3, 2, 1):
            b = torch.randn(batch, 3, 64, 64)
            torch.testing.assert_close(plan(b), q(b), rtol=0, atol=0)
    assert plan.plan_builds == 1


def test_fx_int8_conv_registry_leaves_the_modules_to_libtorch(monkeypatch):
    torch.backends.quantized.engine = "onednn"
    module = OneConv(quantized_conv(True))
    sdk = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(module))
    x = qinput((1, 8, 9, 9), 0.05, 128, 0)
    monkeypatch.setenv("FX_INT8_CONV", "registry")
    plan = fx_sdk.compile(sdk, [x])
    assert plan.stats["onednn_steps"] == 0
    assert torch.equal(plan(x).int_repr(), module(x).int_repr())
    monkeypatch.setenv("FX_INT8_CONV", "fast")
    with pytest.raises(Exception, match="FX_INT8_CONV=fast: expected plan or "
                       "registry"):
        fx_sdk.compile(sdk, [x])


class Mlp(torch.nn.Module):
    """Linear layers with and without a ReLU after them (convert_fx makes
    a LinearReLU of the first), on rows of features."""
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(40, 64)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(64, 24)
        self.fc3 = torch.nn.Linear(24, 10, bias=False)

    def forward(self, x):
        return self.fc3(self.fc2(self.relu(self.fc1(x))))


@pytest.mark.parametrize("dynamic", [False, True])
def test_quantized_linear_layers_are_pytorchs(dynamic):
    """LinearReLU, Linear and a Linear without bias on the plan's int8
    linear step; a dynamic plan runs every batch size (one primitive each)."""
    torch.manual_seed(0)
    model = Mlp().eval()
    x = torch.randn(4, 40)
    q = convert(model, x, [torch.randn(4, 40) * 2 for _ in range(3)])
    assert quantized_calls(q, (LinearReLU,)) == 1
    assert quantized_linears(q) == 3
    plan = fx_sdk.compile(fx_sdk.from_torch_fx(q), [x], dynamic=dynamic)
    assert plan.stats["onednn_steps"] == 3 + quantizes(q)
    with torch.no_grad():
        for rows in (4, 1, 7, 4) if dynamic else (4, 4):
            b = torch.randn(rows, 40) * 3
            torch.testing.assert_close(plan(b), q(b), rtol=0, atol=0)
    assert plan.plan_builds == 1


class QuantizeThenDequantize(torch.nn.Module):
    """torch.quantize_per_tensor of the input with its scale and zero point
    as attribute tensors (as convert_fx passes them), then dequantize."""
    def __init__(self, scale, zero_point):
        super().__init__()
        self.register_buffer("scale", torch.tensor(scale))
        self.register_buffer("zero_point", torch.tensor(zero_point))

    def forward(self, x):
        q = torch.quantize_per_tensor(x, self.scale, self.zero_point,
                                      torch.quint8)
        return q.dequantize(), q


@pytest.mark.parametrize("scale,zero_point", [(0.02, 3), (0.0173, 128),
                                              (1 / 3, 0), (0.1, 255)])
def test_quantize_per_tensor_is_pytorchs(scale, zero_point):
    """The plan's own quantize (AVX2, 8 values at a time, the rest one by
    one) against LibTorch's on random values, ties and values past the
    range: NaN, infinities and products beyond int64 give 0 in LibTorch."""
    torch.manual_seed(0)
    module = QuantizeThenDequantize(scale, zero_point)
    gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(module))
    x = torch.randn(2, 3, 17, 19) * 4
    plan = fx_sdk.compile(gm, [x])
    assert plan.stats["onednn_steps"] == 1
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e30,
                            -1e30, 3e9, -3e9, 1e19, 9.3e18, -9.3e18,
                            2.5 * scale, 3.5 * scale, -0.5 * scale, 0.0,
                            255 * scale, 256 * scale])
    for batch in (x, torch.randn_like(x) * 100, torch.rand_like(x)):
        flat = batch.flatten()
        flat[:special.numel()] = special
        flat[-special.numel():] = special  # in the one-by-one tail too
        want = module(batch)
        got = plan(batch)
        assert torch.equal(got[1].int_repr(), want[1].int_repr())
        assert (got[1].q_scale(), got[1].q_zero_point()) == (
            want[1].q_scale(), want[1].q_zero_point())
        torch.testing.assert_close(got[0], want[0], rtol=0, atol=0,
                                   equal_nan=True)


class QuantizedAdd(torch.nn.Module):
    """quantized::add or add_relu of two quint8 inputs, the output's scale
    and zero point as numbers in the graph or as attribute tensors."""
    def __init__(self, relu, scale, zero_point, as_tensors):
        super().__init__()
        self.op = (torch.ops.quantized.add_relu if relu else
                   torch.ops.quantized.add)
        if as_tensors:
            self.register_buffer("scale", torch.tensor(scale))
            self.register_buffer("zero_point", torch.tensor(zero_point))
        else:
            self.scale, self.zero_point = scale, zero_point

    def forward(self, a, b):
        return self.op(a, b, self.scale, self.zero_point)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("shape,channels_last", [
    ((1, 24, 56, 56), True),    # mobilenet_v2's, a multiple of 64
    ((1, 25, 57, 57), True),    # above the grain: two blocks with tails
    ((2, 3, 7, 5), False),      # below 64: all one by one
    ((1, 160, 7, 7), True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_quantized_add_is_pytorchs(relu, shape, channels_last, threads):
    """The plan's own quantized add against LibTorch's qadd kernel: its
    vectorised blocks of 64 and its one-by-one rest, cut into blocks of
    work as at::parallel_for cuts them at 1 and 2 threads."""
    torch.manual_seed(0)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        fmt = (torch.channels_last if channels_last else
               torch.contiguous_format)

        def qinput(scale, zero_point):
            x = (torch.randn(shape) * 3).contiguous(memory_format=fmt)
            return torch.quantize_per_tensor(x, scale, zero_point,
                                             torch.quint8)

        for as_tensors in (False, True):
            module = QuantizedAdd(relu, 0.0731, 117, as_tensors)
            gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(module))
            a, b = qinput(0.0437, 131), qinput(0.0219, 64)
            plan = fx_sdk.compile(gm, [a, b])
            assert plan.stats["onednn_steps"] == PLAN_ADDS
            for scales in ((0.0437, 131, 0.0219, 64), (0.017, 0, 0.05, 255)):
                a, b = qinput(*scales[:2]), qinput(*scales[2:])
                want, got = module(a, b), plan(a, b)
                assert got.is_contiguous(memory_format=fmt)
                assert (got.q_scale(), got.q_zero_point()) == (
                    want.q_scale(), want.q_zero_point())
                assert torch.equal(got.int_repr(), want.int_repr())
    finally:
        torch.set_num_threads(old_threads)
