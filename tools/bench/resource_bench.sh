#!/usr/bin/env bash
# Time and peak memory of `fx print` and `fx exec` on large and deeply nested
# inputs (BENCHMARKS.md, "Resource behaviour").
#
#   tools/bench/resource_bench.sh [-d DIR] [-f FX]
#
# Writes the inputs into DIR (default /tmp/fx-resource) with
# tools/bench/make_resource_inputs.py unless they are there already, builds
# `fx` with --config=opt unless FX is given, then runs each command once
# under /usr/bin/time -v (one thread for exec) and prints a Markdown table:
# exit status, wall, user and system seconds, peak resident memory, the load
# average (1 minute) when it started, and the outcome: the output compared
# with what Python torch computed (expected.pt), or the error message. A
# crash (a signal) or a result that differs makes it exit 1.
set -uo pipefail
cd "$(dirname "$0")/../.."

dir=/tmp/fx-resource
fx=
while getopts "d:f:h" opt; do
  case "$opt" in
    d) dir=$OPTARG ;;
    f) fx=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done
if [ -z "$fx" ]; then
  bazel build --config=opt --jobs=2 --local_ram_resources=3500 //tools:fx || exit 1
  fx=$(bazel info --config=opt bazel-bin 2>/dev/null)/tools/fx
fi
if [ ! -f "$dir/deep_input_100k/input.pt" ] || [ ! -d "$dir/deep_runtime" ]; then
  /usr/bin/python3 tools/bench/make_resource_inputs.py "$dir" || exit 1
fi

# Compares torch.load(A) with torch.load(B): tensors exactly, containers
# element by element (iteratively: the deep cases nest 1000 levels).
same_value() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import sys, threading, torch
sys.setrecursionlimit(1_000_000)
threading.stack_size(1 << 28)
result = []
def run():
    todo = [(torch.load(sys.argv[1]), torch.load(sys.argv[2]))]
    while todo:
        a, b = todo.pop()
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
                result.append(f"max |diff| {(a - b).abs().max().item()}")
                return
        elif isinstance(a, (list, tuple)) and type(a) == type(b) \
                and len(a) == len(b):
            todo.extend(zip(a, b))
        else:
            result.append(f"{type(a).__name__} against {type(b).__name__}")
            return
t = threading.Thread(target=run)
t.start()
t.join()
print(result[0] if result else "matches PyTorch")
EOF
}

status=0
echo "| input | command | exit | wall s | user s | sys s | peak RSS MB | load | outcome |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
# run CASE COMMAND ARGS...: one row.
run() {
  local case=$1 command=$2
  shift 2
  local d=$dir/$case log=$dir/$case/$command.time out=$dir/$case/$command.out
  rm -f "$d/out.pt"
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -v -o "$log" "$fx" "$command" "$d/graph.fx.json" "$@" \
    >"$out" 2>"$out.err"
  local rc=$?
  local wall user sys rss outcome
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  user=$(sed -n 's/.*User time (seconds): //p' "$log")
  sys=$(sed -n 's/.*System time (seconds): //p' "$log")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  if grep -q "Command terminated by signal" "$log"; then
    outcome="CRASH: $(grep 'terminated by signal' "$log")"
    status=1
  elif [ "$rc" -ne 0 ]; then
    outcome="error: $(head -c 200 "$out.err" | head -1)"
  elif [ -f "$d/out.pt" ]; then
    outcome=$(same_value "$d/out.pt" "$d/expected.pt")
    [ "$outcome" = "matches PyTorch" ] || status=1
  else
    outcome="$(wc -c <"$out") bytes of text"
  fi
  printf '| %s | fx %s | %s | %s | %s | %s | %d | %s | %s |\n' "$case" \
    "$command" "$rc" "$wall" "$user" "$sys" "$((rss / 1024))" "$load" "$outcome"
}

for c in chain_1m weights_200m deep_limit deep_100k; do
  run "$c" print
  run "$c" exec --inputs "$dir/$c/input.pt" --outputs "$dir/$c/out.pt" --threads 1
done
run deep_runtime exec --inputs "$dir/deep_runtime/input.pt" \
  --outputs "$dir/deep_runtime/out.pt" --threads 1
for c in deep_input_limit deep_input_100k; do
  run "$c" exec --inputs "$dir/$c/input.pt" --outputs "$dir/$c/out.pt" --threads 1
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs), $(date -u '+%H:%M UTC %d %b %Y')"
exit "$status"
