#!/usr/bin/env bash
# Linux arm64: cross-built, the suites, natives and wheel under qemu-user (scripts/cross.sh).
source "$(dirname "$0")/lib.sh"
bash "$root/scripts/cross.sh" arm64
