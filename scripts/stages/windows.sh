#!/usr/bin/env bash
# Windows x64: cross-built with mingw-w64, the suites under wine (scripts/cross.sh).
source "$(dirname "$0")/lib.sh"
bash "$root/scripts/cross.sh" windows
