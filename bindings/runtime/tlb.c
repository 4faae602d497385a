/* The binding runtime: the flat layer (tlb_*) every language binding calls, in plain C (tlb.h
 * says what it is).  Compiled into each language's native module beside SWIG's wrapper. */
#ifndef TL_EXPERIMENTAL_API
#  define TL_EXPERIMENTAL_API /* the bindings reach the executor and attention too */
#endif
#include "tlb.h"

#include <tensorlife/tl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#  include <linux/membarrier.h>
#  include <sched.h>
#  include <sys/syscall.h>
#  include <unistd.h>
#endif

enum { TLB_MESSAGE_BYTES = 1024 };

/* A tensor whose memory the language holds with no copy (tlb_export), and how many times. */
typedef struct tlb_pin {
    const char *storage;       /* its scope's name pointer (tl_tensor_info): the scope, while open */
    uint64_t bits, generation; /* generation: its scope's resets when it was made */
    uintptr_t lo, hi;          /* the bytes its elements span */
    long count;
} tlb_pin;

typedef struct tlb_ctx {
    int serialised;        /* set at birth: the language serialises every call, `held` is unused */
    atomic_int held;       /* the record's lock (tlb_lock): 0 free, 1 held */
    atomic_int bias;       /* tlb_bias_state: whether `owner` takes the record without `held` */
    atomic_uintptr_t owner;    /* the thread the record is biased to, set once under `held` */
    atomic_int owner_inside;   /* set by the owner while in a call it entered biased */
    atomic_int sleepers;   /* threads waiting on `wake` for it */
    pthread_mutex_t sleep; /* with `wake`: where a thread waits for `held` */
    pthread_cond_t wake;
    long refs;       /* under refs_lock: the language's Context, each live Scope object, each export */
    tl_context *ctx; /* NULL once closed */
    int status;      /* of the last failure; changed only by failures */
    char message[TLB_MESSAGE_BYTES];
    tlb_pin *pins; /* under lock: the exported tensors, found by bits through `slots` */
    size_t npins, pin_capacity;
    size_t *slots, nslots; /* open addressing: a pin's index + 1, 0 empty; nslots a power of 2 */
    int closing; /* closed or released while exports lived: calls refused, destroyed at the last */
} tlb_ctx;

static pthread_mutex_t tlb_refs_lock = PTHREAD_MUTEX_INITIALIZER;
/* Failures with no context to hold them (tlb_context_new itself, a 0 context). */
static tlb_ctx tlb_no_context = {0, 0, 0, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, NULL, 0, "", NULL, 0, 0, NULL, 0, 0};
/* tlb_message copies into this thread's buffer under the lock, for the language to copy out. */
static _Thread_local char tlb_message_copy[TLB_MESSAGE_BYTES];

static tlb_ctx *tlb_of(uint64_t c) { return c ? (tlb_ctx *)(uintptr_t)c : &tlb_no_context; }
/* Every call goes through tlb_enter and tlb_leave: their fast paths are inlined into each entry
 * point (a call to them was 1.5-2 ns of a 16-float add through Mono and Java: bench/README.md),
 * their failure and waiting paths stay out of line and cold. */
#if defined(__GNUC__)
#  define TLB_INLINE inline __attribute__((always_inline))
#  define TLB_COLD __attribute__((noinline, cold))
#else
#  define TLB_INLINE inline
#  define TLB_COLD
#endif

/* The record's lock: one compare-exchange to take it and a plain release store to give it back,
 * as each locked instruction costs 6 ns on a Zen 5 (an exchange to give it back was 11-14 ns of
 * a 16-float add's crossing there: bench/README.md).  A thread that finds it held sleeps on the
 * condition variable.  The giver's store and its look at `sleepers` are not ordered (that would
 * take a fence), so it can miss a thread about to sleep: sleepers look again every millisecond,
 * the most a contended handover can lose; an uncontended call pays nothing for it. */
static int tlb_try_lock(tlb_ctx *x) {
    int free_ = 0;
    return atomic_compare_exchange_strong_explicit(&x->held, &free_, 1, memory_order_acquire, memory_order_relaxed);
}
static void tlb_take(tlb_ctx *x) {
    if (tlb_try_lock(x)) return;
    pthread_mutex_lock(&x->sleep);
    atomic_fetch_add_explicit(&x->sleepers, 1, memory_order_seq_cst);
    while (!tlb_try_lock(x)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000) until.tv_sec += 1, until.tv_nsec -= 1000 * 1000 * 1000;
        pthread_cond_timedwait(&x->wake, &x->sleep, &until);
    }
    atomic_fetch_sub_explicit(&x->sleepers, 1, memory_order_relaxed);
    pthread_mutex_unlock(&x->sleep);
}
static TLB_COLD void tlb_wake(tlb_ctx *x) {
    pthread_mutex_lock(&x->sleep); /* a sleeper holds `sleep` until it waits: this wake reaches it */
    pthread_cond_broadcast(&x->wake);
    pthread_mutex_unlock(&x->sleep);
}
static void tlb_give(tlb_ctx *x) {
    atomic_store_explicit(&x->held, 0, memory_order_release);
    if (atomic_load_explicit(&x->sleepers, memory_order_relaxed) != 0) tlb_wake(x);
}

/* The bias: the first thread to take a record takes it afterwards with plain stores and loads,
 * no locked instruction (the compare-exchange cost 7-8 ns of a 16-float add through .NET, where
 * the stores before it must drain first: bench/README.md).  The first call from any other thread
 * revokes the bias for good, under `held`: it sets TLB_REVOKED, then Linux's membarrier makes
 * every thread of the process pass a full fence, so either the owner sees the revocation or the
 * revoker sees the owner's `owner_inside` and waits for that call to end (the owner's fence
 * is the revoker's system call: an asymmetric Dekker, as in folly's asymmetric barriers).  Where
 * membarrier is missing (other systems, old kernels, emulators) records are never biased. */
enum tlb_bias_state { TLB_UNCLAIMED, TLB_BIASED, TLB_REVOKED };

#if defined(__linux__) && defined(SYS_membarrier)
static int tlb_bias_works; /* membarrier registered for this process (pthread_once) */
static pthread_once_t tlb_bias_once = PTHREAD_ONCE_INIT;
static void tlb_bias_register(void) {
    tlb_bias_works = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
                     syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}
/* The calling thread: its thread pointer (one register read), unique among live threads (a later
 * thread given a dead owner's inherits the bias: still one thread at a time on it). */
static TLB_INLINE uintptr_t tlb_self(void) {
#  if defined(__has_builtin)
#    if __has_builtin(__builtin_thread_pointer)
    return (uintptr_t)__builtin_thread_pointer();
#    endif
#  endif
    return (uintptr_t)pthread_self();
}

/* Every thread of the process passes a full fence before this returns.  The registration is
 * redone if it was lost (a forked child); the global command, slower, needs none. */
static void tlb_fence_every_thread(void) {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
        return;
    (void)syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

/* The owner's way in: 1 when it holds the record by the bias (tlb_unlock then clears the flag). */
static TLB_INLINE int tlb_enter_biased(tlb_ctx *x) {
    if (atomic_load_explicit(&x->bias, memory_order_acquire) != TLB_BIASED ||
        atomic_load_explicit(&x->owner, memory_order_relaxed) != tlb_self())
        return 0;
    atomic_store_explicit(&x->owner_inside, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the revoker's membarrier is the fence */
    if (atomic_load_explicit(&x->bias, memory_order_relaxed) == TLB_BIASED) return 1;
    atomic_store_explicit(&x->owner_inside, 0, memory_order_release);
    return 0;
}

/* x held: the first taker claims the bias; any other thread revokes it and waits for the owner. */
static void tlb_bias_after_take(tlb_ctx *x) {
    const int state = atomic_load_explicit(&x->bias, memory_order_relaxed);
    if (state == TLB_UNCLAIMED) {
        pthread_once(&tlb_bias_once, tlb_bias_register);
        if (!tlb_bias_works) {
            atomic_store_explicit(&x->bias, TLB_REVOKED, memory_order_relaxed);
            return;
        }
        atomic_store_explicit(&x->owner, tlb_self(), memory_order_relaxed);
        atomic_store_explicit(&x->bias, TLB_BIASED, memory_order_release);
        return;
    }
    if (state != TLB_BIASED || atomic_load_explicit(&x->owner, memory_order_relaxed) == tlb_self()) return;
    atomic_store_explicit(&x->bias, TLB_REVOKED, memory_order_relaxed);
    tlb_fence_every_thread();
    for (int spins = 0; atomic_load_explicit(&x->owner_inside, memory_order_acquire); ++spins) {
        if (spins < 100) sched_yield();
        else nanosleep(&(struct timespec){0, 100 * 1000}, NULL); /* the owner's call may be a long product */
    }
}
static int tlb_biased_elsewhere(tlb_ctx *x) {
    return atomic_load_explicit(&x->bias, memory_order_relaxed) == TLB_BIASED &&
           atomic_load_explicit(&x->owner, memory_order_relaxed) != tlb_self();
}
static TLB_INLINE int tlb_leave_biased(tlb_ctx *x) {
    if (!atomic_load_explicit(&x->owner_inside, memory_order_relaxed) ||
        atomic_load_explicit(&x->owner, memory_order_relaxed) != tlb_self())
        return 0; /* only the owner reads its own 1 here */
    atomic_store_explicit(&x->owner_inside, 0, memory_order_release);
    return 1;
}
#else
static TLB_INLINE int tlb_enter_biased(tlb_ctx *x) { (void)x; return 0; }
static void tlb_bias_after_take(tlb_ctx *x) { (void)x; }
static int tlb_biased_elsewhere(tlb_ctx *x) { (void)x; return 0; }
static TLB_INLINE int tlb_leave_biased(tlb_ctx *x) { (void)x; return 0; }
#endif

/* Out of line, so that the biased call's way in saves no registers for it. */
static TLB_COLD void tlb_lock_taking(tlb_ctx *x) {
    tlb_take(x);
    tlb_bias_after_take(x);
}
static TLB_INLINE void tlb_lock(tlb_ctx *x) {
    if (x->serialised || tlb_enter_biased(x)) return;
    tlb_lock_taking(x);
}
static TLB_INLINE void tlb_unlock(tlb_ctx *x) {
    if (x->serialised || tlb_leave_biased(x)) return;
    tlb_give(x);
}

static TLB_COLD int tlb_lock_nowait_taking(tlb_ctx *x) {
    if (!tlb_try_lock(x)) return 0;
    if (tlb_biased_elsewhere(x)) {
        tlb_give(x);
        return 0;
    }
    tlb_bias_after_take(x); /* claims an unclaimed record: one system call, once a process */
    return 1;
}
/* Takes the record without waiting, or returns 0: held by another thread, or biased to one
 * (revoking the bias waits for that thread's call to end). */
static TLB_INLINE int tlb_lock_nowait(tlb_ctx *x) {
    return x->serialised || tlb_enter_biased(x) || tlb_lock_nowait_taking(x);
}

static void tlb_set(tlb_ctx *x, int status, const char *message) {
    x->status = status;
    snprintf(x->message, sizeof x->message, "%s", message ? message : "");
}

/* Locks the record; NULL (the failure recorded, nothing locked) when there is no open context. */
static TLB_COLD tlb_ctx *tlb_enter_refused(tlb_ctx *x, uint64_t c) {
    tlb_set(x, TL_E_INVALID_HANDLE, c ? "the context is closed" : "no context (0)");
    tlb_unlock(x);
    return NULL;
}
static TLB_INLINE tlb_ctx *tlb_enter(uint64_t c) {
    tlb_ctx *x = tlb_of(c);
    tlb_lock(x);
    if (x->ctx && !x->closing) return x;
    return tlb_enter_refused(x, c);
}

/* Leaves a call: a failure's status and message are copied into the record first. */
static TLB_COLD int tlb_leave_failed(tlb_ctx *x, int rc) {
    tlb_set(x, rc, tl_last_error());
    tlb_unlock(x);
    return rc;
}
static TLB_INLINE int tlb_leave(tlb_ctx *x, int rc) {
    if (rc != TL_OK) return tlb_leave_failed(x, rc);
    tlb_unlock(x);
    return rc;
}
static TLB_INLINE uint64_t tlb_leave_bits(tlb_ctx *x, int rc, tl_tensor t) { return tlb_leave(x, rc) == TL_OK ? t.bits : 0; }
/* A failure the binding layer finds itself (the message is its own): recorded, unlocked. */
static int tlb_refusef(tlb_ctx *x, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    x->status = status;
    vsnprintf(x->message, sizeof x->message, fmt, ap);
    va_end(ap);
    tlb_unlock(x);
    return status;
}
static int tlb_refuse(tlb_ctx *x, int status, const char *what) { return tlb_refusef(x, status, "%s", what); }

static void tlb_unref(tlb_ctx *x) {
    pthread_mutex_lock(&tlb_refs_lock);
    long left = --x->refs;
    pthread_mutex_unlock(&tlb_refs_lock);
    if (left) return;
    tl_context_destroy(x->ctx);
    pthread_mutex_destroy(&x->sleep);
    pthread_cond_destroy(&x->wake);
    free(x->pins);
    free(x->slots);
    free(x);
}

/* ---- the pin table (x locked): exports by tensor bits, in constant time however many ---------- */
static size_t tlb_slot_of(const tlb_ctx *x, uint64_t bits) { /* bits' slot, or the empty one for it */
    const size_t mask = x->nslots - 1;
    size_t i = (size_t)((bits * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    while (x->slots[i] && x->pins[x->slots[i] - 1].bits != bits) i = (i + 1) & mask;
    return i;
}
static tlb_pin *tlb_pin_find(const tlb_ctx *x, uint64_t bits) {
    if (!x->npins) return NULL;
    const size_t at = x->slots[tlb_slot_of(x, bits)];
    return at ? &x->pins[at - 1] : NULL;
}
/* A new pin for bits (count 0), or NULL when out of memory. */
static tlb_pin *tlb_pin_add(tlb_ctx *x, uint64_t bits) {
    if (x->npins == x->pin_capacity) {
        const size_t grown = x->pin_capacity ? 2 * x->pin_capacity : 8;
        tlb_pin *more = (tlb_pin *)realloc(x->pins, grown * sizeof *more);
        if (!more) return NULL;
        x->pins = more, x->pin_capacity = grown;
    }
    if (2 * (x->npins + 1) > x->nslots) { /* at most half full */
        const size_t nslots = x->nslots ? 2 * x->nslots : 16;
        size_t *slots = (size_t *)calloc(nslots, sizeof *slots);
        if (!slots) return NULL;
        free(x->slots);
        x->slots = slots, x->nslots = nslots;
        for (size_t k = 0; k < x->npins; ++k) x->slots[tlb_slot_of(x, x->pins[k].bits)] = k + 1;
    }
    tlb_pin *p = &x->pins[x->npins++];
    memset(p, 0, sizeof *p);
    p->bits = bits;
    x->slots[tlb_slot_of(x, bits)] = x->npins;
    return p;
}
static void tlb_pin_remove(tlb_ctx *x, tlb_pin *p) {
    const size_t mask = x->nslots - 1, k = (size_t)(p - x->pins), last = x->npins - 1;
    size_t i = tlb_slot_of(x, p->bits);
    x->slots[i] = 0;
    for (size_t j = (i + 1) & mask; x->slots[j]; j = (j + 1) & mask) { /* the cluster after it, placed again */
        const size_t at = x->slots[j];
        x->slots[j] = 0;
        x->slots[tlb_slot_of(x, x->pins[at - 1].bits)] = at;
    }
    if (k != last) { /* the last pin moves into the hole */
        x->slots[tlb_slot_of(x, x->pins[last].bits)] = k + 1;
        x->pins[k] = x->pins[last];
    }
    --x->npins;
}

/* The first export among x's pins (x locked) of the open scope named by `storage` (at
 * `generation`), or whose bytes meet [lo, hi) when hi > lo; NULL when none. */
static const tlb_pin *tlb_pinned(const tlb_ctx *x, const char *storage, uint64_t generation, uintptr_t lo,
                                 uintptr_t hi) {
    for (size_t i = 0; i < x->npins; ++i) {
        const tlb_pin *p = &x->pins[i];
        if ((storage && p->storage == storage && p->generation == generation) || (hi > lo && p->lo < hi && lo < p->hi))
            return p;
    }
    return NULL;
}
static int tlb_refuse_pinned(tlb_ctx *x, const tlb_pin *p, const char *what) {
    return tlb_refusef(x, TL_E_BUSY,
                       "%s: a tensor there is exported (%ld view%s: a NumPy array, memoryview or DLPack tensor over "
                       "its memory); release them first, or copy (numpy(), retain())",
                       what, p->count, p->count == 1 ? "" : "s");
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

/* The info array (TLB_INFO_SLOTS long) from a tensor's info. */
static void tlb_put_info(const tl_tensor_info *in, int64_t *info) {
    int64_t *at = info, count = 1;
#define TLB_PUT(field) *at++ = (int64_t)in->field;
#define TLB_PUT_ARRAY(field, n) \
  for (int i = 0; i < (n); ++i) *at++ = (int64_t)in->field[i];
    TL_TENSOR_INFO_FIELDS(TLB_PUT, TLB_PUT_ARRAY)
#undef TLB_PUT
#undef TLB_PUT_ARRAY
    for (int i = 0; i < in->ndim; ++i) count *= in->shape[i];
    *at = count;
}

/* ---- versions and statuses --------------------------------------------------------------- */
const char *tlb_status_string(int status) { return tl_status_string((tl_status)status); }
const char *tlb_version(void) { return tl_version_string(); }
int tlb_abi_version(void) { return tl_abi_version(); }
/* OpenBLAS's thread count (process-wide); the status, TL_E_INVALID_ARGUMENT below 1. */
int tlb_set_blas_threads(int threads) {
    tlb_ctx *x = tlb_of(0);
    int rc = tl_set_blas_threads(threads);
    if (rc != TL_OK) {
        tlb_lock(x);
        tlb_set(x, rc, tl_last_error());
        tlb_unlock(x);
    }
    return rc;
}
int tlb_blas_threads(void) { return tl_blas_threads(); }

/* The last failure on context c (0: failures with no context).  The message is copied out
 * under the lock, so a language copying it races with no other call. */
int tlb_status(uint64_t c) {
    tlb_ctx *x = tlb_of(c);
    tlb_lock(x);
    int status = x->status;
    tlb_unlock(x);
    return status;
}
const char *tlb_message(uint64_t c) {
    tlb_ctx *x = tlb_of(c);
    tlb_lock(x);
    memcpy(tlb_message_copy, x->message, sizeof tlb_message_copy);
    tlb_unlock(x);
    return tlb_message_copy;
}

/* ---- contexts ------------------------------------------------------------------------------ */
/* A context record, or 0 (then tlb_status(0)/tlb_message(0) say why). */
static uint64_t tlb_context_record(int serialised) {
    tlb_ctx *x = (tlb_ctx *)calloc(1, sizeof *x);
    if (!x) {
        tlb_lock(&tlb_no_context);
        tlb_set(&tlb_no_context, TL_E_OUT_OF_MEMORY, "out of memory for a context record");
        tlb_unlock(&tlb_no_context);
        return 0;
    }
    tl_status rc = tl_context_create(NULL, &x->ctx);
    if (rc != TL_OK) {
        tlb_lock(&tlb_no_context);
        tlb_set(&tlb_no_context, rc, tl_last_error());
        tlb_unlock(&tlb_no_context);
        free(x);
        return 0;
    }
    x->serialised = serialised;
    /* Every call on x->ctx is made under the record's lock, so the context's own check for a
     * second thread (an atomic exchange a call: bench/README.md) is off.  A record the language
     * serialises keeps it: the GIL is not this layer's lock. */
    tl_context_set_thread_check(x->ctx, x->serialised);
    pthread_mutex_init(&x->sleep, NULL);
    pthread_cond_init(&x->wake, NULL);
    x->refs = 1;
    return (uint64_t)(uintptr_t)x;
}
uint64_t tlb_context_new(void) { return tlb_context_record(0); }
uint64_t tlb_context_new_serialised(void) { return tlb_context_record(1); }
/* Destroys the library's context now, or (x locked) marks it closing while exports live. */
static void tlb_close_locked(tlb_ctx *x) {
    if (x->npins) {
        x->closing = 1;
        return;
    }
    tl_context_destroy(x->ctx);
    x->ctx = NULL;
}
/* Destroys the library's context (every scope and tensor); calls on c then fail with
 * TL_E_INVALID_HANDLE.  Idempotent; the record lives on until released. */
void tlb_context_close(uint64_t c) {
    if (!c) return;
    tlb_ctx *x = tlb_of(c);
    tlb_lock(x);
    tlb_close_locked(x);
    tlb_unlock(x);
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
/* An export of the scope's (x locked), or NULL. */
static const tlb_pin *tlb_scope_pinned(tlb_ctx *x, uint64_t token) {
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    if (!x->npins || tl_scope_stats_get(x->ctx, tlb_scope_at(token), &st) != TL_OK) return NULL;
    return tlb_pinned(x, tl_scope_name(x->ctx, tlb_scope_at(token)), st.generation, 0, 0);
}
/* Resets (or closes) the scope, refused while a tensor of it is exported. */
static int tlb_scope_end(uint64_t c, uint64_t token, int close) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    const tl_scope s = tlb_scope_at(token);
    const tlb_pin *p = tlb_scope_pinned(x, token);
    if (p) {
        char what[TLB_MESSAGE_BYTES / 2];
        snprintf(what, sizeof what, "%s scope '%s'", close ? "closing" : "resetting", tl_scope_name(x->ctx, s));
        return tlb_refuse_pinned(x, p, what);
    }
    return tlb_leave(x, close ? tl_scope_close(x->ctx, s) : tl_scope_reset(x->ctx, s));
}
int tlb_scope_reset(uint64_t c, uint64_t token) { return tlb_scope_end(c, token, 0); }
int tlb_scope_close(uint64_t c, uint64_t token) { return tlb_scope_end(c, token, 1); }
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
    tlb_lock(x);
    /* refused unless open and innermost; left open (until the context closes) while exported */
    if (x->ctx && !x->closing && !tlb_scope_pinned(x, token)) (void)tl_scope_close(x->ctx, tlb_scope_at(token));
    tlb_unlock(x);
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
        tlb_refuse(x, TL_E_INVALID_ARGUMENT,
                   "wrap needs directly addressable memory (a direct buffer, pinned array or C memory)");
        return 0;
    }
    tl_tensor t = {0};
    return tlb_leave_bits(
        x, tl_tensor_wrap(x->ctx, (tl_dtype)dtype, (int)ndim, shape, buffer, (size_t)buffer_bytes, &t), t);
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
int tlb_read_f32(uint64_t c, uint64_t bits, float *data, size_t count) {
    return tlb_read(c, bits, TL_F32, data, count * sizeof(float));
}
int tlb_read_f64(uint64_t c, uint64_t bits, double *data, size_t count) {
    return tlb_read(c, bits, TL_F64, data, count * sizeof(double));
}
int tlb_read_i32(uint64_t c, uint64_t bits, int32_t *data, size_t count) {
    return tlb_read(c, bits, TL_I32, data, count * sizeof(int32_t));
}

/* Enters c for a call that fills ninfo info slots about bits: the record locked and *in read
 * (*rc that read's status), or NULL with *rc the failure (recorded, nothing locked). */
static tlb_ctx *tlb_enter_info(uint64_t c, uint64_t bits, size_t ninfo, tl_tensor_info *in, int *rc) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return *rc = tlb_status(c), NULL;
    if (ninfo < TLB_INFO_SLOTS)
        return *rc = tlb_refusef(x, TL_E_INVALID_ARGUMENT, "tensor info needs %d slots", TLB_INFO_SLOTS), NULL;
    tl_tensor t = {bits};
    *rc = tl_tensor_info_get(x->ctx, t, in);
    return x;
}

/* The whole tl_tensor_info as TL_TENSOR_INFO_FIELDS lays it out (dims past ndim are 0), then
 * the element count (TLB_INFO_SLOTS); the storage name travels on its own (tlb_storage). */
int tlb_info(uint64_t c, uint64_t bits, int64_t *info, size_t ninfo) {
    tl_tensor_info in = TL_TENSOR_INFO_INIT;
    int rc;
    tlb_ctx *x = tlb_enter_info(c, bits, ninfo, &in, &rc);
    if (!x) return rc;
    if (rc == TL_OK) tlb_put_info(&in, info);
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
/* t's first element (*data) and the bytes its elements span, [*lo, *hi) (empty for no
 * elements); the status. */
static int tlb_span(tlb_ctx *x, tl_tensor t, const tl_tensor_info *in, void **data, uintptr_t *lo, uintptr_t *hi) {
    int rc = tl_tensor_data(x->ctx, t, data);
    if (rc != TL_OK) return rc;
    int64_t block = 1, last = 0;
    size_t block_bytes = 0;
    rc = tl_dtype_block(in->dtype, &block, &block_bytes);
    if (rc != TL_OK) return rc;
    for (int i = 0; i < in->ndim; ++i) {
        if (in->shape[i] == 0) return *lo = *hi = 0, TL_OK;
        last += (in->shape[i] - 1) * in->strides[i];
    }
    *lo = (uintptr_t)*data;
    *hi = *lo + (uintptr_t)((last / block + 1) * (int64_t)block_bytes);
    return TL_OK;
}
int tlb_free(uint64_t c, uint64_t bits) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    tl_tensor t = {bits};
    tl_tensor_info in = TL_TENSOR_INFO_INIT;
    void *data = NULL;
    uintptr_t lo = 0, hi = 0;
    if (x->npins && tl_tensor_info_get(x->ctx, t, &in) == TL_OK && in.generation == 0 &&
        tlb_span(x, t, &in, &data, &lo, &hi) == TL_OK) {  /* ambient: its memory must not hold an export */
        const tlb_pin *p = tlb_pinned(x, NULL, 0, lo, hi);
        if (p) return tlb_refuse_pinned(x, p, "freeing the tensor");
    }
    return tlb_leave(x, tl_tensor_free(x->ctx, t));
}

/* ---- exports ------------------------------------------------------------------------------- */
int tlb_export(uint64_t c, uint64_t bits, void **data, int64_t *info, size_t ninfo) {
    tl_tensor_info in = TL_TENSOR_INFO_INIT;
    int rc;
    tlb_ctx *x = tlb_enter_info(c, bits, ninfo, &in, &rc);
    if (!x) return rc;
    tl_tensor t = {bits};
    uintptr_t lo = 0, hi = 0;
    void *first = NULL;
    if (rc == TL_OK) rc = tlb_span(x, t, &in, &first, &lo, &hi);
    if (rc != TL_OK) return tlb_leave(x, rc);
    tlb_pin *p = tlb_pin_find(x, bits);
    if (!p) {
        if (!(p = tlb_pin_add(x, bits))) return tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for an export");
        p->storage = in.storage; /* "ambient" is a static text, never a scope's name pointer */
        p->generation = in.generation, p->lo = lo, p->hi = hi;
    }
    ++p->count;
    tlb_scope_hold(c); /* the record outlives the language's Context while exported */
    *data = first;
    tlb_put_info(&in, info);
    return tlb_leave(x, TL_OK);
}
void tlb_unexport(uint64_t c, uint64_t bits) {
    if (!c) return;
    tlb_ctx *x = tlb_of(c);
    tlb_lock(x);
    tlb_pin *p = tlb_pin_find(x, bits);
    if (!p) {
        tlb_unlock(x);
        return;
    }
    if (--p->count == 0) tlb_pin_remove(x, p);
    if (x->npins == 0 && x->closing) tlb_close_locked(x);
    tlb_unlock(x);
    tlb_unref(x);
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
#define TLB_BINARY(name)                                        \
  uint64_t tlb_##name(uint64_t c, uint64_t a, uint64_t b) {     \
    tlb_ctx *x = tlb_enter(c);                                  \
    if (!x) return 0;                                           \
    tl_tensor ta = {a}, tb = {b}, r = {0};                      \
    return tlb_leave_bits(x, tl_##name(x->ctx, ta, tb, &r), r); \
  }
TL_PAIR_OPS(TLB_BINARY)
/* One bounded op (tlb.h): 1 with *out when it ran (0 on a failure, recorded), 0 when it did
 * nothing. */
static TLB_INLINE int tlb_bounded_binary(uint64_t c, int op, uint64_t a, uint64_t b, uint64_t *out) {
#define TLB_KNOWN_OP(name) op == TL_BINARY_##name ||
    if (!(TL_BINARY_OPS(TLB_KNOWN_OP) 0) || !c) return 0;
#undef TLB_KNOWN_OP
    tlb_ctx *x = tlb_of(c);
    if (!tlb_lock_nowait(x)) return 0;
    if (!x->ctx || x->closing) { /* the ordinary call says why */
        tlb_unlock(x);
        return 0;
    }
    tl_tensor ta = {a}, tb = {b}, r = {0};
    const int rc = tl_binary_bounded(x->ctx, op, ta, tb, TLB_DIRECT_ELEMENTS, &r);
    if (rc == TL_OK && !r.bits) { /* past the bound: the ordinary call makes it */
        tlb_unlock(x);
        return 0;
    }
    *out = tlb_leave_bits(x, rc, r);
    return 1;
}
void tlb_direct_binary(void *arg) {
    tlb_direct_call *call = (tlb_direct_call *)arg;
    call->done = tlb_bounded_binary(call->c, call->op, call->a, call->b, &call->out);
}
#define TLB_SMALL(name)                                                    \
  uint64_t tlb_small_##name(uint64_t c, uint64_t a, uint64_t b) {          \
    uint64_t out = 0;                                                      \
    return tlb_bounded_binary(c, TLB_DIRECT_##name, a, b, &out) ? out : 0; \
  }
TL_BINARY_OPS(TLB_SMALL)
#define TLB_UNARY(name)                                     \
  uint64_t tlb_##name(uint64_t c, uint64_t a) {             \
    tlb_ctx *x = tlb_enter(c);                              \
    if (!x) return 0;                                       \
    tl_tensor ta = {a}, r = {0};                            \
    return tlb_leave_bits(x, tl_##name(x->ctx, ta, &r), r); \
  }
TL_UNARY_OPS(TLB_UNARY)
TLB_UNARY(contiguous)
/* Ops with more arguments: the call is the last macro argument, over x->ctx, ta and &r. */
#define TLB_OP(signature, call)        \
  uint64_t signature {                 \
    tlb_ctx *x = tlb_enter(c);         \
    if (!x) return 0;                  \
    tl_tensor ta = {a}, r = {0};       \
    return tlb_leave_bits(x, call, r); \
  }
/* w, b: 0 for none. */
TLB_OP(tlb_rmsnorm(uint64_t c, uint64_t a, uint64_t w, double eps), tl_rmsnorm(x->ctx, ta, (tl_tensor){w}, eps, &r))
TLB_OP(tlb_layernorm(uint64_t c, uint64_t a, uint64_t w, uint64_t b, double eps),
       tl_layernorm(x->ctx, ta, (tl_tensor){w}, (tl_tensor){b}, eps, &r))
TLB_OP(tlb_sum(uint64_t c, uint64_t a, int axis, int keepdim), tl_sum(x->ctx, ta, axis, keepdim != 0, &r))
TLB_OP(tlb_mean(uint64_t c, uint64_t a, int axis, int keepdim), tl_mean(x->ctx, ta, axis, keepdim != 0, &r))
TLB_OP(tlb_argmax(uint64_t c, uint64_t a, int axis), tl_argmax(x->ctx, ta, axis, &r))
TLB_OP(tlb_softmax(uint64_t c, uint64_t a, int axis), tl_softmax(x->ctx, ta, axis, &r))
TLB_OP(tlb_convert(uint64_t c, uint64_t a, int to), tl_convert(x->ctx, ta, (tl_dtype)to, &r))
TLB_OP(tlb_scale(uint64_t c, uint64_t a, double s), tl_scale(x->ctx, ta, s, &r))
TLB_OP(tlb_attention(uint64_t c, uint64_t a, uint64_t k, uint64_t v, int64_t valid_rows, double scale),
       tl_attention(x->ctx, ta, (tl_tensor){k}, (tl_tensor){v}, valid_rows, scale, &r))
TLB_OP(tlb_rope(uint64_t c, uint64_t a, int64_t position, double theta, int mode),
       tl_rope(x->ctx, ta, position, theta, (tl_rope_mode)mode, &r))
TLB_OP(tlb_slice(uint64_t c, uint64_t a, int axis, int64_t start, int64_t length),
       tl_slice(x->ctx, ta, axis, start, length, &r))
TLB_OP(tlb_transpose(uint64_t c, uint64_t a, int d0, int d1), tl_transpose(x->ctx, ta, d0, d1, &r))
TLB_OP(tlb_reshape(uint64_t c, uint64_t a, int64_t *shape, size_t ndim), tl_reshape(x->ctx, ta, (int)ndim, shape, &r))

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
int tlb_st_maps(uint64_t f, const char *name) {
    return tl_safetensors_maps((const tl_safetensors_file *)(uintptr_t)f, name);
}
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
int tlb_safetensors_save(uint64_t c, const char *path, const char *names_by_line, uint64_t *handles, size_t nhandles) {
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

/* A call on c about an object the language passes by address (a file, a model, a session): the
 * record entered, or NULL with the status in *rc, TL_E_INVALID_HANDLE naming a closed one (0). */
static tlb_ctx *tlb_enter_open(uint64_t c, uint64_t handle, const char *closed, int *rc) {
    tlb_ctx *x = tlb_enter(c);
    *rc = x ? TL_OK : tlb_status(c);
    if (x && !handle) *rc = tlb_refuse(x, TL_E_INVALID_HANDLE, closed), x = NULL;
    return x;
}

/* ---- text in, text out ---------------------------------------------------------------------- */
typedef struct tlb_model {
    tl_model *model;
    atomic_long refs; /* the language's Model, and each open session */
} tlb_model;
typedef struct tlb_session {
    tl_session *session;
    tlb_model *model;
} tlb_session;
#define TLB_MODEL(m) ((tlb_model *)(uintptr_t)(m))
#define TLB_SESSION(s) ((tlb_session *)(uintptr_t)(s))

static void tlb_model_drop(tlb_model *m) {
    if (atomic_fetch_sub(&m->refs, 1) != 1) return;
    tl_model_close(m->model); /* its last session is closed: TL_OK */
    free(m);
}
uint64_t tlb_model_open(uint64_t c, const char *path) { return tlb_model_open_with(c, path, 0, 0); }
uint64_t tlb_model_open_with(uint64_t c, const char *path, int weights_dtype, int repack) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tlb_model *m = (tlb_model *)malloc(sizeof *m);
    if (!m) return tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for a model record"), 0;
    tl_model_options o = TL_MODEL_OPTIONS_INIT;
    o.weights_dtype = (tl_dtype)weights_dtype, o.repack = repack;
    const int rc = tlb_leave(x, tl_model_open_with(x->ctx, path, &o, &m->model));
    if (rc != TL_OK) return free(m), 0;
    atomic_init(&m->refs, 1);
    return (uint64_t)(uintptr_t)m;
}
void tlb_model_release(uint64_t m) {
    if (m) tlb_model_drop(TLB_MODEL(m));
}
static tlb_ctx *tlb_model_enter(uint64_t c, uint64_t m, int *rc) {
    return tlb_enter_open(c, m, "the model is closed", rc);
}
int tlb_model_info(uint64_t c, uint64_t m, int64_t *info, size_t ninfo) {
    int rc;
    tlb_ctx *x = tlb_model_enter(c, m, &rc);
    if (!x) return rc;
    if (!info || ninfo < 14) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "a model's info needs 14 slots");
    tl_model_info i = TL_MODEL_INFO_INIT;
    rc = tl_model_info_get(TLB_MODEL(m)->model, &i);
    const tl_tokenizer *t = tl_model_tokenizer(TLB_MODEL(m)->model);
    const int64_t all[14] = {i.vocab, i.d_model, i.layers, i.heads, i.kv_heads, i.ffn, i.context_length, i.weights_dtype,
                             tl_tokenizer_special(t, TL_TOKEN_BOS), tl_tokenizer_special(t, TL_TOKEN_EOS),
                             tl_tokenizer_special(t, TL_TOKEN_EOT), tl_tokenizer_special(t, TL_TOKEN_UNK), t != NULL,
                             (int64_t)i.repacked_bytes};
    if (rc == TL_OK) memcpy(info, all, sizeof all);
    return tlb_leave(x, rc);
}
static tl_tokenizer *tlb_tokenizer_of(tlb_ctx *x, uint64_t m) {
    tl_tokenizer *t = tl_model_tokenizer(TLB_MODEL(m)->model);
    if (!t) tlb_refuse(x, TL_E_NOT_FOUND, "the model's file carries no vocabulary");
    return t;
}
int64_t tlb_tokenize(uint64_t c, uint64_t m, const char *text, int flags, int32_t *data, size_t count) {
    int rc;
    tlb_ctx *x = tlb_model_enter(c, m, &rc);
    if (!x) return -1;
    tl_tokenizer *t = tlb_tokenizer_of(x, m);
    if (!t) return -1;
    if (!text) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "the text is NULL"), -1;
    size_t n = 0;
    rc = tl_tokenize(t, text, strlen(text), (unsigned)flags, NULL, 0, &n);
    if (rc == TL_OK && data && n <= count) rc = tl_tokenize(t, text, strlen(text), (unsigned)flags, data, count, &n);
    return tlb_leave(x, rc) == TL_OK ? (int64_t)n : -1;
}
char *tlb_detokenize(uint64_t c, uint64_t m, int32_t *data, size_t count, int flags) {
    int rc;
    tlb_ctx *x = tlb_model_enter(c, m, &rc);
    if (!x) return NULL;
    tl_tokenizer *t = tlb_tokenizer_of(x, m);
    if (!t) return NULL;
    size_t n = 0;
    rc = tl_detokenize(t, data, count, (unsigned)flags, NULL, 0, &n);
    char *text = rc == TL_OK ? (char *)malloc(n + 1) : NULL;
    if (rc == TL_OK && !text) return tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for the text"), NULL;
    if (rc == TL_OK) rc = tl_detokenize(t, data, count, (unsigned)flags, text, n + 1, &n);
    if (tlb_leave(x, rc) != TL_OK) return free(text), NULL;
    return text;
}
uint64_t tlb_session_open(uint64_t c, uint64_t m, int64_t context_length, int kv_dtype, int64_t max_chunk) {
    int rc;
    tlb_ctx *x = tlb_model_enter(c, m, &rc);
    if (!x) return 0;
    if (context_length < 0 || context_length > INT32_MAX || max_chunk < 0 || max_chunk > INT32_MAX)
        return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "a session's context length and chunk are 0 to INT32_MAX"), 0;
    tlb_session *s = (tlb_session *)malloc(sizeof *s);
    if (!s) return tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for a session record"), 0;
    tl_session_options o = TL_SESSION_OPTIONS_INIT;
    o.context_length = (int32_t)context_length, o.kv_dtype = (tl_dtype)kv_dtype, o.max_chunk = (int32_t)max_chunk;
    if (tlb_leave(x, tl_session_open(x->ctx, TLB_MODEL(m)->model, &o, &s->session)) != TL_OK) return free(s), 0;
    s->model = TLB_MODEL(m);
    atomic_fetch_add(&s->model->refs, 1);
    return (uint64_t)(uintptr_t)s;
}
void tlb_session_close(uint64_t s) {
    if (!s) return;
    tl_session_close(TLB_SESSION(s)->session);
    tlb_model_drop(TLB_SESSION(s)->model);
    free(TLB_SESSION(s));
}
int64_t tlb_session_position(uint64_t s) { return s ? tl_session_position(TLB_SESSION(s)->session) : 0; }
static tlb_ctx *tlb_session_enter(uint64_t c, uint64_t s, int *rc) {
    return tlb_enter_open(c, s, "the session is closed", rc);
}
int tlb_session_feed(uint64_t c, uint64_t s, int32_t *data, size_t count) {
    int rc;
    tlb_ctx *x = tlb_session_enter(c, s, &rc);
    return x ? tlb_leave(x, tl_session_feed(TLB_SESSION(s)->session, data, count)) : rc;
}
int tlb_session_feed_text(uint64_t c, uint64_t s, const char *text, int flags) {
    int rc;
    tlb_ctx *x = tlb_session_enter(c, s, &rc);
    if (!x) return rc;
    if (!text) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "the text is NULL");
    return tlb_leave(x, tl_session_feed_text(TLB_SESSION(s)->session, text, strlen(text), (unsigned)flags));
}
int tlb_session_rewind(uint64_t c, uint64_t s, int64_t keep) {
    int rc;
    tlb_ctx *x = tlb_session_enter(c, s, &rc);
    if (!x) return rc;
    if (keep < 0 || keep > INT32_MAX) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "rewind to a negative position");
    return tlb_leave(x, tl_session_rewind(TLB_SESSION(s)->session, (int32_t)keep));
}
/* The sampler from its numbers, or a refusal recorded on x. */
static int tlb_sampler(tlb_ctx *x, const double *data, size_t count, const int64_t *info, size_t ninfo, uint64_t seed,
                       tl_sampler *p) {
    if (!data || count < 4 || !info || ninfo < 4)
        return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "a sampler is 4 numbers and 4 integer slots");
    const tl_sampler greedy = TL_SAMPLER_GREEDY;
    *p = greedy;
    p->temperature = (float)data[0], p->top_p = (float)data[1], p->min_p = (float)data[2];
    p->repeat_penalty = (float)data[3];
    p->top_k = (int32_t)(info[0] < INT32_MIN ? INT32_MIN : info[0] > INT32_MAX ? INT32_MAX : info[0]);
    p->repeat_last_n = (int32_t)(info[1] < INT32_MIN ? INT32_MIN : info[1] > INT32_MAX ? INT32_MAX : info[1]);
    p->seed = seed;
    return TL_OK;
}
int64_t tlb_session_sample(uint64_t c, uint64_t s, double *data, size_t count, int64_t *info, size_t ninfo,
                           uint64_t seed) {
    int rc;
    tlb_ctx *x = tlb_session_enter(c, s, &rc);
    if (!x) return -1;
    tl_sampler p;
    if (tlb_sampler(x, data, count, info, ninfo, seed, &p) != TL_OK) return -1;
    int32_t token = -1;
    return tlb_leave(x, tl_session_sample(TLB_SESSION(s)->session, &p, &token)) == TL_OK ? token : -1;
}
char *tlb_session_generate(uint64_t c, uint64_t s, double *data, size_t count, int64_t *info, size_t ninfo,
                           uint64_t seed) {
    int rc;
    tlb_ctx *x = tlb_session_enter(c, s, &rc);
    if (!x) return NULL;
    tl_sampler p;
    if (tlb_sampler(x, data, count, info, ninfo, seed, &p) != TL_OK) return NULL;
    tlb_set(x, TL_OK, "");
    char text[1024];
    size_t length = 0;
    int32_t token = -1;
    int done = 0;
    rc = tl_session_generate(TLB_SESSION(s)->session, &p, &token, &done, text, sizeof text, &length);
    char *out = rc == TL_OK ? strdup(text) : NULL;
    if (rc == TL_OK && !out) rc = tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for the text");
    if (tlb_leave(x, rc) != TL_OK) return free(out), NULL;
    info[2] = token, info[3] = done;
    return out;
}

/* ---- JSON: strings copied into the language, then freed here (NULL on failure) ------------- */
/* ---- GGUF --------------------------------------------------------------------------------- */
#define TLB_GGUF(f) ((tl_gguf_file *)(uintptr_t)(f))
uint64_t tlb_gguf_open(uint64_t c, const char *path) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    tl_gguf_file *f = NULL;
    return tlb_leave(x, tl_gguf_open(x->ctx, path, &f)) == TL_OK ? (uint64_t)(uintptr_t)f : 0;
}
void tlb_gguf_close(uint64_t f) { tl_gguf_close(TLB_GGUF(f)); }
int64_t tlb_gguf_tensor_count(uint64_t f) { return (int64_t)tl_gguf_tensor_count(TLB_GGUF(f)); }
const char *tlb_gguf_tensor_name(uint64_t f, int64_t i) {
    return i < 0 ? NULL : tl_gguf_tensor_name(TLB_GGUF(f), (size_t)i);
}
uint64_t tlb_gguf_get(uint64_t c, uint64_t f, const char *name) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return 0;
    if (!f) return tlb_refuse(x, TL_E_INVALID_HANDLE, "the GGUF file is closed"), 0;
    tl_tensor t = {0};
    return tlb_leave_bits(x, tl_gguf_get(x->ctx, TLB_GGUF(f), name, &t), t);
}
int64_t tlb_gguf_key_count(uint64_t f) { return (int64_t)tl_gguf_key_count(TLB_GGUF(f)); }
const char *tlb_gguf_key_name(uint64_t f, int64_t i) { return i < 0 ? NULL : tl_gguf_key_name(TLB_GGUF(f), (size_t)i); }

/* The status of a metadata read, recorded on c like any call's. */
static tlb_ctx *tlb_gguf_enter(uint64_t c, uint64_t f, const char *key, int *rc) {
    tlb_ctx *x = tlb_enter_open(c, f, "the GGUF file is closed", rc);
    if (x && !key) *rc = tlb_refuse(x, TL_E_INVALID_ARGUMENT, "a GGUF key is NULL"), x = NULL;
    return x;
}
int tlb_gguf_key_type(uint64_t c, uint64_t f, const char *key, int64_t *info, size_t ninfo) {
    int rc;
    tlb_ctx *x = tlb_gguf_enter(c, f, key, &rc);
    if (!x) return rc;
    if (!info || ninfo < 3) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "a key's type needs 3 slots");
    tl_gguf_type type, item;
    uint64_t count;
    rc = tl_gguf_key_type(TLB_GGUF(f), key, &type, &item, &count);
    if (rc == TL_OK) info[0] = type, info[1] = item, info[2] = (int64_t)(count > INT64_MAX ? INT64_MAX : count);
    return tlb_leave(x, rc);
}
int tlb_gguf_int(uint64_t c, uint64_t f, const char *key, int64_t item, int64_t *info, size_t ninfo) {
    int rc;
    tlb_ctx *x = tlb_gguf_enter(c, f, key, &rc);
    if (!x) return rc;
    if (!info || ninfo < 1) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "an integer needs a slot");
    return tlb_leave(x, item < 0 ? tl_gguf_get_int(TLB_GGUF(f), key, info)
                                 : tl_gguf_get_array_number(TLB_GGUF(f), key, (uint64_t)item, info, NULL));
}
int tlb_gguf_float(uint64_t c, uint64_t f, const char *key, int64_t item, double *data, size_t count) {
    int rc;
    tlb_ctx *x = tlb_gguf_enter(c, f, key, &rc);
    if (!x) return rc;
    if (!data || count < 1) return tlb_refuse(x, TL_E_INVALID_ARGUMENT, "a float needs a slot");
    return tlb_leave(x, item < 0 ? tl_gguf_get_float(TLB_GGUF(f), key, data)
                                 : tl_gguf_get_array_number(TLB_GGUF(f), key, (uint64_t)item, NULL, data));
}
char *tlb_gguf_string(uint64_t c, uint64_t f, const char *key, int64_t item) {
    int rc;
    tlb_ctx *x = tlb_gguf_enter(c, f, key, &rc);
    if (!x) return NULL;
    tlb_set(x, TL_OK, ""); /* so a language whose strings have no NULL (Go: "") can tell an empty one */
    const char *text = NULL;
    uint64_t length = 0;
    rc = item < 0 ? tl_gguf_get_string(TLB_GGUF(f), key, &text, &length)
                  : tl_gguf_get_array_string(TLB_GGUF(f), key, (uint64_t)item, &text, &length);
    if (rc != TL_OK) return tlb_leave(x, rc), NULL;
    char *copy = (char *)malloc((size_t)length + 1);
    if (!copy) return tlb_refuse(x, TL_E_OUT_OF_MEMORY, "out of memory for a GGUF string"), NULL;
    memcpy(copy, text, (size_t)length);
    copy[length] = 0;
    tlb_leave(x, TL_OK);
    return copy;
}

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
 * (tl_add straight on the library, a reset every 256), in one call; thread_check 1 as
 * tl_context_create leaves a context, 0 as this layer's records run theirs. */
int tlb_bench_add_loop(uint64_t c, uint64_t token, uint64_t a, uint64_t b, int64_t iters, int thread_check) {
    tlb_ctx *x = tlb_enter(c);
    if (!x) return tlb_status(c);
    tl_scope s = tlb_scope_at(token);
    tl_tensor ta = {a}, tb = {b}, r;
    int rc = tl_context_set_thread_check(x->ctx, thread_check);
    for (int64_t i = 0; i < iters && rc == TL_OK; ++i) {
        rc = tl_add(x->ctx, ta, tb, &r);
        if (rc == TL_OK && (i & 255) == 255) rc = tl_scope_reset(x->ctx, s);
    }
    if (rc == TL_OK) rc = tl_scope_reset(x->ctx, s);
    tl_context_set_thread_check(x->ctx, x->serialised); /* the record's own, as tlb_context_record sets it */
    return tlb_leave(x, rc);
}
