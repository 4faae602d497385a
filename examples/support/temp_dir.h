/* Where the programs beside the library put their scratch files: $TMPDIR when it is set (as
 * POSIX says), /tmp otherwise, so that a machine whose /tmp is small or read-only still runs them. */
#ifndef TL_PROGRAM_TEMP_DIR_H
#define TL_PROGRAM_TEMP_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#  include <direct.h>
#  include <io.h>
#else
#  include <unistd.h>
#endif

static inline const char *temp_root(void) {
#ifdef _WIN32
    const char *dir = getenv("TEMP"); /* Windows' own, set for every process */
    if (!dir || !*dir) dir = getenv("TMP");
    return dir && *dir ? dir : ".";
#else
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
#endif
}

/* A fresh private folder tl-TAG-XXXXXX under temp_root(), its path into dir: 0, or -1. */
static inline int temp_dir_make(char *dir, size_t n, const char *tag) {
#ifdef _WIN32
    for (int attempt = 0; attempt < 100; ++attempt) {
        snprintf(dir, n, "%s\\tl-%s-XXXXXX", temp_root(), tag);
        if (_mktemp_s(dir, strlen(dir) + 1) != 0) return -1;
        if (_mkdir(dir) == 0) return 0;
    }
    return -1;
#else
    snprintf(dir, n, "%s/tl-%s-XXXXXX", temp_root(), tag);
    return mkdtemp(dir) ? 0 : -1;
#endif
}

#endif
