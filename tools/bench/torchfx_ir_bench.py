#!/usr/bin/python3
"""torch.fx's side of the IR benchmark (tools/bench/ir_benchmark.cc).

Builds the same graph with torch.fx's Graph API and times the same operations:
build, copy (copy.deepcopy(graph)), print (str(graph)), codegen
(graph.python_code('self')), lint (graph.lint()) and edit (insert after every
third node, replace_all_uses_with, erase again), plus the live bytes per node
of a built graph (tracemalloc; up to --bytes-max-size nodes).

Run with Debian's interpreter, which has torch 1.13:
  /usr/bin/python3 tools/bench/torchfx_ir_bench.py            # a table
  /usr/bin/python3 tools/bench/torchfx_ir_bench.py --json     # JSON
  /usr/bin/python3 tools/bench/torchfx_ir_bench.py --sizes 1000,10000,100000
  /usr/bin/python3 tools/bench/torchfx_ir_bench.py --dump-code 1000

Each operation is repeated until it has run --min-time seconds (at least
--min-reps times, at most --max-reps, and no more once --max-time seconds have
gone by); the figure is the median CPU time (time.process_time(): the
machine may be shared). The timed region is the operation alone:
building the input (a fresh graph for edit) and freeing the result happen
outside it. Python's cyclic GC stays enabled, as in normal use. The graph the
build case makes is the input of the others; edit, last, gets it first and
fresh graphs after.
"""

import argparse
import copy
import gc
import json
import operator
import os
import platform
import statistics
import sys
import time
import tracemalloc

import torch
import torch.fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite_bench import edit_storm  # noqa: E402  (the same edit)

OPERATIONS = ("build", "copy", "print", "codegen", "lint", "edit")
# 100k is opt-in (--sizes 1000,10000,100000): torch 1.13 names nodes by a
# linear probe (add, add_1, ... add_k), so building and editing take minutes.
DEFAULT_SIZES = (1000, 10000)
FIXED_NODES = 6  # x, y, weight, bias, add(x, y) ... output
BLOCK_NODES = 11


def build_graph(n):
    """The graph of ir_benchmark.cc's build_graph(): exactly n nodes."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    weight = g.get_attr("weight")
    bias = g.get_attr("bias")
    prev = g.call_function(operator.add, (x, y))
    remaining = n - FIXED_NODES
    block = 0
    while remaining >= BLOCK_NODES:
        add = g.call_function(operator.add, (prev, 1.0))
        mul = g.call_function(operator.mul, (add, weight))
        add_1 = g.call_function(operator.add, (mul, bias))
        relu = g.call_function(torch.relu, (add_1,))
        view = g.call_method("view", (relu, -1, 64))
        clamp = g.call_method("clamp", (view,), {"min": -6.0, "max": 6.0})
        linear = g.call_module(f"layers.{block}.linear", (clamp,))
        split = g.call_function(torch.split, (linear, 32), {"dim": 1})
        first = g.call_function(operator.getitem, (split, 0))
        second = g.call_function(operator.getitem, (split, 1))
        prev = g.call_function(operator.mul, (first, second))
        remaining -= BLOCK_NODES
        block += 1
    for _ in range(remaining):
        prev = g.call_function(operator.add, (prev, 1.0))
    g.output(prev)
    return g


def node_count(g):
    return sum(1 for _ in g.nodes)


def measure(op, setup, min_time, min_reps, max_reps, max_time):
    """Median CPU seconds of op(setup()) over the repetitions (at least min_reps
    and min_time seconds, unless max_time seconds have gone by), the number of
    repetitions, and the last result."""
    times = []
    total = 0.0
    result = None
    while len(times) < max_reps and (len(times) < min_reps or total < min_time):
        if times and total >= max_time:
            break
        result = None
        state = setup()
        gc.collect()
        start = time.process_time()
        result = op(state)
        elapsed = time.process_time() - start
        del state
        times.append(elapsed)
        total += elapsed
    return statistics.median(times), len(times), result


def graph_bytes_per_node(n):
    """Live bytes (tracemalloc) a freshly built n-node graph holds, per node."""
    build_graph(FIXED_NODES + BLOCK_NODES)  # warm caches (regexes, interned names)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        g = build_graph(n)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert node_count(g) == n
    return (after - before) / n


def run(sizes, min_time, min_reps, max_reps, max_time, bytes_max_size, log):
    results = {op: {} for op in OPERATIONS}
    reps = {op: {} for op in OPERATIONS}
    bytes_per_node = {}
    for n in sizes:
        g = None  # the graph the build case made, input of the others
        # edit's first input is that graph (left as built: the cases before
        # edit only read it), later ones are built afresh.
        unedited = []

        def edit_input():
            return unedited.pop() if unedited else build_graph(n)

        cases = {
            "build": (build_graph, lambda: n),
            "copy": (copy.deepcopy, lambda: g),
            "print": (str, lambda: g),
            "codegen": (lambda graph: graph.python_code("self"), lambda: g),
            "lint": (lambda graph: graph.lint(), lambda: g),
            "edit": (edit_storm, edit_input),
        }
        for op in OPERATIONS:
            fn, setup = cases[op]
            seconds, count, result = measure(fn, setup, min_time, min_reps, max_reps, max_time)
            if op == "build":
                g = result
                assert node_count(g) == n, (node_count(g), n)
            elif op == "lint":
                unedited.append(g)
                g = None
            del result
            results[op][str(n)] = seconds
            reps[op][str(n)] = count
            log(f"  {op:8s} {n:>7d} nodes: {seconds * 1e3:10.3f} ms ({count} reps)")
        del unedited[:]
        gc.collect()
        if n <= bytes_max_size:
            bytes_per_node[str(n)] = graph_bytes_per_node(n)
            log(f"  bytes    {n:>7d} nodes: {bytes_per_node[str(n)]:10.1f} per node")
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "seconds": results,
        "reps": reps,
        "bytes_per_node": bytes_per_node,
    }


def print_table(data, sizes):
    header = ["operation"] + [f"{n} nodes" for n in sizes]
    rows = []
    for op in OPERATIONS:
        rows.append([op] + [f"{data['seconds'][op][str(n)] * 1e3:.3f} ms" for n in sizes])
    rows.append(
        ["bytes/node"]
        + [
            f"{data['bytes_per_node'][str(n)]:.0f}" if str(n) in data["bytes_per_node"] else "-"
            for n in sizes
        ]
    )
    widths = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]
    print(f"torch.fx {data['torch']} (Python {data['python']}), median CPU time per operation")
    for r in [header] + rows:
        print("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.add_argument(
        "--sizes",
        default=",".join(str(s) for s in DEFAULT_SIZES),
        help="comma-separated node counts (default %(default)s)",
    )
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per case")
    parser.add_argument("--min-reps", type=int, default=3)
    parser.add_argument("--max-reps", type=int, default=1000)
    parser.add_argument(
        "--max-time",
        type=float,
        default=10.0,
        help="stop repeating a case after this many seconds (min-reps notwithstanding)",
    )
    parser.add_argument(
        "--bytes-max-size",
        type=int,
        default=10000,
        help="measure bytes per node up to this size (building under "
        "tracemalloc takes torch 1.13 very long at 100k; default %(default)s)",
    )
    parser.add_argument("--dump-code", type=int, metavar="N", help="print python_code of the N-node graph")
    parser.add_argument("--dump-graph", type=int, metavar="N", help="print str() of the N-node graph")
    args = parser.parse_args()

    if args.dump_code is not None:
        sys.stdout.write(build_graph(args.dump_code).python_code("self").src)
        return
    if args.dump_graph is not None:
        sys.stdout.write(str(build_graph(args.dump_graph)) + "\n")
        return

    sizes = [int(s) for s in args.sizes.split(",") if s]
    if any(n < FIXED_NODES for n in sizes):
        parser.error(f"sizes must be at least {FIXED_NODES}")

    def log(line):
        print(line, file=sys.stderr, flush=True)

    data = run(
        sizes,
        args.min_time,
        args.min_reps,
        args.max_reps,
        args.max_time,
        args.bytes_max_size,
        log,
    )
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        print()
    else:
        print_table(data, sizes)


if __name__ == "__main__":
    main()
