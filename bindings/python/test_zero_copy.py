"""Zero copy into NumPy and PyTorch: the buffer protocol, __array__ and DLPack over a tensor's own
memory, and what that means for its lifetime: while a view lives, the memory does (resetting or
closing the tensor's scope, or freeing it, raises BusyError; a closed Context waits for the last
view), never a view of a dead slab."""
import gc
import hashlib
import os
import time

import pytest

import tensorlife as tl

try:
    import numpy as np
except ImportError:
    if os.environ.get("TL_REQUIRE_NUMPY"):
        raise
    np = None
try:
    import torch
except ImportError:
    if os.environ.get("TL_REQUIRE_NUMPY"):  # the test command installs both (scripts/setup.sh)
        raise
    torch = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed")
needs_torch = pytest.mark.skipif(torch is None or np is None, reason="torch is not installed")


@needs_numpy
def test_numpy_sees_the_tensors_own_memory():
    with tl.Context() as ctx:
        t = ctx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        a = np.asarray(t)
        assert a.shape == (2, 3) and a.dtype == np.float32 and not a.flags.owndata
        ctx.copy_into(ctx.full([2, 3], 7.0), t)  # written by the library, seen by NumPy
        assert (a == 7).all()
        a[1, 2] = -1  # written by NumPy, seen by the library
        assert t.tolist()[5] == -1
        assert np.shares_memory(np.asarray(t), a) and np.shares_memory(np.array(t, copy=False), a)
        assert not np.shares_memory(t.__array__(copy=True), a)
        assert t.__array__(np.float64).dtype == np.float64  # another dtype: a copy
        with pytest.raises(ValueError, match="needs a copy"):
            t.__array__(np.float64, copy=False)
        del a
        gc.collect()


@needs_numpy
def test_views_carry_their_strides_and_dtypes():
    with tl.Context() as ctx:
        base = np.arange(12, dtype=np.float64).reshape(3, 4)
        t = ctx.tensor(base)
        tt = ctx.transpose(t, 0, 1)
        a = np.asarray(tt)
        assert a.shape == (4, 3) and a.strides == (8, 32)
        assert (a == base.T).all()
        s = ctx.slice(t, 1, 1, 2)
        assert (np.asarray(s) == base[:, 1:3]).all()
        for dtype in (np.float32, np.int32):
            assert (np.asarray(ctx.tensor(base.astype(dtype))) == base.astype(dtype)).all()
        half = ctx.convert(ctx.tensor(base.astype(np.float32)), tl.F16)
        m = memoryview(half)
        assert m.format == "e" and m.shape == (3, 4) and m.readonly is False
        assert (np.asarray(half) == base.astype(np.float16)).all()
        assert (np.asarray(ctx.tensor(np.array(3.5, dtype=np.float32))) == 3.5).all()  # 0-d
        assert np.asarray(ctx.zeros([0, 5])).shape == (0, 5)
        # a consumer that takes plain bytes gets contiguous memory, or a refusal
        assert hashlib.sha256(t).digest() == hashlib.sha256(base.tobytes()).digest()
        with pytest.raises(BufferError, match="not contiguous"):
            hashlib.sha256(tt)


@needs_numpy
def test_a_scoped_export_holds_its_scope_until_released():
    with tl.Context() as ctx:
        w = ctx.tensor(np.ones((4,), np.float32))
        step = ctx.open_scope("step")
        y = ctx.add(w, w)
        a = np.asarray(y)
        with pytest.raises(tl.BusyError, match="resetting scope 'step'.*exported"):
            step.reset()
        with pytest.raises(tl.BusyError):
            step.close()
        assert (a == 2).all()  # the refused reset left everything as it was
        del a
        gc.collect()
        step.reset()  # released: the reset goes through, and the stale tensor is refused
        with pytest.raises(tl.StorageClosedError, match="step"):
            np.asarray(y)
        with pytest.raises(tl.StorageClosedError):
            memoryview(y)
        b = np.asarray(ctx.add(w, w))  # the next step's tensor, exported and released again
        del b
        step.close()


@needs_numpy
def test_a_collected_scope_object_leaves_an_exported_scope_open():
    ctx = tl.Context()
    w = ctx.tensor(np.ones((3,), np.float32))
    scope = ctx.open_scope("dropped")
    a = np.asarray(ctx.mul(w, w))
    del scope
    gc.collect()  # its finalizer would close the scope: it must not, while `a` reads the slab
    assert (a == 1).all()
    assert ctx.current_scope().name == "dropped"
    del a
    gc.collect()
    ctx.close()


@needs_numpy
def test_free_is_refused_and_close_waits_for_exports():
    ctx = tl.Context()
    t = ctx.tensor(np.arange(8, dtype=np.int32))
    view = ctx.slice(t, 0, 2, 3)
    a = np.asarray(view)
    with pytest.raises(tl.BusyError, match="freeing"):
        t.free()  # its base: the view's memory
    ctx.close()  # closed for calls at once; the memory `a` reads stays until `a` goes
    with pytest.raises(tl.InvalidHandleError):
        ctx.zeros([1])
    with pytest.raises(tl.InvalidHandleError):
        np.asarray(t)
    assert a.tolist() == [2, 3, 4]
    del a
    gc.collect()


@needs_numpy
def test_an_export_outlives_its_dropped_context():
    ctx = tl.Context()
    a = np.asarray(ctx.tensor(np.full((5,), 9, np.float32)))
    del ctx
    gc.collect()  # the Context is gone; its memory stays until `a` goes
    assert (a == 9).all()
    del a
    gc.collect()


@needs_numpy
def test_mapped_tensors_export_read_only(tmp_path):
    path = tmp_path / "w.safetensors"
    with tl.Context() as ctx:
        ctx.save_safetensors(path, {"w": ctx.tensor(np.arange(4, dtype=np.float32))})
        with ctx.map_safetensors(path) as f:
            w = f["w"]
            a = np.asarray(w)
            assert a.tolist() == [0, 1, 2, 3] and not a.flags.writeable
            with pytest.raises(ValueError):
                a[0] = 1
            with pytest.raises(BufferError, match="read-only"):
                w.__dlpack__()
            del a


@needs_numpy
def test_formats_without_a_buffer_are_refused():
    with tl.Context() as ctx:
        x = ctx.tensor(np.ones((2, 32), np.float32))
        for dtype in (tl.Q8_0, tl.Q4_0, tl.BF16):
            with pytest.raises(BufferError, match="no buffer format"):
                memoryview(ctx.convert(x, dtype))
        for dtype in (tl.Q8_0, tl.Q4_0):
            with pytest.raises(BufferError, match="no DLPack type"):
                ctx.convert(x, dtype).__dlpack__()
        with pytest.raises(BufferError, match="stream=None"):
            x.__dlpack__(stream=1)
        assert x.__dlpack_device__() == (1, 0)


@needs_numpy
def test_numpy_from_dlpack():
    with tl.Context() as ctx:
        t = ctx.tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
        a = np.from_dlpack(t)
        assert a.shape == (3, 2) and np.shares_memory(a, np.asarray(t))
    assert a.tolist() == [[0, 1], [2, 3], [4, 5]]  # the Context closed: its memory waits for `a`


@needs_torch
def test_torch_takes_tensors_without_a_copy():
    with tl.Context() as ctx:
        x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
        t = ctx.tensor(x)
        pt = torch.from_dlpack(t)
        assert pt.dtype == torch.float32 and tuple(pt.shape) == (3, 4)
        pt[0, 0] = 42.0  # torch writes the tensorlife tensor's memory
        assert t.tolist()[0] == 42.0
        # BF16 (no NumPy type): the same bits as torch's own rounding of the same values
        b = torch.from_dlpack(ctx.convert(ctx.tensor(x), tl.BF16))
        assert b.dtype == torch.bfloat16 and torch.equal(b, torch.from_numpy(x).to(torch.bfloat16))
        h = torch.from_dlpack(ctx.convert(ctx.tensor(x), tl.F16))
        assert torch.equal(h, torch.from_numpy(x).to(torch.float16))
        tt = torch.from_dlpack(ctx.transpose(ctx.tensor(x), 0, 1))
        assert torch.equal(tt, torch.from_numpy(x).T)
        with ctx.open_scope("step") as step:
            y = torch.from_dlpack(ctx.add(t, t))
            with pytest.raises(tl.BusyError):
                step.reset()
            del y
            gc.collect()
            step.reset()
        del pt, b, h, tt
        gc.collect()


def test_shape_and_dtype_are_asked_for_once():
    with tl.Context() as ctx:
        t = ctx.zeros([2, 3])
        assert t.shape == (2, 3) and t.dtype == tl.F32
        with ctx.open_scope("s") as s:
            y = ctx.add(t, t)
            assert y.shape == (2, 3)
            s.reset()
            assert y.shape == (2, 3)  # the handle's shape, known; its data is refused
            with pytest.raises(tl.StorageClosedError):
                y.tolist()


@needs_numpy
@pytest.mark.parametrize("count", [1000, 10000, 100000])
def test_many_exports_cost_grows_linearly(count):
    """Exports of `count` distinct tensors at once, then a reset refused and released: timed,
    printed (pytest -s), asserted only for correctness."""
    with tl.Context() as ctx:
        with ctx.open_scope("many") as s:
            one = ctx.ones([1])
            tensors = [ctx.add(one, one) for _ in range(count)]
            start = time.perf_counter()
            arrays = [np.asarray(t) for t in tensors]
            exported = time.perf_counter() - start
            with pytest.raises(tl.BusyError, match=f"{1} view"):
                s.reset()
            start = time.perf_counter()
            del arrays  # each array's last reference: released here, not by the collector
            released = time.perf_counter() - start
            s.reset()
            print(f"\n{count} exports: {exported * 1e6 / count:.2f} us each, released at "
                  f"{released * 1e6 / count:.2f} us each")
