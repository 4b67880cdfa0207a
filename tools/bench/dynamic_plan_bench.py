#!/usr/bin/python3
"""The dynamic InferencePlan (one plan for every shape, issue 31 item 6)
against plans specialised to each shape, eager PyTorch and TorchScript
(frozen, optimize_for_inference) and ONNX Runtime's CPU provider (exported
with torch.onnx.export and dynamic axes; --ort, onnxruntime-node from
tools/bench/setup_onnxruntime.sh), on resnet50 over batch sizes and a
transformer encoder (d_model 512, 8 heads, MLP 2048, 6 layers, pre-norm,
attention written out) over sequence lengths. Both SDK plans run the graph
after the inference passes (shape_prop,fold_bn,fuse_conv,fuse_linear,
fuse_matmul,fuse_pointwise on the first shape), through fx_sdk.compile.

    PYTHONPATH=bazel-bin/python /usr/bin/python3 \\
        tools/bench/dynamic_plan_bench.py [--threads 1,2] [--repeat 7] \\
        [--batches 1,2,4,8] [--seqs 16,64,128,256] [--json OUT.json] \\
        [--ort NODE_PATH]

Per shape and thread count the engines run interleaved, round-robin,
`repeat` rounds after a warm-up; the figure is each engine's median. The
dynamic plan is built once per thread count and runs every shape; the
specialised plan is built for each shape (not timed). Prints one line per
row and the BLAS, threads and load average.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_engine import OrtEngine  # noqa: E402
from suite_bench import Encoder, blas_library, set_threads  # noqa

import fx_sdk  # noqa: E402

# Idle time before each timed call (not timed). Thread pools spin for a
# while after a run: ONNX Runtime's intra-op threads (its node binding cannot
# set session.intra_op.allow_spinning) slowed whichever engine ran next by
# ~30 ms at 2 threads, and OpenMP's workers do the same on a smaller scale.
IDLE_SECONDS = 0.2

PASSES = ("shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,"
          "fuse_pointwise")


def resnet50():
    import torchvision.models
    return torchvision.models.resnet50().eval()


def torchscript(model, example):
    with torch.no_grad():
        traced = torch.jit.trace(model, example, check_trace=False)
        return torch.jit.optimize_for_inference(torch.jit.freeze(traced))


def run_once(fn, x):
    """ms of one call: the engine's own figure when it measures itself."""
    if hasattr(fn, "timed"):
        return fn.timed(x)
    start = time.perf_counter()
    fn(x)
    return (time.perf_counter() - start) * 1e3


def interleaved(engines, x, repeat, warm=False):
    """Median ms per engine, the engines run round-robin: each timed call
    after IDLE_SECONDS of idle (a request arriving at a quiet server), or,
    with `warm`, right after two untimed calls of the same engine (caches
    and threads hot, as in a busy server)."""
    times = {name: [] for name in engines}
    with torch.no_grad():
        for fn in engines.values():
            run_once(fn, x)
        for _ in range(repeat):
            for name, fn in engines.items():
                if warm:
                    run_once(fn, x)
                    run_once(fn, x)
                else:
                    time.sleep(IDLE_SECONDS)
                times[name].append(run_once(fn, x))
    return {name: statistics.median(t) for name, t in times.items()}


def inference_graph(model, example):
    """The SDK's GraphModule of `model` (traced by torch.fx) after the
    inference passes, run on `example`'s shape."""
    gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(model))
    fx_sdk._C._run_pipeline(gm, PASSES, [], [fx_sdk.PLUGIN_DIR], True,
                            [example])
    return gm


def bench_model(name, model, inputs, threads, repeat, rows, ort=None):
    """`ort`: (NODE_PATH, the input's dynamic axes) to add ONNX Runtime."""
    set_threads(threads)
    ort_engine = (OrtEngine.exported(model, inputs[0], threads, ort[0], ort[1])
                  if ort else None)
    gm = inference_graph(model, inputs[0])
    dynamic = fx_sdk.compile(gm, [inputs[0]], dynamic=True)
    for x in inputs:
        with torch.no_grad():
            want = model(x)
            torch.testing.assert_close(dynamic(x), want, rtol=1e-3,
                                       atol=1e-4)
        engines = {
            "dynamic": dynamic,
            "specialised": fx_sdk.compile(gm, [x]),
            "eager": model,
            "torchscript": torchscript(model, x),
        }
        if ort_engine:
            engines["onnxruntime"] = ort_engine
        ms = interleaved(engines, x, repeat)
        row = {"model": name, "shape": list(x.shape), "threads": threads,
               **{k: round(v, 3) for k, v in ms.items()},
               "dynamic/specialised": round(ms["dynamic"] /
                                            ms["specialised"], 3)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if ort_engine:
        ort_engine.close()
    stats = dynamic.stats
    print(f"# {name} {threads} threads: plan_builds {dynamic.plan_builds}, "
          f"shape_specialisations {stats['shape_specialisations']}, "
          f"weight_packs {stats['weight_packs']}, shared_buffer_bytes "
          f"{stats['shared_buffer_bytes']}", flush=True)


def ints(text):
    return [int(v) for v in text.split(",")]


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=ints, default=[1, 2])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--batches", type=ints, default=[1, 2, 4, 8])
    p.add_argument("--seqs", type=ints, default=[16, 64, 128, 256])
    p.add_argument("--models", default="resnet50,encoder")
    p.add_argument("--json")
    p.add_argument("--ort", help="NODE_PATH with onnxruntime-node "
                   "(tools/bench/setup_onnxruntime.sh prints it)")
    args = p.parse_args(argv)
    torch.manual_seed(0)
    print(f"# BLAS {blas_library()}; torch {torch.__version__}; "
          f"load average {os.getloadavg()}", flush=True)
    rows = []
    for threads in args.threads:
        if "resnet50" in args.models:
            bench_model("resnet50", resnet50(),
                        [torch.rand(b, 3, 224, 224) for b in args.batches],
                        threads, args.repeat, rows,
                        (args.ort, {0: "batch"}) if args.ort else None)
        if "encoder" in args.models:
            bench_model("encoder", Encoder().eval(),
                        [torch.rand(1, s, 512) for s in args.seqs],
                        threads, args.repeat, rows,
                        (args.ort, {1: "seq"}) if args.ort else None)
    print(f"# load average at the end {os.getloadavg()}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
