#include "core/view.h"

#include "core/error.h"

namespace tl {

View broadcast_to(const View &v, int ndim, const int64_t *shape) {
    View r = v;
    r.ndim = ndim;
    const int lead = ndim - v.ndim;
    for (int d = 0; d < ndim; ++d) {
        r.shape[d] = shape[d];
        int src = d - lead;
        r.strides[d] = (src < 0 || v.shape[src] == 1) ? 0 : v.strides[src];
    }
    return r;
}

View contiguous_over(const View &like, std::byte *data) {
    View c = like;
    c.data = data;
    set_contiguous_strides(c.ndim, c.shape, c.strides);
    return c;
}

View drop_axis(const View &v, int axis) {
    View r = v;
    r.ndim = v.ndim - 1;
    for (int d = axis; d < r.ndim; ++d) {
        r.shape[d] = v.shape[d + 1];
        r.strides[d] = v.strides[d + 1];
    }
    return r;
}

tl_status normalize_axis(int axis, int ndim, int *out) {
    const int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) return fail(TL_E_INVALID_ARGUMENT, "axis %d is out of range for %d dims", axis, ndim);
    *out = a;
    return TL_OK;
}

}  // namespace tl
