#!/usr/bin/env bash
# Text and tokens against llama.cpp (LLamaSharp's natives): tokenizers on real vocabularies, the runner's tokens, K-quant files, the products bit for bit.
source "$(dirname "$0")/lib.sh"
release_build
npm_vocabularies
llamacpp_reference
bash "$root/tests/llamacpp/check_tokenizer.sh" "$root/build/examples/tokenize" "$root/build-llamacpp" \
  "$root/build-npm/node_modules" "$root/build/llamacpp-tokenizer"
bash "$root/tests/llamacpp/check_runner.sh" "$root/build/examples/decode" "$root/build/tests/runner" \
  "$root/build/examples/tokenize" "$root/build-llamacpp" "$root/build-npm/node_modules" "$root/build/llamacpp-runner" \
  "$root/build/tests/quantized_bytes"
# The products themselves against llama.cpp's kernels, in the natives LLamaSharp loads on this CPU.
native="$root/build-llamacpp/runtimes/linux-x64/native/$(grep -qw avx512bw /proc/cpuinfo && echo avx512 || echo avx2)"
"$root/build/tests/ggml_products" "$native"
