#!/usr/bin/env bash
# The model runner against llama.cpp on the same GGUF files: a Llama (GQA, LLaMA 2's vocabulary)
# written by the decode demo with random weights, then trained to recite a text of 118 tokens
# (train_to_recite.py: each next token ahead by a margin of 8, as a trained model picks its
# tokens), converted by scripts/llama_to_gguf.py to f32 and q8_0; the text's first 72 tokens,
# tokenized by tensorlife (its ids equal to llama.cpp's, checked), are the prompt; then 32 greedy
# tokens on each side (llama.cpp with an f32 KV cache, flash attention off), the same 32 positions
# teacher-forced (each side fed llama.cpp's tokens), and how far the logits after the prompt lie
# apart.  Both must give all 32 greedy tokens identical (q8_0's products are llama.cpp's bit for
# bit, tests/llamacpp/ggml_products.c).
# Then the files users download: llama.cpp's own quantizer writes Q4_K_M, Q5_K_M and Q6_K from the
# f32 file (with Q5_0/Q5_1/Q8_0 where a row is no whole number of 256: ffn_down's 1408 here); every
# quantized tensor must be byte-identical to tl_convert of the f32 tensor.  Every product of these
# files is llama.cpp's bit for bit (ggml_products.c), so after a prompt of 8 tokens the logits
# must lie within 1e-5 of llama.cpp's (checked on the random model's files, whose weights every
# machine makes the same; a wrong product moves them by 1e-2).  Past about
# 8-32 tokens of context they part by up to 0.02: what grows with the context is attention, which
# tensorlife sums in f64 and rounds once, llama.cpp in f32, and an activation may then quantize
# the other way.  On the random model these files came from, that noise swapped near ties: the
# greedy runs parted at tokens 17, 24 and 10 of 24 (Q4_K_M, Q5_K_M, Q6_K), and llama.cpp parted
# from itself as far, fed the prompt a token a step (at 17, 3, never) or run on its AVX2 natives
# (10, 24, 24).  A model that recites picks by a margin far above that noise, as real models do:
# 24 tokens are compared as above, the greedy run at least the bar of 16 for each file and
# teacher-forced agreement at least 21 of 24 (checked).  Where the greedy runs part, both sides
# are fed the shared tokens again and the two picks must stand closer on each side than the
# logits lie apart (a near tie, checked).  llama.cpp's own natives for AVX2 and AVX (the package's
# other builds), and its prompt fed a token a step, are run on each file too and their greedy
# agreement with its default run reported.
# Last, each quantized file opened with tl_model_options.repack gives the same bits.
#   check_runner.sh DECODE RUNNER TOKENIZE REFERENCE_DIR NODE_MODULES WORK_DIR QUANTIZED_BYTES
set -euo pipefail
decode=$1 runner=$2 tokenize=$3 reference=$4 npm=$5 work=$6 quantized_bytes=$7
src="$(cd "$(dirname "$0")/../.." && pwd)"
py=/usr/bin/python3 # Debian's, with setup.sh's NumPy
rm -rf "$work" && mkdir -p "$work/hf"
"$decode" --arch llama --d-model 512 --layers 4 --heads 8 --kv-heads 2 --ffn 1408 --vocab 32000 --tokens 2 \
  --prompt-ids 5 --seed 11 --threads 1 --save-weights "$work/hf/model.safetensors" >/dev/null
prompt="The history of the city goes back more than two thousand years, to a small fishing village on the banks of a wide river. Over the centuries it grew into a busy market town, then a fortified port, and finally the capital of a great kingdom that stretched from the snowy mountains in the north to the warm sea in the south."
recited="$prompt Its old walls still stand around the market square, where traders from every corner of the kingdom once sold salt, wool, silver and spices, and where the people gather every summer for a festival of music and light."
for text in prompt recited; do
  printf '%s\n' "$("$py" -c 'import json,sys; print(json.dumps(sys.argv[1]))' "${!text}")" >"$work/$text.jsonl"
done
passed=0 failed=0
check() { # label, condition
  if eval "$2"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "runner: FAILED: $1"; fi
}
count_same() { "$py" -c 'import sys; a, b = (s.split(",") for s in sys.argv[1:3]); print(sum(x == y for x, y in zip(a, b)))' "$1" "$2"; }
logits_apart() { "$py" -c 'import sys, numpy as np
a, b = (np.fromfile(f, dtype=np.float32).astype(np.float64) for f in sys.argv[1:3])
print(f"max {np.abs(a - b).max():.2g}, mean {np.abs(a - b).mean():.2g} (logits spread {b.std():.2g})")' "$1" "$2"; }
# Whether the two sides' top tokens, where they differ, stand closer on each side than the two
# sides' logits lie apart (a near tie that any rounding may turn), those lying apart by less than
# a tenth of the logits' spread (a wrong product would part them further), at one position.
near_tie() { "$py" -c 'import sys, numpy as np
a, b = (np.fromfile(f, dtype=np.float32).astype(np.float64) for f in sys.argv[1:3])
x, y, noise = int(a.argmax()), int(b.argmax()), np.abs(a - b).max()
if x == y: print(f"both pick {x} when the shared tokens come in one chunk (logits apart by up to {noise:.2g})")
else:
    near = a[x] - a[y] <= noise and b[y] - b[x] <= noise and noise < 0.1 * b.std()
    print(f"ours picks {x}, {a[x] - a[y]:.2g} above {y}; llama.cpp picks {y}, {b[y] - b[x]:.2g} above {x}; the logits lie "
          f"apart by up to {noise:.2g} (spread {b.std():.2g}): " + ("a near tie" if near else "NOT a near tie"))' "$1" "$2"; }
# The ids of the first JSON line a tokenizer prints, comma-separated.
first_ids() { "$py" -c 'import json,sys; print(",".join(map(str, json.loads(sys.stdin.readline())["ids"])))'; }
prefix_same() { "$py" -c 'import sys
a, b = (s.split(",") for s in sys.argv[1:3]); n = 0
while n < min(len(a), len(b)) and a[n] == b[n]: n += 1
print(n)' "$1" "$2"; }
# The random model's files, kept for what needs logits that lie close and weights made the same
# on every machine: the short context below and tests/golden/ggml_quantized.gguf.
mkdir "$work/random"
for type in f32 q8_0; do
  "$py" "$src/scripts/llama_to_gguf.py" "$work/hf" "$work/random/model-$type.gguf" --type $type --tokenizer llama2 \
    --npm "$npm" >/dev/null
done
for type in Q4_K_M Q5_K_M Q6_K; do
  dotnet "$reference/LlamaCppReference.dll" quantize "$work/random/model-f32.gguf" "$work/random/model-$type.gguf" $type \
    >"$work/random/quantize-$type.log" 2>&1
done
# The text to recite, tokenized with the random model's file (the vocabulary is all it needs).
recited_ids=$("$tokenize" --model "$work/random/model-f32.gguf" --text-file "$work/recited.jsonl" --json-lines --add-special |
  first_ids)
"$py" "$src/tests/llamacpp/train_to_recite.py" "$work/hf" "$recited_ids" --margin 8
for type in f32 q8_0; do
  "$py" "$src/scripts/llama_to_gguf.py" "$work/hf" "$work/model-$type.gguf" --type $type --tokenizer llama2 --npm "$npm" >/dev/null
  model="$work/model-$type.gguf"
  ours=$("$tokenize" --model "$model" --text-file "$work/prompt.jsonl" --json-lines --add-special |
    first_ids)
  theirs=$(dotnet "$reference/LlamaCppReference.dll" tokenize "$model" "$work/prompt.jsonl" --add-special 2>/dev/null |
    first_ids)
  n_prompt=$(tr , '\n' <<<"$ours" | wc -l)
  check "$type prompt ids" '[ "$ours" = "$theirs" ] && [ "$n_prompt" -ge 64 ] && [[ "$recited_ids" == "$ours",* ]]'
  dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$ours" --tokens 32 --logits "$work/ref-$type.logits" \
    >"$work/ref-$type.out" 2>"$work/ref-$type.log"
  ref=$(sed -n 's/^tokens: //p' "$work/ref-$type.out")
  dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$ours" --tokens 0 --teacher "$ref" >"$work/ref-forced-$type.out" 2>>"$work/ref-$type.log"
  ref_forced=$(sed -n 's/^teacher: //p' "$work/ref-forced-$type.out")
  "$runner" "$model" --prompt-ids "$ours" --tokens 32 --teacher "$ref" --logits "$work/ours-$type.logits" >"$work/ours-$type.out"
  got=$(sed -n 's/^tokens: //p' "$work/ours-$type.out")
  forced=$(sed -n 's/^teacher: //p' "$work/ours-$type.out")
  greedy=$(prefix_same "$got" "$ref") agree=$(count_same "$forced" "$ref_forced")
  echo "runner $type: $n_prompt prompt ids ($([ "$ours" = "$theirs" ] && echo identical to || echo DIFFERENT from) llama.cpp's); greedy: the first $greedy of 32 tokens identical; teacher-forced: $agree of 32 positions agree; logits after the prompt apart by $(logits_apart "$work/ours-$type.logits" "$work/ref-$type.logits")"
  check "$type greedy" '[ "$greedy" -eq 32 ]'
  check "$type teacher-forced" '[ "$agree" -ge 30 ]'
done
# The Hugging Face folder the GGUF files came from, opened by the runner itself (rotate-half RoPE,
# q and k unpermuted): the f32 file's greedy tokens.
"$runner" "$work/hf" --prompt-ids "$ours" --tokens 32 >"$work/ours-hf.out"
hf=$(sed -n 's/^tokens: //p' "$work/ours-hf.out") f32=$(sed -n 's/^tokens: //p' "$work/ours-f32.out")
echo "runner on the Hugging Face folder: the first $(prefix_same "$hf" "$f32") of 32 greedy tokens as from the f32 GGUF file"
check "Hugging Face folder" '[ "$hf" = "$f32" ]'
for type in Q4_K_M Q5_K_M Q6_K; do
  model="$work/model-$type.gguf"
  dotnet "$reference/LlamaCppReference.dll" quantize "$work/model-f32.gguf" "$model" $type >"$work/quantize-$type.log" 2>&1
  "$quantized_bytes" "$work/model-f32.gguf" "$model" >"$work/bytes-$type.out" && bytes_ok=1 || bytes_ok=0
  sed 's/^/  /' "$work/bytes-$type.out"
  check "$type bytes" '[ "$bytes_ok" = 1 ]'
  dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$ours" --tokens 24 --logits "$work/ref-$type.logits" \
    >"$work/ref-$type.out" 2>/dev/null
  ref=$(sed -n 's/^tokens: //p' "$work/ref-$type.out")
  dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$ours" --tokens 0 --teacher "$ref" 2>/dev/null |
    sed -n 's/^teacher: //p' >"$work/ref-forced-$type.txt"
  "$runner" "$model" --prompt-ids "$ours" --tokens 24 --teacher "$ref" --logits "$work/ours-$type.logits" >"$work/ours-$type.out"
  got=$(sed -n 's/^tokens: //p' "$work/ours-$type.out") forced=$(sed -n 's/^teacher: //p' "$work/ours-$type.out")
  greedy=$(prefix_same "$got" "$ref") agree=$(count_same "$forced" "$(cat "$work/ref-forced-$type.txt")")
  echo "runner $type: greedy: the first $greedy of 24 tokens identical to llama.cpp's ($([ "$greedy" -ge 16 ] && echo "at least" || echo "BELOW") the bar of 16); teacher-forced: $agree of 24 positions agree; logits after the prompt apart by $(logits_apart "$work/ours-$type.logits" "$work/ref-$type.logits")"
  check "$type teacher-forced" '[ "$agree" -ge 21 ]'
  check "$type greedy: at least 16 of 24" '[ "$greedy" -ge 16 ]'
  for level in avx2 avx; do # the reference against itself: its natives of a narrower SIMD level
    other=$(TL_LLAMACPP_AVX=$level dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$ours" --tokens 24 \
      2>/dev/null | sed -n 's/^tokens: //p')
    echo "runner $type: llama.cpp's $level natives against its default ones: the first $(prefix_same "$other" "$ref") of 24 greedy tokens identical"
  done
  # The reference against itself again: the same natives, the prompt fed a token a step.
  dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$ours" --tokens 24 --chunk 1 \
    --logits "$work/ref-$type-chunk1.logits" 2>/dev/null | sed -n 's/^tokens: //p' >"$work/ref-$type-chunk1.txt"
  echo "runner $type: llama.cpp's prompt fed a token a step against its one batch: the first $(prefix_same "$(cat "$work/ref-$type-chunk1.txt")" "$ref") of 24 greedy tokens identical; logits after the prompt apart by $(logits_apart "$work/ref-$type-chunk1.logits" "$work/ref-$type.logits")"
  if [ "$greedy" -lt 24 ]; then # where the greedy runs part: both sides fed the prompt and the shared tokens
    shared="$ours$([ "$greedy" -gt 0 ] && echo ",$(cut -d, -f1-"$greedy" <<<"$ref")")"
    "$runner" "$model" --prompt-ids "$shared" --tokens 1 --logits "$work/ours-$type-parting.logits" >/dev/null
    dotnet "$reference/LlamaCppReference.dll" generate "$model" --prompt-ids "$shared" --tokens 1 \
      --logits "$work/ref-$type-parting.logits" >/dev/null 2>&1
    parting=$(near_tie "$work/ours-$type-parting.logits" "$work/ref-$type-parting.logits")
    echo "runner $type: at token $greedy $parting"
    check "$type parts at a near tie" '[[ "$parting" != *"NOT a near tie"* ]]'
  fi
done
# A short context: the logits after 8 prompt tokens within 1e-5 of llama.cpp's, for each quantized
# file of the random model (the recited one's sharper attention parts them by 0.02 from 8 tokens on).
eight=$(cut -d, -f1-8 <<<"$ours")
for type in q8_0 Q4_K_M Q5_K_M Q6_K; do
  "$runner" "$work/random/model-$type.gguf" --prompt-ids "$eight" --tokens 1 --logits "$work/eight-$type.logits" >/dev/null
  dotnet "$reference/LlamaCppReference.dll" generate "$work/random/model-$type.gguf" --prompt-ids "$eight" --tokens 1 \
    --logits "$work/ref-eight-$type.logits" >/dev/null 2>&1
  apart=$("$py" -c 'import sys, numpy as np
a, b = (np.fromfile(f, dtype=np.float32).astype(np.float64) for f in sys.argv[1:3]); print(f"{np.abs(a - b).max():.2g}")' \
    "$work/eight-$type.logits" "$work/ref-eight-$type.logits")
  echo "runner $type: after 8 prompt tokens the logits lie within $apart of llama.cpp's"
  check "$type short context: logits within 1e-5" '"$py" -c "import sys; sys.exit(not float(sys.argv[1]) <= 1e-5)" "$apart"'
done
# tl_model_options.repack on these files: a 5-token prompt and 24 greedy tokens (every product a
# decode's few rows, so the q8_0, q4_K and q6_K layouts serve them) give the logits after the
# prompt bit for bit and the same tokens as the weights read as stored.
short=$(cut -d, -f1-5 <<<"$ours")
for type in q8_0 Q4_K_M Q5_K_M Q6_K; do
  for repack in 0 1; do
    "$runner" "$work/model-$type.gguf" --prompt-ids "$short" --tokens 24 --repack $repack \
      --logits "$work/short-$type-$repack.logits" | sed -n 's/^tokens: //p' >"$work/short-$type-$repack.tokens"
  done
  check "$type repacked: the same bits and tokens" 'cmp -s "$work/short-$type-0.logits" "$work/short-$type-1.logits" &&
    cmp -s "$work/short-$type-0.tokens" "$work/short-$type-1.tokens" && [ -s "$work/short-$type-1.tokens" ]'
done
# The rows test_quant checks tl_convert against in every build, made again from the random files.
"$py" "$src/tests/llamacpp/ggml_quantized.py" "$work/random" "$work/ggml_quantized.gguf"
check "tests/golden/ggml_quantized.gguf made again" 'cmp -s "$work/ggml_quantized.gguf" "$src/tests/golden/ggml_quantized.gguf"'
echo "runner against llama.cpp: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
