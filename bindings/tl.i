/* One SWIG interface for every binding.  It does not wrap tl.h one to one: it exposes a small
 * flat layer (tlb_*) that every language takes the same way, and that makes each op one native
 * call on the success path:
 *
 *  - A context is a uint64 (the address of a tlb_ctx record).  The record holds the library's
 *    context, a mutex that serialises every call on it (misuse from several threads is
 *    serialised, never memory corruption), and the status and message of the last failure,
 *    copied there inside the failing call, so reading them needs no thread affinity (Go
 *    goroutines move between OS threads; tl_last_error is per thread).
 *  - A tensor is its 64 handle bits.  Calls that make a tensor return the bits, 0 on failure;
 *    then tlb_status/tlb_message on the same context say why.  Other calls return the status.
 *  - A scope is its 64 handle bits too: a closed scope's handle is refused for ever, so a
 *    finalizer or a stale object never acts on a later scope.
 *  - The record is reference counted: the language's Context holds one reference, and a
 *    Scope object whose finalizer may run after its Context's (Java, C#) one more
 *    (tlb_scope_hold, dropped by tlb_scope_release); the library's context is destroyed at
 *    tlb_context_close or tlb_context_release, the record when the last reference goes.
 *  - Sizes are int64 in every language; arrays travel as (pointer, count) pairs.
 * The idiomatic layers (Go errors, Java/C# exceptions and disposables, Python context
 * managers) are written by hand on top, in each language's folder; the status and dtype lists
 * they use are generated from the C headers by bindings/gen_lists.py. */
%module tensorlife

%{
#define TL_EXPERIMENTAL_API /* the bindings reach the executor and attention too */
#include <tensorlife/tl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TLB_MESSAGE_BYTES = 1024 };

typedef struct tlb_ctx {
    pthread_mutex_t lock;
    long refs;          /* under refs_lock: the language's Context plus each live Scope object */
    tl_context *ctx;    /* NULL once closed */
    int status;         /* of the last failure; changed only by failures */
    char message[TLB_MESSAGE_BYTES];
} tlb_ctx;

static pthread_mutex_t tlb_refs_lock = PTHREAD_MUTEX_INITIALIZER;
/* Failures with no context to hold them (tlb_context_new itself, a 0 context). */
static tlb_ctx tlb_no_context = {PTHREAD_MUTEX_INITIALIZER, 1, NULL, 0, ""};
/* tlb_message copies into this thread's buffer under the lock, for the language to copy out. */
static _Thread_local char tlb_message_copy[TLB_MESSAGE_BYTES];

static tlb_ctx *tlb_of(uint64_t c) { return c ? (tlb_ctx *)(uintptr_t)c : &tlb_no_context; }

static void tlb_set(tlb_ctx *x, int status, const char *message) {
    x->status = status;
    snprintf(x->message, sizeof x->message, "%s", message ? message : "");
}

/* Locks the record; NULL (the failure recorded, nothing locked) when there is no open context. */
static tlb_ctx *tlb_enter(uint64_t c) {
    tlb_ctx *x = tlb_of(c);
    pthread_mutex_lock(&x->lock);
    if (x->ctx) return x;
    tlb_set(x, TL_E_INVALID_HANDLE, c ? "the context is closed" : "no context (0)");
    pthread_mutex_unlock(&x->lock);
    return NULL;
}

/* Leaves a call: a failure's status and message are copied into the record first. */
static int tlb_leave(tlb_ctx *x, int rc) {
    if (rc != TL_OK) tlb_set(x, rc, tl_last_error());
    pthread_mutex_unlock(&x->lock);
    return rc;
}
static uint64_t tlb_leave_bits(tlb_ctx *x, int rc, tl_tensor t) { return tlb_leave(x, rc) == TL_OK ? t.bits : 0; }
/* A failure the binding layer finds itself (the message is its own): recorded, unlocked. */
static int tlb_refusef(tlb_ctx *x, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    x->status = status;
    vsnprintf(x->message, sizeof x->message, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&x->lock);
    return status;
}
static int tlb_refuse(tlb_ctx *x, int status, const char *what) { return tlb_refusef(x, status, "%s", what); }

static void tlb_unref(tlb_ctx *x) {
    pthread_mutex_lock(&tlb_refs_lock);
    long left = --x->refs;
    pthread_mutex_unlock(&tlb_refs_lock);
    if (left) return;
    tl_context_destroy(x->ctx);
    pthread_mutex_destroy(&x->lock);
    free(x);
}

static tl_scope tlb_scope_at(uint64_t token) {
    tl_scope s = {token};
    return s;
}

/* The tensor info array's slots: TL_TENSOR_INFO_FIELDS, then the element count (the layout
 * each binding's generated list names). */
#define TLB_ONE_SLOT(field) +1
#define TLB_SLOTS(field, n) +(n)
enum { TLB_INFO_SLOTS = 0 TL_TENSOR_INFO_FIELDS(TLB_ONE_SLOT, TLB_SLOTS) + 1 };
#undef TLB_ONE_SLOT
#undef TLB_SLOTS
%}

%include <stdint.i>

/* Strings the library hands over are freed with tl_string_free once copied. */
%typemap(newfree) char * "tl_string_free($1);";

/* ---- arrays: (pointer, count) pairs; wrap buffers: (pointer, bytes) ------------------- */
#if defined(SWIGGO)
%define TL_GO_SLICE(CTYPE, GOTYPE)
%typemap(gotype) (CTYPE *ARRAY, size_t COUNT) "[]" #GOTYPE
%typemap(in) (CTYPE *ARRAY, size_t COUNT) %{
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
%}
%enddef
TL_GO_SLICE(float, float32)
TL_GO_SLICE(double, float64)
TL_GO_SLICE(int32_t, int32)
TL_GO_SLICE(int64_t, int64)
TL_GO_SLICE(uint64_t, uint64)
/* C memory only (cgo forbids C keeping Go pointers): its address, the size on its own. */
%typemap(gotype) void *buffer "unsafe.Pointer"
%typemap(in) void *buffer %{ $1 = $input; %}
#endif

#if defined(SWIGJAVA)
/* Java arrays in and out: pinned or copied by the JVM, written back after the call. */
%define TL_JAVA_ARRAY(CTYPE, JNITYPE, JAVATYPE, JNAME)
%typemap(jni) (CTYPE *ARRAY, size_t COUNT) #JNITYPE "Array"
%typemap(jtype) (CTYPE *ARRAY, size_t COUNT) #JAVATYPE "[]"
%typemap(jstype) (CTYPE *ARRAY, size_t COUNT) #JAVATYPE "[]"
%typemap(javain) (CTYPE *ARRAY, size_t COUNT) "$javainput"
%typemap(in) (CTYPE *ARRAY, size_t COUNT) %{
  $1 = $input ? (CTYPE *)(*jenv)->Get##JNAME##ArrayElements(jenv, $input, 0) : NULL;
  $2 = $input ? (size_t)(*jenv)->GetArrayLength(jenv, $input) : 0;
%}
%typemap(argout) (CTYPE *ARRAY, size_t COUNT) %{
  if ($input) (*jenv)->Release##JNAME##ArrayElements(jenv, $input, (JNITYPE *)$1, 0);
%}
%enddef
TL_JAVA_ARRAY(float, jfloat, float, Float)
TL_JAVA_ARRAY(double, jdouble, double, Double)
TL_JAVA_ARRAY(int32_t, jint, int, Int)
TL_JAVA_ARRAY(int64_t, jlong, long, Long)
TL_JAVA_ARRAY(uint64_t, jlong, long, Long)
/* A direct ByteBuffer's memory (NULL for a heap buffer: tlb_wrap refuses it). */
%typemap(jni) (void *BUFFER, int64_t BYTES) "jobject"
%typemap(jtype) (void *BUFFER, int64_t BYTES) "java.nio.ByteBuffer"
%typemap(jstype) (void *BUFFER, int64_t BYTES) "java.nio.ByteBuffer"
%typemap(javain) (void *BUFFER, int64_t BYTES) "$javainput"
%typemap(in) (void *BUFFER, int64_t BYTES) %{
  $1 = $input ? (*jenv)->GetDirectBufferAddress(jenv, $input) : NULL;
  $2 = $1 ? (int64_t)(*jenv)->GetDirectBufferCapacity(jenv, $input) : -1;
%}
/* uint64 handle bits travel as Java long (same 64 bits). */
%typemap(jni) uint64_t "jlong"
%typemap(jtype) uint64_t "long"
%typemap(jstype) uint64_t "long"
%typemap(javain) uint64_t "$javainput"
%typemap(javaout) uint64_t { return $jnicall; }
%typemap(in) uint64_t %{ $1 = (uint64_t)$input; %}
%typemap(out) uint64_t %{ $result = (jlong)$1; %}
#endif

#if defined(SWIGCSHARP)
/* C# arrays marshalled [In, Out]; the count travels as its own argument (the hand layer
 * passes array.Length), since P/Invoke hands C a bare pointer. */
%include <arrays_csharp.i>
%apply float INOUT[] { float *data };
%apply double INOUT[] { double *data };
%apply int INOUT[] { int32_t *data };
%apply long long INOUT[] { int64_t *shape, int64_t *info };
%apply unsigned long long INOUT[] { uint64_t *stats, uint64_t *handles };
/* long long and int64_t are both 64 bits but distinct C types: cast. */
%typemap(in) int64_t *shape, int64_t *info "$1 = (int64_t *)$input;"
%typemap(in) uint64_t *stats, uint64_t *handles "$1 = (uint64_t *)$input;"
/* Pinned memory (GCHandle.AddrOfPinnedObject) as an IntPtr. */
%typemap(ctype) void *buffer "void *"
%typemap(imtype) void *buffer "global::System.IntPtr"
%typemap(cstype) void *buffer "global::System.IntPtr"
%typemap(csin) void *buffer "$csinput"
%typemap(in) void *buffer "$1 = $input;"
#endif

#if defined(SWIGPYTHON)
/* Any buffer (numpy array, array.array, bytearray, memoryview) whose item format is exactly
 * CTYPE's, in or out: an int32 buffer where float32 is meant is a TypeError, never bits
 * reinterpreted.  A read-only buffer where one is written is a TypeError too. */
%define TL_PY_BUFFER(CTYPE, FORMATS)
%typemap(in) (CTYPE *ARRAY, size_t COUNT) (Py_buffer view, int have_view = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) SWIG_fail;
  }
  have_view = 1;
  {
    const char *f = view.format ? view.format : "B";
    if (*f == '@' || *f == '=' || *f == '<') ++f;
    if (view.itemsize != (Py_ssize_t)sizeof(CTYPE) || strlen(f) != 1 || !strchr(FORMATS, *f)) {
      PyErr_Format(PyExc_TypeError, "expected a C-contiguous buffer of " #CTYPE " (format '%s'), got format '%s'",
                   FORMATS, view.format ? view.format : "B");
      SWIG_fail;
    }
  }
  $1 = (CTYPE *)view.buf;
  $2 = (size_t)(view.len / view.itemsize);
}
%typemap(freearg) (CTYPE *ARRAY, size_t COUNT) { if (have_view$argnum) PyBuffer_Release(&view$argnum); }
%enddef
TL_PY_BUFFER(float, "f")
TL_PY_BUFFER(double, "d")
TL_PY_BUFFER(int32_t, sizeof(long) == 4 ? "il" : "i")
TL_PY_BUFFER(int64_t, sizeof(long) == 8 ? "lq" : "q")
TL_PY_BUFFER(uint64_t, sizeof(long) == 8 ? "LQ" : "Q")
/* Handle bits and records carry high bits (depth, slot, generation), where CPython's long long
 * conversions take their slow byte-array path; unsigned long is the same 64 bits on LP64. */
%typemap(in) uint64_t {
%#if ULONG_MAX == UINT64_MAX
  $1 = (uint64_t)PyLong_AsUnsignedLong($input);
%#else
  $1 = (uint64_t)PyLong_AsUnsignedLongLong($input);
%#endif
  if ($1 == (uint64_t)-1 && PyErr_Occurred()) SWIG_fail;
}
%typemap(out) uint64_t {
%#if ULONG_MAX == UINT64_MAX
  $result = PyLong_FromUnsignedLong((unsigned long)$1);
%#else
  $result = PyLong_FromUnsignedLongLong((unsigned long long)$1);
%#endif
}
/* Writable, C-contiguous memory of any format for tlb_wrap (the Python layer checks the
 * dtype and keeps the object alive while the context is). */
%typemap(in) (void *BUFFER, int64_t BYTES) (Py_buffer view, int have_view = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  have_view = 1;
  $1 = view.buf;
  $2 = (int64_t)view.len;
}
%typemap(freearg) (void *BUFFER, int64_t BYTES) { if (have_view$argnum) PyBuffer_Release(&view$argnum); }
#endif

#if defined(SWIGPYTHON)
/* The hot path for Python in C: base types for Context and Tensor, so that ctx.add(a, b) is one
 * C method call that checks both tensors belong to ctx, makes the native call and builds the
 * result object, with no Python frame.  The package subclasses both (adding everything else in
 * Python) and registers its Tensor class and a function that raises the right exception for a
 * failed call (tlb_py_register). */
%{
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    unsigned long long c;  /* the context record */
} tlb_PyContext;

typedef struct {
    PyObject_HEAD
    PyObject *ctx;         /* the Context it belongs to (kept alive) */
    unsigned long long bits;
} tlb_PyTensor;

static PyTypeObject *tlb_py_tensor_class; /* the package's Tensor, a subclass of _TensorBase */
static PyObject *tlb_py_raise;            /* raise_for(ctx, *operands): raises the failure */

static void tlb_PyTensor_dealloc(PyObject *self) {
    Py_XDECREF(((tlb_PyTensor *)self)->ctx);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef tlb_PyTensor_members[] = {
    {(char *)"_ctx", T_OBJECT_EX, offsetof(tlb_PyTensor, ctx), READONLY, NULL},
    {(char *)"_bits", T_ULONGLONG, offsetof(tlb_PyTensor, bits), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyMemberDef tlb_PyContext_members[] = {
    {(char *)"_c", T_ULONGLONG, offsetof(tlb_PyContext, c), 0, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject tlb_PyTensorType = {PyVarObject_HEAD_INIT(NULL, 0) "tensorlife._tensorlife._TensorBase"};
static PyTypeObject tlb_PyContextType = {PyVarObject_HEAD_INIT(NULL, 0) "tensorlife._tensorlife._ContextBase"};

/* A Tensor of ctx with these bits (a new reference), or NULL with an exception set. */
static PyObject *tlb_py_tensor(PyObject *ctx, unsigned long long bits) {
    PyTypeObject *type = tlb_py_tensor_class ? tlb_py_tensor_class : &tlb_PyTensorType;
    tlb_PyTensor *t = (tlb_PyTensor *)type->tp_alloc(type, 0);
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
        if (!PyObject_TypeCheck(args[i], &tlb_PyTensorType) || ((tlb_PyTensor *)args[i])->ctx != self) return 0;
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
%}
%inline %{
/* Registers the package's Tensor class and its raise_for(ctx, *operands). */
PyObject *tlb_py_register(PyObject *tensor_class, PyObject *raise_for) {
    if (!PyType_Check(tensor_class) || !PyType_IsSubtype((PyTypeObject *)tensor_class, &tlb_PyTensorType)) {
        PyErr_SetString(PyExc_TypeError, "the Tensor class must derive from _TensorBase");
        return NULL;
    }
    Py_XINCREF(tensor_class);
    Py_XINCREF(raise_for);
    tlb_py_tensor_class = (PyTypeObject *)tensor_class;
    tlb_py_raise = raise_for;
    Py_RETURN_NONE;
}
/* A Tensor object of ctx for handle bits (for the calls made through the SWIG layer). */
PyObject *tlb_py_tensor_of(PyObject *ctx, unsigned long long bits) { return tlb_py_tensor(ctx, bits); }
%}
%init %{
{
#define TLB_PY_NAME(name) #name,
#define TLB_PY_FUNCTION(name) (PyCFunction)(void (*)(void))tlb_py_##name,
    static const char *names[] = {TL_PAIR_OPS(TLB_PY_NAME)};
    PyCFunction functions[] = {TL_PAIR_OPS(TLB_PY_FUNCTION)};
#undef TLB_PY_NAME
#undef TLB_PY_FUNCTION
    enum { count = sizeof names / sizeof names[0] };
    static PyMethodDef context_methods[count + 1];  /* the last one zero: the end */
    for (int i = 0; i < count; ++i) {
        context_methods[i].ml_name = names[i];
        context_methods[i].ml_meth = functions[i];
        context_methods[i].ml_flags = METH_FASTCALL;
        context_methods[i].ml_doc = NULL;
    }
    tlb_PyTensorType.tp_basicsize = sizeof(tlb_PyTensor);
    tlb_PyTensorType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    tlb_PyTensorType.tp_dealloc = tlb_PyTensor_dealloc;
    tlb_PyTensorType.tp_members = tlb_PyTensor_members;
    tlb_PyTensorType.tp_doc = "A tensor handle and its Context (the base of tensorlife.Tensor).";
    tlb_PyContextType.tp_basicsize = sizeof(tlb_PyContext);
    tlb_PyContextType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    tlb_PyContextType.tp_new = PyType_GenericNew;
    tlb_PyContextType.tp_members = tlb_PyContext_members;
    tlb_PyContextType.tp_methods = context_methods;
    tlb_PyContextType.tp_doc = "A context record and the ops made in C (the base of tensorlife.Context).";
    if (PyType_Ready(&tlb_PyTensorType) < 0 || PyType_Ready(&tlb_PyContextType) < 0) return NULL;
    Py_INCREF(&tlb_PyTensorType);
    Py_INCREF(&tlb_PyContextType);
    PyDict_SetItemString(d, "_TensorBase", (PyObject *)&tlb_PyTensorType);
    PyDict_SetItemString(d, "_ContextBase", (PyObject *)&tlb_PyContextType);
}
%}
#endif

#if !defined(SWIGCSHARP) && !defined(SWIGGO)
%apply (void *BUFFER, int64_t BYTES) { (void *buffer, int64_t buffer_bytes) };
#endif
#if !defined(SWIGCSHARP)
%apply (float *ARRAY, size_t COUNT) { (float *data, size_t count) };
%apply (double *ARRAY, size_t COUNT) { (double *data, size_t count) };
%apply (int32_t *ARRAY, size_t COUNT) { (int32_t *data, size_t count) };
%apply (int64_t *ARRAY, size_t COUNT) { (int64_t *shape, size_t ndim), (int64_t *info, size_t ninfo) };
%apply (uint64_t *ARRAY, size_t COUNT) { (uint64_t *stats, size_t nstats), (uint64_t *handles, size_t nhandles) };
#endif

/* Helpers of the layer itself, not for the languages. */
%ignore tlb_from;
%ignore tlb_read;

%newobject tlb_context_report_json;
%newobject tlb_tensor_to_json;
%newobject tlb_scope_stats_json;

%inline %{
/* ---- versions and statuses --------------------------------------------------------------- */
const char *tlb_status_string(int status) { return tl_status_string((tl_status)status); }
const char *tlb_version(void) { return tl_version_string(); }
int tlb_abi_version(void) { return tl_abi_version(); }
/* OpenBLAS's thread count (process-wide); the status, TL_E_INVALID_ARGUMENT below 1. */
int tlb_set_blas_threads(int threads) {
    tlb_ctx *x = tlb_of(0);
    int rc = tl_set_blas_threads(threads);
    if (rc != TL_OK) {
        pthread_mutex_lock(&x->lock);
        tlb_set(x, rc, tl_last_error());
        pthread_mutex_unlock(&x->lock);
    }
    return rc;
}
int tlb_blas_threads(void) { return tl_blas_threads(); }

/* The last failure on context c (0: failures with no context).  The message is copied out
 * under the lock, so a language copying it races with no other call. */
int tlb_status(uint64_t c) {
    tlb_ctx *x = tlb_of(c);
    pthread_mutex_lock(&x->lock);
    int status = x->status;
    pthread_mutex_unlock(&x->lock);
    return status;
}
const char *tlb_message(uint64_t c) {
    tlb_ctx *x = tlb_of(c);
    pthread_mutex_lock(&x->lock);
    memcpy(tlb_message_copy, x->message, sizeof tlb_message_copy);
    pthread_mutex_unlock(&x->lock);
    return tlb_message_copy;
}

/* ---- contexts ------------------------------------------------------------------------------ */
/* A context record, or 0 (then tlb_status(0)/tlb_message(0) say why). */
uint64_t tlb_context_new(void) {
    tlb_ctx *x = (tlb_ctx *)calloc(1, sizeof *x);
    if (!x) {
        pthread_mutex_lock(&tlb_no_context.lock);
        tlb_set(&tlb_no_context, TL_E_OUT_OF_MEMORY, "out of memory for a context record");
        pthread_mutex_unlock(&tlb_no_context.lock);
        return 0;
    }
    tl_status rc = tl_context_create(NULL, &x->ctx);
    if (rc != TL_OK) {
        pthread_mutex_lock(&tlb_no_context.lock);
        tlb_set(&tlb_no_context, rc, tl_last_error());
        pthread_mutex_unlock(&tlb_no_context.lock);
        free(x);
        return 0;
    }
    pthread_mutex_init(&x->lock, NULL);
    x->refs = 1;
    return (uint64_t)(uintptr_t)x;
}
/* Destroys the library's context (every scope and tensor); calls on c then fail with
 * TL_E_INVALID_HANDLE.  Idempotent; the record lives on until released. */
void tlb_context_close(uint64_t c) {
    if (!c) return;
    tlb_ctx *x = tlb_of(c);
    pthread_mutex_lock(&x->lock);
    tl_context_destroy(x->ctx);
    x->ctx = NULL;
    pthread_mutex_unlock(&x->lock);
}
/* The language's Context is gone (closed or collected): drops its reference. */
void tlb_context_release(uint64_t c) {
    if (!c) return;
    tlb_context_close(c);
    tlb_unref(tlb_of(c));
}

/* ---- scopes -------------------------------------------------------------------------------- */
/* growth: TL_GROW or TL_FIXED; max_bytes 0 for no limit.  A token, or 0 on failure. */
uint64_t tlb_scope_open(uint64_t c, const char *name, int growth, int64_t slab_bytes, int64_t max_bytes) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    if (slab_bytes < 0 || max_bytes < 0) {
        tlb_refuse(x, TL_E_INVALID_ARGUMENT, "scope sizes must not be negative");
        return 0;
    }
    if ((uint64_t)slab_bytes > SIZE_MAX || (uint64_t)max_bytes > SIZE_MAX) {
        tlb_refuse(x, TL_E_OUT_OF_MEMORY, "scope sizes do not fit size_t");
        return 0;
    }
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
    o.growth = (tl_growth)growth;
    o.slab_bytes = (size_t)slab_bytes;
    o.max_bytes = (size_t)max_bytes;
    tl_scope s = {0};
    int rc = tl_scope_open_ex(x->ctx, name, &o, &s);
    return tlb_leave(x, rc) == TL_OK ? s.bits : 0;
}
int tlb_scope_reset(uint64_t c, uint64_t token) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    return tlb_leave(x, tl_scope_reset(x->ctx, tlb_scope_at(token)));
}
int tlb_scope_close(uint64_t c, uint64_t token) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    return tlb_leave(x, tl_scope_close(x->ctx, tlb_scope_at(token)));
}
/* A reference on the record for a Scope object whose finalizer calls tlb_scope_release. */
void tlb_scope_hold(uint64_t c) {
    if (!c) return;
    pthread_mutex_lock(&tlb_refs_lock);
    ++tlb_of(c)->refs;
    pthread_mutex_unlock(&tlb_refs_lock);
}
/* The Scope object is gone: closes the scope if it is still open and innermost (an outer one
 * stays open until its context closes), then drops the reference tlb_scope_hold took. */
void tlb_scope_release(uint64_t c, uint64_t token) {
    if (!c) return;
    tlb_ctx *x = tlb_of(c);
    pthread_mutex_lock(&x->lock);
    if (x->ctx) (void)tl_scope_close(x->ctx, tlb_scope_at(token)); /* refused unless open and innermost */
    pthread_mutex_unlock(&x->lock);
    tlb_unref(x);
}
/* stats[0..7), in TL_SCOPE_STATS_FIELDS order: generation, slab, used, peak, overflow bytes,
 * grow events, live tensors. */
int tlb_scope_stats(uint64_t c, uint64_t token, uint64_t *stats, size_t nstats) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
#define TLB_ONE(field) +1
    enum { fields = 0 TL_SCOPE_STATS_FIELDS(TLB_ONE) };
#undef TLB_ONE
    if (nstats < (size_t)fields) return tlb_refusef(x, TL_E_INVALID_ARGUMENT, "scope stats need %d slots", (int)fields);
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    int rc = tl_scope_stats_get(x->ctx, tlb_scope_at(token), &st);
    if (rc == TL_OK) {
        int i = 0;
#define TLB_STAT(field) stats[i++] = (uint64_t)st.field;
        TL_SCOPE_STATS_FIELDS(TLB_STAT)
#undef TLB_STAT
    }
    return tlb_leave(x, rc);
}
char *tlb_scope_stats_json(uint64_t c, uint64_t token) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return NULL;
    char *json = NULL;
    return tlb_leave(x, tl_scope_stats_json(x->ctx, tlb_scope_at(token), &json)) == TL_OK ? json : NULL;
}
/* The name of an open scope (copied out), or NULL with the failure recorded. */
const char *tlb_scope_name(uint64_t c, uint64_t token) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return NULL;
    const char *name = tl_scope_name(x->ctx, tlb_scope_at(token));
    if (!name) {
        tlb_refuse(x, TL_E_INVALID_HANDLE, "the scope is closed, or not this context's");
        return NULL;
    }
    snprintf(tlb_message_copy, sizeof tlb_message_copy, "%s", name);
    tlb_leave(x, TL_OK);
    return tlb_message_copy;
}
/* The innermost open scope's token, 0 when the target is ambient, -1 on failure. */
int64_t tlb_scope_current(uint64_t c) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return -1;
    tl_scope s = {0};
    return tlb_leave(x, tl_scope_current(x->ctx, &s)) == TL_OK ? (int64_t)s.bits : -1;
}

/* ---- tensors ------------------------------------------------------------------------------- */
static uint64_t tlb_from(uint64_t c, tl_dtype dt, int64_t *shape, size_t ndim, const void *data, size_t nbytes) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_tensor t = {0};
    return tlb_leave_bits(x, tl_tensor_from_data(x->ctx, dt, (int)ndim, shape, data, nbytes, &t), t);
}
uint64_t tlb_from_f32(uint64_t c, int64_t *shape, size_t ndim, float *data, size_t count) {
    return tlb_from(c, TL_F32, shape, ndim, data, count * sizeof(float));
}
uint64_t tlb_from_f64(uint64_t c, int64_t *shape, size_t ndim, double *data, size_t count) {
    return tlb_from(c, TL_F64, shape, ndim, data, count * sizeof(double));
}
uint64_t tlb_from_i32(uint64_t c, int64_t *shape, size_t ndim, int32_t *data, size_t count) {
    return tlb_from(c, TL_I32, shape, ndim, data, count * sizeof(int32_t));
}
/* kind 0 zeros, 1 ones, 2 full(value). */
uint64_t tlb_fill(uint64_t c, int dtype, int64_t *shape, size_t ndim, int kind, double value) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_tensor t = {0};
    tl_dtype dt = (tl_dtype)dtype;
    int rc = kind == 0   ? tl_tensor_zeros(x->ctx, dt, (int)ndim, shape, &t)
             : kind == 1 ? tl_tensor_ones(x->ctx, dt, (int)ndim, shape, &t)
                         : tl_tensor_full(x->ctx, dt, (int)ndim, shape, value, &t);
    return tlb_leave_bits(x, rc, t);
}
/* A tensor over memory the language keeps pinned and alive (no copy). */
uint64_t tlb_wrap(uint64_t c, int dtype, int64_t *shape, size_t ndim, void *buffer, int64_t buffer_bytes) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    if (!buffer || buffer_bytes < 0) {
        tlb_refuse(x, TL_E_INVALID_ARGUMENT, "wrap needs directly addressable memory (a direct buffer, pinned array or C memory)");
        return 0;
    }
    tl_tensor t = {0};
    return tlb_leave_bits(x, tl_tensor_wrap(x->ctx, (tl_dtype)dtype, (int)ndim, shape, buffer, (size_t)buffer_bytes, &t), t);
}
/* Reads every element into data; the tensor must be of dtype exactly (bits are never
 * reinterpreted) and data must hold them all. */
static int tlb_read(uint64_t c, uint64_t bits, tl_dtype dt, void *data, size_t nbytes) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    tl_tensor t = {bits};
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    int rc = tl_tensor_info_get(x->ctx, t, &info);
    if (rc != TL_OK) return tlb_leave(x, rc);
    if (info.dtype != dt) {
        return tlb_refusef(x, TL_E_DTYPE, "the tensor is %s; reading it as %s would reinterpret its bits",
                           tl_dtype_name(info.dtype), tl_dtype_name(dt));
    }
    return tlb_leave(x, tl_tensor_read(x->ctx, t, data, nbytes));
}
int tlb_read_f32(uint64_t c, uint64_t bits, float *data, size_t count) { return tlb_read(c, bits, TL_F32, data, count * sizeof(float)); }
int tlb_read_f64(uint64_t c, uint64_t bits, double *data, size_t count) { return tlb_read(c, bits, TL_F64, data, count * sizeof(double)); }
int tlb_read_i32(uint64_t c, uint64_t bits, int32_t *data, size_t count) { return tlb_read(c, bits, TL_I32, data, count * sizeof(int32_t)); }

/* The whole tl_tensor_info as TL_TENSOR_INFO_FIELDS lays it out (dims past ndim are 0), then
 * the element count (TLB_INFO_SLOTS); the storage name travels on its own (tlb_storage). */
int tlb_info(uint64_t c, uint64_t bits, int64_t *info, size_t ninfo) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    if (ninfo < TLB_INFO_SLOTS) return tlb_refusef(x, TL_E_INVALID_ARGUMENT, "tensor info needs %d slots", TLB_INFO_SLOTS);
    tl_tensor t = {bits};
    tl_tensor_info in = TL_TENSOR_INFO_INIT;
    int rc = tl_tensor_info_get(x->ctx, t, &in);
    if (rc == TL_OK) {
        int64_t *at = info, count = 1;
#define TLB_PUT(field) *at++ = (int64_t)in.field;
#define TLB_PUT_ARRAY(field, n) for (int i = 0; i < (n); ++i) *at++ = (int64_t)in.field[i];
        TL_TENSOR_INFO_FIELDS(TLB_PUT, TLB_PUT_ARRAY)
#undef TLB_PUT
#undef TLB_PUT_ARRAY
        for (int i = 0; i < in.ndim; ++i) count *= in.shape[i];
        *at = count;
    }
    return tlb_leave(x, rc);
}
/* The tensor's storage name (a scope's or "ambient"), copied out; NULL on failure. */
const char *tlb_storage(uint64_t c, uint64_t bits) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return NULL;
    tl_tensor t = {bits};
    tl_tensor_info in = TL_TENSOR_INFO_INIT;
    if (tlb_leave(x, tl_tensor_info_get(x->ctx, t, &in)) != TL_OK) return NULL;
    snprintf(tlb_message_copy, sizeof tlb_message_copy, "%s", in.storage);
    return tlb_message_copy;
}
int tlb_free(uint64_t c, uint64_t bits) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    tl_tensor t = {bits};
    return tlb_leave(x, tl_tensor_free(x->ctx, t));
}
/* Copies into the scope of token, or into ambient for token 0. */
uint64_t tlb_retain(uint64_t c, uint64_t bits, uint64_t token) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_scope target = tlb_scope_at(token);
    tl_tensor t = {bits}, r = {0};
    return tlb_leave_bits(x, tl_tensor_retain(x->ctx, t, target, &r), r);
}

/* ---- ops: one call each, the result's bits or 0 -------------------------------------------- */
#define TLB_BINARY(name)                                                  \
    uint64_t tlb_##name(uint64_t c, uint64_t a, uint64_t b) {             \
        tlb_ctx *x = tlb_enter(c);                                        \
        if (!x) return 0;                                                 \
        tl_tensor ta = {a}, tb = {b}, r = {0};                            \
        return tlb_leave_bits(x, tl_##name(x->ctx, ta, tb, &r), r);       \
    }
TLB_BINARY(matmul)
TLB_BINARY(add)
TLB_BINARY(sub)
TLB_BINARY(mul)
TLB_BINARY(div)
TLB_BINARY(gather_rows)
#define TLB_UNARY(name)                                                   \
    uint64_t tlb_##name(uint64_t c, uint64_t a) {                         \
        tlb_ctx *x = tlb_enter(c);                                        \
        if (!x) return 0;                                                 \
        tl_tensor ta = {a}, r = {0};                                      \
        return tlb_leave_bits(x, tl_##name(x->ctx, ta, &r), r);           \
    }
TLB_UNARY(relu)
TLB_UNARY(gelu)
TLB_UNARY(silu)
TLB_UNARY(exp)
TLB_UNARY(tanh)
TLB_UNARY(contiguous)
/* Ops with more arguments: the call is the last macro argument, over x->ctx, ta and &r. */
#define TLB_OP(signature, call)                                           \
    uint64_t signature {                                                  \
        tlb_ctx *x = tlb_enter(c);                                        \
        if (!x) return 0;                                                 \
        tl_tensor ta = {a}, r = {0};                                      \
        return tlb_leave_bits(x, call, r);                                \
    }
/* w, b: 0 for none. */
TLB_OP(tlb_rmsnorm(uint64_t c, uint64_t a, uint64_t w, double eps),
       tl_rmsnorm(x->ctx, ta, (tl_tensor){w}, eps, &r))
TLB_OP(tlb_layernorm(uint64_t c, uint64_t a, uint64_t w, uint64_t b, double eps),
       tl_layernorm(x->ctx, ta, (tl_tensor){w}, (tl_tensor){b}, eps, &r))
TLB_OP(tlb_sum(uint64_t c, uint64_t a, int axis, int keepdim), tl_sum(x->ctx, ta, axis, keepdim != 0, &r))
TLB_OP(tlb_mean(uint64_t c, uint64_t a, int axis, int keepdim), tl_mean(x->ctx, ta, axis, keepdim != 0, &r))
TLB_OP(tlb_argmax(uint64_t c, uint64_t a, int axis), tl_argmax(x->ctx, ta, axis, &r))
TLB_OP(tlb_softmax(uint64_t c, uint64_t a, int axis), tl_softmax(x->ctx, ta, axis, &r))
TLB_OP(tlb_scale(uint64_t c, uint64_t a, double s), tl_scale(x->ctx, ta, s, &r))
TLB_OP(tlb_attention(uint64_t c, uint64_t a, uint64_t k, uint64_t v, int64_t valid_rows, double scale),
       tl_attention(x->ctx, ta, (tl_tensor){k}, (tl_tensor){v}, valid_rows, scale, &r))
TLB_OP(tlb_slice(uint64_t c, uint64_t a, int axis, int64_t start, int64_t length),
       tl_slice(x->ctx, ta, axis, start, length, &r))
TLB_OP(tlb_transpose(uint64_t c, uint64_t a, int d0, int d1), tl_transpose(x->ctx, ta, d0, d1, &r))
TLB_OP(tlb_reshape(uint64_t c, uint64_t a, int64_t *shape, size_t ndim),
       tl_reshape(x->ctx, ta, (int)ndim, shape, &r))

uint64_t tlb_concat(uint64_t c, uint64_t *handles, size_t nhandles, int axis) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    if (nhandles > 65536) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "concat takes at most 65536 tensors"), 0;
    /* tl_tensor is exactly its 64 bits, so the array passes as it is. */
    tl_tensor r = {0};
    return tlb_leave_bits(x, tl_concat(x->ctx, nhandles, (const tl_tensor *)handles, axis, &r), r);
}
int tlb_copy_into(uint64_t c, uint64_t src, uint64_t dst) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    tl_tensor s = {src}, d = {dst};
    return tlb_leave(x, tl_copy_into(x->ctx, s, d));
}

/* ---- safetensors: an open file as a uint64 (it keeps its own allocator copy) ---------------- */
uint64_t tlb_st_open(uint64_t c, const char *path) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_safetensors_file *f = NULL;
    return tlb_leave(x, tl_safetensors_open(x->ctx, path, &f)) == TL_OK ? (uint64_t)(uintptr_t)f : 0;
}
/* The file mapped read-only: its aligned F32/F64/I32 tensors come out over the mapping. */
uint64_t tlb_st_map(uint64_t c, const char *path) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_safetensors_file *f = NULL;
    return tlb_leave(x, tl_safetensors_map(x->ctx, path, &f)) == TL_OK ? (uint64_t)(uintptr_t)f : 0;
}
int tlb_st_maps(uint64_t f, const char *name) { return tl_safetensors_maps((const tl_safetensors_file *)(uintptr_t)f, name); }
int64_t tlb_st_count(uint64_t f) { return (int64_t)tl_safetensors_count((const tl_safetensors_file *)(uintptr_t)f); }
const char *tlb_st_name(uint64_t f, int64_t i) {
    return i < 0 ? NULL : tl_safetensors_name((const tl_safetensors_file *)(uintptr_t)f, (size_t)i);
}
uint64_t tlb_st_get(uint64_t c, uint64_t f, const char *name) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    if (!f) return tlb_refuse(x, TL_E_INVALID_HANDLE, "the safetensors file is closed"), 0;
    tl_tensor t = {0};
    return tlb_leave_bits(x, tl_safetensors_get(x->ctx, (tl_safetensors_file *)(uintptr_t)f, name, &t), t);
}
void tlb_st_close(uint64_t f) { tl_safetensors_close((tl_safetensors_file *)(uintptr_t)f); }
/* Saves nhandles tensors; names joined by '\n' (so no language passes an array of strings). */
int tlb_safetensors_save(uint64_t c, const char *path, const char *names_by_line, uint64_t *handles,
                         size_t nhandles) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    if (!names_by_line || nhandles == 0 || nhandles > 1u << 24)
        return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "save takes 1 to 16777216 tensors with their names");
    size_t lines = 1;
    for (const char *p = names_by_line; *p; ++p) lines += *p == '\n';
    if (lines != nhandles) {
        return tlb_refusef(x, TL_E_INVALID_ARGUMENT, "%zu names for %zu tensors (a name may not contain a newline)",
                           lines, nhandles);
    }
    char *copy = strdup(names_by_line);
    const char **names = (const char **)malloc(sizeof(char *) * nhandles);
    if (!copy || !names) {
        free(copy);
        free((void *)names);
        return tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for the names");
    }
    char *p = copy;
    for (size_t i = 0; i < nhandles; ++i) {
        names[i] = p;
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0, p = nl + 1;
    }
    int rc = tl_safetensors_save(x->ctx, path, nhandles, names, (const tl_tensor *)handles);
    free(copy);
    free((void *)names);
    return tlb_leave(x, rc);
}

/* ---- JSON: strings copied into the language, then freed here (NULL on failure) ------------- */
char *tlb_context_report_json(uint64_t c) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return NULL;
    char *s = NULL;
    return tlb_leave(x, tl_context_report_json(x->ctx, &s)) == TL_OK ? s : NULL;
}
char *tlb_tensor_to_json(uint64_t c, uint64_t bits) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return NULL;
    char *s = NULL;
    tl_tensor t = {bits};
    return tlb_leave(x, tl_tensor_to_json(x->ctx, t, &s)) == TL_OK ? s : NULL;
}
uint64_t tlb_tensor_from_json(uint64_t c, const char *json) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_tensor t = {0};
    return tlb_leave_bits(x, tl_tensor_from_json(x->ctx, json, &t), t);
}

/* The baseline for the bindings' benchmarks: `iters` tiny adds made as a C program makes them
 * (tl_add straight on the library, a reset every 256), in one call. */
int tlb_bench_add_loop(uint64_t c, uint64_t token, uint64_t a, uint64_t b, int64_t iters) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    tl_scope s = tlb_scope_at(token);
    tl_tensor ta = {a}, tb = {b}, r;
    int rc = TL_OK;
    for (int64_t i = 0; i < iters && rc == TL_OK; ++i) {
        rc = tl_add(x->ctx, ta, tb, &r);
        if (rc == TL_OK && (i & 255) == 255) rc = tl_scope_reset(x->ctx, s);
    }
    if (rc == TL_OK) rc = tl_scope_reset(x->ctx, s);
    return tlb_leave(x, rc);
}
%}
%{
/* SWIG parses the wrappers above without reading the header, so they name each op by hand; the
 * compiler checks here that every op of the header's lists has its wrapper. */
#define TLB_WRAPPED(name) (void)&tlb_##name;
static inline void tlb_every_listed_op_is_wrapped(void) { TL_PAIR_OPS(TLB_WRAPPED) TL_UNARY_OPS(TLB_WRAPPED) }
#undef TLB_WRAPPED
%}

#if defined(SWIGPYTHON)
%{
TL_PAIR_OPS(TLB_PY_BINARY)
%}
#endif

#if defined(SWIGCSHARP)
/* Mono's fast way into native code for small, quick calls: internal calls, which skip the
 * P/Invoke wrapper and its GC transition (about 50 of the 60 ns a call costs on Debian's
 * Mono).  The elementwise ops register themselves through Mono's embedding API, found at run
 * time, so the library links no libmono; under another runtime nothing is found and the C#
 * layer keeps calling through P/Invoke.  They are quick (no blocking beyond the context lock)
 * and allocate nothing the collector sees, as internal calls must be. */
%{
#include <dlfcn.h>
%}
%inline %{
int tlb_cs_register_internal_calls(void) {
    typedef void (*add_internal_call_fn)(const char *name, const void *method);
    /* "Raw": no GC transition around the call, which is what costs; fair for calls that never
     * block for long and never touch managed memory (a context's lock is held for one op). */
    add_internal_call_fn add_call = (add_internal_call_fn)dlsym(RTLD_DEFAULT, "mono_dangerous_add_raw_internal_call");
    if (!add_call) return 0;
    add_call("TensorLife.InternalCalls::Add", (const void *)tlb_add);
    add_call("TensorLife.InternalCalls::Sub", (const void *)tlb_sub);
    add_call("TensorLife.InternalCalls::Mul", (const void *)tlb_mul);
    add_call("TensorLife.InternalCalls::Div", (const void *)tlb_div);
    return 1;
}
%}
#endif
