"""A GGUF version 3 writer in Python's struct alone, independent of tensorlife's reader:
scripts/llama_to_gguf.py writes models with it, tests/golden/make_golden.py the metadata
fixture the bindings' tests read.

  write_gguf(path, kvs, tensors): kvs a list of (key, type, value) with type one of the
  constants below (ARRAY values as (item type, list)); tensors a list of (name, ggml type,
  row-major shape, raw bytes)."""
import struct

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
PACK = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i", FLOAT32: "<f", BOOL: "<?",
        UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
GGML = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "bf16": 30}
ALIGNMENT = 32


def string(text):
    raw = text.encode() if isinstance(text, str) else bytes(text)
    return struct.pack("<Q", len(raw)) + raw


def value(kind, v):
    if kind == STRING:
        return string(v)
    if kind == ARRAY:
        item, items = v
        return struct.pack("<IQ", item, len(items)) + b"".join(value(item, x) for x in items)
    return struct.pack(PACK[kind], v)


def write_gguf(path, kvs, tensors):
    head = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(kvs))]
    head += [string(k) + struct.pack("<I", kind) + value(kind, v) for k, kind, v in kvs]
    blobs, offset = [], 0
    for name, ggml_type, shape, raw in tensors:
        dims = list(reversed(shape))  # GGUF lists the innermost dim first
        head.append(string(name) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, ggml_type, offset))
        blobs.append(raw + b"\0" * (-len(raw) % ALIGNMENT))
        offset += len(blobs[-1])
    head = b"".join(head)
    with open(path, "wb") as f:
        f.write(head + b"\0" * (-len(head) % ALIGNMENT))
        for b in blobs:
            f.write(b)
    return offset
