/* The one check for the programs beside the library (examples, benchmarks, thread tests): a
 * failed call ends the program, naming the call, where it was, its status and the library's
 * message.  (The Criterion suites assert with OK and FAILS_WITH in tests/common.h instead.) */
#ifndef TL_SUPPORT_CHECK_H
#define TL_SUPPORT_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <tensorlife/tl.h>

static inline void tl_check_status(tl_status st, const char *what, const char *file, int line) {
    if (st == TL_OK) return;
    fprintf(stderr, "%s:%d: %s -> %s: %s\n", file, line, what, tl_status_string(st), tl_last_error());
    exit(1);
}
#define TL_CHECK(call) tl_check_status((call), #call, __FILE__, __LINE__)

/* An allocation's result checked: NULL ends the program, naming what it was for. */
static inline void *tl_check_alloc(void *p, const char *what) {
    if (p) return p;
    fprintf(stderr, "out of memory: %s\n", what);
    exit(1);
}
#endif
