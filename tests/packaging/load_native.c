/* Loads a binding's native layer the way its runtime does (native_library.h) and calls its
 * entry point that returns tlb_abi_version(), which uses no runtime (SWIG's C# one by default,
 * or the JNI one named).  Where no .NET or JVM runs (wine, qemu-user here), this is what checks
 * the package's natives.
 *   load_native LIBRARY [ENTRY_POINT] */
#include <stdio.h>
#include <tensorlife/tl_base.h>
#include "native_library.h"

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: load_native LIBRARY [ENTRY_POINT]\n");
        return 2;
    }
    const char *entry = argc == 3 ? argv[2] : "CSharp_TensorLifefRaw_tlb_abi_version___";
    void *lib = native_load(argv[1], 0);
    if (!lib) return 1;
    void (*found)(void) = native_find(lib, entry);
    if (!found) return 1;
    /* JNI's entry takes (env, class), which it does not use; C#'s takes nothing. */
    const int got = argc == 3 ? ((int (*)(void *, void *))found)(NULL, NULL) : ((int (*)(void))found)();
    printf("%s: loaded, %s() = %d\n", argv[1], entry, got);
    return got == TL_ABI_VERSION ? 0 : 1;
}
