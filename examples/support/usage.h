/* Command lines of the programs beside the library (examples, benchmarks, thread tests): every
 * one answers --help (or -h) with its usage on stdout and exit status 0, and refuses a flag it
 * does not know with the usage on stderr and exit status 2. */
#ifndef TL_PROGRAM_USAGE_H
#define TL_PROGRAM_USAGE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exits 0 after printing usage when argv holds --help or -h; returns otherwise. */
static inline void answer_help(int argc, char **argv, const char *usage) {
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            exit(0);
        }
}

/* Exits 2 with the usage on stderr, naming the argument it did not take. */
static inline void refuse_argument(const char *arg, const char *usage) {
    fprintf(stderr, "unknown argument: %s\n%s", arg, usage);
    exit(2);
}

/* The benchmarks' one flag: 1 when --quick was given (fewer, shorter rounds); --help answered,
 * anything else refused. */
static inline int quick_flag(int argc, char **argv, const char *usage) {
    answer_help(argc, argv, usage);
    int quick = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else
            refuse_argument(argv[i], usage);
    }
    return quick;
}

/* A program that takes no arguments but --help. */
static inline void no_arguments(int argc, char **argv, const char *usage) {
    answer_help(argc, argv, usage);
    if (argc > 1) refuse_argument(argv[1], usage);
}

#endif
