/* tensorlife: status codes, versions and export macros.  Part of <tensorlife/tl.h>. */
#ifndef TENSORLIFE_TL_BASE_H
#define TENSORLIFE_TL_BASE_H

#include <stddef.h>
#include <stdint.h>

#define TL_VERSION_MAJOR 0
#define TL_VERSION_MINOR 1
#define TL_VERSION_PATCH 0
/* Bumped on every incompatible change of the ABI; tl_abi_version() returns the library's value. */
#define TL_ABI_VERSION 1
/* Largest tensor rank. */
#define TL_MAX_DIMS 8
/* Deepest scope nesting per context (open scopes at once). */
#define TL_MAX_SCOPE_DEPTH 31
/* Most tensors (including views) one scope generation, or the ambient store, holds at once. */
#define TL_MAX_TENSORS_PER_STORAGE 524287

/* Calls that are not yet stable (the executor, fused attention) are declared only where the
 * includer defines TL_EXPERIMENTAL_API before <tensorlife/tl.h> (zstd's ZSTD_STATIC_LINKING_ONLY
 * pattern): they may change in a minor version, and a caller opts in knowing it. */

/* Export decorations (libuv's pattern).  The shared library is built with TL_BUILDING; a
 * program linking the static library defines TL_STATIC (the CMake target tensorlife_static and
 * `pkg-config --static` users on Windows).  On ELF only visibility matters. */
#if defined(_WIN32)
#  if defined(TL_BUILDING)
#    define TL_API __declspec(dllexport)
#  elif defined(TL_STATIC)
#    define TL_API
#  else
#    define TL_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define TL_API __attribute__((visibility("default")))
#else
#  define TL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every status, once (libuv's UV_ERRNO_MAP): X(NAME, value, description).  The enum below,
 * tl_status_string, tl_status_description and every binding's error list (bindings/gen_lists.py)
 * come from here. */
#define TL_STATUS_MAP(X)                                                                                  \
  X(OK, 0, "success")                                                                                     \
  X(E_INVALID_ARGUMENT, -1, "NULL pointer, ndim outside 0..TL_MAX_DIMS, negative dim, bad axis or dtype") \
  X(E_INVALID_HANDLE, -2, "never issued, freed ambient tensor, another context's handle")                 \
  X(E_STORAGE_CLOSED, -3, "the tensor's scope was reset or closed after it was made")                     \
  X(E_SHAPE, -4, "shapes the op cannot combine, slice or index out of range")                             \
  X(E_DTYPE, -5, "a dtype the op does not take, or operands that differ")                                 \
  X(E_SCOPE_FULL, -6, "a TL_FIXED scope or max_bytes cannot fit the request")                             \
  X(E_OUT_OF_MEMORY, -7, "the allocator returned NULL, or a byte count overflows size_t")                 \
  X(E_SCOPE_ORDER, -8, "reset/close of a scope that is not innermost; nesting too deep")                  \
  X(E_IO, -9, "a file could not be opened, read or written")                                              \
  X(E_PARSE, -10, "malformed JSON or safetensors")                                                        \
  X(E_INTERNAL, -11, "a bug caught at the ABI boundary")                                                  \
  X(E_BUSY, -12, "the context is in a call on another thread; or its storage is lent out (exported)")    \
  X(E_NOT_FOUND, -13, "no tensor or key of that name in the file")

/* Every function that can fail returns a tl_status: TL_OK (0) or a negative code.
 * A failed call leaves every output untouched and every tensor and scope as it was. */
#define TL_STATUS_ENUM_ITEM_(name, value, description) TL_##name = value,
typedef enum tl_status {
    TL_STATUS_MAP(TL_STATUS_ENUM_ITEM_) TL_STATUS_FORCE_INT32_ =
        0x7fffffff /* no status: the enum spans int32 (see tl_dtype) */
} tl_status;
#undef TL_STATUS_ENUM_ITEM_

/* A static name such as "TL_E_STORAGE_CLOSED"; "TL_E_UNKNOWN" for a value that is no status. */
TL_API const char *tl_status_string(tl_status status);
/* The status's description from TL_STATUS_MAP ("the tensor's scope was reset or closed after it
 * was made"); "no tensorlife status" for a value that is none. */
TL_API const char *tl_status_description(tl_status status);
/* This thread's last failure message; never NULL; "" before any failure.  The text stays valid
 * until this thread's next failing call.  Successful calls do not clear it.  At most 511 bytes: a
 * longer message keeps its start and its end (the reason after a long path), "..." between. */
TL_API const char *tl_last_error(void);

TL_API const char *tl_version_string(void);
TL_API int tl_abi_version(void);

#ifdef __cplusplus
}
#endif
#endif
