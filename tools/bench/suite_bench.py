#!/usr/bin/python3
"""Python torch.fx's side of the unified benchmark suite (run_all.sh).

    suite_bench.py DIR [--sizes 1000,10000] [--repeat N] [--threads 1,2]
                       [--models resnet50,...] [--skip-ir] [--skip-forward]
                       [--skip-models]

IR: the chain tools/bench/suite_benchmark.cc traces (N nodes cycling
x + 1.0, x * w / x * y, x.relu(), torch.relu(x), x.clamp(min=-1.0)), traced
with torch.fx.Tracer; copy (copy.deepcopy of the graph), print (str), codegen
(python_code), lint, the same edit storm, and the live bytes per node of the
traced graph (tracemalloc). Median wall time (time.perf_counter, as the C++
side).

Forward, under torch.no_grad(), at each thread count of --threads (default
1 and every available CPU; torch.set_num_threads, and OpenBLAS's own pool
through openblas_set_num_threads when it is the BLAS):
 - "forward": the 1k-op chain (torch.relu, + w, * w on a 4x16 tensor): eager,
   torch.fx's GraphModule and torch.fx's Interpreter. Writes DIR/chain as an
   fx-graph bundle (tools/torchfx_export.py) plus script.pt (torch.jit.script
   of the GraphModule) for the C++ side.
 - "models": resnet50, mobilenet_v3_large, efficientnet_b0 (torchvision,
   random init with seed 0) at 1x3x224x224 and SmallTransformer below (128
   tokens), batch 1: Python eager. Writes DIR/NAME as a bundle plus
   script_frozen.pt: torch.jit.freeze(torch.jit.script(model)), which the C++
   side loads and puts through torch::jit::optimize_for_inference (the pass
   torch.jit.optimize_for_inference runs; the oneDNN module it makes cannot
   be saved and loaded again in torch 1.13).
   Each model's floating-point operations per forward are counted once by
   PyTorch's own profiler (torch.profiler.profile(with_flops=True): the sum
   over conv2d, addmm, mm, bmm, ... of its per-op formulas), so achieved
   GFLOP/s = flops / median time for every engine.
 - "onnxruntime" (--ort NODE_PATH): each model exported with torch.onnx.export
   (opset 13) from the same weights and run by ONNX Runtime's CPU provider
   (onnxruntime-node, tools/bench/ort_engine.py) at the same thread counts
   (intra-op threads, sequential execution, optimisation level "all") on the
   same input; its output is checked against eager's (rtol 1e-3, atol 1e-4)
   before it is timed, as eager is.
 - "peak_gflops": the machine's achievable peak at each thread count,
   measured rather than derived from a data sheet: the best of 5 single-
   precision 2048x2048 matrix products (torch.mm through the BLAS) in GFLOP/s.
   A dense sgemm that size runs the FMA units at their limit, so it is the
   roof a convolution or linear layer can reach on this machine.

Prints one JSON object: {"ir": {N: {...}}, "forward": {THREADS: {name: {...}}},
"models": {THREADS: {name: {...}}}, "peak_gflops": {THREADS: GFLOP/s},
"threads": [...], "blas": PATH}.
"""
import argparse
import copy
import ctypes
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


class TransformerBlock(torch.nn.Module):
    """Pre-norm encoder block, attention written out (traceable by torch.fx,
    scriptable; the C++ hand-written twin is in suite_benchmark.cc)."""

    def __init__(self, dim, heads, ff):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = float(self.head_dim) ** -0.5
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, ff)
        self.fc2 = torch.nn.Linear(ff, dim)

    def forward(self, x):
        b = x.size(0)
        t = x.size(1)
        qkv = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, self.head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        q = qkv[0]
        k = qkv[1]
        v = qkv[2]
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.proj(y)
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))
        return x


class SmallTransformer(torch.nn.Module):
    """A small BERT-style encoder: 4 blocks, width 256, 4 heads, MLP 1024,
    vocabulary 1000, 128 positions; logits for every token."""

    def __init__(self, vocab=1000, dim=256, heads=4, ff=1024, layers=4, context=128):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(context, dim) * 0.02)
        self.blocks = torch.nn.ModuleList(TransformerBlock(dim, heads, ff) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def set_threads(n):
    """torch's intra-op threads and, when the BLAS is OpenBLAS, its own
    pool (the pthread build ignores torch.set_num_threads)."""
    torch.set_num_threads(n)
    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_set_num_threads(ctypes.c_int(n))
            return
        except (OSError, AttributeError):
            pass


def blas_library():
    """The libblas.so.3 this process loaded, symbolic links resolved."""
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "libblas" in path or "openblas" in path:
                return os.path.realpath(path)
    return "unknown"


def edit_storm(g):
    """After every third node (output excepted) insert torch.neg(node), point
    node's other users at it, then undo: uses back to node, erase neg. The
    edit the C++ benchmarks time too (suite_benchmark.cc, ir_benchmark.cc);
    torchfx_ir_bench.py times this one."""
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


def forward(dir_, repeat, threads, log):
    torch.manual_seed(0)
    out = {str(t): {} for t in threads}
    model = SmallChain().eval()
    with torch.no_grad():
        gm = torch.fx.symbolic_trace(model)
        x = torch.randn(4, 16)
        bundle = os.path.join(dir_, "chain")
        torchfx_export.export(gm, [x], bundle)
        torch.jit.script(gm).save(os.path.join(bundle, "script.pt"))
        interp = torch.fx.Interpreter(gm)
        reps = repeat * 10
        for t in threads:
            set_threads(t)
            rounds = {"eager_us": [], "torchfx_graph_module_us": [], "torchfx_interpreter_us": []}
            for _ in range(5):
                rounds["eager_us"].append(median_us(lambda _: model(x), reps, collect=False))
                rounds["torchfx_graph_module_us"].append(median_us(lambda _: gm(x), reps, collect=False))
                rounds["torchfx_interpreter_us"].append(
                    median_us(lambda _: interp.run(x), reps, collect=False))
            row = {k: statistics.median(v) for k, v in rounds.items()}
            row["nodes"] = len(gm.graph.nodes)
            row["threads"] = t
            out[str(t)]["chain_1k"] = row
        log("torch.fx forward chain_1k done")
    return out


MODELS = ("resnet50", "mobilenet_v3_large", "efficientnet_b0", "transformer")


def make_model(name):
    import torchvision.models

    torch.manual_seed(0)
    if name == "transformer":
        return SmallTransformer().eval(), torch.randint(0, 1000, (1, 128))
    return getattr(torchvision.models, name)().eval(), torch.randn(1, 3, 224, 224)


def count_flops(model, x):
    """Floating-point operations of one forward, as PyTorch's profiler counts
    them (with_flops=True)."""
    with torch.no_grad(), torch.profiler.profile(with_flops=True) as prof:
        model(x)
    return sum(event.flops for event in prof.key_averages())


def peak_gflops(threads, n=2048):
    """The best of 5 n x n single-precision matrix products, in GFLOP/s, at
    each thread count: the achievable floating-point peak (see the docstring)."""
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
    out = {}
    for t in threads:
        set_threads(t)
        torch.mm(a, b, out=c)  # warm-up: the BLAS's threads and buffers
        best = min(timed(lambda: torch.mm(a, b, out=c)) for _ in range(5))
        out[str(t)] = 2.0 * n ** 3 / best / 1e9
    return out


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def ort_rows(model, x, bundle, threads, reps, node_path, out, name):
    """ONNX Runtime on the model exported from the same weights, at every
    thread count: its output checked against eager's on the same input, then
    timed as eager is (median of 5 medians of `reps` runs, on that input)."""
    from ort_engine import OrtEngine, export_onnx

    path = os.path.join(bundle, "model.onnx")
    export_onnx(model, x, path)
    with torch.no_grad():
        want = model(x).flatten()
    for t in threads:
        engine = OrtEngine(path, t, node_path)
        try:
            got = engine.output(x)
            if got.numel() != want.numel():
                raise RuntimeError(f"ONNX Runtime's {name} gives {got.numel()} "
                                   f"values, eager {want.numel()}")
            diff = (got - want).abs().max().item()
            if not torch.allclose(got, want, rtol=1e-3, atol=1e-4):
                raise RuntimeError(f"ONNX Runtime's {name} differs from eager "
                                   f"by up to {diff:.3g}")
            times = [statistics.median(engine.timed_on(x) for _ in range(reps))
                     for _ in range(5)]
        finally:
            engine.close()
        row = out[str(t)][name]
        row["ort_us"] = statistics.median(times) * 1e3
        row["ort_max_abs_diff"] = diff


def models(dir_, names, repeat, threads, log, ort=None):
    """Exports every model (bundle, frozen TorchScript) and times Python eager
    at every thread count; with `ort` (NODE_PATH of onnxruntime-node), ONNX
    Runtime too (ort_rows)."""
    out = {str(t): {} for t in threads}
    for name in names:
        model, x = make_model(name)
        bundle = os.path.join(dir_, name)
        with torch.no_grad():
            gm = torch.fx.symbolic_trace(model)
            torchfx_export.export(gm, [x], bundle)
            frozen = torch.jit.freeze(torch.jit.script(model))
            frozen.save(os.path.join(bundle, "script_frozen.pt"))
            flops = count_flops(model, x)
            reps = max(3, repeat // 4)
            for t in threads:
                set_threads(t)
                times = [median_us(lambda _: model(x), reps, collect=False) for _ in range(5)]
                out[str(t)][name] = {"eager_us": statistics.median(times), "threads": t,
                                     "nodes": len(gm.graph.nodes), "flops": flops}
        if ort:
            set_threads(1)  # ONNX Runtime's threads run in its own process
            ort_rows(model, x, bundle, threads, reps, ort, out, name)
        log(f"python models {name} done")
    return out


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--skip-ir", action="store_true")
    parser.add_argument("--skip-forward", action="store_true")
    parser.add_argument("--skip-models", action="store_true")
    parser.add_argument("--threads", default="",
                        help="thread counts, e.g. 1,2 (default: 1 and every available CPU)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--ort", default="",
                        help="NODE_PATH with onnxruntime-node (tools/bench/"
                        "setup_onnxruntime.sh prints it): ONNX Runtime's column")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    threads = [int(t) for t in args.threads.split(",") if t] or sorted({1, cores})

    def log(line):
        print(line, file=sys.stderr, flush=True)

    result = {"ir": {}, "forward": {}, "models": {}, "threads": threads, "blas": blas_library()}
    if args.ort:
        from ort_engine import version
        result["onnxruntime"] = version(args.ort)
    if not args.skip_forward:
        result["forward"] = forward(args.dir, args.repeat, threads, log)
    if not args.skip_models:
        names = [n for n in args.models.split(",") if n]
        result["models"] = models(args.dir, names, args.repeat, threads, log, args.ort)
        result["peak_gflops"] = peak_gflops(threads)
    if not args.skip_ir:
        set_threads(1)  # graph operations are single-threaded code
        result["ir"] = ir([int(s) for s in args.sizes.split(",") if s], log)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
