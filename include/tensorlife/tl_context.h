/* tensorlife: contexts, allocators and scopes.  Part of <tensorlife/tl.h>.
 * Why they work this way: docs/memory-and-scopes.md, docs/threads-and-executors.md. */
#ifndef TENSORLIFE_TL_CONTEXT_H
#define TENSORLIFE_TL_CONTEXT_H

#include "tl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A context owns every scope and tensor made through it.  One thread at a time: a call made
 * while another thread's call on it runs is refused with TL_E_BUSY and changes nothing.  Two
 * contexts share no mutable state. */
typedef struct tl_context tl_context;

/* An embedder's memory: every byte the library owns comes from here.  alloc returns memory
 * aligned to `alignment` (a power of two, at most 4096) or NULL; free receives the size asked. */
typedef struct tl_allocator {
    void *user;
    void *(*alloc)(void *user, size_t size, size_t alignment);
    void (*free)(void *user, void *ptr, size_t size);
} tl_allocator;

#if defined(TL_EXPERIMENTAL_API) /* not yet stable: see tl_base.h */
/* An engine's job system, for work big enough to split (docs/threads-and-executors.md says
 * which).  parallel_for calls task(task_user, begin, end) over ranges covering [0, count)
 * exactly once, each at least grain long (but the last), on any threads, in any order, and
 * returns when all have returned.  Tasks never call back into the library.  Results are bitwise
 * those of the inline run.  No executor (the default): everything runs on the calling thread. */
typedef void (*tl_task_fn)(void *task_user, int64_t begin, int64_t end);
typedef struct tl_executor {
    void *user;
    void (*parallel_for)(void *user, int64_t count, int64_t grain, tl_task_fn task, void *task_user);
} tl_executor;

/* Sets (copies) or, with NULL or a NULL parallel_for, clears the context's executor. */
TL_API tl_status tl_context_set_executor(tl_context *ctx, const tl_executor *executor);

/* check 1 (the default): a call that finds another thread's call running is refused with
 * TL_E_BUSY.  check 0, for a caller that already lets one thread at a time onto the context:
 * no check, and two threads' calls at once are the caller's bug.  Set it while no other thread
 * uses the context. */
TL_API tl_status tl_context_set_thread_check(tl_context *ctx, int check);
#endif /* TL_EXPERIMENTAL_API */

/* allocator NULL: aligned malloc/free.  The allocator struct is copied. */
TL_API tl_status tl_context_create(const tl_allocator *allocator, tl_context **out);
/* OpenBLAS's thread count, which matmul uses; process-wide.  With an executor keep it at 1:
 * matrix-vector and prompt products then run on the executor's threads.  (OpenBLAS starts its
 * own threads when it loads, and they spin for about 0.1 s before they sleep, taking cores from
 * the executor's first steps: OPENBLAS_NUM_THREADS=1 in the environment keeps them from starting.) */
TL_API tl_status tl_set_blas_threads(int threads);
TL_API int tl_blas_threads(void);
/* What the machine runs, as static strings: OpenBLAS's kernel family for this CPU ("Haswell",
 * ...) and the instruction set of the library's own SIMD kernels ("AVX3", "NEON", ...). */
TL_API const char *tl_blas_core(void);
TL_API const char *tl_simd_target(void);

/* NULL is a no-op.  Frees every open scope and every ambient tensor of the context. */
TL_API void tl_context_destroy(tl_context *ctx);

/* Scopes nest as a stack per context; the innermost open one receives every factory and op
 * output (with none open, outputs are ambient tensors, individually freed).  A value handle: a
 * closed scope's, or another context's, is TL_E_INVALID_HANDLE in every call, naming the scope.
 * bits == 0 is "no scope": the ambient target where a call takes one. */
typedef struct tl_scope {
    uint64_t bits;
} tl_scope;
/* The handle that names no scope (the ambient target). */
#ifdef __cplusplus
#  define TL_NO_SCOPE (tl_scope{0})
#else
#  define TL_NO_SCOPE ((tl_scope){0})
#endif

/* The sentinels are no growth modes: they make the enum span int32 (see tl_dtype). */
typedef enum tl_growth {
    TL_GROW = 0,
    TL_FIXED = 1,
    TL_GROWTH_FORCE_SIGNED_ = -1,
    TL_GROWTH_FORCE_INT32_ = 0x7fffffff
} tl_growth;

typedef struct tl_scope_options {
    uint32_t struct_size; /* sizeof(tl_scope_options); fields past it take their defaults */
    tl_growth growth;     /* TL_GROW (default): extra chunks, merged at the next reset */
    size_t slab_bytes;    /* initial slab, allocated at open; 0: on first use */
    size_t max_bytes;     /* 0: no limit; else a cap on the bytes one generation's tensors use
                           * (each rounded up to 64): past it, TL_E_SCOPE_FULL */
} tl_scope_options;
/* tl_scope_options o = TL_SCOPE_OPTIONS_INIT; then set what differs from the defaults. */
#define TL_SCOPE_OPTIONS_INIT \
  { sizeof(tl_scope_options), TL_GROW, 0, 0 }

/* name is copied; NULL is TL_E_INVALID_ARGUMENT.  tl_scope_open is open_ex with TL_GROW. */
TL_API tl_status tl_scope_open(tl_context *ctx, const char *name, size_t slab_bytes, tl_scope *out);
TL_API tl_status tl_scope_open_ex(tl_context *ctx, const char *name, const tl_scope_options *opts, tl_scope *out);
/* Every tensor placed in the scope dies; the generation goes up by one; the slab is kept (and
 * TL_GROW chunks are merged into one slab of the high-water size).  Innermost scope only. */
TL_API tl_status tl_scope_reset(tl_context *ctx, tl_scope scope);
/* Reset, free the slab and tables, pop the scope.  Innermost scope only. */
TL_API tl_status tl_scope_close(tl_context *ctx, tl_scope scope);

typedef struct tl_scope_stats {
    uint32_t struct_size;  /* set by the caller to sizeof(tl_scope_stats): TL_SCOPE_STATS_INIT */
    uint64_t generation;   /* resets so far */
    size_t slab_bytes;     /* bytes of the slab and chunks held now */
    size_t used_bytes;     /* in use this generation (64-byte rounded) */
    size_t peak_bytes;     /* high-water of used_bytes over all generations */
    size_t overflow_bytes; /* bytes that went to extra chunks this generation */
    uint64_t grow_events;  /* chunks added or slab enlargements, ever */
    uint64_t live_tensors; /* tensors (and views) of this generation */
} tl_scope_stats;
#define TL_SCOPE_STATS_INIT \
  { sizeof(tl_scope_stats), 0, 0, 0, 0, 0, 0, 0 }
/* The fields past struct_size, in order, once: X(field) each (the JSON report and the
 * bindings list them from here). */
#define TL_SCOPE_STATS_FIELDS(X) \
  X(generation) X(slab_bytes) X(used_bytes) X(peak_bytes) X(overflow_bytes) X(grow_events) X(live_tensors)
TL_API tl_status tl_scope_stats_get(tl_context *ctx, tl_scope scope, tl_scope_stats *out);

/* The scope's name (valid while it is open), or NULL for a handle that names no open scope of
 * ctx (closed, another context's, never issued): asking never fails and sets no error. */
TL_API const char *tl_scope_name(tl_context *ctx, tl_scope scope);
/* The current (innermost open) scope, or {0} when the current target is ambient. */
TL_API tl_status tl_scope_current(tl_context *ctx, tl_scope *out);

#ifdef __cplusplus
}
#endif
#endif
