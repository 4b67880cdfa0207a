#!/usr/bin/python3
"""The CodeGen docs' ListCodeGen in Python torch.fx (torch 1.13's
test_fx.py test_custom_codegen), on f(a, b) = relu(a) + b * 2:

    golden.py OUT_DIR

writes OUT_DIR/code.py (gm.code with ListCodeGen), OUT_DIR/input.pt (the
list [a, b]) and OUT_DIR/output.pt (gm([a, b]))."""

import os
import sys
import typing
from typing import List

import torch
from torch.fx import symbolic_trace
from torch.fx.graph import CodeGen


class ListCodeGen(CodeGen):
    def gen_fn_def(self, free_vars, maybe_return_annotation):
        lst_unpack = f"""
def forward(self, args_list: List[torch.Tensor]){maybe_return_annotation}:
    {', '.join(free_vars)} = args_list"""
        return lst_unpack

    def additional_globals(self):
        return [('List', typing.List)]

    def process_inputs(self, *inputs):
        assert len(inputs) == 1
        return inputs[0]


def f(a, b):
    return torch.relu(a) + b * 2


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    gm = symbolic_trace(f)
    gm.graph.set_codegen(ListCodeGen())
    gm.recompile()
    torch.manual_seed(0)
    vals = [torch.randn(3), torch.randn(3)]
    with open(os.path.join(out, "code.py"), "w") as fh:
        fh.write(gm.code)
    torch.save(vals, os.path.join(out, "input.pt"))
    torch.save(gm(vals), os.path.join(out, "output.pt"))


if __name__ == "__main__":
    main()
