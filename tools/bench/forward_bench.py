#!/usr/bin/python3
"""Python side of the forward benchmark: eager and torch.fx GraphModule.

    forward_bench.py DIR [--repeat N]

Exports two models as fx-graph bundles into DIR/<name> (for the C++ side,
tools/bench/forward_benchmark) and times, in this process, the eager model
and torch.fx's GraphModule on the same input under torch.no_grad():
  resnet50   torchvision's, batch 1, 3x224x224 (kernels dominate)
  small_ops  400 elementwise ops on a 4x16 tensor (per-op overhead dominates)
Prints one JSON object: {name: {"eager_us": .., "torchfx_us": .., "nodes": ..}}
(median microseconds per forward).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.fx
import torchvision.models

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torchfx_export  # noqa: E402


class SmallOps(torch.nn.Module):
    """A chain of small elementwise ops: 100 x (mul, add, relu, sub)."""

    def __init__(self, blocks=100):
        super().__init__()
        self.blocks = blocks
        self.scale = torch.nn.Parameter(torch.rand(16))

    def forward(self, x):
        for _ in range(self.blocks):
            x = torch.relu(x * self.scale + 0.1) - 0.05
        return x


def median_us(fn, repeat):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    models = {
        "resnet50": (torchvision.models.resnet50().eval(), [1, 3, 224, 224], 5),
        "small_ops": (SmallOps().eval(), [4, 16], 200),
    }
    results = {}
    with torch.no_grad():
        for name, (model, shape, scale) in models.items():
            gm = torch.fx.symbolic_trace(model)
            x = torch.rand(*shape)
            torchfx_export.export(gm, [x], os.path.join(args.dir, name))
            repeat = max(3, args.repeat * scale // 10)
            results[name] = {
                "nodes": len(gm.graph.nodes),
                "eager_us": median_us(lambda: model(x), repeat),
                "torchfx_us": median_us(lambda: gm(x), repeat),
            }
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
