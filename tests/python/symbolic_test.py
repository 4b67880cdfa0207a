"""Symbolic graphs from torch 1.13's make_fx(tracing_mode="symbolic")
through fx_sdk (issue: symbolic shapes): sym_size nodes, integer arithmetic
on sizes, size lists mixing ints and nodes, and SymInt meta values
(meta['val'] of size nodes, tensor_meta's symbolic shapes). Goldens are
torch's own: its graph text and code, its meta printed, eager's numbers on
several shapes. Run by fx_sdk_test.sh.
"""

import json
import os
import re

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import fx_sdk
from fx_sdk import torchfx_export, torchfx_import


def view_computed(x, y):
    a = x.view(x.shape[0] * 2, -1)
    return torch.cat([a, a], dim=0) + y.sum()


def heads(x):
    """Attention's reshape into heads and back."""
    b, s, d = x.shape
    h = x.view(b, s, 2, d // 2).transpose(1, 2)
    return h.transpose(1, 2).reshape(b, s, d)


def arange_size(x):
    return x + torch.arange(x.shape[-1], dtype=x.dtype)


def expand_other(x, y):
    return x.expand(y.shape[0], x.shape[1]) * y


def new_zeros(x):
    z = x.new_zeros(x.shape[0] // 2, x.shape[1] + 1)
    return z.sum() + x.mean()


def linear_w(x, w, b):
    return F.relu(F.linear(x, w, b))


# name: (function, inputs for size k, the k traced, other ks run). Each k
# keeps the guards of the trace (no size 0 or 1 where the trace had more,
# no two sizes equal where the trace had them different).
CASES = {
    "view_computed": (view_computed,
                      lambda k: (torch.randn(k, 6), torch.randn(3)),
                      4, [2, 5, 9]),
    "heads": (heads, lambda k: (torch.randn(2, k, 8),), 4, [3, 7, 16]),
    "arange_size": (arange_size, lambda k: (torch.randn(3, k),), 5, [2, 9]),
    "expand_other": (expand_other,
                     lambda k: (torch.randn(1, k), torch.randn(4, k)),
                     3, [2, 6]),
    "new_zeros": (new_zeros, lambda k: (torch.randn(k, 3),), 4, [6, 8, 10]),
    "linear_w": (linear_w,
                 lambda k: (torch.randn(k, 4), torch.randn(5, 4),
                            torch.randn(5)), 3, [2, 7]),
}


def num_users(text):
    return text.replace("[#users=", "[num_users=")


def traced(name):
    fn, make, k, _ = CASES[name]
    torch.manual_seed(0)
    return make_fx(fn, tracing_mode="symbolic")(*make(k))


def meta_text(gm):
    """Every node's SymInt meta as torch prints it: meta['val'] of size
    nodes, tensor_meta's shape and stride."""
    out = []
    for n in gm.graph.nodes:
        val = n.meta.get("val")
        if torchfx_export.is_symint(val):
            out.append((n.name, "val", str(val)))
        tm = n.meta.get("tensor_meta")
        if tm is not None:
            out.append((n.name, "shape", [str(d) for d in tm.shape]))
            out.append((n.name, "stride", [str(d) for d in tm.stride]))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_and_code_are_torch_fxs(name):
    gm = traced(name)
    sdk = fx_sdk.from_torch_fx(gm)
    assert sdk.graph_text.rstrip() == num_users(str(gm.graph)).rstrip()
    assert sdk.code == gm.code


@pytest.mark.parametrize("name", sorted(CASES))
def test_runs_on_every_shape_with_eagers_numbers(name):
    fn, make, k, others = CASES[name]
    sdk = fx_sdk.from_torch_fx(traced(name))
    for size in [k] + others:
        inputs = make(size)
        with torch.no_grad():
            torch.testing.assert_close(sdk(*inputs), fn(*inputs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_keeps_text_code_and_symbolic_meta(name):
    fn, make, k, others = CASES[name]
    gm = traced(name)
    assert any(".size(" in str(value) for _, _, value in meta_text(gm))
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    assert meta_text(back) == meta_text(gm)
    for size in others:
        inputs = make(size)
        torch.testing.assert_close(back(*inputs), fn(*inputs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_files_symint_values_survive_export_and_import(name, tmp_path):
    fn, make, k, others = CASES[name]
    gm = traced(name)
    doc, _ = torchfx_export.graph_document(gm, meta=True)
    text = json.dumps(doc)
    assert '{"symint": ' in text
    back = torchfx_import.build_graph_module(json.loads(text), {})
    assert back.code == gm.code
    assert meta_text(back) == meta_text(gm)


def test_the_compiled_plan_runs_other_shapes():
    fn, make, k, others = CASES["heads"]
    gm = traced("heads")
    compiled = fx_sdk.compile(fx_sdk.from_torch_fx(gm), list(make(k)))
    for size in [k] + others:
        inputs = make(size)
        torch.testing.assert_close(compiled(*inputs), fn(*inputs))


@pytest.mark.parametrize("text", [
    "2*", "__import__('os')", "t0.size(0) +", "FloorDiv(s0)", "Mod(s0, 2",
    "(" * 300 + "1" + ")" * 300, "s0 $ 2", "",
])
def test_a_malformed_symint_is_refused_without_running_it(text):
    with pytest.raises(torchfx_import.BundleError, match="symbolic int"):
        torchfx_import.symint(text, "node 'x' meta 'val'")


def test_torchs_guards_come_in_and_are_checked():
    gm = traced("view_computed")
    want = torchfx_export.shape_env(gm)
    assert want["guards"], "torch recorded no guards"
    sdk = fx_sdk.from_torch_fx(gm)
    # The SDK's own text of each guard is sympy's (parsed, then printed).
    env = json.loads(fx_sdk._C._to_bundle(sdk, include_nodes=True)[0])
    assert env["shape_env"]["guards"] == want["guards"]
    assert env["shape_env"]["hints"] == want["hints"]
    # x_1's second size must stay even (view(2*n, -1)) and above 2.
    with pytest.raises(RuntimeError, match=r"the guard Eq\(t0\.size\(0\)\*"
                       r"\(Mod\(t0\.size\(1\), 2\)\), 0\) does not hold: "
                       r"t0\.size\(0\) = 5 \(placeholder 'x_1' dimension 0\), "
                       r"t0\.size\(1\) = 7 \(placeholder 'x_1' dimension 1\)"):
        sdk(torch.randn(5, 7), torch.randn(3))
    with pytest.raises(RuntimeError, match="placeholder 'x_1' has 3 "
                       "dimensions, but the graph was captured for 2"):
        sdk(torch.randn(5, 6, 1), torch.randn(3))
    with pytest.raises(RuntimeError, match="placeholder 'y_1' dimension 0 is "
                       "1, but the graph was captured with a value that "
                       "varies there"):
        sdk(torch.randn(5, 6), torch.randn(1))
    # What torch itself says of the same inputs.
    assert not gm.shape_env.evaluate_guards_for_args(torch.randn(5, 7),
                                                     torch.randn(3))
    assert gm.shape_env.evaluate_guards_for_args(torch.randn(5, 8),
                                                 torch.randn(3))
    torch.testing.assert_close(sdk(torch.randn(5, 8), torch.randn(3)).shape,
                               torch.Size([20, 4]))


def test_duck_sized_inputs_must_stay_equal():
    def add(x, y):
        return x + y
    gm = make_fx(add, tracing_mode="symbolic")(torch.randn(3, 4),
                                               torch.randn(3, 4))
    sdk = fx_sdk.from_torch_fx(gm)
    torch.testing.assert_close(sdk(torch.ones(5, 6), torch.ones(5, 6)),
                               torch.full((5, 6), 2.0))
    with pytest.raises(RuntimeError, match="placeholder 'y_1' dimension 1 is "
                       "7, but the graph needs t0.size\\(1\\) = 6 there"):
        sdk(torch.ones(5, 6), torch.ones(5, 7))


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_case_agrees_with_torchs_guards(name):
    """Whatever the SDK runs computes eager's numbers; what torch's own
    guards accept, the SDK runs; what the SDK refuses, torch refuses too.
    Two differences, both torch 1.13's: a size of 1 where the capture had a
    symbol is refused (1.13 reasons as if every symbol were >= 2, in its
    _maybe_evaluate_static, without recording a guard, so its
    evaluate_guards_for_args lets it through; later torch records 2 <= s0);
    and torch's re-evaluation duck-sizes the new inputs, so it refuses equal
    sizes where the capture had different symbols, which the SDK runs."""
    fn, make, k, others = CASES[name]
    gm = traced(name)
    sdk = fx_sdk.from_torch_fx(gm)
    for size in others + [1, 2, 3]:
        inputs = make(size)
        torch_accepts = gm.shape_env.evaluate_guards_for_args(*inputs)
        if size == 1:
            with pytest.raises(RuntimeError, match="excludes 0 and 1"):
                sdk(*inputs)
            continue
        try:
            got = sdk(*inputs)
        except RuntimeError as e:
            assert not torch_accepts, f"size {size}: {e}"
            continue
        torch.testing.assert_close(got, fn(*inputs))


def torch_sources(gm):
    """torch's name for each symbol says where it comes from: tN.size(D)
    (tN.stride(D)) is the size (stride) D of the N-th placeholder."""
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    out = {}
    for symbol in map(str, gm.shape_env.var_to_val):
        m = re.fullmatch(r"t(\d+)\.(size|stride)\((\d+)\)", symbol)
        assert m, symbol
        out[symbol] = (placeholders[int(m[1])], int(m[3]), m[2] == "stride")
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_shape_env_is_torchs(name):
    gm = traced(name)
    env = fx_sdk.from_torch_fx(gm).shape_env
    assert isinstance(env, fx_sdk.ShapeEnv)
    assert env.format_guards() == gm.shape_env.format_guards()
    assert env.guards == [line[3:] for line in
                          gm.shape_env.format_guards().splitlines()]
    assert env.hints == {str(k): int(v)
                         for k, v in gm.shape_env.var_to_val.items()}
    assert env.sources == torch_sources(gm)
    assert env.relations == torchfx_export.shape_env(gm)["guards"]
    fn, make, k, others = CASES[name]
    env.check(*make(k))


def test_the_shape_env_check_names_guard_placeholder_and_dimension():
    gm = traced("view_computed")
    env = fx_sdk.from_torch_fx(gm).shape_env
    assert gm.shape_env.format_guards().count("\n") >= 3, "guards expected"
    env.check(torch.randn(5, 8), torch.randn(3))
    with pytest.raises(RuntimeError, match=r"the guard Eq\(t0\.size\(0\)\*"
                       r"\(Mod\(t0\.size\(1\), 2\)\), 0\) does not hold: "
                       r"t0\.size\(0\) = 5 \(placeholder 'x_1' dimension 0\), "
                       r"t0\.size\(1\) = 7 \(placeholder 'x_1' dimension 1\)"):
        env.check(torch.randn(5, 7), torch.randn(3))
    assert not gm.shape_env.evaluate_guards_for_args(torch.randn(5, 7),
                                                     torch.randn(3))
    with pytest.raises(RuntimeError, match="placeholder 'x_1' has 3 "
                       "dimensions, but the graph was captured for 2"):
        env.check(torch.randn(5, 6, 1), torch.randn(3))


def test_the_shape_env_survives_the_file_with_torchs_text(tmp_path):
    """printed_guards in the file's shape_env keep torch's text of each
    guard: a bundle written and read again prints them as torch does."""
    gm = traced("view_computed")
    sdk = fx_sdk.from_torch_fx(gm)
    text, weights = fx_sdk._C._to_bundle(sdk, include_nodes=True)
    doc = json.loads(text)
    assert doc["shape_env"]["printed_guards"] == \
        sdk.shape_env.guards
    assert doc["shape_env"]["guards"] == sdk.shape_env.relations


def test_a_graph_without_symbols_has_no_shape_env():
    gm = make_fx(lambda x: x * 2)(torch.randn(3, 4))
    assert fx_sdk.from_torch_fx(gm).shape_env is None
    assert fx_sdk.from_torch_fx(torch.fx.symbolic_trace(
        torch.nn.ReLU())).shape_env is None
