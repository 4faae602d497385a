#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the decode-loop demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" "$root/build" -DTL_BUILD_TESTS=OFF
"$root/build/examples/decode_loop" "$@"
