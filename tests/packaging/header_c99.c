/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror: the public header is plain C99. */
#include <tensorlife/tl.h>

int main(void) {
    tl_tensor t = {0};
    tl_scope_options o = {sizeof o, TL_GROW, 0, 0};
    (void)o;
    return tl_status_string(TL_OK)[0] == 'T' && t.bits == 0 ? 0 : 1;
}
