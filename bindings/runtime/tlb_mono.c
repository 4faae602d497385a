/* Mono's internal calls for the C# binding (tlb_mono.h): the elementwise ops registered under
 * the names bindings/csharp's InternalCalls declares.  Compiled into the C# natives alone. */
#ifdef _WIN32
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <psapi.h>
#else
#  include <dlfcn.h>
#endif
#include <stdlib.h>

#include "tlb.h"
#include "tlb_mono.h"

int tlb_cs_register_internal_calls(void) {
    typedef void (*add_internal_call_fn)(const char *name, const void *method);
    /* "Raw": no GC transition around the call, which is what costs; fair for calls that never
     * wait and never run long (a collection waits for them) and never touch managed memory. */
    const char *const api = "mono_dangerous_add_raw_internal_call";
    add_internal_call_fn add_call = NULL;
#ifdef _WIN32
    /* Windows has no process-wide symbol lookup: each loaded module is asked in turn, as many
     * as the process says it has (a Unity editor loads hundreds, and more may load meanwhile). */
    HMODULE *modules = NULL;
    DWORD room = 0, needed = 192 * sizeof(HMODULE);
    while (needed > room) {
        room = needed + 64 * sizeof(HMODULE);
        HMODULE *more = (HMODULE *)realloc(modules, room);
        if (more) modules = more;
        if (!more || !EnumProcessModules(GetCurrentProcess(), modules, room, &needed)) needed = 0; /* none looked up */
    }
    for (DWORD i = 0; i < needed / sizeof(HMODULE) && !add_call; ++i)
        add_call = (add_internal_call_fn)(void (*)(void))GetProcAddress(modules[i], api);
    free(modules);
#else
    add_call = (add_internal_call_fn)dlsym(RTLD_DEFAULT, api);
#endif
    if (!add_call) return 0;
#define TLB_CS_REGISTER(name) add_call("TensorLife.InternalCalls::" #name, (const void *)tlb_small_##name);
    TL_BINARY_OPS(TLB_CS_REGISTER) /* Elementwise.g.cs declares them by the same names */
#undef TLB_CS_REGISTER
    add_call("TensorLife.InternalCalls::AbiVersion", (const void *)tlb_abi_version); /* the benchmark's floor */
    return 1;
}
