#!/bin/bash
# `capture_examples NAME graph|code` prints exactly what Python's make_fx
# prints for the example's twin (capture_twins.py, run here), `run` reports
# the captured module equal to eager, and an unknown name is refused with the
# list of examples.
set -uo pipefail
bin="$TEST_SRCDIR/fx_sdk/sdk_examples/capture/capture_examples"
twins="$TEST_SRCDIR/fx_sdk/sdk_examples/capture/capture_twins.py"
if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  echo "SKIP: python3-torch / python3-torchvision are not installed"; exit 0
fi
out="$TEST_TMPDIR/twins"
/usr/bin/python3 "$twins" "$out" || { echo "FAIL: capture_twins.py"; exit 1; }
failed=0
for name in resnet18 mobilenet_v2 small_transformer; do
  if ! diff <("$bin" "$name" graph) "$out/$name/grad/graph.txt" > /dev/null; then
    echo "FAIL: $name graph"; failed=1
  fi
  if ! diff <("$bin" "$name" code) "$out/$name/grad/code.py"; then
    echo "FAIL: $name code"; failed=1
  fi
  "$bin" "$name" run || { echo "FAIL: $name run"; failed=1; }
done
if "$bin" no_such_model graph 2> "$TEST_TMPDIR/err"; then
  echo "FAIL: an unknown example was accepted"; failed=1
fi
grep -q "NAME is one of: resnet18 mobilenet_v2 small_transformer" \
  "$TEST_TMPDIR/err" || { echo "FAIL: no list of examples"; failed=1; }
[ "$failed" = 0 ] && echo "capture_examples: every example matches make_fx"
exit "$failed"
