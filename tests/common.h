/* Helpers shared by the conformance suite. */
#ifndef TL_TESTS_COMMON_H
#define TL_TESTS_COMMON_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorlife/tl.h>

#include "aligned_block.h"
#include "counting_allocator.h"
#include "process_probe.h"
#include "temp_dir.h"

/* Asserts success and shows the library's message when it fails. */
#define OK(call)                                                                                           \
  do {                                                                                                     \
    tl_status ok_status_ = (call);                                                                         \
    cr_assert_eq(ok_status_, TL_OK, "%s -> %s: %s", #call, tl_status_string(ok_status_), tl_last_error()); \
  } while (0)

#define FAILS_WITH(call, code)                                                                                         \
  do {                                                                                                                 \
    tl_status fw_status_ = (call);                                                                                     \
    cr_assert_eq(fw_status_, (code), "%s -> %s (%s), wanted %s", #call, tl_status_string(fw_status_), tl_last_error(), \
                 tl_status_string(code));                                                                              \
  } while (0)

/* The call fails with code and its message holds text. */
#define REFUSED_WITH(call, code, text)                                                         \
  do {                                                                                         \
    FAILS_WITH(call, code);                                                                    \
    cr_assert(strstr(tl_last_error(), text), "%s: \"%s\" lacks \"%s\"", #call, tl_last_error(), text); \
  } while (0)

/* TL_TEST_NO_THREADS, set with its reason by scripts/cross.sh where an emulator cannot start a
 * thread (qemu-user on some hosts hangs in every pthread_create): a case that needs a second
 * thread is skipped, and counted, with that reason. */
#define NEEDS_THREADS()                                                                  \
  do {                                                                                   \
    if (getenv("TL_TEST_NO_THREADS"))                                                    \
      cr_skip_test("needs a second thread, and %s", getenv("TL_TEST_NO_THREADS"));       \
  } while (0)

/* The usual fixture: a fresh context, ctx, for each test of the suite. */
#define CONTEXT_SUITE(suite)                                             \
  static tl_context *ctx;                                                \
  static void suite##_setup(void) { OK(tl_context_create(NULL, &ctx)); } \
  static void suite##_teardown(void) { tl_context_destroy(ctx); }        \
  TestSuite(suite, .init = suite##_setup, .fini = suite##_teardown)

/* A fresh private directory for a test's files (temp_dir_make), and its removal with everything in it. */
static inline void temp_dir_create(char *dir, size_t n, const char *tag) {
    cr_assert_eq(temp_dir_make(dir, n, tag), 0, "no fresh directory under %s", temp_root());
}
static inline void temp_dir_remove(const char *dir) {
    char cmd[300];
#ifdef _WIN32
    snprintf(cmd, sizeof cmd, "rmdir /s /q \"%s\"", dir);
#else
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
#endif
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The fixture of suites that write files: a fresh context, ctx, and a fresh private
 * directory, dir (removed with everything in it after each test). */
#define CONTEXT_AND_DIR_SUITE(suite)          \
  static tl_context *ctx;                     \
  static char dir[256];                       \
  static void suite##_setup(void) {           \
    OK(tl_context_create(NULL, &ctx));        \
    temp_dir_create(dir, sizeof dir, #suite); \
  }                                           \
  static void suite##_teardown(void) {        \
    tl_context_destroy(ctx);                  \
    temp_dir_remove(dir);                     \
  }                                           \
  TestSuite(suite, .init = suite##_setup, .fini = suite##_teardown)

/* Deterministic pseudo-random floats in [-1, 1). */
static inline float rand_unit(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)((*state >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

static inline tl_tensor make_f32(tl_context *ctx, int ndim, const int64_t *shape, const float *data) {
    size_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= (size_t)shape[i];
    tl_tensor t = {0};
    OK(tl_tensor_from_data(ctx, TL_F32, ndim, shape, data, n * sizeof(float), &t));
    return t;
}

static inline void read_f32(tl_context *ctx, tl_tensor t, float *dst, size_t n) {
    OK(tl_tensor_read(ctx, t, dst, n * sizeof(float)));
}

static inline void assert_close(const float *got, const float *want, size_t n, float tol) {
    for (size_t i = 0; i < n; ++i)
        cr_assert(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])), "element %zu: got %.9g, want %.9g", i,
                  got[i], want[i]);
}

static inline tl_scope_stats stats_of_scope(tl_context *c, tl_scope s) {
    tl_scope_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    OK(tl_scope_stats_get(c, s, &st));
    return st;
}
/* The stats of scope s of the suite's ctx. */
#define stats_of(s) stats_of_scope(ctx, s)
/* Two scope handles name the same scope (or both none). */
#define SAME_SCOPE(a, b) ((a).bits == (b).bits)

#endif
