#!/usr/bin/env bash
# The release build: each Criterion suite with its own summary, every other test under ctest, the views promise on several BLAS kernel families.
source "$(dirname "$0")/lib.sh"
release_build
# ctest then runs every other test (packaging, examples, threads) without the suites a second time.
for t in "$root"/build/tests/test_*; do
  printf '%s: ' "$(basename "$t")"
  "$t" --jobs 1 2>&1 | tail -n 1   # pipefail: a failing suite stops the stage here
done
ctest --test-dir "$root/build" --output-on-failure -E '^conformance[.]'
# tl_ops.h's promise on views under several of OpenBLAS's kernel families.
bash "$root/scripts/check_blas_cores.sh" "$root/build"
