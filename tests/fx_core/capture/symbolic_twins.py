#!/usr/bin/python3
"""Python twins of symbolic_make_fx_test.cc's C++ functions, captured by
make_fx(tracing_mode="symbolic").

    symbolic_twins.py OUT_DIR

writes OUT_DIR/CASE.MODE/graph.txt (print(gm.graph), num_users form) and
code.py (gm.code) for MODE in no_grad, inference_mode, grad.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx


def view_computed(arg0):
    return [arg0.view(arg0.shape[0] * 2, -1)]


def cat(arg0, arg1):
    return [torch.cat([arg0, arg1], 0)]


def heads(arg0):
    b, s, d = arg0.shape[0], arg0.shape[1], arg0.shape[2]
    h = arg0.view(b, s, 4, d // 4).transpose(1, 2)
    return [h.transpose(1, 2).reshape(b, s, d)]


def heads_again(arg0, arg1):
    x = arg0
    for _ in range(3):
        b, s, d = x.shape[0], x.shape[1], x.shape[2]
        h = x.view(b, s, 4, d // 4).transpose(1, 2)
        x = h.transpose(1, 2).reshape(b, s, d) + arg1
    return [x.flatten(1), x.flatten(1), x.reshape(b, -1)]


def arange_of(arg0):
    return [torch.arange(arg0.shape[0])]


def expand_to(arg0, arg1):
    return [arg0.expand(arg1.shape)]


def new_zeros(arg0):
    return [arg0.new_zeros(arg0.shape[0] * 2, arg0.shape[1] // 2)]


def linear(arg0, arg1, arg2):
    return [F.linear(arg0, arg1, arg2)]


def view_relu(arg0):
    return [arg0.view(arg0.shape[0] * 2, -1).relu()]


# relu decomposed as the C++ test's decomposition does it.
RELU_AS_CLAMP = {torch.ops.aten.relu.default: lambda x: torch.clamp_min(x, 0)}

CASES = {
    "view_computed": (view_computed, [(3, 4)]),
    "cat": (cat, [(3, 4), (5, 4)]),
    "heads": (heads, [(2, 5, 8)]),
    "heads_again": (heads_again, [(2, 5, 8), (2, 5, 8)]),
    "arange_of": (arange_of, [(5,)]),
    "expand_to": (expand_to, [(1, 4), (3, 4)]),
    "new_zeros": (new_zeros, [(3, 4)]),
    "linear": (linear, [(2, 5, 4), (3, 4), (3,)]),
    "view_relu_decomposed": (view_relu, [(3, 4)], RELU_AS_CLAMP),
}


def main(out_dir):
    for name, (fn, shapes, *table) in CASES.items():
        table = table[0] if table else None
        for mode, guard in (("grad", torch.enable_grad),
                            ("no_grad", torch.no_grad),
                            ("inference_mode", torch.inference_mode)):
            case_dir = os.path.join(out_dir, name + "." + mode)
            os.makedirs(case_dir, exist_ok=True)
            try:
                with guard():
                    gm = make_fx(fn, decomposition_table=table,
                                 tracing_mode="symbolic")(
                        *[torch.randn(s) for s in shapes])
            except Exception as e:  # recorded: the C++ test says why
                with open(os.path.join(case_dir, "error.txt"), "w") as f:
                    f.write(repr(e))
                continue
            with open(os.path.join(case_dir, "graph.txt"), "w") as f:
                f.write(str(gm.graph).replace("[#users=", "[num_users=") + "\n")
            with open(os.path.join(case_dir, "code.py"), "w") as f:
                f.write(gm.code)


if __name__ == "__main__":
    main(sys.argv[1])
