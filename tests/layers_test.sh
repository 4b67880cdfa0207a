#!/usr/bin/env bash
# The layer arrows of BUILD.bazel, checked on the real build graph with
# `bazel query` (a second Bazel with its own output base, on the workspace
# this test's runfiles point into):
#   1. the IR (//fx_core/ir), fx_core/symbolic and their support pull in no
#      LibTorch, nothing but Abseil from the system;
#   2. no fx_core or host layer depends on a layer above it;
#   3. every program holding GraphModules links the executor
#      (//fx_core/compile:execution_plan);
#   4. every plugin (a linkshared cc_binary anywhere in the tree but the
#      Python extension module) depends on
#      plugin_api/include and first-party plugin helpers only: no fx_core, no
#      host library, no LibTorch.
set -uo pipefail

readme="$(readlink -f "${TEST_SRCDIR}/${TEST_WORKSPACE}/README.md")"
workspace="$(dirname "$readme")"
[ -f "$workspace/WORKSPACE" ] || { echo "no workspace at $workspace"; exit 1; }
base="${TEST_TMPDIR}/bazel"
q() {
  (cd "$workspace" && bazel --output_user_root="$base/root" \
      --output_base="$base/out" query --noshow_progress --keep_going "$1" \
      2>"$base/stderr") || { cat "$base/stderr" >&2; return 1; }
}
mkdir -p "$base"
failures=0
expect_empty() {  # what, query
  local found
  found="$(q "$2")" || { echo "FAIL: query failed: $2"; failures=$((failures + 1)); return; }
  if [ -n "$found" ]; then
    echo "FAIL: $1:"
    sed 's/^/  /' <<<"$found"
    failures=$((failures + 1))
  else
    echo "ok: $1"
  fi
}

expect_empty "the IR pulls in nothing from the system but Abseil" \
  'filter("^@system", deps(//fx_core/ir/...)) except @system//:absl'
expect_empty "the IR depends only on fx_core/support" \
  'kind(rule, filter("^//", deps(//fx_core/ir/...))) except //fx_core/ir/... except //fx_core/support/...'

expect_empty "fx_core/symbolic pulls in nothing from the system but Abseil" \
  'filter("^@system", deps(//fx_core/symbolic/...)) except @system//:absl'
expect_empty "fx_core/symbolic depends only on fx_core/support" \
  'kind(rule, filter("^//", deps(//fx_core/symbolic/...))) except //fx_core/symbolic/... except //fx_core/support/...'

expect_empty "fx_core/partition pulls in nothing from the system but Abseil" \
  'filter("^@system", deps(//fx_core/partition/...)) except @system//:absl'

# Bottom to top, as in BUILD.bazel's package groups (symbolic beside ir).
layers=(
  //fx_core/support "//fx_core/ir + //fx_core/symbolic" //fx_core/io //fx_core/format
  //fx_core/partition //fx_core/runtime //fx_core/compile
  "//fx_core/capture + //fx_core/cppgen + //fx_core/tracer" //fx_core/rewrite
  //host/handles //host/delegate //host/capi //host/options //host/loader //host/extensions //host/pipeline
  "//host/plugin_check + //host/minimizer"
)
pattern() {  # "//a + //b" -> "//a/... + //b/..."
  sed 's|\(//[a-z_/]*\)|\1/...|g' <<<"$1"
}
for ((i = 0; i < ${#layers[@]} - 1; i++)); do
  above=""
  for ((j = i + 1; j < ${#layers[@]}; j++)); do
    above="${above:+$above + }$(pattern "${layers[j]}")"
  done
  expect_empty "${layers[i]} depends on no layer above it" \
    "kind(rule, deps($(pattern "${layers[i]}"))) intersect ($above + //tools/... + //python/... + //tests/... + //sdk_examples/...)"
done

# The tree's own packages (not //..., which would walk the bazel-* links).
tree='//fx_core/... + //host/... + //plugin_api/... + //plugins/... + //python/... + //sdk_examples/... + //tests/... + //tools/...'
# A GraphModule runs through the executor fx_core/compile installs when it
# is linked (fx_core/runtime/graph_executor.h): every program holding
# GraphModules links it, or it fails only at run time. A test that checks
# life without it says so with the tag no_graph_executor.
# Link edges only: a genrule's tool (the fx binary generating a test's
# source) reaches the executor but links nothing into the test, so the
# closures are taken over cc_library rules.
libs="kind('cc_library rule', $tree)"
holding="kind('cc_(test|binary) rule', rdeps($tree, rdeps($libs, //fx_core/runtime:graph_module), 1))"
linking="rdeps($tree, rdeps($libs, //fx_core/compile:execution_plan), 1)"
expect_empty "every program holding GraphModules links //fx_core/compile:execution_plan" \
  "$holding except $linking except attr(tags, no_graph_executor, $holding)"

# The Python extension module (//python:_C.so) is a host, not a plugin.
plugins="$(q "attr(linkshared, 1, kind(cc_binary, $tree)) except //python:_C.so")" || exit 1
[ -n "$plugins" ] || { echo "FAIL: no plugins found"; exit 1; }
echo "plugins: $(wc -l <<<"$plugins")"
# A genrule generating a plugin's source is allowed (whatever it depends on
# is still in deps($p) and checked).
while IFS= read -r p; do
  expect_empty "$p depends on plugin_api/include alone" \
    "kind(rule, filter(\"^(//|@system)\", deps($p))) except kind(genrule, deps($p)) except $p except //plugin_api/include/... except //plugins:plugin_util"
done <<<"$plugins"

(cd "$workspace" && bazel --output_user_root="$base/root" \
    --output_base="$base/out" shutdown) >/dev/null 2>&1
[ "$failures" -eq 0 ] || { echo "$failures layer rule(s) broken"; exit 1; }
echo "all layer rules hold"
