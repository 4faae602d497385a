/* The C# native layer's registration of Mono's internal calls, on a platform where no Mono
 * runs here (Windows under wine) as well as on Linux: it finds Mono's embedding API in whichever
 * loaded module exports it.
 *   mono_registration WRAPPER               no Mono in the process: nothing registered (0)
 *   mono_registration WRAPPER FAKE_MONO     fake_mono.c loaded first: each elementwise op and
 *                                           the ABI version registered under the names the C#
 *                                           layer declares, and the registered add adds */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tensorlife/tl.h>
#include "native_library.h"

static int passed, failed;
static void expect(int ok, const char *what) {
    ++*(ok ? &passed : &failed);
    printf("%s %s\n", ok ? "PASS" : "FAIL", what);
}

typedef unsigned long long u64; /* SWIG's C# wrapper: uint64_t as unsigned long long, size_t as unsigned long */
typedef u64 (*binary_fn)(u64 c, u64 a, u64 b);

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: mono_registration WRAPPER [FAKE_MONO]\n");
        return 2;
    }
    void *mono = argc == 3 ? native_load(argv[2], 1) : NULL;
    void *wrapper = native_load(argv[1], 0);
    if ((argc == 3 && !mono) || !wrapper) return 1;
    int (*register_calls)(void) = (int (*)(void))native_find(wrapper, "CSharp_TensorLifefRaw_tlb_cs_register_internal_calls___");
    if (!register_calls) return 1;
    if (!mono) {
        expect(register_calls() == 0, "no Mono in the process: nothing registered, the C# layer takes P/Invoke");
        printf("%d passed, %d failed\n", passed, failed);
        return failed != 0;
    }
    expect(register_calls() == 1, "Mono's embedding API found in a loaded module");

    int (*registered)(int, const char **, const void **) =
        (int (*)(int, const char **, const void **))native_find(mono, "fake_mono_registered");
    if (!registered) return 1;
    const char *name = NULL;
    const void *method = NULL;
    const char *const want[] = {
#define NAME_OF(op) "TensorLife.InternalCalls::" #op,
        TL_BINARY_OPS(NAME_OF)
#undef NAME_OF
        "TensorLife.InternalCalls::AbiVersion"};
    const int count = registered(0, &name, &method), wanted = (int)(sizeof want / sizeof want[0]);
    expect(count == wanted, "each elementwise op and the ABI version registered once");
    binary_fn add = NULL;
    int named = 0;
    for (int i = 0; i < count && i < wanted; ++i) {
        registered(i, &name, &method);
        named += strcmp(name, want[i]) == 0;
        if (strcmp(name, "TensorLife.InternalCalls::add") == 0) add = (binary_fn)method;
        if (strcmp(name, "TensorLife.InternalCalls::AbiVersion") == 0)
            expect(((int (*)(void))method)() == TL_ABI_VERSION, "the registered AbiVersion returns the ABI version");
    }
    expect(named == wanted, "under the names InternalCalls declares (TL_BINARY_OPS, then AbiVersion)");
    if (!add) return printf("FAIL no add registered\n"), 1;

    /* The registered add on a record made through the same wrapper: 1..4 + 10..40. */
    u64 (*context_new)(void) = (u64 (*)(void))native_find(wrapper, "CSharp_TensorLifefRaw_tlb_context_new___");
    void (*context_release)(u64) = (void (*)(u64))native_find(wrapper, "CSharp_TensorLifefRaw_tlb_context_release___");
    void (*context_close)(u64) = (void (*)(u64))native_find(wrapper, "CSharp_TensorLifefRaw_tlb_context_close___");
    u64 (*from_f32)(u64, long long *, unsigned long, float *, unsigned long) =
        (u64 (*)(u64, long long *, unsigned long, float *, unsigned long))native_find(wrapper, "CSharp_TensorLifefRaw_tlb_from_f32___");
    int (*read_f32)(u64, u64, float *, unsigned long) =
        (int (*)(u64, u64, float *, unsigned long))native_find(wrapper, "CSharp_TensorLifefRaw_tlb_read_f32___");
    if (!context_new || !context_release || !context_close || !from_f32 || !read_f32) return 1;
    const u64 c = context_new();
    long long shape[1] = {4};
    float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, sum[4] = {0};
    const u64 a = from_f32(c, shape, 1, x, 4), b = from_f32(c, shape, 1, y, 4);
    const u64 r = c && a && b ? add(c, a, b) : 0;
    expect(r != 0 && read_f32(c, r, sum, 4) == TL_OK && sum[0] == 11 && sum[3] == 44,
           "the registered add adds, on a record made through the wrapper");
    expect(add(0, a, b) == 0, "the registered add on no context makes nothing (the op then calls P/Invoke)");
    context_close(c);
    expect(add(c, a, b) == 0, "the registered add on a closed context makes nothing");
    context_release(c);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
