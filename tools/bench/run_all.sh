#!/usr/bin/env bash
# The unified benchmark suite: the SDK (C++) and Python torch.fx measured in
# one run on this machine, printed as Markdown tables with the ratios.
#
#   bazel run --config=opt //tools:bench -- [options]     (or tools/bench/run_all.sh)
#     --json              print the merged JSON instead of the tables
#     --json-out FILE     also write the merged JSON to FILE
#     --sizes LIST        SDK IR sizes (default 1000,10000,100000,1000000)
#     --py-sizes LIST     torch.fx IR sizes (default 1000,10000; 100000 takes
#                         torch 1.13 several minutes: its naming is quadratic)
#     --repeat N          forward samples per round (default 20)
#     --plot FILE.png     also plot time per IR operation against node count
#                         (gnuplot; absolute paths, or relative to the repo)
#     --model-plot FILE.png  also plot each engine's achieved GFLOP/s per
#                         model and thread count against the measured peak
#     --quick             --sizes 1000,10000 --py-sizes 1000 --repeat 5
#     --threads LIST      thread counts for every forward row (default 1 and
#                         every CPU in the affinity mask, e.g. 1,2)
#     --forward-only      the forward and model rows alone (no IR, no pass)
#     --no-python         the SDK alone
#     --models LIST       the models (default: suite_bench.py's MODELS)
#     --batches LIST      batch sizes of the models (default 1,8)
#     --no-ort            no ONNX Runtime column (by default
#                         setup_onnxruntime.sh installs its pinned
#                         onnxruntime-node from the npm registry; when it
#                         cannot, the suite says why and goes on without)
#
# Parts: IR operations on a traced N-node chain (trace, copy, print, codegen,
# lint, edit storm) and bytes per node (suite_benchmark.cc,
# suite_bench.py), single-threaded code run at 1 thread; forward overhead on
# a 1k-op chain of small ops (compiled GraphModule, InferencePlan,
# Interpreter, hand-written LibTorch, TorchScript, Python eager, torch.fx
# GraphModule and Interpreter); the models (suite_bench.py's MODELS:
# torchvision's classification models torch.fx traces, a small transformer,
# a transformer encoder) at batch 1 and 8 (TorchScript frozen + optimized
# for inference, eager LibTorch where written by hand, Python eager, ONNX
# Runtime's CPU provider, GraphModule, InferencePlan, Interpreter); a pass
# through the C ABI against the same pass on fx_core (pass_benchmark.cc).
# Forward rows run at every --threads count (LibTorch's and OpenBLAS's
# threads, set alike in C++ and Python); every row states its count and the
# tables state the BLAS. See BENCHMARKS.md.
set -euo pipefail

if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
  # Not under `bazel run`: go through it, so the binaries are built at -O2.
  cd "$(dirname "$0")/../.."
  exec bazel run --config=opt //tools/bench:bench -- "$@"
fi

runfiles=$PWD  # bazel run: the runfiles root
json=0
plot=""
model_plot=""
json_out=""
sizes=1000,10000,100000,1000000
py_sizes=1000,10000
repeat=20
python=1
ort=1
threads=""
models=""
batches=""
forward_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --json) json=1 ;;
    --sizes) sizes=$2; shift ;;
    --py-sizes) py_sizes=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --plot) plot=$2; shift ;;
    --model-plot) model_plot=$2; shift ;;
    --json-out) json_out=$2; shift ;;
    --quick) sizes=1000,10000; py_sizes=1000; repeat=5 ;;
    --no-python) python=0 ;;
    --no-ort) ort=0 ;;
    --threads) threads=$2; shift ;;
    --models) models=$2; shift ;;
    --batches) batches=$2; shift ;;
    --forward-only) forward_only=1 ;;
    *) echo "run_all.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -n "$plot" && "$plot" != /* ]]; then plot=$BUILD_WORKSPACE_DIRECTORY/$plot; fi
if [[ -n "$model_plot" && "$model_plot" != /* ]]; then
  model_plot=$BUILD_WORKSPACE_DIRECTORY/$model_plot
fi
if [[ -n "$json_out" && "$json_out" != /* ]]; then
  json_out=$BUILD_WORKSPACE_DIRECTORY/$json_out
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo '{"ir": {}, "forward": {}, "models": {}}' > "$work/python.json"
echo '{"benchmarks": []}' > "$work/pass.json"
models_args=()
common=(--repeat "$repeat")
[[ -n "$threads" ]] && common+=(--threads "$threads")
[[ $forward_only -eq 1 ]] && common+=(--skip-ir)
if [[ $python -eq 1 ]] && /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  ort_args=()
  if [[ $ort -eq 1 ]]; then
    # ONNX Runtime runs the models in the Python half (exported there).
    if node_path=$(bash "$runfiles/tools/bench/setup_onnxruntime.sh" 2>"$work/ort.log"); then
      ort_args=(--ort "$node_path")
    else
      echo "ONNX Runtime could not be installed (no ONNX Runtime column):" >&2
      tail -3 "$work/ort.log" >&2
    fi
  fi
  echo "== torch.fx (Python) ==" >&2
  model_args=()
  [[ -n "$models" ]] && model_args+=(--models "$models")
  [[ -n "$batches" ]] && model_args+=(--batches "$batches")
  /usr/bin/python3 "$runfiles/tools/bench/suite_bench.py" "$work/models" \
    --sizes "$py_sizes" "${common[@]}" "${model_args[@]}" "${ort_args[@]}" > "$work/python.json"
  models_args=(--models "$work/models")
  # The InferencePlan rows plan each model after the inference passes
  # (BatchNorm folded, convolutions and linears fused for oneDNN):
  # DIR/NAME/graph.opt.fx.json.
  for dir in "$work"/models/*/; do
    [[ -f "$dir/graph.fx.json" && -f "$dir/input.pt" ]] || continue
    # A model the passes refuse is planned as traced (and said so).
    "$runfiles/tools/fx" run "$dir/graph.fx.json" --pipeline shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,fuse_pointwise \
      --inputs "$dir/input.pt" --plugin "$runfiles/plugins/libfx_shape_prop.so" \
      --plugin "$runfiles/plugins/libfx_inference.so" -o "$dir/graph.opt.fx.json" >/dev/null ||
      echo "the inference passes failed on $(basename "$dir"): its plan runs the traced graph" >&2
  done
elif [[ $python -eq 1 ]]; then
  echo "python3-torch / python3-torchvision missing: the SDK alone" >&2
fi
echo "== SDK (C++) ==" >&2
"$runfiles/tools/bench/suite_benchmark" --sizes "$sizes" "${common[@]}" \
  "${models_args[@]}" > "$work/sdk.json"
if [[ $forward_only -eq 0 ]]; then
  echo "== C ABI pass vs fx_core pass ==" >&2
  "$runfiles/tools/bench/pass_benchmark" --benchmark_filter='BM_Pass_|BM_Visit_' \
    --benchmark_format=json > "$work/pass.json" 2>/dev/null
fi

/usr/bin/python3 - "$work" "$json" "$plot" "$json_out" "$model_plot" <<'PY'
import json, os, platform, shutil, subprocess, sys
work, as_json, plot, json_out = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
model_plot = sys.argv[5]
py = json.load(open(os.path.join(work, "python.json")))
sdk = json.load(open(os.path.join(work, "sdk.json")))
passes = {b["name"]: b for b in json.load(open(os.path.join(work, "pass.json")))["benchmarks"]}
merged = {"machine": {"cpus": len(os.sched_getaffinity(0)), "python": platform.python_version(),
                      "blas": sdk.get("blas"), "threads": sdk.get("threads")},
          "sdk": sdk, "torchfx": py,
          "pass": {k: {"real_time": v["real_time"], "time_unit": v["time_unit"]} for k, v in passes.items()}}
if json_out:
    with open(json_out, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")
if as_json:
    print(json.dumps(merged, indent=1))
    sys.exit(0)

def t(us):
    if us is None or us < 0:
        return "—"
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.1f} us"

def gnuplot(script, what, path):
    """Runs gnuplot on `script`, which draws `what` into `path`, and says where
    it went (or that gnuplot is not installed)."""
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot"], input=script.encode(), check=True)
        print(f"\n{what}: {path}", file=sys.stderr)
    else:
        print(f"\ngnuplot not installed: no {what}", file=sys.stderr)

def ratio(a, b):
    return f"{a / b:.1f}x" if a and b and a > 0 and b > 0 else "—"

def r2(a, b):
    return f"{a / b:.2f}x" if a and b and a > 0 and b > 0 else "—"

blas = sdk.get("blas", "unknown")
models = sdk.get("models", {})
if models:
    ort = py.get("onnxruntime")
    print(f"### Headline: batch 1 (NAME) and batch B (NAME@B), median wall time per call (BLAS: {blas}; ONNX Runtime: "
          f"{'onnxruntime-node ' + ort + ', CPU provider, same threads' if ort else 'not run'})\n")
    print("| model | threads | TorchScript frozen + optimized (C++) | eager LibTorch | Python eager | "
          "ONNX Runtime | SDK GraphModule | SDK InferencePlan | InferencePlan / best of TorchScript-optimized "
          "and eager LibTorch (goal <= 0.90x) | InferencePlan / ONNX Runtime (goal <= 0.90x) | "
          "GraphModule / eager LibTorch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for threads in sorted(models, key=int):
        for name, c in models[threads].items():
            p = py.get("models", {}).get(threads, {}).get(name, {})
            if "error" in c:
                print(f"| {name} | {threads} | the SDK could not run it: {c['error'][:160]} |")
                continue
            ts, hand = c["torchscript_optimized_us"], c["libtorch_us"]
            best = min(v for v in (ts, hand) if v > 0) if max(ts, hand) > 0 else -1
            print(f"| {name} | {threads} | {t(ts)} | {t(hand)} | {t(p.get('eager_us'))} | "
                  f"{t(p.get('ort_us'))} | {t(c['graph_module_us'])} | {t(c['inference_plan_us'])} | "
                  f"{r2(c['inference_plan_us'], best)} | {r2(c['inference_plan_us'], p.get('ort_us'))} | "
                  f"{r2(c['graph_module_us'], hand)} |")
    print("\n| model | threads | nodes | SDK Interpreter | Interpreter / GraphModule | "
          "nodes the plan binds to ATen kernels | TorchScript-optimized max abs diff | "
          "ONNX Runtime max abs diff (vs eager) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for threads in sorted(models, key=int):
        for name, c in models[threads].items():
            if "error" in c:
                continue
            p = py.get("models", {}).get(threads, {}).get(name, {})
            od = p.get("ort_max_abs_diff")
            print(f"| {name} | {threads} | {int(c['nodes'])} | {t(c['interpreter_us'])} | "
                  f"{r2(c['interpreter_us'], c['graph_module_us'])} | {c['plan_direct_nodes']} | "
                  f"{c['torchscript_max_abs_diff']:.2g} | {f'{od:.2g}' if od is not None else '—'} |")
    print()
    # What Python could not export or run at all, and where ONNX Runtime failed.
    for threads, rows in sorted(py.get("models", {}).items(), key=lambda kv: int(kv[0])):
        for name, p in rows.items():
            if "error" in p:
                print(f"- {name}, {threads} thread(s): not in the suite ({p['error'][:200]})")
            elif "ort_error" in p:
                print(f"- {name}, {threads} thread(s): no ONNX Runtime figure ({p['ort_error'][:200]})")
    print()

# Achieved GFLOP/s: the model's flops (PyTorch's profiler) over each engine's
# median time, against the peak suite_bench.py measured (best 2048^2 sgemm).
ENGINES = (("TorchScript-optimized", "torchscript_optimized_us"), ("eager LibTorch", "libtorch_us"),
           ("Python eager", "eager_us"), ("ONNX Runtime", "ort_us"), ("SDK GraphModule", "graph_module_us"),
           ("SDK InferencePlan", "inference_plan_us"))
PYTHON_SIDE = ("eager_us", "ort_us")  # measured by suite_bench.py
peak = py.get("peak_gflops", {})

def gflops(threads, name, key):
    c = models[threads][name]
    if "error" in c:
        return None
    p = py.get("models", {}).get(threads, {}).get(name, {})
    us = p.get(key) if key in PYTHON_SIDE else c.get(key)
    flops = p.get("flops")
    return flops / us / 1e3 if flops and us and us > 0 else None

if models and peak:
    print("### Achieved GFLOP/s (flops: PyTorch's profiler; peak: best 2048x2048 sgemm, same run)\n")
    print("| model | GFLOP per forward | threads | peak | " +
          " | ".join(e for e, _ in ENGINES) + " | InferencePlan, % of peak |")
    print("| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in ENGINES) + " | ---: |")
    for threads in sorted(models, key=int):
        for name in models[threads]:
            flops = py.get("models", {}).get(threads, {}).get(name, {}).get("flops")
            if not flops:
                continue
            vals = [gflops(threads, name, k) for _, k in ENGINES]
            pk = peak.get(threads)
            share = f"{100 * vals[-1] / pk:.0f}%" if vals[-1] and pk else "—"
            print(f"| {name} | {flops / 1e9:.2f} | {threads} | {f'{pk:.0f}' if pk else '—'} | " +
                  " | ".join(f"{v:.1f}" if v else "—" for v in vals) + f" | {share} |")
    print()

ops = ["trace", "copy", "print", "codegen", "lint", "edit"]
sizes = sorted(set(int(n) for n in sdk["ir"]) | set(int(n) for n in py["ir"]))
if sizes:
    print("### IR operations (traced chain, median wall time, 1 thread)\n")
    print("| operation | nodes | torch.fx | SDK | SDK ns/node | torch.fx / SDK |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for op in ops:
        for n in sizes:
            s = sdk["ir"].get(str(n), {}).get(op + "_us")
            p = py["ir"].get(str(n), {}).get(op + "_us")
            per = f"{s * 1e3 / n:.0f}" if s else "—"
            print(f"| {op} | {n:,} | {t(p)} | {t(s)} | {per} | {ratio(p, s)} |")
    print("\n| bytes per node (traced graph) | nodes | torch.fx (tracemalloc) | SDK (malloc) | torch.fx / SDK |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for n in sizes:
        s = sdk["ir"].get(str(n), {}).get("bytes_per_node")
        p = py["ir"].get(str(n), {}).get("bytes_per_node")
        print(f"| heap held | {n:,} | {f'{p:.0f}' if p else '—'} | {f'{s:.0f}' if s else '—'} | {ratio(p, s)} |")

print(f"\n### Forward: the 1k-op chain (median us per call, no grad, BLAS: {blas})\n")
print("| model | threads | nodes | SDK GraphModule | SDK InferencePlan | SDK Interpreter | hand-written LibTorch | TorchScript (C++) | Python eager | torch.fx GraphModule | torch.fx Interpreter |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for threads in sorted(sdk["forward"], key=int):
    for name, c in sdk["forward"][threads].items():
        p = py["forward"].get(threads, {}).get(name, {})
        print(f"| {name} | {threads} | {int(c['nodes'])} | {t(c['graph_module_us'])} | {t(c['inference_plan_us'])} | "
              f"{t(c['interpreter_us'])} | {t(c['libtorch_us'])} | {t(c['torchscript_us'])} | "
              f"{t(p.get('eager_us'))} | {t(p.get('torchfx_graph_module_us'))} | {t(p.get('torchfx_interpreter_us'))} |")
print("\n| model | threads | GraphModule / hand-written | TorchScript / hand-written | hand-written / InferencePlan | torch.fx GM / SDK GM | torch.fx GM / InferencePlan | torch.fx Interpreter / SDK Interpreter | per node: GM, plan, hand-written |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for threads in sorted(sdk["forward"], key=int):
    for name, c in sdk["forward"][threads].items():
        p = py["forward"].get(threads, {}).get(name, {})
        gm, plan, hand, ts = c["graph_module_us"], c["inference_plan_us"], c["libtorch_us"], c["torchscript_us"]
        n = c["nodes"]
        def r3(a, b):
            return f"{a / b:.3f}x" if a > 0 and b > 0 else "—"
        print(f"| {name} | {threads} | {r3(gm, hand)} | {r3(ts, hand)} | {ratio(hand, plan)} | "
              f"{ratio(p.get('torchfx_graph_module_us'), gm)} | {ratio(p.get('torchfx_graph_module_us'), plan)} | "
              f"{ratio(p.get('torchfx_interpreter_us'), c['interpreter_us'])} | "
              f"{gm / n:.2f}, {plan / n:.3f}, {hand / n:.2f} us |")

if passes:
    print("\n### A pass through the C ABI against the same pass on fx_core\n")
    print("| benchmark (100k nodes) | fx_core | C ABI | C ABI / fx_core |")
    print("| --- | ---: | ---: | ---: |")
    for kind in ("Pass", "Visit"):
        a = passes.get(f"BM_{kind}_fx_core/100000")
        b = passes.get(f"BM_{kind}_c_abi/100000")
        if a and b:
            print(f"| {kind.lower()} | {a['real_time']:.2f} {a['time_unit']} | {b['real_time']:.2f} {b['time_unit']} | "
                  f"{b['real_time'] / a['real_time']:.2f}x |")

if model_plot and models and peak:
    data = os.path.join(work, "models.dat")
    labels = []
    with open(data, "w") as f:
        for threads in sorted(models, key=int):
            for name in models[threads]:
                vals = [gflops(threads, name, k) for _, k in ENGINES]
                pk = peak.get(threads)
                f.write(f'"{name}\\n{threads} thr" ' +
                        " ".join(f"{v:.3f}" if v else "NaN" for v in vals) +
                        f" {100 * vals[-1] / pk if vals[-1] and pk else float('nan'):.1f}\n")
    bars = [f"'{data}' using {2 + i}:xtic(1) title '{e}'" for i, (e, _) in enumerate(ENGINES)]
    peaks = ", ".join(f"{t} thread{'s' if int(t) > 1 else ''}: {v:.0f}" for t, v in sorted(peak.items()))
    script = f"""set terminal pngcairo size 1100,540 font ',10' noenhanced
set bmargin 5
set output '{model_plot}'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set ylabel 'achieved GFLOP/s (higher is better)'
set key top left
set grid ytics
set datafile missing 'NaN'
set title 'Batch-1 inference, one run: achieved GFLOP/s per engine (measured sgemm peak, GFLOP/s: {peaks})'
plot {', '.join(bars)}
"""
    gnuplot(script, "model plot", model_plot)

if plot and sizes:
    data = os.path.join(work, "plot.dat")
    with open(data, "w") as f:
        for n in sizes:
            row = [str(n)]
            for src in (sdk, py):
                for op in ops:
                    v = src["ir"].get(str(n), {}).get(op + "_us")
                    row.append(f"{v / 1e3:.6f}" if v else "NaN")
            f.write(" ".join(row) + "\n")
    lines = []
    for i, op in enumerate(ops):
        lines.append(f"'{data}' using 1:{2 + i} with linespoints lw 2 pt 7 lc {i + 1} title 'SDK {op}'")
        lines.append(f"'{data}' using 1:{8 + i} with linespoints lw 2 pt 5 dt 2 lc {i + 1} title 'torch.fx {op}'")
    script = f"""set terminal pngcairo size 1000,650 font ',10'
set output '{plot}'
set logscale xy
set xlabel 'nodes'
set ylabel 'time (ms)'
set key outside right
set grid
set title 'IR operations: SDK (C++) vs torch.fx 1.13 (Python), one run'
set datafile missing 'NaN'
plot {', '.join(lines)}
"""
    gnuplot(script, "plot", plot)
PY
