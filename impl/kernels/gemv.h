// Matrix-vector products (a decode step's one-row projections) through BLAS or, where the caller
// chooses it (ops/matmul.cpp), the Highway kernel of dot_rows.cpp, cut into row blocks that the
// caller's executor can share.
//
// Why not only OpenBLAS's own threads: single-threaded BLAS calls over contiguous halves of the
// matrix, on the engine's threads, stream a decode step's shapes at least as fast as OpenBLAS's
// own pool, and keep one job system on the machine (figures: bench/README.md, "gemv").
//
// Bits never depend on the executor:
//   - y = M^T x (a sum over M's rows) is always computed as the same row blocks, chosen from the
//     shape alone, each block's product a partial sum, added in block order; with or without an
//     executor, whatever its threads, the same calls and the same additions;
//   - y = M x (each output one row's dot product) is cut into row ranges only when an executor
//     takes it, at multiples of 16 rows, and each output's dot product is BLAS's whole-row one.
#pragma once
#include "blas/blas.h"
#include "core/context.h"

namespace tl {

// Which kernel runs y = M x: BLAS's gemv, or dot_rows (f32, trans no, incx 1 only).
enum class GemvKernel { blas, dot_rows };

// y = op(M) x: M row-major [rows, cols] with leading dimension ld, x at stride incx (> 0),
// y contiguous (cols elements when trans is blas::Trans::yes, rows when blas::Trans::no).
struct Gemv {
    GemvKernel kernel;
    tl_dtype dtype;
    blas::Trans trans;
    int64_t rows, cols, ld;
    const std::byte *m, *x;
    int64_t incx;
    std::byte *y;
};

// Scratch bytes that any gemv_run over a matrix of rows x cols elements of elem bytes needs for its
// partial sums (its output cols long): enough for either transpose.
size_t gemv_scratch_bytes(size_t elem, int64_t rows, int64_t cols);

// Runs g, its blocks through ctx's executor when one is set and BLAS runs on one thread.
// scratch: at least gemv_scratch_bytes(elem, g.rows, g.cols) bytes.
void gemv_run(const tl_context &ctx, const Gemv &g, std::byte *scratch);

}  // namespace tl
