#!/usr/bin/python3
"""torch.fx's ShapeProp on a bundle, as JSON: the golden for shape_prop.

    shape_prop_golden.py TORCHFX_IMPORT_PY BUNDLE_DIR OUT.json

Rebuilds the bundle as a torch.fx GraphModule (tools/torchfx_import.py), runs
torch.fx.passes.shape_prop.ShapeProp on DIR/input.pt as torch.fx runs it (grad
mode on: values computed from parameters require grad), and writes, per node
name,
{"type": qualified type name, "tensor_meta": TensorMetadata or a list of
them (null for non-tensors), absent when ShapeProp recorded none}.
"""

import importlib.util
import json
import os
import sys

import torch
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata


def type_name(t):
    if t is None:
        return None
    if t.__module__ == "builtins":
        return t.__name__
    if t is torch.Tensor or t is torch.nn.Parameter:
        return "torch.Tensor"
    if t is torch.Size:
        return "torch.Size"
    return t.__module__ + "." + t.__qualname__


def encode(m):
    if isinstance(m, TensorMetadata):
        return {
            "shape": list(m.shape),
            "dtype": str(m.dtype),
            "requires_grad": m.requires_grad,
            "stride": list(m.stride),
            "memory_format": str(m.memory_format) if m.memory_format else None,
            "is_quantized": m.is_quantized,
        }
    if isinstance(m, (tuple, list)):
        return [encode(x) for x in m]
    return None


def main():
    spec = importlib.util.spec_from_file_location("torchfx_import", sys.argv[1])
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    gm = importer.load_bundle(sys.argv[2])
    gm.eval()
    inputs = torch.load(os.path.join(sys.argv[2], "input.pt"))
    ShapeProp(gm).propagate(*inputs)
    out = {}
    for n in gm.graph.nodes:
        entry = {"type": type_name(n.meta.get("type"))}
        if "tensor_meta" in n.meta:
            entry["tensor_meta"] = encode(n.meta["tensor_meta"])
        out[n.name] = entry
    with open(sys.argv[3], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
