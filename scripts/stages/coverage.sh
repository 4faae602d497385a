#!/usr/bin/env bash
# Line and branch coverage of impl/ and capi/ by the conformance suites, examples and ctest's other tests (gcovr).
source "$(dirname "$0")/lib.sh"
build="$root/build-coverage"
# One library, the static one, which every program links: a source compiled into two libraries
# is counted twice, and gcov (GCC 12) marks no branch of a line never run there as exception-only,
# so the copy the internal suites do not run added every throw branch back as uncovered.
bash "$root/scripts/build.sh" "$build" -DTL_COVERAGE=ON -DCMAKE_BUILD_TYPE=Debug -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=OFF \
  -DTL_BUILD_EXAMPLES=ON -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF -DTL_BUILD_SHARED=OFF
find "$build" -name '*.gcda' -delete
ctest --test-dir "$build" -E '^packaging[.](install|as_dependency)$' --output-on-failure -j"$(nproc)" | tail -n 3
# Branches that only exceptions take (bad_alloc caught at the boundary) and those the compiler
# proves unreachable are left out, as gcovr's own options say.
summary="$build/coverage.json"
gcovr --root "$root" --object-directory "$build" --filter "$root/impl/" --filter "$root/capi/" \
  --exclude-throw-branches --exclude-unreachable-branches --json-summary "$summary" --json "$build/coverage-detail.json" > /dev/null
python3 "$root/scripts/coverage_uncovered.py" "$build/coverage-detail.json" "$build/uncovered.txt" "$build"
python3 "$root/scripts/coverage_table.py" "$summary"
