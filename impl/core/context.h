// A context: its allocator, its stack of scopes, its ambient store, and the handle checks that
// every call makes at its entry.
#pragma once
#include <atomic>
#include <cstdint>

#include "core/ambient.h"
#include "core/handle.h"
#include "core/memory.h"
#include "core/scope.h"
#include "core/shared_storage.h"
#include "core/tensor.h"

namespace tl {

// What a checked handle gives an op: its elements, by value, and what owns them.
struct Resolved {
    View view;
    std::byte *storage;  // start of the storage the elements live in
    uint64_t owner;      // handle bits of the tensor owning that storage
    bool read_only;      // over a mapped file: no op may write it
};

// A tensor just made: its handle, and a View of its elements (not written yet).
struct NewTensor {
    tl_tensor handle;
    View view;
};

}  // namespace tl

struct tl_context {
    explicit tl_context(const tl_allocator *allocator);
    ~tl_context();
    tl_context(const tl_context &) = delete;
    tl_context &operator=(const tl_context &) = delete;

    tl::Memory memory;
    // Set while a call runs on this context: a call from a second thread meanwhile is refused
    // (capi/boundary.h) instead of racing on the tables below.
    std::atomic<uint32_t> in_call{0};
    // Whether calls take in_call at all (tl_context_set_thread_check).  Atomic so that the
    // setter's own write is no data race with a later call's read; relaxed, a plain load.
    std::atomic<bool> thread_check{true};
    // The caller's job system for work big enough to split (impl/parallel.h); none: inline.
    tl_executor executor{};

    // Checks the handle (and a view's base) and gives its elements.
    tl_status resolve(tl_tensor t, tl::Resolved *out);
    // Checks the handle alone; the header pointer is valid until the next allocation.  Inline
    // for a live tensor; every refusal, with its message, is lookup_slow's.
    tl_status lookup(tl_tensor t, const tl::TensorHeader **out) {
        const tl::HandleParts p = tl::unpack_handle(t);
        if (p.depth != 0) {
            const tl::Scope *s = depths_[p.depth - 1];
            if (s && s->open && p.generation == s->current && p.slot < s->headers.size()) {
                *out = &s->headers[p.slot];
                return TL_OK;
            }
        } else if (const tl::TensorHeader *h = ambient_.find(p.slot, p.generation)) {  // never for bits 0
            *out = h;
            return TL_OK;
        }
        return lookup_slow(t, out);
    }

    tl::Scope *current_scope() const { return open_depth_ ? depths_[open_depth_ - 1] : nullptr; }
    // The open scope a handle names, or nullptr (no error set): closed, another context's, 0.
    tl::Scope *peek_scope(tl_scope handle) const;
    // peek_scope, or the refusal naming what the handle was (a closed scope, another context's).
    tl_status find_scope(tl_scope handle, tl::Scope **out) const;
    static tl_scope handle_of(const tl::Scope &scope);
    // The open scope is the innermost one (the only one reset or close take).
    tl_status check_innermost(const tl::Scope *scope) const;

    tl_status open_scope(const char *name, const tl_scope_options &options, tl::Scope **out);
    tl_status reset_scope(tl::Scope *scope);
    tl_status close_scope(tl::Scope *scope);

    // A new contiguous tensor in target (nullptr: ambient).  Its elements are not written.
    tl_status make_tensor(tl::Scope *target, tl_dtype dt, int ndim, const int64_t *shape, tl::NewTensor *out);
    tl_status make_tensor(tl_dtype dt, int ndim, const int64_t *shape, tl::NewTensor *out) {
        return make_tensor(current_scope(), dt, ndim, shape, out);
    }
    // A tensor over memory the caller owns (never freed here), in the current target.
    tl_status wrap_tensor(const tl::View &v, tl_tensor *handle);
    // A read-only tensor over a mapped file, in the current target; it holds a reference on the
    // region until it dies.
    tl_status map_tensor(const tl::View &v, tl::SharedStorage *region, tl_tensor *handle);
    // A view (shape and strides of v, elements of base) in the current target.
    tl_status make_view(const tl::Resolved &base, const tl::View &v, tl_tensor *handle);

    tl_status free_tensor(tl_tensor t);
    // Context-owned temporary memory, grown to the high-water mark and kept.
    tl_status scratch(size_t bytes, std::byte **out);

    // Open scopes, outermost first.
    template <class F>
    void for_each_open_scope(F &&f) const {
        for (uint32_t d = 0; d < open_depth_; ++d) f(*depths_[d]);
    }
    const tl::AmbientStore &ambient() const { return ambient_; }
    uint64_t scopes_opened() const { return scopes_opened_; }
    size_t scratch_bytes() const { return scratch_bytes_; }

    const char *storage_name(tl_tensor t) const;
    uint64_t storage_generation(tl_tensor t) const;

private:
    tl_status lookup_slow(tl_tensor t, const tl::TensorHeader **out);
    tl_status stale_scope_handle(const tl::Scope &scope, tl_tensor t, uint64_t generation) const;
    // An ambient owner's death: its block back to the allocator, its mapping reference dropped.
    void release_owned(const tl::TensorHeader &h);
    // Room for one more header in target first, so nothing fails after storage is taken.
    // Inline while the table has room; growing it, and the ambient store, out of line.
    tl_status reserve_header(tl::Scope *target) {
        if (target && target->headers.size() < target->headers.capacity() && target->headers.size() < tl::kMaxSlots)
            return TL_OK;
        return grow_headers(target);
    }
    tl_status grow_headers(tl::Scope *target);
    tl_tensor place_header(tl::Scope *target, const tl::TensorHeader &h);

    uint32_t open_depth_ = 0;
    uint64_t scopes_opened_ = 0;
    tl::Scope *depths_[TL_MAX_SCOPE_DEPTH] = {};
    tl::AmbientStore ambient_;
    std::byte *scratch_ = nullptr;
    size_t scratch_bytes_ = 0;
};

namespace tl {

// Why check_shape refuses (its one message for each reason), out of line.
tl_status refuse_shape(int ndim, const int64_t *shape, tl_dtype dt);

// Checks ndim and dims and computes element and byte counts without wrapping.  Inline: every
// new tensor passes here.
inline tl_status check_shape(int ndim, const int64_t *shape, tl_dtype dt, int64_t *numel, size_t *bytes) {
    *numel = 0;  // set on every path, so no caller's compiler sees them unset
    *bytes = 0;
    const DtypeInfo &d = dtype_info(dt);
    if (d.block_bytes == 0 || ndim < 0 || ndim > TL_MAX_DIMS || (ndim > 0 && !shape)) return refuse_shape(ndim, shape, dt);
    for (int i = 0; i < ndim; ++i)
        if (shape[i] < 0) return refuse_shape(ndim, shape, dt);
    if (d.block > 1 && (ndim == 0 || shape[ndim - 1] % d.block != 0)) return refuse_shape(ndim, shape, dt);
    // The elements, then the bytes: a block dtype's elements may overflow where its bytes do not
    // (256 in 144 bytes), and its bytes are whole blocks along the last dim.
    int64_t n, b;
    if (!count_of(ndim, shape, 1, &n)) return refuse_shape(ndim, shape, dt);
    if (d.block > 1) {
        int64_t blocks_shape[TL_MAX_DIMS];
        for (int i = 0; i < ndim; ++i) blocks_shape[i] = shape[i];
        blocks_shape[ndim - 1] /= d.block;
        if (!count_of(ndim, blocks_shape, int64_t(d.block_bytes), &b)) return refuse_shape(ndim, shape, dt);
    } else if (!count_of(ndim, shape, int64_t(d.size), &b)) {
        return refuse_shape(ndim, shape, dt);
    }
    *numel = n;
    *bytes = size_t(b);
    return TL_OK;
}

}  // namespace tl
