#!/usr/bin/env bash
# Fuzz campaigns on the libFuzzer targets of tests/fuzz (FUZZING.md).
#
#   tools/fuzz.sh [-t SECONDS] [-n RUNS] [-w WORK_DIR] [-L] [-j JOBS]
#                 [-m MAX_LEN] [TARGET...]
#
# Builds the targets with clang, libFuzzer, ASan and UBSan (bazel
# --config=fuzz), then runs each TARGET (default: all) for SECONDS (default
# 60; with -n, until RUNS executions if that comes first), one after the
# other in one process each, starting from its seed corpus
# tests/fuzz/corpus/TARGET and from what earlier campaigns kept in
# WORK_DIR/TARGET/corpus (default WORK_DIR: /tmp/fx-fuzz). Crashing inputs go
# to WORK_DIR/TARGET/crashes, the log to WORK_DIR/TARGET/log. Ends with a
# table: executions, executions per second, coverage (libFuzzer's edge and
# feature counts), corpus size, crashes. Exits 1 when any target crashed.
#
# -L is for long campaigns. It turns leak checking off: matching LibTorch's
# known leaks (lsan.supp) needs ASan's slow unwinder on every allocation,
# which costs the targets that read torch.save archives most of their
# speed. And it keeps 4 frames of each allocation's stack (ASan's default
# is 30) and 64 MB of freed memory in quarantine (default 256 MB): on
# sym_expr's allocation-heavy inputs that is 1.8x the speed and a quarter
# of the memory, where the default's memory grew by 5 KB an input until
# libFuzzer's 4 GB limit would end the run. Errors are still caught; a
# crash's report then shows where its memory was allocated or freed only
# 4 frames deep (replay the input without -L for the whole stack). An input
# times out after 25 s (OSS-Fuzz's limit) instead of 10: sym_expr's largest
# legal expansions (10000 terms, printed and parsed again) take 0.5 s
# without the sanitizers and up to 17 s with them. Leaks stay checked by
# the CI's ASan replay of every corpus and by runs without -L.
#
# -j JOBS runs JOBS processes of each target at once, the i-th pinned to
# core i (mod the cores there are), sharing its corpus directory (libFuzzer
# reloads what the others add): -n RUNS is then their total, split evenly,
# and the table sums their executions and rates. Their logs are log.0,
# log.1, ... -m MAX_LEN caps an input's length (libFuzzer's -max_len;
# default: its own, which grows with the corpus).
#
# A crash reproduces with `bazel-bin-of-fuzz/tests/fuzz/TARGET_fuzzer FILE`;
# its input then belongs in tests/fuzz/crashes/TARGET (replayed by CI) and
# in a unit test of the code that crashed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

targets_all=(graph_json torch_save bundle module_config pipeline_text pipeline_config plugin_info sym_expr elf_check)
seconds=60
runs=-1
work=/tmp/fx-fuzz
leaks=1
timeout=10
jobs=1
max_len=
while getopts "t:n:w:Lj:m:h" opt; do
  case "$opt" in
    t) seconds=$OPTARG ;;
    n) runs=$OPTARG ;;
    w) work=$OPTARG ;;
    L) leaks=0 timeout=25 ;;
    j) jobs=$OPTARG ;;
    m) max_len=$OPTARG ;;
    *) sed -n '2,41p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${targets_all[@]}")

dict_of() {
  case "$1" in
    graph_json | bundle | module_config) echo tests/fuzz/dict/graph_json.dict ;;
    pipeline_text | pipeline_config | plugin_info) echo tests/fuzz/dict/pipeline.dict ;;
  esac
}

labels=()
for t in "${targets[@]}"; do
  [ -d "tests/fuzz/corpus/$t" ] || { echo "fuzz: unknown target '$t' (${targets_all[*]})" >&2; exit 2; }
  labels+=("//tests/fuzz:${t}_fuzzer")
done
bazel build --config=fuzz --jobs=2 --local_ram_resources=3500 "${labels[@]}" || exit 1
bin=$(bazel info --config=fuzz bazel-bin 2>/dev/null)

# The last libFuzzer status line's field (`cov: 123`), and a final stat.
field() { grep -o "$2: [0-9]*" "$1" | tail -1 | awk '{print $2}'; }
stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -1; }
# Over the logs named: the sum of a final stat, and the largest field.
stat_sum() {
  local name=$1 total=0 log v
  shift
  for log in "$@"; do
    v=$(stat "$log" "$name")
    total=$((total + ${v:-0}))
  done
  echo "$total"
}
field_max() {
  local name=$1 best=0 log v
  shift
  for log in "$@"; do
    v=$(field "$log" "$name")
    [ "${v:-0}" -gt "$best" ] && best=$v
  done
  echo "$best"
}

cores=$(nproc)
rows=()
status=0
for t in "${targets[@]}"; do
  dir=$work/$t
  mkdir -p "$dir/corpus" "$dir/crashes"
  job_runs=$runs
  [ "$runs" -lt 0 ] || job_runs=$(((runs + jobs - 1) / jobs))
  args=(-max_total_time="$seconds" -runs="$job_runs" -timeout="$timeout" -rss_limit_mb=4096
    -malloc_limit_mb=4096 -print_final_stats=1 -print_funcs=0 -artifact_prefix="$dir/crashes/")
  [ -z "$max_len" ] || args+=(-max_len="$max_len")
  dict=$(dict_of "$t")
  [ -z "$dict" ] || args+=(-dict="$dict")
  # Leaks checked, less the known LibTorch ones (tests/fuzz/lsan.supp): the
  # targets reading torch.save archives unwind through LibTorch to match them
  # (slower), and check leaks at exit only (per input, LibTorch's caches
  # make it check after nearly every input).
  asan=detect_leaks=$leaks:detect_odr_violation=0
  if [ "$leaks" -eq 0 ]; then
    asan+=:malloc_context_size=4:quarantine_size_mb=64
    args+=(-detect_leaks=0)
  else
    case "$t" in
      torch_save | bundle) asan+=:fast_unwind_on_malloc=0; args+=(-detect_leaks=0) ;;
    esac
  fi
  logs=()
  if [ "$jobs" -eq 1 ]; then
    logs=("$dir/log")
  else
    for ((j = 0; j < jobs; ++j)); do logs+=("$dir/log.$j"); done
  fi
  echo "fuzz: $t for ${seconds}s, $jobs process(es) (log: ${logs[*]})"
  for ((j = 0; j < jobs; ++j)); do
    pin=()
    [ "$jobs" -eq 1 ] || pin=(taskset -c $((j % cores)))
    ASAN_OPTIONS=$asan \
      LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp:print_suppressions=0 \
      UBSAN_OPTIONS=print_stacktrace=1 \
      "${pin[@]}" "$bin/tests/fuzz/${t}_fuzzer" "${args[@]}" "$dir/corpus" \
      "tests/fuzz/corpus/$t" >"${logs[$j]}" 2>&1 &
  done
  wait
  crashes=$(find "$dir/crashes" -type f | wc -l)
  [ "$crashes" -eq 0 ] || status=1
  rows+=("$(printf '%-16s %12s %8s %7s %8s %7s %8s' "$t" \
    "$(stat_sum number_of_executed_units "${logs[@]}")" \
    "$(stat_sum average_exec_per_sec "${logs[@]}")" \
    "$(field_max cov "${logs[@]}")" "$(field_max ft "${logs[@]}")" \
    "$(find "$dir/corpus" -type f | wc -l)" "$crashes")")
done

printf '%-16s %12s %8s %7s %8s %7s %8s\n' target executions exec/s cov ft corpus crashes
printf '%s\n' "${rows[@]}"
[ "$status" -eq 0 ] || echo "fuzz: crashing inputs are in $work/TARGET/crashes"
exit "$status"
