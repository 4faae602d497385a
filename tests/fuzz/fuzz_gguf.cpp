// libFuzzer harness for the GGUF reader: the input is the whole file.  Opening must either
// refuse it with TL_E_PARSE or TL_E_IO, or give an index whose every key reads and every tensor
// either loads (reading its first element) or is refused by status; nothing may read out of
// bounds (ASan) or leak.
#include <tensorlife/tl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "usage.h"

// --help: this harness's usage (libFuzzer's own flags are -help=1).
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    answer_help(*argc, *argv,
                "usage: fuzz_gguf [libFuzzer flags] [corpus dirs or inputs]\n"
                "GGUF files from the input bytes, opened, every key and tensor read.\n"
                "libFuzzer's flags: fuzz_gguf -help=1; scripts/fuzz.sh runs it on its corpus.\n");
    return 0;
}

static void check(tl_status s, const char *what) {
    if (s == TL_OK || s == TL_E_DTYPE || s == TL_E_PARSE || s == TL_E_SHAPE || s == TL_E_INVALID_ARGUMENT ||
        s == TL_E_OUT_OF_MEMORY || s == TL_E_NOT_FOUND)
        return;
    std::fprintf(stderr, "%s gave %s: %s\n", what, tl_status_string(s), tl_last_error());
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) std::snprintf(path, sizeof path, "/tmp/tl-fuzz-gguf-%d", int(getpid()));
    FILE *f = std::fopen(path, "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    tl_context *ctx;
    if (tl_context_create(nullptr, &ctx) != TL_OK) std::abort();
    tl_gguf_file *g = nullptr;
    const tl_status s = tl_gguf_open(ctx, path, &g);
    if (s == TL_OK) {
        for (size_t i = 0; i < tl_gguf_key_count(g); ++i) {
            const char *key = tl_gguf_key_name(g, i), *str;
            tl_gguf_type type, item;
            uint64_t count, len;
            int64_t n;
            double d;
            check(tl_gguf_key_type(g, key, &type, &item, &count), "key_type");
            check(tl_gguf_get_int(g, key, &n), "get_int");
            check(tl_gguf_get_float(g, key, &d), "get_float");
            check(tl_gguf_get_string(g, key, &str, &len), "get_string");
            if (tl_gguf_get_string(g, key, &str, &len) == TL_OK && len) (void)*(volatile const char *)(str + len - 1);
            for (uint64_t j = 0; j < count && j < 4; ++j) {
                if (tl_gguf_get_array_string(g, key, j, &str, &len) == TL_OK && len)
                    (void)*(volatile const char *)(str + len - 1);
                check(tl_gguf_get_array_number(g, key, j, &n, &d), "get_array_number");
            }
            if (count) check(tl_gguf_get_array_number(g, key, count - 1, nullptr, &d), "get_array_number (last)");
        }
        for (size_t i = 0; i < tl_gguf_tensor_count(g); ++i) {
            tl_tensor t;
            const tl_status got = tl_gguf_get(ctx, g, tl_gguf_tensor_name(g, i), &t);
            check(got, "get");
            if (got == TL_OK) {
                void *p;
                tl_tensor_info info = TL_TENSOR_INFO_INIT;
                if (tl_tensor_data(ctx, t, &p) != TL_OK || tl_tensor_info_get(ctx, t, &info) != TL_OK) std::abort();
                // An empty tensor may have huge other dims (the library accepts [2^51, 2^40, 0]):
                // its count is 0 without multiplying them; a non-empty one's bytes lie in the file.
                int64_t elems = 1;
                for (int d = 0; d < info.ndim; ++d)
                    if (info.shape[d] == 0) elems = 0;
                for (int d = 0; d < info.ndim && elems != 0; ++d)
                    if (__builtin_mul_overflow(elems, info.shape[d], &elems)) std::abort();
                int64_t block;
                size_t bytes;
                tl_dtype_block(info.dtype, &block, &bytes);
                if (elems > 0)
                    (void)*(volatile const unsigned char *)((const unsigned char *)p + elems / block * bytes - 1);
            }
        }
        tl_gguf_close(g);
    } else if (s != TL_E_PARSE && s != TL_E_IO && s != TL_E_OUT_OF_MEMORY) {
        std::fprintf(stderr, "open gave %s\n", tl_status_string(s));
        std::abort();
    }
    tl_context_destroy(ctx);
    return 0;
}
