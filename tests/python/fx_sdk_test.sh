#!/usr/bin/env bash
# Runs the fx_sdk pytest suite (fx_sdk_test.py) with Debian's /usr/bin/python3
# against the package built at //python:fx_sdk. Skips (passes, saying why)
# when python3-torch, python3-torchvision or python3-pytest is missing.
set -uo pipefail

runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
if ! /usr/bin/python3 -c 'import torch, torchvision, pytest' 2>/dev/null; then
  echo "SKIPPED: /usr/bin/python3 lacks torch, torchvision or pytest" \
       "(tools/setup.sh installs them)"
  exit 0
fi
export PYTHONPATH="${runfiles}/python"
export FX_SDK_REFERENCE="${TEST_SRCDIR}/shared/reference"
[ -d "$FX_SDK_REFERENCE" ] || FX_SDK_REFERENCE="${runfiles}/external/shared/reference"
cd "${TEST_TMPDIR}" || exit 1
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  "${runfiles}/tests/python/fx_sdk_test.py"
