/* Under AddressSanitizer a scope's slab is poisoned at reset and each allocation unpoisons
 * exactly its own bytes, so a raw tl_tensor_data pointer used after the reset, or past the end
 * of its tensor into the padding that rounds it to 64 bytes, is reported, not silently read.
 * Built only with ASan (tests/CMakeLists.txt). */
#include <signal.h>

#include "common.h"

#if defined(__SANITIZE_ADDRESS__) /* gcc */
#elif defined(__has_feature)      /* clang */
#  if !__has_feature(address_sanitizer)
#    error "the poison suite tests what AddressSanitizer reports: build it with TL_SANITIZE=address"
#  endif
#else
#  error "the poison suite tests what AddressSanitizer reports: build it with TL_SANITIZE=address"
#endif

static float *stale_pointer(tl_context **ctx_out) {
    tl_context *ctx;
    OK(tl_context_create(NULL, &ctx));
    tl_scope s;
    OK(tl_scope_open(ctx, "poisoned", 1 << 16, &s));
    const int64_t n = 256;
    tl_tensor t;
    OK(tl_tensor_ones(ctx, TL_F32, 1, &n, &t));
    void *p;
    OK(tl_tensor_data(ctx, t, &p));
    ((float *)p)[10] = 5; /* fine while the tensor lives */
    OK(tl_scope_reset(ctx, s));
    *ctx_out = ctx;
    return p;
}

/* ASan reports and exits with its exit code (1) unless abort_on_error asks for SIGABRT. */
Test(poison, write_through_a_pointer_after_reset_is_reported, .exit_code = 1) {
    tl_context *ctx;
    float *p = stale_pointer(&ctx);
    p[10] = 7; /* use after reset */
    cr_log_error("the stale write was not reported");
    exit(0);
}

/* 10 floats take 40 bytes of a 64-byte placement: element 12 is padding, no tensor's. */
Test(poison, write_into_a_tensors_rounding_padding_is_reported, .exit_code = 1) {
    tl_context *ctx;
    OK(tl_context_create(NULL, &ctx));
    tl_scope s;
    OK(tl_scope_open(ctx, "padded", 1 << 16, &s));
    const int64_t n = 10;
    tl_tensor t, next;
    OK(tl_tensor_ones(ctx, TL_F32, 1, &n, &t));
    OK(tl_tensor_ones(ctx, TL_F32, 1, &n, &next));
    float *p;
    OK(tl_tensor_data(ctx, t, (void **)&p));
    p[9] = 2;  /* its last element: fine */
    p[12] = 7; /* past its end, before the next tensor */
    cr_log_error("the write into the padding was not reported");
    exit(0);
}

Test(poison, read_through_a_pointer_after_reset_is_reported, .exit_code = 1) {
    tl_context *ctx;
    volatile float *p = stale_pointer(&ctx);
    float x = p[3];
    cr_log_error("the stale read was not reported (%g)", x);
    exit(0);
}

Test(poison, new_tensors_after_reset_are_usable) {
    tl_context *ctx;
    stale_pointer(&ctx);
    const int64_t n = 256;
    tl_tensor t;
    OK(tl_tensor_zeros(ctx, TL_F32, 1, &n, &t)); /* unpoisoned by its allocation */
    void *p;
    OK(tl_tensor_data(ctx, t, &p));
    ((float *)p)[255] = 1;
    tl_context_destroy(ctx);
}
