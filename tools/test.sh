#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is missing,
# runs `bazel test //...`, and closes with one line "N passed, N failed" counted
# from the GoogleTest cases of every test target (a target that fails without
# a result file counts as one failure).
set -uo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

bazel test //... "$@"
status=$?

passed=0
failed=0
skipped=0
while IFS= read -r xml; do
  # GoogleTest: <testsuites tests="N" failures="F" disabled="D" errors="E" ...>;
  # Bazel's own XML for other tests (sh_test): <testsuite tests="1" ...>.
  line=$(grep -m1 -o '<testsuites [^>]*>' "$xml" || true)
  [ -n "$line" ] || line=$(grep -m1 -o '<testsuite [^>]*>' "$xml" || true)
  if [ -z "$line" ]; then
    failed=$((failed + 1))
    continue
  fi
  t=$(sed -n 's/.* tests="\([0-9]*\)".*/\1/p' <<<"$line")
  f=$(sed -n 's/.* failures="\([0-9]*\)".*/\1/p' <<<"$line")
  e=$(sed -n 's/.* errors="\([0-9]*\)".*/\1/p' <<<"$line")
  d=$(sed -n 's/.* disabled="\([0-9]*\)".*/\1/p' <<<"$line")
  # Skipped cases (GTEST_SKIP) are neither passed nor failed.
  s=$(grep -c 'result="skipped"' "$xml" || true)
  bad=$(( ${f:-0} + ${e:-0} ))
  failed=$((failed + bad))
  skipped=$((skipped + ${s:-0}))
  passed=$((passed + ${t:-0} - bad - ${d:-0} - ${s:-0}))
done < <(find -L bazel-testlogs/ -name test.xml 2>/dev/null | sort)

# A target that did not build or run leaves no fresh result: count it.
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1
fi
bazel shutdown >/dev/null 2>&1 || true
[ "$skipped" -eq 0 ] || echo "$skipped skipped (see the test logs for why)"
echo "$passed passed, $failed failed"
exit "$status"
