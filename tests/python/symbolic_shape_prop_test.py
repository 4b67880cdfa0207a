"""fx_sdk.symbolic_shape_prop against torch 1.13 itself: for functions
traced by make_fx(tracing_mode="symbolic"), every node's symbolic sizes and
strides (torch's meta['val'], computed here by torch) must be what our
propagation computes from the placeholders' symbolic sizes alone, every
other meta removed first. With concrete sizes the result must be
FakeTensorProp's. Run by fx_sdk_test.sh.
"""

import random

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

import fx_sdk
from fx_sdk import torchfx_export, torchfx_import


def view_computed(x, y):
    a = x.view(x.shape[0] * 2, -1)
    return torch.cat([a, a], dim=0) + y.sum()


def heads(x):
    b, s, d = x.shape
    h = x.view(b, s, 2, d // 2).transpose(1, 2)
    return h.transpose(1, 2).reshape(b, s, d)


def attention(q, k, v):
    b, s, d = q.shape
    qh = q.view(b, s, 2, d // 2).permute(0, 2, 1, 3)
    kh = k.view(b, s, 2, d // 2).permute(0, 2, 3, 1)
    vh = v.view(b, s, 2, d // 2).permute(0, 2, 1, 3)
    w = torch.softmax(torch.matmul(qh, kh) / 4.0, dim=-1)
    return torch.matmul(w, vh).permute(0, 2, 1, 3).reshape(b, s, d)


def arange_size(x):
    return x + torch.arange(x.shape[-1], dtype=x.dtype)


def expand_other(x, y):
    return x.expand(y.shape[0], x.shape[1]) * y


def new_zeros(x):
    z = x.new_zeros(x.shape[0] // 2, x.shape[1] + 1)
    return z.sum() + x.mean()


def linear_w(x, w, b):
    return F.relu(F.linear(x, w, b))


def conv_pool(x, w):
    y = F.max_pool2d(F.relu(F.conv2d(x, w, padding=1)), 2)
    return F.adaptive_avg_pool2d(y, 1).sum(dim=(2, 3)), y


def norms(x, w, b):
    y = F.layer_norm(x, (6,), w, b)
    return F.log_softmax(y, dim=-1), y.mean(dim=1, keepdim=True)


def squeeze_t(x):
    return x.unsqueeze(1).squeeze(1), x.t().contiguous()


def stack_cat(x, y):
    return torch.stack([x, y], dim=0), torch.cat([x, y, x], dim=1)


# torch 1.13 cannot trace these symbolically (slicing, select, split,
# convolution call sizes()); their goldens are eager's sizes at other sizes.
def slices(x):
    return x[:, 1:], x[0], x.narrow(1, 0, 2)


def split(x):
    return x.split(2, dim=1)[1], x.split([1, 3], dim=1)[1]


def bmm_scores(x, y):
    return torch.bmm(x, y.transpose(1, 2)).softmax(-1)


def embed(idx, table):
    return F.embedding(idx, table).sum(1)


def where_mask(x, y):
    return torch.where(x > 0, x, y).masked_fill(y > 0, 0.0)


# name: (function, example inputs). Sizes 1 specialise (as in torch).
CASES = {
    "view_computed": (view_computed, (torch.randn(4, 6), torch.randn(3))),
    "heads": (heads, (torch.randn(2, 5, 8),)),
    "attention": (attention, (torch.randn(2, 5, 8), torch.randn(2, 5, 8),
                              torch.randn(2, 5, 8))),
    "arange_size": (arange_size, (torch.randn(3, 5),)),
    "expand_other": (expand_other, (torch.randn(1, 3), torch.randn(4, 3))),
    "new_zeros": (new_zeros, (torch.randn(4, 3),)),
    "linear_w": (linear_w, (torch.randn(3, 4), torch.randn(5, 4),
                            torch.randn(5))),
    "norms": (norms, (torch.randn(2, 3, 6), torch.randn(6), torch.randn(6))),
    "squeeze_t": (squeeze_t, (torch.randn(4, 6),)),
    "stack_cat": (stack_cat, (torch.randn(3, 4), torch.randn(3, 4))),
    "bmm_scores": (bmm_scores, (torch.randn(2, 3, 4), torch.randn(2, 5, 4))),
    "embed": (embed, (torch.randint(0, 10, (2, 3)), torch.randn(10, 4))),
    "where_mask": (where_mask, (torch.randn(3, 4), torch.randn(3, 4))),
}


def sizes_text(value):
    """Per tensor (in order): its sizes and strides as torch prints them."""
    if isinstance(value, torch.Tensor):
        return [([str(s) for s in value.shape],
                 [str(s) for s in value.stride()])]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in sizes_text(v)]
    return []


def meta_sizes(meta):
    """Ours: the same from meta['tensor_meta'] (None where a stride is not
    known)."""
    if isinstance(meta, dict) and "shape" in meta:
        stride = meta.get("stride")
        return [([str(s) for s in meta["shape"]],
                 None if stride is None else [str(s) for s in stride])]
    if isinstance(meta, (tuple, list)):
        return [t for m in meta for t in meta_sizes(m)]
    return []


def sympy_expr(text):
    return torchfx_import._SymParser(text, "test").parse()


def torch_bindings(gm, tries=400):
    """Values of the capture's symbols that satisfy every guard torch
    recorded (its hints first)."""
    env = gm.shape_env
    hints = {s.name: int(v) for s, v in env.var_to_val.items()}
    names = sorted(hints)
    out = [hints]
    rng = random.Random(0)
    for _ in range(tries):
        b = {n: rng.randint(2, 24) for n in names}
        for _ in range(2):  # torch's replacements (a stride for its sizes)
            for sym, expr in env.replacements.items():
                b[sym.name] = int(expr.subs(
                    {s: b[s.name] for s in expr.free_symbols}))
        guards = [(g[0], g[1]) for g in env.guards]
        subs = {s: b[s.name] for g, _ in guards for s in g.free_symbols}
        if all(bool(g.subs(subs) == v) for g, v in guards):
            out.append(b)
    return out


def same_under_guards(ours, theirs, bindings):
    """Equal expressions, or equal for every binding the guards allow
    (torch may spell a size 2*FloorDiv(d, 2) where the graph computes d
    under the guard Eq(Mod(d, 2), 0))."""
    if ours == theirs:
        return True
    a, b = sympy_expr(ours), sympy_expr(theirs)
    for binding in bindings:
        subs = {s: binding[s.name] for s in a.free_symbols | b.free_symbols}
        if a.subs(subs) != b.subs(subs):
            return False
    return len(bindings) > 2


def strip_meta(sdk):
    for n in sdk.graph.nodes:
        for key in list(n.meta):
            if n.op != "placeholder" or key != "tensor_meta":
                del n.meta[key]


@pytest.mark.parametrize("name", sorted(CASES))
def test_sizes_and_strides_are_torchs(name):
    fn, inputs = CASES[name]
    gm = make_fx(fn, tracing_mode="symbolic")(*inputs)
    sdk = fx_sdk.from_torch_fx(gm)
    strip_meta(sdk)
    fx_sdk.symbolic_shape_prop(sdk)
    theirs = {n.name: n for n in gm.graph.nodes}
    bindings = torch_bindings(gm)

    def same(ours, expected):
        return len(ours) == len(expected) and all(
            same_under_guards(a, b, bindings) for a, b in zip(ours, expected))

    checked = 0
    for n in sdk.graph.nodes:
        val = theirs[n.name].meta.get("val")
        if torchfx_export.is_symint(val):
            assert same([str(n.meta["val"])], [str(val)]), n.name
            checked += 1
        expected = sizes_text(val)
        got = meta_sizes(n.meta.get("tensor_meta"))
        if n.op == "output" or not expected:
            continue
        assert len(got) == len(expected), n.name
        for (shape, stride), (my_shape, my_stride) in zip(expected, got):
            assert same(my_shape, shape), (n.name, my_shape, shape)
            # A dimension of size 1 may have any stride.
            keep = [i for i, d in enumerate(shape) if d != "1"]
            assert my_stride is None or same(
                [my_stride[i] for i in keep], [stride[i] for i in keep]), \
                (n.name, my_stride, stride)
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("name", sorted(CASES))
def test_guards_hold_for_the_traced_sizes(name):
    fn, inputs = CASES[name]
    gm = make_fx(fn, tracing_mode="symbolic")(*inputs)
    sdk = fx_sdk.from_torch_fx(gm)
    strip_meta(sdk)
    guards = fx_sdk.symbolic_shape_prop(sdk)
    env = sdk.shape_env
    for guard in guards:
        assert isinstance(guard, str) and guard not in ("True", "False")
    env.check(*inputs)


def test_concrete_sizes_are_fake_tensor_props():
    fn, inputs = CASES["attention"]
    made = make_fx(fn)(*inputs)
    sdk = fx_sdk.from_torch_fx(made)
    fx_sdk.symbolic_shape_prop(
        sdk, shapes={p.name: "x".join(str(s) for s in x.shape)
                     for p, x in zip(sdk.graph.nodes, inputs)})
    FakeTensorProp(made).propagate(*inputs)
    for theirs, ours in zip(made.graph.nodes, sdk.graph.nodes):
        expected = sizes_text(theirs.meta.get("fake_result",
                                              theirs.meta.get("val")))
        if theirs.op == "output" or not expected:
            continue
        assert meta_sizes(ours.meta.get("tensor_meta")) == expected, ours.name
        assert ours.meta["tensor_meta"]["dtype"] == \
            theirs.meta.get("fake_result", theirs.meta.get("val")).dtype


def test_named_symbols_and_hints():
    inputs = (torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3))
    sdk = fx_sdk.from_torch_fx(make_fx(conv_pool)(*inputs))
    fx_sdk.symbolic_shape_prop(
        sdk, shapes={"x_1": "Bx3xHxW", "w_1": [4, 3, 3, 3]},
        hints={"B": 2, "H": 8, "W": 8})
    out = [n for n in sdk.graph.nodes if n.op == "output"][0]
    shapes = [m["shape"] for m in out.meta["tensor_meta"]]
    assert [str(s) for s in shapes[0]] == ["B", "4"]
    assert [str(s) for s in shapes[1]][:2] == ["B", "4"]
    assert "H" in str(shapes[1][2]) and "W" in str(shapes[1][3])


def test_bad_input_names_what_is_wrong():
    fn, inputs = CASES["linear_w"]
    sdk = fx_sdk.from_torch_fx(make_fx(fn)(*inputs))
    before = sdk.graph_text
    metas = [dict(n.meta) for n in sdk.graph.nodes]
    with pytest.raises(ValueError, match=r"hints\['B'\].*hint of B is 1"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": "Bx4"}, hints={"B": 1})
    with pytest.raises(ValueError, match=r"hints\['Q'\].*Q, which no size"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": "Bx4"}, hints={"Q": 3})
    with pytest.raises(ValueError, match=r"shapes\['x_1'\]\[0\]"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": ["2*(", 4]})
    with pytest.raises(ValueError, match="x_1.*rank"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": "Bx4x4"},
                                   hints={"B": 3})
    # A weight whose size contradicts the input's: the linear's own check.
    with pytest.raises(ValueError, match="'t'|addmm|mm|linear"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": "BxK"},
                                   hints={"B": 3, "K": 6})
    assert sdk.graph_text == before
    assert [dict(n.meta) for n in sdk.graph.nodes] == metas


# name: (function, inputs for sizes, symbolic sizes per placeholder, the
# symbols' values traced, other values run).
EAGER_CASES = {
    "slices": (slices, lambda v: (torch.randn(v["B"], v["N"]),),
               {"x_1": "BxN"}, {"B": 4, "N": 6}, [{"B": 3, "N": 9},
                                                  {"B": 7, "N": 4}]),
    "split": (split, lambda v: (torch.randn(v["B"], 4),), {"x_1": "Bx4"},
              {"B": 4}, [{"B": 6}, {"B": 10}]),
    "conv_pool": (conv_pool,
                  lambda v: (torch.randn(v["B"], 3, v["H"], v["W"]),
                             torch.randn(4, 3, 3, 3)),
                  {"x_1": "Bx3xHxW"}, {"B": 2, "H": 8, "W": 8},
                  [{"B": 3, "H": 12, "W": 10}, {"B": 5, "H": 7, "W": 9}]),
}


def evaluated(meta, values):
    return [[int(sympy_expr(str(d)).subs(
        {s: values[s.name] for s in sympy_expr(str(d)).free_symbols}))
        for d in m["shape"]] for m in meta]


@pytest.mark.parametrize("name", sorted(EAGER_CASES))
def test_symbolic_sizes_are_eagers_at_other_sizes(name):
    fn, make, shapes, hints, others = EAGER_CASES[name]
    sdk = fx_sdk.from_torch_fx(make_fx(fn)(*make(hints)))
    fx_sdk.symbolic_shape_prop(sdk, shapes=shapes, hints=hints)
    out = [n for n in sdk.graph.nodes if n.op == "output"][0]
    meta = out.meta["tensor_meta"]
    assert any(not str(d).isdigit() for m in meta for d in m["shape"])
    for values in [hints] + others:
        expected = [list(t.shape) for t in fn(*make(values))]
        assert evaluated(meta, values) == expected, values


def test_shape_prop_pass_takes_symbolic_shapes():
    """The shape_prop plugin through the pass pipeline (C ABI
    GraphSymbolicShapeProp): named symbols with hints, and a symbolic
    graph's own symbols; sizes equal eager's at other values."""
    inputs = (torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3))
    out, report = fx_sdk.run_pipeline(
        make_fx(conv_pool)(*inputs),
        "shape_prop{shapes=Bx3xHxW,4x3x3x3,hints=B:2,H:8,W:8}")
    assert report[0]["outcome"] == "ran", report
    meta = [n for n in out.graph.nodes if n.op == "output"][0] \
        .meta["tensor_meta"]
    for values in ({"B": 2, "H": 8, "W": 8}, {"B": 5, "H": 12, "W": 9}):
        x = torch.randn(values["B"], 3, values["H"], values["W"])
        expected = [list(t.shape) for t in conv_pool(x, inputs[1])]
        shapes = [{"shape": m["shape"] if isinstance(m, dict) else m.shape}
                  for m in meta]
        assert evaluated(shapes, values) == expected

    fn, example = CASES["attention"]
    gm = make_fx(fn, tracing_mode="symbolic")(*example)
    out, report = fx_sdk.run_pipeline(gm, "shape_prop")
    assert report[0]["outcome"] == "ran", report
    theirs = {n.name: n.meta.get("val") for n in gm.graph.nodes}
    bindings = torch_bindings(gm)
    checked = 0
    for n in out.graph.nodes:
        tm = n.meta.get("tensor_meta")
        if n.op == "call_function" and hasattr(tm, "shape"):
            ours = [str(s) for s in tm.shape]
            expected = [str(s) for s in theirs[n.name].shape]
            assert len(ours) == len(expected) and all(
                same_under_guards(a, b, bindings)
                for a, b in zip(ours, expected)), (n.name, ours, expected)
            checked += 1
    assert checked > 10


def test_shape_prop_pass_refuses_what_it_cannot_do():
    inputs = (torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3))
    gm = make_fx(conv_pool)(*inputs)
    with pytest.raises(RuntimeError, match="x_1.*size 1|size 1.*x_1"):
        fx_sdk.run_pipeline(gm, "shape_prop{shapes=Bx3(xHxW,4x3x3x3}")


def test_an_operator_without_a_rule_is_named():
    def cumulative(x):
        return torch.cumsum(x, 0) * 2

    x = torch.randn(4, 3)
    sdk = fx_sdk.from_torch_fx(make_fx(cumulative)(x))
    with pytest.raises(ValueError, match="'cumsum'.*no symbolic shape rule "
                       "for aten::cumsum"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": "Nx3"})
    # Concrete sizes need no rule: the kernel's sizes are the answer.
    fx_sdk.symbolic_shape_prop(sdk, shapes={"x_1": "4x3"})
    out = [n for n in sdk.graph.nodes if n.op == "output"][0]
    meta = out.meta["tensor_meta"]
    meta = meta if isinstance(meta, dict) else meta[0]
    assert [int(s) for s in meta["shape"]] == [4, 3]


def test_passes_keep_symbolic_tensor_meta():
    """Passes after a symbolic shape_prop: the pass manager's tensor_meta
    checks and the passes reading sizes take symbolic sizes."""
    fn, example = CASES["view_computed"]
    gm = make_fx(fn, tracing_mode="symbolic")(*example)
    out, report = fx_sdk.run_pipeline(gm, "shape_prop,cse,dce")
    assert [r["outcome"] for r in report] == ["ran", "ran", "ran"], report
    view = [n for n in out.graph.nodes if n.name == "view"][0]
    assert [str(s) for s in view.meta["tensor_meta"].shape] == \
        ["2*t0.size(0)", "FloorDiv(t0.size(1), 2)"]
