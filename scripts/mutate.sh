#!/usr/bin/env bash
# Mutation check (a developer tool, minutes, not part of the test command): applies each source
# mutation of scripts/mutations.txt to a scratch copy of the tree, one at a time, rebuilds
# incrementally, runs the conformance suite, the examples and the thread tests under ctest, and counts the
# mutation killed when any test fails (or the build does).  Prints each survivor and the kill
# rate.  The tree itself is never touched.
#   bash scripts/mutate.sh [mutations-file]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
list="${1:-$root/scripts/mutations.txt}"
work="${TL_MUTATE_DIR:-/tmp/tensorlife-mutate}"
rm -rf "$work" && mkdir -p "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/src"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DTL_BUILD_TESTS=ON -DTL_BUILD_EXAMPLES=ON \
  -DTL_BUILD_BENCH=OFF -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF >/dev/null
cmake --build "$work/build" -j"$(nproc)" >/dev/null
ctest --test-dir "$work/build" -R 'conformance|examples|threads' >/dev/null || { echo "mutate: the unmutated tree fails its tests"; exit 1; }

killed=0 survived=0 n=0
survivors=()
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  n=$((n + 1))
  file="${line%% ||| *}"; rest="${line#* ||| }"; from="${rest%% ||| *}"; to="${rest#* ||| }"
  target="$work/src/$file"
  cp "$target" "$work/original"
  if ! FROM="$from" TO="$to" python3 - "$target" <<'PY'
import os, sys
path = sys.argv[1]
text = open(path).read()
if text.count(os.environ["FROM"]) != 1:
    sys.exit(f"mutate: the text occurs {text.count(os.environ['FROM'])} times in {path}, not once")
open(path, "w").write(text.replace(os.environ["FROM"], os.environ["TO"]))
PY
  then echo "mutate: #$n cannot be applied: $file: $from"; exit 1; fi
  if cmake --build "$work/build" -j"$(nproc)" >/dev/null 2>&1 &&
     ctest --test-dir "$work/build" -R 'conformance|examples|threads' --stop-on-failure --timeout 120 >/dev/null 2>&1; then
    survived=$((survived + 1)); survivors+=("#$n $file: $from  ->  $to")
  else
    killed=$((killed + 1))
  fi
  cp "$work/original" "$target"
  touch "$target"
done < "$list"
cmake --build "$work/build" -j"$(nproc)" >/dev/null  # the tree back as it was
echo "mutate: $n mutations, $killed killed, $survived survived: kill rate $((100 * killed / n))%"
for s in "${survivors[@]+"${survivors[@]}"}"; do echo "  survived: $s"; done
