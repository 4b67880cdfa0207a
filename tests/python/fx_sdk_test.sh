#!/usr/bin/env bash
# Runs one pytest file of the fx_sdk suite (tests/python/*_test.py, the
# first argument) with Debian's /usr/bin/python3 against the package built
# at //python:fx_sdk. Skips (passes, saying why) when python3-torch,
# python3-torchvision or python3-pytest is missing.
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: fx_sdk_test.sh tests/python/NAME_test.py" >&2; exit 2; }
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
if ! /usr/bin/python3 -c 'import torch, torchvision, pytest' 2>/dev/null; then
  echo "SKIPPED: /usr/bin/python3 lacks torch, torchvision or pytest" \
       "(tools/setup.sh installs them)"
  exit 0
fi
export PYTHONPATH="${runfiles}/python"
export FX_SDK_REFERENCE="${TEST_SRCDIR}/shared/reference"
[ -d "$FX_SDK_REFERENCE" ] || FX_SDK_REFERENCE="${runfiles}/external/shared/reference"
# Under --config=asan the extension links the sanitizer runtimes, which must
# come first in the process: preload them into Python.
# (readelf's output read whole: grep -q would stop early, and with pipefail
# readelf's SIGPIPE would make the test think otherwise now and then.)
needed="$(readelf -d "${runfiles}/python/fx_sdk/_C.so" 2>/dev/null)"
if [[ "$needed" == *"[libasan"* ]]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:detect_odr_violation=0}"
fi
cd "${TEST_TMPDIR}" || exit 1
# Each pytest case in Bazel's test.xml, so tools/test.sh counts them.
junit=()
[ -z "${XML_OUTPUT_FILE:-}" ] || junit=(--junitxml="$XML_OUTPUT_FILE")
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider "${junit[@]}" "${runfiles}/$1"
