#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs examples/decode (arguments pass through,
# e.g. --report out.json --svg out.svg).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" "$root/build-demo" -DTL_BUILD_TESTS=OFF -DTL_BUILD_BENCH=OFF -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
"$root/build-demo/examples/decode" "$@"
