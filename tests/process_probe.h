/* What the suites ask the system about their own process, on POSIX and on Windows: resident
 * memory (examples/support's, shared with the benchmarks), whether a file is mapped, a folder's
 * entries.  Included after Criterion's header: a probe the system does not answer fails the case. */
#ifndef TL_TESTS_PROCESS_PROBE_H
#define TL_TESTS_PROCESS_PROBE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resident_memory.h" /* windows.h and psapi.h on Windows */

#ifdef _WIN32

/* path's last two components (the test's private folder and the file) end a mapped view's name. */
static inline int file_is_mapped(const char *path) {
    const char *tail = path + strlen(path);
    for (int seps = 0; tail > path; --tail)
        if ((tail[-1] == '/' || tail[-1] == '\\') && ++seps == 2) break;
    char want[MAX_PATH];
    snprintf(want, sizeof want, "%s", tail);
    for (char *c = want; *c; ++c)
        if (*c == '/') *c = '\\';
    int found = 0;
    MEMORY_BASIC_INFORMATION info;
    for (char *at = NULL; VirtualQuery(at, &info, sizeof info) == sizeof info; at = (char *)info.BaseAddress + info.RegionSize) {
        char name[MAX_PATH * 2];
        if (info.State == MEM_COMMIT && info.Type == MEM_MAPPED &&
            GetMappedFileNameA(GetCurrentProcess(), info.BaseAddress, name, sizeof name)) {
            const size_t n = strlen(name), w = strlen(want);
            found |= n >= w && _stricmp(name + n - w, want) == 0;
        }
    }
    return found;
}

static inline int dir_entry_count(const char *dir) {
    char pattern[MAX_PATH];
    snprintf(pattern, sizeof pattern, "%s\\*", dir);
    WIN32_FIND_DATAA entry;
    HANDLE h = FindFirstFileA(pattern, &entry);
    cr_assert_neq(h, INVALID_HANDLE_VALUE, "FindFirstFile %s", pattern);
    int n = 0;
    do n += strcmp(entry.cFileName, ".") != 0 && strcmp(entry.cFileName, "..") != 0;
    while (FindNextFileA(h, &entry));
    FindClose(h);
    return n;
}

#  define RUNNING_ON_VALGRIND 0

#else
#  include <dirent.h>
#  include <unistd.h>
#  include <valgrind/valgrind.h>

static inline int file_is_mapped(const char *path) {
    FILE *maps = fopen("/proc/self/maps", "r");
    cr_assert_not_null(maps, "/proc/self/maps is not readable");
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, maps)) found |= strstr(line, path) != NULL;
    fclose(maps);
    return found;
}

static inline int dir_entry_count(const char *dir) {
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

#endif

#endif
