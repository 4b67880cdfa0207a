"""fx_sdk.symbolic_shape_prop on module-level torch.fx.symbolic_trace graphs
(call_module nodes, torch.nn.functional / operator calls, Tensor methods):
nodes no ATen shape function covers are captured with make_fx's symbolic
mode from their inputs' symbolic sizes (fx_core/capture/node_capture.h).
Goldens: every node's symbolic sizes evaluated at other sizes must be the
sizes torch's own ShapeProp finds running the same modules eagerly there.
Run by fx_sdk_test.sh.
"""

import operator

import pytest
import sympy
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.fx import symbolic_trace
from torch.fx.experimental.symbolic_shapes import FloorDiv
from torch.fx.passes.shape_prop import ShapeProp

import fx_sdk
from fx_sdk import torchfx_import


def sympy_expr(text):
    return torchfx_import._SymParser(text, "test").parse()


def shapes_of(meta):
    """The sizes (as text) of every tensor a tensor_meta describes."""
    if meta is None:
        return []
    if isinstance(meta, dict):
        return [[str(s) for s in meta["shape"]]] if "shape" in meta else []
    if hasattr(meta, "shape"):
        return [[str(s) for s in meta.shape]]
    if isinstance(meta, (tuple, list)):
        return [s for m in meta for s in shapes_of(m)]
    return []


def evaluate(sizes, values):
    out = []
    for d in sizes:
        e = sympy_expr(d)
        out.append(int(e.subs({s: values[s.name] for s in e.free_symbols})))
    return out


def eager_shapes(gm, *inputs):
    """Node name -> the sizes of its tensors, by torch's ShapeProp."""
    ShapeProp(gm).propagate(*inputs)
    return {n.name: shapes_of(n.meta.get("tensor_meta"))
            for n in gm.graph.nodes if n.op != "output"}


def check_against_eager(gm, sdk, make_inputs, others):
    """Every node's symbolic sizes, evaluated at each of `others`, are
    eager's there; returns how many nodes had symbolic sizes."""
    symbolic = {}
    for n in sdk.graph.nodes:
        if n.op == "output":
            continue
        sizes = shapes_of(n.meta.get("tensor_meta"))
        if any(not d.lstrip("-").isdigit() for s in sizes for d in s):
            symbolic[n.name] = sizes
    for values in others:
        expected = eager_shapes(gm, *make_inputs(values))
        for name, sizes in symbolic.items():
            got = [evaluate(s, values) for s in sizes]
            assert got == [list(map(int, s)) for s in expected[name]], \
                (name, sizes, values)
    return len(symbolic)


def resnet18():
    torch.manual_seed(0)
    return symbolic_trace(torchvision.models.resnet18().eval())


def test_resnet18_sizes_are_eagers_at_other_sizes():
    gm = resnet18()
    sdk = fx_sdk.from_torch_fx(gm)
    fx_sdk.symbolic_shape_prop(sdk, shapes={"x": "Bx3xHxW"},
                               hints={"B": 2, "H": 64, "W": 64})
    out = [n for n in sdk.graph.nodes if n.op == "output"][0]
    assert shapes_of(out.meta["tensor_meta"]) == [["B", "1000"]]
    kinds = {n.op for n in sdk.graph.nodes
             if shapes_of(n.meta.get("tensor_meta"))}
    assert "call_module" in kinds
    with torch.no_grad():
        checked = check_against_eager(
            gm, sdk, lambda v: (torch.randn(v["B"], 3, v["H"], v["W"]),),
            [{"B": 3, "H": 96, "W": 80}, {"B": 5, "H": 45, "W": 71}])
    assert checked > 40


def test_shape_prop_pass_on_resnet18():
    """The headline: the shape_prop plugin with shapes=Bx3x224x224."""
    out, report = fx_sdk.run_pipeline(resnet18(),
                                      "shape_prop{shapes=Bx3x224x224}")
    assert report[0]["outcome"] == "ran", report
    output = [n for n in out.graph.nodes if n.op == "output"][0]
    assert shapes_of(output.meta["tensor_meta"]) == [["B", "1000"]]
    fc = [n for n in out.graph.nodes if n.name == "flatten"][0]
    assert shapes_of(fc.meta["tensor_meta"]) == [["B", "512"]]


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.size(0), x.size(1), x.size(2)
        qkv = self.qkv(x).view(b, s, 3, self.heads, d // self.heads)
        # Tensor indexing (select.int on the symbolic sizes).
        qkv = qkv.permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        w = F.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1)
        return self.proj((w @ v).transpose(1, 2).reshape(b, s, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class Encoder(nn.Module):
    def __init__(self, d=32, heads=4, classes=10):
        super().__init__()
        self.embed = nn.Linear(16, d)
        self.blocks = nn.Sequential(Block(d, heads), Block(d, heads))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        h = self.norm(self.blocks(F.relu(self.embed(x))))
        return self.head(h.mean(dim=1)), torch.flatten(h, 1)


def test_encoder_with_symbolic_sequence_length():
    torch.manual_seed(0)
    gm = symbolic_trace(Encoder().eval())
    sdk = fx_sdk.from_torch_fx(gm)
    guards = fx_sdk.symbolic_shape_prop(sdk, shapes={"x": "BxSx16"},
                                        hints={"B": 2, "S": 12})
    out = [n for n in sdk.graph.nodes if n.op == "output"][0]
    assert shapes_of(out.meta["tensor_meta"]) == [["B", "10"], ["B", "32*S"]]
    others = [{"B": 3, "S": 7}, {"B": 4, "S": 33}]
    # Nothing specialised: the guards (broadcasting's Ne(S, 1), ...) hold
    # at the other sizes too.
    b, s = sympy.symbols("B S")
    for values in others:
        for guard in guards:
            assert sympy.sympify(guard, locals={"B": b, "S": s}).subs(
                {b: values["B"], s: values["S"]}) == sympy.true, guard
    with torch.no_grad():
        checked = check_against_eager(
            gm, sdk, lambda v: (torch.randn(v["B"], v["S"], 16),), others)
    assert checked > 30


def test_data_dependent_call_is_named():
    class Positive(nn.Module):
        def forward(self, x):
            return F.relu(x)[x > 0]

    sdk = fx_sdk.from_torch_fx(symbolic_trace(Positive()))
    with pytest.raises(ValueError, match="node 'getitem'.*capturing its "
                       "call.*aten::index.*nonzero"):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x": "Bx4"}, hints={"B": 3})


# Tensor indexing and symbolic ints handed to captured calls (issue 31).
# Goldens: eager PyTorch's sizes (torch's ShapeProp) at the hints and at
# other sizes, and torch 1.13's make_fx(tracing_mode="symbolic") where it
# can trace the same code.


def strides_of(meta):
    """The strides (as text, None where not known) of every tensor a
    tensor_meta describes, in shapes_of's order."""
    if meta is None:
        return []
    if isinstance(meta, dict):
        if "shape" not in meta:
            return []
        stride = meta.get("stride")
        return [None if stride is None else [str(s) for s in stride]]
    if hasattr(meta, "shape"):
        return [[str(s) for s in meta.stride]]
    if isinstance(meta, (tuple, list)):
        return [s for m in meta for s in strides_of(m)]
    return []


def all_sizes_are_eagers(gm, sdk, make_inputs, all_values):
    """Every node's sizes (symbolic or not), evaluated at each of
    `all_values`, are eager's there: a size torch makes depend on a symbol
    cannot be a constant. So are the strides we know (but those of
    dimensions of size 1, which may be anything). Returns the names of the
    nodes with symbolic sizes."""
    nodes = [n for n in sdk.graph.nodes if n.op != "output"]
    ours = {n.name: shapes_of(n.meta.get("tensor_meta")) for n in nodes}
    our_strides = {n.name: strides_of(n.meta.get("tensor_meta"))
                   for n in nodes}
    for values in all_values:
        with torch.no_grad():
            ShapeProp(gm).propagate(*make_inputs(values))
        eager = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
        for name, sizes in ours.items():
            got = [evaluate(s, values) for s in sizes]
            expected = [list(map(int, s)) for s in shapes_of(eager[name])]
            assert got == expected, (name, sizes, values)
            for shape, mine, theirs in zip(expected, our_strides[name],
                                           strides_of(eager[name])):
                if mine is None:
                    continue
                got = evaluate(mine, values)
                assert [g for g, d in zip(got, shape) if d != 1] == \
                    [int(t) for t, d in zip(theirs, shape) if d != 1], \
                    (name, mine, values)
    return {name for name, sizes in ours.items()
            if any(not d.lstrip("-").isdigit() for s in sizes for d in s)}


def guards_hold(guards, all_values):
    """No guard pins a symbol: each holds at every one of `all_values`."""
    for values in all_values:
        for guard in guards:
            names = {k: sympy.Symbol(k, integer=True, positive=True)
                     for k in values}
            names["FloorDiv"] = FloorDiv
            e = sympy.sympify(guard, locals=names)
            assert e.subs({s: values[s.name] for s in e.free_symbols}) \
                == sympy.true, (guard, values)


class Indexing(nn.Module):
    def forward(self, x, idx):
        return (x[0],                          # select.int
                x[:, 1:],                      # slice, start clamped
                x[..., None],                  # Ellipsis, unsqueeze
                x[:, : x.size(1) // 2],        # a symbolic stop
                x[:, -1],                      # a negative select
                x[::2],                        # a step
                x[1:, None, ..., 2:-1],        # slice/None/Ellipsis mixed
                x[:, x.size(1) - 3:, 1],       # a symbolic start, a select
                x[-2:, :, 3:100],              # bounds beyond the size
                x[x.size(0) - 1],              # a symbolic index
                x[None],
                x[...],                        # alias
                x[True],
                x[False, 1],                   # bool and int
                x[idx],                        # index.Tensor
                x[:, idx, :, idx],             # not adjacent: to the front
                x[:, :, idx, 1:],
                x[[0, 2]],                     # a list of ints
                x[:, [1, 0, 1]][..., 1::3])


INDEXING_SHAPES = {"x": "BxCxHxW", "idx": "K"}
INDEXING_HINTS = {"B": 4, "C": 6, "H": 8, "W": 10, "K": 5}
INDEXING_OTHERS = [{"B": 3, "C": 9, "H": 5, "W": 7, "K": 2},
                   {"B": 6, "C": 5, "H": 11, "W": 4, "K": 7}]


def indexing_inputs(v):
    torch.manual_seed(0)
    return (torch.randn(v["B"], v["C"], v["H"], v["W"]),
            torch.randint(0, 2, (v["K"],)))


def test_tensor_indexing_stays_symbolic():
    gm = symbolic_trace(Indexing())
    # ShapeProp's tensor_meta gives the placeholders their dtypes (idx: long).
    ShapeProp(gm).propagate(*indexing_inputs(INDEXING_HINTS))
    sdk = fx_sdk.from_torch_fx(gm)
    guards = fx_sdk.symbolic_shape_prop(sdk, shapes=INDEXING_SHAPES,
                                        hints=INDEXING_HINTS)
    all_values = [INDEXING_HINTS] + INDEXING_OTHERS
    symbolic = all_sizes_are_eagers(gm, sdk, indexing_inputs, all_values)
    getitems = {n.name for n in sdk.graph.nodes
                if n.target is operator.getitem}
    # Every indexing result depends on the symbols in torch's semantics.
    assert len(getitems) == 20 and getitems <= symbolic, getitems - symbolic
    guards_hold(guards, all_values)


class SliceBySize(nn.Module):
    def forward(self, x):
        n = x.size(1) // 2
        return x[:, :n] * 2, x[:, n:, None], x[:, -n:]


def test_slice_bounds_from_size_nodes_are_the_sizes_expressions():
    gm = symbolic_trace(SliceBySize())
    sdk = fx_sdk.from_torch_fx(gm)
    guards = fx_sdk.symbolic_shape_prop(sdk, shapes={"x": "BxN"},
                                        hints={"B": 3, "N": 8})
    all_values = [{"B": 3, "N": 8}, {"B": 5, "N": 7}, {"B": 2, "N": 13}]
    symbolic = all_sizes_are_eagers(
        gm, sdk, lambda v: (torch.randn(v["B"], v["N"]),), all_values)
    getitems = {n.name for n in sdk.graph.nodes
                if n.target is operator.getitem}
    assert len(getitems) == 3 and getitems <= symbolic, getitems - symbolic
    guards_hold(guards, all_values)


def make_fx_sizes(fn, example):
    """torch 1.13's make_fx(tracing_mode="symbolic") output sizes for `fn`
    on `example`, as text, and its input's sizes (its symbols)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(fn, tracing_mode="symbolic")(example)
    nodes = list(gm.graph.nodes)
    out = nodes[-1].args[0]
    out = out[0] if isinstance(out, (list, tuple)) else out
    return ([str(s) for s in out.meta["val"].shape],
            [str(s) for s in nodes[0].meta["val"].shape])


def check_against_make_fx(gm, twin, shapes, symbols, all_values):
    """Our output sizes for the symbolic_trace'd `gm` are, at each of
    `all_values`, those of torch 1.13's make_fx(tracing_mode="symbolic") on
    `twin` (the same computation spelled as torch can trace it: 1.13's
    make_fx cannot trace Python's tensor indexing, `Cannot call sizes() on
    tensor with symbolic sizes`), which eager confirms is the same."""
    name = list(shapes)[0]
    make = lambda v: torch.randn(*[v.get(s, s) for s in symbols])  # noqa
    their_sizes, their_symbols = make_fx_sizes(twin, make(all_values[0]))
    sdk = fx_sdk.from_torch_fx(gm)
    fx_sdk.symbolic_shape_prop(sdk, shapes=shapes, hints=all_values[0])
    out = [n for n in sdk.graph.nodes if n.op == "output"][0]
    ours = shapes_of(out.meta["tensor_meta"])[0]
    assert any(not d.lstrip("-").isdigit() for d in ours), ours
    for values in all_values:
        x = make(values)
        assert list(gm(x).shape) == list(twin(x).shape), (name, values)
        bound = {t: values.get(s, s) for t, s in zip(their_symbols, symbols)
                 if not t.isdigit()}
        assert evaluate(ours, values) == evaluate(their_sizes, bound) == \
            list(twin(x).shape), (ours, their_sizes, values)


INT64_MAX = 9223372036854775807
aten = torch.ops.aten
# Python indexing and the ATen calls Tensor.__getitem__ makes for it.
DECOMPOSED = {
    "none": (lambda x: x[None], lambda x: aten.unsqueeze(x, 0)),
    "ellipsis_none": (lambda x: x[..., None], lambda x: aten.unsqueeze(x, 3)),
    "slice": (lambda x: x[:, 1:], lambda x: aten.slice(
        aten.slice(x, 0, 0, INT64_MAX), 1, 1, INT64_MAX)),
    "step": (lambda x: x[::2], lambda x: aten.slice(x, 0, 0, INT64_MAX, 2)),
    "mixed": (lambda x: x[1:, None, ..., 2:-1], lambda x: aten.slice(
        aten.unsqueeze(aten.slice(x, 0, 1, INT64_MAX), 1), 3, 2, -1)),
    "clamped": (lambda x: x[-2:, :, 3:100], lambda x: aten.slice(aten.slice(
        aten.slice(x, 0, -2, INT64_MAX), 1, 0, INT64_MAX), 2, 3, 100)),
    "symbolic_stop": (lambda x: x[:, : x.size(1) // 2], lambda x: aten.slice(
        aten.slice(x, 0, 0, INT64_MAX), 1, 0, x.size(1) // 2)),
    "symbolic_start": (lambda x: x[:, x.size(1) - 3:], lambda x: aten.slice(
        aten.slice(x, 0, 0, INT64_MAX), 1, x.size(1) - 3, INT64_MAX)),
}


@pytest.mark.parametrize("form", sorted(DECOMPOSED))
def test_indexing_sizes_are_make_fx_s(form):
    index, twin = DECOMPOSED[form]

    class Module(nn.Module):
        def forward(self, x):
            return index(x)

    check_against_make_fx(
        symbolic_trace(Module()), twin, {"x": "BxCxH"}, ["B", "C", "H"],
        [{"B": 4, "C": 6, "H": 8}, {"B": 3, "C": 9, "H": 5},
         {"B": 7, "C": 5, "H": 11}])


class Upsample(nn.Module):
    def forward(self, x):
        y = F.interpolate(x, size=(x.shape[2] * 2, x.shape[3] * 2))
        z = F.interpolate(x, size=x.shape[3] + 1, mode="bilinear",
                          align_corners=False)
        p = F.adaptive_avg_pool2d(x, (x.size(2) // 2, None))
        # A slice of x.shape: a tuple of symbolic ints.
        q = F.interpolate(p, size=x.shape[-2:], mode="bilinear",
                          align_corners=False)
        return y, z, q, x.new_zeros(x.size(0), 4), x.view(x.size(0), -1)


def test_symbolic_ints_reach_captured_calls():
    gm = symbolic_trace(Upsample())
    sdk = fx_sdk.from_torch_fx(gm)
    hints = {"B": 2, "H": 6, "W": 9}
    guards = fx_sdk.symbolic_shape_prop(sdk, shapes={"x": "Bx3xHxW"},
                                        hints=hints)
    all_values = [hints, {"B": 3, "H": 5, "W": 4}, {"B": 5, "H": 12, "W": 7}]
    symbolic = all_sizes_are_eagers(
        gm, sdk, lambda v: (torch.randn(v["B"], 3, v["H"], v["W"]),),
        all_values)
    captured = [n.name for n in sdk.graph.nodes
                if n.target in (F.interpolate, F.adaptive_avg_pool2d)]
    assert len(captured) == 4 and set(captured) <= symbolic
    guards_hold(guards, all_values)


class Flat(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class Reshape(nn.Module):
    def forward(self, x, n):
        return x.reshape(n, -1)


class WithLeaves(nn.Module):
    def __init__(self):
        super().__init__()
        self.flat = Flat()
        self.reshape = Reshape()

    def forward(self, x):
        return self.reshape(self.flat(x) * 2, x.size(0) * 2)


class LeafTracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, (Flat, Reshape)) or \
            super().is_leaf_module(m, qualname)


def test_leaf_modules_take_symbolic_ints():
    """call_module nodes whose modules size their results from their
    inputs' sizes (x.view(x.size(0), -1)) and from a symbolic int argument
    (x.reshape(n, -1) with n = 2*B) are captured with symbolic sizes; torch
    1.13's make_fx traces the same computation to the same sizes (where its
    guards hold: H even)."""
    root = WithLeaves()
    gm = torch.fx.GraphModule(root, LeafTracer().trace(root))
    calls = [n.op for n in gm.graph.nodes].count("call_module")
    assert calls == 2
    check_against_make_fx(
        gm, lambda x: (x.view(x.size(0), -1) * 2).reshape(x.size(0) * 2, -1),
        {"x": "Bx3xHxW"}, ["B", 3, "H", "W"],
        [{"B": 2, "H": 6, "W": 9}, {"B": 3, "H": 4, "W": 5},
         {"B": 5, "H": 10, "W": 7}])


class Strided(nn.Module):
    def forward(self, x, n):
        return x.as_strided((n, 2), (1, 1))


class Rolled(nn.Module):
    def forward(self, x, n):
        return torch.roll(x, n, 1)


class TakesSymInt(nn.Module):
    def __init__(self, leaf):
        super().__init__()
        self.leaf = leaf

    def forward(self, x):
        return self.leaf(x, x.size(1) // 2)


@pytest.mark.parametrize("leaf, message", [
    # The capture names the operator without a shape rule.
    (Strided(), "node 'leaf'.*aten::as_strided.*no symbolic shape rule"),
    # torch 1.13's own bindings refuse a SymInt where an int[] goes.
    (Rolled(), "node 'leaf'.*roll.*SymIntNode"),
])
def test_a_call_that_cannot_take_a_symbolic_int_is_named(leaf, message):
    class Tracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return m is leaf or super().is_leaf_module(m, qualname)

    root = TakesSymInt(leaf)
    sdk = fx_sdk.from_torch_fx(
        torch.fx.GraphModule(root, Tracer().trace(root)))
    with pytest.raises(ValueError, match=message):
        fx_sdk.symbolic_shape_prop(sdk, shapes={"x": "BxN"},
                                   hints={"B": 3, "N": 8})
