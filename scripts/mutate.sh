#!/usr/bin/env bash
# Mutation run (the `mutations` stage, outside the full test run: about a minute a mutation):
# applies each source mutation of scripts/mutations.txt to a scratch copy of the tree, one at a
# time, rebuilds incrementally, runs the conformance suites, the examples and the thread tests
# under ctest, and counts the mutation killed when any test fails (or the build does).  Every
# mutation gets a line: killed, survived, or no longer applies (its text is not in the file
# exactly once); the run never stops at one.  Ends with the kill rate of those that applied.
# The tree itself is never touched.
#   bash scripts/mutate.sh [mutations-file] [first-n]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
list="${1:-$root/scripts/mutations.txt}"
limit="${2:-0}"
work="${TL_MUTATE_DIR:-/tmp/tensorlife-mutate}"
rm -rf "$work" && mkdir -p "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/src"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DTL_BUILD_TESTS=ON -DTL_BUILD_EXAMPLES=ON \
  -DTL_BUILD_BENCH=OFF -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF >/dev/null
cmake --build "$work/build" -j"$(nproc)" >/dev/null
tests='conformance|examples|threads'
ctest --test-dir "$work/build" -R "$tests" -j"$(nproc)" >/dev/null || { echo "mutate: the unmutated tree fails its tests"; exit 1; }

killed=0 survived=0 stale=0 n=0
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  n=$((n + 1))
  [ "$limit" -gt 0 ] && [ "$n" -gt "$limit" ] && break
  file="${line%% ||| *}"; rest="${line#* ||| }"; from="${rest%% ||| *}"; to="${rest#* ||| }"
  target="$work/src/$file"
  if [ ! -f "$target" ] || ! FROM="$from" TO="$to" python3 - "$target" <<'PY'
import os, sys
path = sys.argv[1]
text = open(path).read()
old, new = (os.environ[k].replace("\\n", "\n") for k in ("FROM", "TO"))
if text.count(old) != 1:
    sys.exit(1)
open(path + ".original", "w").write(text)
open(path, "w").write(text.replace(old, new))
PY
  then
    stale=$((stale + 1)); echo "mutate #$n no longer applies: $file: $from"; continue
  fi
  if cmake --build "$work/build" -j"$(nproc)" >/dev/null 2>&1 &&
     ctest --test-dir "$work/build" -R "$tests" -j"$(nproc)" --stop-on-failure --timeout 120 >/dev/null 2>&1; then
    survived=$((survived + 1)); echo "mutate #$n survived: $file: $from  ->  $to"
  else
    killed=$((killed + 1)); echo "mutate #$n killed: $file: $from"
  fi
  mv "$target.original" "$target"
  touch "$target"
done < "$list"
applied=$((killed + survived))
echo "mutations: $killed killed, $survived survived, $stale no longer apply; kill rate $((applied ? 100 * killed / applied : 0))% of $applied"
echo "mutations: $killed passed, $survived failed"
