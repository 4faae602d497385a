#!/usr/bin/env bash
# The demo's Llama path (the library's model runner, tl_model.h: the prompt as one batch, then a
# token a step) against independent references, as a user runs it:
#  1. random weights (GQA: 8 heads over 2 KV heads) saved as a Hugging Face folder; PyTorch with
#     Hugging Face's semantics (scripts/llama_reference.py), teacher-forced over the demo's own
#     tokens, agrees at every position: greedy f32 decoding is the same, token for token;
#  2. the same folder as GGUF (scripts/llama_to_gguf.py: q and k permuted for interleaved RoPE,
#     a vocabulary): the demo reads it as stored and gives the f32 tokens again, with their text;
#  3. bf16, f16, q8_0 and q4_0 weights (converted at load, or stored so in GGUF), an f16 KV
#     cache: each run passes the demo's own checks (ambient = scoped bitwise, 0 allocator calls in
#     the steady state); agreement with PyTorch's f32 reference is printed, and must stay above a
#     floor that quantization noise alone does not reach down to.
#  4. the runner through tests/llamacpp/runner on the same GGUF and Hugging Face files, the
#     prompt in chunks of 512 and of 1: its greedy tokens equal the demo's f32 tokens (and so
#     PyTorch's).
#   check_decode_llama.sh DECODE SOURCE_DIR WORK_DIR RUNNER
set -euo pipefail
export LC_ALL=C # the decoded text holds raw bytes
decode=$1 src=$2 work=$3 runner=$4
py=/usr/bin/python3 # Debian's, with setup.sh's NumPy and PyTorch
rm -rf "$work" && mkdir -p "$work/hf"
shape=(--arch llama --d-model 256 --layers 2 --heads 8 --kv-heads 2 --ffn 512 --vocab 1000)
run=(--tokens 40 --prompt-ids 5,6,7 --threads 2)
tokens_of() { grep -a '^tokens:' "$1"; }

"$decode" "${shape[@]}" "${run[@]}" --save-weights "$work/hf/model.safetensors" --report "$work/f32.json" >"$work/f32.out"
"$py" "$src/scripts/llama_reference.py" "$work/hf" "$work/f32.json" --prompt-ids 5,6,7 --label "f32 (Hugging Face)"

# With a synthetic SentencePiece vocabulary (byte tokens, characters, pairs), as llama.cpp's
# files carry one.
for type in f32 q8_0 q4_0; do
  "$py" "$src/scripts/llama_to_gguf.py" "$work/hf" "$work/model-$type.gguf" --type $type
done
"$decode" --weights "$work/model-f32.gguf" "${run[@]}" --report "$work/gguf-f32.json" >"$work/gguf-f32.out"
if [[ "$(tokens_of "$work/gguf-f32.out")" != "$(tokens_of "$work/f32.out")" ]]; then
  echo "GGUF f32 tokens differ from the Hugging Face folder's:"; tokens_of "$work/gguf-f32.out"; tokens_of "$work/f32.out"
  exit 1
fi
grep -aq '^text: .' "$work/gguf-f32.out" || { echo "no decoded text from the GGUF vocabulary"; exit 1; }
"$py" "$src/scripts/llama_reference.py" "$work/hf" "$work/gguf-f32.json" --prompt-ids 5,6,7 --label "f32 (GGUF)"
# The runner on the same files, through tests/llamacpp/runner (chunks of 512 and of 1): the
# demo's generated tokens, so PyTorch's.
demo_generated=$("$py" -c 'import json, sys; s = json.load(open(sys.argv[1]))["modes"]["scoped"]
print(",".join(str(x["token"]) for x in s))' "$work/gguf-f32.json")
for source in "$work/model-f32.gguf" "$work/hf"; do
  for chunk in 512 1; do
    got=$("$runner" "$source" --prompt-ids 5,6,7 --tokens 38 --chunk $chunk --threads 2 | sed -n 's/^tokens: //p')
    [ "$got" = "$demo_generated" ] || { echo "runner on $source, chunk $chunk: $got"; echo "demo: $demo_generated"; exit 1; }
  done
done
# --prompt: text through the library's runner, printed as it comes, allocation-free once warm.
"$decode" --weights "$work/model-q8_0.gguf" --prompt "the cat sat" --tokens 12 --threads 2 --kv-dtype f16 \
  --temperature 0.8 --top-k 40 --sample-seed 3 >"$work/prompt.out"
grep -q '^prompt ids (' "$work/prompt.out" && grep -q '^generated ids (' "$work/prompt.out" &&
  grep -q 'steady state: 0 allocator calls' "$work/prompt.out" || { echo "decode --prompt:"; cat "$work/prompt.out"; exit 1; }

check() { # label, floor, demo arguments...
  local label=$1 floor=$2
  shift 2
  "$decode" "${run[@]}" "$@" --report "$work/$label.json" >"$work/$label.out"
  grep -q 'scoped steady state: 0 allocator calls' "$work/$label.out"
  "$py" "$src/scripts/llama_reference.py" "$work/hf" "$work/$label.json" --prompt-ids 5,6,7 \
    --min-agreement "$floor" --label "$label"
}
hf=(--weights "$work/hf/model.safetensors" --arch llama)
check bf16 0.9 "${hf[@]}" --weights-dtype bf16
check f16 0.9 "${hf[@]}" --weights-dtype f16
check q8_0 0.8 "${hf[@]}" --weights-dtype q8_0
check q4_0 0.5 "${hf[@]}" --weights-dtype q4_0
check kv-f16 0.9 "${hf[@]}" --kv-dtype f16
check gguf-q8_0 0.8 --weights "$work/model-q8_0.gguf"
check gguf-q4_0 0.5 --weights "$work/model-q4_0.gguf"
grep -aq 'weights .*model-q4_0.gguf as stored' "$work/gguf-q4_0.out"
# Files that are not such a model: refused with exit 1 and the reason, never a crash.
refused() { # the expected message, then the demo's arguments
  local want=$1
  shift
  if "$decode" --tokens 4 "$@" >"$work/refused.out" 2>&1; then echo "accepted: $*"; exit 1; fi
  grep -q "$want" "$work/refused.out" || { echo "wanted '$want' from $*:"; cat "$work/refused.out"; exit 1; }
}
refused 'general.architecture is not "llama"' --weights "$src/tests/golden/metadata.gguf"
mkdir -p "$work/no-config" "$work/bad-config"
cp "$work/hf/model.safetensors" "$work/no-config/" && cp "$work/hf/model.safetensors" "$work/bad-config/"
refused 'config.json: cannot open' --arch llama --weights "$work/no-config/model.safetensors"
sed 's/"intermediate_size":[^,]*/"intermediate_size": 640/' "$work/hf/config.json" >"$work/bad-config/config.json"
refused "mlp.gate_proj.weight' is not \[640, 256\]" --arch llama --weights "$work/bad-config/model.safetensors"
head -c 5000 "$work/model-q8_0.gguf" >"$work/cut.gguf"
refused 'cut.gguf' --weights "$work/cut.gguf"
echo "decode --arch llama: f32 identical to PyTorch from both files, the runner's tokens too; storage dtypes above their floors; bad files refused"
