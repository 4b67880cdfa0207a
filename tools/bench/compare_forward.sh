#!/usr/bin/env bash
# Forward time of resnet50 (batch 1) and a 400-op small-tensor chain, three
# ways in one run: Python eager, Python torch.fx GraphModule, and the SDK's
# GraphModule in C++ (plus its Interpreter). Prints a Markdown table with
# the ratios. Usage: tools/bench/compare_forward.sh [--repeat N]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bazel build --config=opt //tools/bench:forward_benchmark >/dev/null 2>&1
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)/tools/bench/forward_benchmark
python_json=$(/usr/bin/python3 tools/bench/forward_bench.py "$dir" "$@")
cpp_json=$("$bin" "$dir" resnet50 small_ops "$@")
/usr/bin/python3 - "$python_json" "$cpp_json" <<'PY'
import json, sys
py, cpp = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("| model | nodes | Python eager | Python torch.fx GraphModule | SDK GraphModule (C++) | SDK Interpreter (C++) | eager / SDK | torch.fx / SDK |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name in py:
    p, c = py[name], cpp[name]
    print(f"| {name} | {p['nodes']} | {p['eager_us']:.0f} us | {p['torchfx_us']:.0f} us | "
          f"{c['sdk_us']:.0f} us | {c['interpreter_us']:.0f} us | "
          f"{p['eager_us'] / c['sdk_us']:.2f}x | {p['torchfx_us'] / c['sdk_us']:.2f}x |")
PY
