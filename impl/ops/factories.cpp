// Making tensors from values and data, reading them back, and retaining them out of a scope.
#include <cstring>

#include "core/error.h"
#include "ops/ops.h"

namespace tl {

namespace {

// v's elements, in logical order, into contiguous memory at dst.  A block dtype's tensor is
// copied only as it lies (whole rows of blocks): a view with other strides is refused.
tl_status copy_out(const char *op, const View &v, std::byte *dst) {
    if (!is_block_dtype(v.dtype)) return copy_kernel(v, contiguous_over(v, dst)), TL_OK;
    if (!v.is_contiguous())
        return fail(TL_E_SHAPE, "%s: a %s view that is not contiguous (its blocks would be split)", op,
                    dtype_name(v.dtype));
    std::memcpy(dst, v.data, size_t(bytes_of(v.dtype, v.numel())));
    return TL_OK;
}

}  // namespace

tl_status op_fill(tl_context &ctx, tl_dtype dt, int ndim, const int64_t *shape, double value, tl_tensor *out) {
    if (is_block_dtype(dt))
        return fail(TL_E_DTYPE, "zeros, ones and full do not make %s tensors: quantize f32 ones with tl_convert",
                    dtype_name(dt));
    if (dt == TL_I32 && !is_int32_value(value)) return fail(TL_E_INVALID_ARGUMENT, "full: %g is no int32 value", value);
    NewTensor made;
    TL_TRY(ctx.make_tensor(dt, ndim, shape, &made));
    const View &v = made.view;
    fill_contiguous(v.data, dt, v.numel(), value);  // slab memory is reused dirty: every element is written
    *out = made.handle;
    return TL_OK;
}

tl_status op_from_data(tl_context &ctx, tl_dtype dt, int ndim, const int64_t *shape, const void *data, size_t nbytes,
                       tl_tensor *out) {
    int64_t numel;
    size_t bytes;
    TL_TRY(check_shape(ndim, shape, dt, &numel, &bytes));
    if (nbytes != bytes)
        return fail(TL_E_INVALID_ARGUMENT, "from_data: %zu bytes given, the shape needs %zu", nbytes, bytes);
    if (!data && bytes) return fail(TL_E_INVALID_ARGUMENT, "from_data: data is NULL");
    NewTensor made;
    TL_TRY(ctx.make_tensor(dt, ndim, shape, &made));
    const View &v = made.view;
    if (bytes) std::memcpy(v.data, data, bytes);
    *out = made.handle;
    return TL_OK;
}

tl_status op_wrap(tl_context &ctx, tl_dtype dt, int ndim, const int64_t *shape, void *data, size_t nbytes,
                  tl_tensor *out) {
    int64_t numel;
    size_t bytes;
    TL_TRY(check_shape(ndim, shape, dt, &numel, &bytes));
    if (nbytes != bytes)
        return fail(TL_E_INVALID_ARGUMENT, "wrap: %zu bytes given, the shape needs %zu", nbytes, bytes);
    if (!data) return fail(TL_E_INVALID_ARGUMENT, "wrap: data is NULL");
    const size_t align = dtype_size(dt) ? dtype_size(dt) : 2;  // a block starts with its f16 scale
    if (reinterpret_cast<uintptr_t>(data) % align != 0)
        return fail(TL_E_INVALID_ARGUMENT, "wrap: data is not aligned to %zu bytes", align);
    View like{};
    like.dtype = dt;
    like.ndim = ndim;
    for (int i = 0; i < ndim; ++i) like.shape[i] = shape[i];
    return ctx.wrap_tensor(contiguous_over(like, static_cast<std::byte *>(data)), out);
}

tl_status op_read(tl_context &ctx, tl_tensor t, void *dst, size_t dst_bytes) {
    Resolved r;
    TL_TRY(ctx.resolve(t, &r));
    const size_t bytes = size_t(bytes_of(r.view.dtype, r.view.numel()));
    if (!dst && bytes) return fail(TL_E_INVALID_ARGUMENT, "read: dst is NULL");
    if (dst_bytes < bytes)
        return fail(TL_E_INVALID_ARGUMENT, "read: dst holds %zu bytes, the tensor %zu", dst_bytes, bytes);
    return copy_out("read", r.view, static_cast<std::byte *>(dst));
}

tl_status op_retain(tl_context &ctx, tl_tensor t, tl_scope target_handle, tl_tensor *out) {
    Resolved r;
    TL_TRY(ctx.resolve(t, &r));
    Scope *target = nullptr;  // ambient for handle 0
    if (target_handle.bits) TL_TRY(ctx.find_scope(target_handle, &target));
    if (is_block_dtype(r.view.dtype) && !r.view.is_contiguous())
        return fail(TL_E_SHAPE, "retain: a %s view that is not contiguous (its blocks would be split)",
                    dtype_name(r.view.dtype));
    NewTensor made;
    TL_TRY(ctx.make_tensor(target, r.view.dtype, r.view.ndim, r.view.shape, &made));
    TL_TRY(copy_out("retain", r.view, made.view.data));  // cannot fail: checked above
    *out = made.handle;
    return TL_OK;
}

}  // namespace tl
