"""Tokenizer metadata for GGUF files, as llama.cpp's converter writes it (tokenizer.ggml.*):

  llama2(npm_dir)   LLaMA 2's SentencePiece vocabulary (32,000 tokens) from the npm package
                    llama-tokenizer-js; its scores follow from its merge order (the package has
                    none): -(id - 259), pieces made only of U+2581 at -1e9, control and byte
                    tokens 0, which is the original tokenizer.model's on all 32,000 pieces.
  llama3(npm_dir)   Llama 3's byte-level BPE (128,000 tokens, their merges, 256 special tokens)
                    from the npm package llama3-tokenizer-js; pre-tokenizer "llama-bpe".
  synthetic(n)      a SentencePiece vocabulary of n tokens for models without one: <unk>, <s>,
                    </s>, the 256 byte tokens, then single characters and pairs.

Each returns a list of (key, gguf type, value) for gguf_write.write_gguf.  npm_dir is the
node_modules folder holding the packages (scripts/stages/lib.sh installs them from
tests/vocabularies/package.json)."""
import base64
import os
import re

from gguf_write import ARRAY, BOOL, FLOAT32, INT32, STRING, UINT32

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _js_string(path, name):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"const %s\s*=\s*\"([^\"]*)\"" % re.escape(name), text)
    if not m:
        raise SystemExit(f"vocabularies: {path} has no {name}")
    return m.group(1)


def llama2(npm_dir):
    src = os.path.join(npm_dir, "llama-tokenizer-js", "llama-tokenizer.js")
    tokens = base64.b64decode(_js_string(src, "llama_vocab_base64")).decode("utf-8").split("\n")
    assert len(tokens) == 32000, len(tokens)
    scores, types = [], []
    for i, t in enumerate(tokens):
        if i == 0:
            types.append(UNKNOWN), scores.append(0.0)
        elif i < 3:
            types.append(CONTROL), scores.append(0.0)
        elif i < 259:
            types.append(BYTE), scores.append(0.0)
        else:
            types.append(NORMAL), scores.append(-1e9 if set(t) == {"\u2581"} else -float(i - 259))
    return [("tokenizer.ggml.model", STRING, "llama"),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.scores", ARRAY, (FLOAT32, scores)),
            ("tokenizer.ggml.token_type", ARRAY, (INT32, types)),
            ("tokenizer.ggml.bos_token_id", UINT32, 1),
            ("tokenizer.ggml.eos_token_id", UINT32, 2),
            ("tokenizer.ggml.unknown_token_id", UINT32, 0),
            ("tokenizer.ggml.add_bos_token", BOOL, True),
            ("tokenizer.ggml.add_eos_token", BOOL, False)]


def _unpack17(raw):
    bits = int.from_bytes(raw, "big")
    total = len(raw) * 8
    count = total // 17
    return [(bits >> (total - 17 * (k + 1))) & 0x1FFFF for k in range(count)]


def llama3(npm_dir):
    src = os.path.join(npm_dir, "llama3-tokenizer-js", "src", "data-converted.js")
    tokens = base64.b64decode(_js_string(src, "llama_vocab_base64")).decode("utf-8").split("\n")
    ids = _unpack17(base64.b64decode(_js_string(src, "llama_merges_binary")))
    merges = [tokens[ids[2 * k]] + " " + tokens[ids[2 * k + 1]] for k in range(len(ids) // 2)]
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
    specials += [f"<|reserved_special_token_{i}|>" for i in range(3, 248)]
    types = [NORMAL] * len(tokens) + [CONTROL] * len(specials)
    tokens = tokens + specials
    assert len(tokens) == 128256, len(tokens)
    return [("tokenizer.ggml.model", STRING, "gpt2"),
            ("tokenizer.ggml.pre", STRING, "llama-bpe"),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.token_type", ARRAY, (INT32, types)),
            ("tokenizer.ggml.merges", ARRAY, (STRING, merges)),
            ("tokenizer.ggml.bos_token_id", UINT32, 128000),
            ("tokenizer.ggml.eos_token_id", UINT32, 128009),
            ("tokenizer.ggml.add_bos_token", BOOL, True)]


def synthetic(n):
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
    alphabet = ["\u2581"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    alphabet += list("0123456789.,!?'\"-:;()")
    extra = alphabet + [a + b for a in alphabet for b in alphabet]
    while len(tokens) < n:
        k = len(tokens) - 259
        tokens.append(extra[k] if k < len(extra) else f"\u2581w{k}")
        types.append(NORMAL)
    tokens, types = tokens[:n], types[:n]
    scores = [0.0] * 259 + [-float(i) for i in range(n - 259)]
    return [("tokenizer.ggml.model", STRING, "llama"),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.scores", ARRAY, (FLOAT32, scores[:n])),
            ("tokenizer.ggml.token_type", ARRAY, (INT32, types)),
            ("tokenizer.ggml.bos_token_id", UINT32, 1),
            ("tokenizer.ggml.eos_token_id", UINT32, 2),
            ("tokenizer.ggml.unknown_token_id", UINT32, 0)]
