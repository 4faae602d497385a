#include "blas/blas.h"

#include <cblas.h>

namespace tl::blas {
namespace {

CBLAS_TRANSPOSE cblas_of(Trans t) { return t == Trans::yes ? CblasTrans : CblasNoTrans; }

}  // namespace

void gemm(tl_dtype dt, Trans ta, int64_t lda, Trans tb, int64_t ldb, int64_t m, int64_t n, int64_t k,
          const std::byte *a, const std::byte *b, std::byte *c, int64_t ldc_in) {
    const int ldc = int(ldc_in > 1 ? ldc_in : 1);
    if (dt == TL_F32)
        cblas_sgemm(CblasRowMajor, cblas_of(ta), cblas_of(tb), int(m), int(n), int(k), 1.0f,
                    reinterpret_cast<const float *>(a), int(lda), reinterpret_cast<const float *>(b), int(ldb), 0.0f,
                    reinterpret_cast<float *>(c), ldc);
    else
        cblas_dgemm(CblasRowMajor, cblas_of(ta), cblas_of(tb), int(m), int(n), int(k), 1.0,
                    reinterpret_cast<const double *>(a), int(lda), reinterpret_cast<const double *>(b), int(ldb), 0.0,
                    reinterpret_cast<double *>(c), ldc);
}

void gemv(tl_dtype dt, Trans trans, int64_t rows, int64_t cols, const std::byte *m, int64_t ld, const std::byte *x,
          int64_t incx, std::byte *y) {
    if (dt == TL_F32)
        cblas_sgemv(CblasRowMajor, cblas_of(trans), int(rows), int(cols), 1.0f, reinterpret_cast<const float *>(m),
                    int(ld), reinterpret_cast<const float *>(x), int(incx), 0.0f, reinterpret_cast<float *>(y), 1);
    else
        cblas_dgemv(CblasRowMajor, cblas_of(trans), int(rows), int(cols), 1.0, reinterpret_cast<const double *>(m),
                    int(ld), reinterpret_cast<const double *>(x), int(incx), 0.0, reinterpret_cast<double *>(y), 1);
}

void set_threads(int n) { openblas_set_num_threads(n); }
int threads() { return openblas_get_num_threads(); }
const char *core_name() { return openblas_get_corename(); }

}  // namespace tl::blas
