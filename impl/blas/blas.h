// The one seam onto BLAS (OpenBLAS): no other file includes cblas.h.  Row-major, f32 or f64
// (the dtype picks s or d), beta 0: what matmul and the matrix-vector kernels need, no more.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/parallel.h"
#include "tensorlife/tl_tensor.h"

namespace tl::blas {

enum class Trans { no, yes };

// C[m,n] (row-major, leading dim ldc >= n) = op(A) op(B), A and B row-major with leading dims.
void gemm(tl_dtype dt, Trans ta, int64_t lda, Trans tb, int64_t ldb, int64_t m, int64_t n, int64_t k,
          const std::byte *a, const std::byte *b, std::byte *c, int64_t ldc);
// y (contiguous) = op(M) x; M row-major [rows, cols] with leading dim ld, x at stride incx.
void gemv(tl_dtype dt, Trans trans, int64_t rows, int64_t cols, const std::byte *m, int64_t ld, const std::byte *x,
          int64_t incx, std::byte *y);

// OpenBLAS's thread pool, process-wide.
void set_threads(int threads);
int threads();
// The kernel family OpenBLAS chose for this CPU ("Haswell", "Prescott", ...).
const char *core_name();

// run_split for a body that calls BLAS: through the executor only while OpenBLAS runs on one
// thread, since OpenBLAS's own pool is not for calls from several threads at once (and would
// then share each call again); else the whole in one piece.
template <class F>
void run_split_calling_blas(const tl_context &ctx, int64_t count, int64_t elements, F &&body) {
    if (threads() != 1) return body(int64_t(0), count);
    run_split(ctx, count, elements, body);
}

}  // namespace tl::blas
