#!/usr/bin/env bash
# Installs the fx SDK into PREFIX:   bazel run //:install -- PREFIX
#
#   PREFIX/bin/fx                           the fx command
#   PREFIX/lib/fx-sdk/plugins/libfx_*.so    the first-party plugins (fx finds
#                                           them here, plugin_discovery.h)
#   PREFIX/include/fx/plugin_api.h          the plugin contract: the C header,
#   PREFIX/include/fx/plugin_api{,_inline,_*_inline}.hpp   the C++ wrapper,
#   PREFIX/include/dlpack/dlpack.h          and DLPack, which the header uses
#   PREFIX/lib/cmake/FxSdk/                 find_package(FxSdk): the targets
#                                           FxSdk::plugin_api and FxSdk::fx,
#                                           fx_add_plugin(NAME SOURCES ...)
#   PREFIX/lib/pkgconfig/fx-plugin.pc       pkg-config --cflags --libs fx-plugin
#   PREFIX/lib/fx-sdk/fx_plugin.map         linker version script: a plugin
#                                           exports fx_plugin_get_info alone
#   PREFIX/share/fx-sdk/bazel/              the SDK as a Bazel repository:
#                                           fx_sdk.BUILD (new_local_repository's
#                                           build_file: @fx_sdk//:plugin_api)
#                                           fx_plugin.bzl (fx_plugin macro),
#                                           fx_library.bzl (fx_library macro:
#                                           its body fx_library_core.bzl and
#                                           NAME_test's and NAME_benchmark's
#                                           mains, in BUILD.bazel) and
#                                           rules_cc/, rules_java/,
#                                           remote_coverage_tools/ (stand-ins
#                                           for what Bazel 4 downloads:
#                                           offline builds and tests)
#   PREFIX/share/fx-sdk/plugin_template/    a plugin project to copy (CMake,
#                                           make + pkg-config, or Bazel:
#                                           BUILD.bazel, WORKSPACE.example)
#   PREFIX/share/fx-sdk/fx_library_template/   a Bazel workspace to copy: a
#                                           model through fx_library into a
#                                           C++ program
#   PREFIX/share/fx-sdk/torchfx_export.py   the torch.fx exporter fx
#                                           plugin-check --torchvision runs
#   PREFIX/lib/libfx_host.so               the SDK as a C++ library for host
#                                           applications (tools/host): the
#                                           real file libfx_host.so.X.Y.Z,
#                                           its SONAME link libfx_host.so.X.Y
#                                           and libfx_host.so; fx_sdk/host.h
#                                           says which headers are stable and
#                                           how versions are named. LibTorch,
#                                           Abseil, ... stay the system's
#   PREFIX/include/fx-sdk/                  its headers at their tree paths
#                                           (fx_sdk/host.h, fx_core/...,
#                                           plugin_api/...): those host.h
#                                           reaches, nothing else
#   PREFIX/lib/pkgconfig/fx-host.pc         pkg-config --cflags --libs fx-host
#                                           (FxSdk::host is the CMake target:
#                                           find_package(FxSdk COMPONENTS host))
#   PREFIX/share/fx-sdk/examples/host_app/  a host application to copy: trace,
#                                           pipeline with plugins, plan, eager
#                                           comparison (CMake, pkg-config)
#   PREFIX/lib/python/fx_sdk/               the Python package (import fx_sdk
#                                           with PYTHONPATH=PREFIX/lib/python);
#                                           it loads the plugins above
#   PREFIX/share/doc/fx-sdk/PLUGIN_AUTHORS.md   the plugin author's guide
#                                           (docs/PLUGIN_AUTHORS.md)
#   PREFIX/share/fx-sdk/runtime-libraries.txt   what bin/fx and _C.so load
#                                           from the system, and the packages
#                                           that provide it
#
# No file names PREFIX: the tree may be moved or copied anywhere (the CMake
# package and the .pc file find the prefix from their own location). bin/fx
# links LibTorch, Abseil, Boost.Filesystem and OpenSSL from the system library
# path (tools/setup.sh's Debian packages; runtime-libraries.txt lists them),
# so it needs no rpath and runs from any directory without the source tree.
# So does the package's extension module fx_sdk/_C.so: the SDK is linked into
# it, and LibTorch (with libtorch_python, which Debian's python3-torch uses)
# comes from the system library path.
#
# Re-installing into the same PREFIX replaces the SDK's own directories
# (include/fx, include/fx-sdk, lib/fx-sdk, lib/cmake/FxSdk, lib/python/fx_sdk,
# share/fx-sdk, share/doc/fx-sdk) and files (lib/libfx_host.so*).
set -euo pipefail

usage() { echo "usage: bazel run //:install -- PREFIX" >&2; exit 2; }
[ $# -eq 1 ] && [ -n "$1" ] || usage
prefix="$1"
# bazel run starts in the runfiles; a relative PREFIX means the caller's cwd.
if [[ "$prefix" != /* ]]; then
  prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
fi

# The runfiles: bazel run and bazel-bin/tools/install/install, or a test's.
runfiles=""
for r in "${RUNFILES_DIR:-}" "$0.runfiles" "${TEST_SRCDIR:-}"; do
  if [ -n "$r" ] && [ -f "$r/fx_sdk/tools/install/fx-plugin.pc.in" ]; then
    runfiles="$r"
    break
  fi
done
[ -n "$runfiles" ] || { echo "install: runfiles not found (run it with bazel run //:install -- PREFIX)" >&2; exit 1; }
src="$runfiles/fx_sdk"
dlpack=""
for d in "$runfiles/system/include/dlpack/dlpack.h" "$src/external/system/include/dlpack/dlpack.h"; do
  [ -f "$d" ] && { dlpack="$d"; break; }
done
[ -n "$dlpack" ] || { echo "install: dlpack.h not in the runfiles" >&2; exit 1; }

api_version="$(sed -n 's/^#define FX_API_VERSION \([0-9]*\).*/\1/p' "$src/plugin_api/include/fx/plugin_api.h")"
[ -n "$api_version" ] || { echo "install: FX_API_VERSION not found" >&2; exit 1; }

# The headers fx_sdk/host.h reaches through quoted includes, and those of
# the code fx_library generates and its drivers (the codegen support, Value),
# each under PREFIX/include/fx-sdk at its path in the tree (fx_sdk/host.h
# itself lives in tools/host). An include of ours (fx_core/, host/,
# fx_sdk/) that is not in the runfiles stops the install; others (LibTorch,
# Abseil, the plugin contract fx/..., installed above) come from elsewhere.
install_host_headers() {
  local dest="$prefix/include/fx-sdk" seen=" " h path inc
  local todo=("fx_sdk/host.h" "fx_core/cppgen/cpp_codegen_support.h" "fx_core/runtime/value.h")
  while [ ${#todo[@]} -gt 0 ]; do
    h="${todo[0]}"
    todo=("${todo[@]:1}")
    case "$seen" in *" $h "*) continue ;; esac
    seen+="$h "
    case "$h" in
      fx_sdk/*) path="$src/tools/host/$h" ;;
      *) path="$src/$h" ;;
    esac
    [ -f "$path" ] || { echo "install: header $h is not in the runfiles" >&2; exit 1; }
    install -D -m 644 "$path" "$dest/$h"
    while read -r inc; do
      case "$inc" in
        fx_core/* | host/* | fx_sdk/*)
          todo+=("$inc") ;;
      esac
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$path")
  done
}

# host_version_part MAJOR|MINOR|PATCH HEADER: FX_HOST_VERSION_<part>.
host_version_part() {
  sed -n "s/^#define FX_HOST_VERSION_$1 \([0-9]*\).*/\1/p" "$2"
}

# install_host_library LIB HEADER: LIB as lib/libfx_host.so.MAJOR.MINOR.PATCH
# (HEADER's FX_HOST_VERSION_*), with the links libfx_host.so.MAJOR.MINOR
# (its SONAME, which must agree) and libfx_host.so; the headers; the
# pkg-config file fx-host.pc; the example host application.
install_host_library() {
  local lib="$1" header="$2" major minor patch soname
  major="$(host_version_part MAJOR "$header")"
  minor="$(host_version_part MINOR "$header")"
  patch="$(host_version_part PATCH "$header")"
  [ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] ||
    { echo "install: FX_HOST_VERSION_* not found in $header" >&2; exit 1; }
  host_version="$major.$minor.$patch"
  soname="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
  [ "$soname" = "libfx_host.so.$major.$minor" ] || {
    echo "install: $lib has SONAME '$soname', fx_sdk/host.h says version $host_version (libfx_host.so.$major.$minor)" >&2
    exit 1
  }
  install -m 755 "$lib" "$prefix/lib/libfx_host.so.$host_version"
  ln -s "libfx_host.so.$host_version" "$prefix/lib/$soname"
  ln -s "$soname" "$prefix/lib/libfx_host.so"
  install_host_headers
  local torch_include="/usr/include/torch/csrc/api/include"
  sed -e "s/@FX_HOST_VERSION@/$host_version/g" -e "s|@TORCH_API_INCLUDE@|$torch_include|g" \
    "$src/tools/install/fx-host.pc.in" >"$prefix/lib/pkgconfig/fx-host.pc"
  chmod 644 "$prefix/lib/pkgconfig/fx-host.pc"
  install -d "$prefix/share/fx-sdk/examples/host_app"
  install -m 644 "$src/sdk_examples/host_app/host_app.cc" \
    "$src/sdk_examples/host_app/CMakeLists.txt" "$src/sdk_examples/host_app/README.md" \
    "$prefix/share/fx-sdk/examples/host_app/"
}

mkdir -p "$prefix"
rm -rf "$prefix/include/fx" "$prefix/include/fx-sdk" "$prefix"/lib/libfx_host.so* "$prefix/lib/fx-sdk" "$prefix/lib/cmake/FxSdk" \
  "$prefix/lib/python/fx_sdk" "$prefix/share/fx-sdk" "$prefix/share/doc/fx-sdk"
install -d "$prefix/bin" "$prefix/include/fx" "$prefix/include/dlpack" \
  "$prefix/lib/fx-sdk/plugins" "$prefix/lib/cmake/FxSdk" "$prefix/lib/pkgconfig" \
  "$prefix/lib/python/fx_sdk" "$prefix/share/fx-sdk" "$prefix/share/doc/fx-sdk"

install -m 755 "$src/tools/fx" "$prefix/bin/fx"
install -m 644 "$src/tools/torchfx_export.py" "$prefix/share/fx-sdk/"
for p in "$src"/plugins/libfx_*.so; do
  install -m 755 "$p" "$prefix/lib/fx-sdk/plugins/"
done
for h in "$src"/plugin_api/include/fx/*.h "$src"/plugin_api/include/fx/*.hpp; do
  install -m 644 "$h" "$prefix/include/fx/"
done
install -m 644 "$dlpack" "$prefix/include/dlpack/dlpack.h"
install -m 644 "$src/docs/PLUGIN_AUTHORS.md" "$prefix/share/doc/fx-sdk/"
install -m 644 "$src/tools/install/fx_plugin.map" "$prefix/lib/fx-sdk/"
install -m 644 "$src/tools/install/FxSdkConfig.cmake" "$prefix/lib/cmake/FxSdk/"
sed "s/@FX_API_VERSION@/$api_version/g" "$src/tools/install/FxSdkConfigVersion.cmake.in" \
  >"$prefix/lib/cmake/FxSdk/FxSdkConfigVersion.cmake"
sed "s/@FX_API_VERSION@/$api_version/g" "$src/tools/install/fx-plugin.pc.in" \
  >"$prefix/lib/pkgconfig/fx-plugin.pc"
chmod 644 "$prefix/lib/cmake/FxSdk/FxSdkConfigVersion.cmake" "$prefix/lib/pkgconfig/fx-plugin.pc"

# The SDK as a library for C++ hosts (tools/host/fx_sdk/host.h): the
# library under its version's names, its headers, CMake and pkg-config.
install_host_library "$src/tools/host/libfx_host.so" "$src/tools/host/fx_sdk/host.h"

# The Python package, without its copy of the plugins (it finds them in
# lib/fx-sdk/plugins).
install -m 755 "$src/python/fx_sdk/_C.so" "$prefix/lib/python/fx_sdk/"
for f in __init__.py graph.py torchfx_export.py torchfx_import.py; do
  install -m 644 "$src/python/fx_sdk/$f" "$prefix/lib/python/fx_sdk/"
done

# The SDK as a Bazel repository (fx_sdk.BUILD says how to declare it).
install -d "$prefix/share/fx-sdk/bazel"
install -m 644 "$src/tools/install/fx_sdk.BUILD" "$src/tools/install/fx_plugin.bzl" \
  "$src/tools/install/fx_library.bzl" "$src/tools/bazel/fx_library_core.bzl" \
  "$src/tools/bazel/fx_library_test_main.cc" "$src/tools/bazel/fx_library_benchmark_main.cc" \
  "$prefix/share/fx-sdk/bazel/"
install -m 644 "$src/tools/install/fx_sdk_bazel.BUILD" "$prefix/share/fx-sdk/bazel/BUILD.bazel"
# Stand-ins for what Bazel 4's WORKSPACE suffix downloads, so a plugin's
# workspace builds and tests offline (WORKSPACE.example declares them), each
# its own workspace (so not a package of @fx_sdk):
#   rules_cc               third_party/rules_cc's forwarding cc/defs.bzl
#   rules_java             rules_java_defs.bzl as java/defs.bzl (every build
#                          reads @bazel_tools//tools/jdk, which loads it)
#   remote_coverage_tools  the two filegroups `bazel test` asks for
# stand_in NAME [SUBDIR DEFS]: the repository NAME under share/fx-sdk/bazel,
# with DEFS installed as SUBDIR/defs.bzl.
stand_in() {
  local dir="$prefix/share/fx-sdk/bazel/$1"
  install -d "$dir"
  echo "workspace(name = \"$1\")" >"$dir/WORKSPACE"
  : >"$dir/BUILD.bazel"
  if [ $# -eq 3 ]; then
    install -D -m 644 "$3" "$dir/$2/defs.bzl"
    echo 'exports_files(["defs.bzl"])' >"$dir/$2/BUILD.bazel"
    chmod 644 "$dir/$2/BUILD.bazel"
  fi
  chmod 644 "$dir/WORKSPACE" "$dir/BUILD.bazel"
}
stand_in rules_cc cc "$runfiles/rules_cc/cc/defs.bzl"
stand_in rules_java java "$src/tools/install/rules_java_defs.bzl"
stand_in remote_coverage_tools
{
  echo '# What `bazel test` asks for; coverage itself is not provided.'
  echo 'package(default_visibility = ["//visibility:public"])'
  echo
  echo 'filegroup(name = "coverage_report_generator")'
  echo
  echo 'filegroup(name = "lcov_merger")'
} >"$prefix/share/fx-sdk/bazel/remote_coverage_tools/BUILD.bazel"
chmod 644 "$prefix/share/fx-sdk/bazel/BUILD.bazel"

# The template, without the monorepo's Bazel glue (BUILD.bazel); its
# out-of-tree Bazel BUILD (plugin.BUILD) becomes its BUILD.bazel.
template="$src/sdk_examples/plugin_template"
# Its scripts stay executable (Bazel's sh_test runs tests/check_pass.sh).
(cd "$template" && find -L . -type f ! -name BUILD.bazel ! -name plugin.BUILD ! -name '*_test.sh') | while read -r f; do
  mode=644
  case "$f" in *.sh) mode=755 ;; esac
  install -D -m "$mode" "$template/$f" "$prefix/share/fx-sdk/plugin_template/$f"
done
install -m 644 "$template/plugin.BUILD" "$prefix/share/fx-sdk/plugin_template/BUILD.bazel"

# The fx_library template likewise: fx_library.BUILD becomes its BUILD.bazel.
template="$src/sdk_examples/fx_library_template"
(cd "$template" && find -L . -type f ! -name BUILD.bazel ! -name fx_library.BUILD) | while read -r f; do
  install -D -m 644 "$template/$f" "$prefix/share/fx-sdk/fx_library_template/$f"
done
install -m 644 "$template/fx_library.BUILD" "$prefix/share/fx-sdk/fx_library_template/BUILD.bazel"

# What bin/fx loads from the system (its direct dependencies) and from which
# Debian packages, for whoever copies PREFIX to another machine.
{
  echo "# Shared libraries bin/fx and lib/python/fx_sdk/_C.so need from the system"
  echo "# library path, and the Debian packages that provide them (install those"
  echo "# on another machine)."
  readelf -d "$prefix/bin/fx" "$prefix/lib/python/fx_sdk/_C.so" 2>/dev/null |
    sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u | while read -r lib; do
    path="$(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 == l && /x86-64|x86_64/ {print $NF}' | head -1)" || true
    pkg=""
    if [ -n "$path" ] && command -v dpkg >/dev/null; then
      # dpkg knows a file by the path its package installed it at, which a
      # merged /usr may have turned into a link: try both spellings.
      for p in "$path" "$(readlink -f "$path")" "/usr$path"; do
        pkg="$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1)" || true
        [ -z "$pkg" ] || break
      done
    fi
    echo "$lib ${path:-?} ${pkg:-?}"
  done
} >"$prefix/share/fx-sdk/runtime-libraries.txt"

echo "installed the fx SDK (plugin API $api_version) in $prefix"
echo "  fx:      $prefix/bin/fx"
echo "  CMake:   find_package(FxSdk) with CMAKE_PREFIX_PATH=$prefix"
echo "  pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs fx-plugin"
echo "  host library: $prefix/lib/libfx_host.so.$host_version: find_package(FxSdk COMPONENTS host), pkg-config fx-host, $prefix/share/fx-sdk/examples/host_app"
echo "  template: $prefix/share/fx-sdk/plugin_template"
echo "  fx_library: $prefix/share/fx-sdk/fx_library_template (Bazel)"
echo "  guide:   $prefix/share/doc/fx-sdk/PLUGIN_AUTHORS.md"
echo "  Python:  PYTHONPATH=$prefix/lib/python /usr/bin/python3 -c 'import torch, fx_sdk'"
