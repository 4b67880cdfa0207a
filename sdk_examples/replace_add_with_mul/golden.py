#!/usr/bin/python3
"""The torch.fx docs' transform in Python torch.fx, on a bundle:

    golden.py TORCHFX_IMPORT_PY BUNDLE_DIR OUT_DIR

writes OUT_DIR/code.py (gm.code after the transform) and OUT_DIR/output.pt
(the transformed module on BUNDLE_DIR/input.pt)."""

import importlib.util
import operator
import os
import sys

import torch


def transform(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == torch.add:
            node.target = torch.mul
        if node.op == "call_function" and node.target == operator.add:
            node.target = operator.mul
    gm.recompile()
    return gm


def main():
    spec = importlib.util.spec_from_file_location("torchfx_import", sys.argv[1])
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    gm = transform(importer.load_bundle(sys.argv[2]))
    os.makedirs(sys.argv[3], exist_ok=True)
    with open(os.path.join(sys.argv[3], "code.py"), "w") as f:
        f.write(gm.code)
    with torch.no_grad():
        out = gm(*torch.load(os.path.join(sys.argv[2], "input.pt")))
    torch.save(out, os.path.join(sys.argv[3], "output.pt"))


if __name__ == "__main__":
    main()
