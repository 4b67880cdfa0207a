"""Concatenations written in place by the InferencePlan
(fx_core/compile/inference_program_cat.cc): the torch.cat calls of one
family (prefixes of one list of pieces, along one dimension, in one alias
group, read only by elementwise steps) share one buffer; each piece is
copied once, and each cat's result is a view of the buffer. The golden is
PyTorch: the same module run eagerly, bit for bit where the plan runs
ATen's own kernels (no pipeline), within float32 rounding after the
inference passes (oneDNN convolutions).
"""

import pytest
import torch
import torch.fx
import torchvision

import fx_sdk

nn = torch.nn


class DenseBlock(nn.Module):
    """DenseNet's pattern with elementwise layers: every layer reads the
    concatenation of all earlier feature maps (each layer's as wide as its
    input); the block returns a function of the widest one."""

    def __init__(self, layers=4, dim=1):
        super().__init__()
        self.layers, self.dim = layers, dim

    def forward(self, x):
        features = [x]
        for i in range(self.layers):
            joined = torch.cat(features, self.dim)
            features.append(torch.relu(joined * (i + 2) - 1))
        return torch.cat(features, self.dim) * 3


class ChangedBetweenCats(nn.Module):
    def forward(self, a, b):
        a, b = a * 1, b + 1
        first = torch.cat([a, b], 1) * 2
        a.add_(1)
        second = torch.cat([a, b], 1) * 2
        return first + second


class NarrowAfterWide(nn.Module):
    def forward(self, a, b):
        a, b = a * 1, b + 1
        wide = torch.cat([a, b], 1) + 1
        narrow = torch.cat([a], 1) * 2
        return wide.sum(1) + narrow.sum(1)


class ReadByAView(nn.Module):
    def forward(self, a, b):
        a, b = a * 1, b + 1
        return torch.cat([a, b], 1).view(-1) * 2


class ReturnsTheCat(nn.Module):
    def forward(self, a, b):
        a, b = a * 1, b + 1
        joined = torch.cat([a, b], 1)
        return joined, joined + 1


def compile_plain(module, inputs):
    """The plan alone: no passes, ATen's kernels."""
    gm = torch.fx.symbolic_trace(module)
    return fx_sdk.compile(gm, inputs, pipeline="")


def run_both(compiled, module, inputs):
    with torch.no_grad():
        return compiled(*inputs), module(*inputs)


@pytest.mark.parametrize("dim", [1, -1, 0])
@pytest.mark.parametrize("channels_last", [False, True])
def test_a_dense_block_is_concatenated_in_place_bit_for_bit(dim,
                                                            channels_last):
    torch.manual_seed(0)
    module = DenseBlock(dim=dim)
    x = torch.randn(2, 3, 5, 6)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    compiled = compile_plain(module, [x])
    assert compiled.stats["cats_in_place"] == 5
    for _ in range(2):
        got, want = run_both(compiled, module, [x])
        assert torch.equal(got, want)
        x = torch.randn_like(x)
    assert compiled.stats["replans"] == 0
    assert compiled.stats["direct_fallbacks"] == 0


def test_a_narrower_cat_after_a_wider_one_reads_the_copied_pieces():
    module = NarrowAfterWide()
    a, b = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    compiled = compile_plain(module, [a, b])
    assert compiled.stats["cats_in_place"] == 2
    got, want = run_both(compiled, module, [a, b])
    assert torch.equal(got, want)


class NestedCats(nn.Module):
    def forward(self, a, b):
        a, b = a * 1, b + 1
        inner = torch.cat([a], 1)
        return (torch.cat([a, inner, b], 1) + 1) * 2


class CatsOfInputs(nn.Module):
    def forward(self, a, b):
        first = torch.cat([a], 1) + 1
        return (torch.cat([a, b], 1) * 2).sum(1) + first.sum(1)


def test_pieces_read_at_run_time_are_copied_from_their_values():
    # The graph's inputs are pieces: not planned buffers, copied from the
    # values the run holds.
    module = CatsOfInputs()
    a, b = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    compiled = compile_plain(module, [a, b])
    assert compiled.stats["cats_in_place"] == 2
    for _ in range(2):
        got, want = run_both(compiled, module, [a, b])
        assert torch.equal(got, want)
        a, b = torch.randn_like(a), torch.randn_like(b)


@pytest.mark.parametrize("module", [ReadByAView(), ReturnsTheCat(),
                                    ChangedBetweenCats(), NestedCats()])
def test_cats_read_otherwise_are_left_to_at_cat(module):
    # A view needs the contiguous result at::cat gives; a result the
    # caller receives must not be a view of a planned buffer; a piece
    # changed in place between two cats must be copied again; a cat that
    # is a piece of a wider one would be copied into itself.
    a, b = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    compiled = compile_plain(module, [a, b])
    assert compiled.stats["cats_in_place"] == 0
    got, want = run_both(compiled, module, [a, b])
    if isinstance(want, tuple):
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    else:
        assert torch.equal(got, want)


def test_a_run_off_the_plan_concatenates_with_at_cat():
    torch.manual_seed(0)
    module = DenseBlock()
    x = torch.randn(2, 3, 5, 6)
    compiled = compile_plain(module, [x])
    # Another layout: the plan is left (re-planned) for that input.
    other = torch.randn(2, 3, 5, 6).contiguous(memory_format=torch.channels_last)
    for inputs in ([other], [x], [other]):
        got, want = run_both(compiled, module, inputs)
        assert torch.equal(got, want)


def test_densenet121_concatenates_every_block_in_place():
    torch.manual_seed(0)
    model = torchvision.models.densenet121().eval()
    x = torch.randn(1, 3, 224, 224)
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), [x])
    # 58 layers' inputs and the 4 blocks' results.
    assert compiled.stats["cats_in_place"] == 62
    for _ in range(2):
        got, want = run_both(compiled, model, [x])
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        x = torch.randn_like(x)
    assert compiled.stats["direct_fallbacks"] == 0


def test_a_dynamic_plan_keeps_the_shared_buffer_across_shapes():
    # Each batch size is planned in memory every shape shares; a larger
    # shape moves it, and the copies' iterators follow.
    torch.manual_seed(0)
    module = DenseBlock()
    gm = torch.fx.symbolic_trace(module)
    compiled = fx_sdk.compile(gm, [torch.randn(1, 3, 5, 6)], dynamic=True,
                              pipeline="")
    for batch in (1, 4, 2, 8, 1):
        x = torch.randn(batch, 3, 5, 6)
        got, want = run_both(compiled, module, [x])
        assert torch.equal(got, want)
    assert compiled.stats["cats_in_place"] == 5
