// Factories, access and lifetime of tensors.
#include "ops/ops.h"
#include "boundary.h"
#include "tensorlife/tl.h"

using tl::fail;
using tl::with_context;

extern "C" {

tl_status tl_tensor_zeros(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_fill(c, dt, ndim, shape, 0.0, out); });
}

tl_status tl_tensor_ones(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_fill(c, dt, ndim, shape, 1.0, out); });
}

tl_status tl_tensor_full(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, double value, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_fill(c, dt, ndim, shape, value, out); });
}

tl_status tl_tensor_from_data(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, const void *data,
                              size_t nbytes, tl_tensor *out) {
    return with_context(ctx, out,
                        [&](tl_context &c) { return tl::op_from_data(c, dt, ndim, shape, data, nbytes, out); });
}

tl_status tl_tensor_wrap(tl_context *ctx, tl_dtype dt, int ndim, const int64_t *shape, void *data, size_t nbytes,
                         tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_wrap(c, dt, ndim, shape, data, nbytes, out); });
}

tl_status tl_tensor_read(tl_context *ctx, tl_tensor t, void *dst, size_t dst_bytes) {
    return with_context(ctx, [&](tl_context &c) { return tl::op_read(c, t, dst, dst_bytes); });
}

tl_status tl_tensor_free(tl_context *ctx, tl_tensor t) {
    return with_context(ctx, [&](tl_context &c) { return c.free_tensor(t); });
}

tl_status tl_tensor_data(tl_context *ctx, tl_tensor t, void **ptr) {
    return with_context(ctx, ptr, [&](tl_context &c) {
        tl::Resolved r;
        TL_TRY(c.resolve(t, &r));
        *ptr = r.view.data;
        return TL_OK;
    });
}

tl_status tl_tensor_info_get(tl_context *ctx, tl_tensor t, tl_tensor_info *out) {
    return with_context(ctx, out, [&](tl_context &c) {
        TL_TRY(tl::check_struct_size(*out, "tensor info"));
        tl::Resolved r;
        TL_TRY(c.resolve(t, &r));
        tl_tensor_info info = TL_TENSOR_INFO_INIT;
        info.dtype = r.view.dtype;
        info.ndim = r.view.ndim;
        for (int d = 0; d < r.view.ndim; ++d) {
            info.shape[d] = r.view.shape[d];
            info.strides[d] = r.view.strides[d];
        }
        info.offset = tl::elements_between(r.storage, r.view.data, r.view.dtype);
        info.storage = c.storage_name(t);
        info.generation = c.storage_generation(t);
        info.read_only = r.read_only ? 1 : 0;
        tl::write_versioned(info, out);
        return TL_OK;
    });
}

tl_status tl_tensor_retain(tl_context *ctx, tl_tensor t, tl_scope target, tl_tensor *out) {
    return with_context(ctx, out, [&](tl_context &c) { return tl::op_retain(c, t, target, out); });
}

}  // extern "C"
