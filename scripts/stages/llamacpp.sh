#!/usr/bin/env bash
# Text and tokens against llama.cpp (LLamaSharp's natives): tokenizers on real vocabularies.
source "$(dirname "$0")/lib.sh"
release_build
npm_vocabularies
llamacpp_reference
bash "$root/tests/llamacpp/check_tokenizer.sh" "$root/build/examples/tokenize" "$root/build-llamacpp" \
  "$root/build-npm/node_modules" "$root/build/llamacpp-tokenizer"
