#!/usr/bin/env python3
"""Trains a Hugging Face Llama folder (model.safetensors, config.json: a random model such as
`decode --arch llama --save-weights` writes) until it recites one token sequence, and writes its
weights back in place.  A random model's logits stand close, so any rounding may swap its greedy
picks; a model that has learnt a text picks each next token by a wide margin, as a trained model
does, and two correct implementations then agree on it token for token.  PyTorch (Debian's) with
scripts/llama_reference.py's forward pass, one thread, a fixed seed; it stops once every position
of the sequence predicts its next token by a margin of at least --margin, and fails if it cannot.
  train_to_recite.py HF_DIR IDS [--margin 4] [--steps 400]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from llama_reference import forward  # noqa: E402
from safetensors_numpy import overwrite_safetensors, read_safetensors  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("hf_dir")
ap.add_argument("ids", help="comma-separated token ids: the text to recite")
ap.add_argument("--margin", type=float, default=4.0)
ap.add_argument("--steps", type=int, default=400)
args = ap.parse_args()
torch.manual_seed(0)
torch.set_num_threads(1)
with open(os.path.join(args.hf_dir, "config.json")) as f:
    cfg = json.load(f)
path = os.path.join(args.hf_dir, "model.safetensors")
weights = {k: torch.tensor(v, requires_grad=True) for k, v in read_safetensors(path).items()}
ids = [int(t) for t in args.ids.split(",")]
inputs, targets = ids[:-1], torch.tensor(ids[1:])
optimizer = torch.optim.Adam(weights.values(), lr=1e-3)
for step in range(args.steps + 1):  # each pass measures the margin, then takes a step
    logits = forward(weights, cfg, inputs)
    picked = logits.gather(1, targets[:, None])[:, 0]
    others = logits.scatter(1, targets[:, None], float("-inf")).max(1).values
    margin = float((picked - others).min())
    loss = torch.nn.functional.cross_entropy(logits, targets)
    if margin >= args.margin or step == args.steps:
        break
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"train_to_recite: {len(ids)} tokens, {step} steps, loss {float(loss):.3g}, "
      f"each next token ahead by at least {margin:.3g}")
if margin < args.margin:
    sys.exit(f"train_to_recite: the margin stayed below {args.margin} after {args.steps} steps")
overwrite_safetensors(path, {k: v.detach().numpy() for k, v in weights.items()})
