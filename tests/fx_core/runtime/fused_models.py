"""Exports models holding child GraphModules, made by torch.fx itself, as
fx-graph bundles (the goldens of graph_module_children_test.cc).

    python3 fused_models.py TOOLS_DIR TRANSFORMER_PY OUT_DIR

writes OUT_DIR/NAME/{graph.fx.json, model.weights.pt, input.pt, expected.pt,
eager.pt, graph.txt, code.py, children.json} for
    resnet18_fused   CapabilityBasedPartitioner + fuse_by_partitions
    resnet18_nested  the same fused again (children inside children)
    transformer_split  split_module of a transformer into three submodules
expected.pt is the fused module's output, eager.pt the original model's.
"""

import importlib.util
import json
import os
import sys

import torch
import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupport
from torch.fx.passes.split_module import split_module
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions


class ConvReluAdd(OperatorSupport):
    """Conv2d, BatchNorm2d and ReLU modules, every call_function."""

    def is_node_supported(self, submodules, node):
        if node.op == "call_module":
            return isinstance(submodules[node.target], (
                torch.nn.Conv2d, torch.nn.BatchNorm2d, torch.nn.ReLU))
        return node.op == "call_function"


class Children(OperatorSupport):
    """Child GraphModules and max pooling: fusing them nests children."""

    def is_node_supported(self, submodules, node):
        return node.op == "call_module" and isinstance(
            submodules[node.target], (torch.fx.GraphModule, torch.nn.MaxPool2d))


def fused(gm, support):
    partitioner = CapabilityBasedPartitioner(
        gm, support, allows_single_node_partition=True)
    partitions = [list(p.nodes) for p in partitioner.propose_partitions()]
    return fuse_by_partitions(gm, partitions)


def main(tools, transformer_py, out):
    sys.path.insert(0, tools)
    import torchfx_export
    import torchvision.models

    def write(name, gm, eager, inputs):
        directory = os.path.join(out, name)
        torchfx_export.export(gm, inputs, directory, reference=True)
        with torch.no_grad():
            torch.save(eager(*inputs), os.path.join(directory, "eager.pt"))
        # Each child's gm.code, by path.
        with open(os.path.join(directory, "children.json"), "w") as f:
            json.dump({path: sub.code for path, sub in gm.named_modules()
                       if path and isinstance(sub, torch.fx.GraphModule)}, f)

    torch.manual_seed(0)
    resnet = torchvision.models.resnet18().eval()
    x = torch.rand(1, 3, 64, 64)
    gm = fused(torch.fx.symbolic_trace(resnet), ConvReluAdd())
    write("resnet18_fused", gm, resnet, [x])
    nested = fused(gm, Children())
    write("resnet18_nested", nested, resnet, [x])

    spec = importlib.util.spec_from_file_location("block", transformer_py)
    block = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(block)
    model = block.Transformer().eval()
    traced = torch.fx.symbolic_trace(model)
    order = {n: i for i, n in enumerate(traced.graph.nodes)}
    third = len(order) // 3 + 1
    split = split_module(traced, model, lambda n: order[n] // third)
    write("transformer_split", split, model, [torch.rand(2, 5, 16)])


if __name__ == "__main__":
    main(*sys.argv[1:4])
