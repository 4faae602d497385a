// Matrix-vector products in row blocks (gemv.h says why and what stays bitwise).
#include "kernels/gemv.h"

#include "core/parallel.h"
#include "kernels/quant.h"

namespace tl {
namespace {

// A block is about this much of the matrix, and a product has at most kMaxBlocks of them: a
// [256, 1024] f32 matrix (1 MiB) is two blocks, every matrix from 4 MiB up eight.  Eight blocks
// share evenly over 1, 2, 4 and 8 threads, and their partial sums (8 x cols elements) stay in
// cache, so the additions cost next to nothing beside the stream of the matrix.
constexpr int64_t kBlockBytes = 512 * 1024;
constexpr int64_t kMaxBlocks = 8;

// Row ranges of y = M x start at multiples of this, so every range but the last is whole groups
// of BLAS's row kernels, and each row is computed by the same kernel as in one call.
constexpr int64_t kRowAlignment = 16;

struct Blocks {
    int64_t count, rows_each;
};

// The row blocks of a [rows, cols] matrix: from its shape alone.  No rows (an empty sum, which
// matmul fills with zeros without calling BLAS) is one empty block: no partial sums.
Blocks blocks_of(int64_t rows, int64_t cols, size_t elem, int64_t alignment) {
    if (rows < 1) return Blocks{1, 1};
    int64_t count = rows * cols * int64_t(elem) / kBlockBytes;  // a matrix in memory: no overflow
    if (count > kMaxBlocks) count = kMaxBlocks;
    if (count > rows) count = rows;
    if (count < 1) count = 1;
    int64_t each = (rows + count - 1) / count;
    each = (each + alignment - 1) / alignment * alignment;
    return Blocks{(rows + each - 1) / each, each};
}

// The first row of block i (i == count: the end), never past the matrix.
int64_t row_of(const Blocks &b, int64_t i, int64_t rows) { return i * b.rows_each < rows ? i * b.rows_each : rows; }

// y += each partial in turn (block order), element by element: the one order of additions.
template <class T>
void add_partials(T *y, const T *partials, int64_t n, int64_t count) {
    for (int64_t b = 0; b < count; ++b) {
        const T *p = partials + b * n;
        for (int64_t j = 0; j < n; ++j) y[j] += p[j];
    }
}

// body(begin, end) over [0, count) blocks, split as a body that calls BLAS may be when it does.
template <class F>
void over_blocks(const tl_context &ctx, int64_t count, int64_t elements, bool calls_blas, F &&body) {
    if (calls_blas) return blas::run_split_calling_blas(ctx, count, elements, body);
    run_split(ctx, count, elements, body);
}

}  // namespace

size_t gemv_scratch_bytes(size_t elem, int64_t rows, int64_t cols) {
    return size_t(blocks_of(rows, cols, elem, 1).count - 1) * size_t(cols) * elem;
}

void gemv_run(const tl_context &ctx, const Gemv &g, std::byte *scratch) {
    const size_t elem = dtype_size(g.dtype);
    const int64_t elements = g.rows * g.cols;
    if (g.trans == blas::Trans::no) {  // y[rows] = M x: each task its own rows of y
        const Blocks b = blocks_of(g.rows, g.cols, elem, kRowAlignment);
        const bool rows_kernel = g.kernel == GemvKernel::dot_rows;
        over_blocks(ctx, b.count, elements, !rows_kernel, [&](int64_t lo, int64_t hi) {
            const int64_t r0 = row_of(b, lo, g.rows), r1 = row_of(b, hi, g.rows);
            if (rows_kernel)
                dot_rows(TL_F32, reinterpret_cast<const float *>(g.x), g.m + r0 * g.ld * 4, size_t(g.ld) * 4, r1 - r0,
                         g.cols, reinterpret_cast<float *>(g.y) + r0);
            else
                blas::gemv(g.dtype, blas::Trans::no, r1 - r0, g.cols, g.m + r0 * g.ld * int64_t(elem), g.ld, g.x,
                           g.incx, g.y + r0 * int64_t(elem));
        });
        return;
    }
    // y[cols] = M^T x: block 0 straight into y, block i > 0 into partial i - 1, then added in order.
    const Blocks b = blocks_of(g.rows, g.cols, elem, 1);
    over_blocks(ctx, b.count, elements, true, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            const int64_t r0 = row_of(b, i, g.rows), r1 = row_of(b, i + 1, g.rows);
            std::byte *out = i == 0 ? g.y : scratch + (i - 1) * g.cols * int64_t(elem);
            blas::gemv(g.dtype, blas::Trans::yes, r1 - r0, g.cols, g.m + r0 * g.ld * int64_t(elem), g.ld,
                       g.x + r0 * g.incx * int64_t(elem), g.incx, out);
        }
    });
    with_float_dtype(g.dtype, [&](auto t) {
        using T = decltype(t);
        add_partials(reinterpret_cast<T *>(g.y), reinterpret_cast<const T *>(scratch), g.cols, b.count - 1);
    });
}

}  // namespace tl
