/* Timing for the benchmarks: the median of repeated runs, so one noisy run does not decide. */
#ifndef TL_BENCH_UTIL_H
#define TL_BENCH_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <tensorlife/tl.h>

#include "check.h" /* TL_CHECK: a failed call ends a benchmark */
#include <time.h>

static inline double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `reps` runs of fn(arg), each run timed whole and divided by `per_run` operations. */
static inline double median_ns(int reps, double per_run, void (*fn)(void *), void *arg) {
    double samples[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps; ++r) {
        double t0 = now_ns();
        fn(arg);
        samples[r] = (now_ns() - t0) / per_run;
    }
    qsort(samples, (size_t)reps, sizeof samples[0], compare_doubles);
    return samples[reps / 2];
}

/* OpenBLAS's idle workers spin (sched_yield) for about 0.1 s after the last call that used them
 * before they sleep; on this 2-core machine they would take a core from whatever is measured next
 * on other threads (a job pool).  Called after a measurement on OpenBLAS's threads. */
static inline void let_blas_workers_sleep(void) {
    const struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

/* How fast each processor this process may run on is now (cpu_speeds.c): ns an iteration of a
 * chain of `iterations` adds through memory on each, into ns[0..max); how many (0: not measured). */
enum { MAX_CPU_SPEEDS = 64 };
int cpu_speeds(double *ns, int max, int iterations);
/* Whether every processor of ns (from cpu_speeds) ran within 15% of its fastest this run. */
int cpu_speeds_at_full(const double *ns, int n);
/* Prints cpu_speeds, `when` its label. */
void print_cpu_speeds(const char *when);

/* Sorts v and gives its min, median and max. */
static inline void spread3(double *v, int n, double *lo, double *mid, double *hi) {
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    *lo = v[0], *mid = v[n / 2], *hi = v[n - 1];
}
#endif
