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

void print_cpu_speeds(const char *when) {
#ifdef __linux__
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    printf("processors %s (a chain of adds through memory pinned to each, ns an iteration):", when);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
        enum { ITERATIONS = 50 * 1000 * 1000 };
        volatile unsigned through_memory = 0;
        const double t0 = now_ns();
        for (int i = 0; i < ITERATIONS; ++i) through_memory = through_memory + 1;
        const double ns = (now_ns() - t0) / ITERATIONS;
        printf(" cpu%d %.2f", cpu, ns);
    }
    sched_setaffinity(0, sizeof allowed, &allowed);
    printf("\n");
#else
    printf("processors %s: not measured on this system\n", when);
#endif
}
