#!/usr/bin/env bash
# Installs ONNX Runtime's CPU build for the benchmarks' second anchor:
# Debian's nodejs and npm, then onnxruntime-node from the npm registry into
# ${FX_ORT_DIR:-$HOME/.cache/fx-sdk/onnxruntime}. Prints the NODE_PATH to
# use. Not needed by the tests; idempotent.
set -euo pipefail
version=1.16.3
dir=${FX_ORT_DIR:-$HOME/.cache/fx-sdk/onnxruntime}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm
fi
if [ ! -d "$dir/node_modules/onnxruntime-node" ]; then
  mkdir -p "$dir"
  npm install --silent --prefix "$dir" "onnxruntime-node@$version" >&2
fi
echo "$dir/node_modules"
