#!/usr/bin/env bash
# The release build: each Criterion suite with its own summary, then every other test under ctest.
source "$(dirname "$0")/lib.sh"
release_build
# ctest then runs every other test (packaging, examples, threads) without the suites a second time.
for t in "$root"/build/tests/test_*; do
  printf '%s: ' "$(basename "$t")"
  "$t" --jobs 1 2>&1 | tail -n 1   # pipefail: a failing suite stops the stage here
done
ctest --test-dir "$root/build" --output-on-failure -E '^conformance[.]'
