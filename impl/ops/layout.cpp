// Ops that move or reinterpret elements: views (slice, transpose, reshape), copies (contiguous,
// concat, gather_rows) and the in-place copy_into.
#include <new>

#include "core/error.h"
#include "kernels/strided_loop.h"
#include "core/parallel.h"
#include "ops/ops.h"
#include "ops/rows.h"

namespace tl {
namespace {

// NumPy's no-copy reshape: new strides for new_shape over v's elements, if they exist.
bool reshape_strides(const View &v, int new_nd, const int64_t *new_shape, int64_t *new_strides) {
    int64_t old_shape[TL_MAX_DIMS], old_strides[TL_MAX_DIMS];
    int old_nd = 0;
    for (int d = 0; d < v.ndim; ++d) {
        if (v.shape[d] == 1) continue;  // a length-1 dimension's stride is free
        old_shape[old_nd] = v.shape[d];
        old_strides[old_nd++] = v.strides[d];
    }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < new_nd && oi < old_nd) {
        int64_t np = new_shape[ni], op = old_shape[oi];
        while (np != op) {
            if (np < op) {
                np *= new_shape[nj++];
            } else {
                op *= old_shape[oj++];
            }
        }
        for (int ok = oi; ok < oj - 1; ++ok)
            if (old_strides[ok] != old_shape[ok + 1] * old_strides[ok + 1]) return false;
        new_strides[nj - 1] = old_strides[oj - 1];
        for (int nk = nj - 1; nk > ni; --nk) new_strides[nk - 1] = new_strides[nk] * new_shape[nk];
        ni = nj++;
        oi = oj++;
    }
    const int64_t last = ni >= 1 ? new_strides[ni - 1] : 1;
    for (int nk = ni; nk < new_nd; ++nk) new_strides[nk] = last;
    return true;
}

// The lowest and one-past-highest byte a view touches (strides are never negative here).
void byte_extent(const View &v, const std::byte **lo, const std::byte **hi) {
    int64_t last = 0;
    for (int d = 0; d < v.ndim; ++d) last += (v.shape[d] - 1) * v.strides[d];
    *lo = v.data;
    *hi = v.data + (last + 1) * int64_t(dtype_size(v.dtype));
}

// gather_rows from a storage-dtype table: each id's row decoded to f32 (an embedding lookup in
// the weights' own format).
tl_status gather_stored_rows(tl_context &ctx, const View &table, const View &ids, tl_tensor *out) {
    if (table.ndim != 2)
        return fail(TL_E_SHAPE, "gather_rows: a %s table is 2-D, not %d-D", dtype_name(table.dtype), table.ndim);
    TL_TRY(require_rows("gather_rows", table));
    const int64_t d = table.shape[1];
    int64_t shape[TL_MAX_DIMS];
    for (int i = 0; i < ids.ndim; ++i) shape[i] = ids.shape[i];
    shape[ids.ndim] = d;
    NewTensor made;
    TL_TRY(ctx.make_tensor(TL_F32, ids.ndim + 1, shape, &made));
    const View &o = made.view;
    if (o.numel() == 0) return *out = made.handle, TL_OK;
    const int64_t count = ids.numel();
    float *od = reinterpret_cast<float *>(o.data);
    for (int64_t i = 0; i < count; ++i) {
        const int32_t id = *reinterpret_cast<const int32_t *>(ids.data + offset_of_item(ids, ids.ndim, i) * 4);
        row_as_f32(table, id, od + i * d);  // ids were checked in range by the caller
    }
    *out = made.handle;
    return TL_OK;
}

}  // namespace

tl_status op_slice(tl_context &ctx, tl_tensor ta, int axis, int64_t start, int64_t length, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    View v = ra.view;
    int ax = 0;
    TL_TRY(normalize_axis(axis, v.ndim, &ax));
    const int64_t dim = v.shape[ax];
    if (start < 0 || length < 0 || start > dim || length > dim - start)
        return fail(TL_E_SHAPE, "slice [%lld, +%lld) is outside axis %d of length %lld", (long long)start,
                    (long long)length, ax, (long long)dim);
    if (is_block_dtype(v.dtype) && v.strides[ax] == 1 && v.shape[ax] > 1 &&
        (start % dtype_info(v.dtype).block != 0 || length % dtype_info(v.dtype).block != 0))
        return fail(TL_E_SHAPE, "slice: %s keeps whole blocks of %lld along its stored rows, not [%lld, +%lld)",
                    dtype_name(v.dtype), (long long)dtype_info(v.dtype).block, (long long)start, (long long)length);
    v.shape[ax] = length;
    if (v.numel() > 0) v.data += bytes_of(v.dtype, start * v.strides[ax]);  // empty: strides may be huge
    return ctx.make_view(ra, v, out);
}

tl_status op_transpose(tl_context &ctx, tl_tensor ta, int d0, int d1, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    View v = ra.view;
    int a0 = 0, a1 = 0;
    TL_TRY(normalize_axis(d0, v.ndim, &a0));
    TL_TRY(normalize_axis(d1, v.ndim, &a1));
    std::swap(v.shape[a0], v.shape[a1]);
    std::swap(v.strides[a0], v.strides[a1]);
    return ctx.make_view(ra, v, out);
}

tl_status op_reshape(tl_context &ctx, tl_tensor ta, int ndim, const int64_t *shape, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    const View &a = ra.view;
    TL_TRY(refuse_blocks("reshape", a.dtype));
    if (ndim < 0 || ndim > TL_MAX_DIMS)
        return fail(TL_E_INVALID_ARGUMENT, "reshape: ndim %d is outside 0..%d", ndim, TL_MAX_DIMS);
    if (ndim > 0 && !shape) return fail(TL_E_INVALID_ARGUMENT, "reshape: shape is NULL");
    int64_t new_shape[TL_MAX_DIMS];
    int infer = -1;
    int64_t known = 1;
    for (int d = 0; d < ndim; ++d) {
        new_shape[d] = shape[d];
        if (shape[d] == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (shape[d] < 0) return fail(TL_E_INVALID_ARGUMENT, "reshape: dim %d is %lld", d, (long long)shape[d]);
        if (__builtin_mul_overflow(known, shape[d], &known)) return fail(TL_E_SHAPE, "reshape: the shape overflows");
    }
    const int64_t count = a.numel();
    if (infer >= 0) {
        if (known == 0 || count % known != 0)
            return fail(TL_E_SHAPE, "reshape: %lld elements do not fill the -1 dim", (long long)count);
        new_shape[infer] = count / known;
        known = count;
    }
    if (known != count)
        return fail(TL_E_SHAPE, "reshape: %lld elements into a shape of %lld", (long long)count, (long long)known);

    View v = a;
    v.ndim = ndim;
    for (int d = 0; d < ndim; ++d) v.shape[d] = new_shape[d];
    if (count == 0) {
        set_contiguous_strides(ndim, new_shape, v.strides);
        return ctx.make_view(ra, v, out);
    }
    if (reshape_strides(a, ndim, new_shape, v.strides)) return ctx.make_view(ra, v, out);
    // The strides cannot express it: a contiguous copy in logical order.
    NewTensor made;
    TL_TRY(ctx.make_tensor(a.dtype, ndim, new_shape, &made));
    const View &c = made.view;
    copy_kernel(a, contiguous_over(a, c.data));
    *out = made.handle;
    return TL_OK;
}

// copy_kernel, split over the executor when the copy is big (each element copied by one task).
static void copy_split(const tl_context &ctx, const View &src, const View &dst) {
    split_along(ctx, dst, -1, dst.numel(),
                [&](int d, int64_t lo, int64_t hi) { copy_kernel(cut(src, d, lo, hi), cut(dst, d, lo, hi)); });
}

tl_status op_contiguous(tl_context &ctx, tl_tensor ta, tl_tensor *out) {
    Resolved ra;
    TL_TRY(ctx.resolve(ta, &ra));
    TL_TRY(refuse_blocks("contiguous", ra.view.dtype));
    NewTensor made;
    TL_TRY(ctx.make_tensor(ra.view.dtype, ra.view.ndim, ra.view.shape, &made));
    const View &c = made.view;
    copy_split(ctx, ra.view, c);
    *out = made.handle;
    return TL_OK;
}

tl_status op_concat(tl_context &ctx, int n, const tl_tensor *ts, int axis, tl_tensor *out) {
    if (n < 1) return fail(TL_E_INVALID_ARGUMENT, "concat: n is %d, needs at least 1", n);
    if (!ts) return fail(TL_E_INVALID_ARGUMENT, "concat: tensors is NULL");
    // Each operand is resolved once and its View kept in the context's scratch (grown to the
    // high-water mark and kept, so a repeated step allocates nothing).
    std::byte *room;
    TL_TRY(ctx.scratch(size_t(n) * sizeof(View), &room));
    View *parts = reinterpret_cast<View *>(room);
    for (int i = 0; i < n; ++i) {
        Resolved r;
        TL_TRY(ctx.resolve(ts[i], &r));
        new (&parts[i]) View(r.view);
    }
    const View &first = parts[0];
    TL_TRY(refuse_blocks("concat", first.dtype));
    int ax = 0;
    TL_TRY(normalize_axis(axis, first.ndim, &ax));
    int64_t shape[TL_MAX_DIMS];
    for (int d = 0; d < first.ndim; ++d) shape[d] = first.shape[d];
    for (int i = 1; i < n; ++i) {
        const View &p = parts[i];
        if (p.dtype != first.dtype)
            return fail(TL_E_DTYPE, "concat: tensor %d is %s, tensor 0 %s", i, dtype_name(p.dtype),
                        dtype_name(first.dtype));
        if (p.ndim != first.ndim) return fail(TL_E_SHAPE, "concat: tensor %d has %d dims", i, p.ndim);
        for (int d = 0; d < p.ndim; ++d)
            if (d != ax && p.shape[d] != first.shape[d])
                return fail(TL_E_SHAPE, "concat: tensor %d differs in dim %d", i, d);
        if (__builtin_add_overflow(shape[ax], p.shape[ax], &shape[ax]))
            return fail(TL_E_SHAPE, "concat: the axis length overflows");
    }
    NewTensor made;
    TL_TRY(ctx.make_tensor(first.dtype, first.ndim, shape, &made));
    const View &c = made.view;
    int64_t at = 0;
    for (int i = 0; i < n && c.numel() > 0; ++i) {  // an empty result's strides may be huge
        View part = c;
        part.shape[ax] = parts[i].shape[ax];
        part.data += at * c.strides[ax] * int64_t(dtype_size(c.dtype));
        copy_kernel(parts[i], part);
        at += parts[i].shape[ax];
    }
    *out = made.handle;
    return TL_OK;
}

tl_status op_gather_rows(tl_context &ctx, tl_tensor ttable, tl_tensor tids, tl_tensor *out) {
    Resolved rt, ri;
    TL_TRY(ctx.resolve(ttable, &rt));
    TL_TRY(ctx.resolve(tids, &ri));
    const View &table = rt.view, &ids = ri.view;
    if (ids.dtype != TL_I32) return fail(TL_E_DTYPE, "gather_rows: ids are %s, not i32", dtype_name(ids.dtype));
    if (table.ndim < 1) return fail(TL_E_SHAPE, "gather_rows: the table needs at least 1 dim");
    const int nd = ids.ndim + table.ndim - 1;
    if (nd > TL_MAX_DIMS) return fail(TL_E_SHAPE, "gather_rows: the result would have %d dims", nd);
    const int64_t rows = table.shape[0];
    bool in_range = true;
    int64_t bad = 0;
    Operands<1> id_ops{{ids.data}, {ids.strides}, {4}};
    strided_for_each<1>(ids.ndim, ids.shape, id_ops, [&](std::byte *const *p, int64_t n, const int64_t *s) {
        for (int64_t i = 0; i < n && in_range; ++i) {
            const int32_t id = *reinterpret_cast<const int32_t *>(p[0] + i * s[0]);
            if (id < 0 || id >= rows) {
                in_range = false;
                bad = id;
            }
        }
    });
    if (!in_range)
        return fail(TL_E_SHAPE, "gather_rows: id %lld is outside 0..%lld", (long long)bad, (long long)rows - 1);
    if (is_storage_dtype(table.dtype)) return gather_stored_rows(ctx, table, ids, out);  // rows come out as f32
    int64_t shape[TL_MAX_DIMS];
    for (int d = 0; d < ids.ndim; ++d) shape[d] = ids.shape[d];
    for (int d = 1; d < table.ndim; ++d) shape[ids.ndim + d - 1] = table.shape[d];
    NewTensor made;
    TL_TRY(ctx.make_tensor(table.dtype, nd, shape, &made));
    const View &c = made.view;
    // An empty result copies nothing; its rows' sizes and strides (an empty table's rows may be
    // huge) need not even fit an address, so none is computed.
    if (c.numel() == 0) {
        *out = made.handle;
        return TL_OK;
    }
    const View row = drop_axis(table, 0);
    const int64_t elem = int64_t(dtype_size(table.dtype));
    const int64_t row_bytes = row.numel() * elem;
    if (ids.ndim == 1) {  // the embedding lookup: rows split over the executor, each copied by one task
        run_split(ctx, ids.shape[0], c.numel(), [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) {
                const int32_t id = *reinterpret_cast<const int32_t *>(ids.data + i * ids.strides[0] * 4);
                View src = row;
                src.data = table.data + id * table.strides[0] * elem;
                copy_kernel(src, contiguous_over(row, c.data + i * row_bytes));
            }
        });
        *out = made.handle;
        return TL_OK;
    }
    std::byte *dst = c.data;
    strided_for_each<1>(ids.ndim, ids.shape, id_ops, [&](std::byte *const *p, int64_t n, const int64_t *s) {
        for (int64_t i = 0; i < n; ++i) {
            const int32_t id = *reinterpret_cast<const int32_t *>(p[0] + i * s[0]);
            View src = row;
            src.data = table.data + id * table.strides[0] * elem;
            copy_kernel(src, contiguous_over(row, dst));
            dst += row_bytes;
        }
    });
    *out = made.handle;
    return TL_OK;
}

tl_status op_copy_into(tl_context &ctx, tl_tensor tsrc, tl_tensor tdst) {
    Resolved rs, rd;
    TL_TRY(ctx.resolve(tsrc, &rs));
    TL_TRY(ctx.resolve(tdst, &rd));
    View src = rs.view;
    const View &dst = rd.view;
    if (rd.read_only)
        return fail(TL_E_INVALID_ARGUMENT, "copy_into: the destination is read-only (a tensor over a mapped file)");
    TL_TRY(refuse_blocks("copy_into", dst.dtype));
    // f32 into an f16 or bf16 tensor (a KV cache kept in half the bytes) converts each element.
    const bool converts = src.dtype == TL_F32 && (dst.dtype == TL_F16 || dst.dtype == TL_BF16);
    if (src.dtype != dst.dtype && !converts)
        return fail(TL_E_DTYPE, "copy_into: %s into %s", dtype_name(src.dtype), dtype_name(dst.dtype));
    bool fits = src.ndim <= dst.ndim;
    for (int d = 0; fits && d < src.ndim; ++d) {
        const int64_t s = src.shape[d], t = dst.shape[d + dst.ndim - src.ndim];
        fits = s == t || s == 1;
    }
    if (!fits)
        return fail(TL_E_SHAPE, "copy_into: a %d-D source does not broadcast to the %d-D destination", src.ndim,
                    dst.ndim);
    if (src.numel() == 0 || dst.numel() == 0) return TL_OK;
    const std::byte *slo, *shi, *dlo, *dhi;
    byte_extent(src, &slo, &shi);
    byte_extent(dst, &dlo, &dhi);
    if (slo < dhi && dlo < shi) {  // overlapping: copy the source aside first
        std::byte *tmp;
        TL_TRY(ctx.scratch(size_t(src.numel()) * dtype_size(src.dtype), &tmp));
        View aside = contiguous_over(src, tmp);
        copy_kernel(src, aside);
        src = aside;
    }
    const View from = broadcast_to(src, dst.ndim, dst.shape);
    if (converts) {
        split_along(ctx, dst, -1, dst.numel(),
                    [&](int d, int64_t lo, int64_t hi) { convert_kernel(cut(from, d, lo, hi), cut(dst, d, lo, hi)); });
        return TL_OK;
    }
    copy_split(ctx, from, dst);
    return TL_OK;
}

}  // namespace tl
