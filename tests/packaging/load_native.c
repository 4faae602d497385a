/* Loads a binding's native layer the way its runtime does (LoadLibrary on Windows, dlopen
 * elsewhere: a library beside it found by the loader alone) and calls its entry point that
 * returns tlb_abi_version(), which uses no runtime (SWIG's C# one by default, or the JNI one named).
 * Where no .NET or JVM runs (wine, qemu-user here), this is what checks the package's natives.
 *   load_native LIBRARY [ENTRY_POINT] */
#include <stdio.h>
#include <tensorlife/tl_base.h>
#ifdef _WIN32
#  include <windows.h>
#else
#  include <dlfcn.h>
#endif

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: load_native LIBRARY [ENTRY_POINT]\n");
        return 2;
    }
    const char *entry = argc == 3 ? argv[2] : "CSharp_TensorLifefRaw_tlb_abi_version___";
#ifdef _WIN32
    HMODULE lib = LoadLibraryExA(argv[1], NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!lib) return fprintf(stderr, "%s: not loaded (error %lu)\n", argv[1], GetLastError()), 1;
    void (*found)(void) = (void (*)(void))GetProcAddress(lib, entry);
#else
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return fprintf(stderr, "%s\n", dlerror()), 1;
    void (*found)(void) = (void (*)(void))dlsym(lib, entry);
#endif
    if (!found) return fprintf(stderr, "%s: no %s\n", argv[1], entry), 1;
    /* JNI's entry takes (env, class), which it does not use; C#'s takes nothing. */
    const int got = argc == 3 ? ((int (*)(void *, void *))found)(NULL, NULL) : ((int (*)(void))found)();
    printf("%s: loaded, %s() = %d\n", argv[1], entry, got);
    return got == TL_ABI_VERSION ? 0 : 1;
}
