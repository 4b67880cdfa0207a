#!/usr/bin/python3
"""Python torch.fx's side of the unified benchmark suite (run_all.sh).

    suite_bench.py DIR [--sizes 1000,10000] [--repeat N] [--threads 1,2]
                       [--models resnet50,...] [--batches 1,8] [--ort NODE_PATH]
                       [--skip-ir] [--skip-forward]
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
 - "models": MODELS below (torchvision's classification models, random init
   with seed 0, at Bx3x224x224; SmallTransformer on 128 tokens; Encoder on
   128 embeddings of 512), at every batch size of --batches (default 1 and
   8; DIR/NAME for batch 1, DIR/NAME@B otherwise): Python eager. A model
   that cannot be traced, exported or scripted gets {"error": ...} and is
   left out of DIR/models.txt, the C++ side's list. Writes DIR/NAME as a bundle plus
   script_frozen.pt: torch.jit.freeze(torch.jit.script(model)) (of
   torch.jit.trace where scripting fails), which the C++
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


class Encoder(torch.nn.Module):
    """A transformer encoder of issue 35's suite: d_model 512, 8 heads, MLP
    2048, 6 pre-norm blocks, on embeddings (batch, tokens, 512)."""

    def __init__(self, dim=512, heads=8, ff=2048, layers=6):
        super().__init__()
        self.blocks = torch.nn.Sequential(
            *[TransformerBlock(dim, heads, ff) for _ in range(layers)])

    def forward(self, x):
        return self.blocks(x)


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


# torchvision's classification models torch.fx traces, a small BERT-style
# model (tokens in) and a transformer encoder (embeddings in, 128 tokens).
MODELS = ("resnet50", "resnext50_32x4d", "mobilenet_v3_large", "efficientnet_b0",
          "regnet_y_400mf", "densenet121", "mnasnet1_0", "convnext_tiny", "swin_t",
          "vit_b_16", "transformer", "encoder")


def bundle_name(name, batch):
    """The model's bundle directory: NAME at batch 1, NAME@BATCH otherwise."""
    return name if batch == 1 else f"{name}@{batch}"


def make_model(name, batch=1):
    import torchvision.models

    torch.manual_seed(0)
    if name == "transformer":
        return SmallTransformer().eval(), torch.randint(0, 1000, (batch, 128))
    if name == "encoder":
        return Encoder().eval(), torch.randn(batch, 128, 512)
    return getattr(torchvision.models, name)().eval(), torch.randn(batch, 3, 224, 224)


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


def frozen_script(model, x):
    """torch.jit.freeze of the scripted model, or of the traced one when
    scripting fails (as a deployment engineer would fall back)."""
    try:
        return torch.jit.freeze(torch.jit.script(model))
    except Exception:  # noqa: BLE001 - any scripting failure: trace instead
        return torch.jit.freeze(torch.jit.trace(model, x, check_trace=False))


def one_model(dir_, name, model, x, repeat, threads, ort, out):
    """Exports one model (bundle, frozen TorchScript) into DIR/NAME and
    times it in Python eager (and ONNX Runtime) at every thread count."""
    bundle = os.path.join(dir_, name)
    with torch.no_grad():
        gm = torch.fx.symbolic_trace(model)
        torchfx_export.export(gm, [x], bundle)
        frozen_script(model, x).save(os.path.join(bundle, "script_frozen.pt"))
        flops = count_flops(model, x)
        reps = max(3, repeat // 4)
        for t in threads:
            set_threads(t)
            times = [median_us(lambda _: model(x), reps, collect=False) for _ in range(5)]
            out[str(t)][name] = {"eager_us": statistics.median(times), "threads": t,
                                 "batch": x.shape[0], "nodes": len(gm.graph.nodes),
                                 "flops": flops}
    if ort:
        set_threads(1)  # ONNX Runtime's threads run in its own process
        try:
            ort_rows(model, x, bundle, threads, reps, ort, out, name)
        except Exception as e:  # noqa: BLE001 - export or run: said, skipped
            for t in threads:
                out[str(t)][name]["ort_error"] = f"{type(e).__name__}: {e}"[:300]


def models(dir_, names, batches, repeat, threads, log, ort=None):
    """Every model at every batch size (one_model); a model that cannot be
    traced, exported or scripted is recorded with its error and skipped.
    DIR/models.txt lists the bundles in order, for the C++ side."""
    out = {str(t): {} for t in threads}
    order = []
    for name in names:
        for batch in batches:
            bundle = bundle_name(name, batch)
            try:
                model, x = make_model(name, batch)
                one_model(dir_, bundle, model, x, repeat, threads, ort, out)
                order.append(bundle)
            except Exception as e:  # noqa: BLE001 - said in the table
                for t in threads:
                    out[str(t)][bundle] = {"error": f"{type(e).__name__}: {e}"[:300],
                                           "threads": t, "batch": batch}
            log(f"python models {bundle} done")
    with open(os.path.join(dir_, "models.txt"), "w") as f:
        f.write("".join(f"{b}\n" for b in order))
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
    parser.add_argument("--batches", default="1,8")
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
        batches = [int(b) for b in args.batches.split(",") if b]
        os.makedirs(args.dir, exist_ok=True)
        result["models"] = models(args.dir, names, batches, args.repeat, threads, log,
                                  args.ort)
        result["peak_gflops"] = peak_gflops(threads)
    if not args.skip_ir:
        set_threads(1)  # graph operations are single-threaded code
        result["ir"] = ir([int(s) for s in args.sizes.split(",") if s], log)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
