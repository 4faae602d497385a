#!/usr/bin/env bash
# A short libFuzzer run of each harness, the tokenizer's on real vocabularies (ASan+UBSan; scripts/fuzz.sh for longer runs).
source "$(dirname "$0")/lib.sh"
# The tokenizer harness on the real vocabularies (npm: LLaMA 2's SentencePiece, Llama 3's BPE).
npm_vocabularies
mkdir -p "$root/build-fuzz/vocab"
for v in llama2 llama3; do
  python3 "$root/scripts/vocab_to_gguf.py" "$root/build-fuzz/vocab/$v.gguf" --tokenizer $v --npm "$root/build-npm/node_modules"
done
export TL_FUZZ_VOCAB="$root/build-fuzz/vocab/llama2.gguf:$root/build-fuzz/vocab/llama3.gguf"
bash "$root/scripts/fuzz.sh" "${TL_FUZZ_API_SECONDS:-40}" "${TL_FUZZ_ST_SECONDS:-20}" "${TL_FUZZ_GGUF_SECONDS:-20}" \
  "${TL_FUZZ_TOKENIZER_SECONDS:-20}" "${TL_FUZZ_VOCAB_SECONDS:-20}"
