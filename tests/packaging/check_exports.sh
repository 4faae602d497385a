#!/usr/bin/env bash
# Only tl_ symbols are exported, and the SONAME is libtensorlife.so.<TL_ABI_VERSION>.
set -euo pipefail
lib="$1"
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^tl_' || true)
if [ -n "$others" ]; then echo "exported symbols without the tl_ prefix:"; echo "$others"; exit 1; fi
count=$(nm -D --defined-only "$lib" | grep -c ' tl_')
[ "$count" -ge 40 ] || { echo "only $count tl_ symbols exported"; exit 1; }
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
abi=$(sed -n 's/^#define TL_ABI_VERSION \([0-9]*\)$/\1/p' "$(dirname "$0")/../../include/tensorlife/tl_base.h")
[ "$soname" = "libtensorlife.so.$abi" ] || { echo "SONAME is '$soname', not libtensorlife.so.$abi"; exit 1; }
echo "exports ok: $count tl_ symbols, SONAME $soname"
