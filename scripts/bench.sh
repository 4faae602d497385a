#!/usr/bin/env bash
# Builds and runs every benchmark (not a test: it measures, it asserts nothing).
# With Debian's libtorch-dev installed, also the libtorch decode step side by side.
#   bash scripts/bench.sh [--quick]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
torch=OFF
dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed" && torch=ON
bash "$root/scripts/build.sh" "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DTL_BUILD_TESTS=OFF -DTL_BENCH_TORCH=$torch \
  -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
"$root/build-bench/bench/bench_core" "$@"
echo
"$root/build-bench/bench/bench_calls" "$@"
echo
"$root/build-bench/bench/bench_gemv" "$@"
echo
"$root/build-bench/bench/bench_kernels" "$@"
echo
"$root/build-bench/bench/bench_decode" "$@"
echo
"$root/build-bench/bench/bench_safetensors" "$@"
echo
"$root/build-bench/bench/bench_executor" "$@"
if [ "$torch" = ON ]; then
  echo
  "$root/build-bench/bench/bench_torch_decode" "$@"
else
  echo; echo "(libtorch-dev not installed: the libtorch comparison is skipped)"
fi

echo
echo "bindings: one tiny op (add of 16 floats) through each binding vs the same adds made from C"
bash "$root/scripts/build.sh" "$root/build" -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=ON -DTL_BUILD_EXAMPLES=ON -DTL_BUILD_JAVA=ON -DTL_BUILD_CSHARP=ON
bash "$root/bindings/java/test.sh" "$root/build" --bench
bash "$root/bindings/csharp/test.sh" "$root/build" --bench
TL_BENCH_COUNT=5 bash "$root/bindings/go/test.sh" "$root/build" --bench | grep Benchmark
bash "$root/bindings/python/test.sh" "$root/build" --bench | grep "python:"

echo
echo "the model runner against llama.cpp (LLamaSharp's natives) on the same files: prompt and decode"
source "$root/scripts/stages/lib.sh"
npm_vocabularies
llamacpp_reference
bash "$root/bench/llamacpp.sh" "$root/build/tests/runner" "$root/build-llamacpp" "$root/build/examples/decode" \
  "$root/build-npm/node_modules" "$root/build-bench/llamacpp"
