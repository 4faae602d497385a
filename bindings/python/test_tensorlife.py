"""The bindings' shared scenario in Python (pytest)."""
import array
import math

import pytest

import tensorlife as tl

import os

try:
    import numpy as np
except ImportError:
    if os.environ.get("TL_REQUIRE_NUMPY"):
        raise
    np = None

D = 8


def reference_softmax(x, w, b):
    logits = [sum(x[k] * w[k * D + j] for k in range(D)) + b[j] for j in range(D)]
    top = max(logits)
    total = sum(math.exp(v - top) for v in logits)
    return [math.exp(v - top) / total for v in logits]


def test_decode_loop_scenario():
    w = [float(array.array("f", [(i % 7) / 7 - 0.4])[0]) for i in range(D * D)]
    b = [float(array.array("f", [i / 10])[0]) for i in range(D)]
    with tl.Context() as ctx:
        tw, tb = ctx.tensor(w, shape=(D, D)), ctx.tensor(b)
        with ctx.open_scope("decode-step") as step:
            first, kept = None, None
            for s in range(50):
                x = [float((s + i) % 5 - 2) for i in range(D)]
                p = ctx.softmax(ctx.add(ctx.matmul(ctx.tensor(x, shape=(1, D)), tw), tb), -1)
                got = p.tolist()
                want = reference_softmax(x, w, b)
                assert all(abs(g - e) < 1e-5 for g, e in zip(got, want)), (s, got, want)
                kept = p
                step.reset()
                st = step.stats()
                if s == 0:
                    first = st
                else:
                    assert (st.slab_bytes, st.peak_bytes, st.grow_events) == \
                        (first.slab_bytes, first.peak_bytes, first.grow_events)
            with pytest.raises(tl.StorageClosedError) as e:
                kept.tolist()
            assert "storage 'decode-step'" in str(e.value)
            assert "gen 49 is closed (scope is at gen 50)" in str(e.value)


@pytest.mark.skipif(np is None, reason="python3-numpy is not installed")
@pytest.mark.skipif(np is None, reason="numpy is not installed (TL_REQUIRE_NUMPY makes that a failure)")
def test_numpy_in_and_out():
    with tl.Context() as ctx:
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
        t = ctx.tensor(a)
        assert t.shape == (2, 3)
        np.testing.assert_array_equal(t.numpy(), a)
        got = ctx.matmul(ctx.tensor(a.astype(np.float64)), ctx.tensor(b)).numpy()
        np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-12)
        ids = ctx.tensor(np.array([3, -4], dtype=np.int32))
        assert ids.numpy().dtype == np.int32 and list(ids.numpy()) == [3, -4]
        out = np.zeros((2, 3), dtype=np.float32)
        t.read_into(out)
        np.testing.assert_array_equal(out, a)
        with pytest.raises(TypeError):
            t.read_into(np.zeros((2, 3), dtype=np.float64))  # wrong item size


def test_misuse_gives_clear_errors():
    ctx = tl.Context()
    s = ctx.open_scope("frame", 1024)
    x = ctx.tensor([1.0, 2.0])
    kept = x.retain(None)
    s.close()
    with pytest.raises(tl.InvalidHandleError):
        s.close()
    assert kept.tolist() == [1.0, 2.0]
    with pytest.raises(tl.StorageClosedError):
        x.tolist()
    with pytest.raises(tl.InvalidArgumentError, match="bytes"):
        ctx.tensor([1.0, 2.0], shape=(2, 3))
    with pytest.raises(tl.InvalidArgumentError):
        kept.read_into(array.array("f", [0.0]))
    with pytest.raises(tl.ShapeError):
        ctx.matmul(kept, kept)
    with pytest.raises(tl.DtypeError):
        ctx.add(ctx.tensor([1, 2], dtype=tl.I32), kept)
    ctx.close()
    ctx.close()
    with pytest.raises(tl.InvalidHandleError):
        ctx.tensor([1.0])
    with pytest.raises(tl.InvalidHandleError):
        kept.tolist()


def test_safetensors_and_json(tmp_path):
    import json
    with tl.Context() as ctx:
        a = ctx.tensor([1.0, 2.0, 3.0, float("inf")], shape=(2, 2))
        ids = ctx.tensor([7, -8, 9], dtype=tl.I32)
        ctx.save_safetensors(tmp_path / "w.safetensors", {"a": a, "ids": ids})
        back = ctx.load_safetensors(tmp_path / "w.safetensors")
        assert back["a"].tolist() == [1.0, 2.0, 3.0, float("inf")] and back["a"].shape == (2, 2)
        assert back["ids"].tolist() == [7, -8, 9]
        with pytest.raises(tl.TensorLifeError, match="TL_E_IO"):
            ctx.load_safetensors(tmp_path / "missing")
        js = a.to_json()
        assert json.loads(js)["data"][3] == "inf"
        assert ctx.tensor_from_json(js).tolist()[2] == 3.0
        with pytest.raises(tl.TensorLifeError, match="TL_E_PARSE"):
            ctx.tensor_from_json("{")
        with ctx.open_scope("report-me"):
            assert json.loads(ctx.report_json())["scopes"][0]["name"] == "report-me"


def test_views_reductions_and_caches():
    with tl.Context() as ctx:
        a = ctx.tensor([1.0, 5.0, 3.0, -4.0, 2.0, 6.0], shape=(2, 3))
        flat = ctx.reshape(ctx.transpose(a, 0, 1), (6,)).tolist()
        assert flat[1] == -4 and flat[2] == 5
        assert ctx.argmax(a, -1).tolist() == [1, 2]
        assert ctx.sum(a, 0).tolist() == [-3.0, 7.0, 9.0]
        cache = ctx.tensor([0.0] * 9, shape=(3, 3))
        ctx.copy_into(ctx.gather_rows(a, ctx.tensor([1], dtype=tl.I32)), ctx.slice(cache, 0, 2, 1))
        assert cache.tolist()[6:] == [-4.0, 2.0, 6.0] and cache.tolist()[0] == 0
        assert ctx.concat([a, a], 0).shape == (4, 3)
        r = ctx.rmsnorm(a, None, 1e-6).tolist()[0]
        assert abs(r - 1 / math.sqrt(35 / 3 + 1e-6)) < 1e-5
        with pytest.raises(tl.ShapeError):
            ctx.slice(a, 0, 1, 5)


def test_tensor_objects_reused_and_untracked():
    """Result objects come from a free list and stay out of the cycle collector (the per-call
    cost): a reused object carries nothing of the one before, a Context has no __dict__."""
    import gc
    with tl.Context() as ctx:
        a = ctx.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=(2, 3), dtype=tl.F32)
        assert not gc.is_tracked(a) and not hasattr(ctx, "__dict__")
        for _ in range(3):
            wide = ctx.add(a, a)
            assert wide.shape == (2, 3) and wide.dtype == tl.F32  # shape and dtype asked for: cached
            del wide
            row = ctx.sum(a, 0)  # may take the object just freed
            assert row.shape == (3,) and row.tolist() == [5.0, 7.0, 9.0]
            index = ctx.argmax(a, -1)
            assert index.dtype == tl.I32 and index.tolist() == [2, 2]
            del row, index
        with pytest.raises(AttributeError):
            ctx.anything = 1


def test_bench_tiny_add(capsys):
    """Not an assertion on speed: prints the ratio for the note (pytest -s shows it).  Both sides
    run the same loop shape (256 adds, then a reset), best of 5 interleaved rounds."""
    import time
    with tl.Context() as ctx:
        a, b = ctx.tensor([0.0] * 16), ctx.tensor([0.0] * 16)
        with ctx.open_scope("bench", 1 << 16) as s:
            rounds, batch = 80, range(256)
            n = rounds * 256
            py, c = [], []
            for _ in range(7):
                t0 = time.perf_counter()
                for _ in range(rounds):
                    for _ in batch:
                        ctx.add(a, b)
                    s.reset()
                py.append((time.perf_counter() - t0) / n * 1e9)
                t0 = time.perf_counter()
                ctx._check(tl._tensorlife.tlb_bench_add_loop(ctx._c, s._token, a._bits, b._bits, n, 1))
                c.append((time.perf_counter() - t0) / n * 1e9)
    py.sort()
    c.sort()
    with capsys.disabled():
        print(f"\npython: add of 16 floats through Python min {py[0]:.1f} / median {py[3]:.1f} / max {py[-1]:.1f} ns; "
              f"from C min {c[0]:.1f} / median {c[3]:.1f} / max {c[-1]:.1f} ns; median ratio {py[3] / c[3]:.2f}x")


def gguf_fixture():
    """tests/golden/metadata.gguf (make_golden.py): beside the test, or in the source tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "metadata.gguf"), os.path.join(here, "..", "..", "tests", "golden", "metadata.gguf")):
        if os.path.exists(path):
            return path
    raise FileNotFoundError("metadata.gguf")


def test_gguf_metadata_and_tensors():
    with tl.Context() as ctx, ctx.open_gguf(gguf_fixture()) as f:
        assert f.names() == ["w.q8_0", "x.f32"]
        assert "general.architecture" in f.keys()
        assert f.metadata("general.architecture") == "tensorlife-fixture"
        want = {"fixture.u8": 200, "fixture.i8": -5, "fixture.u16": 60000, "fixture.i16": -30000,
                "fixture.u32": 4000000000, "fixture.i32": -2000000000, "fixture.i64": -(2**62), "fixture.bool": True,
                "fixture.f32": 0.5, "fixture.f64": -2.25, "fixture.strings": ["alpha", "\u03b2eta", ""],
                "fixture.scores": [0.25, -1.5], "fixture.ids": [7, -8, 9]}
        for key, value in want.items():
            assert f.metadata(key) == value, key
        assert f.key_type("fixture.ids") == (tl.GgufType.ARRAY, tl.GgufType.INT32, 3)
        assert f.key_type("fixture.f32") == (tl.GgufType.FLOAT32, tl.GgufType.FLOAT32, 1)
        with pytest.raises(tl.InvalidArgumentError, match="INT64_MAX"):
            f.metadata("fixture.u64")
        with pytest.raises(tl.DtypeError, match="array of arrays"):
            f.metadata("fixture.nested")
        with pytest.raises(tl.NotFoundError, match="no key"):
            f.metadata("no.such.key")
        with pytest.raises(tl.InvalidArgumentError, match="NUL"):
            f.metadata("general\0architecture")
        w = f["w.q8_0"]
        info = w.info()
        assert info["dtype"] is tl.DType.Q8_0 and info["shape"] == (2, 64) and info["read_only"]
        x = f["x.f32"]
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # flat, row-major
        # The q8_0 weight as the stored rows of a product, against its decoded values.
        back = ctx.convert(w, tl.F32).tolist()
        rows = [back[:64], back[64:]]
        ones = ctx.tensor([1.0] * 64, shape=(1, 64), dtype=tl.F32)
        y = ctx.matmul(ones, ctx.transpose(w, 0, 1)).tolist()
        assert all(abs(y[r] - sum(rows[r])) <= 1e-3 * sum(abs(v) for v in rows[r]) + 1e-6 for r in range(2))
        with pytest.raises(tl.NotFoundError):
            f["missing"]
    with pytest.raises(tl.InvalidHandleError, match="closed"):
        f.metadata("fixture.u8")
    with tl.Context() as ctx, pytest.raises(tl.ParseError):
        ctx.open_gguf(__file__)  # not a GGUF file


def test_llama_ops_rope_gqa_half_cache():
    """RoPE in both conventions against the formula; grouped-query attention over an f16 cache."""
    with tl.Context() as ctx:
        x = [1.0, 2.0, 3.0, 4.0]
        t = ctx.tensor(x, shape=(1, 4), dtype=tl.F32)
        for mode, pairs in ((tl.RopeMode.HALVES, [(0, 2), (1, 3)]), (tl.RopeMode.INTERLEAVED, [(0, 1), (2, 3)])):
            want = list(x)
            for i, (a, b) in enumerate(pairs):
                angle = 3 * 10000.0 ** (-2 * i / 4)
                want[a] = x[a] * math.cos(angle) - x[b] * math.sin(angle)
                want[b] = x[a] * math.sin(angle) + x[b] * math.cos(angle)
            got = ctx.rope(t, 3, 10000.0, mode).tolist()
            assert all(abs(g - w) < 1e-5 for g, w in zip(got, want)), (mode, got, want)
        with pytest.raises(ValueError):
            ctx.rope(t, 0, 10000.0, 7)  # not a RopeMode
        k, v = ctx.zeros((2, 3, 2), tl.F16), ctx.zeros((2, 3, 2), tl.F16)
        ctx.copy_into(ctx.tensor([0.5] * 12, shape=(2, 3, 2), dtype=tl.F32), k)
        ctx.copy_into(ctx.tensor([1.0, 2.0] * 3 + [5.0, 6.0] * 3, shape=(2, 3, 2), dtype=tl.F32), v)
        q = ctx.tensor([1.0] * 8, shape=(4, 1, 2), dtype=tl.F32)
        out = ctx.attention(q, k, v, 3, 0.5).tolist()  # query heads 0, 1 read kv head 0; 2, 3 kv head 1
        assert out == [1.0, 2.0, 1.0, 2.0, 5.0, 6.0, 5.0, 6.0]


def test_every_storage_dtype_of_the_generated_list():
    """Each storage dtype (the K-quants' 256-element super blocks included) converts, multiplies as
    a stored weight like its decoded values, and is refused by elementwise ops by name."""
    w = [float(i % 7 - 3) for i in range(4 * 256)]
    with tl.Context() as ctx:
        # 127/128: 8-bit activation blocks hold it exactly (step 1/128), so every product is its decoded weights'
        wf, xf = ctx.tensor(w, shape=(4, 256)), ctx.tensor([127 / 128] * 256, shape=(1, 256))
        storage = [dt for dt in tl.DType if dt not in (tl.DType.F32, tl.DType.F64, tl.DType.I32)]
        assert {"Q4_K", "Q5_K", "Q6_K", "Q5_0"} <= {dt.name for dt in storage}
        for dt in storage:
            wq = ctx.convert(wf, dt)
            got = ctx.matmul(xf, ctx.transpose(wq, 0, 1)).tolist()
            want = ctx.matmul(xf, ctx.transpose(ctx.convert(wq, tl.F32), 0, 1)).tolist()
            assert len(got) == 4 and all(abs(a - b) < 1e-3 for a, b in zip(got, want)), dt  # tolist is flat
            with pytest.raises(tl.DtypeError, match=dt.name.lower()):
                ctx.add(wq, wq)
