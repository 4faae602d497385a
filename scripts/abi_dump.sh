#!/usr/bin/env bash
# Writes the public ABI of a built libtensorlife.so (abidw, from abigail-tools) to stdout:
# only the exported functions and the types the public headers declare (the opaque context and
# file types as declarations, not their C++ insides, so a compiler upgrade or an internal
# change leaves it alone), without source locations
# (which depend on the compiler and where the system headers lie); the tree's own paths are
# made relative, so the dump does not depend on where the tree lies.
#   scripts/abi_dump.sh LIBRARY > capi/abi/libtensorlife.so.N.abi   (the committed baseline, N = TL_ABI_VERSION)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
abidw --headers-dir "$root/include/tensorlife" --drop-private-types --exported-interfaces-only --drop-undefined-syms --no-show-locs \
  --no-corpus-path --no-comp-dir-path "$1" | sed -e "s|path='$root/|path='|g"
