"""Buffers of the wrong type, dropped contexts, threads, and the rest of the API (pytest)."""
import array
import os
import threading

import pytest

import tensorlife as tl

try:
    import numpy as np
except ImportError:
    if os.environ.get("TL_REQUIRE_NUMPY"):
        raise
    np = None


def resident_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024


def test_wrong_element_types_never_reinterpret():
    with tl.Context() as ctx:
        f = ctx.tensor([1.5, 2.5])
        with pytest.raises(TypeError):  # int32 buffer where float32 is meant: refused at the boundary
            tl._tensorlife.tlb_from_f32(ctx._c, array.array("q", [2]), array.array("i", [1, 2]))
        with pytest.raises((TypeError, tl.DtypeError)):
            f.read_into(array.array("i", [0, 0]))
        i = ctx.tensor([1, 2], dtype=tl.I32)
        with pytest.raises((TypeError, tl.DtypeError)):
            i.read_into(array.array("f", [0, 0]))
        # tensor() converts a sequence to the dtype asked for
        assert ctx.tensor(array.array("i", [3, 4]), dtype=tl.F32).tolist() == [3.0, 4.0]
        if np is not None:
            assert ctx.tensor(np.array([1, 2], dtype=np.int32), dtype=tl.F32).tolist() == [1.0, 2.0]
            with pytest.raises(tl.DtypeError):
                ctx.tensor(np.array([1, 2], dtype=np.int64))
            with pytest.raises((TypeError, tl.DtypeError)):
                f.read_into(np.zeros(2, dtype=np.int32))


def test_dropped_contexts_are_released():
    def drop(n):
        for _ in range(n):
            ctx = tl.Context()
            ctx.open_scope("dropped", 1 << 20)
            ctx.zeros((1 << 18,))  # touches the whole MiB

    before = resident_bytes()
    drop(500)
    first = resident_bytes()
    drop(1000)
    after = resident_bytes()
    print(f"\npython: resident before {before >> 20} MiB, after 500 dropped 1 MiB contexts {first >> 20} MiB, "
          f"after 1500 {after >> 20} MiB")
    assert after - before < 64 << 20 and after - first < 32 << 20


def test_one_context_many_threads():
    ctx = tl.Context()
    a, one = ctx.zeros((16,)), ctx.ones((16,))
    errors = []

    def work():
        try:
            for _ in range(2000):
                y = ctx.add(a, one)
                assert y.tolist()[15] == 1.0
                y.free()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ctx.close()
    with pytest.raises(tl.InvalidHandleError):
        ctx.add(a, one)


def test_whole_api(tmp_path):
    assert tl.abi_version() == tl.BINDING_ABI_VERSION and tl.version()
    tl.set_blas_threads(1)
    assert tl.blas_threads() == 1
    with pytest.raises(tl.InvalidArgumentError):
        tl.set_blas_threads(0)
    assert all(issubclass(c, tl.TensorLifeError) for c in (tl.ScopeFullError, tl.ScopeOrderError, tl.IoError,
                                                            tl.ParseError, tl.OutOfMemoryError, tl.InternalError))
    with tl.Context() as ctx:
        with ctx.open_scope("fixed", 4096, growth=tl.FIXED) as fixed:
            with pytest.raises(tl.ScopeFullError):
                ctx.zeros((4096,))
            ctx.zeros((16,))
            assert ctx.current_scope() == fixed and fixed.name == "fixed"
            assert '"fixed"' in fixed.stats_json()
        assert ctx.current_scope() is None
        with ctx.open_scope("capped", max_bytes=(1 << 32) + 4096):
            ctx.zeros((2048,))  # 8 KiB: past 4096, inside the 4 GiB cap
        f = ctx.full((2, 3), 7, dtype=tl.I32)
        assert f.tolist() == [7] * 6
        with pytest.raises(tl.InvalidArgumentError):
            ctx.full((2,), 0.5, dtype=tl.I32)
        info = ctx.transpose(f, 0, 1).info()
        assert info["shape"] == (3, 2) and info["strides"] == (1, 3) and info["storage"] == "ambient"
        with pytest.raises(tl.InvalidArgumentError):
            ctx.open_scope("a\0b")
        buf = array.array("f", [1, 2, 3, 4])
        w = ctx.wrap(buf, shape=(2, 2))
        buf[3] = 40
        assert w.tolist() == [1, 2, 3, 40]
        with pytest.raises(BufferError):
            buf.append(5)  # kept pinned: it cannot move under the tensor
        other = tl.Context()
        with pytest.raises(tl.InvalidHandleError):
            ctx.add(w, other.ones((2, 2)))
        kv = ctx.ones((2, 5, 4))
        assert ctx.attention(ctx.ones((2, 1, 4)), kv, kv, 3, 0.5).tolist() == [1.0] * 8
        with pytest.raises(tl.ShapeError):
            ctx.attention(ctx.ones((2, 1, 4)), kv, kv, 6, 0.5)
        path = tmp_path / "m.safetensors"
        ctx.save_safetensors(path, {"w": w, "f": f})
        with ctx.open_safetensors(path) as sf:
            assert sorted(sf.names()) == ["f", "w"]
            assert sf["w"].tolist() == [1, 2, 3, 40]
            with pytest.raises(tl.InvalidArgumentError):
                sf["w\0evil"]
            with pytest.raises(tl.TensorLifeError):
                sf["nope"]
        with ctx.map_safetensors(path) as mf:
            assert mf.maps("w")
            mapped = mf["w"]
        assert mapped.tolist() == [1, 2, 3, 40]  # outlives the file's close
        with pytest.raises(tl.InvalidArgumentError):
            ctx.copy_into(w, mapped)


def test_fast_ops_refuse_what_is_not_theirs():
    with tl.Context() as ctx, tl.Context() as other:
        a = ctx.ones((2,))
        with pytest.raises(TypeError):
            ctx.add(a, [1.0, 2.0])
        with pytest.raises(TypeError):
            ctx.add(a)
        with pytest.raises(tl.InvalidHandleError):
            ctx.mul(a, other.ones((2,)))
        with pytest.raises(tl.ShapeError):
            ctx.matmul(a, a)
        with pytest.raises(TypeError):
            tl.Tensor()  # tensors are made by the library only
        assert ctx.add(a, a).tolist() == [2.0, 2.0]
    with pytest.raises(tl.InvalidHandleError):
        ctx.add(a, a)  # the context is closed


def test_storage_dtypes():
    """Weights in a storage dtype: converted, a matmul's weight as stored, refused by arithmetic."""
    with tl.Context() as ctx:
        w = ctx.tensor([float(i % 7 - 3) for i in range(4 * 32)], shape=(4, 32))
        x = ctx.tensor([1.0] * 32, shape=(1, 32))
        for dt in (tl.F16, tl.BF16, tl.Q8_0, tl.Q4_0):
            wq = ctx.convert(w, dt)
            assert wq.info()["dtype"] == dt
            got = ctx.matmul(x, ctx.transpose(wq, 0, 1)).tolist()
            want = ctx.matmul(x, ctx.transpose(ctx.convert(wq, tl.F32), 0, 1)).tolist()
            assert len(got) == len(want) == 4 and all(abs(g - r) < 1e-3 for g, r in zip(got, want))
            with pytest.raises(tl.DtypeError, match="add"):
                ctx.add(wq, wq)
