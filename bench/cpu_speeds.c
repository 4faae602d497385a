/* How fast each processor this process may run on is now: a chain of adds through memory (each
 * loads what the last stored) pinned to each in turn, ns an iteration.  On a shared Zen 5 VM such
 * a chain took 0.30 ns on a processor at one moment and 0.52 at another, one processor at a time,
 * and a 16-float tl_add 25 or 50 ns with it; a register chain did not show it.  A benchmark's
 * spread and a static split between threads follow it.  Linux only (elsewhere a line says so). */
#define _GNU_SOURCE
#include "bench_util.h"

#ifdef __linux__
#  include <sched.h>
#endif

/* Each processor's fastest chain this run (by position among the allowed ones), 0 unmeasured. */
static double fastest[MAX_CPU_SPEEDS];
static int cpu_ids[MAX_CPU_SPEEDS]; /* which processor each position is */

int cpu_speeds(double *ns, int max, int iterations) {
    int n = 0;
#ifdef __linux__
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < max && n < MAX_CPU_SPEEDS; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
        /* The best of four parts: a thread still spinning there (a pool's worker, OpenBLAS's after
         * its last call) takes whole time slices, so one part or more runs alone. */
        ns[n] = 0;
        for (int part = 0; part < 4; ++part) {
            volatile unsigned through_memory = 0;
            const double t0 = now_ns();
            for (int i = 0; i < iterations / 4; ++i) through_memory = through_memory + 1;
            const double t = (now_ns() - t0) / (iterations / 4);
            if (part == 0 || t < ns[n]) ns[n] = t;
        }
        cpu_ids[n] = cpu;
        if (fastest[n] == 0 || ns[n] < fastest[n]) fastest[n] = ns[n];
        ++n;
    }
    sched_setaffinity(0, sizeof allowed, &allowed);
#else
    (void)ns, (void)max, (void)iterations;
#endif
    return n;
}

int cpu_speeds_at_full(const double *ns, int n) {
    for (int i = 0; i < n; ++i)
        if (ns[i] > 1.15 * fastest[i]) return 0;
    return 1;
}

void print_cpu_speeds(const char *when) {
    double ns[MAX_CPU_SPEEDS];
    const int n = cpu_speeds(ns, MAX_CPU_SPEEDS, 50 * 1000 * 1000);
    if (n == 0) {
        printf("processors %s: not measured on this system\n", when);
        return;
    }
    printf("processors %s (a chain of adds through memory pinned to each, ns an iteration):", when);
    for (int i = 0; i < n; ++i) printf(" cpu%d %.2f", cpu_ids[i], ns[i]);
    printf("\n");
}
