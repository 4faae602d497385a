// libFuzzer harness for the safetensors loader: the input is the whole file.  Opening must
// either refuse it with TL_E_PARSE/TL_E_IO or give an index whose every tensor loads, and
// nothing may read out of bounds (ASan) or leak.
#include <tensorlife/tl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "usage.h"

// --help: this harness's usage (libFuzzer's own flags are -help=1).
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    answer_help(*argc, *argv,
                "usage: fuzz_safetensors [libFuzzer flags] [corpus dirs or inputs]\n"
                "Safetensors files from the input bytes, opened, mapped and every tensor read.\n"
                "libFuzzer's flags: fuzz_safetensors -help=1; scripts/fuzz.sh runs it on its corpus.\n");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) std::snprintf(path, sizeof path, "/tmp/tl-fuzz-st-%d", int(getpid()));
    FILE *f = std::fopen(path, "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    tl_context *ctx;
    if (tl_context_create(nullptr, &ctx) != TL_OK) std::abort();
    tl_safetensors_file *st = nullptr;
    tl_status s = tl_safetensors_open(ctx, path, &st);
    if (s == TL_OK) {
        for (size_t i = 0; i < tl_safetensors_count(st); ++i) {
            tl_tensor t;
            tl_status g = tl_safetensors_get(ctx, st, tl_safetensors_name(st, i), &t);
            if (g != TL_OK && g != TL_E_OUT_OF_MEMORY) {
                std::fprintf(stderr, "an indexed tensor did not load: %s\n", tl_last_error());
                std::abort();
            }
        }
        tl_safetensors_close(st);
    } else if (s != TL_E_PARSE && s != TL_E_IO && s != TL_E_OUT_OF_MEMORY) {
        std::fprintf(stderr, "open gave %s\n", tl_status_string(s));
        std::abort();
    }
    tl_context_destroy(ctx);
    return 0;
}
