#!/usr/bin/python3
"""Python torch.fx's side of the unified benchmark suite (run_all.sh).

    suite_bench.py DIR [--sizes 1000,10000] [--repeat N] [--skip-ir]
                       [--skip-forward]

IR: the chain tools/bench/suite_benchmark.cc traces (N nodes cycling
x + 1.0, x * w / x * y, x.relu(), torch.relu(x), x.clamp(min=-1.0)), traced
with torch.fx.Tracer; copy (copy.deepcopy of the graph), print (str), codegen
(python_code), lint, the same edit storm, and the live bytes per node of the
traced graph (tracemalloc). Median wall time (time.perf_counter, as the C++
side).

Forward, under torch.no_grad(): the 1k-op chain (torch.relu, + w, * w on a
4x16 tensor) and torchvision's resnet50 at batch 1: eager, torch.fx's
GraphModule and torch.fx's Interpreter. Writes DIR/chain and DIR/resnet50 as
fx-graph bundles (tools/torchfx_export.py) plus script.pt (torch.jit.script
of the GraphModule) for the C++ side.

Prints one JSON object: {"ir": {N: {...}}, "forward": {name: {...}}}.
"""
import argparse
import copy
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc

import torch
import torch.fx

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torchfx_export  # noqa: E402


class Chain(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.weight = torch.nn.Parameter(torch.rand(4))

    def forward(self, x, y):
        for i in range(self.n):
            k = i % 5
            if k == 0:
                x = x + 1.0
            elif k == 1:
                x = x * (self.weight if i % 4 == 1 else y)
            elif k == 2:
                x = x.relu()
            elif k == 3:
                x = torch.relu(x)
            else:
                x = x.clamp(min=-1.0)
        return x


class SmallChain(torch.nn.Module):
    def __init__(self, ops=1000):
        super().__init__()
        self.ops = ops
        self.w = torch.nn.Parameter(torch.rand(16))

    def forward(self, x):
        for i in range(self.ops):
            k = i % 3
            if k == 0:
                x = torch.relu(x)
            elif k == 1:
                x = x + self.w
            else:
                x = x * self.w
        return x


def edit_storm(g):
    nodes = list(g.nodes)
    for node in nodes[::3]:
        if node.op == "output":
            continue
        with g.inserting_after(node):
            neg = g.call_function(torch.neg, (node,))
        node.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
        neg.replace_all_uses_with(node)
        g.erase_node(neg)


def median_us(fn, repeat, setup=None, collect=True):
    state = setup() if setup else None
    fn(state)
    times = []
    for _ in range(repeat):
        state = setup() if setup else None
        if collect:  # IR cases: no garbage from the last repetition
            gc.collect()
        start = time.perf_counter()
        fn(state)
        times.append(time.perf_counter() - start)
        del state
    return statistics.median(times) * 1e6


def ir(sizes, log):
    out = {}
    for n in sizes:
        repeat = 11 if n <= 1000 else 3 if n <= 10000 else 1
        m = Chain(n - 4)
        g = torch.fx.Tracer().trace(m)
        nodes = len(g.nodes)
        row = {"nodes": nodes}
        row["trace_us"] = median_us(lambda _: torch.fx.Tracer().trace(m), repeat)
        row["copy_us"] = median_us(lambda _: copy.deepcopy(g), repeat)
        row["print_us"] = median_us(lambda _: str(g), repeat)
        row["codegen_us"] = median_us(lambda _: g.python_code("self"), repeat)
        row["lint_us"] = median_us(lambda _: g.lint(), repeat)
        row["edit_us"] = median_us(edit_storm, repeat, setup=lambda: copy.deepcopy(g))
        if n <= 10000:
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            g2 = torch.fx.Tracer().trace(m)
            gc.collect()
            after = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            row["bytes_per_node"] = (after - before) / len(g2.nodes)
            del g2
        out[str(n)] = row
        log(f"torch.fx ir {n} done")
    return out


def forward(dir_, repeat, log):
    import torchvision.models

    torch.manual_seed(0)
    out = {}
    models = {
        "chain_1k": (SmallChain().eval(), [4, 16], repeat * 10),
        "resnet50": (torchvision.models.resnet50().eval(), [1, 3, 224, 224], max(3, repeat // 4)),
    }
    with torch.no_grad():
        for name, (model, shape, reps) in models.items():
            gm = torch.fx.symbolic_trace(model)
            x = torch.randn(*shape)
            bundle = os.path.join(dir_, "chain" if name == "chain_1k" else name)
            torchfx_export.export(gm, [x], bundle)
            torch.jit.script(gm).save(os.path.join(bundle, "script.pt"))
            interp = torch.fx.Interpreter(gm)
            rounds = {"eager_us": [], "torchfx_graph_module_us": [], "torchfx_interpreter_us": []}
            for _ in range(5):
                rounds["eager_us"].append(median_us(lambda _: model(x), reps, collect=False))
                rounds["torchfx_graph_module_us"].append(median_us(lambda _: gm(x), reps, collect=False))
                rounds["torchfx_interpreter_us"].append(
                    median_us(lambda _: interp.run(x), reps, collect=False))
            row = {k: statistics.median(v) for k, v in rounds.items()}
            row["nodes"] = len(gm.graph.nodes)
            out[name] = row
            log(f"torch.fx forward {name} done")
    return out


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--skip-ir", action="store_true")
    parser.add_argument("--skip-forward", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(torch.get_num_threads())

    def log(line):
        print(line, file=sys.stderr, flush=True)

    result = {"ir": {}, "forward": {}}
    if not args.skip_forward:
        result["forward"] = forward(args.dir, args.repeat, log)
    if not args.skip_ir:
        result["ir"] = ir([int(s) for s in args.sizes.split(",") if s], log)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
