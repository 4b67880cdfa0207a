#!/usr/bin/python3
"""Python twins of capture_vendor_test.cc's functions, captured by make_fx
with the decomposition the capture_vendor plugin registers, written as a
Python decomposition_table entry with torch.ops.aten:

    capture_vendor_twins.py OUT_DIR

writes OUT_DIR/CASE.MODE/graph.txt (print(gm.graph), num_users form) and
OUT_DIR/CASE.MODE/code.py (gm.code) for MODE in grad, no_grad,
inference_mode.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

aten = torch.ops.aten


def silu(self):
    """The plugin's replacement of aten::silu."""
    return aten.mul.Tensor(self, aten.sigmoid.default(self))


TABLE = {aten.silu.default: silu}
LINEAR = torch.nn.Linear(4, 8)


def linear_silu(arg0):
    y = F.linear(arg0, LINEAR.weight, LINEAR.bias)
    a = F.silu(y)
    s = F.silu(arg0)
    return [a, torch.add(s, arg0)]


CASES = {"linear_silu": (linear_silu, lambda: [torch.randn(2, 4)])}


def main(out_dir):
    for name, (fn, inputs) in CASES.items():
        for mode, guard in (("grad", torch.enable_grad),
                            ("no_grad", torch.no_grad),
                            ("inference_mode", torch.inference_mode)):
            with guard():
                gm = make_fx(fn, decomposition_table=TABLE)(*inputs())
            case_dir = os.path.join(out_dir, name + "." + mode)
            os.makedirs(case_dir, exist_ok=True)
            with open(os.path.join(case_dir, "graph.txt"), "w") as f:
                f.write(str(gm.graph).replace("[#users=", "[num_users=") + "\n")
            with open(os.path.join(case_dir, "code.py"), "w") as f:
                f.write(gm.code)


if __name__ == "__main__":
    main(sys.argv[1])
