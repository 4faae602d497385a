#!/usr/bin/env bash
# Every test, in named stages (scripts/stages/NAME.sh, each runnable alone with the builds it needs):
#   scripts/test.sh              installs what is missing, then runs every stage in order
#   scripts/test.sh --list       names the stages, a line each
#   scripts/test.sh asan python  installs what is missing, then runs just those
# Each stage's output is shown as it runs and kept in build-stages/NAME.log; the run stops at
# the first failing stage and ends with one table: stage, seconds, its runners' counts, result.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
stages_dir="$root/scripts/stages"
# The order of a full run: cheap checks first, then the sanitizers, then the other platforms
# whose natives the release build's packages carry, then that build and its bindings.
all=(golden sources asan tsan coverage fuzz windows arm64 valgrind go java csharp python packages llamacpp release)

# Stages only run by name: too long for every run.
by_name=(mutations)

describe() { sed -n '2s/^# //p' "$stages_dir/$1.sh"; }

if [ "${1:-}" = "--list" ]; then
  for s in "${all[@]}" "${by_name[@]}"; do printf '%-9s %s\n' "$s" "$(describe "$s")"; done
  exit 0
fi
chosen=("$@")
[ ${#chosen[@]} -gt 0 ] || chosen=("${all[@]}")
for s in "${chosen[@]}"; do
  [ -f "$stages_dir/$s.sh" ] && [ "$s" != lib ] ||
    { echo "test.sh: no stage '$s' (scripts/test.sh --list names them)" >&2; exit 2; }
done

bash "$root/scripts/setup.sh"
logs="$root/build-stages"
mkdir -p "$logs"

# A stage's runners' own closing lines: ctest, Criterion, pytest, go test, dotnet test, the
# plain "N passed, N failed", and the fuzzers' and valgrind's totals.
counts_of() {
  grep -aoE '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+|Synthesis: Tested: [0-9]+ \| Passing: [0-9]+ \| Failing: [0-9]+ \| Crashing: [0-9]+|^=* ?[0-9]+ (passed|failed)[^=]* in [0-9.]+s|^(ok|FAIL) +[^ ]+|(Passed|Failed)! +- Failed: +[0-9]+, Passed: +[0-9]+|[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?|fuzz_[a-z]+: [0-9]+ executions|[0-9]+ processes checked, no errors, no leaks|no include points up|each runs in one target first|every list is current|[0-9]+ programs match|[a-z0-9 ()-]+: [0-9]+ of [0-9]+ lines identical' "$1" |
    sed -E 's/^=+ //; s/ in [0-9.]+s$//; s/[[:space:]]+/ /g' |
    awk '/^Synthesis:/ { suites++; tested += $3; passing += $6; next }
         !seen[$0]++ { order[n++] = $0 }
         END {
           out = suites ? sprintf("criterion %d of %d in %d suites", passing, tested, suites) : ""
           for (i = 0; i < n; i++)
             out = out (out == "" ? "" : "; ") order[i] (seen[order[i]] > 1 ? " (x" seen[order[i]] ")" : "")
           printf "%s", out
         }'
}

rows=()
failed_stage=""
for s in "${chosen[@]}"; do
  echo "==== stage $s: $(describe "$s")"
  start=$(date +%s)
  set +e
  bash "$stages_dir/$s.sh" 2>&1 | tee "$logs/$s.log"
  status=${PIPESTATUS[0]}
  set -e
  seconds=$(( $(date +%s) - start ))
  result=passed; [ "$status" -eq 0 ] || result="FAILED ($status)"
  rows+=("$(printf '%-9s %6s  %-7s %s' "$s" "$seconds" "${result%% *}" "$(counts_of "$logs/$s.log")")")
  if [ "$status" -ne 0 ]; then failed_stage=$s; break; fi
done

echo
echo "==== stages"
printf '%-9s %6s  %-7s %s\n' stage seconds result "runners' counts"
printf '%s\n' "${rows[@]}"
if [ -n "$failed_stage" ]; then
  echo "stage '$failed_stage' FAILED: its output is above and in build-stages/$failed_stage.log"
  echo "stages: $(( ${#rows[@]} - 1 )) passed, 1 failed"
  exit 1
fi
echo "stages: ${#rows[@]} passed, 0 failed"
