#!/usr/bin/env bash
# Installs what the SDK builds and tests against, from Debian's packages only.
# Idempotent: does nothing when everything is present. Needs root or sudo.
# Also fetches PyTorch 1.13.1's torch.fx tests into a cache outside the repo
# (fetch_pytorch_tests below).
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-java g++
  libtorch-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libboost-filesystem-dev nlohmann-json3-dev libdlpack-dev libssl-dev graphviz gnuplot-nox
  python3-torch python3-torchvision
  python3-dev pybind11-dev python3-pytest  # the Python package fx_sdk (//python) and its tests
  python3-z3  # torch.fx's test/fx/test_z3_gradual_types.py (//tests/tools:torch_fx_suite_fx)
  python3-sklearn  # its digits data set: a CNN trained and quantized in tests/python/quantize_digits_test
  abigail-tools  # abidw/abidiff: the plugin ABI baseline check (tests/plugin_api/abi)
  cmake pkgconf make  # the SDK install test builds the plugin template out of tree
  strace  # kills bundle writers at every rename and write (tests/python/bundle_crash_test)
  nginx-light  # its WebDAV module serves Bazel's HTTP remote cache (tests/tools:fx_library_remote_cache_test)
  # The fuzz targets' libFuzzer builds (bazel --config=fuzz, tools/fuzz.sh):
  # clang, its libFuzzer and sanitizer runtimes, its linker.
  clang-14 libclang-rt-14-dev lld-14
  # LibTorch (C++ and Python) calls the system libblas.so.3, which is the
  # reference BLAS unless an optimized one is installed: OpenBLAS makes a
  # 512x512 matmul and resnet50 about 10x faster (README, "Threads and BLAS").
  # Installing it switches Debian's libblas.so.3 alternative by priority.
  libopenblas0-pthread
  # oneDNN's headers for the libdnnl.so.2 LibTorch already links: the
  # InferencePlan calls its convolutions directly (prepacked weights, fused
  # post-ops; fx_core/compile/onednn_conv).
  libdnnl-dev
  # SLEEF's header for the libsleef.so.3 LibTorch already links: ATen's AVX2
  # vector class calls it in the InferencePlan's fused pointwise loop
  # (fx_core/compile/pointwise_loop.cc).
  libsleef-dev
  # TCMalloc (gperftools, minimal): the `fx` command's allocator; glibc's
  # malloc makes the larger passes 1.3-2x slower (BENCHMARKS.md, issue 36).
  libtcmalloc-minimal4
)

# Which BLAS LibTorch will load (Debian's libblas.so.3 alternative).
report_blas() {
  local alt
  alt=$(update-alternatives --query "libblas.so.3-$(uname -m)-linux-gnu" 2>/dev/null |
    sed -n 's/^Value: //p')
  echo "setup: libblas.so.3 is ${alt:-unknown}"
  case "$alt" in
    *openblas*) ;;
    *) echo "setup: warning: not OpenBLAS; the alternative may be set by hand:" \
      "update-alternatives --config libblas.so.3-$(uname -m)-linux-gnu" >&2 ;;
  esac
}

# PyTorch 1.13.1's own torch.fx tests, for the conformance suite
# (//tests/tools:torch_fx_suite_*): from Debian's source tarball (downloaded
# from deb.debian.org once, sha256-checked) into a cache outside the
# repository, $FX_PYTORCH_TESTS or /var/cache/fx-sdk/pytorch-1.13.1-tests.
# Not fatal here: without them those targets fail, saying to run setup.
fetch_pytorch_tests() {
  local dest="${FX_PYTORCH_TESTS:-/var/cache/fx-sdk/pytorch-1.13.1-tests}"
  local parent
  parent="$(dirname "$dest")"
  if ! { mkdir -p "$parent" 2>/dev/null && [ -w "$parent" ]; }; then
    $sudo install -d -m 0755 -o "$(id -u)" -g "$(id -g)" "$parent" || return 1
  fi
  /usr/bin/python3 "$(dirname "$0")/conformance/fetch_pytorch_tests.py" --dest "$dest"
}

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
report_blas
fetch_pytorch_tests || echo "setup: warning: PyTorch's torch.fx tests not fetched;" \
  "//tests/tools:torch_fx_suite_* will fail" >&2
echo "setup: done"
