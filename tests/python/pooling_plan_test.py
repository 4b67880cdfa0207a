"""The InferencePlan's pooling steps (fx_core/compile/pooling_steps.h):
torch.nn's MaxPool2d (on channels_last inputs: a kernel of the plan's own),
AvgPool2d and AdaptiveAvgPool2d (oneDNN's pooling primitive), and the calls
F.adaptive_avg_pool2d and a global mean, on float32 CPU inputs run into
planned buffers. The golden
is each module itself: bit for bit (maxima, and averages, which oneDNN sums
and divides as ATen does), in the layout PyTorch gives; a global average
(ATen's is a mean, summed in another order) within float32 rounding, and
planned only in graphs the inference passes rewrote. Configurations the
step cannot compute as ATen does (an average whose ceil_mode windows reach
past the padding, an adaptive size that does not divide the input, indices,
a divisor override) are left to the module's own kernel.
"""

import pytest
import torch
import torch.fx
import torchvision

import fx_sdk

nn = torch.nn

# (module, input shape): the models' own (resnet's stem, densenet's
# transitions, the classifiers' global average, squeeze-excitation), then
# edge cases: ceil_mode, dilation, padding on one side only in effect, a
# remainder the floor drops, an adaptive size of None.
BOUND = [
    (nn.MaxPool2d(3, 2, 1), (1, 64, 112, 112)),
    (nn.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 8, 13, 13)),
    (nn.MaxPool2d(3, 2, 0, ceil_mode=True), (1, 4, 14, 14)),
    (nn.MaxPool2d(2), (1, 5, 7, 7)),
    (nn.MaxPool2d((3, 2), (2, 1), (1, 0), dilation=(2, 1)), (1, 5, 15, 11)),
    # Whole vector blocks (32 and 8, or 16) and a tail; padding, dilation and
    # ceil_mode together; windows that hold no element (-inf).
    (nn.MaxPool2d(3, 2, 1, dilation=2, ceil_mode=True), (2, 45, 9, 9)),
    (nn.MaxPool2d(2, padding=1, dilation=2), (1, 20, 1, 5)),
    (nn.AvgPool2d(2, 2), (1, 128, 56, 56)),
    (nn.AvgPool2d(3, 2, 1), (1, 7, 9, 9)),
    (nn.AvgPool2d(3, 2, 1, count_include_pad=False), (1, 7, 9, 9)),
    (nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
     (1, 7, 10, 10)),
    (nn.AvgPool2d(2, 3), (2, 3, 8, 8)),
    (nn.AdaptiveAvgPool2d((1, 1)), (1, 72, 1, 1)),
    (nn.AdaptiveAvgPool2d((2, None)), (1, 6, 8, 5)),
    (nn.AdaptiveAvgPool2d(7), (1, 64, 14, 14)),
    (nn.AdaptiveAvgPool2d((2, 3)), (1, 6, 2, 9)),
]

LEFT_TO_THE_MODULE = [
    # ATen divides the last windows by the part inside input + padding.
    (nn.AvgPool2d(3, 2, 1, ceil_mode=True), (1, 7, 10, 10)),
    (nn.AvgPool2d(2, 2, divisor_override=3), (1, 4, 8, 8)),
    (nn.AdaptiveAvgPool2d(3), (1, 6, 8, 5)),
    (nn.MaxPool2d(2, return_indices=True), (1, 3, 8, 8)),
    # A global average in a graph without fx_inference ops: the plan keeps
    # to GraphModule.forward's numbers.
    (nn.AdaptiveAvgPool2d(1), (1, 2048, 7, 7)),
    # ATen divides NCHW adaptive windows by their height, then their width.
    (nn.AdaptiveAvgPool2d(2), (1, 3, 6, 6)),
    # Unbatched: 3-d.
    (nn.MaxPool2d(2), (3, 8, 8)),
]


def layouts(shape):
    x = torch.randn(shape)
    out = [x]
    if len(shape) == 4:
        out.append(x.contiguous(memory_format=torch.channels_last))
    return out


def expect_the_module_runs(module, x):
    """The plan binds no step for `module` on `x` and returns the module's
    result."""
    compiled = compile_module(module, x)
    assert compiled.stats["onednn_steps"] == 0
    with torch.no_grad():
        want, got = module(x), compiled(x)
    if isinstance(want, tuple):
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    else:
        assert torch.equal(got, want)


def compile_module(module, x):
    gm = torch.fx.symbolic_trace(nn.Sequential(module))
    return fx_sdk.compile(gm, [x])


def planned(module, x):
    """Max pooling is planned on channels_last inputs (NCHW ones keep
    ATen's kernel); averages on both, but adaptive windows on NCHW only one
    row or column high (ATen divides those by the height, then the
    width)."""
    if isinstance(module, nn.MaxPool2d):
        return not x.is_contiguous()
    if isinstance(module, nn.AdaptiveAvgPool2d) and x.is_contiguous():
        size = module.output_size
        size = (size, size) if isinstance(size, int) else size
        kernel = [x.shape[2 + d] // (size[d] or x.shape[2 + d])
                  for d in range(2)]
        return 1 in kernel
    return True


@pytest.mark.parametrize("module,shape", BOUND)
def test_the_step_computes_the_module_bit_for_bit(module, shape):
    torch.manual_seed(0)
    for x in layouts(shape):
        compiled = compile_module(module, x)
        assert compiled.stats["onednn_steps"] == planned(module, x), (
            module, x.stride())
        with torch.no_grad():
            for _ in range(2):
                want, got = module(x), compiled(x)
                assert got.stride() == want.stride()
                assert torch.equal(got, want)
                x = torch.randn_like(x) * 10
        assert compiled.stats["replans"] == 0


@pytest.mark.parametrize("module,shape", LEFT_TO_THE_MODULE)
def test_what_the_step_refuses_runs_the_module(module, shape):
    torch.manual_seed(0)
    for x in layouts(shape)[:1]:  # NCHW (channels_last binds some)
        expect_the_module_runs(module, x)


def test_the_pooling_after_a_convolution_takes_its_layout():
    # The convolutions run on oneDNN (fx_inference.conv2d) with
    # channels_last results, chosen after the first recording run: the
    # poolings are bound for that layout, so runs keep to the plan (no
    # re-plans); the global average is planned too (the graph holds
    # fx_inference ops) and rounds as float32 sums do.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(3, 2, 1), nn.Conv2d(16, 8, 1),
                          nn.AdaptiveAvgPool2d(1)).eval()
    x = torch.randn(1, 3, 32, 32)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), [x])
    assert compiled.stats["onednn_steps"] == 4
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5,
                                       atol=1e-5)
    assert compiled.stats["replans"] == 0
    assert compiled.stats["direct_fallbacks"] == 0


@pytest.mark.parametrize("module", [nn.MaxPool2d(2), nn.MaxPool2d(3, 2, 1)])
def test_max_pooling_propagates_nan_and_keeps_minus_infinity(module):
    # ATen's rule: NaN wins a window, a window of -inf gives -inf; in every
    # part of the 45 channels: blocks of 32 and 8 (AVX2) or 16 (SSE2), and
    # the tail after them.
    x = torch.randn(2, 45, 6, 6)
    x[0, 0, 0, 0] = float("nan")
    x[0, 1, :3, :3] = float("-inf")
    x[1, 15, 2, 3] = float("nan")
    x[1, 3] = float("-inf")
    x[0, 35, 4, 4] = float("nan")
    x[1, 36] = float("-inf")
    x[1, 43, 1, 1] = float("nan")
    x[0, 44] = float("-inf")
    x = x.contiguous(memory_format=torch.channels_last)
    compiled = compile_module(module, x)
    assert compiled.stats["onednn_steps"] == 1
    with torch.no_grad():
        got, want = compiled(x), module(x)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert got.isnan().sum() > 0 and got.isneginf().sum() > 0


@pytest.mark.parametrize("module", [
    nn.MaxPool2d(2, return_indices=True),
    nn.AvgPool2d(2, 2, divisor_override=3),
    nn.AvgPool2d(3, 2, 1, ceil_mode=True),
    nn.AdaptiveAvgPool2d(3),
])
def test_channels_last_inputs_are_refused_alike(module):
    x = torch.randn(1, 6, 10, 10).contiguous(memory_format=torch.channels_last)
    expect_the_module_runs(module, x)


def test_nchw_adaptive_windows_are_planned_after_the_inference_passes():
    # Within float32 rounding of ATen's two divisions, as oneDNN's
    # convolutions are.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(0, 0),
                          nn.AdaptiveAvgPool2d(2)).eval()
    x = torch.randn(1, 3, 8, 8)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), [x])
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5,
                                   atol=1e-5)


def test_an_input_of_another_layout_leaves_the_plan_for_that_run():
    module = nn.MaxPool2d(3, 2, 1)
    x = torch.randn(1, 8, 16, 16).contiguous(memory_format=torch.channels_last)
    compiled = compile_module(module, x)
    other = x.contiguous()
    with torch.no_grad():
        got = compiled(other)
    assert torch.equal(got, module(other))
    assert got.stride() == module(other).stride()


class Head(nn.Module):
    """A convolution (the inference passes make it fx_inference.conv2d),
    then `average` written as a call, as torchvision's mnasnet
    (`x.mean([2, 3])`) and densenet (`F.adaptive_avg_pool2d`) do."""

    def __init__(self, average):
        super().__init__()
        self.conv = nn.Conv2d(3, 24, 3, padding=1)
        self.average = average

    def forward(self, x):
        return self.average(self.conv(x))


F = nn.functional
AVERAGE_CALLS = [
    # (call, planned as a step)
    (lambda y: y.mean([2, 3]), True),
    (lambda y: torch.mean(y, (-1, -2), True), True),
    (lambda y: y.mean(dim=[2, 3]), True),
    (lambda y: F.adaptive_avg_pool2d(y, (1, 1)), True),
    (lambda y: F.adaptive_avg_pool2d(y, 4), True),
    (lambda y: F.adaptive_avg_pool2d(y, (None, 2)), True),
    # Left to ATen: other dimensions, another dtype, a size that does not
    # divide the input.
    (lambda y: y.mean([1, 2]), False),
    (lambda y: y.mean([2, 3], True, dtype=torch.float64), False),
    (lambda y: F.adaptive_avg_pool2d(y, 3), False),
]


@pytest.mark.parametrize("call,bound", AVERAGE_CALLS)
def test_average_calls_after_a_convolution(call, bound):
    torch.manual_seed(0)
    model = Head(call).eval()
    x = torch.randn(2, 3, 16, 16)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), [x])
    assert compiled.stats["onednn_steps"] == 1 + bound
    with torch.no_grad():
        for _ in range(2):
            want, got = model(x), compiled(x)
            assert got.shape == want.shape and got.dtype == want.dtype
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
            x = torch.randn_like(x)
    assert compiled.stats["replans"] == 0


def test_a_global_mean_keeps_atens_numbers_without_the_inference_passes():
    # No fx_inference op in the graph: the plan keeps GraphModule.forward's
    # numbers bit for bit, so ATen's mean runs.
    class Mean(nn.Module):
        def forward(self, x):
            return x.mean([2, 3])

    x = torch.randn(1, 72, 7, 7).contiguous(memory_format=torch.channels_last)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(Mean()), [x])
    assert compiled.stats["onednn_steps"] == 0
    with torch.no_grad():
        assert torch.equal(compiled(x), x.mean([2, 3]))


@pytest.mark.parametrize("name", ["resnet18", "densenet121"])
def test_torchvision_models_compile_with_their_poolings_bound(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    # Without the classifier (whose linear the plan may leave to ATen's
    # BLAS, by measurement).
    if name == "resnet18":
        model.fc = nn.Identity()
    else:
        model = model.features
    x = torch.randn(1, 3, 224, 224)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), [x])
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4,
                                   atol=1e-4)
    pools = [m for m in model.modules()
             if isinstance(m, (nn.MaxPool2d, nn.AvgPool2d,
                               nn.AdaptiveAvgPool2d))]
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    assert pools
    # Every convolution and every pooling module is a planned step.
    assert compiled.stats["onednn_steps"] == len(convs) + len(pools)
