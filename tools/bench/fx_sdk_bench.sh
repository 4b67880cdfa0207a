#!/usr/bin/env bash
# bazel run --config=opt //tools/bench:fx_sdk_bench [-- --repeat N]: runs
# fx_sdk_bench.py under Debian's /usr/bin/python3 with the package and the
# fx command from the runfiles.
set -euo pipefail
runfiles="${RUNFILES_DIR:-$0.runfiles}/fx_sdk"
export PYTHONPATH="$runfiles/python"
exec /usr/bin/python3 "$runfiles/tools/bench/fx_sdk_bench.py" \
  --fx "$runfiles/tools/fx" "$@"
