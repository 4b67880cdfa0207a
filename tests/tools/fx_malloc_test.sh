#!/usr/bin/env bash
# The fx command's allocator (tools/BUILD.bazel, :malloc): the dynamic linker
# binds malloc, free and operator new, for fx itself and for LibTorch, to
# TCMalloc; in a sanitizer build (fx_malloc=system) to the sanitizer's or
# glibc's, with no TCMalloc loaded.
set -euo pipefail
fx="$1"
expected="$2"  # tcmalloc or system
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

bindings="$TEST_TMPDIR/bindings.txt"
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TEST_TMPDIR/ld" "$fx" --help >/dev/null
cat "$TEST_TMPDIR"/ld.* >"$bindings"
for symbol in malloc free _Znwm; do
  from_torch="$(grep -m1 "binding file [^ ]*libtorch_cpu[^ ]* .*normal symbol \`$symbol'" "$bindings" || true)"
  [ -n "$from_torch" ] || fail "LibTorch does not call $symbol (no binding seen)"
  case "$expected" in
    tcmalloc)
      grep -q "to [^ ]*libtcmalloc_minimal" <<<"$from_torch" ||
        fail "LibTorch's $symbol is not TCMalloc's: $from_torch"
      ;;
    system)
      if grep -q "libtcmalloc" <<<"$from_torch"; then
        fail "a sanitizer build's $symbol is TCMalloc's: $from_torch"
      fi
      ;;
    *) fail "unknown expectation '$expected'" ;;
  esac
  echo "$symbol: ${from_torch##*binding file }"
done
echo "PASS: fx allocates with $expected"
