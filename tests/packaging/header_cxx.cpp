// The public header compiles as C++ too, with the same declarations.
#include <tensorlife/tl.h>

#include "usage.h"

int main(int argc, char **argv) {
    no_arguments(argc, argv,
                 "usage: header_cxx\nThe public header used from C++: the INIT macros set each struct's size.\n");
    tl_context *ctx = nullptr;
    if (tl_context_create(nullptr, &ctx) != TL_OK) return 1;
    // The INIT macros compile as C++ (no narrowing, no designated initializers) and set the size.
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    if (o.struct_size != sizeof o || st.struct_size != sizeof st || info.struct_size != sizeof info) return 1;
    tl_context_destroy(ctx);
    return 0;
}
