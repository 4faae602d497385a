#!/usr/bin/env bash
# tensorlife.dll exports every TL_API function the headers declare, and nothing else.
set -euo pipefail
dll="$1"
headers="$2"
declared=$(grep -h '^TL_API' "$headers"/*.h | grep -o '^[^(]*(' | sed 's/($//; s/.*[ *]//' | sort -u)
exported=$(x86_64-w64-mingw32-objdump -p "$dll" |
  awk '/\[Ordinal\/Name Pointer\] Table/ {on = 1; next} on && /^[ \t]*\[/ {print $NF; next} on && NF == 0 {on = 0}' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || { echo "declared TL_API but not exported by $(basename "$dll"):"; echo "$missing"; exit 1; }
[ -z "$extra" ] || { echo "exported by $(basename "$dll") but not declared TL_API:"; echo "$extra"; exit 1; }
echo "dll exports ok: $(echo "$exported" | wc -l) functions, exactly the headers' TL_API declarations"
