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
exec "$fuzzer" -runs=0 "${dirs[@]}"
