"""A safetensors file's tensors as float32 NumPy arrays (F32, F16, BF16), read with json and
struct alone: the Python references read the weights the library reads without sharing its code.
F32 tensors can be written back in place (same names and shapes: the header stays as it was)."""
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


def overwrite_safetensors(path, arrays):
    """Writes each named array over the F32 tensor of that name and shape, in place."""
    with open(path, "r+b") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        for name, array in arrays.items():
            info = header[name]
            if info["dtype"] != "F32" or list(array.shape) != info["shape"]:
                raise ValueError(f"{path}: {name} is {info['dtype']} {info['shape']}, not F32 {list(array.shape)}")
            f.seek(8 + size + info["data_offsets"][0])
            f.write(np.ascontiguousarray(array, dtype="<f4").tobytes())
