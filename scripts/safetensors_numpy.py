"""A safetensors file's tensors as float32 NumPy arrays (F32, F16, BF16), read with json and
struct alone: the Python references read the weights the library reads without sharing its code."""
import json
import struct

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    base = 8 + size
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        raw = data[base + lo:base + hi]
        kind = info["dtype"]
        if kind == "F32":
            a = np.frombuffer(raw, dtype="<f4")
        elif kind == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif kind == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: {name} is {kind}; this reader takes F32, F16 and BF16")
        out[name] = a.reshape(info["shape"]).astype(np.float32)
    return out
