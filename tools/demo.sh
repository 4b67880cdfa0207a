#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the demo: the seed docs' MyModule
# built and run through the SDK, with a pipeline of plugins loaded at runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel run //tools:fx -- demo
