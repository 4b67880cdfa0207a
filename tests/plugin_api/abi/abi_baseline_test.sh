#!/usr/bin/env bash
# The plugin ABI against every released baseline, with libabigail (Debian's
# abigail-tools, installed by tools/setup.sh). abi_probe.c reaches every
# type of fx/plugin_api.h; its object files carry their DWARF. For each
# release R (released/README.md), oldest first:
#  1. The probe built against the frozen header released/R is exactly
#     baseline/abi_R.xml: the copy and the baseline agree.
#  2. The probe built against the current header, seen as a binary built
#     against R sees it (abi_view.py: appended members dropped), is exactly
#     that baseline: nothing released was inserted, removed, moved or
#     retyped. For the first release (v1_106) the seven entries the host
#     serves at their first-release offsets through its forwarders are
#     moved back there first (FIRST_RELEASE_FORWARDED); nothing else is
#     excused.
# Add a baseline only when releasing a new version, from the frozen copy of
# its header; never regenerate one to make this test pass.
set -euo pipefail

here=tests/plugin_api/abi
releases=(v1_106 v1_123 v2 v3 v4 v5 v6 v7 v8 v9 v10 v11 v12 v13 v14 v15 v16 v17)
FIRST_RELEASE_FORWARDED=RegisterCustomOp,RegisterLeafModuleRule,CallHasArg
FIRST_RELEASE_FORWARDED+=,CallTensorArg,CallTensorMeta,CallIntArg,CallFloatArg

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
record abi_probe_current >"$tmp/current.xml"
status=0
for r in "${releases[@]}"; do
  baseline="$here/baseline/abi_$r.xml"
  forwarded=""
  [ "$r" = v1_106 ] && forwarded=$FIRST_RELEASE_FORWARDED
  record "abi_probe_$r" >"$tmp/$r.xml"
  /usr/bin/python3 "$here/abi_view.py" "$baseline" "$tmp/current.xml" \
    "$tmp/current_as_$r.xml" "$forwarded"
  if ! abidiff "$baseline" "$tmp/$r.xml" >"$tmp/copy_$r.txt"; then
    echo "FAIL: the frozen header released/$r no longer matches its" \
      "baseline:" >&2
    cat "$tmp/copy_$r.txt" >&2
    status=1
  fi
  if ! abidiff "$baseline" "$tmp/current_as_$r.xml" >"$tmp/diff_$r.txt"; then
    echo "FAIL: fx/plugin_api.h breaks the released ABI $r (only appending" \
      "entries and struct members is allowed):" >&2
    cat "$tmp/diff_$r.txt" >&2
    status=1
  fi
  [ "$status" -eq 0 ] && echo "PASS: $r intact ($(grep -c '<data-member' \
    "$baseline") struct members checked)"
done
exit "$status"
