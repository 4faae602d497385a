/* Where the programs beside the library put their scratch files: $TMPDIR when it is set (as
 * POSIX says), /tmp otherwise, so that a machine whose /tmp is small or read-only still runs them. */
#ifndef TL_PROGRAM_TEMP_DIR_H
#define TL_PROGRAM_TEMP_DIR_H

#include <stdlib.h>

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

#endif
