#!/usr/bin/env python3
"""The conformance suite's independent reference: NumPy computes every case of tests/test_golden.c.

Writes DIR/golden.safetensors (each case's inputs and expected output, named "<case>.in0",
"<case>.in1", ..., "<case>.out") and DIR/golden.json (the cases: op, dtype, parameters, inputs
and the stated tolerance).  Values come from a fixed seed and fixed edge values (NaN, +-inf, -0,
subnormals, magnitudes near the dtype's limit), so the files are the same on every run:
tests/golden/ holds the committed copy, and the test command regenerates it and compares.

Tolerances say what may differ from NumPy's value and why:
  ulp 0, atol 0  bitwise: IEEE-exact arithmetic (add, sub, mul, div, scale, relu, layout ops,
                 integer ops), where the library and NumPy must agree to the bit;
  ulp N          transcendental functions (libm against NumPy's float64 reference rounded
                 once), and ops the library computes in double and rounds once;
  atol A         where the summation order legitimately differs (BLAS products, f64 sums):
                 A bounds |error| from the magnitudes, as k * eps * (|a| @ |b|) does.

Every expected value and tolerance is computed in software that no CPU changes: exact
decimal arithmetic at 80 digits (Python's decimal), summed in a fixed order, rounded once to
double.  NumPy only draws the inputs and does IEEE-exact elementwise work; its BLAS, its
pairwise sums and its SIMD exp/tanh pick their kernels by CPU, so the files would differ by
machine.
  usage: make_golden.py DIR
"""
import decimal
import json
import struct
import sys

import os
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from ggml_blocks import decoded, q4_0_bytes, q8_0_bytes  # noqa: E402  (ggml's formats, shared)
import gguf_write as G  # noqa: E402  (GGUF by struct alone)

out_dir = sys.argv[1]
rng = np.random.default_rng(20261202)
DT = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
EPS = {"f32": float(np.finfo(np.float32).eps), "f64": float(np.finfo(np.float64).eps)}


def specials(dt):
    """Edge values of a float dtype, 16 of them."""
    if dt == "f32":
        tiny, sub, big = 1e-45, 1e-40, 3e38
    else:
        tiny, sub, big = 5e-324, 1e-310, 1.7e308
    v = [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, tiny, sub, big, -big, 0.5, -2.5, 1e-30, 7.0, -0.375]
    return np.array(v, dtype=DT[dt])


def rand(dt, shape, lo=-2.0, hi=2.0):
    if dt == "i32":
        return rng.integers(-2**31, 2**31, size=shape, dtype=np.int64).astype(np.int32)
    return rng.uniform(lo, hi, size=shape).astype(DT[dt])


cases = []      # json entries
tensors = []    # (name, array)


def case(name, op, dt, inputs, output, ulp=0, atol=0.0, **params):
    names = []
    for i, a in enumerate(inputs):
        names.append(f"{name}.in{i}")
        tensors.append((names[-1], np.ascontiguousarray(a)))
    tensors.append((f"{name}.out", np.ascontiguousarray(output)))
    cases.append({"name": name, "op": op, "dtype": dt, "inputs": names, "output": f"{name}.out", "ulp": ulp,
                  "atol": float(atol), "params": params})


def f64(a):
    return a.astype(np.float64)


# ---- exact references: 80 decimal digits, no traps (inf and NaN propagate as in IEEE)
D = decimal.Context(prec=80, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[])
decimal.setcontext(D)  # the operators (x * y) use it too
Dec = decimal.Decimal


def dec(x):
    return Dec(float(x))  # exact: every double is a finite decimal


def rounded(f, x):
    """f applied to each element of x in decimal, each result rounded once to double."""
    return np.array([float(f(dec(v))) for v in np.ravel(x)], dtype=np.float64).reshape(np.shape(x))


def d_sum(values):
    total = Dec(0)
    for v in values:
        total = D.add(total, v)
    return total


def d_tanh(x):
    if x.is_nan() or abs(x) < Dec("1e-20"):
        return x  # tanh(x) = x - x^3/3 rounds to x this close to zero
    if abs(x) > 25:
        return Dec(1).copy_sign(x)
    e = D.exp(2 * x)
    return D.divide(D.subtract(e, 1), D.add(e, 1))


def d_logistic_scaled(x, u):
    """x * sigmoid(u), written x / (1 + exp(-u)) so that nothing cancels for negative u."""
    return D.divide(x, D.add(1, D.exp(D.minus(u))))


def d_gelu(x):  # 0.5 x (1 + tanh(u)) = x * sigmoid(2u)
    u = D.multiply(Dec("0.7978845608028654"), D.add(x, D.multiply(Dec("0.044715"), x * x * x)))
    return d_logistic_scaled(x, 2 * u)


def exact_sum(x, axis, keepdims=False):
    """Sums along axis, exact and rounded once to double."""
    moved = np.moveaxis(f64(x), axis, -1)
    out = np.array([float(d_sum(dec(v) for v in row)) for row in moved.reshape(-1, moved.shape[-1])])
    out = out.reshape(moved.shape[:-1])
    return np.expand_dims(out, axis) if keepdims else out


def exact_matmul(a, b):
    """a @ b with NumPy's broadcasting of batch dims, each dot product exact, rounded once."""
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    a3 = np.broadcast_to(a, batch + (m, k)).reshape(count, m, k)
    b3 = np.broadcast_to(b, batch + (k, n)).reshape(count, k, n)
    out = np.zeros((count, m, n))
    for z in range(a3.shape[0]):
        rows = [[dec(v) for v in r] for r in a3[z]]
        cols = [[dec(v) for v in c] for c in b3[z].T]
        for i in range(m):
            for j in range(n):
                out[z, i, j] = float(d_sum(D.multiply(x, y) for x, y in zip(rows[i], cols[j])))
    return out.reshape(batch + (m, n))


def along(f, x, axis):
    """f (a row of decimals -> a list of decimals) over each row along axis, rounded to double."""
    moved = np.moveaxis(x, axis, -1)
    rows = [[float(v) for v in f([dec(e) for e in row])] for row in moved.reshape(-1, moved.shape[-1])]
    return np.moveaxis(np.array(rows).reshape(moved.shape), -1, axis)


def softmax_row(r):
    top = max(r)
    e = [D.exp(D.subtract(v, top)) for v in r]
    total = d_sum(e)
    return [D.divide(v, total) for v in e]


def mean_of(r):
    return D.divide(d_sum(r), len(r))


def rmsnorm_row(r, w, eps=1e-5):
    inv = D.divide(1, D.sqrt(D.add(mean_of([v * v for v in r]), dec(eps))))
    return [D.multiply(v * inv, dec(g)) for v, g in zip(r, w)]


def layernorm_row(r, w, b, eps=1e-5):
    mu = mean_of(r)
    centred = [D.subtract(v, mu) for v in r]
    inv = D.divide(1, D.sqrt(D.add(mean_of([c * c for c in centred]), dec(eps))))
    return [D.add(D.multiply(c * inv, dec(g)), dec(o)) for c, g, o in zip(centred, w, b)]


def attend(q, k, v, scale):
    """One query's attention over rows of k and v, exact: softmax(q.k * scale) @ v."""
    qd = [dec(e) for e in q]
    scores = [D.multiply(d_sum(D.multiply(x, dec(y)) for x, y in zip(qd, row)), dec(scale)) for row in k]
    p = softmax_row(scores)
    return [float(d_sum(D.multiply(pi, dec(row[j])) for pi, row in zip(p, v))) for j in range(v.shape[1])]


with np.errstate(all="ignore"):
    # ---- elementwise binary: edge values against edge values (every pair), broadcasting, empties
    for dt in ("f32", "f64"):
        s = specials(dt)
        a, b = np.repeat(s, 16).reshape(16, 16), np.tile(s, 16).reshape(16, 16)
        for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
            case(f"{op}_{dt}_edges", op, dt, [a, b], f(a, b))
            x, y = rand(dt, (3, 1, 5)), rand(dt, (4, 1))  # -> [3, 4, 5]
            case(f"{op}_{dt}_broadcast", op, dt, [x, y], f(x, y))
        x, y = rand(dt, (0, 3)), rand(dt, (1, 3))
        case(f"add_{dt}_empty", "add", dt, [x, y], x + y)
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
        x, y = rand("i32", (4, 6)), rand("i32", (4, 6))  # wraps modulo 2^32, as int32 arrays do
        case(f"{op}_i32_wrap", op, "i32", [x, y], f(x, y))
        z = np.array([[2**31 - 1], [-2**31]], dtype=np.int32)
        case(f"{op}_i32_limits", op, "i32", [z, np.full((1, 3), 1, np.int32)], f(z, np.full((1, 3), 1, np.int32)))

    # ---- elementwise unary: edge values and random values
    for dt in ("f32", "f64"):
        s = specials(dt).reshape(4, 4)
        r = rand(dt, (6, 7), -8.0, 8.0)
        T = DT[dt]
        for tag, x in (("edges", s), ("random", r)):
            case(f"scale_{dt}_{tag}", "scale", dt, [x], x * T(-1.75), scale=-1.75)
            case(f"relu_{dt}_{tag}", "relu", dt, [x], np.where((x > 0) | np.isnan(x), x, T(0)))
            d = f64(x)
            case(f"exp_{dt}_{tag}", "exp", dt, [x], rounded(D.exp, d).astype(T), ulp=2)
            case(f"tanh_{dt}_{tag}", "tanh", dt, [x], rounded(d_tanh, d).astype(T), ulp=2)
            gelu = rounded(d_gelu, d)
            silu = rounded(lambda v: d_logistic_scaled(v, v), d)
            # Computed in the dtype by the library: 1 + tanh(...) cancels for negative x, so the
            # error is bounded absolutely by the input's magnitude, not by the result's ulp.
            mag = float(np.nanmax(np.abs(np.where(np.isfinite(d), d, 0))))
            case(f"gelu_{dt}_{tag}", "gelu", dt, [x], gelu.astype(T), ulp=4, atol=8 * EPS[dt] * mag)
            case(f"silu_{dt}_{tag}", "silu", dt, [x], silu.astype(T), ulp=4, atol=8 * EPS[dt] * mag)

    # ---- softmax, norms, reductions (the library sums in double and rounds once)
    for dt in ("f32", "f64"):
        T = DT[dt]
        x = rand(dt, (5, 9), -6.0, 6.0)
        d = f64(x)
        for axis in (-1, 0):
            ref = along(softmax_row, d, axis)
            # In f64 the library's exp and its sum each round: a bound of the row's length in ulps of the
            # largest result, as for the norms below.
            tol = 0.0 if dt == "f32" else 8 * x.shape[axis] * EPS[dt] * float(np.abs(ref).max())
            case(f"softmax_{dt}_axis{axis}", "softmax", dt, [x], ref.astype(T), ulp=2, atol=tol, axis=axis)
        w, b = rand(dt, (9,)), rand(dt, (9,))
        rms = along(lambda r: rmsnorm_row(r, w), d, -1)
        ln = along(lambda r: layernorm_row(r, w, b), d, -1)
        # In f64 the sums themselves round (their order differs from NumPy's pairwise one): a
        # bound of the row's length in ulps of the largest result.  In f32 the double sums are
        # exact enough that one rounding at the end is all that shows.
        for name, ref, ins in (("rmsnorm", rms, [x, w]), ("layernorm", ln, [x, w, b])):
            tol = 0.0 if dt == "f32" else 8 * x.shape[-1] * EPS[dt] * float(np.abs(ref).max())
            case(f"{name}_{dt}", name, dt, ins, ref.astype(T), ulp=2, atol=tol, eps=1e-5)
        y = rand(dt, (4, 6, 5), -3.0, 3.0)
        for axis in (0, 1, -1):
            for keep in (0, 1):
                s = exact_sum(y, axis, keepdims=bool(keep))
                n = y.shape[axis]
                tol = 0.0 if dt == "f32" else 2 * n * EPS[dt] * float(exact_sum(np.abs(y), axis).max())
                case(f"sum_{dt}_axis{axis}_keep{keep}", "sum", dt, [y], s.astype(T), ulp=1, atol=tol, axis=axis,
                     keepdim=keep)
                case(f"mean_{dt}_axis{axis}_keep{keep}", "mean", dt, [y], (s / n).astype(T), ulp=1, atol=tol / n,
                     axis=axis, keepdim=keep)
        case(f"argmax_{dt}", "argmax", dt, [x], x.argmax(axis=-1).astype(np.int32), axis=-1)
        ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], dtype=T)  # the first largest
        case(f"argmax_{dt}_ties", "argmax", dt, [ties], ties.argmax(axis=-1).astype(np.int32), axis=-1)
    yi = rand("i32", (3, 8))
    case("sum_i32_wrap", "sum", "i32", [yi], yi.sum(axis=1, dtype=np.int32), axis=1, keepdim=0)
    case("argmax_i32", "argmax", "i32", [yi], yi.argmax(axis=0).astype(np.int32), axis=0)

    # ---- matmul: BLAS sums in its own order; the bound is k * eps * (|a| @ |b|)
    for dt in ("f32", "f64"):
        T = DT[dt]
        for tag, sa, sb in (("2d", (7, 9), (9, 5)), ("row", (1, 64), (64, 33)), ("col", (33, 64), (64, 1)),
                            ("batched", (3, 4, 6), (3, 6, 5)), ("shared", (3, 4, 6), (6, 5)),
                            ("empty_k", (4, 0), (0, 3)), ("empty_m", (0, 5), (5, 2)),
                            # past 512 KiB (f32): the one-row and one-column products go through gemv
                            ("row_gemv", (1, 512), (512, 256)), ("col_gemv", (256, 512), (512, 1))):
            if tag.endswith("gemv") and dt == "f64":
                continue  # f32 alone: each of these matrices is 512 KiB of the committed file
            a, b = rand(dt, sa), rand(dt, sb)
            want = exact_matmul(a, b)
            k = sa[-1]
            bound = float(exact_matmul(np.abs(a), np.abs(b)).max()) if want.size else 0.0
            case(f"matmul_{dt}_{tag}", "matmul", dt, [a, b], want.astype(T), ulp=1, atol=2 * (k + 1) * EPS[dt] * bound)

    # ---- fused attention over a KV cache: only the first `valid` rows, causal by position
    for dt in ("f32", "f64"):
        T = DT[dt]
        for tag, (h, tq, t, hd, valid) in (("decode", (2, 1, 9, 4, 5)), ("prefill", (3, 3, 7, 8, 7)),
                                          ("full", (1, 2, 6, 5, 6))):
            q, k, v = rand(dt, (h, tq, hd)), rand(dt, (h, t, hd)), rand(dt, (h, t, hd))
            scale = 1.0 / np.sqrt(hd)
            out = np.zeros((h, tq, hd))
            for head in range(h):
                for i in range(tq):
                    rows = valid - tq + i + 1  # query i sits at position valid - tq + i
                    out[head, i] = attend(q[head, i], k[head, :rows], v[head, :rows], scale)
            tol = 0.0 if dt == "f32" else 16 * t * EPS[dt] * float(np.abs(out).max())
            case(f"attention_{dt}_{tag}", "attention", dt, [q, k, v], out.astype(T), ulp=2, atol=tol, valid=valid,
                 scale=scale)

    # ---- layout ops: exact copies
    for dt in ("f32", "f64", "i32"):
        a = rand(dt, (4, 5))
        case(f"contiguous_{dt}", "contiguous", dt, [a], a.copy())
        b = rand(dt, (2, 5))
        case(f"concat_{dt}_axis0", "concat", dt, [a, b], np.concatenate([a, b], axis=0), axis=0)
        c = rand(dt, (4, 3))
        case(f"concat_{dt}_axis1", "concat", dt, [a, c], np.concatenate([a, c], axis=1), axis=1)
        ids = np.array([[3, 0], [1, 3]], dtype=np.int32)
        case(f"gather_rows_{dt}", "gather_rows", dt, [a, ids], a[ids])
        ids1 = np.array([3, 0, 2, 1, 1], dtype=np.int32)  # 1-D ids: the embedding lookup's own path
        case(f"gather_rows_{dt}_1d", "gather_rows", dt, [a, ids1], a[ids1])
        # the views, read back through tl_tensor_read (logical order), and the in-place copy
        case(f"slice_{dt}", "slice", dt, [a], a[:, 1:4], axis=1, start=1, length=3)
        case(f"transpose_{dt}", "transpose", dt, [a], a.T, d0=0, d1=1)
        case(f"reshape_{dt}", "reshape", dt, [a], a.reshape(2, 10), rows=2, cols=10)
        row = rand(dt, (1, 5))
        case(f"copy_into_{dt}_broadcast", "copy_into", dt, [row, a], np.broadcast_to(row, a.shape))

# ---- the storage dtypes (tests/test_quant.c reads these "quant.*" tensors; no json case): ggml's
# reference rounding restated in NumPy's float32 arithmetic (scripts/ggml_blocks.py),
# and products over the decoded weights exact in decimal (against block weights, over the
# activations as the integer products quantize them).  Stored bytes travel as i32 values.
xq = rand("f32", (4, 64))
xq[1, :32] = 0                      # an all-zero block: scale 0
xq[2, :32] = np.float32(0.5) * np.arange(-16, 16, dtype=np.float32)
xq[3, :32] = np.arange(-15.5, 16.5, dtype=np.float32)  # with 127 below: scale 1, every other value a tie
xq[3, 0] = 127
tensors.append(("quant.x", xq))
tensors.append(("quant.x.q8_0", q8_0_bytes(xq).astype(np.int32)))
tensors.append(("quant.x.q4_0", q4_0_bytes(xq).astype(np.int32)))
tensors.append(("quant.x.f16", xq.astype(np.float16).view(np.uint16).astype(np.int32)))
bits = xq.view(np.uint32).astype(np.uint64)
tensors.append(("quant.x.bf16", (((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) & 0xffff).astype(np.int32)))
act, wq = rand("f32", (3, 64)), rand("f32", (5, 64))
act[2, :32] = np.arange(-15.5, 16.5, dtype=np.float32)  # scale 1 (127 below): ties, rounded to even
act[2, 0] = -127
tensors.append(("quant.act", act))
tensors.append(("quant.w", wq))


def q8_activations(row):
    """The exact values a row of activations takes in the integer products with block weights:
    llama.cpp's x86 rounding (q = x * (127 / amax) to nearest even, the scale amax / 127 as f16),
    q * d exact in double."""
    vals = []
    for b in range(0, row.size, 32):
        x = row[b:b + 32].astype(np.float32)
        amax = np.float32(np.abs(x).max())
        d = np.float32(np.float16(amax / np.float32(127)))
        inv = np.float32(127) / amax if amax != 0 else np.float32(0)
        vals += list(np.rint(x * inv).astype(np.float64) * np.float64(d))
    return np.array(vals)


act_q8 = np.array([q8_activations(r) for r in act])
for kind, enc in (("q8_0", q8_0_bytes), ("q4_0", q4_0_bytes)):
    w_dec = decoded(enc(wq), kind).astype(np.float64)
    want = exact_matmul(act_q8, w_dec.T)
    bound = exact_matmul(np.abs(act_q8), np.abs(w_dec).T)
    tensors.append((f"quant.y.{kind}", want))
    tensors.append((f"quant.bound.{kind}", bound))

# ---- write: safetensors by hand (struct and json only), as the io test's independent writer does
ST = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.int32): "I32"}
header, blobs, offset = {}, [], 0
for name, arr in tensors:
    raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    header[name] = {"dtype": ST[arr.dtype], "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
    blobs.append(raw)
    offset += len(raw)
text = json.dumps(header, sort_keys=True).encode()
text += b" " * (-len(text) % 8)
with open(f"{out_dir}/golden.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for raw in blobs:
        f.write(raw)
with open(f"{out_dir}/golden.json", "w") as f:
    json.dump({"generator": "tests/golden/make_golden.py", "numpy": np.__version__.split(".")[0], "cases": cases},
              f, indent=1)
    f.write("\n")
print(f"{len(cases)} cases, {len(tensors)} tensors, {offset} bytes of data written to {out_dir}")

# ---- metadata.gguf: one key of every GGUF type, arrays of strings, numbers and arrays, a uint64
# past INT64_MAX, and two tensors (q8_0 rows of quant.x, f32): what
# every binding's test reads back through its own GGUF API.
G.write_gguf(f"{out_dir}/metadata.gguf", [
    ("general.architecture", G.STRING, "tensorlife-fixture"),
    ("fixture.u8", G.UINT8, 200), ("fixture.i8", G.INT8, -5), ("fixture.u16", G.UINT16, 60000),
    ("fixture.i16", G.INT16, -30000), ("fixture.u32", G.UINT32, 4000000000), ("fixture.i32", G.INT32, -2000000000),
    ("fixture.u64", G.UINT64, 2**63 + 1), ("fixture.i64", G.INT64, -(2**62)), ("fixture.bool", G.BOOL, True),
    ("fixture.f32", G.FLOAT32, 0.5), ("fixture.f64", G.FLOAT64, -2.25),
    ("fixture.strings", G.ARRAY, (G.STRING, ["alpha", "\u03b2eta", ""])),
    ("fixture.scores", G.ARRAY, (G.FLOAT32, [0.25, -1.5])),
    ("fixture.ids", G.ARRAY, (G.INT32, [7, -8, 9])),
    ("fixture.nested", G.ARRAY, (G.ARRAY, [(G.INT32, [1]), (G.INT32, [2, 3])])),
], [("w.q8_0", G.GGML["q8_0"], (2, 64), q8_0_bytes(xq[:2]).tobytes()),
    ("x.f32", G.GGML["f32"], (2, 3), np.arange(6, dtype="<f4").tobytes())])
