"""shape_prop through fx_sdk against torch.fx's own ShapeProp on the same
graph (issue: silent wrong results): every node's meta['type'] is the class
ShapeProp records (torch.Tensor, int, torch.Size, torch.return_types.max,
tuple), not its name; tensor_meta's shape, dtype, stride and memory
format are ShapeProp's. Run by fx_sdk_test.sh.
"""

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

import fx_sdk


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = self.linear(x)
        m = torch.max(y, 1)  # unpacked by index: tracing a tuple unpack
        n = x.size(0)         # fails on Python 3.11 with torch 1.13
        return y.shape, m[0] * n, m[1], (y, n), m


def test_meta_type_and_tensor_meta_are_shape_props():
    gm = torch.fx.symbolic_trace(Mixed())
    x = torch.randn(2, 4)
    want = torch.fx.symbolic_trace(Mixed())
    want.load_state_dict(gm.state_dict())
    ShapeProp(want).propagate(x)
    out, report = fx_sdk.run_pipeline(gm, "shape_prop", example_inputs=[x])
    assert report[-1]["outcome"] == "ran", report
    got = {n.name: n for n in out.graph.nodes}
    for n in want.graph.nodes:
        if n.op == "output":
            continue
        g = got[n.name]
        assert g.meta.get("type") is n.meta.get("type"), n.name
        tm, gtm = n.meta.get("tensor_meta"), g.meta.get("tensor_meta")
        if not hasattr(tm, "shape"):
            continue
        assert tuple(gtm.shape) == tuple(tm.shape), n.name
        assert gtm.dtype == tm.dtype, n.name
        assert tuple(gtm.stride) == tuple(tm.stride), n.name
        assert gtm.memory_format == tm.memory_format, n.name
