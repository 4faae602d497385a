#include <tensorlife/tl.h>
#include <stdio.h>

int main(void) {
    tl_context *ctx;  tl_scope step;   tl_tensor w, x, y;  float out[4];
    const int64_t shape[2] = {2, 2};
    const float weights[4] = {1, 2, 3, 4}, input[4] = {1, 0, 0, 1};
    tl_context_create(NULL, &ctx);
    tl_tensor_from_data(ctx, TL_F32, 2, shape, weights, sizeof weights, &w); /* ambient */
    tl_scope_open(ctx, "decode-step", 1 << 16, &step);
    for (int i = 0; i < 100; ++i) {
        tl_tensor_from_data(ctx, TL_F32, 2, shape, input, sizeof input, &x); /* in the slab */
        tl_matmul(ctx, x, w, &y);
        tl_scope_reset(ctx, step);              /* x and y die; nothing is freed */
    }
    if (tl_tensor_read(ctx, y, out, sizeof out) == TL_E_STORAGE_CLOSED)
        printf("%s\n", tl_last_error());          /* storage 'decode-step' #1 gen 99 is closed ... */
    tl_scope_close(ctx, step);
    tl_tensor_free(ctx, w);  tl_context_destroy(ctx);
}
