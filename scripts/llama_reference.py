#!/usr/bin/env python3
"""An independent reference for the decode demo's Llama path: PyTorch (Debian's python3-torch)
with Hugging Face's LlamaForCausalLM semantics written out (RMSNorm in f32, rotate_half RoPE,
repeat_kv for grouped-query attention, SiLU-gated MLP), over the f32 weights of a Hugging Face
folder (model.safetensors, config.json) such as `decode --arch llama --save-weights` writes.

Teacher-forced: the demo's report (--report of the decode demo) gives the tokens it produced
after the prompt; the reference reads the same inputs (the prompt, then the demo's own outputs)
and takes its own argmax at every position from the prompt's last on.  Where the two agree at every position, the reference's greedy decode
is the demo's token for token.  Prints the agreement; exits 1 when it is below --min-agreement
(1.0: identical) at positions where the reference's top two logits differ by more than --tie.

  usage: llama_reference.py MODEL_DIR REPORT.json [--prompt-ids 1,2,3] [--mode scoped]
                            [--min-agreement 1.0] [--tie 1e-4]
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_numpy import read_safetensors  # noqa: E402


def rms_norm(x, w, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(weights, cfg, ids):
    """Logits [T, vocab] of LlamaForCausalLM over ids, causal, positions 0..T-1."""
    d, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kv_heads = cfg.get("num_key_value_heads", heads)
    hd, eps, theta = d // heads, cfg["rms_norm_eps"], cfg.get("rope_theta", 10000.0)
    W = {k: torch.as_tensor(v) for k, v in weights.items()}  # NumPy arrays shared, or tensors as given
    T = len(ids)
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((T, T), float("-inf")).triu(1)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = (h @ W[p + "self_attn.q_proj.weight"].T).view(T, heads, hd).transpose(0, 1)
        k = (h @ W[p + "self_attn.k_proj.weight"].T).view(T, kv_heads, hd).transpose(0, 1)
        v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, kv_heads, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(heads // kv_heads, dim=0)  # repeat_kv
        v = v.repeat_interleave(heads // kv_heads, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(hd) + mask
        attn = torch.softmax(scores, dim=-1) @ v
        x = x + attn.transpose(0, 1).reshape(T, d) @ W[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate = torch.nn.functional.silu(h @ W[p + "mlp.gate_proj.weight"].T)
        x = x + (gate * (h @ W[p + "mlp.up_proj.weight"].T)) @ W[p + "mlp.down_proj.weight"].T
    h = rms_norm(x, W["model.norm.weight"], eps)
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return h @ head.T


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("report")
    ap.add_argument("--prompt-ids", default="")
    ap.add_argument("--mode", default="scoped")
    ap.add_argument("--min-agreement", type=float, default=1.0)
    ap.add_argument("--tie", type=float, default=1e-4)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    with open(os.path.join(args.model_dir, "config.json")) as f:
        cfg = json.load(f)
    weights = read_safetensors(os.path.join(args.model_dir, "model.safetensors"))
    with open(args.report) as f:
        out = [s["token"] for s in json.load(f)["modes"][args.mode]]
    # The demo feeds the prompt (token 1 without one) as a batch: its first record is the token
    # after the prompt, each next one the token after the one before.
    prompt = [int(t) for t in args.prompt_ids.split(",") if t] or [1]
    inputs = prompt + out[:-1]
    with torch.no_grad():
        logits = forward(weights, cfg, inputs)[len(prompt) - 1:]
    top2 = logits.topk(2, dim=-1)
    ref = top2.indices[:, 0].tolist()
    margin = (top2.values[:, 0] - top2.values[:, 1]).tolist()
    scale = float(logits.abs().max())
    agree = sum(r == o for r, o in zip(ref, out))
    ties = [p for p in range(len(out)) if ref[p] != out[p] and margin[p] <= args.tie * scale]
    counted = len(out) - len(ties)
    rate = (agree / counted) if counted else 1.0
    label = f"{args.label}: " if args.label else ""
    print(f"llama_reference: {label}{agree} of {len(out)} positions agree with PyTorch (teacher-forced), "
          f"{rate:.3f} of those not within a tie ({len(ties)} ties)")
    first = next((p for p in range(len(out)) if ref[p] != out[p] and p not in ties), None)
    if first is not None:
        print(f"  first disagreement at position {first}: demo {out[first]}, PyTorch {ref[first]} "
              f"(margin {margin[first]:.3g})")
    sys.exit(0 if rate >= args.min_agreement else 1)


if __name__ == "__main__":
    main()
