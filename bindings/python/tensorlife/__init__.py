"""tensorlife for Python: eager tensor math with scoped memory lifetimes.

    with tensorlife.Context() as ctx:
        w = ctx.tensor(numpy_array)                 # ambient
        with ctx.open_scope("decode-step") as step:
            y = ctx.matmul(ctx.tensor(x), w)        # in the scope
            step.reset()                            # y dies; y.numpy() raises StorageClosedError

Failures raise TensorLifeError subclasses carrying the library's status and message.
NumPy arrays go in and come out where numpy is installed; lists and array.array otherwise.
"""
import array as _array

from ._raw import tensorlife as _r

try:
    import numpy as _np
except ImportError:  # numpy is optional
    _np = None

__all__ = ["Context", "Scope", "Tensor", "TensorLifeError", "StorageClosedError", "InvalidHandleError",
           "InvalidArgumentError", "ShapeError", "DtypeError", "version"]

F32, F64, I32 = 1, 2, 3
_TYPECODE = {F32: "f", F64: "d", I32: "i"}
_NUMPY = {F32: "float32", F64: "float64", I32: "int32"}


class TensorLifeError(Exception):
    """A failed call: .status is the tl_status code, str() the library's message."""

    def __init__(self, status, message):
        super().__init__(f"{_r.tlb_status_string(status)}: {message}")
        self.status = status


class StorageClosedError(TensorLifeError):
    """A tensor used after its scope was reset or closed; the message names the storage."""


class InvalidHandleError(TensorLifeError):
    """A handle never issued, freed, of another context, or of a closed Context/Scope."""


class InvalidArgumentError(TensorLifeError, ValueError):
    pass


class ShapeError(TensorLifeError, ValueError):
    pass


class DtypeError(TensorLifeError, TypeError):
    pass


_ERRORS = {_r.E_STORAGE_CLOSED: StorageClosedError, _r.E_INVALID_HANDLE: InvalidHandleError,
           _r.E_INVALID_ARGUMENT: InvalidArgumentError, _r.E_SHAPE: ShapeError, _r.E_DTYPE: DtypeError}


def _check(status):
    if status != _r.OK:
        raise _ERRORS.get(status, TensorLifeError)(status, _r.tlb_last_error())


def _made(ctx, result):
    status, bits = result
    _check(status)
    return Tensor(ctx, bits)


def version():
    return _r.tlb_version()


class Context:
    """Owns every scope and tensor made through it; one thread at a time."""

    def __init__(self):
        self._c = _r.tlb_context_new()
        if self._c is None:
            _check(_r.tlb_last_status())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Frees every scope and tensor; a second close does nothing."""
        if self._c is not None:
            _r.tlb_context_free(self._c)
            self._c = None

    @property
    def _raw(self):
        if self._c is None:
            raise InvalidHandleError(_r.E_INVALID_HANDLE, "the context is closed")
        return self._c

    def open_scope(self, name, slab_bytes=0):
        return Scope(self, name, slab_bytes)

    def tensor(self, data, shape=None, dtype=F32):
        """A tensor copied from a numpy array (its dtype and shape), or from a flat sequence
        with shape and dtype (F32, F64, I32) given."""
        if _np is not None and isinstance(data, _np.ndarray):
            codes = {v: k for k, v in _NUMPY.items()}
            if data.dtype.name not in codes:
                raise DtypeError(_r.E_DTYPE, f"numpy dtype {data.dtype} is not float32, float64 or int32")
            dtype, shape, buf = codes[data.dtype.name], data.shape, _np.ascontiguousarray(data)
        else:
            buf = data if isinstance(data, _array.array) else _array.array(_TYPECODE[dtype], data)
            shape = (len(buf),) if shape is None else shape
        dims = _array.array("q", shape)
        make = {F32: _r.tlb_from_f32, F64: _r.tlb_from_f64, I32: _r.tlb_from_i32}[dtype]
        return _made(self, make(self._raw, dims, buf))

    def load_safetensors(self, path):
        """Every tensor of a safetensors file, by name, into the current target."""
        f = _r.tlb_st_open(self._raw, str(path))
        if f is None:
            _check(_r.tlb_last_status())
        try:
            names = [_r.tlb_st_name(f, i) for i in range(_r.tlb_st_count(f))]
            return {n: _made(self, _r.tlb_st_get(self._raw, f, n)) for n in names}
        finally:
            _r.tlb_st_close(f)

    def save_safetensors(self, path, tensors):
        """Writes a {name: Tensor} mapping (no newline in a name)."""
        names = sorted(tensors)
        if any("\n" in n for n in names):
            raise InvalidArgumentError(_r.E_INVALID_ARGUMENT, "a tensor name contains a newline")
        handles = _array.array("Q", [tensors[n]._bits for n in names])
        _check(_r.tlb_safetensors_save(self._raw, str(path), "\n".join(names), handles))

    def report_json(self):
        """Every open scope and the ambient totals, as a JSON string."""
        s = _r.tlb_context_report_json(self._raw)
        if s is None:
            _check(_r.tlb_last_status())
        return s

    def tensor_from_json(self, text):
        return _made(self, _r.tlb_tensor_from_json(self._raw, text))

    def matmul(self, a, b):
        return _made(self, _r.tlb_matmul(self._raw, a._bits, b._bits))

    def add(self, a, b):
        return _made(self, _r.tlb_add(self._raw, a._bits, b._bits))

    def sub(self, a, b):
        return _made(self, _r.tlb_sub(self._raw, a._bits, b._bits))

    def mul(self, a, b):
        return _made(self, _r.tlb_mul(self._raw, a._bits, b._bits))

    def div(self, a, b):
        return _made(self, _r.tlb_div(self._raw, a._bits, b._bits))

    def _unary(self, f, a):
        return _made(self, f(self._raw, a._bits))

    def relu(self, a):
        return self._unary(_r.tlb_relu, a)

    def gelu(self, a):
        return self._unary(_r.tlb_gelu, a)

    def silu(self, a):
        return self._unary(_r.tlb_silu, a)

    def exp(self, a):
        return self._unary(_r.tlb_exp, a)

    def tanh(self, a):
        return self._unary(_r.tlb_tanh, a)

    def contiguous(self, a):
        return self._unary(_r.tlb_contiguous, a)

    def rmsnorm(self, x, w=None, eps=1e-5):
        """Over the last axis; w None for no weight."""
        return _made(self, _r.tlb_rmsnorm(self._raw, x._bits, w._bits if w else 0, float(eps)))

    def layernorm(self, x, w=None, b=None, eps=1e-5):
        return _made(self, _r.tlb_layernorm(self._raw, x._bits, w._bits if w else 0, b._bits if b else 0, float(eps)))

    def sum(self, a, axis, keepdim=False):
        return _made(self, _r.tlb_reduce(self._raw, a._bits, 0, axis, int(keepdim)))

    def mean(self, a, axis, keepdim=False):
        return _made(self, _r.tlb_reduce(self._raw, a._bits, 1, axis, int(keepdim)))

    def argmax(self, a, axis):
        """I32 indices, the axis removed."""
        return _made(self, _r.tlb_reduce(self._raw, a._bits, 2, axis, 0))

    def slice(self, a, axis, start, length):
        """A view: it dies with its base."""
        return _made(self, _r.tlb_slice(self._raw, a._bits, axis, start, length))

    def transpose(self, a, d0, d1):
        return _made(self, _r.tlb_transpose(self._raw, a._bits, d0, d1))

    def reshape(self, a, shape):
        """A view where the strides allow it, else a copy; one dim may be -1."""
        return _made(self, _r.tlb_reshape(self._raw, a._bits, _array.array("q", shape)))

    def concat(self, tensors, axis=0):
        return _made(self, _r.tlb_concat(self._raw, _array.array("Q", [t._bits for t in tensors]), axis))

    def gather_rows(self, table, ids):
        """Rows of table by I32 ids: an embedding lookup."""
        return _made(self, _r.tlb_gather_rows(self._raw, table._bits, ids._bits))

    def copy_into(self, src, dst):
        """Writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src."""
        _check(_r.tlb_copy_into(self._raw, src._bits, dst._bits))

    def softmax(self, a, axis=-1):
        return _made(self, _r.tlb_softmax(self._raw, a._bits, axis))

    def scale(self, a, s):
        return _made(self, _r.tlb_scale(self._raw, a._bits, float(s)))


class Scope:
    """A slab whose tensors all die at reset(); `with` closes it."""

    def __init__(self, ctx, name, slab_bytes):
        self._ctx = ctx
        self._s = _r.tlb_scope_open(ctx._raw, name, slab_bytes)
        if self._s is None:
            _check(_r.tlb_last_status())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._s is not None and self._ctx._c is not None:
            self.close()

    @property
    def _raw(self):
        if self._s is None or self._ctx._c is None:
            raise InvalidHandleError(_r.E_INVALID_HANDLE, "the scope is closed")
        return self._s

    def reset(self):
        _check(_r.tlb_scope_reset(self._raw))

    def close(self):
        """Resets, frees the slab, pops the scope; a second close raises InvalidHandleError."""
        _check(_r.tlb_scope_close(self._raw))
        self._s = None

    def stats(self):
        v = _array.array("Q", [0] * 7)
        _check(_r.tlb_scope_stats(self._raw, v))
        keys = ("generation", "slab_bytes", "used_bytes", "peak_bytes", "overflow_bytes", "grow_events", "live_tensors")
        return dict(zip(keys, v))


class Tensor:
    """A value handle: valid until its scope's reset (then StorageClosedError) or free()."""

    def __init__(self, ctx, bits):
        self._ctx, self._bits = ctx, bits

    def _info(self):
        dims = _array.array("q", [0] * 9)
        status, dtype = _r.tlb_shape(self._ctx._raw, self._bits, dims)
        _check(status)
        return dtype, tuple(dims[1:1 + dims[0]])

    @property
    def shape(self):
        return self._info()[1]

    def _read(self, out, dtype):
        read = {F32: _r.tlb_read_f32, F64: _r.tlb_read_f64, I32: _r.tlb_read_i32}[dtype]
        _check(read(self._ctx._raw, self._bits, out))
        return out

    def numpy(self):
        """A new numpy array with the elements (needs numpy)."""
        if _np is None:
            raise ImportError("numpy is not installed: use tolist()")
        dtype, shape = self._info()
        return self._read(_np.empty(shape, dtype=_NUMPY[dtype]), dtype)

    def tolist(self):
        """The elements, flat, in logical order."""
        dtype, shape = self._info()
        n = 1
        for d in shape:
            n *= d
        return list(self._read(_array.array(_TYPECODE[dtype], [0] * n), dtype))

    def read_into(self, out):
        """Copies the elements into a buffer (numpy array, array.array) that holds them all."""
        return self._read(out, self._info()[0])

    def free(self):
        _check(_r.tlb_free(self._ctx._raw, self._bits))

    def to_json(self):
        """{"dtype","shape","data"}: floats exact, non-finite values as "nan", "inf", "-inf"."""
        s = _r.tlb_tensor_to_json(self._ctx._raw, self._bits)
        if s is None:
            _check(_r.tlb_last_status())
        return s

    def retain(self, target=None):
        """Copies into target (an open Scope), or into ambient memory when target is None."""
        return _made(self._ctx, _r.tlb_retain(self._ctx._raw, self._bits, target._raw if target else None))
