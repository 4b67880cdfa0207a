#!/usr/bin/python3
"""PyTorch's own int8 models (prepare_fx / convert_fx, engine onednn, the
default onednn qconfig) run by the SDK against PyTorch, and the float
models as anchors (issue 33): per model, batch 1, each thread count:

  float eager          the float model in PyTorch
  float plan           the SDK's InferencePlan on the float model after the
                       inference passes (fx_sdk.compile)
  int8 eager           convert_fx's GraphModule in Python
  int8 TorchScript     torch.jit.freeze(torch.jit.trace(that))
  int8 SDK             fx_sdk.from_torch_fx(that): the SDK's GraphModule,
                       the same int8 kernels (LibTorch's quantized::conv2d,
                       ...) called from C++
  int8 SDK reference   convert_to_reference_fx of the same prepared model,
                       lowered by the SDK's quantize_lower (convert_fx's
                       graph and numbers), then fx_sdk.compile
  encoder              (dynamic quantization, bench_dynamic below)
  int8 SDK pipeline    the SDK's own quantization of the float model:
                       fold_bn, quantize_prepare{outputs=true}, calibration
                       on the same batches, quantize_convert, quantize_lower,
                       then fx_sdk.compile (the InferencePlan: its own int8
                       convolutions, fx_core/compile/quantized_steps.h)
  int8 SDK pipeline, LibTorch convs
                       the same plan with FX_INT8_CONV=registry: its
                       convolutions on LibTorch's quantized::conv2d

The int8 outputs are checked equal (the SDK's to PyTorch's, exactly) and
their SQNR against float is printed. Engines run round-robin after a
warm-up (dynamic_plan_bench's interleaved: 0.2 s idle before each timed
call; --warm: right after two untimed calls instead); the figure is each
one's median of --repeat; an engine that raises is reported and left out.

    PYTHONPATH=bazel-bin/python /usr/bin/python3 tools/bench/int8_bench.py \\
        [--models resnet50,mobilenet_v2] [--threads 1,2] [--repeat 11]
"""
import argparse
import copy
import json
import os
import sys

import torch
import torch.fx
import torchvision
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import (convert_fx,
                                               convert_to_reference_fx,
                                               prepare_fx)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic_plan_bench import (  # noqa: E402
    Encoder, inference_graph, interleaved)
from suite_bench import blas_library, set_threads  # noqa: E402

import fx_sdk  # noqa: E402


WARM = False  # --warm


def sqnr(reference, value):
    noise = (reference - value).pow(2).mean()
    return float(10 * torch.log10(reference.pow(2).mean() / noise))


def prepared_model(model, x, calibration):
    torch.backends.quantized.engine = "onednn"
    prepared = prepare_fx(copy.deepcopy(model),
                          get_default_qconfig_mapping("onednn"), (x,))
    with torch.no_grad():
        for batch in calibration:
            prepared(batch)
    return prepared


def quantized(model, x, calibration):
    return convert_fx(prepared_model(model, x, calibration))


def reference_lowered(model, x, calibration):
    """convert_to_reference_fx's model lowered by quantize_lower."""
    reference = convert_to_reference_fx(prepared_model(model, x, calibration))
    gm, _ = fx_sdk.run_pipeline(reference, "quantize_lower")
    return gm


def sdk_quantized(model, x, calibration, observer="minmax"):
    """The SDK's GraphModule of `model` after its own static int8 pipeline,
    calibrated by running the prepared GraphModule on `calibration`."""
    gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(model))

    def run(pipeline):
        fx_sdk._C._run_pipeline(gm, pipeline, [], [fx_sdk.PLUGIN_DIR], True,
                                [x])
    run("shape_prop,fold_bn,quantize_prepare{outputs=true%s}" %
        ("" if observer == "minmax" else f",observer={observer}"))
    with torch.no_grad():
        for batch in calibration:
            gm(batch)
    run("quantize_convert,quantize_lower")
    return gm


def float_plan(model, x):
    return fx_sdk.compile(inference_graph(model, x), [x])


def libtorch_convs_plan(gm, x):
    """gm's plan with its quantized convolutions on LibTorch's
    quantized::conv2d (FX_INT8_CONV=registry) instead of the plan's own
    int8 steps: the before of fx_core/compile/quantized_steps.h."""
    os.environ["FX_INT8_CONV"] = "registry"
    try:
        return fx_sdk.compile(gm, [x])
    finally:
        del os.environ["FX_INT8_CONV"]


def working(engines, x):
    """`engines` without those whose first call raises (reported)."""
    kept = {}
    with torch.no_grad():
        for name, fn in engines.items():
            try:
                fn(x)
                kept[name] = fn
            except RuntimeError as e:
                print(f"# {name} fails: {str(e).splitlines()[0]}", flush=True)
    return kept


def time_rows(label, model, x, threads, repeat, int8_engines):
    """At each thread count, one JSON row (model `label`): the median ms of
    the float anchors (eager, the SDK's plan) and of the int8 engines
    int8_engines() makes at that count, timed interleaved on x."""
    for n in threads:
        set_threads(n)
        engines = {"float eager": model, "float plan": float_plan(model, x),
                   **int8_engines()}
        ms = interleaved(working(engines, x), x, repeat, WARM)
        row = {"model": label, "threads": n, "warm": WARM,
               **{k: round(v, 2) for k, v in ms.items()}}
        print(json.dumps(row), flush=True)


def bench(name, threads, repeat):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.randn(1, 3, 224, 224)
    calibration = [torch.randn_like(x) for _ in range(4)]
    q = quantized(model, x, calibration)
    sdk_q = fx_sdk.from_torch_fx(q)
    ours = sdk_quantized(model, x, calibration)
    lowered = reference_lowered(model, x, calibration)
    with torch.no_grad():
        reference, int8 = model(x), q(x)
        torch.testing.assert_close(sdk_q(x), int8, rtol=0, atol=0)
        torch.testing.assert_close(lowered(x), int8, rtol=0, atol=0)
        own = ours(x)
    print(f"# {name}: int8 SQNR against float {sqnr(reference, int8):.1f} "
          f"dB; the SDK's int8 output, and its lowering of the reference "
          f"model, equal PyTorch's; the SDK pipeline's "
          f"SQNR {sqnr(reference, own):.1f} dB", flush=True)

    def int8_engines():
        engines = {"int8 eager": q}
        try:
            with torch.no_grad():
                engines["int8 TorchScript"] = torch.jit.freeze(
                    torch.jit.trace(q, x))
        except RuntimeError as e:  # torch 1.13's own failures, reported
            print(f"# {name}: TorchScript cannot trace the int8 model: "
                  f"{str(e).splitlines()[0]}", flush=True)
        engines["int8 SDK"] = sdk_q
        engines["int8 SDK reference"] = fx_sdk.compile(lowered, [x])
        try:  # building a plan runs the graph once
            engines["int8 SDK pipeline"] = fx_sdk.compile(ours, [x])
            engines["int8 SDK pipeline, LibTorch convs"] = (
                libtorch_convs_plan(ours, x))
        except ValueError as e:
            print(f"# int8 SDK pipeline fails: {str(e).splitlines()[0]}",
                  flush=True)
        return engines

    time_rows(name, model, x, threads, repeat, int8_engines)


def bench_dynamic(threads, repeat):
    """Dynamic quantization of a transformer encoder (d_model 512, 8
    heads, 6 layers, sequence 128): PyTorch's quantize_dynamic (every
    Linear, qint8, onednn) against the SDK's quantize_weights{dynamic=true},
    quantize_lower compiled to a plan, and the float anchors."""
    torch.manual_seed(0)
    torch.backends.quantized.engine = "onednn"
    model = Encoder().eval()
    x = torch.randn(1, 128, 512)
    theirs = torch.ao.quantization.quantize_dynamic(
        copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8)
    ours = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(model))
    fx_sdk._C._run_pipeline(ours, "quantize_weights{dynamic=true},"
                            "quantize_lower", [], [fx_sdk.PLUGIN_DIR], True,
                            [x])
    with torch.no_grad():
        reference = model(x)
        print(f"# encoder: dynamic int8 SQNR against float: PyTorch "
              f"{sqnr(reference, theirs(x)):.1f} dB, SDK pipeline "
              f"{sqnr(reference, ours(x)):.1f} dB", flush=True)

    def int8_engines():
        with torch.no_grad():
            traced = torch.jit.freeze(torch.jit.trace(theirs, x))
        return {"int8 dynamic eager (PyTorch)": theirs,
                "int8 dynamic TorchScript": traced,
                "int8 dynamic SDK pipeline": fx_sdk.compile(ours, [x])}

    time_rows("encoder", model, x, threads, repeat, int8_engines)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet50,mobilenet_v2,encoder")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--warm", action="store_true",
                        help="time each call right after two untimed ones "
                             "instead of after 0.2 s of idle")
    args = parser.parse_args(argv)
    global WARM
    WARM = args.warm
    print(f"# BLAS {blas_library()}, load average {os.getloadavg()}",
          flush=True)
    threads = [int(t) for t in args.threads.split(",")]
    for name in args.models.split(","):
        if name == "encoder":
            bench_dynamic(threads, args.repeat)
        else:
            bench(name, threads, args.repeat)
    print(f"# load average at the end {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
