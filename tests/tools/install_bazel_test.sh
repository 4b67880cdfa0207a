#!/usr/bin/env bash
# The plugin template built with Bazel outside this tree, against the
# installed SDK (bazel run //:install -- PREFIX), as a Bazel user would:
#   1. install into a prefix and move it elsewhere;
#   2. copy PREFIX/share/fx-sdk/plugin_template, make its WORKSPACE from
#      WORKSPACE.example (the SDK's path filled in, the SDK's rules_cc
#      stand-in, and Debian's rules_java for an offline build, as the
#      example says), and build
#      //:librelu_to_mul.so with Debian's Bazel 4.2.3 (its own output base
#      under TEST_TMPDIR, batch mode: no server is left behind);
#   3. the plugin exports fx_plugin_get_info alone, and the installed fx,
#      run from /, loads it and produces the template's golden.
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
# The SDK's path, and the commented-out rules_java block switched on.
sed -e "s|/path/to/fx-sdk|$sdk|g" -e 's|^# \(local_repository(\)|\1|' \
  -e 's|^#     \(name = "rules_java",\)|    \1|' \
  -e 's|^#     \(path = "/usr/share/bazel/rules/java",\)|    \1|' \
  -e 's|^# )$|)|' "$plugin/WORKSPACE.example" >"$plugin/WORKSPACE"
grep -q "path = \"$sdk\"" "$plugin/WORKSPACE" || fail "WORKSPACE has no SDK path"

step "bazel build //:librelu_to_mul.so"
# As a user's shell would run it: none of this test's Bazel variables.
clean_env=(env -u RUNFILES_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE
  -u JAVA_RUNFILES -u PYTHON_RUNFILES -u FX_PLUGIN_PATH -u TEST_TMPDIR
  -u BUILD_WORKSPACE_DIRECTORY -u TEST_WORKSPACE HOME="$work/home")
start=$(date +%s.%N)
(cd "$plugin" && "${clean_env[@]}" bazel --batch \
  --output_user_root="$work/bazel_root" --output_base="$work/bazel_out" \
  build --spawn_strategy=local --nosandbox_debug --cxxopt=-std=c++17 \
  --color=no --curses=no //:librelu_to_mul.so >"$work/bazel.log" 2>&1) ||
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
echo "PASS"
