#!/usr/bin/env bash
# Replays a fuzz target's seed corpus and regression inputs once each:
# replay_test.sh FUZZER DIR... Either build of FUZZER reads the same flags
# (libFuzzer's -runs=0 replays without mutating; replay_main.cc ignores it).
set -euo pipefail
fuzzer=$1
shift
dirs=()
for d in "$@"; do
  [ -d "$d" ] && dirs+=("$d")
done
[ "${#dirs[@]}" -gt 0 ] || { echo "no input directory among: $*" >&2; exit 1; }
# Under the sanitizers: the known LibTorch leaks are suppressed (lsan.supp),
# which needs stacks unwound through LibTorch's frames.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp:print_suppressions=0"
exec "$fuzzer" -runs=0 "${dirs[@]}"
