/* An outside program: built against an installed tensorlife, by pkg-config or find_package. */
#include <stdio.h>
#include <string.h>
#include <tensorlife/tl.h>

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        puts("usage: consumer\nA 2x2 product in a scope, through the installed library.");
        return 0;
    }
    tl_context *ctx;
    tl_scope step;
    if (tl_context_create(NULL, &ctx) != TL_OK) return 1;
    if (tl_scope_open(ctx, "consumer", 4096, &step) != TL_OK) return 2;
    const int64_t shape[2] = {2, 2};
    const float a[4] = {1, 2, 3, 4};
    tl_tensor x, y;
    float got[4];
    if (tl_tensor_from_data(ctx, TL_F32, 2, shape, a, sizeof a, &x) != TL_OK) return 3;
    if (tl_matmul(ctx, x, x, &y) != TL_OK) return 4;
    if (tl_tensor_read(ctx, y, got, sizeof got) != TL_OK) return 5;
    if (got[0] != 7 || got[1] != 10 || got[2] != 15 || got[3] != 22) return 6;
    tl_scope_reset(ctx, step);
    if (tl_tensor_read(ctx, y, got, sizeof got) != TL_E_STORAGE_CLOSED) return 7;
    printf("consumer ok: tensorlife %s, %s\n", tl_version_string(), tl_last_error());
    tl_scope_close(ctx, step);
    tl_context_destroy(ctx);
    return 0;
}
