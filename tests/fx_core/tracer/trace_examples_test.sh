#!/bin/bash
# `trace_examples NAME graph|code` prints exactly torch.fx's graph text and
# code (../shared/reference/NAME) for every seed example, and refuses an
# unknown name with the list of examples.
set -uo pipefail
bin="$TEST_SRCDIR/fx_sdk/sdk_examples/tracing/trace_examples"
ref="$TEST_SRCDIR/shared/reference"
[ -d "$ref" ] || ref="$TEST_SRCDIR/fx_sdk/external/shared/reference"
failed=0
for name in seed_mymodule seed_topk seed_static_flow seed_leaf seed_dropout \
            seed_dropout_functional seed_wrap; do
  if ! diff <("$bin" "$name" graph) "$ref/$name/graph.txt"; then
    echo "FAIL: $name graph"; failed=1
  fi
  if ! diff <("$bin" "$name" code) "$ref/$name/code.py"; then
    echo "FAIL: $name code"; failed=1
  fi
done
if "$bin" no_such_example graph 2>/tmp/trace_examples_err.$$; then
  echo "FAIL: an unknown example was accepted"; failed=1
fi
grep -q "NAME is one of: seed_mymodule" /tmp/trace_examples_err.$$ ||
  { echo "FAIL: no list of examples"; failed=1; }
rm -f /tmp/trace_examples_err.$$
[ "$failed" = 0 ] && echo "trace_examples: all seed examples match torch.fx"
exit "$failed"
