#!/usr/bin/env bash
# The IR benchmark against torch.fx, in one go: builds //tools/bench:ir_benchmark
# optimised, checks that it and tools/bench/torchfx_ir_bench.py build the same graph
# (identical python_code() and graph text), runs both, and prints a Markdown table:
# time per operation for each, torch.fx time / SDK time, and bytes per node.
#
#   tools/bench/compare_ir.sh                          # 1k and 10k nodes (about 2 minutes)
#   tools/bench/compare_ir.sh --sizes 1000,10000,100000  # torch.fx needs minutes at 100k
#
# Times are CPU time (the machine may be shared): the SDK's the median of 3 Google
# Benchmark repetitions, torch.fx's the median of its repetitions; see the two
# programs for what each operation times.
set -euo pipefail
cd "$(dirname "$0")/../.."

sizes=1000,10000
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --sizes=*) sizes=${1#*=}; shift ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_ir.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
if ! [[ $sizes =~ ^[0-9]+(,[0-9]+)*$ ]]; then
  echo "compare_ir.sh: --sizes takes node counts such as 1000,10000" >&2
  exit 2
fi
for n in ${sizes//,/ }; do
  case $n in
    1000 | 10000 | 100000) ;;
    *) echo "compare_ir.sh: ir_benchmark runs 1000, 10000 and 100000 nodes, not $n" >&2; exit 2 ;;
  esac
done

python=/usr/bin/python3  # Debian's interpreter, with torch 1.13
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --config=opt is -c opt with -O2 last: .bazelrc's `build --copt=-O1` would
# otherwise override -c opt's -O2.
bazel build --config=opt //tools/bench:ir_benchmark >&2
# A private copy: other builds on the shared server may replace bazel-bin's.
cp "$(bazel info --config=opt bazel-bin 2>/dev/null)/tools/bench/ir_benchmark" "$tmp/ir_benchmark"

# Same graph on both sides (torch 1.13 prints [#users=N] where the SDK prints
# [num_users=N], the one difference allowed).
for n in ${sizes//,/ }; do
  [ "$n" -le 10000 ] || continue
  "$tmp/ir_benchmark" --dump_code="$n" >"$tmp/sdk_code.py"
  "$python" tools/bench/torchfx_ir_bench.py --dump-code "$n" >"$tmp/fx_code.py"
  "$tmp/ir_benchmark" --dump_graph="$n" | sed 's/\[num_users=/[#users=/' >"$tmp/sdk_graph.txt"
  "$python" tools/bench/torchfx_ir_bench.py --dump-graph "$n" >"$tmp/fx_graph.txt"
  if ! cmp -s "$tmp/sdk_code.py" "$tmp/fx_code.py" || ! cmp -s "$tmp/sdk_graph.txt" "$tmp/fx_graph.txt"; then
    echo "compare_ir.sh: the SDK and torch.fx graphs of $n nodes differ:" >&2
    diff "$tmp/fx_code.py" "$tmp/sdk_code.py" | head -20 >&2 || true
    diff "$tmp/fx_graph.txt" "$tmp/sdk_graph.txt" | head -20 >&2 || true
    exit 1
  fi
  echo "compare_ir.sh: $n nodes: same graph text and generated code on both sides" >&2
done

echo "compare_ir.sh: running the SDK benchmark" >&2
"$tmp/ir_benchmark" --benchmark_filter="/(${sizes//,/|})\$" \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$tmp/sdk.json" --benchmark_out_format=json >&2
echo "compare_ir.sh: running torch.fx" >&2
"$python" tools/bench/torchfx_ir_bench.py --json --sizes "$sizes" >"$tmp/fx.json"

"$python" - "$tmp/sdk.json" "$tmp/fx.json" "$sizes" <<'PY'
import json
import sys

sdk_json, fx_json, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split(",")]
sdk = json.load(open(sdk_json))
fx = json.load(open(fx_json))
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
medians = {}
for b in sdk["benchmarks"]:
    if b.get("aggregate_name") == "median":
        medians[b["run_name"]] = b
ops = [("build", "BM_Build"), ("copy", "BM_Copy"), ("print", "BM_Print"),
       ("codegen", "BM_Codegen"), ("lint", "BM_Lint"), ("edit", "BM_Edit")]


def fmt_time(seconds):
    return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.2f} s"


ctx = sdk["context"]
print(f"SDK: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} x "
      f"{ctx.get('mhz_per_cpu', '?')} MHz; torch.fx {fx['torch']} on Python {fx['python']}")
print()
print("| operation (CPU time) | nodes | torch.fx | SDK | torch.fx / SDK |")
print("| --- | ---: | ---: | ---: | ---: |")
for op, bm in ops:
    for n in sizes:
        b = medians[f"{bm}/{n}"]
        sdk_s = b["cpu_time"] * unit[b["time_unit"]]
        fx_s = fx["seconds"][op][str(n)]
        print(f"| {op} | {n:,} | {fmt_time(fx_s)} | {fmt_time(sdk_s)} | {fx_s / sdk_s:.0f}x |")
print()
print("| bytes per node (built graph) | nodes | torch.fx | SDK | torch.fx / SDK |")
print("| --- | ---: | ---: | ---: | ---: |")
for n in sizes:
    b = medians[f"BM_Build/{n}"]
    fx_b = fx["bytes_per_node"].get(str(n))
    fx_cell = f"{fx_b:.0f}" if fx_b else "not measured"
    ratio = f"{fx_b / b['bytes_per_node']:.1f}x" if fx_b else ""
    print(f"| requested (tracemalloc / operator new) | {n:,} | {fx_cell} | "
          f"{b['bytes_per_node']:.0f} | {ratio} |")
    print(f"| SDK as malloc hands it out (usable size) | {n:,} | | "
          f"{b['heap_bytes_per_node']:.0f} | |")
PY
