#!/bin/sh
# sh check_pass.sh FX PLUGIN PIPELINE GRAPH EXPECTED
#
# Bazel's test of the plugin (BUILD.bazel, relu_to_mul_golden), as
# check_pass.cmake is CMake's: runs PIPELINE on GRAPH with the plugin loaded
# (fx run) and checks that the code fx generates for the result is EXPECTED,
# byte for byte.
set -eu
[ $# -eq 5 ] || { echo "usage: check_pass.sh FX PLUGIN PIPELINE GRAPH EXPECTED" >&2; exit 2; }
fx=$1 plugin=$2 pipeline=$3 graph=$4 expected=$5
out="${TEST_TMPDIR:-${TMPDIR:-/tmp}}/check_pass"
mkdir -p "$out"
"$fx" run "$graph" --plugin "$plugin" --pipeline "$pipeline" -o "$out/out.fx.json"
"$fx" code "$out/out.fx.json" >"$out/actual.py"
if ! cmp -s "$out/actual.py" "$expected"; then
  echo "the code after $pipeline differs from $expected:" >&2
  cat "$out/actual.py" >&2
  exit 1
fi
echo "PASS: $pipeline"
