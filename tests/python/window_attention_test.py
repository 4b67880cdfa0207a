"""Swin's windowed attention in the inference pipeline (issue 35, item 3):
fuse_window_attention renames torchvision's shifted_window_attention call
to torch.ops.fx_inference.window_attention, the same function, which the
InferencePlan runs as one step (fx_core/compile/window_attention.h). The
custom op computes what torchvision's function computes; the plan's step
computes it within float32 rounding on Swin-T and on windows that pad and
shift; the pipeline's result goes back to torch.fx and runs in Python.
"""

import pytest
import torch
import torch.fx
import torchvision
from torchvision.models.swin_transformer import (ShiftedWindowAttention,
                                                 shifted_window_attention)

import fx_sdk

WINDOW_ATTENTION = "torch.ops.fx_inference.window_attention"

# (input [B, H, W, C], heads, window, shift): Swin-T's first stage; maps
# that pad to whole windows; a shift the window covers (none is applied).
GEOMETRIES = [
    ((1, 56, 56, 96), 3, [7, 7], [3, 3]),
    ((2, 10, 13, 32), 4, [4, 5], [2, 1]),
    ((1, 5, 6, 16), 2, [7, 7], [3, 3]),
    ((1, 6, 14, 16), 2, [7, 7], [0, 0]),
]


def arguments(shape, heads, window):
    torch.manual_seed(0)
    c, n = shape[3], window[0] * window[1]
    return dict(input=torch.randn(shape),
                qkv_weight=torch.randn(3 * c, c) / c ** 0.5,
                proj_weight=torch.randn(c, c) / c ** 0.5,
                relative_position_bias=torch.randn(1, heads, n, n),
                qkv_bias=torch.randn(3 * c), proj_bias=torch.randn(c))


@pytest.mark.parametrize("shape,heads,window,shift", GEOMETRIES)
def test_the_custom_op_is_torchvisions_function(shape, heads, window, shift):
    a = arguments(shape, heads, window)
    want = shifted_window_attention(window_size=window, num_heads=heads,
                                    shift_size=shift, **a)
    got = torch.ops.fx_inference.window_attention(
        window_size=window, num_heads=heads, shift_size=shift, **a)
    torch.testing.assert_close(got, want)


def window_targets(gm):
    return [str(n.target) for n in gm.graph.nodes
            if "window_attention" in str(n.target)]


@pytest.mark.parametrize("window,heads,message", [
    ([0, 7], 2, "window_size must be two positive ints"),
    ([7], 2, "window_size must be two positive ints"),
    ([7, 7], 0, "num_heads must divide the 16 channels"),
    ([7, 7], 3, "num_heads must divide the 16 channels"),
])
def test_bad_arguments_are_errors_not_crashes(window, heads, message):
    a = arguments((1, 7, 7, 16), 2, [7, 7])
    with pytest.raises(RuntimeError, match=message):
        torch.ops.fx_inference.window_attention(
            window_size=window, num_heads=heads, shift_size=[0, 0], **a)


@pytest.mark.parametrize("shape,heads,window,shift", GEOMETRIES)
def test_the_plan_computes_the_module(shape, heads, window, shift):
    torch.manual_seed(1)
    module = ShiftedWindowAttention(shape[3], window, shift, heads).eval()
    x = torch.randn(shape)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(module), [x])
    assert "fuse_window_attention" in compiled.passes
    # The module's linears are the call's arguments: its only planned step.
    assert compiled.stats["onednn_steps"] == 1
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x), module(x), rtol=1e-4,
                                       atol=1e-4)
            x = torch.randn(shape)


def test_dropout_is_left_to_the_reference():
    # torchvision drops attention weights even in eval mode (F.dropout's
    # default training=True): random, so not planned.
    module = ShiftedWindowAttention(16, [7, 7], [3, 3], 2,
                                    attention_dropout=0.1).eval()
    x = torch.randn(1, 14, 14, 16)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(module), [x])
    assert compiled.stats["onednn_steps"] == 0
    with torch.no_grad():
        assert compiled(x).shape == x.shape


def swin_t():
    torch.manual_seed(0)
    return torchvision.models.swin_t().eval(), torch.randn(1, 3, 224, 224)


def test_swin_t_compiles_with_every_attention_one_planned_step():
    model, x = swin_t()
    gm = torch.fx.symbolic_trace(model)
    # Only the renaming: the 12 attention blocks are the planned steps, with
    # the classifier's global average pooling (pooling_steps.h).
    alone = fx_sdk.compile(gm, [x], pipeline="shape_prop,fuse_window_attention")
    assert alone.stats["onednn_steps"] == 12 + 1
    compiled = fx_sdk.compile(gm, [x])
    graph = compiled.graph_module.graph_text
    assert graph.count("fx_inference.window_attention") == 12
    assert "swin_transformer.shifted_window_attention" not in graph
    with torch.no_grad():
        want = model(x)
        for plan in (alone, compiled):
            torch.testing.assert_close(plan(x), want, rtol=1e-4, atol=1e-4)


def test_the_pipeline_result_runs_in_torch_fx():
    model, x = swin_t()
    gm = torch.fx.symbolic_trace(model)
    fused, report = fx_sdk.run_pipeline(
        gm, "shape_prop,fuse_window_attention", example_inputs=(x,))
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    assert window_targets(fused) == ["fx_inference.window_attention"] * 12
    assert f"{WINDOW_ATTENTION}(" in fused.code
    with torch.no_grad():
        torch.testing.assert_close(fused(x), model(x))
