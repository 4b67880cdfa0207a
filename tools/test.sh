#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is missing,
# replays every fuzz corpus and regression input and runs the conformance
# tests under ASan/UBSan with leak checking on (built with --config=asan), runs
# `bazel test //...`, and closes with one line "N passed, N failed" counted
# from the GoogleTest cases of every test target of both runs (a target that
# fails without a result file counts as one failure).
set -uo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
skipped=0

# Adds the results under the test log directory $1 to the counts.
count_results() {
  local xml line t f e d s bad
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
  done < <(find -L "$1" -name test.xml 2>/dev/null | sort)
}

# Under ASan/UBSan with leak checking on (tools/test.sh's arguments are for
# the main run): every fuzz corpus and regression input (the tests/fuzz
# replay tests), and the conformance tests, which check graph text, code and
# numbers against torch.fx's: the reference bundles (golden_test,
# graph_module_test) and models exported by torch.fx at test time, bounded to
# a few that cover the model families' operators (FUZZING.md, "In CI": the
# cost); and symbolic make_fx against its torch twins (symbolic ints and
# tensors, composite replay: reference counts and raw node pointers). Only
# these targets build with ASan.
asan_targets=(
  //tests/fuzz:all
  //tests/fx_core/capture:symbolic_make_fx_test
  //tests/fx_core/format:golden_test
  //tests/fx_core/runtime:graph_module_test
  //tests/tools:torchvision_conformance_test
  //tests/tools:model_conformance_test
)
torchvision_models=resnet18,mobilenet_v3_small,squeezenet1_1,efficientnet_b0
torchvision_models+=,convnext_tiny,googlenet,regnet_x_400mf,swin_t
other_models=sample.GptDecoder,sample.StatsConvNet,sample.MixedNet
other_models+=,segmentation.lraspp_mobilenet_v3_large
# Build outputs come from the disk cache (.bazelrc) when an earlier build
# made them; tests always run (--nocache_test_results). Entries unused for a
# week are pruned first (Bazel 4 never shrinks the cache).
disk_cache="$HOME/.cache/fx-sdk/bazel-disk-cache"
[ ! -d "$disk_cache" ] || find "$disk_cache" -type f -atime +7 -delete
bazel test --config=asan --nocache_test_results --test_tag_filters= \
  --test_env=ASAN_OPTIONS=detect_leaks=1:detect_odr_violation=0 \
  --test_env=FX_TORCHVISION_MODELS="$torchvision_models" \
  --test_env=FX_OTHER_MODELS="$other_models" \
  "${asan_targets[@]}"
asan_status=$?
asan_logs=$(bazel info --config=asan bazel-testlogs 2>/dev/null)
for t in "${asan_targets[@]}"; do
  t=${t#//}
  t=${t%:all}
  count_results "$asan_logs/${t/://}"
done

bazel test --nocache_test_results //... "$@"
status=$?
count_results bazel-testlogs/

# A target that did not build or run leaves no fresh result: count it.
for s in "$asan_status" "$status"; do
  if [ "$s" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1
  fi
done
[ "$status" -ne 0 ] || status=$asan_status
bazel shutdown >/dev/null 2>&1 || true
[ "$skipped" -eq 0 ] || echo "$skipped skipped (see the test logs for why)"
echo "$passed passed, $failed failed"
exit "$status"
