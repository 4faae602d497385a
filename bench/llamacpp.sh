#!/usr/bin/env bash
# The model runner against llama.cpp (LLamaSharp 0.30.0's natives, tests/llamacpp) on the same
# GGUF files: a random Llama of issue 41's shape (d_model 2048, 4 layers, 32 heads over 4 KV
# heads, FFN 5632, LLaMA 2's vocabulary), in f32, q8_0, q4_0, Q4_K_M, Q5_K_M and Q6_K (q8_0, q4_0,
# Q4_K_M, Q5_K_M and Q6_K also opened with tl_model_options.repack, and f32 with its copies; TL_BENCH_ROWS picks some of the rows); a 512-token prompt as one batch (first-token latency)
# and 32 decoded tokens, at 1 and 2 threads, ROUNDS interleaved
# rounds (ours, then llama.cpp's, each round).  Prints min/median/max of each side and the ratio
# of medians, and each side's median decode as GB/s of the weights a token reads (every tensor
# but the embedding table, of which one row) and its share of the machine's read limit
# (bench_read_limit beside the runner's build, measured at the start).  Measures; asserts nothing.
# The K-quant files are written from the f32 file by llama.cpp's own quantizer.  The runner keeps OpenBLAS on
# one thread (its executor runs the products); OPENBLAS_NUM_THREADS=1 keeps OpenBLAS from starting
# a pool at load whose threads spin for ~0.1 s, taking a core from the prompt (tl_context.h).
#   bench/llamacpp.sh RUNNER REFERENCE_DIR DECODE NODE_MODULES WORK_DIR [ROUNDS]
set -euo pipefail
runner=$1 reference=$2 decode=$3 npm=$4 work=$5 rounds=${6:-3}
src="$(cd "$(dirname "$0")/.." && pwd)"
py=/usr/bin/python3
mkdir -p "$work/hf"
if [ ! -f "$work/model-q4_0.gguf" ]; then
  "$decode" --arch llama --d-model 2048 --layers 4 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000 --tokens 2 \
    --prompt-ids 5 --seed 41 --threads 2 --save-weights "$work/hf/model.safetensors" >/dev/null
  for type in f32 q8_0 q4_0; do
    "$py" "$src/scripts/llama_to_gguf.py" "$work/hf" "$work/model-$type.gguf" --type $type --tokenizer llama2 --npm "$npm"
  done
fi
for type in Q4_K_M Q5_K_M Q6_K; do
  [ -f "$work/model-$type.gguf" ] ||
    dotnet "$reference/LlamaCppReference.dll" quantize "$work/model-f32.gguf" "$work/model-$type.gguf" $type >/dev/null 2>&1
done
prompt=$("$py" -c 'print(",".join(str(1 + (i * 7919) % 31000) for i in range(512)))')
stats() { "$py" -c 'import statistics, sys
v = sorted(float(x) for x in sys.argv[1:]); print(f"{v[0]:.2f} / {statistics.median(v):.2f} / {v[-1]:.2f}")' "$@"; }
median() { "$py" -c 'import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $rounds interleaved rounds"
read -r limit1 limit2 < <("$(dirname "$runner")/../bench/bench_read_limit" | sed -n 's/^read limit: //p')
echo "read limit: $limit1 GB/s at 1 thread, $limit2 at 2 (bench_read_limit: the best of three ways to read 512 MiB)"
# The bytes a decoded token reads from the file's weights: every tensor but token_embd, and one row of it.
token_bytes() { PYTHONPATH="$src/scripts" "$py" -c 'import sys; from gguf_read import read_gguf
t = read_gguf(sys.argv[1]); kind, shape, raw = t.pop("token_embd.weight")
print(sum(len(r) for _, _, r in t.values()) + len(raw) // shape[0])' "$1"; }
# A median ms a token ($1) of bytes a token at a read limit ($2, GB/s): "GB/s, share of the limit".
read_share() { "$py" -c "g = $bytes / $1 / 1e6; print(f'{g:.1f} GB/s, {100 * g / $2:.0f}%')"; }
printf '%-14s %-3s %-34s %-34s %-8s\n' dtype thr "prompt 512 ms: ours min/med/max" "llama.cpp min/med/max" "ratio"
# +repack: the file opened with tl_model_options.repack (decode's sixteen-row layout; f32's weights
# copied as stored), its copies on huge pages.
for row in ${TL_BENCH_ROWS:-f32 f32+repack q8_0 q8_0+repack q4_0 q4_0+repack Q4_K_M Q4_K_M+repack Q5_K_M Q5_K_M+repack Q6_K Q6_K+repack}; do
  type=${row%+repack} repack=0
  [ "$row" = "$type" ] || repack=1
  bytes=$(token_bytes "$work/model-$type.gguf")
  for threads in 1 2; do
    ours_p=() ours_t=() ref_p=() ref_t=()
    for r in $(seq "$rounds"); do
      read -r p t < <(OPENBLAS_NUM_THREADS=1 "$runner" "$work/model-$type.gguf" --prompt-ids "$prompt" --tokens 32 --threads "$threads" --chunk 512 \
        --repack "$repack" | sed -n 's/^timing: //p')
      ours_p+=("$p") ours_t+=("$t")
      read -r p t < <(dotnet "$reference/LlamaCppReference.dll" generate "$work/model-$type.gguf" --prompt-ids "$prompt" \
        --tokens 32 --threads "$threads" 2>/dev/null | sed -n 's/^timing: //p')
      ref_p+=("$p") ref_t+=("$t")
    done
    rp=$("$py" -c "print(f'{$(median "${ours_p[@]}") / $(median "${ref_p[@]}"):.2f}x')")
    rt=$("$py" -c "print(f'{$(median "${ours_t[@]}") / $(median "${ref_t[@]}"):.2f}x')")
    printf '%-14s %-3s %-34s %-34s %-8s\n' "$row" "$threads" "$(stats "${ours_p[@]}")" "$(stats "${ref_p[@]}")" "$rp"
    printf '%-14s %-3s %-34s %-34s %-8s\n' "" "" "ms/token $(stats "${ours_t[@]}")" "$(stats "${ref_t[@]}")" "$rt"
    limit=$([ "$threads" = 1 ] && echo "$limit1" || echo "$limit2")
    printf '%-14s %-3s %-34s %-34s\n' "" "" "read $(read_share "$(median "${ours_t[@]}")" "$limit")" \
      "$(read_share "$(median "${ref_t[@]}")" "$limit")"
  done
done

