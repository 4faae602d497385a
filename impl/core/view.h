// Views of views: new shapes and strides over the same elements, for ops and kernels alike.
#pragma once
#include "core/tensor.h"

namespace tl {

// v with ndim dims of shape (NumPy's rule, aligned from the right): stride 0 where it repeats.
View broadcast_to(const View &v, int ndim, const int64_t *shape);
// like's dtype and shape, contiguous, over the elements at data.
View contiguous_over(const View &like, std::byte *data);
// The view without one dimension (its stride kept aside by the caller).
View drop_axis(const View &v, int axis);
// axis, or axis + ndim when negative, as a dimension of ndim; else TL_E_INVALID_ARGUMENT.
tl_status normalize_axis(int axis, int ndim, int *out);

}  // namespace tl
