/* The Python binding's hot path in C (tlb_python.h says what it offers): base types for Context
 * and Tensor, so that ctx.add(a, b) is one C method call that checks both tensors belong to ctx,
 * makes the native call and builds the result object, with no Python frame; the buffer protocol
 * and DLPack over tlb_export.  Compiled into the extension beside SWIG's wrapper (setup.py).
 * Every call here holds the GIL, which serialises the calls on a Context's record. */
#ifndef TL_EXPERIMENTAL_API
#  define TL_EXPERIMENTAL_API /* as the SWIG layer: the runtime reaches the experimental calls */
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <tensorlife/tl.h>

#include "tlb.h"
#include "tlb_python.h"

typedef struct {
    PyObject_HEAD
    unsigned long long c;  /* the context record */
} tlb_PyContext;

typedef struct {
    PyObject_HEAD
    PyObject *ctx;         /* the Context it belongs to (kept alive) */
    unsigned long long bits;
    PyObject *shape, *dtype; /* asked for once (a handle's never change); NULL until then */
} tlb_PyTensor;

static PyTypeObject *tlb_py_tensor_class; /* the package's Tensor, a subclass of _TensorBase */
static PyObject *tlb_py_raise;            /* raise_for(ctx, *operands): raises the failure */

/* The context record a Tensor object's calls go to. */
static unsigned long long tlb_py_record(PyObject *tensor) {
    return ((tlb_PyContext *)((tlb_PyTensor *)tensor)->ctx)->c;
}

/* The dealloc of _TensorBase and of the package's Tensor (a heap type: its instances hold it). */
static void tlb_PyTensor_dealloc(PyObject *self) {
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(((tlb_PyTensor *)self)->ctx);
    Py_XDECREF(((tlb_PyTensor *)self)->shape);
    Py_XDECREF(((tlb_PyTensor *)self)->dtype);
    type->tp_free(self);
    if (type->tp_flags & Py_TPFLAGS_HEAPTYPE) Py_DECREF(type);
}

static PyMemberDef tlb_PyTensor_members[] = {
    {(char *)"_ctx", T_OBJECT_EX, offsetof(tlb_PyTensor, ctx), READONLY, NULL},
    {(char *)"_bits", T_ULONGLONG, offsetof(tlb_PyTensor, bits), READONLY, NULL},
    /* in C, not Python __slots__: object slots would make every Tensor a GC-tracked object */
    {(char *)"_shape", T_OBJECT_EX, offsetof(tlb_PyTensor, shape), 0, NULL},
    {(char *)"_dtype", T_OBJECT_EX, offsetof(tlb_PyTensor, dtype), 0, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyMemberDef tlb_PyContext_members[] = {
    {(char *)"_c", T_ULONGLONG, offsetof(tlb_PyContext, c), 0, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject tlb_PyTensorType = {PyVarObject_HEAD_INIT(NULL, 0) "tensorlife._tensorlife._TensorBase"};

/* ---- zero copy: the buffer protocol and DLPack over tlb_export ------------------------------
 * A consumer (a NumPy array, memoryview, torch tensor) holds the tensor's memory itself, and the
 * storage stays alive until it lets go: until then, resetting or closing the tensor's scope, or
 * freeing it, raises BusyError, and a closed context frees its memory after the last (tlb.h). */
#include <dlpack/dlpack.h>

/* tlb_export's info slots, laid out by the header's own list. */
#define TLB_PY_FIELD(field) int64_t field;
#define TLB_PY_FIELDS(field, n) int64_t field[n];
typedef struct {
    TL_TENSOR_INFO_FIELDS(TLB_PY_FIELD, TLB_PY_FIELDS)
    int64_t count;
} tlb_py_info;
#undef TLB_PY_FIELD
#undef TLB_PY_FIELDS

/* Exports self: its data and info, or -1 with the failure raised (as every call raises it). */
static int tlb_py_export(PyObject *self, void **data, tlb_py_info *info) {
    const unsigned long long bits = ((tlb_PyTensor *)self)->bits;
    if (tlb_export(tlb_py_record(self), bits, data, (int64_t *)info, sizeof *info / sizeof(int64_t)) == 0) return 0;
    PyObject *r = tlb_py_raise ? PyObject_CallFunctionObjArgs(tlb_py_raise, ((tlb_PyTensor *)self)->ctx, self, NULL) : NULL;
    Py_XDECREF(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "tensorlife: the export failed");
    return -1;
}
static int tlb_py_unexport_failing(PyObject *self, PyObject *kind, const char *fmt, const char *what) {
    tlb_unexport(tlb_py_record(self), ((tlb_PyTensor *)self)->bits);
    PyErr_Format(kind, fmt, what);
    return -1;
}

typedef struct {
    Py_ssize_t shape[TL_MAX_DIMS], strides[TL_MAX_DIMS];
} tlb_py_dims;

static int tlb_py_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    void *data = NULL;
    tlb_py_info in;
    view->obj = NULL;
    if (tlb_py_export(self, &data, &in) < 0) return -1;
    const char *format = in.dtype == TL_F32 ? "f" : in.dtype == TL_F64 ? "d" : in.dtype == TL_I32 ? "i"
                       : in.dtype == TL_F16 ? "e" : NULL;
    if (!format)
        return tlb_py_unexport_failing(self, PyExc_BufferError,
                                       "a %s tensor has no buffer format: convert() it to F32, or (BF16) use DLPack",
                                       tl_dtype_name((tl_dtype)in.dtype));
    if ((flags & PyBUF_WRITABLE) && in.read_only)
        return tlb_py_unexport_failing(self, PyExc_BufferError, "%s", "the tensor is read-only (over a mapped file)");
    tlb_py_dims *dims = (tlb_py_dims *)PyMem_Malloc(sizeof *dims);
    if (!dims) return tlb_py_unexport_failing(self, PyExc_MemoryError, "%s", "out of memory for a buffer");
    const Py_ssize_t item = (Py_ssize_t)tl_dtype_size((tl_dtype)in.dtype);
    for (int i = 0; i < in.ndim; ++i) dims->shape[i] = (Py_ssize_t)in.shape[i], dims->strides[i] = (Py_ssize_t)in.strides[i] * item;
    view->buf = data;
    view->len = (Py_ssize_t)in.count * item;
    view->readonly = (int)in.read_only;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) ? (char *)format : NULL;
    view->ndim = (int)in.ndim;
    view->shape = (flags & PyBUF_ND) ? dims->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) ? dims->strides : NULL;
    view->suboffsets = NULL;
    view->internal = dims;
    /* A consumer that takes no strides, or asks for one order, gets the memory only in that order. */
    const int want_f = (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS,
              want_any = (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS,
              want_c = (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS || !(flags & PyBUF_STRIDES);
    Py_buffer check = *view;
    check.shape = dims->shape, check.strides = dims->strides, check.ndim = (int)in.ndim;
    if ((want_c || want_f || want_any) && !PyBuffer_IsContiguous(&check, want_f ? 'F' : want_any ? 'A' : 'C')) {
        PyMem_Free(dims);
        return tlb_py_unexport_failing(self, PyExc_BufferError, "%s",
                                       "the tensor is not contiguous in the order asked for: contiguous() first");
    }
    if (!(flags & PyBUF_ND)) view->ndim = 1;  /* bytes only: one dimension, as the protocol says */
    Py_INCREF(self);
    view->obj = self;
    return 0;
}
static void tlb_py_releasebuffer(PyObject *self, Py_buffer *view) {
    PyMem_Free(view->internal);
    tlb_unexport(tlb_py_record(self), ((tlb_PyTensor *)self)->bits);
}
static PyBufferProcs tlb_py_buffer_procs = {tlb_py_getbuffer, tlb_py_releasebuffer};

/* DLPack (0.6): the managed tensor holds the export and a reference to the Tensor object. */
typedef struct {
    DLManagedTensor managed;
    int64_t shape[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    PyObject *tensor;
} tlb_py_dl;
static void tlb_py_dl_delete(DLManagedTensor *managed) {
    tlb_py_dl *d = (tlb_py_dl *)managed->manager_ctx;
    PyGILState_STATE gil = PyGILState_Ensure();  /* a consumer may free it from any thread */
    tlb_unexport(tlb_py_record(d->tensor), ((tlb_PyTensor *)d->tensor)->bits);
    Py_DECREF(d->tensor);
    PyMem_RawFree(d);
    PyGILState_Release(gil);
}
static void tlb_py_dl_capsule_free(PyObject *capsule) {
    if (PyCapsule_IsValid(capsule, "used_dltensor")) return;  /* a consumer took it */
    DLManagedTensor *managed = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
    if (managed) managed->deleter(managed);
    else PyErr_Clear();
}
static PyObject *tlb_py_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {(char *)"stream", NULL};
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O", keywords, &stream)) return NULL;
    if (stream != Py_None) {
        PyErr_SetString(PyExc_BufferError, "a tensorlife tensor is on the CPU: __dlpack__ takes stream=None");
        return NULL;
    }
    void *data = NULL;
    tlb_py_info in;
    if (tlb_py_export(self, &data, &in) < 0) return NULL;
    DLDataType type = {0, 0, 1};
    switch (in.dtype) {
    case TL_F32: type.code = kDLFloat, type.bits = 32; break;
    case TL_F64: type.code = kDLFloat, type.bits = 64; break;
    case TL_F16: type.code = kDLFloat, type.bits = 16; break;
    case TL_BF16: type.code = kDLBfloat, type.bits = 16; break;
    case TL_I32: type.code = kDLInt, type.bits = 32; break;
    default:
        tlb_py_unexport_failing(self, PyExc_BufferError, "a %s tensor has no DLPack type: convert() it to F32 first",
                                tl_dtype_name((tl_dtype)in.dtype));
        return NULL;
    }
    if (in.read_only) {  /* DLPack 0.6 cannot say read-only, and a consumer may write: a fault */
        tlb_py_unexport_failing(self, PyExc_BufferError, "%s",
                                "the tensor is read-only (over a mapped file) and DLPack cannot say so: retain() a copy, "
                                "or take it through NumPy (a read-only array)");
        return NULL;
    }
    tlb_py_dl *d = (tlb_py_dl *)PyMem_RawCalloc(1, sizeof *d);
    if (!d) {
        tlb_py_unexport_failing(self, PyExc_MemoryError, "%s", "out of memory for a DLPack tensor");
        return NULL;
    }
    for (int i = 0; i < in.ndim; ++i) d->shape[i] = in.shape[i], d->strides[i] = in.strides[i];
    Py_INCREF(self);
    d->tensor = self;
    DLTensor *t = &d->managed.dl_tensor;
    t->data = data;
    t->device.device_type = kDLCPU;
    t->device.device_id = 0;
    t->ndim = (int)in.ndim;
    t->dtype = type;
    t->shape = d->shape;
    t->strides = d->strides;
    t->byte_offset = 0;
    d->managed.manager_ctx = d;
    d->managed.deleter = tlb_py_dl_delete;
    PyObject *capsule = PyCapsule_New(&d->managed, "dltensor", tlb_py_dl_capsule_free);
    if (!capsule) tlb_py_dl_delete(&d->managed);
    return capsule;
}
static PyObject *tlb_py_dlpack_device(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return Py_BuildValue("(ii)", (int)kDLCPU, 0);
}
static PyMethodDef tlb_PyTensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tlb_py_dlpack, METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule over the tensor's memory (no copy): torch.from_dlpack(t), numpy.from_dlpack(t)."},
    {"__dlpack_device__", tlb_py_dlpack_device, METH_NOARGS, "(kDLCPU, 0)."},
    {NULL, NULL, 0, NULL}};
static PyTypeObject tlb_PyContextType = {PyVarObject_HEAD_INIT(NULL, 0) "tensorlife._tensorlife._ContextBase"};


/* Freed Tensor objects kept for the next results, as CPython keeps floats: a decode loop makes
 * and drops one per op (under the GIL, as every call here). */
enum { TLB_PY_FREE_TENSORS = 64 };
static PyObject *tlb_py_free_tensors[TLB_PY_FREE_TENSORS];
static int tlb_py_free_count;
static void tlb_py_tensor_free(void *self) {
    if (tlb_py_free_count < TLB_PY_FREE_TENSORS) tlb_py_free_tensors[tlb_py_free_count++] = (PyObject *)self;
    else PyObject_Free(self);
}

/* A Tensor of ctx with these bits (a new reference), or NULL with an exception set. */
static PyObject *tlb_py_tensor(PyObject *ctx, unsigned long long bits) {
    PyTypeObject *type = tlb_py_tensor_class ? tlb_py_tensor_class : &tlb_PyTensorType;
    tlb_PyTensor *t;
    if (tlb_py_free_count && type->tp_free == tlb_py_tensor_free) {
        t = (tlb_PyTensor *)PyObject_Init(tlb_py_free_tensors[--tlb_py_free_count], type);
        t->shape = t->dtype = NULL;
    } else {
        t = (tlb_PyTensor *)type->tp_alloc(type, 0);
    }
    if (!t) return NULL;
    Py_INCREF(ctx);
    t->ctx = ctx;
    t->bits = bits;
    return (PyObject *)t;
}

/* Two operands of self: their bits, or 0 with *foreign set when either is not self's Tensor. */
static int tlb_py_operands(PyObject *self, PyObject *const *args, Py_ssize_t nargs, unsigned long long *a,
                           unsigned long long *b) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "the op takes two tensors");
        return -1;
    }
    for (int i = 0; i < 2; ++i) {
        if ((Py_TYPE(args[i]) != tlb_py_tensor_class && !PyObject_TypeCheck(args[i], &tlb_PyTensorType)) ||
            ((tlb_PyTensor *)args[i])->ctx != self)
            return 0;
    }
    *a = ((tlb_PyTensor *)args[0])->bits;
    *b = ((tlb_PyTensor *)args[1])->bits;
    return 1;
}

/* A failed op: the package's raise_for(ctx, a, b) raises the exception of the failure. */
static PyObject *tlb_py_fail(PyObject *self, PyObject *const *args) {
    if (tlb_py_raise) {
        PyObject *r = PyObject_CallFunctionObjArgs(tlb_py_raise, self, args[0], args[1], NULL);
        Py_XDECREF(r);
        if (PyErr_Occurred()) return NULL;
    }
    PyErr_SetString(PyExc_RuntimeError, "tensorlife: a call failed");
    return NULL;
}

#define TLB_PY_BINARY(name)                                                                         \
    static PyObject *tlb_py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {       \
        unsigned long long a, b;                                                                    \
        const int ok = tlb_py_operands(self, args, nargs, &a, &b);                                  \
        if (ok < 0) return NULL;                                                                    \
        const uint64_t r = ok ? tlb_##name(((tlb_PyContext *)self)->c, a, b) : 0;                   \
        return r ? tlb_py_tensor(self, r) : tlb_py_fail(self, args);                                \
    }

/* The pair ops as Context methods (METH_FASTCALL), filled in by %init; the last one zero. */
#define TLB_PY_COUNT(name) +1
static PyMethodDef tlb_py_context_methods[0 TL_PAIR_OPS(TLB_PY_COUNT) + 1];
#undef TLB_PY_COUNT

TL_PAIR_OPS(TLB_PY_BINARY)
/* Registers the package's Tensor and Context classes and its raise_for(ctx, *operands).
 * - Tensor instances are left out of the cycle collector: one holds only its Context, its shape
 *   tuple and its dtype, so it cannot close a cycle, and tracking it cost a collection of the young
 *   generation every 700 results (bench/README.md).  Hence no __dict__ or __weakref__ in Tensor.
 * - The pair ops are made methods of the Context class itself, not of its C base: the
 *   interpreter's fast call of a C method requires the method's own type to be the instance's. */
PyObject *tlb_py_register(PyObject *tensor_class, PyObject *context_class, PyObject *raise_for) {
    if (!PyType_Check(tensor_class) || !PyType_IsSubtype((PyTypeObject *)tensor_class, &tlb_PyTensorType) ||
        !PyType_Check(context_class) || !PyType_IsSubtype((PyTypeObject *)context_class, &tlb_PyContextType)) {
        PyErr_SetString(PyExc_TypeError, "the classes must derive from _TensorBase and _ContextBase");
        return NULL;
    }
    PyTypeObject *tensor = (PyTypeObject *)tensor_class;
    if (tensor->tp_dictoffset || tensor->tp_weaklistoffset || tensor->tp_basicsize != tlb_PyTensorType.tp_basicsize) {
        PyErr_SetString(PyExc_TypeError, "the Tensor class must add no attributes (__slots__ = ())");
        return NULL;
    }
    for (PyMethodDef *m = tlb_py_context_methods; m->ml_name; ++m) {
        PyObject *method = PyDescr_NewMethod((PyTypeObject *)context_class, m);
        const int failed = !method || PyObject_SetAttrString(context_class, m->ml_name, method) < 0;
        Py_XDECREF(method);
        if (failed) return NULL;
    }
    tensor->tp_flags &= ~Py_TPFLAGS_HAVE_GC;  /* before any instance exists */
    tensor->tp_free = tlb_py_tensor_free;
    tensor->tp_dealloc = tlb_PyTensor_dealloc;  /* not the generic one of a class: nothing to finalize */
    PyType_Modified(tensor);
    Py_XINCREF(tensor_class);
    Py_XINCREF(raise_for);
    tlb_py_tensor_class = tensor;
    tlb_py_raise = raise_for;
    Py_RETURN_NONE;
}
/* A Tensor object of ctx for handle bits (for the calls made through the SWIG layer). */
PyObject *tlb_py_tensor_of(PyObject *ctx, unsigned long long bits) { return tlb_py_tensor(ctx, bits); }

/* Readies _TensorBase and _ContextBase and puts them in the module's dict d; -1 with an
 * exception set on failure. */
int tlb_py_init_types(PyObject *d) {
#define TLB_PY_NAME(name) #name,
#define TLB_PY_FUNCTION(name) (PyCFunction)(void (*)(void))tlb_py_##name,
    static const char *names[] = {TL_PAIR_OPS(TLB_PY_NAME)};
    PyCFunction functions[] = {TL_PAIR_OPS(TLB_PY_FUNCTION)};
#undef TLB_PY_NAME
#undef TLB_PY_FUNCTION
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        tlb_py_context_methods[i].ml_name = names[i];
        tlb_py_context_methods[i].ml_meth = functions[i];
        tlb_py_context_methods[i].ml_flags = METH_FASTCALL;
        tlb_py_context_methods[i].ml_doc = NULL;
    }
    tlb_PyTensorType.tp_basicsize = sizeof(tlb_PyTensor);
    tlb_PyTensorType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    tlb_PyTensorType.tp_dealloc = tlb_PyTensor_dealloc;
    tlb_PyTensorType.tp_members = tlb_PyTensor_members;
    tlb_PyTensorType.tp_methods = tlb_PyTensor_methods;
    tlb_PyTensorType.tp_as_buffer = &tlb_py_buffer_procs;
    tlb_PyTensorType.tp_doc = "A tensor handle and its Context (the base of tensorlife.Tensor).";
    tlb_PyContextType.tp_basicsize = sizeof(tlb_PyContext);
    tlb_PyContextType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    tlb_PyContextType.tp_new = PyType_GenericNew;
    tlb_PyContextType.tp_members = tlb_PyContext_members;
    tlb_PyContextType.tp_doc = "A context record and the ops made in C (the base of tensorlife.Context).";
    if (PyType_Ready(&tlb_PyTensorType) < 0 || PyType_Ready(&tlb_PyContextType) < 0) return -1;
    Py_INCREF(&tlb_PyTensorType);
    Py_INCREF(&tlb_PyContextType);
    PyDict_SetItemString(d, "_TensorBase", (PyObject *)&tlb_PyTensorType);
    PyDict_SetItemString(d, "_ContextBase", (PyObject *)&tlb_PyContextType);
    return 0;
}
