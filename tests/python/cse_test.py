"""The cse plugin against torch.fx's own CSEPass (issue: silent wrong
results): random draws and in-place ops are never merged, whatever the
spelling (make_fx's ATen overloads, torch.*, Tensor methods), because the
rule comes from LibTorch's schemas and tags (NodeOperatorEffects), not a
name list; deterministic duplicates are merged as torch.fx merges them.
Goldens are torch.fx's: CSEPass's graph text and eager's numbers.
"""

import pytest
import torch
import torch.fx
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.dialect.common.cse_pass import CSEPass

import fx_sdk


N = 64  # two random draws of N elements differ somewhere


def two_randn(x):
    return torch.randn(N) - torch.randn(N) + x


def two_rand_like(x):
    return torch.rand_like(x) - torch.rand_like(x)


def two_dropouts(x):
    return F.dropout(x, 0.5, training=True) - F.dropout(x, 0.5, training=True)


def two_bernoulli(x):
    p = torch.full_like(x, 0.5)
    return torch.bernoulli(p) - torch.bernoulli(p)


def two_normal(x):
    return torch.normal(x, 1.0) - torch.normal(x, 1.0)


def two_in_place(x):
    y = x.clone()
    y.add_(1)
    y.add_(1)
    return y


def duplicates(x):
    return x.sin() + x.sin() + torch.cos(x) * torch.cos(x)


def empties_then_filled(x):
    a = torch.empty(N)
    b = torch.empty(N)
    a.fill_(1.0)
    b.fill_(2.0)
    return a + b + x


RANDOM = [two_randn, two_rand_like, two_dropouts, two_bernoulli, two_normal]
ALL = RANDOM + [two_in_place, duplicates, empties_then_filled]


def graphs(fn):
    """The function as torch.fx traces it and as make_fx records it."""
    x = torch.randn(N)
    yield "symbolic_trace", torch.fx.symbolic_trace(fn)
    yield "make_fx", make_fx(fn)(x)


def cse(gm):
    out, report = fx_sdk.run_pipeline(gm, "cse")
    assert report[-1]["outcome"] == "ran", report
    return out


def num_users(text):
    return text.replace("[#users=", "[num_users=")


@pytest.mark.parametrize("fn", RANDOM, ids=lambda f: f.__name__)
def test_random_draws_are_never_merged(fn):
    for how, gm in graphs(fn):
        out = cse(gm)
        targets = [str(n.target) for n in gm.graph.nodes]
        assert [str(n.target) for n in out.graph.nodes] == targets, how
        # Two draws, so the difference is not zero.
        assert not torch.equal(out(torch.ones(N)), torch.ones(N) * 0), how


@pytest.mark.parametrize("fn", [two_in_place, duplicates],
                         ids=lambda f: f.__name__)
def test_the_graph_is_torch_fxs(fn):
    """make_fx graphs through torch.fx's CSEPass: the same text. (Not for
    the random functions: torch 1.13's CSEPass merges them, its banned list
    holding ATen packets while make_fx records overloads; nor for the
    filled empties, which it merges into one buffer.)"""
    gm = make_fx(fn)(torch.randn(N))
    want = CSEPass()(gm).graph_module
    assert num_users(str(cse(gm).graph)) == num_users(str(want.graph))


def test_buffers_a_later_node_writes_stay_apart():
    """torch.empty twice, then each filled: merged they would alias (what
    torch.fx's CSEPass does, giving 4 instead of 3)."""
    for how, gm in graphs(empties_then_filled):
        out = cse(gm)
        x = torch.zeros(N)
        torch.testing.assert_close(out(x), empties_then_filled(x))


def test_deterministic_duplicates_are_merged():
    gm = make_fx(duplicates)(torch.randn(N))
    out = cse(gm)
    assert len(out.graph.nodes) < len(gm.graph.nodes)
    x = torch.randn(N)
    torch.testing.assert_close(out(x), duplicates(x))
