/* The thread tests' check: a failed call ends the program with the library's message. */
#ifndef TL_TESTS_THREADS_CHECK_H
#define TL_TESTS_THREADS_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <tensorlife/tl.h>

#define CHECK(call)                                                           \
    do {                                                                      \
        tl_status st_ = (call);                                               \
        if (st_ != TL_OK) {                                                   \
            fprintf(stderr, "%s: %s\n", #call, tl_last_error());             \
            exit(1);                                                          \
        }                                                                     \
    } while (0)
#endif
