"""fx_sdk.symbolic_shape_prop on module-level torch.fx.symbolic_trace graphs
(call_module nodes, torch.nn.functional / operator calls, Tensor methods):
nodes no ATen shape function covers are captured with make_fx's symbolic
mode from their inputs' symbolic sizes (fx_core/capture/node_capture.h).
Goldens: every node's symbolic sizes evaluated at other sizes must be the
sizes torch's own ShapeProp finds running the same modules eagerly there.
Run by fx_sdk_test.sh.
"""

import pytest
import sympy
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.fx import symbolic_trace
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
        # unbind, not qkv[0]: LibTorch 1.13's C++ tensor indexing asks for
        # concrete sizes, so a captured `qkv[0]` would specialise B and S.
        qkv = qkv.permute(2, 0, 3, 1, 4).unbind(0)
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
