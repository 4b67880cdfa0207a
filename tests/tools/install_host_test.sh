#!/usr/bin/env bash
# The SDK as a library (bazel run //:install -- PREFIX), used by a C++ host
# application outside the tree, with the install alone:
#   1. install into a prefix, then move the prefix elsewhere;
#   2. lib/libfx_host.so is libfx_host.so.X.Y.Z with its SONAME link
#      libfx_host.so.X.Y (fx_sdk/host.h's FX_HOST_VERSION_*), exports the fx
#      namespace alone, has no rpath and takes LibTorch from the system
#      (NEEDED libtorch*, none of its symbols defined here);
#   3. the example (PREFIX/share/fx-sdk/examples/host_app) configures and
#      builds with Debian's CMake against the prefix (find_package(FxSdk
#      COMPONENTS host), FxSdk::host) and, run from /, traces its module,
#      runs the inference pipeline with the prefix's plugins, runs the
#      InferencePlan and matches eager;
#   4. the same example compiled and linked with pkg-config's fx-host flags
#      runs the same way;
#   5. find_package(FxSdk COMPONENTS no_such) is refused.
# The compiles are the proof that the installed headers are self-contained.
set -euo pipefail

source "$TEST_SRCDIR/fx_sdk/tests/tools/fx_workspace.sh"  # fail, step, install_sdk

work="$TEST_TMPDIR/work"
rm -rf "$work"
mkdir -p "$work"

step "install, relocate"
install_sdk "$work"

step "the library"
header="$sdk/include/fx-sdk/fx_sdk/host.h"
[ -f "$header" ] || fail "no $header"
part() { sed -n "s/^#define FX_HOST_VERSION_$1 \([0-9]*\).*/\1/p" "$header"; }
version="$(part MAJOR).$(part MINOR).$(part PATCH)"
soname="libfx_host.so.$(part MAJOR).$(part MINOR)"
lib="$sdk/lib/libfx_host.so.$version"
[ -f "$lib" ] && [ ! -L "$lib" ] || fail "no library file $lib"
[ "$(readlink "$sdk/lib/$soname")" = "libfx_host.so.$version" ] || fail "$soname is not a link to the library"
[ "$(readlink "$sdk/lib/libfx_host.so")" = "$soname" ] || fail "libfx_host.so is not a link to $soname"
readelf -d "$lib" >"$work/dynamic.txt"
grep -q "(SONAME).*\[$soname\]" "$work/dynamic.txt" || { cat "$work/dynamic.txt"; fail "SONAME is not $soname"; }
if grep -E "RPATH|RUNPATH" "$work/dynamic.txt"; then fail "the library has an rpath"; fi
for needed in libtorch.so libtorch_cpu.so libc10.so; do
  grep -q "(NEEDED).*\[$needed" "$work/dynamic.txt" || fail "the library does not load $needed from the system"
done
# Exported: the defined dynamic symbols bound global, weak or unique (nm's
# upper-case types, u, v and w). The linker keeps a local entry for a
# thread-local a TLS relocation names (LibTorch's inline
# lazy_init_num_threads()::init under -fopenmp); no other object binds to it.
nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Zuvw]$/ {print $3}' | c++filt >"$work/exports.txt"
if grep -vE '^(fx::|(vtable|typeinfo|typeinfo name|VTT|guard variable) for fx::|(non-)?virtual thunk to fx::)' \
  "$work/exports.txt" >"$work/foreign.txt"; then
  head -20 "$work/foreign.txt"
  fail "the library exports $(wc -l <"$work/foreign.txt") symbols outside the fx namespace"
fi
grep -q '^fx::InferencePlan::build(' "$work/exports.txt" || fail "fx::InferencePlan::build is not exported"
grep -q '^typeinfo for fx::FxError' "$work/exports.txt" || fail "typeinfo for fx::FxError is not exported"
echo "libfx_host.so.$version: $(stat -c %s "$lib") bytes, $(wc -l <"$work/exports.txt") exported symbols," \
  "$(find "$sdk/include/fx-sdk" -type f | wc -l) headers"

# As a user's shell would run it: no Bazel runfiles variables, from /.
clean_env=(env -u RUNFILES_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE
  -u JAVA_RUNFILES -u PYTHON_RUNFILES -u FX_PLUGIN_PATH)
# check_run LOG: the example's output says it did every step.
check_run() {
  grep -q "^libfx_host $version (headers $version), plugin API" "$1" || fail "no version line"
  grep -q "^pipeline shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,fuse_window_attention,fuse_pointwise:" "$1" ||
    fail "the inference pipeline did not run"
  grep -Eq "^fuse_linear +ran .* yes$" "$1" || fail "fuse_linear did not change the graph"
  grep -q "torch.ops.fx_inference.linear" "$1" || fail "no fused linear in the code"
  grep -q "^host_app: OK, the plan matches eager" "$1" || fail "no OK line"
}

step "example: cmake configure, build (out of tree, the install alone)"
app="$work/host_app"
cp -r "$sdk/share/fx-sdk/examples/host_app" "$app"
start=$(date +%s.%N)
(cd "$app" && "${clean_env[@]}" cmake -S . -B build -DCMAKE_PREFIX_PATH="$sdk" \
  >"$work/cmake.log" 2>&1 && "${clean_env[@]}" cmake --build build >>"$work/cmake.log" 2>&1) ||
  { cat "$work/cmake.log"; fail "the example does not build with CMake"; }
end=$(date +%s.%N)
echo "configure + build: $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s"
readelf -d "$app/build/host_app" | grep -q "(NEEDED).*\[$soname\]" || fail "host_app does not load $soname"
(cd / && "${clean_env[@]}" "$app/build/host_app") >"$work/run_cmake.log" 2>&1 ||
  { cat "$work/run_cmake.log"; fail "the CMake-built host_app failed"; }
cat "$work/run_cmake.log"
check_run "$work/run_cmake.log"

step "example: pkg-config fx-host"
export PKG_CONFIG_PATH="$sdk/lib/pkgconfig"
[ "$(pkg-config --modversion fx-host)" = "$version" ] || fail "fx-host.pc's version is not $version"
cflags="$(pkg-config --cflags fx-host)" libs="$(pkg-config --libs fx-host)"
libdir="$(pkg-config --variable=libdir fx-host)"
echo "cflags: $cflags"
echo "libs: $libs"
# shellcheck disable=SC2086  # the flags are words
(cd "$app" && "${clean_env[@]}" g++ -std=c++17 $cflags host_app.cc $libs \
  -Wl,-rpath,"$libdir" -o "$work/host_app_pc") >"$work/pc.log" 2>&1 ||
  { cat "$work/pc.log"; fail "the example does not build with pkg-config's flags"; }
(cd / && "${clean_env[@]}" "$work/host_app_pc") >"$work/run_pc.log" 2>&1 ||
  { cat "$work/run_pc.log"; fail "the pkg-config-built host_app failed"; }
check_run "$work/run_pc.log"

step "find_package(FxSdk COMPONENTS no_such) is refused"
mkdir -p "$work/no_such"
printf '%s\n' "cmake_minimum_required(VERSION 3.16)" \
  "project(no_such LANGUAGES NONE)" "find_package(FxSdk REQUIRED COMPONENTS no_such)" \
  >"$work/no_such/CMakeLists.txt"
if "${clean_env[@]}" cmake -S "$work/no_such" -B "$work/no_such/build" \
  -DCMAKE_PREFIX_PATH="$sdk" >"$work/no_such.log" 2>&1; then
  fail "find_package(FxSdk COMPONENTS no_such) succeeded"
fi
grep -q "no such component" "$work/no_such.log" || { cat "$work/no_such.log"; fail "no reason given"; }
echo "PASS"
