// tl_matmul, and every decision of which kernel makes a product (impl/kernels/README.md lists
// them): OpenBLAS's gemm, the row-blocked matrix-vector products (kernels/gemv.h), and the
// stored-weight products of kernels/quant.h.  A strided matrix goes to BLAS as it is when one of
// its strides is 1 (row-major with a leading dimension, or a transpose); otherwise it is copied
// to scratch first.
#include <algorithm>
#include <climits>

#include "blas/blas.h"
#include "core/error.h"
#include "kernels/gemv.h"
#include "core/parallel.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "ops/rows.h"

namespace tl {
namespace {

struct Matrix {
    int64_t rows, cols, row_stride, col_stride;  // strides in elements
};

struct BlasOperand {
    blas::Trans trans;
    int64_t ld;
};

// The BLAS form of a row-major matrix view, if it has one.
bool blas_form(Matrix m, BlasOperand *out) {
    if (m.rows == 1) m.row_stride = m.cols;  // a stride of a length-1 dimension is free
    if (m.cols == 1) m.col_stride = 1;
    if (m.col_stride == 1 && m.row_stride >= (m.cols > 1 ? m.cols : 1) && m.row_stride <= INT_MAX) {
        *out = {blas::Trans::no, m.row_stride};
        return true;
    }
    if (m.row_stride == 1 && m.col_stride >= (m.rows > 1 ? m.rows : 1) && m.col_stride <= INT_MAX) {
        *out = {blas::Trans::yes, m.col_stride};
        return true;
    }
    return false;
}

// The last two dimensions of v as a matrix (a batch's stride, strides[0], is the caller's).
Matrix matrix_of(const View &v) {
    return Matrix{v.shape[v.ndim - 2], v.shape[v.ndim - 1], v.strides[v.ndim - 2], v.strides[v.ndim - 1]};
}

// A product of many rows is cut into fixed chunks of kGemmColumns columns of C, each one BLAS call
// of the same shape whatever the thread count, so its bits never depend on the threads; the
// chunks run as blas::run_split_calling_blas runs them.  Without the split a prompt's f32
// products ran on one thread whatever the executor (bench/README.md, the fourth run against
// llama.cpp).
constexpr int64_t kGemmColumns = 256, kGemmSplitMinRows = 16;
void gemm(const tl_context &ctx, tl_dtype dt, BlasOperand ta, BlasOperand tb, int64_t m, int64_t n, int64_t k,
          const std::byte *a, const std::byte *b, std::byte *c) {
    const int64_t chunks = (n + kGemmColumns - 1) / kGemmColumns;
    if (m < kGemmSplitMinRows || chunks < 2) return blas::gemm(dt, ta.trans, ta.ld, tb.trans, tb.ld, m, n, k, a, b, c, n);
    const int64_t elem = int64_t(dtype_size(dt));
    auto body = [&](int64_t first, int64_t end) {
        for (int64_t chunk = first; chunk < end; ++chunk) {
            const int64_t j = chunk * kGemmColumns, cols = std::min(kGemmColumns, n - j);
            const std::byte *bj = b + (tb.trans == blas::Trans::yes ? j * tb.ld : j) * elem;
            blas::gemm(dt, ta.trans, ta.ld, tb.trans, tb.ld, m, cols, k, a, bj, c + j * elem, n);
        }
    };
    const int64_t outputs = m * n, work = outputs > INT64_MAX / k ? INT64_MAX : outputs * k;  // multiply-adds
    blas::run_split_calling_blas(ctx, chunks, work, body);
}

// A one-row (or one-column) product is a matrix-vector product.  OpenBLAS runs sgemm with m = 1
// through its matrix-matrix kernels, several times slower than sgemv on a streamed matrix, while
// on small cache-resident ones threaded sgemv loses (bench_gemv; bench/README.md).  So matrices
// from 512 KiB up take sgemv (gemv.h).  The choice depends on the shape alone, so every storage
// of the same shape takes the same path (parity).
constexpr int64_t kGemvMinBytes = 512 * 1024;

// y = M x in f32 with a contiguous x (each output one row's dot product: a weight stored as
// [out, in] rows, as Hugging Face and GGUF store them) runs on the Highway kernel of
// kernels/dot_rows.cpp, not sgemv: measured faster under every OpenBLAS core family tried on Zen 4,
// by 1.1x to 1.4x, and on Zen 5 as fast from DRAM and faster from L3 since it reads four rows at a
// time; y = M^T x stays on sgemv, which beat a Highway row-streaming kernel under each
// (bench/README.md, "f32 one-row products").
GemvKernel kernel_of_rows(tl_dtype dt, int64_t incx) {
    return dt == TL_F32 && incx == 1 ? GemvKernel::dot_rows : GemvKernel::blas;
}

// C[m,n] = A[m,k] B[k,n] by the call that is fastest for its shape; scratch: partial_bytes.
// Called with every dim positive and both operands in memory, so m*k*elem and k*n*elem are
// sizes of real matrices: they cannot overflow.
void product(const tl_context &ctx, tl_dtype dt, BlasOperand ta, BlasOperand tb, int64_t m, int64_t n, int64_t k,
             const std::byte *a, const std::byte *b, std::byte *c, std::byte *scratch) {
    const int64_t elem = int64_t(dtype_size(dt));
    // A one-row a (one-column b) in BLAS form is never transposed: blas_form takes a length-1
    // dimension's stride as free, so a row is NoTrans with its elements 1 apart (a strided row
    // was copied) and a column is NoTrans with its elements ld apart.
    if (m == 1 && k * n * elem >= kGemvMinBytes) {  // c = B^T a (B stored [k,n]) or B a (stored [n,k])
        if (tb.trans == blas::Trans::no)
            gemv_run(ctx, Gemv{GemvKernel::blas, dt, blas::Trans::yes, k, n, tb.ld, b, a, 1, c}, scratch);
        else
            gemv_run(ctx, Gemv{kernel_of_rows(dt, 1), dt, blas::Trans::no, n, k, tb.ld, b, a, 1, c}, scratch);
        return;
    }
    if (n == 1 && m * k * elem >= kGemvMinBytes) {  // c = A b (A stored [m,k]) or A^T b (stored [k,m])
        if (ta.trans == blas::Trans::no)
            gemv_run(ctx, Gemv{kernel_of_rows(dt, tb.ld), dt, blas::Trans::no, m, k, ta.ld, a, b, tb.ld, c}, scratch);
        else
            gemv_run(ctx, Gemv{GemvKernel::blas, dt, blas::Trans::yes, k, m, ta.ld, a, b, tb.ld, c}, scratch);
        return;
    }
    gemm(ctx, dt, ta, tb, m, n, k, a, b, c);
}

// A contiguous copy of v in scratch memory at `at`.
View contiguous_at(const View &v, std::byte *at) {
    View c = contiguous_over(v, at);
    copy_kernel(v, c);
    return c;
}

// A checked product: its dims, and each operand's BLAS form once staged.
struct Plan {
    bool batched;  // a is [B,m,k]; b is [B,k,n] or a shared [k,n]
    int64_t batches, m, n, k;
    BlasOperand fa, fb;
    bool copy_a, copy_b;  // BLAS cannot take it as it is: a contiguous copy in scratch
};

// Every check of a matmul, before anything is placed.
tl_status plan(const View &a, const View &b, Plan *p) {
    if (a.dtype != b.dtype) return fail(TL_E_DTYPE, "matmul: %s x %s", dtype_name(a.dtype), dtype_name(b.dtype));
    if (!is_float(a.dtype)) return fail(TL_E_DTYPE, "matmul takes f32 or f64, not %s", dtype_name(a.dtype));
    p->batched = a.ndim == 3;
    if ((a.ndim != 2 && a.ndim != 3) || (b.ndim != 2 && b.ndim != 3) || (b.ndim == 3 && !p->batched))
        return fail(TL_E_SHAPE, "matmul takes [m,k]x[k,n], [B,m,k]x[B,k,n] or [B,m,k]x[k,n], not %d-D x %d-D", a.ndim,
                    b.ndim);
    p->batches = p->batched ? a.shape[0] : 1;
    if (b.ndim == 3 && b.shape[0] != p->batches)
        return fail(TL_E_SHAPE, "matmul: batch %lld x batch %lld", (long long)p->batches, (long long)b.shape[0]);
    const Matrix ma = matrix_of(a), mb = matrix_of(b);
    if (ma.cols != mb.rows)
        return fail(TL_E_SHAPE, "matmul: inner dims differ ([%lld,%lld] x [%lld,%lld])", (long long)ma.rows,
                    (long long)ma.cols, (long long)mb.rows, (long long)mb.cols);
    p->m = ma.rows, p->k = ma.cols, p->n = mb.cols;
    const int64_t batch_rows[2] = {p->batches, p->m};
    int64_t all_rows;  // the batches as one product (one BLAS call): checked, as every product of dims is
    if (p->m > INT_MAX || p->n > INT_MAX || p->k > INT_MAX || !count_of(2, batch_rows, 1, &all_rows) ||
        all_rows > INT_MAX)
        return fail(TL_E_SHAPE, "matmul: dims past BLAS's int range ([%lld,%lld,%lld] x [%lld,%lld])",
                    (long long)p->batches, (long long)p->m, (long long)p->k, (long long)mb.rows, (long long)p->n);
    p->copy_a = !blas_form(ma, &p->fa);
    p->copy_b = !blas_form(mb, &p->fb);
    // A batched a against a shared b runs as one product of B*m rows when its batches stack as one
    // matrix; any other layout of a is copied so, since OpenBLAS's kernels may give a row other
    // last bits in B calls of m rows than in one call (tl_ops.h's promise on views).
    if (p->batched && b.ndim == 2 && p->batches > 1 && !p->copy_a &&
        !(p->fa.trans == blas::Trans::no && a.strides[0] == p->m * p->fa.ld))
        p->copy_a = true;
    return TL_OK;
}

// Scratch for the partial sums of any matrix-vector product run() may make of p: a one-row product
// sums over k into n outputs, a one-column one over k into m (all batches' rows, when run() makes
// them one call).
size_t partial_bytes(const Plan &p, size_t elem) {
    size_t most = 0;
    if (p.m == 1) most = gemv_scratch_bytes(elem, p.k, p.n);
    if (p.n == 1) most = std::max(most, gemv_scratch_bytes(elem, p.k, p.batches * p.m));
    return most;
}

// c = a b, every dim positive, both operands in BLAS form; scratch: partial_bytes(p).
void run(const tl_context &ctx, const Plan &p, const View &a, const View &b, const View &c, std::byte *scratch) {
    const int64_t elem = int64_t(dtype_size(a.dtype));
    const int64_t a_batch = p.batched ? a.strides[0] : 0, b_batch = b.ndim == 3 ? b.strides[0] : 0;
    // [B,m,k] times a shared [k,n] as one [B*m,k] matrix: one call instead of B (plan() copied
    // any a whose batches do not stack so).
    if (p.batched && b.ndim == 2) {
        product(ctx, a.dtype, p.fa, p.fb, p.batches * p.m, p.n, p.k, a.data, b.data, c.data, scratch);
        return;
    }
    for (int64_t i = 0; i < p.batches; ++i)
        product(ctx, a.dtype, p.fa, p.fb, p.m, p.n, p.k, a.data + i * a_batch * elem, b.data + i * b_batch * elem,
                c.data + i * p.m * p.n * elem, scratch);
}

// A few f32 rows against a large f32 weight given as the transpose of its stored [n, k] rows (as
// Hugging Face and GGUF store weights) go through the stored-rows loop, each row the one-row
// kernel's dot products (the same bits as that row alone).  Up to 4 rows it beat sgemm at 1 and
// 2 BLAS threads, from cache and from DRAM; at 8 rows sgemm on 2 threads won from DRAM
// (bench/README.md, "Prefill").  Decided by the shape alone (parity).
constexpr int64_t kFewRowsMax = 4;
bool few_rows_of_stored_weight(const View &a, const View &b) {
    if (a.dtype != TL_F32 || b.dtype != TL_F32 || a.ndim != 2 || b.ndim != 2) return false;
    const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    return m >= 2 && m <= kFewRowsMax && b.shape[0] == k && k > 1 && b.strides[0] == 1 &&
           k * n * 4 >= kGemvMinBytes;
}

// Prompts of at least kPanelMinRows rows take the panel kernels (kernels/panel_dot.cpp), whose
// repacking pays for itself past a few rows; at most kMaxPanels panels of scratch (each split
// range has one), kPanelBatch activation rows handed over at a time.
constexpr int64_t kPanelMinRows = 8, kMaxPanels = 32, kPanelBatch = 64;

// A weight read as it is stored must be [k, n], the transpose of its [n, k] rows, against f32
// [..., m, k] activations.
tl_status check_stored_weight(const View &a, const View &b) {
    if (a.dtype != TL_F32)
        return fail(TL_E_DTYPE, "matmul: a %s weight takes f32 activations, not %s", dtype_name(b.dtype),
                    dtype_name(a.dtype));
    if (a.ndim < 2 || b.ndim != 2)
        return fail(TL_E_SHAPE, "matmul: a %s weight is [k,n] against [...,m,k] activations, not %d-D x %d-D",
                    dtype_name(b.dtype), a.ndim, b.ndim);
    const int64_t k = b.shape[0], n = b.shape[1], m = a.shape[a.ndim - 2];
    if (a.shape[a.ndim - 1] != k)
        return fail(TL_E_SHAPE, "matmul: inner dims differ ([%lld,%lld] x [%lld,%lld])", (long long)m,
                    (long long)a.shape[a.ndim - 1], (long long)k, (long long)n);
    if (k > 1 && b.strides[0] != 1)
        return fail(TL_E_SHAPE,
                    "matmul: a %s weight must be the transpose of its stored [n, k] rows (tl_transpose of the "
                    "stored weight); this one's k has stride %lld",
                    dtype_name(b.dtype), (long long)b.strides[0]);
    if (is_block_dtype(b.dtype) && k % dtype_info(b.dtype).block != 0)
        return fail(TL_E_SHAPE, "matmul: k %lld is not whole %s blocks of %lld", (long long)k, dtype_name(b.dtype),
                    (long long)dtype_info(b.dtype).block);
    return TL_OK;
}

// What a stored weight's products take of the activations: q8_0/q4_0/q5_0 weights the rows
// quantized once per row (q4_1/q5_1 with q8_1's sums too), q4_K/q5_K/q6_K the rows as q8_K
// (integer products, as ggml does); f16/bf16 weights the rows as f32.
struct ActivationForm {
    bool with_sums, integer, super_blocks;
    explicit ActivationForm(tl_dtype dt)
        : with_sums(dt == TL_Q4_1 || dt == TL_Q5_1),
          integer(dt == TL_Q8_0 || dt == TL_Q4_0 || dt == TL_Q5_0 || with_sums),
          super_blocks(dt == TL_Q4_K || dt == TL_Q5_K || dt == TL_Q6_K) {}
    int code() const { return with_sums * 4 + integer * 2 + super_blocks; }  // (no branch to leave untaken)
};

constexpr int kMaxShared = 4;
// outs[0, count) made one at a time by make(i): a failure frees those made before it.
template <class Make>
tl_status one_by_one(tl_context &ctx, int count, tl_tensor *outs, Make make) {
    for (int i = 0; i < count; ++i) {
        const tl_status st = make(i);
        if (st == TL_OK) continue;
        for (int j = 0; j < i; ++j) ctx.free_tensor(outs[j]);
        return st;
    }
    return TL_OK;
}

// The products of f32 activations with 1 to kMaxShared weights read as they are stored (each [n,
// k] rows, each a contiguous run of k elements).  Weights whose products take the activations in
// one form (ActivationForm) share them, converted and quantized once (a layer's q, k and v, or
// gate and up); in two forms each product goes alone.  Each product runs in ranges of its n on the
// executor, each output a whole dot product (bits never depend on the thread count, nor on how
// many weights share the activations), weight rows in tiles of 16 against every activation row.
// rows16s[i] (or nullptr): weight i's rows laid out by pack_rows16, sixteen at a time, for a
// decode's few rows.
tl_status stored_weight_products(tl_context &ctx, const View &a, int count, const View *bs,
                                 const std::byte *const *rows16s, tl_tensor *outs) {
    if (count < 1 || count > kMaxShared) return fail(TL_E_INVALID_ARGUMENT, "matmul: %d weights share activations, not 1 to %d", count, kMaxShared);
    for (int i = 0; i < count; ++i) TL_TRY(check_stored_weight(a, bs[i]));
    const int64_t k = bs[0].shape[0];
    const ActivationForm form(bs[0].dtype);
    for (int i = 1; i < count; ++i)
        if (ActivationForm(bs[i].dtype).code() != form.code()) {  // activations in two forms: each product alone
            return one_by_one(ctx, count, outs, [&](int j) {
                return stored_weight_products(ctx, a, 1, &bs[j], &rows16s[j], &outs[j]);
            });
        }
    const bool quantized = form.integer || form.super_blocks;
    // Each weight's result and its split; an empty result is made at once (where a dim is 0 the
    // others may multiply past int64).
    struct Product {
        int64_t shape[TL_MAX_DIMS], n, results, min_grain, grain;
        bool panels;
    };
    Product products[kMaxShared];
    bool any_results = false;
    for (int i = 0; i < count; ++i) {
        Product &p = products[i];
        p.n = bs[i].shape[1];
        for (int d = 0; d < a.ndim; ++d) p.shape[d] = a.shape[d];
        p.shape[a.ndim - 1] = p.n;
        if (!count_of(a.ndim, p.shape, 1, &p.results))
            return fail(TL_E_OUT_OF_MEMORY, "matmul: the result's element count overflows");
        any_results = any_results || p.results > 0;
    }
    const int64_t rows = any_results ? rows_of(a) : 0;  // (a result's count bounds it)
    size_t panels_bytes = 0;
    bool any_panels = false;
    for (int i = 0; i < count; ++i) {
        Product &p = products[i];
        const View &b = bs[i];
        if (p.results == 0) continue;
        // A prompt's integer products sixteen weight rows at a time, each sixteen repacked into a
        // panel first where the CPU has the kernel: a panel a range of the split (at most
        // kMaxPanels); the K panels read the activations as int16 (wide).
        p.panels = quantized && rows >= kPanelMinRows && p.n >= kPanelRows && panel_kernel(b.dtype);
        const int64_t elements = rows * p.n * (k > 0 ? k : 1);
        p.min_grain = p.panels ? (p.n + kMaxPanels * kPanelRows - 1) / (kMaxPanels * kPanelRows) * kPanelRows : 1;
        p.grain = split_grain(p.n, elements, p.min_grain);
        if (p.panels) {
            panels_bytes = std::max(panels_bytes, size_t((p.n + p.grain - 1) / p.grain) * panel_bytes(b.dtype, k));
            any_panels = true;
        }
    }
    const size_t wide_bytes = any_panels && form.super_blocks ? aligned_up(size_t(rows) * q8k_wide_bytes(k)) : 0;
    std::byte *scratch = nullptr;
    size_t activation_bytes = 0;
    if (k > 0 && any_results) {  // (rows > 0: the results are not empty)
        int64_t bytes;
        const int64_t dims[2] = {rows, k};
        if (!count_of(2, dims, 4, &bytes)) return fail(TL_E_OUT_OF_MEMORY, "matmul: activations too large");
        static_assert(kQ8ActivationBytes * kQuantBlock + 2 * sizeof(float) <= 4 * kQuantBlock, "fits beside the f32 row");
        // beside the f32 rows: k quantized values (kQ8ActivationBytes each, or q8_K's 1 + 2 / 16), k / 32
        // scales, k / 32 sums
        if (quantized) bytes += bytes;
        activation_bytes = aligned_up(size_t(bytes));
        TL_TRY(ctx.scratch(activation_bytes + wide_bytes + panels_bytes, &scratch));
    }
    NewTensor made[kMaxShared];
    tl_tensor handles[kMaxShared];
    TL_TRY(one_by_one(ctx, count, handles, [&](int i) {
        const tl_status st = ctx.make_tensor(TL_F32, a.ndim, products[i].shape, &made[i]);
        handles[i] = made[i].handle;
        return st;
    }));
    for (int i = 0; i < count; ++i) outs[i] = handles[i];
    if (!any_results) return TL_OK;
    float *x = reinterpret_cast<float *>(scratch);
    std::byte *xq = reinterpret_cast<std::byte *>(x + rows * k);
    float *xscale = reinterpret_cast<float *>(xq + rows * k * kQ8ActivationBytes);  // 4-aligned: k is whole blocks
    const auto q8k_row = [&](int64_t r) {  // k is whole 256s: the sums 2-aligned
        std::byte *q = xq + r * k * kQ8ActivationBytes;
        return Q8KRow{reinterpret_cast<int8_t *>(q), reinterpret_cast<int16_t *>(q + k), xscale + r * (k / kQuantBlock)};
    };
    float *xsums = form.with_sums ? xscale + rows * (k / kQuantBlock) : nullptr;  // after every row's scales
    const auto q8_row = [&](int64_t r) {
        return Q8Activations{xq + r * k * kQ8ActivationBytes, xscale + r * (k / kQuantBlock),
                             xsums ? xsums + r * (k / kQuantBlock) : nullptr};
    };
    int16_t *wide = wide_bytes ? reinterpret_cast<int16_t *>(scratch + activation_bytes) : nullptr;
    const auto wide_row = [&](int64_t r) { return wide + r * int64_t(q8k_wide_bytes(k) / 2); };
    // Each activation row on its own, so a prompt's rows go over the executor too.
    run_split(ctx, k > 0 ? rows : 0, rows * k, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
            row_as_f32(a, r, x + r * k);
            if (form.integer)
                quantize_activations(x + r * k, k, xq + r * k * kQ8ActivationBytes, xscale + r * (k / kQuantBlock),
                                     xsums ? xsums + r * (k / kQuantBlock) : nullptr);
            if (form.super_blocks) quantize_activations_q8k(x + r * k, k, q8k_row(r));
            if (wide) widen_q8k(q8k_row(r), k, wide_row(r));
        }
    });
    for (int i = 0; i < count; ++i) {
        const Product &p = products[i];
        const View &b = bs[i];
        const std::byte *rows16 = rows16s[i];
        if (p.results == 0) continue;
        const int64_t n = p.n, grain = p.grain;
        const bool panels = p.panels, super_blocks = form.super_blocks;
        const int64_t elements = rows * n * (k > 0 ? k : 1);
        float *yd = reinterpret_cast<float *>(made[i].view.data);
        // Each tile of weight rows against every activation row while it is in cache.
        const size_t row_bytes = size_t(bytes_of(b.dtype, b.strides[1]));
        std::byte *panel_slots = panels ? scratch + activation_bytes + wide_bytes : nullptr;
        // Below the panels' rows, a rows16 layout serves each whole sixteen (tiles start at its edges).
        const bool sixteens = rows16 && rows < kPanelMinRows && !panels && quantized && k > 0;
        Q8Activations few[kPanelMinRows];  // the rows sixteens reads, once for every tile
        Q8KRow few_k[kPanelMinRows];
        for (int64_t r = 0; sixteens && r < rows; ++r) {
            if (super_blocks) few_k[r] = q8k_row(r);
            else few[r] = q8_row(r);
        }
        run_split(ctx, n, elements, [&](int64_t lo, int64_t hi) {
            for (int64_t j = lo, tile; j < hi; j += tile) {
                tile = hi - j < 16 ? hi - j : 16;
                if (sixteens && j % 16 && tile > 16 - j % 16) tile = 16 - j % 16;
                const std::byte *w = b.data + bytes_of(b.dtype, j * b.strides[1]);
                if (sixteens && tile == 16) {
                    const std::byte *group = rows16 + size_t(j / 16) * rows16_bytes(b.dtype, k);
                    if (super_blocks) dot_rows16_q8k(b.dtype, few_k, rows, group, k, yd + j, n);
                    else dot_rows16(b.dtype, few, rows, group, k, yd + j, n);
                    continue;
                }
                if (panels && tile == kPanelRows) {
                    std::byte *panel = panel_slots + size_t(lo / grain) * panel_bytes(b.dtype, k);
                    pack_panel(b.dtype, w, row_bytes, k, panel);
                    for (int64_t r = 0; r < rows; r += kPanelBatch) {
                        const int64_t m = rows - r < kPanelBatch ? rows - r : kPanelBatch;
                        Q8Activations batch[kPanelBatch];
                        Q8KPanelRow batch_k[kPanelBatch];
                        for (int64_t i = 0; i < m; ++i) {
                            if (super_blocks) batch_k[i] = Q8KPanelRow{q8k_row(r + i), wide_row(r + i)};
                            else batch[i] = q8_row(r + i);
                        }
                        if (super_blocks) dot_panel_q8k(b.dtype, batch_k, m, panel, k, yd + r * n + j, n);
                        else dot_panel(batch, m, panel, k, yd + r * n + j, n);
                    }
                    continue;
                }
                // The activation rows a few at a time, each weight block read and unpacked once for them.
                for (int64_t r = 0; quantized && k > 0 && r < rows; r += 4) {
                    const int64_t m = rows - r < 4 ? rows - r : 4;
                    Q8KRow group[4];
                    Q8Activations blocks[4];
                    for (int64_t i = 0; i < m; ++i) {
                        if (super_blocks) group[i] = q8k_row(r + i);
                        else blocks[i] = q8_row(r + i);
                    }
                    if (super_blocks) dot_rows_q8k(b.dtype, group, m, w, row_bytes, tile, k, yd + r * n + j, n);
                    else dot_rows_q8(b.dtype, blocks, m, w, row_bytes, tile, k, yd + r * n + j, n);
                }
                if (quantized && k > 0) continue;
                for (int64_t r = 0; r < rows; ++r) {
                    float *yj = yd + r * n + j;
                    if (k == 0)
                        std::fill(yj, yj + tile, 0.0f);
                    else
                        dot_rows(b.dtype, x + r * k, w, row_bytes, tile, k, yj);
                }
            }
        }, p.min_grain);
    }
    return TL_OK;
}

tl_status stored_weight_product(tl_context &ctx, const View &a, const View &b, const std::byte *rows16, tl_tensor *out) {
    return stored_weight_products(ctx, a, 1, &b, &rows16, out);
}

}  // namespace

tl_status op_matmul_rows16(tl_context &ctx, tl_tensor ta, tl_tensor tb, const std::byte *rows16, tl_tensor *out) {
    return op_matmul_shared(ctx, ta, 1, &tb, &rows16, out);
}

tl_status op_matmul_shared(tl_context &ctx, tl_tensor ta, int count, const tl_tensor *tbs,
                           const std::byte *const *rows16s, tl_tensor *outs) {
    if (count < 1 || count > kMaxShared) return fail(TL_E_INVALID_ARGUMENT, "matmul: %d weights share activations, not 1 to %d", count, kMaxShared);
    Resolved ra, rb[kMaxShared];
    TL_TRY(ctx.resolve(ta, &ra));
    View bs[kMaxShared];
    bool stored = true;
    for (int i = 0; i < count; ++i) {
        TL_TRY(ctx.resolve(tbs[i], &rb[i]));
        bs[i] = rb[i].view;
        if (rows16s[i] && !rows16_kernel(bs[i].dtype))
            return fail(TL_E_DTYPE, "matmul: a rows16 layout of %s", dtype_name(bs[i].dtype));
        stored = stored && is_storage_dtype(bs[i].dtype);
    }
    if (stored) return stored_weight_products(ctx, ra.view, count, bs, rows16s, outs);
    return one_by_one(ctx, count, outs, [&](int i) { return op_matmul(ctx, ta, tbs[i], &outs[i]); });  // f32: BLAS's
}

tl_status op_matmul(tl_context &ctx, tl_tensor ta, tl_tensor tb, tl_tensor *out) {
    Resolved ra, rb;
    TL_TRY(ctx.resolve(ta, &ra));
    TL_TRY(ctx.resolve(tb, &rb));
    View a = ra.view, b = rb.view;
    if (is_storage_dtype(b.dtype) || few_rows_of_stored_weight(a, b))  // weights as they are stored
        return stored_weight_product(ctx, a, b, nullptr, out);
    Plan p{};
    TL_TRY(plan(a, b, &p));
    // Operands BLAS cannot take as they are go through scratch, reserved before the output.
    const size_t elem = dtype_size(a.dtype);
    // Then the partial sums of a matrix-vector product, after both.
    const size_t bytes_a = p.copy_a ? size_t(a.numel()) * elem : 0, bytes_b = p.copy_b ? size_t(b.numel()) * elem : 0;
    const size_t pad_a = aligned_up(bytes_a), pad_b = aligned_up(bytes_b), bytes_partial = partial_bytes(p, elem);
    std::byte *scratch = nullptr;
    if (pad_a + pad_b + bytes_partial > 0) TL_TRY(ctx.scratch(pad_a + pad_b + bytes_partial, &scratch));
    int64_t shape[3] = {p.batches, p.m, p.n};
    NewTensor made;
    TL_TRY(ctx.make_tensor(a.dtype, p.batched ? 3 : 2, p.batched ? shape : shape + 1, &made));
    const View &c = made.view;
    // Nothing fails from here.
    if (p.copy_a) {
        a = contiguous_at(a, scratch);
        blas_form(matrix_of(a), &p.fa);
    }
    if (p.copy_b) {
        b = contiguous_at(b, scratch + pad_a);
        blas_form(matrix_of(b), &p.fb);
    }
    if (p.k == 0 && c.numel() > 0)
        fill_contiguous(c.data, c.dtype, c.numel(), 0.0);  // an empty sum; BLAS may not take k = 0 here
    else if (c.numel() > 0)
        run(ctx, p, a, b, c, scratch + pad_a + pad_b);
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
