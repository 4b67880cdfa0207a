#!/usr/bin/env bash
# The capture_vendor binary: the plugin loads, the graph has the leaf
# layer_norm as one node and the decomposition's sigmoid and mul in place of
# silu, and the captured block computes the eager block's numbers.
set -euo pipefail
bin=sdk_examples/capture_vendor/capture_vendor
plugin=sdk_examples/capture_vendor/libcapture_vendor.so
graph=$("$bin" "$plugin" graph)
fail() { echo "FAIL: $1" >&2; echo "$graph" >&2; exit 1; }
[ "$(grep -c 'torch.ops.aten.layer_norm.default' <<<"$graph")" -eq 1 ] ||
  fail "layer_norm is not one node"
! grep -q 'native_layer_norm\|operator.getitem\|aten.silu' <<<"$graph" ||
  fail "layer_norm or silu was not kept / decomposed"
grep -q 'torch.ops.aten.sigmoid.default' <<<"$graph" || fail "no sigmoid"
grep -q 'torch.ops.aten.mul.Tensor' <<<"$graph" || fail "no mul"
"$bin" "$plugin" run
if "$bin" "$plugin" nonsense 2>/dev/null; then
  echo "FAIL: a bad command was accepted" >&2
  exit 1
fi
echo PASS
