// Products with weights in the block formats that have no integer kernel of their own (q4_1 and
// q5_1, whose llama.cpp products take q8_1 activations, not written here): each run of 256
// weights of a tile of rows is decoded to f32 once, on the stack, and dotted with every
// activation row there (dot_rows' f32 kernel), so a batch of rows (a prompt) pays for the
// decoding once.  The sums run chunk by chunk in an order fixed by k and the instruction set.
#include "kernels/kernels.h"
#include "kernels/quant.h"

#include <algorithm>

#include "core/tensor.h"

namespace tl {

void dot_rows_widened(tl_dtype dt, const float *x, int64_t xrows, const std::byte *w, size_t row_bytes, int64_t nrows,
                      int64_t k, float *y, int64_t y_stride) {
    constexpr int64_t kChunk = 256, kTile = 16;
    const DtypeInfo &info = dtype_info(dt);
    alignas(64) float wide[kTile][kChunk];
    float partial[kTile];
    for (int64_t r = 0; r < xrows; ++r) std::fill(y + r * y_stride, y + r * y_stride + nrows, 0.0f);
    for (int64_t c = 0; c < k; c += kChunk) {
        const int64_t len = std::min(kChunk, k - c);
        const int64_t offset = c / info.block * int64_t(info.block_bytes);
        for (int64_t j = 0; j < nrows; ++j) dequantize_row(dt, w + j * int64_t(row_bytes) + offset, wide[j], len);
        for (int64_t r = 0; r < xrows; ++r) {
            dot_rows(TL_F32, x + r * k + c, reinterpret_cast<const std::byte *>(wide), sizeof wide[0], nrows, len, partial);
            float *yr = y + r * y_stride;
            for (int64_t j = 0; j < nrows; ++j) yr[j] += partial[j];
        }
    }
}

}  // namespace tl
