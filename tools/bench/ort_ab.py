#!/usr/bin/python3
"""The InferencePlan against ONNX Runtime, alternated: the method behind
BENCHMARKS.md's plan / ONNX Runtime tables for issue 35.

    ort_ab.py [--models resnet50,...] [--batches 1,8] [--threads 1,2]
              [--rounds 8] [--block 5] [--gap S] [--pin CPU]
              [--node-path DIR] [--onnx-dir DIR]

For each thread count, batch and model: the model (suite_bench.make_model:
torchvision's, random weights with seed 0; the encoder) is compiled with
fx_sdk.compile (the inference passes, the plan's measured kernels) and
exported to ONNX from the same weights (ort_engine.export_onnx; the file is
kept in --onnx-dir and reused). Both outputs are checked against eager on
the same input first (rtol 1e-3, atol 1e-4; the largest difference is
printed). Then the engines take turns, `--block` calls each, `--rounds`
times, with `--gap` seconds of sleep after each block; the medians of all
calls are compared.

Why alternate, pin and sleep: on a shared 2-vCPU VM the machine's speed
drifts by 10-20% within minutes, so two engines timed minutes apart are not
comparable; at one thread the two vCPUs run at different speeds, so both
engines are pinned to one (--pin, default CPU 1; -1 leaves them unpinned);
at two threads each engine's idle threads spin after a call (OpenMP's and
ONNX Runtime's pools) and slow the other's next calls, for longer than
0.1 s, so the default gap is 0.3 s at one thread and 1 s at more.

Each row also gives the plan's achieved GFLOP/s (the forward's
floating-point operations as PyTorch's profiler counts them, over the
plan's median) and its share of the machine's peak at that thread count:
the better of torch.mm (the BLAS) on 2048 x 2048 products and the plan's
own 1x1 convolution (oneDNN's brgemm kernel) of 512 channels at 56x56, best
of 5. Winograd layers do fewer operations than the profiler counts, so a
network can pass 100%.

Prints one line per row and nothing else; needs fx_sdk on sys.path
(bazel build //python:fx_sdk; PYTHONPATH=bazel-bin/python) and ONNX
Runtime's node package (setup_onnxruntime.sh).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ort_engine import OrtEngine, export_onnx  # noqa: E402
from suite_bench import (count_flops, make_model, peak_gflops,  # noqa: E402
                         set_threads, timed)

MODELS = ("resnet50,resnext50_32x4d,densenet121,mnasnet1_0,"
          "mobilenet_v3_large,efficientnet_b0,regnet_y_400mf,convnext_tiny,"
          "swin_t,encoder")
NODE_PATH = os.path.expanduser("~/.cache/fx-sdk/onnxruntime/node_modules")


def machine_peak(fx_sdk, threads):
    """GFLOP/s of the faster of two dense kernels at `threads`, and which
    one it was: suite_bench's peak (torch.mm on 2048 x 2048 float32
    matrices, the BLAS) and the plan's 1x1 convolution of 512 channels on a
    56x56 channels_last image (oneDNN's brgemm kernel), best of 5."""
    blas = peak_gflops([threads])[str(threads)]
    conv = torch.nn.Conv2d(512, 512, 1, bias=False).eval()
    x = torch.randn(1, 512, 56, 56).contiguous(
        memory_format=torch.channels_last)
    with torch.no_grad():
        plan = fx_sdk.compile(torch.fx.symbolic_trace(conv), [x])
        plan(x)  # warm-up
        seconds = min(timed(lambda: plan(x)) for _ in range(5))
    onednn = 2.0 * 512 * 512 * 56 * 56 / seconds / 1e9
    return (blas, "torch.mm") if blas >= onednn else \
        (onednn, "the plan's 1x1 convolution")


def check(name, want, got, what):
    diff = (got.reshape(want.shape) - want).abs().max().item()
    if not torch.allclose(got.reshape(want.shape), want, rtol=1e-3,
                          atol=1e-4):
        sys.exit(f"{name}: {what} differs from eager by {diff:.3g}")
    return diff


def alternate(plan, engine, x, args, gap):
    ours, theirs = [], []
    for _ in range(3):
        plan(x)
        engine.timed_on(x)
    for _ in range(args.rounds):
        for _ in range(args.block):
            start = time.perf_counter()
            plan(x)
            ours.append((time.perf_counter() - start) * 1e3)
        time.sleep(gap)
        theirs.extend(engine.timed_on(x) for _ in range(args.block))
        time.sleep(gap)
    return ours, theirs


def row(fx_sdk, name, batch, threads, args, peak):
    model, x = make_model(name, batch)
    path = os.path.join(args.onnx_dir, f"{name}@{batch}.onnx")
    if not os.path.exists(path):
        export_onnx(model, x, path)
    engine = OrtEngine(path, threads, args.node_path)
    try:
        with torch.no_grad():
            start = time.perf_counter()
            plan = fx_sdk.compile(torch.fx.symbolic_trace(model), [x])
            build = time.perf_counter() - start
            want = model(x)
            plan_diff = check(name, want, plan(x), "the plan")
            ort_diff = check(name, want, engine.output(x), "ONNX Runtime")
            gap = args.gap if args.gap is not None else \
                (0.3 if threads == 1 else 1.0)
            ours, theirs = alternate(plan, engine, x, args, gap)
    finally:
        engine.close()
    mine, other = statistics.median(ours), statistics.median(theirs)
    gflops = count_flops(model, x) / (mine * 1e-3) / 1e9
    print(f"{name} batch {batch} threads {threads}: plan {mine:.2f} ms "
          f"(min {min(ours):.2f}), ONNX Runtime {other:.2f} ms "
          f"(min {min(theirs):.2f}), ratio {mine / other:.3f}; plan "
          f"{gflops:.0f} GFLOP/s, {100 * gflops / peak:.0f}% of peak; "
          f"build {build:.1f} s; max diff plan {plan_diff:.1e} "
          f"ONNX Runtime {ort_diff:.1e}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default=MODELS)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--block", type=int, default=5)
    p.add_argument("--gap", type=float, default=None)
    p.add_argument("--pin", type=int, default=1,
                   help="the CPU 1-thread rows run on (-1: unpinned)")
    p.add_argument("--node-path", default=NODE_PATH)
    p.add_argument("--onnx-dir", default="/tmp/fx_ort_ab")
    args = p.parse_args()
    os.makedirs(args.onnx_dir, exist_ok=True)
    import fx_sdk

    every_cpu = os.sched_getaffinity(0)
    for threads in [int(t) for t in args.threads.split(",")]:
        # Set before ONNX Runtime's process starts: it inherits the mask.
        pinned = threads == 1 and args.pin >= 0
        os.sched_setaffinity(0, {args.pin} if pinned else every_cpu)
        set_threads(threads)
        peak, source = machine_peak(fx_sdk, threads)
        print(f"threads {threads}{' pinned to CPU %d' % args.pin if pinned else ''}: "
              f"peak {peak:.0f} GFLOP/s ({source})", flush=True)
        for batch in [int(b) for b in args.batches.split(",")]:
            for name in args.models.split(","):
                row(fx_sdk, name, batch, threads, args, peak)


if __name__ == "__main__":
    main()
