#!/usr/bin/env bash
# The stable ABI, checked: the built library against the committed baseline (abidiff).  New
# functions pass; anything removed or changed (a function's signature, a public struct's
# layout) fails unless TL_ABI_VERSION, and with it the SONAME, moved.  A deliberate compatible
# change (a field appended behind struct_size) is accepted by writing the baseline anew with
# scripts/abi_dump.sh in the same commit, where a reviewer sees it.
#   tests/packaging/check_abi.sh LIBRARY
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
lib="$1"
abi=$(sed -n 's/^#define TL_ABI_VERSION \([0-9]*\)$/\1/p' "$root/include/tensorlife/tl_base.h")
# The baseline of the current ABI number; a bump starts a new one (the old file is deleted).
baseline="$root/capi/abi/libtensorlife.so.$abi.abi"
[ -f "$baseline" ] || { echo "abi: no baseline $baseline: write it with scripts/abi_dump.sh"; exit 1; }
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libtensorlife.so.$abi" ] || { echo "abi: SONAME $soname does not match TL_ABI_VERSION $abi"; exit 1; }
base_soname=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$baseline")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$root/scripts/abi_dump.sh" "$lib" > "$work/now.abi"
set +e
abidiff "$baseline" "$work/now.abi" > "$work/report"
rc=$?
set -e
cat "$work/report"
if (( rc & 1 )); then echo "abi: abidiff failed to run (rc $rc)"; exit 1; fi
removed_or_changed=$({ grep -Eo '[0-9]+ Removed|[0-9]+ Changed' "$work/report" || true; } | awk '{ n += $1 } END { print n + 0 }')
if (( rc & 8 )) || (( removed_or_changed > 0 )); then
  if [ "$soname" = "$base_soname" ]; then
    echo "abi: $removed_or_changed removed or changed entries with SONAME still $soname:"
    echo "     bump TL_ABI_VERSION, undo the change, or (if it is compatible) rewrite the baseline"
    exit 1
  fi
  echo "abi: removed or changed entries, and the SONAME moved $base_soname -> $soname: write the new baseline"
  exit 0
fi
if (( rc & 4 )); then echo "abi: compatible additions against the baseline"; fi
echo "abi ok: $soname matches the baseline ($(grep -c '<elf-symbol name=.tl_' "$baseline") tl_ symbols)"
