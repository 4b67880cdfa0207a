#!/usr/bin/env bash
# Instructions executed per node by each IR operation, at 1k to 1M nodes,
# counted by valgrind's callgrind: a measure of work that caches, frequency
# scaling and other load on the machine do not change. Constant instructions
# per node is what "linear" means; time per node can still grow with the
# graph's size once it outgrows the caches (BENCHMARKS.md).
#
#   tools/bench/count_instructions.sh [--sizes 1000,10000,100000,1000000]
#                                     [--ops trace,edit] [--json]
#
# Runs suite_benchmark --once OP under callgrind, counting only inside
# fx_bench_measured (the operation itself, not building its input).
# About 10 minutes for the defaults on 2 cores; needs valgrind.
set -euo pipefail

cd "$(dirname "$0")/../.."
sizes=1000,10000,100000,1000000
ops=trace,copy,print,codegen,lint,edit
json=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes=$2; shift ;;
    --ops) ops=$2; shift ;;
    --json) json=1 ;;
    *) echo "count_instructions.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ! command -v valgrind >/dev/null; then
  echo "count_instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2
  exit 1
fi
bazel build --config=opt //tools/bench:suite_benchmark >&2
bin="$(bazel info --config=opt bazel-bin 2>/dev/null)/tools/bench/suite_benchmark"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

results="$work/results.tsv"
: > "$results"
IFS=, read -ra op_list <<< "$ops"
IFS=, read -ra size_list <<< "$sizes"
for op in "${op_list[@]}"; do
  for n in "${size_list[@]}"; do
    out="$work/callgrind.$op.$n"
    nodes=$(valgrind --tool=callgrind --callgrind-out-file="$out" \
      --toggle-collect=fx_bench_measured "$bin" --once "$op" --sizes "$n" \
      2>"$work/valgrind.log") || { cat "$work/valgrind.log" >&2; exit 1; }
    instructions=$(sed -n 's/^summary: //p' "$out")
    printf '%s\t%s\t%s\n' "$op" "$nodes" "$instructions" >> "$results"
    echo "$op $n: $instructions instructions" >&2
  done
done

/usr/bin/python3 - "$results" "$json" <<'PY'
import json, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().split("\n") if line]
if sys.argv[2] == "1":
    print(json.dumps([{"op": op, "nodes": int(n), "instructions": int(i),
                       "per_node": int(i) / int(n)} for op, n, i in rows]))
    sys.exit()
sizes = sorted({int(n) for _, n, _ in rows})
print("| operation | " + " | ".join(f"{n:,} nodes" for n in sizes) + " | largest size / smallest size |")
print("| --- |" + " ---: |" * (len(sizes) + 1))
for op in dict.fromkeys(op for op, _, _ in rows):
    per = {int(n): int(i) / int(n) for o, n, i in rows if o == op}
    cells = [f"{per[n]:,.0f}" if n in per else "" for n in sizes]
    ratio = per[max(per)] / per[min(per)]
    print(f"| {op} | " + " | ".join(cells) + f" | {ratio:.2f}x |")
PY
