#!/usr/bin/env bash
# Text and tokens against llama.cpp (LLamaSharp's natives): tokenizers on real vocabularies, the runner's tokens, K-quant files.
source "$(dirname "$0")/lib.sh"
release_build
npm_vocabularies
llamacpp_reference
bash "$root/tests/llamacpp/check_tokenizer.sh" "$root/build/examples/tokenize" "$root/build-llamacpp" \
  "$root/build-npm/node_modules" "$root/build/llamacpp-tokenizer"
bash "$root/tests/llamacpp/check_runner.sh" "$root/build/examples/decode" "$root/build/tests/runner" \
  "$root/build/examples/tokenize" "$root/build-llamacpp" "$root/build-npm/node_modules" "$root/build/llamacpp-runner" \
  "$root/build/tests/quantized_bytes"
