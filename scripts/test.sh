#!/usr/bin/env bash
# Every test: installs what is missing, then
#   0. the NumPy golden files of the conformance suite, regenerated and compared,
#   1. the conformance suite and examples built with ASan+UBSan,
#   2. N threads with a context each, over shared weights, under ThreadSanitizer,
#   3. a short libFuzzer run of each harness (ASan+UBSan; scripts/fuzz.sh for longer runs),
#   4. the conformance suite under valgrind (memory errors and leaks, in every forked test),
#   5. the Go, Java, C# and Python bindings' tests, and each one's consumer outside the tree
#      using only the installed or packaged artifact (module, jar, .nupkg, wheel),
#   6. the same suites built for Windows x64 (under wine) and Linux arm64 (under qemu-user),
#   7. the release build: each Criterion suite, then every other test under ctest,
# and ends with the runners' own summaries.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"

echo "== NumPy golden files: regenerated and compared with the committed ones"
golden=$(mktemp -d)
/usr/bin/python3 "$root/tests/golden/make_golden.py" "$golden"  # Debian's python3, with setup's NumPy
for f in golden.json golden.safetensors metadata.gguf; do
  cmp -s "$golden/$f" "$root/tests/golden/$f" ||
    { echo "tests/golden/$f is stale: run /usr/bin/python3 tests/golden/make_golden.py tests/golden"; exit 1; }
done
rm -rf "$golden"
echo "== The README's programs are the consumer programs run below"
/usr/bin/python3 "$root/scripts/readme_snippets.py"

echo "== ASan+UBSan build: conformance suite and examples"
bash "$root/scripts/build.sh" "$root/build-asan" -DTL_SANITIZE=address,undefined -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=OFF -DTL_BUILD_EXAMPLES=ON \
  -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
# Huge-but-valid sizes must come back as TL_E_OUT_OF_MEMORY, not as an ASan abort.
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" -R "conformance|examples" --output-on-failure

echo "== ThreadSanitizer: threaded decode"
bash "$root/scripts/build.sh" "$root/build-tsan" -DTL_SANITIZE=thread -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=OFF -DTL_BUILD_EXAMPLES=OFF \
  -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
TSAN_OPTIONS="suppressions=$root/tests/threads/tsan.supp halt_on_error=1" "$root/build-tsan/tests/threaded_decode"
echo "== ThreadSanitizer: one context from two threads (refused, not raced)"
TSAN_OPTIONS="suppressions=$root/tests/threads/tsan.supp halt_on_error=1" "$root/build-tsan/tests/busy_context"
echo "== ThreadSanitizer: one binding record from four threads (each call waits its turn)"
TSAN_OPTIONS="suppressions=$root/tests/threads/tsan.supp halt_on_error=1" "$root/build-tsan/tests/shared_record"
echo "== ThreadSanitizer: ops split over an executor's threads"
TSAN_OPTIONS="suppressions=$root/tests/threads/tsan.supp halt_on_error=1" "$root/build-tsan/tests/executor_threads"

echo "== libFuzzer: short runs"
bash "$root/scripts/fuzz.sh" "${TL_FUZZ_API_SECONDS:-40}" "${TL_FUZZ_ST_SECONDS:-20}" "${TL_FUZZ_GGUF_SECONDS:-20}"

echo "== other platforms: Windows x64 under wine, Linux arm64 under qemu-user (scripts/cross.sh)"
bash "$root/scripts/cross.sh" windows
bash "$root/scripts/cross.sh" arm64

echo "== valgrind: conformance suite (release build)"
# The .nupkg and the jar carry the cross builds' natives beside linux-x64's.
bash "$root/scripts/build.sh" "$root/build" -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=ON -DTL_BUILD_EXAMPLES=ON -DTL_BUILD_JAVA=ON -DTL_BUILD_CSHARP=ON \
  -DTL_CSHARP_NATIVES_WIN_X64="$root/build-windows/bindings/csharp/natives" \
  -DTL_CSHARP_NATIVES_LINUX_ARM64="$root/build-arm64/bindings/csharp/natives" \
  -DTL_JAVA_NATIVES_EXTRA="$root/build-windows/bindings/java/natives;$root/build-arm64/bindings/java/natives"
logs=$(mktemp -d)
for t in "$root"/build/tests/test_*; do
  LD_PRELOAD="$root/build/tests/libvalgrind_hwy_timer.so" \
  valgrind --trace-children=yes -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --trace-children-skip="*python*,*/rm,*/sh" --log-file="$logs/$(basename "$t").%p.log" "$t" --jobs 1 -q >/dev/null 2>&1 ||
    { echo "valgrind: $t failed"; exit 1; }
done
if [ -n "$(find "$logs" -name '*.log' -size +0)" ]; then  # (no pipe into grep -q: under pipefail a SIGPIPE would hide errors)
  find "$logs" -name '*.log' -size +0 -exec cat {} +
  echo "valgrind: errors or leaks reported"; exit 1
fi
echo "valgrind: $(ls "$logs" | wc -l) processes checked, no errors, no leaks"

echo "== Go binding (SWIG, cgo)"
bash "$root/bindings/go/test.sh" "$root/build"

echo "== Java binding (SWIG, JNI)"
bash "$root/bindings/java/test.sh" "$root/build"

jar_files=$(unzip -Z1 "$root/build/bindings/java/tensorlife.jar")
for f in linux-x86_64/libtensorlife_jni.so windows-x86_64/tensorlife_jni.dll linux-aarch64/libtensorlife_jni.so; do
  grep -qx "native/$f" <<< "$jar_files" || { echo "the jar lacks native/$f"; exit 1; }
done
echo "the jar: native/linux-x86_64, windows-x86_64 and linux-aarch64"

echo "== C# binding (SWIG, P/Invoke, Mono)"
bash "$root/bindings/csharp/test.sh" "$root/build"
echo "== C#: the .nupkg's natives for every platform"
nupkg_files=$(unzip -Z1 "$root"/build/bindings/csharp/TensorLife.*.nupkg)
for f in linux-x64/native/libtensorlife_csharp.so win-x64/native/tensorlife_csharp.dll win-x64/native/tensorlife.dll \
         linux-arm64/native/libtensorlife_csharp.so linux-arm64/native/libtensorlife.so.1; do
  grep -qx "runtimes/$f" <<< "$nupkg_files" || { echo "the .nupkg lacks runtimes/$f"; exit 1; }
done
natives=$(mktemp -d)
unzip -q "$root"/build/bindings/csharp/TensorLife.*.nupkg 'runtimes/*' -d "$natives"
file -b "$natives"/runtimes/win-x64/native/*.dll | grep -vq 'x86-64' && { echo "win-x64 natives are not x86-64 DLLs"; exit 1; }
file -b "$natives"/runtimes/linux-arm64/native/* | grep -vq 'ARM aarch64' && { echo "linux-arm64 natives are not arm64"; exit 1; }
echo "the .nupkg: runtimes/linux-x64, win-x64 and linux-arm64 natives, each of its platform"
rm -rf "$natives"

echo "== Python binding (SWIG, CPython)"
bash "$root/bindings/python/test.sh" "$root/build"

echo "== release build: the Criterion suites, then the rest under ctest"
# The suites run directly so that each prints its own summary; ctest then runs every other test
# (packaging, examples, threads) without running the suites a second time.
for t in "$root"/build/tests/test_*; do
  printf '%s: ' "$(basename "$t")"
  "$t" --jobs 1 2>&1 | tail -n 1   # pipefail: a failing suite stops the run here
done
ctest --test-dir "$root/build" --output-on-failure -E '^conformance[.]'
