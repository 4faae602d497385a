// Matrix-vector products (a decode step's one-row projections) through BLAS, cut into row blocks
// that the caller's executor can share.
//
// Why not only OpenBLAS's own threads: on this 2-core machine, streaming the decode step's
// shapes, two of Debian's OpenBLAS 0.3.21 threads reached 20-33 GB/s and two executor threads,
// each running single-threaded BLAS over its own contiguous half of the matrix, 29-41 GB/s (one
// thread: 19-25).  The gain is mostly on the [1024, 1024] products; on [1024, 4096] the two are
// level (bench_decode's "raw sgemv" rows).  The whole d_model 1024 step runs 1.1-1.6x faster on
// the executor (bench_decode's and bench_executor's step rows).
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

// y = op(M) x: M row-major [rows, cols] with leading dimension ld, x at stride incx (> 0),
// y contiguous (cols elements when trans is blas::Trans::yes, rows when blas::Trans::no).
struct Gemv {
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
