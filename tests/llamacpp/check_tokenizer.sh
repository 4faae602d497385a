#!/usr/bin/env bash
# tensorlife's tokenizer against llama.cpp's on the same GGUF files: LLaMA 2's SentencePiece and
# Llama 3's BPE vocabularies (from their npm packages), Llama 3's also under the "default"
# pre-tokenizer; a corpus of 73 hand-picked lines and 1,000 drawn from many scripts; plain and
# with special tokens added and parsed.  Every line's ids, and the text detokenized from them,
# must be identical; detokenize(tokenize(x)) == x wherever llama.cpp's holds.
#   check_tokenizer.sh TOKENIZE_PROGRAM REFERENCE_DIR NODE_MODULES WORK_DIR
set -euo pipefail
tokenize=$1 reference=$2 npm=$3 work=$4
here="$(cd "$(dirname "$0")" && pwd)" src="$(cd "$here/../.." && pwd)"
rm -rf "$work" && mkdir -p "$work"
python3 "$here/../vocabularies/make_corpus.py" "$work/corpus.jsonl" --random 1000
python3 "$src/scripts/vocab_to_gguf.py" "$work/llama2.gguf" --tokenizer llama2 --npm "$npm"
python3 "$src/scripts/vocab_to_gguf.py" "$work/llama3.gguf" --tokenizer llama3 --npm "$npm"
python3 "$src/scripts/vocab_to_gguf.py" "$work/llama3-default.gguf" --tokenizer llama3 --npm "$npm" --pre default
passed=0 failed=0
for vocab in llama2 llama3 llama3-default; do
  for flags in "" "--add-special --parse-special"; do
    label="$vocab${flags:+ (special)}" out="$work/$vocab${flags:+-special}"
    "$tokenize" --model "$work/$vocab.gguf" --text-file "$work/corpus.jsonl" --json-lines $flags >"$out.ours"
    dotnet "$reference/LlamaCppReference.dll" tokenize "$work/$vocab.gguf" "$work/corpus.jsonl" $flags \
      >"$out.reference" 2>"$out.log"
    if python3 "$here/../vocabularies/compare_tokens.py" "$label" "$work/corpus.jsonl" "$out.ours" "$out.reference"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
  done
done
echo "tokenizer against llama.cpp: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
