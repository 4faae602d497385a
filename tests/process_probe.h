/* What the suites ask the system about their own process, on POSIX and on Windows: resident
 * memory, whether a file is mapped, a folder's entries. */
#ifndef TL_TESTS_PROCESS_PROBE_H
#define TL_TESTS_PROCESS_PROBE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <psapi.h>

static inline long resident_kib(void) {
    PROCESS_MEMORY_COUNTERS counters;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return -1;
    return (long)(counters.WorkingSetSize / 1024);
}

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
    if (h == INVALID_HANDLE_VALUE) return -1;
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

static inline long resident_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    if (f) fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static inline int file_is_mapped(const char *path) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    while (maps && fgets(line, sizeof line, maps)) found |= strstr(line, path) != NULL;
    if (maps) fclose(maps);
    return found;
}

static inline int dir_entry_count(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

#endif

#endif
