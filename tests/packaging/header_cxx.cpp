// The public header compiles as C++ too, with the same declarations.
#include <tensorlife/tl.h>

int main() {
    tl_context *ctx = nullptr;
    if (tl_context_create(nullptr, &ctx) != TL_OK) return 1;
    tl_context_destroy(ctx);
    return 0;
}
