#!/usr/bin/env python3
"""Writes a Hugging Face LlamaForCausalLM checkpoint (model.safetensors and config.json in one
folder; F32, F16 or BF16) as a GGUF version 3 file the way llama.cpp's converter does:
general.architecture = llama, the llama.* hyperparameters, token_embd / blk.N.attn_q ... /
output_norm / output, q and k permuted for interleaved RoPE, norms in f32 and every other weight
in the chosen type (f32, f16, q8_0, q4_0; ggml's rounding, scripts/ggml_blocks.py), and the
tokenizer keys llama.cpp needs to load it (scripts/vocabularies.py): LLaMA 2's or Llama 3's
vocabulary from their npm packages (--npm: the node_modules folder), or by default a synthetic
SentencePiece vocabulary of the model's size.

  usage: llama_to_gguf.py MODEL_DIR OUT.gguf [--type f32|f16|q8_0|q4_0]
                          [--tokenizer synthetic|llama2|llama3] [--npm DIR]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_blocks import q4_0_bytes, q8_0_bytes  # noqa: E402
from gguf_write import FLOAT32, GGML, STRING, UINT32, write_gguf  # noqa: E402
from safetensors_numpy import read_safetensors  # noqa: E402
import vocabularies  # noqa: E402

def permute(w, heads):
    """llama.cpp's permute: each head's rows from halves order to interleaved pairs."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def encode(w, kind):
    w = np.ascontiguousarray(w, dtype=np.float32)
    if kind == "f32":
        return w.tobytes()
    if kind == "f16":
        return w.astype(np.float16).tobytes()
    return (q8_0_bytes(w) if kind == "q8_0" else q4_0_bytes(w)).tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", choices=["f32", "f16", "q8_0", "q4_0"], default="f32")
    ap.add_argument("--tokenizer", choices=["synthetic", "llama2", "llama3"], default="synthetic")
    ap.add_argument("--npm", help="node_modules with llama-tokenizer-js and llama3-tokenizer-js")
    args = ap.parse_args()
    with open(os.path.join(args.model_dir, "config.json")) as f:
        cfg = json.load(f)
    weights = read_safetensors(os.path.join(args.model_dir, "model.safetensors"))
    d, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kv_heads = cfg.get("num_key_value_heads", heads)
    layers = cfg["num_hidden_layers"]

    tensors = [("token_embd.weight", weights["model.embed_tokens.weight"], args.type)]
    names = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    for l in range(layers):
        for gg, hf in names.items():
            w = weights[f"model.layers.{l}.{hf}.weight"]
            if gg == "attn_q":
                w = permute(w, heads)
            elif gg == "attn_k":
                w = permute(w, kv_heads)
            tensors.append((f"blk.{l}.{gg}.weight", w, "f32" if gg.endswith("norm") else args.type))
    tensors.append(("output_norm.weight", weights["model.norm.weight"], "f32"))
    if "lm_head.weight" in weights:
        tensors.append(("output.weight", weights["lm_head.weight"], args.type))

    kvs = [("general.architecture", STRING, "llama"),
           ("general.name", STRING, os.path.basename(os.path.abspath(args.model_dir))),
           ("general.alignment", UINT32, 32),
           ("llama.context_length", UINT32, cfg.get("max_position_embeddings", 2048)),
           ("llama.embedding_length", UINT32, d),
           ("llama.block_count", UINT32, layers),
           ("llama.feed_forward_length", UINT32, cfg["intermediate_size"]),
           ("llama.attention.head_count", UINT32, heads),
           ("llama.attention.head_count_kv", UINT32, kv_heads),
           ("llama.rope.dimension_count", UINT32, d // heads),
           ("llama.rope.freq_base", FLOAT32, cfg.get("rope_theta", 10000.0)),
           ("llama.attention.layer_norm_rms_epsilon", FLOAT32, cfg.get("rms_norm_eps", 1e-6))]
    if args.tokenizer == "synthetic":
        kvs += vocabularies.synthetic(cfg["vocab_size"])
    else:
        if not args.npm:
            raise SystemExit("llama_to_gguf: --tokenizer %s reads its npm package: give --npm" % args.tokenizer)
        kvs += getattr(vocabularies, args.tokenizer)(args.npm)
        n = len(kvs[[k for k, _, _ in kvs].index("tokenizer.ggml.tokens")][2][1])
        if n != cfg["vocab_size"]:
            raise SystemExit(f"llama_to_gguf: the {args.tokenizer} vocabulary has {n} tokens, the model {cfg['vocab_size']}")
    offset = write_gguf(args.out, kvs, [(name, GGML[kind], w.shape, encode(w, kind)) for name, w, kind in tensors])
    print(f"llama_to_gguf: {args.out}: {len(tensors)} tensors in {args.type}, {offset} bytes of data")


if __name__ == "__main__":
    main()
