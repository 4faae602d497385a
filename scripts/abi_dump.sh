#!/usr/bin/env bash
# Writes the public ABI of a built libtensorlife.so (abidw, from abigail-tools) to stdout:
# only types of include/tensorlife/ are kept, and source paths are made relative to the tree
# so the dump does not depend on where the tree lies.
#   scripts/abi_dump.sh LIBRARY > capi/abi/libtensorlife.so.N.abi   (the committed baseline, N = TL_ABI_VERSION)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
abidw --headers-dir "$root/include/tensorlife" --drop-private-types --no-corpus-path --no-comp-dir-path "$1" |
  sed -e "s|filepath='$root/|filepath='|g" -e "s|path='$root/|path='|g"
