/* An engine's job system, as a tl_executor: the calling thread plus `threads - 1` workers.
 * Each parallel_for cuts [0, count) into one contiguous part a thread (each at least grain
 * long), the caller runs the first, and returns when every worker has answered.  Workers spin
 * for a while after each job, as game engines' job systems do, so the next job of a decode step
 * (a few microseconds later) starts without a wake-up; idle longer, they sleep on a condition
 * variable.  Used by the benchmarks and the decode demo; header-only, like bench_util.h, and C or
 * C++ alike (GCC's and Clang's __atomic builtins on plain integers, since C++17 has no
 * <stdatomic.h>).
 *
 *   job_pool pool;
 *   job_pool_start(&pool, 2);
 *   tl_executor ex = job_pool_executor(&pool);
 *   tl_context_set_executor(ctx, &ex); tl_set_blas_threads(1);
 *   ...
 *   job_pool_stop(&pool); */
#ifndef TL_JOB_POOL_H
#define TL_JOB_POOL_H
#include <pthread.h>
#include <stdint.h>
#include <tensorlife/tl.h>
#ifdef _WIN32
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#else
#  include <unistd.h>
#endif

/* The processors this process may run on now: a pool's default size. */
static inline int job_pool_online_cores(void) {
#ifdef _WIN32
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return (int)info.dwNumberOfProcessors;
#else
    return (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
}

enum { JOB_POOL_MAX_THREADS = 16, JOB_POOL_SPINS = 1 << 16 };

typedef struct job_pool job_pool;
typedef struct job_worker {
    job_pool *pool;
    int index; /* 1 .. threads - 1: the caller is part 0 */
    pthread_t thread;
} job_worker;

struct job_pool {
    int threads;
    job_worker worker[JOB_POOL_MAX_THREADS];
    /* The job: written by the caller before epoch is bumped, read by workers after. */
    tl_task_fn task;
    void *task_user;
    int64_t count, parts;
    uint64_t epoch; /* one more for every job; a worker runs each epoch once */
    int unanswered; /* workers yet to answer the current epoch */
    int sleepers;
    int stopping;
    pthread_mutex_t lock;
    pthread_cond_t wake;
};

static inline void job_pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* [begin, end) of part `i` of `parts` over count. */
static inline void job_pool_part(int64_t count, int64_t parts, int64_t i, int64_t *begin, int64_t *end) {
    *begin = count * i / parts;
    *end = count * (i + 1) / parts;
}

static void *job_pool_worker_main(void *arg) {
    job_worker *w = (job_worker *)arg;
    job_pool *p = w->pool;
    uint64_t seen = 0;
    for (;;) {
        uint64_t now;
        for (int spin = 0; (now = __atomic_load_n(&p->epoch, __ATOMIC_SEQ_CST)) == seen; ++spin) {
            if (__atomic_load_n(&p->stopping, __ATOMIC_ACQUIRE)) return NULL;
            if (spin < JOB_POOL_SPINS) {
                job_pool_pause();
                continue;
            }
            pthread_mutex_lock(&p->lock); /* idle: sleep until the next job */
            __atomic_fetch_add(&p->sleepers, 1, __ATOMIC_SEQ_CST);
            while (__atomic_load_n(&p->epoch, __ATOMIC_SEQ_CST) == seen &&
                   !__atomic_load_n(&p->stopping, __ATOMIC_ACQUIRE))
                pthread_cond_wait(&p->wake, &p->lock);
            __atomic_fetch_sub(&p->sleepers, 1, __ATOMIC_SEQ_CST);
            pthread_mutex_unlock(&p->lock);
            spin = 0;
        }
        seen = now;
        if (w->index < p->parts) {
            int64_t begin, end;
            job_pool_part(p->count, p->parts, w->index, &begin, &end);
            p->task(p->task_user, begin, end);
        }
        __atomic_fetch_sub(&p->unanswered, 1, __ATOMIC_ACQ_REL);
    }
}

/* tl_executor's parallel_for. */
static void job_pool_parallel_for(void *user, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    job_pool *p = (job_pool *)user;
    int64_t parts = grain > 0 ? count / grain : count;
    if (parts > p->threads) parts = p->threads;
    if (parts <= 1) {
        task(task_user, 0, count);
        return;
    }
    p->task = task, p->task_user = task_user, p->count = count, p->parts = parts;
    __atomic_store_n(&p->unanswered, p->threads - 1, __ATOMIC_RELAXED);
    /* Both sequentially consistent: either a worker going to sleep sees the new epoch, or this
     * sees it among the sleepers and wakes it. */
    __atomic_fetch_add(&p->epoch, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }
    int64_t begin, end;
    job_pool_part(count, parts, 0, &begin, &end);
    task(task_user, begin, end);
    while (__atomic_load_n(&p->unanswered, __ATOMIC_ACQUIRE) > 0) job_pool_pause();
}

/* Starts threads - 1 workers (threads from 1 to JOB_POOL_MAX_THREADS); 0 on success. */
static inline int job_pool_start(job_pool *p, int threads) {
    if (threads < 1 || threads > JOB_POOL_MAX_THREADS) return -1;
    p->threads = threads;
    p->task = NULL, p->task_user = NULL, p->count = 0, p->parts = 0;
    p->epoch = 0, p->unanswered = 0, p->sleepers = 0, p->stopping = 0;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    for (int i = 1; i < threads; ++i) {
        p->worker[i].pool = p, p->worker[i].index = i;
        if (pthread_create(&p->worker[i].thread, NULL, job_pool_worker_main, &p->worker[i]) != 0) return -1;
    }
    return 0;
}

static inline tl_executor job_pool_executor(job_pool *p) {
    tl_executor ex = {p, job_pool_parallel_for};
    return ex;
}

static inline void job_pool_stop(job_pool *p) {
    pthread_mutex_lock(&p->lock);
    __atomic_store_n(&p->stopping, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 1; i < p->threads; ++i) pthread_join(p->worker[i].thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
}
#endif
