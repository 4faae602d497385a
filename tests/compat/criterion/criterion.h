/* The part of Criterion's API the conformance suites use, for the targets where Criterion
 * itself does not serve: Windows (Criterion and its process server do not build with
 * mingw-w64 from Debian's sources) and arm64 under qemu-user (Criterion's runner spins forever
 * there before its first test).  scripts/cross.sh builds the same suite sources against it.
 *
 * Each case runs in a process of its own, as under Criterion (a crash or an exit fails that case
 * alone): the runner starts itself again with --tl-case N (fork on POSIX, _spawnv on Windows).
 * Every case prints one line, PASS, FAIL or SKIP with the reason, and the run ends with
 * Criterion's synthesis line, so a case left out shows in the counts. */
#ifndef TL_COMPAT_CRITERION_H
#define TL_COMPAT_CRITERION_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#  include <process.h>
#else
#  include <spawn.h>
#  include <sys/wait.h>
#  include <unistd.h>
extern char **environ;
#endif

/* A case's or a suite's options; each Test(...) and TestSuite(...) fills some by name. */
struct tlc_options {
    int unused_; /* lets an empty option list be "{ .unused_ = 0, }" */
    void (*init)(void);
    void (*fini)(void);
    int exit_code;
    double timeout; /* seconds, POSIX only (alarm) */
};
struct tlc_case {
    const char *suite, *name, *file;
    int line;
    void (*body)(void);
    struct tlc_options options;
    struct tlc_case *next;
};
struct tlc_suite {
    const char *name;
    struct tlc_options options;
    struct tlc_suite *next;
};

/* Each suite is one program of one source file: the lists are that file's. */
static struct tlc_case *tlc_cases;
static struct tlc_suite *tlc_suites;
static void (*tlc_current_fini)(void);

enum { TLC_EXIT_FAILED = 101, TLC_EXIT_SKIPPED = 102, TLC_MAX_CASES = 4096 };

#define TLC_CAT_(a, b) a##b
#define TLC_CAT(a, b) TLC_CAT_(a, b)

#define Test(suite, name, ...)                                                                   \
    static void tlc_body_##suite##_##name(void);                                                 \
    static struct tlc_case tlc_case_##suite##_##name = {#suite, #name, __FILE__, __LINE__,       \
                                                        tlc_body_##suite##_##name,               \
                                                        {.unused_ = 0, __VA_ARGS__}, NULL};      \
    __attribute__((constructor)) static void tlc_register_##suite##_##name(void) {               \
        tlc_case_##suite##_##name.next = tlc_cases;                                              \
        tlc_cases = &tlc_case_##suite##_##name;                                                  \
    }                                                                                            \
    static void tlc_body_##suite##_##name(void)

#define TestSuite(suite, ...)                                                                    \
    static struct tlc_suite tlc_suite_##suite = {#suite, {.unused_ = 0, __VA_ARGS__}, NULL};     \
    __attribute__((constructor)) static void tlc_register_suite_##suite(void) {                  \
        tlc_suite_##suite.next = tlc_suites;                                                     \
        tlc_suites = &tlc_suite_##suite;                                                         \
    }

static void tlc_end_case(int code) {
    void (*fini)(void) = tlc_current_fini;
    tlc_current_fini = NULL; /* a failing fini does not run twice */
    if (fini && code != TLC_EXIT_SKIPPED) fini();
    fflush(stdout);
    fflush(stderr);
    exit(code);
}

static void tlc_fail(const char *file, int line, const char *expr, const char *format, ...) {
    fprintf(stderr, "[----] %s:%d: Assertion failed: ", file, line);
    if (format[0]) {
        va_list args;
        va_start(args, format);
        vfprintf(stderr, format, args);
        va_end(args);
    } else {
        fputs(expr, stderr);
    }
    fputc('\n', stderr);
    tlc_end_case(TLC_EXIT_FAILED);
}

#define cr_assert(cond, ...) \
    do { \
        if (!(cond)) tlc_fail(__FILE__, __LINE__, "The expression " #cond " is false.", "" __VA_ARGS__); \
    } while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert((a) && (b) && strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_arr_eq(a, b, size, ...) cr_assert(memcmp((a), (b), (size)) == 0, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...) cr_assert(fabs((double)(a) - (double)(b)) <= (eps), __VA_ARGS__)
#define cr_assert_fail(...) tlc_fail(__FILE__, __LINE__, "The assertion failed.", "" __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fputc('\n', stderr))
#define cr_log_error(...) (fprintf(stderr, "[ERR ] " __VA_ARGS__), fputc('\n', stderr))
#define cr_skip_test(...) \
    (fprintf(stderr, "[SKIP] " __VA_ARGS__), fputc('\n', stderr), tlc_end_case(TLC_EXIT_SKIPPED))

/* A case's options: its own, else its suite's (TestSuite), else none. */
static struct tlc_options tlc_options_of(const struct tlc_case *c) {
    struct tlc_options o = c->options;
    for (const struct tlc_suite *s = tlc_suites; s; s = s->next) {
        if (strcmp(s->name, c->suite) != 0) continue;
        if (!o.init) o.init = s->options.init;
        if (!o.fini) o.fini = s->options.fini;
        if (!o.exit_code) o.exit_code = s->options.exit_code;
        if (!(o.timeout > 0)) o.timeout = s->options.timeout;
    }
    return o;
}

/* The cases in source order (registration order differs between linkers); -1 when there are
 * more than TLC_MAX_CASES (none is left out silently). */
static int tlc_sorted(struct tlc_case **out) {
    int n = 0;
    for (struct tlc_case *c = tlc_cases; c; c = c->next) {
        if (n == TLC_MAX_CASES) return -1;
        out[n++] = c;
    }
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && out[j - 1]->line > out[j]->line; --j) {
            struct tlc_case *t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static int tlc_run_here(const struct tlc_case *c) {
    const struct tlc_options o = tlc_options_of(c);
    tlc_current_fini = o.fini;
#ifndef _WIN32
    if (o.timeout > 0) alarm((unsigned)ceil(o.timeout));
#endif
    if (o.init) o.init();
    c->body();
    tlc_end_case(0);
    return 0;
}

/* Runs case `index` in a process of its own, this program started again (never fork: a forked
 * child spins forever under qemu-user); its exit status, or -1 when it crashed.  TLC_LAUNCHER,
 * words separated by spaces, goes before the program: the emulator under qemu-user, where an
 * arm64 program cannot start another without it. */
static int tlc_run_apart(const char *self, int index) {
    char arg[32];
    snprintf(arg, sizeof arg, "%d", index);
    fflush(stdout);
    fflush(stderr);
#ifdef _WIN32
    const char *args[] = {self, "--tl-case", arg, NULL};
    const intptr_t status = _spawnv(_P_WAIT, self, args);
    /* Told apart on stderr: a case that never started is the machine's trouble, not the code's. */
    if (status < 0) fprintf(stderr, "[ERR ] case %d did not start: %s\n", index, strerror(errno));
    if (status >= 0xC0000000LL) fprintf(stderr, "[ERR ] case %d ended with NTSTATUS 0x%llx\n", index, (unsigned long long)status);
    return status < 0 || status >= 0xC0000000LL ? -1 : (int)status; /* NTSTATUS codes: a crash */
#else
    static char launcher[1024];
    char *args[64];
    int n = 0;
    const char *words = getenv("TLC_LAUNCHER");
    snprintf(launcher, sizeof launcher, "%s", words ? words : "");
    for (char *w = strtok(launcher, " "); w && n < 60; w = strtok(NULL, " ")) args[n++] = w;
    args[n++] = (char *)self;
    args[n++] = (char *)"--tl-case";
    args[n++] = arg;
    args[n] = NULL;
    pid_t pid;
    if (posix_spawnp(&pid, args[0], NULL, NULL, args, environ) != 0) return -1;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
}

int main(int argc, char **argv) {
    struct tlc_case *cases[TLC_MAX_CASES];
    const int n = tlc_sorted(cases);
    if (n < 0) {
        fprintf(stderr, "%s: more than %d cases: raise TLC_MAX_CASES\n", argv[0], TLC_MAX_CASES);
        return 1;
    }
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--jobs N] [--short-filename] [--verbose]\n"
                   "Runs this suite's %d cases, each in a process of its own (tests/compat: Criterion's API\n"
                   "where Criterion itself does not run); exit status 0 when every case passed.\n",
                   argv[0], n);
            return 0;
        }
        if (strcmp(argv[i], "--tl-case") == 0 && i + 1 < argc) {
            const int index = atoi(argv[i + 1]);
            if (index < 0 || index >= n) return 2;
            return tlc_run_here(cases[index]);
        }
    }
    int passed = 0, failed = 0, crashed = 0, skipped = 0;
    for (int i = 0; i < n; ++i) {
        const struct tlc_case *c = cases[i];
        const int expected = tlc_options_of(c).exit_code;
        const int status = tlc_run_apart(argv[0], i);
        const char *verdict = "PASS";
        if (status == TLC_EXIT_SKIPPED) {
            verdict = "SKIP", ++skipped;
        } else if (status == expected) {
            ++passed;
        } else if (status < 0) {
            verdict = "CRASH", ++crashed;
        } else {
            verdict = "FAIL", ++failed;
        }
        fprintf(stderr, "[%-4s] %s::%s", verdict, c->suite, c->name);
        if (status != expected && status != TLC_EXIT_SKIPPED) fprintf(stderr, " (exit status %d, wanted %d)", status, expected);
        fputc('\n', stderr);
    }
    fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d | Skipped: %d\n",
           passed + failed + crashed, passed, failed + crashed, crashed, skipped);
    return failed + crashed ? 1 : 0;
}

#endif
