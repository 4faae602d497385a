#!/usr/bin/env python3
"""Rows quantized by llama.cpp's own quantizer, with the f32 rows they came from, for
tests/test_quant.c to check tl_convert's bytes against in every build (the llamacpp stage compares
whole files, but only where LLamaSharp runs).

From the llamacpp stage's folder of the random model's files (model-f32.gguf and llama.cpp's Q4_K_M, Q5_K_M and Q6_K files
quantized from it), for each block type llama.cpp wrote there (q4_K, q5_K, q6_K, and the q5_0,
q5_1 and q8_0 it falls back to where a row is no whole number of 256), the first two rows of the
first tensor of that type: written to OUT as GGUF tensors "<type>.f32" and "<type>.ggml".  The
stage writes the file again and compares it with tests/golden/ggml_quantized.gguf.
  ggml_quantized.py WORK_DIR OUT
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import gguf_write as G  # noqa: E402
from gguf_read import read_gguf  # noqa: E402

# ggml type: (name, elements a block, bytes a block)
TYPES = {0: ("f32", 1, 4), 6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34),
         12: ("q4_k", 256, 144), 13: ("q5_k", 256, 176), 14: ("q6_k", 256, 210)}
ROWS = 2


work, out_path = sys.argv[1], sys.argv[2]
source = read_gguf(os.path.join(work, "model-f32.gguf"))
tensors, seen = [], set()
for file in ("model-Q4_K_M.gguf", "model-Q5_K_M.gguf", "model-Q6_K.gguf"):
    for name, (kind, shape, raw) in read_gguf(os.path.join(work, file)).items():
        if kind not in TYPES or kind == 0 or kind in seen or len(shape) != 2 or name == "token_embd.weight":
            continue
        seen.add(kind)
        type_name, block, block_bytes = TYPES[kind]
        cols = shape[1]
        f32_kind, f32_shape, f32_raw = source[name]
        assert f32_kind == 0 and f32_shape == shape, name
        tensors.append((type_name + ".f32", 0, [ROWS, cols], f32_raw[:ROWS * cols * 4]))
        tensors.append((type_name + ".ggml", kind, [ROWS, cols], raw[:ROWS * cols // block * block_bytes]))
tensors.sort(key=lambda t: t[0])
G.write_gguf(out_path, [("general.source", G.STRING, "llama.cpp's quantizer (LLamaSharp.Backend.Cpu 0.30.0), "
                         "first two rows of the first tensor of each type in the llamacpp stage's files")], tensors)
print(f"ggml_quantized: {len(tensors) // 2} types: {', '.join(t[0][:-4] for t in tensors if t[0].endswith('.f32'))}")
