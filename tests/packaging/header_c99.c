/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror: the public header is plain C99. */
#include <tensorlife/tl.h>

int main(void) {
    tl_tensor t = {0};
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT; /* the INIT macros are C99 too */
    tl_scope_stats st = TL_SCOPE_STATS_INIT;
    tl_tensor_info info = TL_TENSOR_INFO_INIT;
    return tl_status_string(TL_OK)[0] == 'T' && t.bits == 0 && o.struct_size == sizeof o && o.growth == TL_GROW &&
                   st.struct_size == sizeof st && info.struct_size == sizeof info
               ? 0
               : 1;
}
