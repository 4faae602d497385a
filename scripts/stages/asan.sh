#!/usr/bin/env bash
# The conformance suite, the examples and the fuzzers' seeds built with ASan+UBSan, under ctest.
source "$(dirname "$0")/lib.sh"
bash "$root/scripts/build.sh" "$root/build-asan" -DTL_SANITIZE=address,undefined -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=OFF \
  -DTL_BUILD_EXAMPLES=ON -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
# Huge-but-valid sizes must come back as TL_E_OUT_OF_MEMORY, not as an ASan abort.
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" -R "conformance|examples|seeds" --output-on-failure
