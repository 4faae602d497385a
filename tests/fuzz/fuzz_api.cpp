// libFuzzer harness for the C API: the input is a program of C-API calls on two context slots
// whose contexts are destroyed and made anew (so handles of dead contexts linger), nested
// scopes, factories with odd shapes (huge dims beside empty ones) and dtypes, every op, views,
// retain, stale, foreign and forged handles, TL_FIXED scopes, fused attention, matrix-vector
// products past 512 KiB (row blocks, with and without an executor, whose results are exact), and
// safetensors saves read back, copied or over a mapping (which must refuse writes).
// Whatever the input, every call must return a known status, a failed call must leave its
// output untouched, no call may return TL_OK on a handle another context issued, a saved file
// must read back as it was saved, and nothing may crash, leak or trip ASan/UBSan.
// TL_E_INTERNAL (a caught bug) aborts.
#include <tensorlife/tl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include <unistd.h>
#include "usage.h"

namespace {

struct Input {
    const uint8_t *data;
    size_t size, at = 0;
    uint8_t byte() { return at < size ? data[at++] : 0; }
    bool done() const { return at >= size; }
    int64_t dim() {
        const uint8_t b = byte();
        if (b == 255) return INT64_MAX / 3;  // overflowing products
        if (b == 254) return -1;
        return b % 6;
    }
    double value() { return double(int8_t(byte())) / 8.0; }
};

constexpr int kHandles = 24;
constexpr tl_tensor kSentinel{0x5a5a5a5a5a5a5a5aull};

struct Machine {
    tl_context *ctx[2] = {};
    uint32_t serial[2] = {};  // which context a slot holds now (each new context a new serial)
    uint32_t next_serial = 1;
    tl_scope scopes[2][6] = {};
    int depth[2] = {};
    tl_scope closed[4] = {};  // scopes closed last (of either context): stale for ever
    uint32_t closed_count = 0;
    tl_tensor handles[kHandles] = {};
    uint32_t owner[kHandles] = {};  // the serial of the context that issued each handle
    bool foreign_used = false;      // the current call was given another context's handle
    bool big_product_made = false;  // one matrix-vector product an input: they are megabytes

    tl_tensor pick(Input &in, int c) {
        const uint8_t b = in.byte();
        if (b == 250) return tl_tensor{0};
        if (b == 251)
            return tl_tensor{(uint64_t(in.byte()) << 56) | (uint64_t(in.byte()) << 32) | in.byte()};  // forged
        const int i = b % kHandles;
        if (handles[i].bits && owner[i] != serial[c]) foreign_used = true;
        return handles[i];
    }
    void keep(Input &in, tl_tensor t, int c) {
        const int i = in.byte() % kHandles;
        handles[i] = t;
        owner[i] = serial[c];
    }
};

// In memory where the system has it (/dev/shm): a save's fsync on a disk took 5% of a run.
const char *save_path() {
    static char path[64] = "";
    if (!path[0])
        std::snprintf(path, sizeof path, "%s/tl-fuzz-%ld.safetensors", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
                      long(getpid()));
    return path;
}

void check(tl_status st, const tl_tensor &out) {
    if (st == TL_E_INTERNAL) {
        std::fprintf(stderr, "TL_E_INTERNAL: %s\n", tl_last_error());
        std::abort();
    }
    if (std::strcmp(tl_status_string(st), "TL_E_UNKNOWN") == 0) std::abort();
    if (st != TL_OK && out.bits != kSentinel.bits) {
        std::fprintf(stderr, "a failed call (%s) wrote its output\n", tl_status_string(st));
        std::abort();
    }
}

tl_dtype pick_dtype(Input &in) {
    const uint8_t b = in.byte() % 9;
    return b < 8 ? tl_dtype(1 + b % 3) : tl_dtype(in.byte());
}

// A call given another context's handle (a live one's, or one destroyed) must fail.
void check_foreign(Machine &m, tl_status st) {
    if (m.foreign_used && st == TL_OK) {
        std::fprintf(stderr, "TL_OK on a handle another context issued\n");
        std::abort();
    }
}

// An executor on the calling thread that runs its chunks last to first.
void reverse_inline(void *, int64_t count, int64_t grain, tl_task_fn task, void *task_user) {
    for (int64_t hi = count; hi > 0;) {
        const int64_t lo = hi - (hi % grain ? hi % grain : grain);
        task(task_user, lo, hi);
        hi = lo;
    }
}

// A one-row ([1,k] x [k,n], or batched [2,1,k]) or one-column ([n,k] x [k,1]) product of constant
// operands, the matrix stored as it is or as a transposed view, on ctx with or without an
// executor: multiples of 1/8 below 1, so every output is exactly k * a * b in f32 and f64 (at
// most 17 significant bits) however the sums are blocked.
tl_status matrix_vector(tl_context *ctx, Input &in, tl_tensor *out) {
    static const int64_t sizes[4] = {0, 129, 520, 1025};  // empty, 66 KiB (gemm) to 8 MiB (8 blocks)
    const int64_t k = sizes[in.byte() % 4], n = sizes[in.byte() % 4];
    const uint8_t how = in.byte();
    const double a = (in.byte() % 8) / 8.0, b = (in.byte() % 8) / 8.0;
    const tl_dtype dt = (how & 1) ? TL_F64 : TL_F32;
    const bool column = how & 16, transposed = how & 4, batched = (how & 8) && !column;
    const tl_executor ex = {nullptr, reverse_inline};
    if (tl_context_set_executor(ctx, (how & 2) ? &ex : nullptr) != TL_OK) std::abort();
    const int64_t vec[3] = {batched ? 2 : 1, column ? k : 1, column ? 1 : k};
    // The matrix's logical shape is [k,n] for a row and [n,k] for a column; stored transposed, the other way.
    const int64_t rows = column ? n : k, cols = column ? k : n,
                  stored[2] = {transposed ? cols : rows, transposed ? rows : cols};
    tl_tensor x = kSentinel, stored_w = kSentinel, w = kSentinel, y = kSentinel;
    tl_status st = tl_tensor_full(ctx, dt, batched ? 3 : 2, batched ? vec : vec + 1, a, &x);
    if (st == TL_OK) st = tl_tensor_full(ctx, dt, 2, stored, b, &stored_w);
    w = stored_w;
    if (st == TL_OK && transposed) st = tl_transpose(ctx, stored_w, 0, 1, &w);
    if (st == TL_OK) st = column ? tl_matmul(ctx, w, x, &y) : tl_matmul(ctx, x, w, &y);
    if (st == TL_OK) {
        const int64_t outputs = (batched ? 2 : 1) * n;
        const size_t es = tl_dtype_size(dt);
        unsigned char *got = static_cast<unsigned char *>(std::malloc(size_t(outputs) * es + 1));
        if (!got || tl_tensor_read(ctx, y, got, size_t(outputs) * es) != TL_OK) std::abort();
        for (int64_t i = 0; i < outputs; ++i) {
            const double v =
                dt == TL_F64 ? reinterpret_cast<double *>(got)[i] : double(reinterpret_cast<float *>(got)[i]);
            if (v != double(k) * a * b) {
                std::fprintf(stderr, "matrix-vector product output %lld is %.17g, not %.17g\n", (long long)i, v,
                             double(k) * a * b);
                std::abort();
            }
        }
        std::free(got);
        *out = y;
    }
    if (tl_context_set_executor(ctx, nullptr) != TL_OK) std::abort();
    // The operands go (ambient ones freed; scoped ones refuse and die with their scope); w is
    // stored_w itself unless it is the transposed view.
    for (tl_tensor t : {transposed ? w : kSentinel, stored_w, x})
        if (t.bits != kSentinel.bits) check(tl_tensor_free(ctx, t), kSentinel);
    return st;
}

// The action an input byte chooses, from a table fixed for good: codes 0..37 each take the
// bytes b < 228 with b % 38 == code, and bytes 228..255 are free. A new action takes some of
// the free bytes (which until then only report), so every seed keeps its meaning.
constexpr int kActions = 38;
constexpr int kFirstFreeByte = 228;  // kActions * 6
constexpr int kReport = 31;          // the default case: stats and the context's report
uint8_t action_of(uint8_t b) { return b < kFirstFreeByte ? uint8_t(b % kActions) : uint8_t(kReport); }

void step(Machine &m, Input &in, const tl_allocator &alloc) {
    const int c = in.byte() & 1;
    tl_context *ctx = m.ctx[c];
    tl_tensor out = kSentinel;
    tl_status st = TL_OK;
    m.foreign_used = false;
    const uint8_t op = action_of(in.byte());
    switch (op) {
        case 0: {  // open a scope, sometimes TL_FIXED and small
            if (m.depth[c] == 6) break;
            tl_scope_options o{sizeof o, (in.byte() & 1) ? TL_FIXED : TL_GROW, size_t(in.byte()) * 64,
                               (in.byte() & 1) ? size_t(in.byte()) * 256 : 0};
            tl_scope s{};
            st = tl_scope_open_ex(ctx, "fuzz", &o, &s);
            if (st == TL_OK) m.scopes[c][m.depth[c]++] = s;
            break;
        }
        case 1: {
            const uint8_t how = in.byte();
            const tl_scope stale = m.closed[how % 4];
            if (stale.bits && (how & 4)) {  // a closed scope's handle, whatever opened since: refused
                const tl_status got = (how & 8) ? tl_scope_reset(ctx, stale) : tl_scope_close(ctx, stale);
                if (got != TL_E_INVALID_HANDLE || tl_scope_name(ctx, stale)) std::abort();
                st = got;
            } else if (m.depth[c]) {
                st = tl_scope_reset(ctx, m.scopes[c][(how % m.depth[c])]);
            }
            break;
        }
        case 2:
            if (m.depth[c]) {
                const int which = in.byte() % m.depth[c];
                st = tl_scope_close(ctx, m.scopes[c][which]);
                if (st == TL_OK) m.closed[m.closed_count++ % 4] = m.scopes[c][--m.depth[c]];
            }
            break;
        case 3:
        case 4: {  // factories
            int ndim = in.byte() % 10;
            int64_t shape[9];
            for (int i = 0; i < 9; ++i) shape[i] = in.dim();
            // Keep real allocations small (overflowing and negative dims still go through).
            int64_t elements = 1;
            for (int i = 0; i < ndim && i < 9; ++i)
                if (shape[i] > 0 && shape[i] < 6) elements *= shape[i];
            if (elements > 4096 && ndim <= 8) ndim = 4;
            if (op == 3)
                st = tl_tensor_full(ctx, pick_dtype(in), ndim, shape, in.value(), &out);
            else
                st = tl_tensor_zeros(ctx, pick_dtype(in), ndim, shape, &out);
            break;
        }
        case 5: {
            int64_t shape[2] = {in.dim(), in.dim()};
            uint8_t bytes[256] = {};
            const size_t n = in.byte();
            st = tl_tensor_from_data(ctx, pick_dtype(in), 2, shape, bytes, n, &out);
            break;
        }
        case 6:
            st = tl_matmul(ctx, m.pick(in, c), m.pick(in, c), &out);
            break;
        case 7:
            st = tl_add(ctx, m.pick(in, c), m.pick(in, c), &out);
            break;
        case 8:
            st = tl_sub(ctx, m.pick(in, c), m.pick(in, c), &out);
            break;
        case 9:
            st = tl_mul(ctx, m.pick(in, c), m.pick(in, c), &out);
            break;
        case 10:
            st = tl_div(ctx, m.pick(in, c), m.pick(in, c), &out);
            break;
        case 11:
            st = tl_scale(ctx, m.pick(in, c), in.value(), &out);
            break;
        case 12: {
            tl_tensor a = m.pick(in, c);
            switch (in.byte() % 5) {
                case 0:
                    st = tl_relu(ctx, a, &out);
                    break;
                case 1:
                    st = tl_gelu(ctx, a, &out);
                    break;
                case 2:
                    st = tl_silu(ctx, a, &out);
                    break;
                case 3:
                    st = tl_exp(ctx, a, &out);
                    break;
                default:
                    st = tl_tanh(ctx, a, &out);
                    break;
            }
            break;
        }
        case 13:
            st = tl_softmax(ctx, m.pick(in, c), int(int8_t(in.byte())) % 5, &out);
            break;
        case 14:
            st = tl_rmsnorm(ctx, m.pick(in, c), m.pick(in, c), in.value(), &out);
            break;
        case 15:
            st = tl_layernorm(ctx, m.pick(in, c), m.pick(in, c), m.pick(in, c), in.value(), &out);
            break;
        case 16:
            st = tl_sum(ctx, m.pick(in, c), int(int8_t(in.byte())) % 5, in.byte() & 1, &out);
            break;
        case 17:
            st = tl_mean(ctx, m.pick(in, c), int(int8_t(in.byte())) % 5, in.byte() & 1, &out);
            break;
        case 18:
            st = tl_argmax(ctx, m.pick(in, c), int(int8_t(in.byte())) % 5, &out);
            break;
        case 19:
            st = tl_slice(ctx, m.pick(in, c), int(int8_t(in.byte())) % 5, int8_t(in.byte()), int8_t(in.byte()), &out);
            break;
        case 20:
            st = tl_transpose(ctx, m.pick(in, c), int(int8_t(in.byte())) % 5, int(int8_t(in.byte())) % 5, &out);
            break;
        case 21: {
            int ndim = in.byte() % 6;
            int64_t shape[5];
            for (int i = 0; i < 5; ++i) shape[i] = in.dim();
            st = tl_reshape(ctx, m.pick(in, c), ndim, shape, &out);
            break;
        }
        case 22:
            st = tl_contiguous(ctx, m.pick(in, c), &out);
            break;
        case 23: {
            const int n = in.byte() % 4;  // only the parts it is given count as its operands
            tl_tensor parts[3] = {};
            for (int i = 0; i < n && i < 3; ++i) parts[i] = m.pick(in, c);
            st = tl_concat(ctx, n, parts, int(int8_t(in.byte())) % 4, &out);
            break;
        }
        case 24:
            st = tl_gather_rows(ctx, m.pick(in, c), m.pick(in, c), &out);
            break;
        case 25:
            st = tl_copy_into(ctx, m.pick(in, c), m.pick(in, c));
            check(st, kSentinel);
            check_foreign(m, st);
            return;
        case 26: {
            const tl_scope target = m.depth[c] ? m.scopes[c][in.byte() % m.depth[c]] : TL_NO_SCOPE;
            st = tl_tensor_retain(ctx, m.pick(in, c), target, &out);
            break;
        }
        case 27:
            st = tl_tensor_free(ctx, m.pick(in, c));
            check(st, kSentinel);
            check_foreign(m, st);
            return;
        case 28: {
            uint8_t buf[512];
            st = tl_tensor_read(ctx, m.pick(in, c), buf, in.byte() * 2u);
            check(st, kSentinel);
            check_foreign(m, st);
            return;
        }
        case 29: {
            tl_tensor_info info{};
            info.struct_size = sizeof info;
            check(tl_tensor_info_get(ctx, m.pick(in, c), &info), kSentinel);
            void *p;
            check(tl_tensor_data(ctx, m.pick(in, c), &p), kSentinel);
            return;
        }
        case 30: {  // a JSON round trip, of tensors up to 64K elements (the text's growth is reached by then)
            const tl_tensor t = m.pick(in, c);
            tl_tensor_info info = TL_TENSOR_INFO_INIT;
            double elements = 1;  // empty tensors may have huge dims beside their 0
            if (tl_tensor_info_get(ctx, t, &info) == TL_OK)
                for (int d = 0; d < info.ndim; ++d) elements *= double(info.shape[d]);
            if (elements > 65536) return;
            char *text = nullptr;
            st = tl_tensor_to_json(ctx, t, &text);
            if (st == TL_OK) {
                st = tl_tensor_from_json(ctx, text, &out);
                tl_string_free(text);
            }
            break;
        }
        case 37:  // rarely (a gate byte), and once an input, so the rest keeps its share of the runs
            if (m.big_product_made || in.byte() % 4 != 0) return;
            m.big_product_made = true;
            st = matrix_vector(ctx, in, &out);
            break;
        case 35:  // fused attention, valid rows from the input
            st = tl_attention(ctx, m.pick(in, c), m.pick(in, c), m.pick(in, c), int8_t(in.byte()), in.value(), &out);
            break;
        case 32:
        case 33: {  // the context of this slot destroyed and made anew
            tl_context_destroy(ctx);
            if (tl_context_create(&alloc, &m.ctx[c]) != TL_OK) std::abort();
            m.serial[c] = m.next_serial++;
            m.depth[c] = 0;
            return;
        }
        case 34: {  // save up to 3 tensors, read them back, compare every byte
            static const char *const pool[] = {"w", "b", "w", "", "__metadata__", "a.b/c", "\xc3\xa9"};
            const int n = in.byte() % 4;
            const char *names[3];
            tl_tensor ts[3];
            for (int i = 0; i < n; ++i) names[i] = pool[in.byte() % 7], ts[i] = m.pick(in, c);
            st = tl_safetensors_save(ctx, save_path(), n, names, ts);
            check(st, kSentinel);
            check_foreign(m, st);
            if (st != TL_OK) return;
            tl_safetensors_file *f = nullptr;
            const bool mapped = in.byte() & 1;  // read back copied or over a mapping
            const tl_status reopened = mapped ? tl_safetensors_map(ctx, save_path(), &f) : tl_safetensors_open(ctx, save_path(), &f);
            if (reopened == TL_E_OUT_OF_MEMORY) return;  // the program's allocator refusing the file's index: fair
            if (reopened != TL_OK) {
                std::fprintf(stderr, "a saved file does not open: %s\n", tl_last_error());
                std::abort();
            }
            for (int i = 0; i < n; ++i) {
                tl_tensor back;
                tl_tensor_info a{}, b{};
                a.struct_size = b.struct_size = sizeof a;
                const tl_status got = tl_safetensors_get(ctx, f, names[i], &back);
                if (got == TL_E_SCOPE_FULL || got == TL_E_OUT_OF_MEMORY) continue;  // no room here: fair
                if (got != TL_OK || tl_tensor_info_get(ctx, back, &b) != TL_OK ||
                    tl_tensor_info_get(ctx, ts[i], &a) != TL_OK || a.dtype != b.dtype || a.ndim != b.ndim ||
                    std::memcmp(a.shape, b.shape, sizeof(int64_t) * size_t(a.ndim)) != 0) {
                    std::fprintf(stderr, "tensor '%s' did not read back as saved: %s\n", names[i], tl_last_error());
                    std::abort();
                }
                size_t bytes = tl_dtype_size(a.dtype);
                for (int d = 0; d < a.ndim; ++d)
                    bytes = a.shape[d] == 0 ? 0 : bytes * size_t(a.shape[d] > 65536 ? 65536 : a.shape[d]);
                static uint8_t x[1 << 16], y[1 << 16];
                const tl_status rx = tl_tensor_read(ctx, ts[i], x, sizeof x),
                                ry = tl_tensor_read(ctx, back, y, sizeof y);
                if (rx != ry || (rx == TL_OK && std::memcmp(x, y, bytes < sizeof x ? bytes : sizeof x) != 0)) {
                    std::fprintf(stderr, "tensor '%s' came back with other bytes\n", names[i]);
                    std::abort();
                }
                if (tl_safetensors_maps(f, names[i]) && tl_copy_into(ctx, ts[i], back) != TL_E_INVALID_ARGUMENT) {
                    std::fprintf(stderr, "a tensor over a mapping was written\n");
                    std::abort();
                }
                if (in.byte() & 1) m.keep(in, back, c);  // mapped tensors live on in the program
            }
            tl_safetensors_close(f);
            return;
        }
        default: {
            if (m.depth[c]) {
                tl_scope_stats stats{};
                stats.struct_size = sizeof stats;
                check(tl_scope_stats_get(ctx, m.scopes[c][m.depth[c] - 1], &stats), kSentinel);
            }
            char *text = nullptr;
            check(tl_context_report_json(ctx, &text), kSentinel);
            tl_string_free(text);
            return;
        }
    }
    check(st, out);
    check_foreign(m, st);
    if (st == TL_OK && out.bits != kSentinel.bits) m.keep(in, out, c);
}

// A memory budget per input: programs that grow tensors (concat of concats) meet
// TL_E_OUT_OF_MEMORY, a path worth fuzzing, instead of exhausting the fuzzer.
struct Budget {
    size_t live = 0;
};
constexpr size_t kBudgetBytes = 16u << 20;

void *budget_alloc(void *user, size_t size, size_t alignment) {
    auto *b = static_cast<Budget *>(user);
    if (size > kBudgetBytes - b->live) return nullptr;
    void *p = nullptr;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) != 0) return nullptr;
    b->live += size;
    return p;
}

void budget_free(void *user, void *ptr, size_t size) {
    static_cast<Budget *>(user)->live -= size;
    std::free(ptr);
}

}  // namespace

// --help: this harness's usage (libFuzzer's own flags are -help=1).
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    answer_help(*argc, *argv,
                "usage: fuzz_api [libFuzzer flags] [corpus dirs or inputs]\n"
                "Random sequences of API calls (scopes, tensors, ops, products on an executor) from the input bytes.\n"
                "libFuzzer's flags: fuzz_api -help=1; scripts/fuzz.sh runs it on its corpus.\n");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const bool blas_on_one_thread = tl_set_blas_threads(1) == TL_OK;  // so the executor takes BLAS work
    if (!blas_on_one_thread) std::abort();
    Input in{data, size};
    Machine m;
    Budget budget;
    const tl_allocator alloc{&budget, budget_alloc, budget_free};
    if (tl_context_create(&alloc, &m.ctx[0]) != TL_OK || tl_context_create(&alloc, &m.ctx[1]) != TL_OK) std::abort();
    m.serial[0] = m.next_serial++;
    m.serial[1] = m.next_serial++;
    for (int steps = 0; !in.done() && steps < 400; ++steps) step(m, in, alloc);
    tl_context_destroy(m.ctx[0]);  // frees every scope and ambient tensor left
    tl_context_destroy(m.ctx[1]);
    if (budget.live != 0) {
        std::fprintf(stderr, "%zu bytes still held after both contexts were destroyed\n", budget.live);
        std::abort();
    }
    return 0;
}
