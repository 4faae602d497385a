#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan+UBSan) and runs each from its seed corpus in
# tests/fuzz/corpus, growing its run corpus in build-fuzz/corpus/NAME (outside git, kept
# between runs on one machine).  Fails on any crash, sanitizer report or leak; the input is
# kept as crash-* in the build tree.  Prints libFuzzer's totals (runs, seconds) per harness.
# fuzz_tokenizer tokenizes with the vocabularies TL_FUZZ_VOCAB names (':'-separated GGUF files;
# the fuzz stage gives LLaMA 2's and Llama 3's), else a tiny one of its own.
#   bash scripts/fuzz.sh [api-seconds] [safetensors-seconds] [gguf-seconds] [tokenizer-seconds] [vocab-seconds]
#   (default 40, 20, 20, 20, 20)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
api_seconds="${1:-40}"
st_seconds="${2:-20}"
gguf_seconds="${3:-20}"
tokenizer_seconds="${4:-20}"
vocab_seconds="${5:-20}"
build="$root/build-fuzz"
CC=clang CXX=clang++ bash "$root/scripts/build.sh" "$build" -DTL_BUILD_FUZZERS=ON -DTL_SANITIZE=address,undefined \
  -DTL_BUILD_TESTS=OFF -DTL_BUILD_BENCH=OFF -DTL_BUILD_EXAMPLES=OFF -DTL_BUILD_JAVA=OFF -DTL_BUILD_CSHARP=OFF
export ASAN_OPTIONS=allocator_may_return_null=1
for target in api:$api_seconds safetensors:$st_seconds gguf:$gguf_seconds tokenizer:$tokenizer_seconds \
              vocab:$vocab_seconds; do
  name=${target%%:*}; seconds=${target##*:}
  "$build/tests/fuzz/fuzz_$name" --help | grep -q '^usage: fuzz_' || { echo "fuzz_$name: no usage on --help"; exit 1; }
  work="$build/corpus/$name"
  mkdir -p "$work"
  log="$build/fuzz_$name.log"
  if ! (cd "$build" && "./tests/fuzz/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
        "$work" "$root/tests/fuzz/corpus/$name" >"$log" 2>&1); then
    tail -n 40 "$log"
    echo "fuzz_$name: FAILED (see $log and crash-* in $build)"
    exit 1
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  per=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
  echo "fuzz_$name: $runs executions in ${seconds}s ($per exec/s), run corpus $(ls "$work" | wc -l) inputs, no crash"
done
