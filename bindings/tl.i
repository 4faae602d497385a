/* One SWIG interface for every binding: the binding runtime (bindings/runtime/tlb.h, plain C with
 * its own tests) made into each language's native module, with the typemaps each language needs
 * and the two hot paths written against a runtime's own API (CPython's types, Mono's internal
 * calls).  The idiomatic layers are written by hand on top, in each language's folder. */
%module tensorlife

%{
#ifndef TL_EXPERIMENTAL_API
#  define TL_EXPERIMENTAL_API /* the runtime reaches the executor and attention too */
#endif
#include "tlb.h"

#include <tensorlife/tl.h>
#include <limits.h>
#include <string.h>
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

#if defined(SWIGJAVA)
/* Strings as real UTF-8 both ways (String.getBytes and new String(bytes, UTF-8)): JNI's own
 * string calls speak "modified UTF-8", which writes a character past U+FFFF as two 3-byte
 * surrogates, bytes no tokenizer (nor file system) reads as the character. */
%{
#include <stdlib.h>
static char *tlb_java_utf8(JNIEnv *jenv, jstring s) {
    jclass string_class = (*jenv)->FindClass(jenv, "java/lang/String");
    jmethodID get_bytes = (*jenv)->GetMethodID(jenv, string_class, "getBytes", "(Ljava/lang/String;)[B");
    jstring charset = (*jenv)->NewStringUTF(jenv, "UTF-8");
    jbyteArray bytes = (jbyteArray)(*jenv)->CallObjectMethod(jenv, s, get_bytes, charset);
    char *out = NULL;
    if (!(*jenv)->ExceptionCheck(jenv)) {
        const jsize n = (*jenv)->GetArrayLength(jenv, bytes);
        out = (char *)malloc((size_t)n + 1);
        if (out) {
            (*jenv)->GetByteArrayRegion(jenv, bytes, 0, n, (jbyte *)out);
            out[n] = 0;
        } else {
            (*jenv)->ThrowNew(jenv, (*jenv)->FindClass(jenv, "java/lang/OutOfMemoryError"), "a string's bytes");
        }
    }
    (*jenv)->DeleteLocalRef(jenv, bytes);
    (*jenv)->DeleteLocalRef(jenv, charset);
    (*jenv)->DeleteLocalRef(jenv, string_class);
    return out;
}
static jstring tlb_java_string(JNIEnv *jenv, const char *s) {
    if (!s) return NULL;
    const jsize n = (jsize)strlen(s);
    jbyteArray bytes = (*jenv)->NewByteArray(jenv, n);
    if (!bytes) return NULL;
    (*jenv)->SetByteArrayRegion(jenv, bytes, 0, n, (const jbyte *)s);
    jclass string_class = (*jenv)->FindClass(jenv, "java/lang/String");
    jmethodID make = (*jenv)->GetMethodID(jenv, string_class, "<init>", "([BLjava/lang/String;)V");
    jstring charset = (*jenv)->NewStringUTF(jenv, "UTF-8");
    jstring out = (jstring)(*jenv)->NewObject(jenv, string_class, make, bytes, charset);
    (*jenv)->DeleteLocalRef(jenv, bytes);
    (*jenv)->DeleteLocalRef(jenv, charset);
    (*jenv)->DeleteLocalRef(jenv, string_class);
    return out;
}
%}
%typemap(in, noblock=1) const char *, char * {
  $1 = NULL;
  if ($input) {
    $1 = tlb_java_utf8(jenv, $input);
    if (!$1) return $null;
  }
}
%typemap(freearg, noblock=1) const char *, char * { free($1); }
%typemap(out, noblock=1) const char *, char * { $result = tlb_java_string(jenv, $1); }
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
/* The hot path for Python in C: bindings/runtime/tlb_python.c (base types for Context and
 * Tensor, the pair ops as C methods, the buffer protocol and DLPack).  Every call holds the GIL,
 * which serialises the calls on a Context's record (made by tlb_context_new_serialised, with no
 * lock of its own): a wrapper that released it would race. */
%{
#ifdef SWIG_PYTHON_THREADS
#error "the Python binding's records rely on the GIL: with swig -threads, make them with tlb_context_new"
#endif
#include "tlb_python.h"
%}
%include "tlb_python.h"
%init %{
    if (tlb_py_init_types(d) < 0) return NULL;
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
%ignore tlb_export;   /* Python's buffer protocol and DLPack (tlb_python.c) */
%ignore tlb_unexport;

%newobject tlb_context_report_json;
%newobject tlb_tensor_to_json;
%newobject tlb_scope_stats_json;
%newobject tlb_gguf_string;
%typemap(newfree) char *tlb_gguf_string "free($1);"; /* the runtime's own copy (malloc) */
%newobject tlb_detokenize;
%typemap(newfree) char *tlb_detokenize "free($1);";
%newobject tlb_session_generate;
%typemap(newfree) char *tlb_session_generate "free($1);";

%include "tlb.h"

#if defined(SWIGCSHARP)
/* Mono's internal calls: bindings/runtime/tlb_mono.c. */
%{
#include "tlb_mono.h"
%}
%include "tlb_mono.h"
#endif
