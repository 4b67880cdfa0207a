#!/usr/bin/env bash
# The plugin ABI against its released baseline, with libabigail (Debian's
# abigail-tools, installed by tools/setup.sh). abi_probe.c reaches every
# type of fx/plugin_api.h; its object files carry their DWARF.
#  1. The probe built against the frozen version-1 header
#     (v1/fx/plugin_api.h) is exactly baseline/abi_v1.xml: the copy and the
#     baseline agree.
#  2. The probe built against the current header, seen as a version-1
#     binary sees it (abi_view.py: appended members dropped), is exactly the
#     baseline: nothing released was inserted, removed, moved or retyped.
# Regenerate the baseline only when releasing a new version from a frozen
# copy of its header, never to make this test pass.
set -euo pipefail

here=tests/plugin_api/abi
for tool in abidw abidiff; do
  if ! command -v "$tool" >/dev/null; then
    echo "abi_baseline_test: '$tool' is missing: install Debian's" \
      "abigail-tools (tools/setup.sh installs it)" >&2
    exit 1
  fi
done

object() { find -L "$here/_objs/$1" -name '*.o' | head -n 1; }
record() {
  abidw --no-corpus-path --no-show-locs --no-comp-dir-path "$(object "$1")"
}

tmp=${TEST_TMPDIR:-$(mktemp -d)}
record abi_probe_v1 >"$tmp/v1.xml"
record abi_probe >"$tmp/current.xml"
/usr/bin/python3 "$here/abi_view.py" "$here/baseline/abi_v1.xml" \
  "$tmp/current.xml" "$tmp/current_as_v1.xml"

status=0
if ! abidiff "$here/baseline/abi_v1.xml" "$tmp/v1.xml" >"$tmp/copy.txt"; then
  echo "FAIL: the version-1 header copy no longer matches the baseline:" >&2
  cat "$tmp/copy.txt" >&2
  status=1
fi
if ! abidiff "$here/baseline/abi_v1.xml" "$tmp/current_as_v1.xml" \
  >"$tmp/current.txt"; then
  echo "FAIL: fx/plugin_api.h breaks the released version-1 ABI (only" \
    "appending entries and struct members is allowed):" >&2
  cat "$tmp/current.txt" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "PASS: version-1 ABI intact ($(grep -c \
  '<data-member' "$here/baseline/abi_v1.xml") struct members checked)"
exit "$status"
