#!/usr/bin/env bash
# One unit of the torch.fx conformance suite (README "Conformance with
# torch.fx's own tests"): tools/conformance/torch_fx_suite.py runs PyTorch
# 1.13.1's own torch.fx test file(s) of the unit under pytest with Debian's
# /usr/bin/python3 and checks every GraphModule state they build against
# torch.fx in the same process (fx_sdk in process, bundles through fx print /
# fx code), then fails unless the results are exactly as
# tools/conformance/torch_fx_suite_expected.py says.
#
#   torch_fx_suite_test.sh UNIT   (test_fx.py, fx, test_fx_experimental.py, ...)
#
# The test files are PyTorch's, outside the repository: tools/setup.sh fetches
# them into $FX_PYTORCH_TESTS, by default /var/cache/fx-sdk/pytorch-1.13.1-tests
# (.bazelrc passes FX_PYTORCH_TESTS through). FX_TORCH_FX_SUITE_K, when set, is
# a pytest -k expression (a partial run: the per-unit state floors are off).
# The reports land in the test's undeclared outputs (outputs.zip).
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: torch_fx_suite_test.sh UNIT" >&2; exit 2; }
unit="$1"
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
tests="${FX_PYTORCH_TESTS:-/var/cache/fx-sdk/pytorch-1.13.1-tests}"

if [ ! -f "$tests/test_fx.py" ] || [ ! -f "$tests/FETCHED" ]; then
  echo "FAIL: PyTorch 1.13.1's torch.fx tests are not in $tests." >&2
  echo "      Run tools/setup.sh (it fetches them from Debian's source" \
       "tarball into that cache), or set FX_PYTORCH_TESTS to a directory" \
       "tools/conformance/fetch_pytorch_tests.py filled." >&2
  exit 1
fi
if ! /usr/bin/python3 -c 'import torch, torchvision, pytest, z3' 2>/dev/null; then
  echo "FAIL: /usr/bin/python3 lacks torch, torchvision, pytest or z3" \
       "(python3-z3); tools/setup.sh installs them" >&2
  exit 1
fi

out="${TEST_TMPDIR}/suite"
k=()
[ -z "${FX_TORCH_FX_SUITE_K:-}" ] || k=(-k "$FX_TORCH_FX_SUITE_K")
/usr/bin/python3 "${runfiles}/tools/conformance/torch_fx_suite.py" \
  --tests "$tests" --out "$out" --only "$unit" "${k[@]}" \
  --sdk "${runfiles}/python" --fx "${runfiles}/tools/fx" \
  --fx-batch "${runfiles}/tools/fx_batch" \
  --expected "${runfiles}/tools/conformance/torch_fx_suite_expected.py"
status=$?
if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]; then
  cp "$out"/report.txt "$out"/report.json "$out"/*.log \
     "$TEST_UNDECLARED_OUTPUTS_DIR"/ 2>/dev/null
fi
exit "$status"
