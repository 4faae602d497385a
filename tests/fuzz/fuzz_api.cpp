// libFuzzer harness for the C API: the input is a program of C-API calls on two contexts with
// nested scopes, factories with odd shapes and dtypes, every op, views, retain, stale, foreign
// and forged handles, and TL_FIXED scopes.  Whatever the input, every call must return a known
// status, a failed call must leave its output untouched, and nothing may crash, leak or trip
// ASan/UBSan.  TL_E_INTERNAL (a caught bug) aborts.
#include <tensorlife/tl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
    tl_scope *scopes[2][6] = {};
    int depth[2] = {};
    tl_tensor handles[kHandles] = {};

    tl_tensor pick(Input &in) {
        const uint8_t b = in.byte();
        if (b == 250) return tl_tensor{0};
        if (b == 251) return tl_tensor{(uint64_t(in.byte()) << 56) | (uint64_t(in.byte()) << 32) | in.byte()};  // forged
        return handles[b % kHandles];
    }
    void keep(Input &in, tl_tensor t) { handles[in.byte() % kHandles] = t; }
};

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

void step(Machine &m, Input &in) {
    const int c = in.byte() & 1;
    tl_context *ctx = m.ctx[c];
    tl_tensor out = kSentinel;
    tl_status st = TL_OK;
    const uint8_t op = in.byte() % 32;
    switch (op) {
        case 0: {  // open a scope, sometimes TL_FIXED and small
            if (m.depth[c] == 6) break;
            tl_scope_options o{sizeof o, (in.byte() & 1) ? TL_FIXED : TL_GROW, size_t(in.byte()) * 64,
                               (in.byte() & 1) ? size_t(in.byte()) * 256 : 0};
            tl_scope *s = nullptr;
            st = tl_scope_open_ex(ctx, "fuzz", &o, &s);
            if (st == TL_OK) m.scopes[c][m.depth[c]++] = s;
            break;
        }
        case 1:
            if (m.depth[c]) st = tl_scope_reset(m.scopes[c][(in.byte() % m.depth[c])]);
            break;
        case 2:
            if (m.depth[c]) {
                const int which = in.byte() % m.depth[c];
                st = tl_scope_close(m.scopes[c][which]);
                if (st == TL_OK) --m.depth[c];
            }
            break;
        case 3: case 4: {  // factories
            int ndim = in.byte() % 10;
            int64_t shape[9];
            for (int i = 0; i < 9; ++i) shape[i] = in.dim();
            // Keep real allocations small (overflowing and negative dims still go through).
            int64_t elements = 1;
            for (int i = 0; i < ndim && i < 9; ++i)
                if (shape[i] > 0 && shape[i] < 6) elements *= shape[i];
            if (elements > 4096 && ndim <= 8) ndim = 4;
            if (op == 3) st = tl_tensor_full(ctx, pick_dtype(in), ndim, shape, in.value(), &out);
            else st = tl_tensor_zeros(ctx, pick_dtype(in), ndim, shape, &out);
            break;
        }
        case 5: {
            int64_t shape[2] = {in.dim(), in.dim()};
            uint8_t bytes[256] = {};
            const size_t n = in.byte();
            st = tl_tensor_from_data(ctx, pick_dtype(in), 2, shape, bytes, n, &out);
            break;
        }
        case 6: st = tl_matmul(ctx, m.pick(in), m.pick(in), &out); break;
        case 7: st = tl_add(ctx, m.pick(in), m.pick(in), &out); break;
        case 8: st = tl_sub(ctx, m.pick(in), m.pick(in), &out); break;
        case 9: st = tl_mul(ctx, m.pick(in), m.pick(in), &out); break;
        case 10: st = tl_div(ctx, m.pick(in), m.pick(in), &out); break;
        case 11: st = tl_scale(ctx, m.pick(in), in.value(), &out); break;
        case 12: {
            tl_tensor a = m.pick(in);
            switch (in.byte() % 5) {
                case 0: st = tl_relu(ctx, a, &out); break;
                case 1: st = tl_gelu(ctx, a, &out); break;
                case 2: st = tl_silu(ctx, a, &out); break;
                case 3: st = tl_exp(ctx, a, &out); break;
                default: st = tl_tanh(ctx, a, &out); break;
            }
            break;
        }
        case 13: st = tl_softmax(ctx, m.pick(in), int(int8_t(in.byte())) % 5, &out); break;
        case 14: st = tl_rmsnorm(ctx, m.pick(in), m.pick(in), in.value(), &out); break;
        case 15: st = tl_layernorm(ctx, m.pick(in), m.pick(in), m.pick(in), in.value(), &out); break;
        case 16: st = tl_sum(ctx, m.pick(in), int(int8_t(in.byte())) % 5, in.byte() & 1, &out); break;
        case 17: st = tl_mean(ctx, m.pick(in), int(int8_t(in.byte())) % 5, in.byte() & 1, &out); break;
        case 18: st = tl_argmax(ctx, m.pick(in), int(int8_t(in.byte())) % 5, &out); break;
        case 19: st = tl_slice(ctx, m.pick(in), int(int8_t(in.byte())) % 5, int8_t(in.byte()), int8_t(in.byte()), &out); break;
        case 20: st = tl_transpose(ctx, m.pick(in), int(int8_t(in.byte())) % 5, int(int8_t(in.byte())) % 5, &out); break;
        case 21: {
            int ndim = in.byte() % 6;
            int64_t shape[5];
            for (int i = 0; i < 5; ++i) shape[i] = in.dim();
            st = tl_reshape(ctx, m.pick(in), ndim, shape, &out);
            break;
        }
        case 22: st = tl_contiguous(ctx, m.pick(in), &out); break;
        case 23: {
            tl_tensor parts[3] = {m.pick(in), m.pick(in), m.pick(in)};
            st = tl_concat(ctx, in.byte() % 4, parts, int(int8_t(in.byte())) % 4, &out);
            break;
        }
        case 24: st = tl_gather_rows(ctx, m.pick(in), m.pick(in), &out); break;
        case 25: check(tl_copy_into(ctx, m.pick(in), m.pick(in)), kSentinel); return;
        case 26: {
            tl_scope *target = m.depth[c] ? m.scopes[c][in.byte() % m.depth[c]] : nullptr;
            st = tl_tensor_retain(ctx, m.pick(in), target, &out);
            break;
        }
        case 27: check(tl_tensor_free(ctx, m.pick(in)), kSentinel); return;
        case 28: {
            uint8_t buf[512];
            check(tl_tensor_read(ctx, m.pick(in), buf, in.byte() * 2u), kSentinel);
            return;
        }
        case 29: {
            tl_tensor_info info{};
            info.struct_size = sizeof info;
            check(tl_tensor_info_get(ctx, m.pick(in), &info), kSentinel);
            void *p;
            check(tl_tensor_data(ctx, m.pick(in), &p), kSentinel);
            return;
        }
        case 30: {
            char *text = nullptr;
            st = tl_tensor_to_json(ctx, m.pick(in), &text);
            if (st == TL_OK) {
                st = tl_tensor_from_json(ctx, text, &out);
                tl_string_free(text);
            }
            break;
        }
        default: {
            if (m.depth[c]) {
                tl_scope_stats stats{};
                stats.struct_size = sizeof stats;
                check(tl_scope_stats_get(m.scopes[c][m.depth[c] - 1], &stats), kSentinel);
            }
            char *text = nullptr;
            check(tl_context_report_json(ctx, &text), kSentinel);
            tl_string_free(text);
            return;
        }
    }
    check(st, out);
    if (st == TL_OK && out.bits != kSentinel.bits) m.keep(in, out);
}

// A memory budget per input: programs that grow tensors (concat of concats) meet
// TL_E_OUT_OF_MEMORY, a path worth fuzzing, instead of exhausting the fuzzer.
struct Budget {
    size_t live = 0;
};
constexpr size_t kBudgetBytes = 64u << 20;

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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Input in{data, size};
    Machine m;
    Budget budget;
    const tl_allocator alloc{&budget, budget_alloc, budget_free};
    if (tl_context_create(&alloc, &m.ctx[0]) != TL_OK || tl_context_create(&alloc, &m.ctx[1]) != TL_OK) std::abort();
    for (int steps = 0; !in.done() && steps < 400; ++steps) step(m, in);
    tl_context_destroy(m.ctx[0]);  // frees every scope and ambient tensor left
    tl_context_destroy(m.ctx[1]);
    if (budget.live != 0) {
        std::fprintf(stderr, "%zu bytes still held after both contexts were destroyed\n", budget.live);
        std::abort();
    }
    return 0;
}
