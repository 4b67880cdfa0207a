"""torch 1.13's own make_fx on the two workloads of make_fx_benchmark.cc,
in each tracing mode: thread CPU time per recorded user op (best of
--repeat), and the graph's node count. The anchor for the C++ capture's
symbolic / real ratio (BENCHMARKS.md, "Symbolic capture against real mode").

  /usr/bin/python3 tools/bench/make_fx_python_bench.py [--ops 1000]
"""

import argparse
import time
import warnings

import torch
from torch.fx.experimental.proxy_tensor import make_fx


def chain(x, y, ops):
    """make_fx_benchmark.cc's chain: add and relu in turn."""
    for i in range(ops):
        x = x + y if i % 2 == 0 else torch.relu(x)
    return x


def heads(x, y, ops):
    """make_fx_benchmark.cc's heads: attention's reshape into heads and
    back, then an add; 5 recorded ops a round."""
    for _ in range(ops // 5):
        b, s, d = x.shape
        h = x.view(b, s, 4, d // 4).transpose(1, 2)
        x = h.transpose(1, 2).reshape(b, s, d) + y
    return x


WORKLOADS = {
    "add/relu": (chain, lambda: (torch.randn(4, 4), torch.randn(4, 4))),
    "view/transpose/reshape/add":
        (heads, lambda: (torch.randn(2, 6, 16), torch.randn(2, 6, 16))),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    for name, (fn, make_inputs) in WORKLOADS.items():
        inputs = make_inputs()
        per_op = {}
        for mode in ("real", "fake", "symbolic"):
            best, nodes = float("inf"), 0
            for _ in range(args.repeat):
                start = time.thread_time()
                gm = make_fx(lambda x, y: fn(x, y, args.ops),
                             tracing_mode=mode)(*inputs)
                best = min(best, time.thread_time() - start)
                nodes = len(gm.graph.nodes)
            per_op[mode] = best / args.ops * 1e6
            print(f"{name}: {mode} {per_op[mode]:.1f} us/op, {nodes} nodes",
                  flush=True)
        print(f"{name}: symbolic / real {per_op['symbolic'] / per_op['real']:.2f}x")


if __name__ == "__main__":
    main()
