// The rows of a tensor along its last dim, as the ops that read storage dtypes take them (each
// row read where it lies, at any offset in any storage).
#pragma once
#include "core/view.h"
#include "tensorlife/tl_base.h"

namespace tl {

// How many rows v has (its leading dims in row-major order), and where row r starts.
int64_t rows_of(const View &v);
const std::byte *row_at(const View &v, int64_t r);
// Row r of v as f32 values in out (gathered at the last dim's stride for an element dtype; a
// storage dtype's row is contiguous, checked by require_rows).
void row_as_f32(const View &v, int64_t r, float *out);
// A block-dtype tensor is read along its stored rows: TL_E_SHAPE, naming op, when this view's
// last dim is not contiguous.
tl_status require_rows(const char *op, const View &v);

}  // namespace tl
