// The block formats beyond q8_0 and q4_0, bit for bit as ggml lays them out: q4_1, q5_0, q5_1
// (32 elements a block) and the super blocks q4_K, q5_K, q6_K (256 elements, 6-bit scales and
// mins, or 8-bit scales for q6_K).  Encoding is ggml's reference quantizer (the one its
// quantize tool uses without an importance matrix); decoding is its dequantization, value for
// value.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensorlife/tl_tensor.h"

namespace tl {

// Whether dt is one of these formats.
bool is_ggml_block_format(tl_dtype dt);
// n elements (whole blocks) of a row.
void decode_blocks(tl_dtype dt, const std::byte *src, float *dst, int64_t n);
void encode_blocks(tl_dtype dt, const float *src, std::byte *dst, int64_t n);

}  // namespace tl
