#!/bin/bash
# Issue 37 item 2: the same graph, pipeline and plugins give byte-identical
# files. Each case runs `fx run` twice, from two working directories with two
# TMPDIRs and OMP_NUM_THREADS 1 and 2, into two output directories (one given
# by a relative path, one absolute), then `fx code --lang=cpp` on each result,
# and compares every file byte for byte.
#
# Usage: deterministic_test.sh FX PLUGIN... -- GRAPH INPUTS PIPELINE [GRAPH INPUTS PIPELINE]...
set -euo pipefail
fx=$(readlink -f "$1"); shift
plugins=()
while [ "$1" != "--" ]; do plugins+=(--plugin "$(readlink -f "$1")"); shift; done
shift
root=${TEST_TMPDIR:-$(mktemp -d)}/deterministic
fail=0
while [ $# -ge 3 ]; do
  graph=$(readlink -f "$1"); inputs=$(readlink -f "$2"); pipeline=$3; shift 3
  case_dir="$root/$(basename "$(dirname "$graph")")_${pipeline//[^A-Za-z0-9]/_}"
  for run in 1 2; do
    mkdir -p "$case_dir/cwd$run" "$case_dir/tmp$run"
    out="out$run/model.fx.json"
    [ $run = 2 ] && out="$case_dir/cwd2/out2/model.fx.json"
    (cd "$case_dir/cwd$run" &&
      TMPDIR="$case_dir/tmp$run" OMP_NUM_THREADS=$run "$fx" run --no-default-plugins \
        "${plugins[@]}" --pipeline "$pipeline" --inputs "$inputs" -o "$out" "$graph" &&
      "$fx" code --lang=cpp --name=model "out$run/model.fx.json" > "out$run/model.cc")
  done
  n=0
  for f in "$case_dir"/cwd1/out1/*; do
    other="$case_dir/cwd2/out2/$(basename "$f")"
    if cmp "$f" "$other"; then n=$((n + 1)); else fail=1; fi
  done
  [ -s "$case_dir/cwd1/out1/model.weights.pt" ] || { echo "FAIL: no weights written"; fail=1; }
  [ $n -ge 3 ] || { echo "FAIL: $pipeline on $graph: only $n files compared"; fail=1; }
  echo "$pipeline on $graph: $n files identical"
done
[ $fail = 0 ] && echo PASS
exit $fail
