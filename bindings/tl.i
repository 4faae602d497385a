/* One SWIG interface for every binding.  It does not wrap tl.h one to one: it exposes a small
 * flat layer (tlb_*) over it that every language can take the same way — contexts and scopes
 * as opaque pointers, tensors as their 64 handle bits, every call returning its tl_status with
 * outputs through the last arguments, arrays as (pointer, count) pairs that each language maps
 * to its own arrays.  The idiomatic layers (Go errors, Java/C# exceptions and disposables,
 * Python context managers) are written by hand on top, in each language's folder. */
%module tensorlife

%{
#include <tensorlife/tl.h>
#include <stdlib.h>
#include <string.h>
/* Calls that return a pointer leave their status here (thread-local, like tl_last_error). */
static _Thread_local int tlb_status_of_last;
%}

%include <stdint.i>
%include <typemaps.i>

/* Strings the library hands over are freed with tl_string_free once copied. */
%typemap(newfree) char * "tl_string_free($1);";

/* ---- arrays: (pointer, count) pairs --------------------------------------------------- */
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
%apply uint64_t *OUTPUT { uint64_t *out_bits };
%typemap(gotype) tl_context ** "*uintptr"
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
%typemap(jni) uint64_t *out_bits "jlongArray"
%typemap(jtype) uint64_t *out_bits "long[]"
%typemap(jstype) uint64_t *out_bits "long[]"
%typemap(javain) uint64_t *out_bits "$javainput"
%typemap(in) uint64_t *out_bits (uint64_t temp) %{ temp = 0; $1 = &temp; %}
%typemap(argout) uint64_t *out_bits %{
  { jlong v = (jlong)temp$argnum; (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &v); }
%}
/* uint64 handle bits travel as Java long (same 64 bits). */
%typemap(jni) uint64_t "jlong"
%typemap(jtype) uint64_t "long"
%typemap(jstype) uint64_t "long"
%typemap(javain) uint64_t "$javainput"
%typemap(in) uint64_t %{ $1 = (uint64_t)$input; %}
#endif

#if defined(SWIGCSHARP)
/* C# arrays marshalled [In, Out]; the count travels as its own argument (the hand layer
 * passes array.Length), since P/Invoke hands C a bare pointer. */
%include <arrays_csharp.i>
%apply float INOUT[] { float *data };
%apply double INOUT[] { double *data };
%apply int INOUT[] { int32_t *data };
%apply long long INOUT[] { int64_t *shape };
%apply unsigned long long INOUT[] { uint64_t *stats, uint64_t *out_bits, uint64_t *handles };
/* long long and int64_t are both 64 bits but distinct C types: cast. */
%typemap(in) int64_t *shape "$1 = (int64_t *)$input;"
%typemap(in) uint64_t *stats, uint64_t *out_bits, uint64_t *handles "$1 = (uint64_t *)$input;"
#endif

#if defined(SWIGPYTHON)
/* Any buffer (numpy array, array.array, bytearray, memoryview) of the right item size, in or
 * out; a wrong item size or a read-only buffer where one is written is a TypeError. */
%define TL_PY_BUFFER(CTYPE)
%typemap(in) (CTYPE *ARRAY, size_t COUNT) (Py_buffer view, int have_view = 0) {
  if (PyObject_GetBuffer($input, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) SWIG_fail;
  }
  have_view = 1;
  if (view.itemsize != (Py_ssize_t)sizeof(CTYPE)) {
    PyErr_Format(PyExc_TypeError, "expected a buffer of %d-byte items, got %d-byte items", (int)sizeof(CTYPE), (int)view.itemsize);
    SWIG_fail;
  }
  $1 = (CTYPE *)view.buf;
  $2 = (size_t)(view.len / view.itemsize);
}
%typemap(freearg) (CTYPE *ARRAY, size_t COUNT) { if (have_view$argnum) PyBuffer_Release(&view$argnum); }
%enddef
TL_PY_BUFFER(float)
TL_PY_BUFFER(double)
TL_PY_BUFFER(int32_t)
TL_PY_BUFFER(int64_t)
TL_PY_BUFFER(uint64_t)
%typemap(in, numinputs=0) uint64_t *out_bits (uint64_t temp = 0) "$1 = &temp;"
%typemap(argout) uint64_t *out_bits { $result = SWIG_Python_AppendOutput($result, PyLong_FromUnsignedLongLong(*$1)); }
#endif

%apply (float *ARRAY, size_t COUNT) { (float *data, size_t count) };
%apply (double *ARRAY, size_t COUNT) { (double *data, size_t count) };
%apply (int32_t *ARRAY, size_t COUNT) { (int32_t *data, size_t count) };
%apply (int64_t *ARRAY, size_t COUNT) { (int64_t *shape, size_t ndim) };
%apply (uint64_t *ARRAY, size_t COUNT) { (uint64_t *stats, size_t nstats), (uint64_t *handles, size_t nhandles) };

%newobject tlb_context_report_json;
%newobject tlb_tensor_to_json;

%inline %{
/* Status names and this thread's last message. */
const char *tlb_status_string(int status) { return tl_status_string((tl_status)status); }
const char *tlb_last_error(void) { return tl_last_error(); }
const char *tlb_version(void) { return tl_version_string(); }

int tlb_last_status(void) { return tlb_status_of_last; }

/* A context, or NULL (then tlb_last_status and tlb_last_error say why). */
tl_context *tlb_context_new(void) {
    tl_context *ctx = NULL;
    tlb_status_of_last = tl_context_create(NULL, &ctx);
    return tlb_status_of_last == TL_OK ? ctx : NULL;
}
void tlb_context_free(tl_context *ctx) { tl_context_destroy(ctx); }

tl_scope *tlb_scope_open(tl_context *ctx, const char *name, size_t slab_bytes) {
    tl_scope *s = NULL;
    tlb_status_of_last = tl_scope_open(ctx, name, slab_bytes, &s);
    return tlb_status_of_last == TL_OK ? s : NULL;
}
int tlb_scope_reset(tl_scope *s) { return tl_scope_reset(s); }
int tlb_scope_close(tl_scope *s) { return tl_scope_close(s); }
/* stats[0..6]: generation, slab, used, peak, overflow bytes, grow events, live tensors. */
int tlb_scope_stats(tl_scope *s, uint64_t *stats, size_t nstats) {
    tl_scope_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    if (nstats < 7) return TL_E_INVALID_ARGUMENT;
    int rc = tl_scope_stats_get(s, &st);
    if (rc != TL_OK) return rc;
    stats[0] = st.generation, stats[1] = st.slab_bytes, stats[2] = st.used_bytes, stats[3] = st.peak_bytes;
    stats[4] = st.overflow_bytes, stats[5] = st.grow_events, stats[6] = st.live_tensors;
    return TL_OK;
}

/* Tensors: (pointer, count) data with an int64 shape; read back into a caller array. */
int tlb_from_f32(tl_context *ctx, int64_t *shape, size_t ndim, float *data, size_t count, uint64_t *out_bits) {
    tl_tensor t = {0};
    int rc = tl_tensor_from_data(ctx, TL_F32, (int)ndim, shape, data, count * sizeof(float), &t);
    if (rc == TL_OK) *out_bits = t.bits;
    return rc;
}
int tlb_from_f64(tl_context *ctx, int64_t *shape, size_t ndim, double *data, size_t count, uint64_t *out_bits) {
    tl_tensor t = {0};
    int rc = tl_tensor_from_data(ctx, TL_F64, (int)ndim, shape, data, count * sizeof(double), &t);
    if (rc == TL_OK) *out_bits = t.bits;
    return rc;
}
int tlb_from_i32(tl_context *ctx, int64_t *shape, size_t ndim, int32_t *data, size_t count, uint64_t *out_bits) {
    tl_tensor t = {0};
    int rc = tl_tensor_from_data(ctx, TL_I32, (int)ndim, shape, data, count * sizeof(int32_t), &t);
    if (rc == TL_OK) *out_bits = t.bits;
    return rc;
}
int tlb_read_f32(tl_context *ctx, uint64_t bits, float *data, size_t count) {
    tl_tensor t = {bits};
    return tl_tensor_read(ctx, t, data, count * sizeof(float));
}
int tlb_read_f64(tl_context *ctx, uint64_t bits, double *data, size_t count) {
    tl_tensor t = {bits};
    return tl_tensor_read(ctx, t, data, count * sizeof(double));
}
int tlb_read_i32(tl_context *ctx, uint64_t bits, int32_t *data, size_t count) {
    tl_tensor t = {bits};
    return tl_tensor_read(ctx, t, data, count * sizeof(int32_t));
}
/* shape[0..8) and the element count; returns the status. */
int tlb_shape(tl_context *ctx, uint64_t bits, int64_t *shape, size_t ndim, uint64_t *out_bits) {
    tl_tensor t = {bits};
    tl_tensor_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    int rc = tl_tensor_info_get(ctx, t, &info);
    if (rc != TL_OK) return rc;
    if (ndim < 9) return TL_E_INVALID_ARGUMENT;
    shape[0] = info.ndim;
    for (int i = 0; i < info.ndim; ++i) shape[1 + i] = info.shape[i];
    *out_bits = (uint64_t)info.dtype;
    return TL_OK;
}
int tlb_free(tl_context *ctx, uint64_t bits) { tl_tensor t = {bits}; return tl_tensor_free(ctx, t); }

/* Ops on handle bits. */
#define TLB_BINARY(name) \
    int tlb_##name(tl_context *ctx, uint64_t a, uint64_t b, uint64_t *out_bits) { \
        tl_tensor x = {a}, y = {b}, r = {0}; int rc = tl_##name(ctx, x, y, &r); \
        if (rc == TL_OK) *out_bits = r.bits; return rc; }
TLB_BINARY(matmul)
TLB_BINARY(add)
TLB_BINARY(sub)
TLB_BINARY(mul)
TLB_BINARY(div)
#define TLB_UNARY(name) \
    int tlb_##name(tl_context *ctx, uint64_t a, uint64_t *out_bits) { \
        tl_tensor x = {a}, r = {0}; int rc = tl_##name(ctx, x, &r); \
        if (rc == TL_OK) *out_bits = r.bits; return rc; }
TLB_UNARY(relu)
TLB_UNARY(gelu)
TLB_UNARY(silu)
TLB_UNARY(exp)
TLB_UNARY(tanh)
TLB_UNARY(contiguous)
/* w, b: 0 for none. */
int tlb_rmsnorm(tl_context *ctx, uint64_t x, uint64_t w, double eps, uint64_t *out_bits) {
    tl_tensor tx = {x}, tw = {w}, r = {0};
    int rc = tl_rmsnorm(ctx, tx, tw, eps, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_layernorm(tl_context *ctx, uint64_t x, uint64_t w, uint64_t b, double eps, uint64_t *out_bits) {
    tl_tensor tx = {x}, tw = {w}, tb = {b}, r = {0};
    int rc = tl_layernorm(ctx, tx, tw, tb, eps, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
/* kind: 0 sum, 1 mean, 2 argmax (keepdim ignored). */
int tlb_reduce(tl_context *ctx, uint64_t a, int kind, int axis, int keepdim, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = kind == 0 ? tl_sum(ctx, x, axis, keepdim, &r) : kind == 1 ? tl_mean(ctx, x, axis, keepdim, &r)
                                                                      : tl_argmax(ctx, x, axis, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_slice(tl_context *ctx, uint64_t a, int axis, int64_t start, int64_t length, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = tl_slice(ctx, x, axis, start, length, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_transpose(tl_context *ctx, uint64_t a, int d0, int d1, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = tl_transpose(ctx, x, d0, d1, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_reshape(tl_context *ctx, uint64_t a, int64_t *shape, size_t ndim, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = tl_reshape(ctx, x, (int)ndim, shape, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_concat(tl_context *ctx, uint64_t *handles, size_t nhandles, int axis, uint64_t *out_bits) {
    if (nhandles > 4096) return TL_E_INVALID_ARGUMENT;
    tl_tensor ts[4096], r = {0};
    for (size_t i = 0; i < nhandles; ++i) ts[i].bits = handles[i];
    int rc = tl_concat(ctx, (int)nhandles, ts, axis, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
TLB_BINARY(gather_rows)
int tlb_copy_into(tl_context *ctx, uint64_t src, uint64_t dst) {
    tl_tensor s = {src}, d = {dst};
    return tl_copy_into(ctx, s, d);
}
int tlb_softmax(tl_context *ctx, uint64_t a, int axis, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = tl_softmax(ctx, x, axis, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_scale(tl_context *ctx, uint64_t a, double s, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = tl_scale(ctx, x, s, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}
int tlb_retain(tl_context *ctx, uint64_t a, tl_scope *target, uint64_t *out_bits) {
    tl_tensor x = {a}, r = {0};
    int rc = tl_tensor_retain(ctx, x, target, &r);
    if (rc == TL_OK) *out_bits = r.bits;
    return rc;
}

/* safetensors: an open file as a pointer (NULL: see tlb_last_status); names by index. */
tl_st_file *tlb_st_open(tl_context *ctx, const char *path) {
    tl_st_file *f = NULL;
    tlb_status_of_last = tl_safetensors_open(ctx, path, &f);
    return tlb_status_of_last == TL_OK ? f : NULL;
}
size_t tlb_st_count(tl_st_file *f) { return tl_st_count(f); }
const char *tlb_st_name(tl_st_file *f, size_t i) { return tl_st_name(f, i); }
int tlb_st_get(tl_context *ctx, tl_st_file *f, const char *name, uint64_t *out_bits) {
    tl_tensor t = {0};
    int rc = tl_st_get(ctx, f, name, &t);
    if (rc == TL_OK) *out_bits = t.bits;
    return rc;
}
void tlb_st_close(tl_st_file *f) { tl_st_close(f); }
/* Saves count tensors; names joined by '\n' (so no language passes an array of strings). */
int tlb_safetensors_save(tl_context *ctx, const char *path, const char *names_by_line, uint64_t *handles,
                         size_t nhandles) {
    if (!names_by_line || nhandles == 0 || nhandles > 65536) return TL_E_INVALID_ARGUMENT;
    size_t lines = 1;
    for (const char *p = names_by_line; *p; ++p) lines += *p == '\n';
    if (lines != nhandles) return TL_E_INVALID_ARGUMENT;
    char *copy = strdup(names_by_line);
    const char **names = (const char **)malloc(sizeof(char *) * nhandles);
    tl_tensor *ts = (tl_tensor *)malloc(sizeof(tl_tensor) * nhandles);
    int rc = TL_E_OUT_OF_MEMORY;
    if (copy && names && ts) {
        char *p = copy;
        for (size_t i = 0; i < nhandles; ++i) {
            names[i] = p;
            char *nl = strchr(p, '\n');
            if (nl) *nl = 0, p = nl + 1;
            ts[i].bits = handles[i];
        }
        rc = tl_safetensors_save(ctx, path, (int)nhandles, names, ts);
    }
    free(copy);
    free((void *)names);
    free(ts);
    return rc;
}

/* JSON: strings copied into the language, then freed here (NULL: see tlb_last_status). */
char *tlb_context_report_json(tl_context *ctx) {
    char *s = NULL;
    tlb_status_of_last = tl_context_report_json(ctx, &s);
    return s;
}
char *tlb_tensor_to_json(tl_context *ctx, uint64_t bits) {
    char *s = NULL;
    tl_tensor t = {bits};
    tlb_status_of_last = tl_tensor_to_json(ctx, t, &s);
    return s;
}
int tlb_tensor_from_json(tl_context *ctx, const char *json, uint64_t *out_bits) {
    tl_tensor t = {0};
    int rc = tl_tensor_from_json(ctx, json, &t);
    if (rc == TL_OK) *out_bits = t.bits;
    return rc;
}

/* The baseline for the bindings' benchmarks: `iters` tiny adds made from C, a reset every 256,
 * in one call.  Returns the status of the first failure, or TL_OK. */
int tlb_bench_add_loop(tl_context *ctx, tl_scope *scope, uint64_t a, uint64_t b, int64_t iters) {
    tl_tensor x = {a}, y = {b}, r;
    for (int64_t i = 0; i < iters; ++i) {
        int rc = tl_add(ctx, x, y, &r);
        if (rc == TL_OK && (i & 255) == 255) rc = tl_scope_reset(scope);
        if (rc != TL_OK) return rc;
    }
    return tl_scope_reset(scope);
}
%}

%constant int OK = TL_OK;
%constant int E_INVALID_ARGUMENT = TL_E_INVALID_ARGUMENT;
%constant int E_INVALID_HANDLE = TL_E_INVALID_HANDLE;
%constant int E_STORAGE_CLOSED = TL_E_STORAGE_CLOSED;
%constant int E_SHAPE = TL_E_SHAPE;
%constant int E_DTYPE = TL_E_DTYPE;
%constant int E_SCOPE_FULL = TL_E_SCOPE_FULL;
%constant int E_OUT_OF_MEMORY = TL_E_OUT_OF_MEMORY;
%constant int E_SCOPE_ORDER = TL_E_SCOPE_ORDER;
%constant int E_IO = TL_E_IO;
%constant int E_PARSE = TL_E_PARSE;
%constant int E_INTERNAL = TL_E_INTERNAL;
