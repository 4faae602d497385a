"""tensorlife for Python: eager tensor math with scoped memory lifetimes.

    with tensorlife.Context() as ctx:
        w = ctx.tensor(numpy_array)                 # ambient
        with ctx.open_scope("decode-step") as step:
            y = ctx.matmul(ctx.tensor(x), w)        # in the scope
            step.reset()                            # y dies; y.numpy() raises StorageClosedError

Failures raise a TensorLifeError subclass per status, carrying the library's message.  NumPy
arrays go in and come out where numpy is installed; lists, array.array and other buffers
otherwise.  A buffer is taken only when its element type is the tensor's (an int32 array where
float32 is meant is converted by tensor(), refused by read_into()), never reinterpreted.
A Context may be shared by threads (the GIL serialises its calls); one that is dropped without
close() is released with every scope and tensor in it.

Text in, text out (tensorlife.model): Model.open(path), model.new_session(), session.generate().
"""
import array as _array
import weakref as _weakref

from . import _lists, _tensorlife as _r
from ._lists import *  # noqa: F401,F403  (the exception classes, F32/F64/I32, GROW/FIXED)
from ._lists import ERRORS as _ERRORS, F32, F64, I32, GROW, TensorLifeError, InvalidArgumentError, \
    InvalidHandleError, DtypeError, ScopeStats, GgufType, RopeMode, DType

try:
    import numpy as _np
except ImportError:  # numpy is optional
    _np = None

_TYPECODE = {F32: "f", F64: "d", I32: "i"}
_NUMPY = {F32: "float32", F64: "float64", I32: "int32"}
_FROM = {F32: _r.tlb_from_f32, F64: _r.tlb_from_f64, I32: _r.tlb_from_i32}
_READ = {F32: _r.tlb_read_f32, F64: _r.tlb_read_f64, I32: _r.tlb_read_i32}


def _error(c):
    """The failure recorded on context record c."""
    status = _r.tlb_status(c)
    return _ERRORS.get(status, TensorLifeError)(_r.tlb_message(c), status)


def _name(what, s):
    s = str(s)
    if "\0" in s:
        raise InvalidArgumentError(f"{what} contains a NUL byte")
    return s


def version():
    return _r.tlb_version()


def abi_version():
    return _r.tlb_abi_version()


def set_blas_threads(threads):
    """OpenBLAS's thread count, which matmul uses (process-wide)."""
    if _r.tlb_set_blas_threads(int(threads)):
        raise _error(0)


def blas_threads():
    return _r.tlb_blas_threads()


class Context(_r._ContextBase):
    """Owns every scope and tensor made through it.  add, sub, mul, div, matmul and
    gather_rows are made in C (one native call each, with NumPy broadcasting for the
    elementwise ones); everything else is here."""

    __slots__ = ("_pinned", "__weakref__")  # no __dict__: a method call looks in none

    def __init__(self):
        self._c = 0
        c = _r.tlb_context_new_serialised()  # the GIL serialises its calls: no lock of its own
        if not c:
            raise _error(0)
        self._c = c
        self._pinned = []  # buffers wrapped by tensors: kept alive with the context
        # Released when the Context is collected or the interpreter exits, whichever is first
        # (weakref.finalize: once, with no resurrection, unlike __del__).
        _weakref.finalize(self, _r.tlb_context_release, c)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Frees every scope and tensor; later calls raise InvalidHandleError.  Memory that a
        NumPy array, memoryview or DLPack tensor still holds is freed when the last one goes."""
        _r.tlb_context_close(self._c)
        self._pinned = []

    def _made(self, bits):
        if not bits:
            raise _error(self._c)
        return _tensor_of(self, bits)

    def _check(self, status):
        if status:
            raise _error(self._c)

    def _own(self, *tensors):
        for t in tensors:
            if t is not None and t._ctx is not self:
                raise InvalidHandleError("the tensor belongs to another Context")

    def open_scope(self, name, slab_bytes=0, growth=GROW, max_bytes=0):
        """A scope (TL_GROW or TL_FIXED, capped at max_bytes when non-zero); `with` closes it."""
        return Scope(self, name, slab_bytes, growth, max_bytes)

    def current_scope(self):
        """The innermost open Scope (a view of it: dropping it closes nothing), or None."""
        token = _r.tlb_scope_current(self._c)
        if token < 0:
            raise _error(self._c)
        return Scope._view(self, token) if token else None

    # ---- tensors --------------------------------------------------------------------------
    def tensor(self, data, shape=None, dtype=None):
        """A tensor copied from a numpy array (its shape; float32, float64 or int32, or
        converted to dtype when given), or from a flat sequence with shape and dtype."""
        if _np is not None and isinstance(data, _np.ndarray):
            if dtype is None:
                codes = {v: k for k, v in _NUMPY.items()}
                if data.dtype.name not in codes:
                    raise DtypeError(f"numpy dtype {data.dtype} is not float32, float64 or int32; pass dtype=")
                dtype = codes[data.dtype.name]
            buf = _np.ascontiguousarray(data, dtype=_NUMPY[dtype])
            shape = data.shape if shape is None else shape
        else:
            dtype = F32 if dtype is None else dtype
            buf = data if isinstance(data, _array.array) and data.typecode == _TYPECODE[dtype] \
                else _array.array(_TYPECODE[dtype], data)
            shape = (len(buf),) if shape is None else shape
        return self._made(_FROM[dtype](self._c, _array.array("q", shape), buf))

    def zeros(self, shape, dtype=F32):
        return self._made(_r.tlb_fill(self._c, dtype, _array.array("q", shape), 0, 0.0))

    def ones(self, shape, dtype=F32):
        return self._made(_r.tlb_fill(self._c, dtype, _array.array("q", shape), 1, 0.0))

    def full(self, shape, value, dtype=F32):
        return self._made(_r.tlb_fill(self._c, dtype, _array.array("q", shape), 2, float(value)))

    def wrap(self, buffer, shape=None):
        """A tensor over a writable buffer with no copy (a numpy array: its dtype and shape).
        The buffer is kept alive, and cannot be resized, as long as the context lives."""
        view = memoryview(buffer)
        fmt = view.format.lstrip("@=<")
        dtype = {"f": F32, "d": F64, "i": I32}.get(fmt) or (I32 if fmt == "l" and view.itemsize == 4 else None)
        if dtype is None:
            raise DtypeError(f"buffer format '{view.format}' is not float32, float64 or int32")
        shape = view.shape if shape is None else shape
        t = self._made(_r.tlb_wrap(self._c, dtype, _array.array("q", shape), view))
        self._pinned.append(view)
        return t

    # ---- io -------------------------------------------------------------------------------
    def open_safetensors(self, path):
        return SafetensorsFile(self, path)

    def map_safetensors(self, path):
        """The file mapped read-only: aligned F32/F64/I32 tensors come out over the mapping, no
        copy (f.maps(name) says which); they are read-only.  The mapping lives until close()
        and the last tensor over it dies."""
        return SafetensorsFile(self, path, mapped=True)

    def open_gguf(self, path):
        """A GGUF file (versions 2 and 3, as llama.cpp writes them), mapped read-only: f[name] is a
        read-only tensor over the mapping in its stored dtype (Q8_0, Q4_0, F16, ...), f.metadata(key)
        a key's value."""
        return GgufFile(self, path)

    def load_safetensors(self, path):
        """Every tensor of a safetensors file, by name, into the current target."""
        with self.open_safetensors(path) as f:
            return {n: f[n] for n in f.names()}

    def save_safetensors(self, path, tensors):
        """Writes a {name: Tensor} mapping, atomically."""
        names = sorted(tensors)
        if any("\n" in n or "\0" in n for n in names):
            raise InvalidArgumentError("a tensor name contains a newline or a NUL byte")
        self._own(*tensors.values())
        handles = _array.array("Q", [tensors[n]._bits for n in names])
        self._check(_r.tlb_safetensors_save(self._c, _name("path", path), "\n".join(names), handles))

    def report_json(self):
        """Every open scope and the ambient totals, as a JSON string."""
        s = _r.tlb_context_report_json(self._c)
        if s is None:
            raise _error(self._c)
        return s

    def tensor_from_json(self, text):
        return self._made(_r.tlb_tensor_from_json(self._c, _name("JSON text", text)))

    # ---- ops: one native call each (the binary ones are in the C base) ----------------------
    def _unary(self, f, a, *args):
        self._own(a)
        return self._made(f(self._c, a._bits, *args))

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

    def convert(self, a, to):
        """A new tensor of dtype `to`: F32 to and from F16, BF16, Q8_0 and Q4_0 (weights as stored)."""
        return self._unary(_r.tlb_convert, a, int(to))

    def rmsnorm(self, x, w=None, eps=1e-5):
        """Over the last axis; w None for no weight."""
        self._own(x, w)
        return self._made(_r.tlb_rmsnorm(self._c, x._bits, w._bits if w else 0, float(eps)))

    def layernorm(self, x, w=None, b=None, eps=1e-5):
        self._own(x, w, b)
        return self._made(_r.tlb_layernorm(self._c, x._bits, w._bits if w else 0, b._bits if b else 0, float(eps)))

    def sum(self, a, axis, keepdim=False):
        return self._unary(_r.tlb_sum, a, axis, int(keepdim))

    def mean(self, a, axis, keepdim=False):
        return self._unary(_r.tlb_mean, a, axis, int(keepdim))

    def argmax(self, a, axis):
        """I32 indices, the axis removed."""
        return self._unary(_r.tlb_argmax, a, axis)

    def slice(self, a, axis, start, length):
        """A view: it dies with its base."""
        return self._unary(_r.tlb_slice, a, axis, start, length)

    def transpose(self, a, d0, d1):
        return self._unary(_r.tlb_transpose, a, d0, d1)

    def reshape(self, a, shape):
        """A view where the strides allow it, else a copy; one dim may be -1."""
        return self._unary(_r.tlb_reshape, a, _array.array("q", shape))

    def concat(self, tensors, axis=0):
        self._own(*tensors)
        return self._made(_r.tlb_concat(self._c, _array.array("Q", [t._bits for t in tensors]), axis))

    def copy_into(self, src, dst):
        """Writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src."""
        self._own(src, dst)
        self._check(_r.tlb_copy_into(self._c, src._bits, dst._bits))

    def softmax(self, a, axis=-1):
        return self._unary(_r.tlb_softmax, a, axis)

    def scale(self, a, s):
        return self._unary(_r.tlb_scale, a, float(s))

    def attention(self, q, k, v, valid_rows, scale):
        """softmax(scale * q k^T) v over the first valid_rows rows of a KV cache, causal by
        construction: q [H,Tq,hd], k and v [H,T,hd]; the result is [H,Tq,hd] at every position."""
        self._own(q, k, v)
        return self._made(_r.tlb_attention(self._c, q._bits, k._bits, v._bits, int(valid_rows), float(scale)))


    def rope(self, x, position, theta=10000.0, mode=None):
        """Rotary position embedding of x [..., T, d], row t at position + t: RopeMode.HALVES
        (Hugging Face, the default) or RopeMode.INTERLEAVED (GGUF's Llama files)."""
        self._own(x)
        mode = RopeMode.HALVES if mode is None else RopeMode(mode)
        return self._made(_r.tlb_rope(self._c, x._bits, int(position), float(theta), int(mode)))


class Scope:
    """A slab whose tensors all die at reset(); `with` closes it.  A Scope dropped while open
    is closed if it is the innermost (else it closes with its context)."""

    def __init__(self, ctx, name, slab_bytes=0, growth=GROW, max_bytes=0):
        self._ctx, self._token, self._owner = ctx, 0, False
        token = _r.tlb_scope_open(ctx._c, _name("scope name", name), growth, slab_bytes, max_bytes)
        if not token:
            raise _error(ctx._c)
        _r.tlb_scope_hold(ctx._c)
        self._token, self._owner = token, True
        _weakref.finalize(self, _r.tlb_scope_release, ctx._c, token)  # holds the record, not the Context

    @classmethod
    def _view(cls, ctx, token):
        s = cls.__new__(cls)
        s._ctx, s._token, s._owner = ctx, token, False
        return s

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __eq__(self, other):
        return isinstance(other, Scope) and other._ctx is self._ctx and other._token == self._token

    __hash__ = None

    def reset(self):
        self._ctx._check(_r.tlb_scope_reset(self._ctx._c, self._token))

    def close(self):
        """Resets, frees the slab, pops the scope; a second close raises InvalidHandleError."""
        self._ctx._check(_r.tlb_scope_close(self._ctx._c, self._token))

    @property
    def name(self):
        name = _r.tlb_scope_name(self._ctx._c, self._token)
        if name is None:
            raise _error(self._ctx._c)
        return name

    def stats(self):
        """The scope's memory figures now (a ScopeStats named tuple)."""
        v = _array.array("Q", [0] * len(ScopeStats._fields))
        self._ctx._check(_r.tlb_scope_stats(self._ctx._c, self._token, v))
        return ScopeStats(*v)

    def stats_json(self):
        s = _r.tlb_scope_stats_json(self._ctx._c, self._token)
        if s is None:
            raise _error(self._ctx._c)
        return s


class _OpenFile:
    """A file the runtime keeps open (its index, maybe a mapping): closed once, by close(),
    `with`, or when collected (weakref.finalize)."""

    def __init__(self, ctx, f, close):
        if not f:
            raise _error(ctx._c)
        self._ctx, self._f = ctx, f
        self._release = _weakref.finalize(self, close, f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._f:
            self._release()  # closes once: here, or when collected
            self._f = 0


class SafetensorsFile(_OpenFile):
    """An open safetensors file (its header checked); f[name] reads one tensor."""

    def __init__(self, ctx, path, mapped=False):
        super().__init__(ctx, (_r.tlb_st_map if mapped else _r.tlb_st_open)(ctx._c, _name("path", path)),
                         _r.tlb_st_close)

    def names(self):
        return [_r.tlb_st_name(self._f, i) for i in range(_r.tlb_st_count(self._f))]

    def maps(self, name):
        """Whether self[name] gives a read-only tensor over the mapping (else a copy)."""
        return "\0" not in name and _r.tlb_st_maps(self._f, name) == 1

    def __getitem__(self, name):
        if not self._f:
            raise InvalidHandleError("the safetensors file is closed")
        return self._ctx._made(_r.tlb_st_get(self._ctx._c, self._f, _name("tensor name", name)))


class GgufFile(_OpenFile):
    """An open GGUF file: names() its tensors, keys() its metadata keys, f[name] a tensor over the
    mapping, f.metadata(key) a value (int, bool, float, str, or a list of them for an array)."""

    def __init__(self, ctx, path):
        super().__init__(ctx, _r.tlb_gguf_open(ctx._c, _name("path", path)), _r.tlb_gguf_close)

    def _open(self):
        if not self._f:
            raise InvalidHandleError("the GGUF file is closed")
        return self._f

    def names(self):
        f = self._open()
        return [_r.tlb_gguf_tensor_name(f, i) for i in range(_r.tlb_gguf_tensor_count(f))]

    def keys(self):
        f = self._open()
        return [_r.tlb_gguf_key_name(f, i) for i in range(_r.tlb_gguf_key_count(f))]

    def __getitem__(self, name):
        return self._ctx._made(_r.tlb_gguf_get(self._ctx._c, self._open(), _name("tensor name", name)))

    def key_type(self, key):
        """(type, item type, count): an array's items' type and length; a scalar's own type and 1."""
        v = _array.array("q", [0, 0, 0])
        self._ctx._check(_r.tlb_gguf_key_type(self._ctx._c, self._open(), _name("key", key), v))
        return GgufType(v[0]), GgufType(v[1]), v[2]

    def _one(self, key, kind, item):
        c, f, key = self._ctx._c, self._open(), _name("key", key)
        if kind == GgufType.STRING:
            s = _r.tlb_gguf_string(c, f, key, item)
            if s is None:
                raise _error(c)
            return s
        if kind in (GgufType.FLOAT32, GgufType.FLOAT64):
            v = _array.array("d", [0.0])
            self._ctx._check(_r.tlb_gguf_float(c, f, key, item, v))
            return v[0]
        v = _array.array("q", [0])
        self._ctx._check(_r.tlb_gguf_int(c, f, key, item, v))
        return bool(v[0]) if kind == GgufType.BOOL else v[0]

    def metadata(self, key):
        """A key's value in Python's type; an array as a list (an array of arrays is DtypeError)."""
        kind, item, count = self.key_type(key)
        if kind != GgufType.ARRAY:
            return self._one(key, kind, -1)
        if item == GgufType.ARRAY:
            raise DtypeError(f"GGUF key '{key}' is an array of arrays")
        return [self._one(key, item, i) for i in range(count)]


class Tensor(_r._TensorBase):
    """A value handle: valid until its scope's reset (then StorageClosedError) or free().
    Made by the library only; _ctx and _bits live in the C base.

    No copy: numpy.asarray(t), memoryview(t) (F32, F64, I32, F16) and torch.from_dlpack(t) or
    numpy.from_dlpack(t) (those and BF16) see the tensor's own memory, read-only over a mapped
    file.  While such a view lives, the memory is kept: resetting or closing the tensor's scope,
    or freeing it, raises BusyError (drop the views, or copy with numpy() or retain()), and a
    closed Context frees its memory after the last view; a stale tensor is refused as every call
    refuses it (StorageClosedError)."""

    __slots__ = ()  # _ctx, _bits, and _shape and _dtype (asked for once) live in the C base

    def info(self):
        """dtype, shape, strides (elements), offset, storage name, generation, count."""
        v = _array.array("q", [0] * _lists._INFO_SLOTS)
        self._ctx._check(_r.tlb_info(self._ctx._c, self._bits, v))
        n = v[_lists._INFO_NDIM]
        storage = _r.tlb_storage(self._ctx._c, self._bits)
        return {"dtype": DType(v[_lists._INFO_DTYPE]), "shape": tuple(v[_lists._INFO_SHAPE:_lists._INFO_SHAPE + n]),
                "strides": tuple(v[_lists._INFO_STRIDES:_lists._INFO_STRIDES + n]), "offset": v[_lists._INFO_OFFSET],
                "storage": storage, "generation": v[_lists._INFO_GENERATION], "count": v[_lists._INFO_COUNT],
                "read_only": bool(v[_lists._INFO_READ_ONLY])}

    def _meta(self):
        """(shape, dtype): asked for once, a handle's never change."""
        try:
            return self._shape, self._dtype
        except AttributeError:
            info = self.info()
            self._shape, self._dtype = info["shape"], info["dtype"]
            return self._shape, self._dtype

    @property
    def shape(self):
        return self._meta()[0]

    @property
    def dtype(self):
        return self._meta()[1]

    def __array__(self, dtype=None, copy=None):
        """The tensor's memory as a NumPy array, no copy; a copy for another dtype or copy=True
        (NumPy 2's protocol: copy=False with another dtype raises ValueError)."""
        if _np is None:
            raise ImportError("numpy is not installed")
        a = _np.asarray(memoryview(self))
        if dtype is not None and _np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError(f"a {a.dtype} tensor as {_np.dtype(dtype)} needs a copy")
            return a.astype(dtype)
        return a.copy() if copy else a

    def numpy(self):
        """A new numpy array with the elements (needs numpy)."""
        if _np is None:
            raise ImportError("numpy is not installed: use tolist()")
        info = self.info()
        out = _np.empty(info["shape"], dtype=_NUMPY[info["dtype"]])
        self._ctx._check(_READ[info["dtype"]](self._ctx._c, self._bits, out))
        return out

    def tolist(self):
        """The elements, flat, in logical order."""
        info = self.info()
        out = _array.array(_TYPECODE[info["dtype"]], bytes(info["count"] * (8 if info["dtype"] == F64 else 4)))
        self._ctx._check(_READ[info["dtype"]](self._ctx._c, self._bits, out))
        return list(out)

    def read_into(self, out):
        """Copies the elements into a buffer (numpy array, array.array) of the tensor's element
        type that holds them all; another element type raises (TypeError or DtypeError)."""
        self._ctx._check(_READ[self.dtype](self._ctx._c, self._bits, out))
        return out

    def free(self):
        self._ctx._check(_r.tlb_free(self._ctx._c, self._bits))

    def to_json(self):
        """{"dtype","shape","data"}: floats exact, non-finite values as "nan", "inf", "-inf"."""
        s = _r.tlb_tensor_to_json(self._ctx._c, self._bits)
        if s is None:
            raise _error(self._ctx._c)
        return s

    def retain(self, target=None):
        """Copies into target (an open Scope), or into ambient memory when target is None."""
        if target is not None and target._ctx is not self._ctx:
            raise InvalidHandleError("the scope belongs to another Context")
        return self._ctx._made(_r.tlb_retain(self._ctx._c, self._bits, target._token if target else 0))


def _raise_for(ctx, *operands):
    """Raises the failure of a call the C base made on ctx with these operands."""
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a tensorlife.Tensor, got {type(t).__name__}")
    ctx._own(*operands)
    raise _error(ctx._c)


_tensor_of = _r.tlb_py_tensor_of
_r.tlb_py_register(Tensor, Context, _raise_for)

from .model import Model, Session, Sampler  # noqa: E402  (text in, text out)
