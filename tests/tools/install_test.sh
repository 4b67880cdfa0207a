#!/usr/bin/env bash
# The installed SDK (bazel run //:install -- PREFIX), used as a plugin author
# outside the tree would:
#   1. install into a prefix, then move the prefix elsewhere (relocatable);
#      the prefix holds the author's guide (share/doc/fx-sdk, the tree's
#      docs/PLUGIN_AUTHORS.md) and the offline Bazel stand-ins;
#   2. the installed bin/fx runs from / with no Bazel runfiles in sight and
#      finds its first-party plugins in PREFIX/lib/fx-sdk/plugins;
#   3. the plugin template (PREFIX/share/fx-sdk/plugin_template) configures,
#      builds and passes its tests with Debian's CMake against the prefix;
#   4. the same plugin built with make + pkg-config exports
#      fx_plugin_get_info alone and runs in the installed fx;
#   5. the Python package imports from PREFIX/lib/python under Debian's
#      /usr/bin/python3 (skipped when it lacks torch), its extension module
#      has no rpath naming the build and finds every library it needs, and it
#      converts a traced module and runs a first-party pass found in the prefix.
# Prints the install's size and the template's configure+build time.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

installer="$TEST_SRCDIR/fx_sdk/tools/install/install"
[ -x "$installer" ] || fail "no installer at $installer"
work="$TEST_TMPDIR/work"
rm -rf "$work"
mkdir -p "$work"

step "install"
"$installer" "$work/staging/prefix" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"
  fail "install failed"
}
for f in bin/fx include/fx/plugin_api.h include/fx/plugin_api.hpp \
  include/fx/plugin_api_inline.hpp include/dlpack/dlpack.h \
  include/fx/plugin_api_arg_inline.hpp \
  include/fx/plugin_api_graph_inline.hpp \
  include/fx/plugin_api_partition_inline.hpp \
  include/fx/plugin_api_pass_inline.hpp \
  include/fx/plugin_api_rewrite_inline.hpp \
  include/fx/plugin_api_run_inline.hpp \
  include/fx/plugin_api_shape_env_inline.hpp \
  include/fx/plugin_api_tensor_inline.hpp \
  include/fx/plugin_api_value_inline.hpp \
  lib/cmake/FxSdk/FxSdkConfig.cmake lib/cmake/FxSdk/FxSdkConfigVersion.cmake \
  lib/pkgconfig/fx-plugin.pc lib/fx-sdk/fx_plugin.map \
  lib/fx-sdk/plugins/libfx_passes.so lib/fx-sdk/plugins/libfx_shape_prop.so \
  share/fx-sdk/plugin_template/CMakeLists.txt share/fx-sdk/runtime-libraries.txt \
  lib/python/fx_sdk/__init__.py lib/python/fx_sdk/graph.py lib/python/fx_sdk/_C.so \
  lib/python/fx_sdk/torchfx_export.py lib/python/fx_sdk/torchfx_import.py \
  share/fx-sdk/torchfx_export.py share/fx-sdk/bazel/fx_sdk.BUILD \
  share/fx-sdk/bazel/fx_plugin.bzl share/fx-sdk/bazel/BUILD.bazel \
  share/fx-sdk/plugin_template/BUILD.bazel \
  share/fx-sdk/plugin_template/WORKSPACE.example \
  share/fx-sdk/bazel/rules_cc/cc/defs.bzl share/fx-sdk/bazel/rules_java/java/defs.bzl \
  share/fx-sdk/bazel/remote_coverage_tools/BUILD.bazel \
  share/doc/fx-sdk/PLUGIN_AUTHORS.md; do
  [ -f "$work/staging/prefix/$f" ] || fail "install left out $f"
done
cmp "$work/staging/prefix/share/doc/fx-sdk/PLUGIN_AUTHORS.md" \
  "$TEST_SRCDIR/fx_sdk/docs/PLUGIN_AUTHORS.md" ||
  fail "the installed author's guide is not docs/PLUGIN_AUTHORS.md"
[ -x "$work/staging/prefix/share/fx-sdk/plugin_template/tests/check_pass.sh" ] ||
  fail "the template's check_pass.sh (Bazel's sh_test) is not executable"
if grep -rlI -- "$work/staging" "$work/staging/prefix"; then
  fail "installed files name the install prefix (not relocatable)"
fi
echo "install size: $(du -sb "$work/staging/prefix" | cut -f1) bytes" \
  "($(du -sh "$work/staging/prefix" | cut -f1)); bin/fx $(stat -c %s "$work/staging/prefix/bin/fx") bytes"

step "relocate"
sdk="$work/elsewhere/fx-sdk"
mkdir -p "$(dirname "$sdk")"
mv "$work/staging/prefix" "$sdk"
rm -rf "$work/staging"

# As a user's shell would run it: no Bazel runfiles variables, from /.
clean_env=(env -u RUNFILES_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE
  -u JAVA_RUNFILES -u PYTHON_RUNFILES -u FX_PLUGIN_PATH)
fx() { (cd / && "${clean_env[@]}" "$sdk/bin/fx" "$@"); }

step "installed fx from /"
fx plugins >"$work/plugins.txt" 2>&1 || { cat "$work/plugins.txt"; fail "fx plugins"; }
grep -q "file:   $sdk/lib/fx-sdk/plugins/libfx_passes.so" "$work/plugins.txt" ||
  { cat "$work/plugins.txt"; fail "fx did not find its first-party plugins in the prefix"; }
grep -q "pass shape_prop" "$work/plugins.txt" || fail "no shape_prop"

step "template: cmake configure, build, ctest"
template="$work/my_plugin"
cp -r "$sdk/share/fx-sdk/plugin_template" "$template"
start=$(date +%s.%N)
(cd "$template" && "${clean_env[@]}" cmake -S . -B build -DCMAKE_PREFIX_PATH="$sdk" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 &&
  "${clean_env[@]}" cmake --build build >>"$work/cmake.log" 2>&1) ||
  { cat "$work/cmake.log"; fail "the template does not build"; }
end=$(date +%s.%N)
echo "template configure + build: $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s"
(cd "$template/build" && "${clean_env[@]}" ctest --output-on-failure) ||
  fail "the template's tests fail"
nm -D --defined-only "$template/build/librelu_to_mul.so" | awk '{print $3}' >"$work/exports.txt"
[ "$(cat "$work/exports.txt")" = "fx_plugin_get_info" ] ||
  { cat "$work/exports.txt"; fail "the CMake plugin exports more than fx_plugin_get_info"; }

step "fx_add_plugin optimises when the project sets no CMAKE_BUILD_TYPE"
(cd "$template" && "${clean_env[@]}" cmake -S . -B build_default \
  -DCMAKE_PREFIX_PATH="$sdk" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  >"$work/cmake_default.log" 2>&1) ||
  { cat "$work/cmake_default.log"; fail "the template does not configure"; }
grep -q -- " -O2 " "$template/build_default/compile_commands.json" ||
  { cat "$template/build_default/compile_commands.json"; fail "the plugin builds without -O2"; }

api="$(sed -n 's/^#define FX_API_VERSION \([0-9]*\).*/\1/p' "$sdk/include/fx/plugin_api.h")"
newer=$((api + 1))
step "find_package(FxSdk $newer) is refused (the SDK is API version $api)"
mkdir -p "$work/too_new"
printf '%s\n' "cmake_minimum_required(VERSION 3.16)" \
  "project(too_new LANGUAGES NONE)" "find_package(FxSdk $newer REQUIRED)" \
  >"$work/too_new/CMakeLists.txt"
if "${clean_env[@]}" cmake -S "$work/too_new" -B "$work/too_new/build" \
  -DCMAKE_PREFIX_PATH="$sdk" >"$work/too_new.log" 2>&1; then
  fail "find_package(FxSdk $newer) succeeded"
fi

step "make + pkg-config"
export PKG_CONFIG_PATH="$sdk/lib/pkgconfig"
cflags="$(pkg-config --cflags fx-plugin)"
echo "pkg-config --cflags fx-plugin: $cflags"
echo "pkg-config --libs fx-plugin: $(pkg-config --libs fx-plugin)"
[ "$(readlink -f "$(sed -n 's/.*-I\([^ ]*\).*/\1/p' <<<"$cflags")")" = "$(readlink -f "$sdk/include")" ] ||
  fail "pkg-config's include directory is not $sdk/include"
make_dir="$work/make_plugin"
cp -r "$sdk/share/fx-sdk/plugin_template" "$make_dir"
make -C "$make_dir" >"$work/make.log" 2>&1 || { cat "$work/make.log"; fail "make"; }
nm -D --defined-only "$make_dir/librelu_to_mul.so" | awk '{print $3}' >"$work/exports.txt"
[ "$(cat "$work/exports.txt")" = "fx_plugin_get_info" ] ||
  { cat "$work/exports.txt"; fail "the make plugin exports more than fx_plugin_get_info"; }
fx run "$make_dir/tests/relu.fx.json" --plugin "$make_dir/librelu_to_mul.so" \
  --pipeline relu_to_mul,dce -o "$work/make_out/out.fx.json" ||
  fail "fx run with the make-built plugin"
fx code "$work/make_out/out.fx.json" >"$work/make_out/code.py"
cmp "$work/make_out/code.py" "$make_dir/tests/relu_to_mul.expected.py" ||
  fail "the make-built plugin's output differs from the golden"

step "Python: import fx_sdk from PREFIX/lib/python"
ext="$sdk/lib/python/fx_sdk/_C.so"
if readelf -d "$ext" | grep -E "RPATH|RUNPATH"; then
  fail "_C.so has an rpath (it must find its libraries on the system path)"
fi
if ldd "$ext" | grep "not found"; then
  fail "_C.so needs libraries the system does not have"
fi
grep -q "^libtorch_python" "$sdk/share/fx-sdk/runtime-libraries.txt" ||
  fail "runtime-libraries.txt leaves out _C.so's libtorch_python"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIPPED the Python step: /usr/bin/python3 lacks torch"
else
  cat >"$work/use_fx_sdk.py" <<'EOF'
import os, sys, torch, torch.fx, fx_sdk
prefix = sys.argv[1]
assert fx_sdk.__file__.startswith(prefix), fx_sdk.__file__
assert fx_sdk.PLUGIN_DIR == os.path.join(prefix, "lib/fx-sdk/plugins"), fx_sdk.PLUGIN_DIR
gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()))
x = torch.rand(2, 4)
torch.testing.assert_close(fx_sdk.from_torch_fx(gm)(x), gm(x))
out, report = fx_sdk.run_pipeline(gm, "dce")
assert report[0]["plugin"] == "fx_passes", report
assert out.code == gm.code
print("fx_sdk from", os.path.dirname(fx_sdk.__file__))
EOF
  preload=()  # --config=asan: the sanitizer runtimes must come first
  if [[ "$(readelf -d "$ext")" == *"[libasan"* ]]; then  # not grep -q: pipefail
    preload=(LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)")
  fi
  (cd / && "${clean_env[@]}" "${preload[@]}" PYTHONPATH="$sdk/lib/python" \
    /usr/bin/python3 "$work/use_fx_sdk.py" "$sdk") || fail "fx_sdk from the prefix"
fi

echo "PASS"
