#!/ usr / bin / env bash
#Sets up a fresh Debian 12 machine and runs the demo : the seed docs' MyModule
#built with the Graph API around real LibTorch modules, printed, run.
set - euo pipefail cd "$(dirname " $0 ")/.." tools /
          setup.sh bazel run  // tools:fx -- demo
