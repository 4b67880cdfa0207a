#!/usr/bin/env bash
# The plugin template built with Bazel outside this tree, against the
# installed SDK (bazel run //:install -- PREFIX), as a Bazel user would:
#   1. install into a prefix and move it elsewhere;
#   2. copy PREFIX/share/fx-sdk/plugin_template into a fresh directory, make
#      its WORKSPACE from WORKSPACE.example exactly as its README says (the
#      SDK's path filled in, nothing else), and build //:librelu_to_mul.so
#      with Debian's Bazel 4.2.3 offline: every proxy variable points at a
#      closed port, so a download fails at once even on a machine with a
#      network (its own output base under TEST_TMPDIR, batch mode: no server
#      is left behind);
#   3. the plugin exports fx_plugin_get_info alone, and the installed fx,
#      run from /, loads it and produces the template's golden;
#   4. `bazel test //:relu_to_mul_golden`, offline too (the test rules ask
#      for remote_coverage_tools), runs the same golden through Bazel.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

installer="$TEST_SRCDIR/fx_sdk/tools/install/install"
[ -x "$installer" ] || fail "no installer at $installer"
command -v bazel >/dev/null || fail "bazel is not on PATH"
work="$TEST_TMPDIR/work"
rm -rf "$work"
mkdir -p "$work/home"

step "install"
"$installer" "$work/staging" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"
  fail "install failed"
}
sdk="$work/elsewhere/fx-sdk"
mkdir -p "$(dirname "$sdk")"
mv "$work/staging" "$sdk"

step "template: a Bazel workspace against the SDK"
plugin="$work/my_plugin"
cp -r "$sdk/share/fx-sdk/plugin_template" "$plugin"
# The README's command, nothing more.
sed "s|/path/to/fx-sdk|$sdk|g" "$plugin/WORKSPACE.example" >"$plugin/WORKSPACE"
grep -q "path = \"$sdk\"" "$plugin/WORKSPACE" || fail "WORKSPACE has no SDK path"
if grep -v '^ *#' "$plugin/WORKSPACE" | grep -Eq 'http_archive|git_repository|/usr/share'; then
  cat "$plugin/WORKSPACE"
  fail "WORKSPACE.example names something outside the install"
fi

step "bazel build //:librelu_to_mul.so"
# As a user's shell would run it: none of this test's Bazel variables.
clean_env=(env -u RUNFILES_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE
  -u JAVA_RUNFILES -u PYTHON_RUNFILES -u FX_PLUGIN_PATH -u TEST_TMPDIR
  -u BUILD_WORKSPACE_DIRECTORY -u TEST_WORKSPACE HOME="$work/home")
# Offline: Bazel's downloader goes through these, to a port nothing serves.
offline=(http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
  HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 no_proxy= NO_PROXY=)
# bazel COMMAND TARGET in the plugin's workspace; its log in $work/bazel.log.
plugin_bazel() {
  (cd "$plugin" && "${clean_env[@]}" "${offline[@]}" bazel --batch \
    --output_user_root="$work/bazel_root" --output_base="$work/bazel_out" \
    "$1" --spawn_strategy=local --nosandbox_debug --cxxopt=-std=c++17 \
    --color=no --curses=no "$2" >"$work/bazel.log" 2>&1)
}
start=$(date +%s.%N)
plugin_bazel build //:librelu_to_mul.so ||
  { cat "$plugin/WORKSPACE" "$work/bazel.log"; fail "the template does not build with Bazel"; }
end=$(date +%s.%N)
echo "bazel build (cold output base): $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s"
lib="$plugin/bazel-bin/librelu_to_mul.so"
[ -f "$lib" ] || fail "no $lib"

step "exports"
nm -D --defined-only "$lib" | awk '{print $3}' >"$work/exports.txt"
[ "$(cat "$work/exports.txt")" = "fx_plugin_get_info" ] ||
  { cat "$work/exports.txt"; fail "the Bazel plugin exports more than fx_plugin_get_info"; }

step "the installed fx loads it"
fx() { (cd / && "${clean_env[@]}" "$sdk/bin/fx" "$@"); }
fx plugins --no-default-plugins --plugin "$lib" >"$work/plugins.txt" 2>&1 ||
  { cat "$work/plugins.txt"; fail "fx plugins --plugin $lib"; }
grep -q "pass relu_to_mul: relu(x) -> (x > 0) \* x" "$work/plugins.txt" ||
  { cat "$work/plugins.txt"; fail "fx does not list relu_to_mul"; }
fx run "$plugin/tests/relu.fx.json" --plugin "$lib" --pipeline relu_to_mul,dce \
  -o "$work/out/out.fx.json" || fail "fx run with the Bazel-built plugin"
fx code "$work/out/out.fx.json" >"$work/out/code.py"
cmp "$work/out/code.py" "$plugin/tests/relu_to_mul.expected.py" ||
  fail "the Bazel-built plugin's output differs from the golden"

step "bazel test //:relu_to_mul_golden"
plugin_bazel test //:relu_to_mul_golden ||
  { cat "$work/bazel.log" "$plugin"/bazel-testlogs/relu_to_mul_golden/test.log; fail "bazel test //:relu_to_mul_golden"; }
grep -q "PASS: relu_to_mul,dce" "$plugin/bazel-testlogs/relu_to_mul_golden/test.log" ||
  { cat "$plugin/bazel-testlogs/relu_to_mul_golden/test.log"; fail "the golden test did not run"; }
echo "PASS"
