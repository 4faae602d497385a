"""ggml's block formats in NumPy, independent of tensorlife's C: Q8_0 and Q4_0 bytes by ggml's
reference rounding (quantize_row_q8_0_ref, quantize_row_q4_0_ref) restated in float32 one
operation for one, and their exact decoded values.  tests/golden/make_golden.py checks the
library's tl_convert against these bytes; scripts/llama_to_gguf.py writes GGUF tensors with them.

Rows are float32 arrays whose last dim is a multiple of 32; the bytes come out as uint8 rows.
"""
import numpy as np

BLOCK = 32


def _blocks(x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    assert x.shape[-1] % BLOCK == 0, "rows must be whole blocks of 32"
    return x.reshape(-1, BLOCK)


def _round_half_away(v):
    """C's roundf on float32 values, exact in double."""
    v = v.astype(np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def q8_0_bytes(x):
    """[..., n] float32 -> [..., n / 32 * 34] uint8: an f16 scale max|x| / 127, then 32 int8."""
    b = _blocks(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (np.abs(b).max(axis=1) / np.float32(127)).astype(np.float32)
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    q = _round_half_away(b * inv[:, None]).astype(np.int64)
    out = np.concatenate([d.astype(np.float16).view(np.uint8).reshape(-1, 2), (q & 0xff).astype(np.uint8)], axis=1)
    return out.reshape(x.shape[:-1] + (x.shape[-1] // BLOCK * 34,))


def q4_0_bytes(x):
    """[..., n] float32 -> [..., n / 32 * 18] uint8: an f16 scale (the value of largest magnitude)
    / -8, then nibbles min(15, trunc(x / d + 8.5)), element j low and j + 16 high in byte j."""
    b = _blocks(x)
    big = b[np.arange(len(b)), np.argmax(np.abs(b), axis=1)]  # the first of largest magnitude
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (big / np.float32(-8)).astype(np.float32)
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    q = np.minimum(15, np.trunc((b * inv[:, None]).astype(np.float32) + np.float32(8.5)).astype(np.int64))
    nibbles = (q[:, :16] | (q[:, 16:] << 4)).astype(np.uint8)
    out = np.concatenate([d.astype(np.float16).view(np.uint8).reshape(-1, 2), nibbles], axis=1)
    return out.reshape(x.shape[:-1] + (x.shape[-1] // BLOCK * 18,))


def decoded(raw, kind):
    """[..., bytes] uint8 of q8_0/q4_0 rows -> their exact float32 values."""
    size = 34 if kind == "q8_0" else 18
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    blk = raw.reshape(-1, size)
    d = blk[:, :2].copy().view(np.float16).astype(np.float32)
    if kind == "q8_0":
        q = blk[:, 2:].view(np.int8).astype(np.float32)
    else:
        q = np.concatenate([blk[:, 2:] & 0xf, blk[:, 2:] >> 4], axis=1).astype(np.float32) - np.float32(8)
    vals = (q * d).astype(np.float32)
    return vals.reshape(raw.shape[:-1] + (raw.shape[-1] // size * BLOCK,))
