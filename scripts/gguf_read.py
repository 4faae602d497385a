"""A GGUF version 3 reader in Python's struct alone, the counterpart of gguf_write.py: each
tensor's bytes are its extent in the data section, from its offset to the next tensor's (or the
file's end), so they hold up to one alignment's padding past the tensor and need no table of
block sizes.  tests/llamacpp/ggml_quantized.py reads llama.cpp's files with it, bench/llamacpp.sh
the bytes a decoded token reads.

  read_gguf(path): {name: (ggml type, row-major shape, bytes)}"""
import struct

import gguf_write as G


def read_gguf(path):
    data = open(path, "rb").read()
    at = 0

    def take(fmt):
        nonlocal at
        v = struct.unpack_from(fmt, data, at)
        at += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal at
        n = take("<Q")
        s = data[at:at + n]
        at += n
        return s.decode()

    def skip_value(kind):
        nonlocal at
        if kind == G.STRING:
            string()
        elif kind == G.ARRAY:
            item, count = take("<I"), take("<Q")
            for _ in range(count):
                skip_value(item)
        else:
            at += struct.calcsize(G.PACK[kind])

    assert data[:4] == b"GGUF", f"{path}: not a GGUF file"
    at = 4
    _, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    alignment = G.ALIGNMENT
    for _ in range(n_kv):
        key, kind = string(), take("<I")
        if key == "general.alignment":
            alignment = take("<I")
        else:
            skip_value(kind)
    infos = []
    for _ in range(n_tensors):
        name, dims = string(), take("<I")
        shape = [take("<Q") for _ in range(dims)][::-1]
        infos.append((name, shape, take("<I"), take("<Q")))
    start = (at + alignment - 1) // alignment * alignment
    offsets = sorted(offset for *_, offset in infos)
    end_of = dict(zip(offsets, offsets[1:] + [len(data) - start]))
    return {name: (kind, shape, data[start + offset:start + end_of[offset]]) for name, shape, kind, offset in infos}
