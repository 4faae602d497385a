/* This process's resident memory in KiB (the working set on Windows), or -1 when the system
 * does not say: for the benchmarks' and tests' memory figures and bounds. */
#ifndef TL_PROGRAM_RESIDENT_MEMORY_H
#define TL_PROGRAM_RESIDENT_MEMORY_H

#include <stdio.h>
#ifdef _WIN32
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <psapi.h>
#else
#  include <unistd.h>
#endif

static inline long resident_kib(void) {
#ifdef _WIN32
    PROCESS_MEMORY_COUNTERS counters;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return -1;
    return (long)(counters.WorkingSetSize / 1024);
#else
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    if (f) fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
#endif
}

#endif
