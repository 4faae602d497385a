#!/usr/bin/env python3
"""An independent safetensors writer (only struct and json) for tensorlife's loader tests.

Writes DIR/independent.safetensors with known values (the C test computes the same formulas),
and DIR/numpy.safetensors with DIR/numpy_expected.json beside it (the expected values in
tensorlife's tensor-JSON form).  Without numpy it fails: the test must not pass by skipping."""
import json
import struct
import sys

out = sys.argv[1]


def write(path, tensors, metadata=None):
    """tensors: list of (name, dtype, shape, raw bytes), stored in reverse order of the header."""
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, raw in reversed(tensors):
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def bf16(x):
    return struct.pack("<f", x)[2:]  # the high half of the little-endian float32


tensors = [
    ("w_f32", "F32", [3, 4], struct.pack("<12f", *[i * 0.25 - 1.5 for i in range(12)])),
    ("w_f64", "F64", [2, 3], struct.pack("<6d", *[i / 3.0 for i in range(6)])),
    ("ids", "I32", [5], struct.pack("<5i", *[i * 7 - 10 for i in range(5)])),
    ("h_f16", "F16", [6], struct.pack("<6e", *[i * 0.5 - 1.0 for i in range(6)])),
    ("b_bf16", "BF16", [4], b"".join(bf16((i - 2) * 1.5) for i in range(4))),
    ("empty", "F32", [0, 3], b""),
]
write(f"{out}/independent.safetensors", tensors, {"format": "pt", "writer": "struct+json"})

try:
    import numpy as np
except ImportError:  # scripts/setup.sh installs python3-numpy: its absence fails the test, never skips it
    sys.exit(f"{sys.executable} has no numpy: install python3-numpy (scripts/setup.sh does)")
arr = (np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(0.1)).astype(np.float32)
write(f"{out}/numpy.safetensors", [("arr", "F32", list(arr.shape), arr.tobytes())])
with open(f"{out}/numpy_expected.json", "w") as f:
    json.dump({"dtype": "f32", "shape": list(arr.shape), "data": [float(x) for x in arr.ravel()]}, f)
print("fixtures written to", out)
