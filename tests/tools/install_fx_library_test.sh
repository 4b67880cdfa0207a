#!/usr/bin/env bash
# fx_library out of tree (issue 37 item 1), as a new user with only the
# install would use it:
#   1. install into a prefix and move it elsewhere;
#   2. copy PREFIX/share/fx-sdk/fx_library_template into a fresh directory,
#      make its WORKSPACE as its README says, and with Debian's Bazel 4.2.3
#      offline (fx_workspace.sh): build //:conv_bn_bundle (the pipeline
#      folds both BatchNorm2d away), `bazel run //:conv_bn_main` (the C++
#      program over the generated conv_bn::run) and `bazel test
#      //:conv_bn_test` (the optimised library against the original graph)
#      and `bazel run //:conv_bn_benchmark` (it times run());
#   3. bad input, one package each, in one `bazel build --keep_going`: a
#      plugins entry that is not an fx plugin, a missing inputs file, an
#      unknown named pipeline and a pass that fails (a plugin built with
#      fx_plugin in the workspace) each stop the build with a message naming
#      the attribute; the failing pass's error and its kept reproducer's
#      path are printed and the reproducer replays the failure.
set -euo pipefail
source "$TEST_SRCDIR/fx_sdk/tests/tools/fx_workspace.sh"

work="$TEST_TMPDIR/work"
rm -rf "$work"
mkdir -p "$work/home"

step "install"
install_sdk "$work"
ws="$work/my_model"
new_workspace "$ws"
out="$work/bazel_out"

step "bazel build //:conv_bn_bundle"
start=$(date +%s.%N)
in_workspace "$ws" "$out" "$work/build.log" build //:conv_bn_bundle ||
  { cat "$ws/WORKSPACE" "$work/build.log"; fail "//:conv_bn_bundle does not build"; }
echo "bazel build //:conv_bn_bundle (cold output base): $(seconds_since "$start") s"
bundle="$ws/bazel-bin/conv_bn_bundle/graph.fx.json"
[ -s "$bundle" ] || fail "no $bundle"
grep -q BatchNorm "$ws/model/graph.fx.json" || fail "the template's graph has no BatchNorm"
! grep -q BatchNorm "$bundle" || fail "the optimised bundle still calls BatchNorm"

step "bazel run //:conv_bn_main"
start=$(date +%s.%N)
in_workspace "$ws" "$out" "$work/run.log" run //:conv_bn_main ||
  { cat "$work/run.log"; fail "bazel run //:conv_bn_main"; }
echo "bazel run //:conv_bn_main: $(seconds_since "$start") s"
grep -E "^conv_bn: output \[2, 144\], sum -?[0-9]" "$work/run.log" ||
  { cat "$work/run.log"; fail "conv_bn_main printed no output"; }

step "bazel test //:conv_bn_test"
in_workspace "$ws" "$out" "$work/test.log" test //:conv_bn_test ||
  { cat "$work/test.log" "$ws"/bazel-testlogs/conv_bn_test/test.log; fail "bazel test //:conv_bn_test"; }

step "bazel run //:conv_bn_benchmark"
in_workspace "$ws" "$out" "$work/benchmark.log" run //:conv_bn_benchmark ||
  { cat "$work/benchmark.log"; fail "bazel run //:conv_bn_benchmark"; }
grep -E "^generated C\+\+ run\(\): +[0-9.]+ ms" "$work/benchmark.log" ||
  { cat "$work/benchmark.log"; fail "conv_bn_benchmark printed no time for run()"; }

step "bad input"
mkdir -p "$ws/not_a_plugin" "$ws/missing_input" "$ws/unknown_pipeline" "$ws/failing_pass"
# common ARGS: the template's model through fx_library, ARGS added.
common() {
  cat <<EOT
load("@fx_sdk//share/fx-sdk/bazel:fx_library.bzl", "fx_library")

fx_library(
    name = "model",
    graph = "//:model/graph.fx.json",
    weights = ["//:model/model.weights.pt"],
    $1
)
EOT
}
echo 'exports_files(glob(["model/*"]))' >>"$ws/BUILD.bazel"
echo 'cc_library(name = "not_a_plugin", srcs = ["x.cc"])' >"$ws/not_a_plugin/BUILD.bazel"
common 'pipeline = "dce", plugins = ["@fx_sdk//:libfx_passes.so", ":not_a_plugin"],' \
  >>"$ws/not_a_plugin/BUILD.bazel"
touch "$ws/not_a_plugin/x.cc"
common 'pipeline = "dce", inputs = "no_such_input.pt", plugins = ["@fx_sdk//:libfx_passes.so"],' \
  >"$ws/missing_input/BUILD.bazel"
common 'pipeline = "O7", plugins = ["@fx_sdk//:libfx_passes.so"],' \
  >"$ws/unknown_pipeline/BUILD.bazel"
{
  echo 'load("@fx_sdk//share/fx-sdk/bazel:fx_plugin.bzl", "fx_plugin")'
  echo 'fx_plugin(name = "refuses", srcs = ["refuses.cc"])'
  common 'pipeline = "refuses", plugins = [":librefuses.so"],'
} >"$ws/failing_pass/BUILD.bazel"
cat >"$ws/failing_pass/refuses.cc" <<'EOT'
#include "fx/plugin_api.hpp"

namespace {
bool refuses(fxp::Graph&, const fxp::Options&) {
  throw fxp::Error(FX_INTERNAL, "refuses: this pass refuses every graph");
}
}  // namespace

FXP_PLUGIN("refuses", "0.1", fxp::pass<refuses>("refuses", "always fails"))
EOT
keep=/tmp/fx_library_reproducers/failing_pass/model
rm -rf "$keep"
if in_workspace "$ws" "$out" "$work/bad.log" build --keep_going \
  //not_a_plugin:model_bundle //missing_input:all //unknown_pipeline:model_bundle \
  //failing_pass:model_bundle; then
  cat "$work/bad.log"
  fail "the bad fx_library targets built"
fi
# expect TEXT WHAT: bad.log says TEXT.
expect() {
  grep -qF -- "$1" "$work/bad.log" || { cat "$work/bad.log"; fail "$2: no '$1' in Bazel's output"; }
}
expect "fx_library //not_a_plugin:model: plugins: //not_a_plugin:not_a_plugin is not an fx_plugin" \
  "a cc_library in plugins"
expect "attribute plugins: fx_library //not_a_plugin:model" "a cc_library in plugins"
expect "fx_library //missing_input:model: inputs: no file or target 'no_such_input.pt' in package 'missing_input'" \
  "a missing inputs file"
expect "'O7' is no named pipeline either (named pipelines: O1, O2, inference)" "pipeline O7"
expect "fx_library //unknown_pipeline:model: pipeline 'O7': fx run refused it" "pipeline O7"
expect "refuses: this pass refuses every graph" "a failing pass"
expect "fx_library //failing_pass:model: pipeline 'refuses' failed (fx run exit 1); reproducer: $keep" \
  "a failing pass"
[ -n "$(ls -A "$keep" 2>/dev/null)" ] || fail "no reproducer in $keep"
echo "the failing pass's reproducer: $(ls "$keep")"
rm -rf "$keep"
echo "PASS"
