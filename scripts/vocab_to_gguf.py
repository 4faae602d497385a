#!/usr/bin/env python3
"""Writes a GGUF file that holds a vocabulary and a Llama model's hyperparameters but no tensors:
what a tokenizer (tensorlife's, or llama.cpp's with vocab_only) reads.

  usage: vocab_to_gguf.py OUT.gguf --tokenizer llama2|llama3|synthetic [--npm DIR] [--pre NAME] [--size N]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_write import FLOAT32, STRING, UINT32, write_gguf  # noqa: E402
import vocabularies  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--tokenizer", choices=["synthetic", "llama2", "llama3"], required=True)
    ap.add_argument("--npm", help="node_modules with llama-tokenizer-js and llama3-tokenizer-js")
    ap.add_argument("--pre", help="tokenizer.ggml.pre instead of the vocabulary's own")
    ap.add_argument("--size", type=int, default=1000, help="synthetic: the number of tokens")
    args = ap.parse_args()
    kvs = vocabularies.synthetic(args.size) if args.tokenizer == "synthetic" else getattr(vocabularies, args.tokenizer)(args.npm)
    if args.pre:
        kvs = [kv for kv in kvs if kv[0] != "tokenizer.ggml.pre"] + [("tokenizer.ggml.pre", STRING, args.pre)]
    hparams = [("general.architecture", STRING, "llama"), ("general.name", STRING, args.tokenizer),
               ("llama.context_length", UINT32, 2048), ("llama.embedding_length", UINT32, 64),
               ("llama.block_count", UINT32, 1), ("llama.feed_forward_length", UINT32, 128),
               ("llama.attention.head_count", UINT32, 4), ("llama.attention.head_count_kv", UINT32, 4),
               ("llama.rope.dimension_count", UINT32, 16),
               ("llama.attention.layer_norm_rms_epsilon", FLOAT32, 1e-5)]
    write_gguf(args.out, hparams + kvs, [])


if __name__ == "__main__":
    main()
