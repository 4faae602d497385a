#!/usr/bin/env bash
# ThreadSanitizer: threaded decode, one context from two threads, one binding record from four, an executor's ops.
source "$(dirname "$0")/lib.sh"
bash "$root/scripts/build.sh" "$root/build-tsan" -DTL_SANITIZE=thread -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=OFF \
  -DTL_BUILD_EXAMPLES=OFF -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
export TSAN_OPTIONS="suppressions=$root/tests/threads/tsan.supp halt_on_error=1"
ctest --test-dir "$root/build-tsan" -R '^threads[.]' --output-on-failure
