# Sourced by the tests that build on the installed SDK in a fresh Bazel
# workspace (install_fx_library_test.sh, fx_library_remote_cache_test.sh),
# as install_bazel_test.sh does for the plugin template: install into a
# prefix and move it, copy a template out of it, and run Debian's Bazel
# 4.2.3 there offline (every proxy variable points at a closed port), in
# batch mode (no server is left behind), with its output under TEST_TMPDIR
# and none of this test's Bazel variables.

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# install_sdk WORK: installs the SDK into WORK/staging and moves it to
# WORK/elsewhere/fx-sdk; sets sdk.
install_sdk() {
  local installer="$TEST_SRCDIR/fx_sdk/tools/install/install"
  [ -x "$installer" ] || fail "no installer at $installer"
  command -v bazel >/dev/null || fail "bazel is not on PATH"
  "$installer" "$1/staging" >"$1/install.log" 2>&1 || {
    cat "$1/install.log"
    fail "install failed"
  }
  sdk="$1/elsewhere/fx-sdk"
  mkdir -p "$(dirname "$sdk")"
  mv "$1/staging" "$sdk"
}

# new_workspace DIR: the installed fx_library template in DIR, its WORKSPACE
# made from WORKSPACE.example by the README's sed alone.
new_workspace() {
  cp -r "$sdk/share/fx-sdk/fx_library_template" "$1"
  sed "s|/path/to/fx-sdk|$sdk|g" "$1/WORKSPACE.example" >"$1/WORKSPACE"
  grep -q "path = \"$sdk\"" "$1/WORKSPACE" || fail "$1/WORKSPACE has no SDK path"
}

# in_workspace DIR OUTPUT_BASE LOG bazel ARGS...: ARGS in DIR's workspace,
# its own output base, everything said in LOG.
in_workspace() {
  local dir="$1" out="$2" log="$3"
  shift 3
  local command="$1"
  shift
  (cd "$dir" && env -u RUNFILES_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE \
    -u JAVA_RUNFILES -u PYTHON_RUNFILES -u FX_PLUGIN_PATH -u TEST_TMPDIR \
    -u BUILD_WORKSPACE_DIRECTORY -u TEST_WORKSPACE HOME="$work/home" \
    http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 \
    HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 no_proxy= NO_PROXY= \
    bazel --batch --output_user_root="$work/bazel_root" --output_base="$out" \
    "$command" --spawn_strategy=local --color=no --curses=no "$@" >"$log" 2>&1)
}

# seconds_since START: wall time since START (date +%s.%N), one decimal.
seconds_since() {
  awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'
}
