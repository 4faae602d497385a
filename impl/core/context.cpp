#include "core/context.h"

#include <cstdio>
#include <new>

#include "core/error.h"
#include "core/handle.h"

using tl::fail;

namespace {

// Makes h a header of ndim dims (the caller writes them) that owns nothing and points nowhere
// yet.  Field by field, in place, not zeroed whole: the dims past ndim are never read, and
// clearing and copying all 180 bytes was the largest cost of placing a tensor.
void clear_header(tl::TensorHeader &h, tl_dtype dt, int ndim) {
    h.dtype = dt;
    h.ndim = ndim;
    h.storage = nullptr;
    h.offset = 0;
    h.base = 0;
    h.storage_bytes = 0;
    h.region = nullptr;
    h.read_only = false;
}

// A header with v's dtype, shape and strides; where its elements live is the caller's to set.
tl::TensorHeader header_of(const tl::View &v) {
    tl::TensorHeader h;
    clear_header(h, v.dtype, v.ndim);
    for (int i = 0; i < v.ndim; ++i) {
        h.shape[i] = v.shape[i];
        h.strides[i] = v.strides[i];
    }
    return h;
}

// A scope's tensors over mapped files give their references back (at its reset or close);
// their slab bytes go with the slab itself.
void release_mappings(tl::Scope &s) {
    if (!s.mapped_owners) return;
    for (const tl::TensorHeader &h : s.headers)
        if (h.base == 0 && h.region) h.region->release();
    s.mapped_owners = 0;
}

// The handle of slot `slot` in the open scope's current generation.
tl_tensor scoped_handle(const tl::Scope &s, uint32_t slot) { return tl::pack_handle({s.depth, slot, s.current}); }

tl_status not_ours(tl_tensor t) {
    return fail(TL_E_INVALID_HANDLE,
                "tensor handle 0x%016llx was not issued by this context (another context's, or forged)",
                (unsigned long long)t.bits);
}

}  // namespace

tl_status tl::refuse_shape(int ndim, const int64_t *shape, tl_dtype dt) {
    const tl::DtypeInfo &d = tl::dtype_info(dt);
    if (d.block_bytes == 0) return fail(TL_E_INVALID_ARGUMENT, "dtype %d is no dtype (TL_DTYPE_MAP)", int(dt));
    if (ndim < 0 || ndim > TL_MAX_DIMS)
        return fail(TL_E_INVALID_ARGUMENT, "ndim %d is outside 0..%d", ndim, TL_MAX_DIMS);
    if (ndim > 0 && !shape) return fail(TL_E_INVALID_ARGUMENT, "shape is NULL with ndim %d", ndim);
    for (int i = 0; i < ndim; ++i)
        if (shape[i] < 0) return fail(TL_E_INVALID_ARGUMENT, "dim %d is negative (%lld)", i, (long long)shape[i]);
    if (d.block > 1 && (ndim == 0 || shape[ndim - 1] % d.block != 0))
        return fail(TL_E_SHAPE, "%s stores blocks of %lld along the last dim: a %d-D shape whose last dim is %lld",
                    d.name, (long long)d.block, ndim, ndim ? (long long)shape[ndim - 1] : 0LL);
    return fail(TL_E_OUT_OF_MEMORY, "shape of %d dims: its byte or element count overflows", ndim);
}

tl_context::tl_context(const tl_allocator *allocator) : memory(allocator), ambient_(&memory) {}

tl_context::~tl_context() {
    while (open_depth_) close_scope(depths_[open_depth_ - 1]);
    for (tl::Scope *&s : depths_) {
        if (!s) continue;
        s->~Scope();
        memory.release(s, sizeof(tl::Scope));
        s = nullptr;
    }
    ambient_.for_each_live([this](const tl::TensorHeader &h) { release_owned(h); });
    memory.release(scratch_, scratch_bytes_);
}

tl::Scope *tl_context::peek_scope(tl_scope handle) const {
    const uint32_t depth = tl::scope_handle_depth(handle);
    if (depth < 1 || depth > TL_MAX_SCOPE_DEPTH) return nullptr;
    tl::Scope *s = depths_[depth - 1];
    return s && s->open && s->epoch.opened == tl::scope_handle_generation(handle) ? s : nullptr;
}

tl_status tl_context::find_scope(tl_scope handle, tl::Scope **out) const {
    if ((*out = peek_scope(handle))) return TL_OK;
    if (handle.bits == 0) return fail(TL_E_INVALID_ARGUMENT, "the scope handle is 0 (no scope)");
    const uint32_t depth = tl::scope_handle_depth(handle);
    const uint64_t g = tl::scope_handle_generation(handle);
    const tl::Scope *s = depth >= 1 && depth <= TL_MAX_SCOPE_DEPTH ? depths_[depth - 1] : nullptr;
    if (s) {
        const uint64_t kept = s->closed_count < tl::Scope::kClosedKept ? s->closed_count : tl::Scope::kClosedKept;
        for (uint64_t back = 1; back <= kept; ++back) {
            const tl::Scope::Closed &c = s->closed[(s->closed_count - back) % tl::Scope::kClosedKept];
            if (c.epoch.opened == g)
                return fail(TL_E_INVALID_HANDLE, "scope '%s' #%llu is closed", c.name, (unsigned long long)c.epoch.id);
        }
        if (s->generations.index_of(g) >= 0 || s->generations.before_history(g))
            return fail(TL_E_INVALID_HANDLE, "an earlier scope at depth %u is closed (%llu scopes were closed there)",
                        depth, (unsigned long long)s->closed_count);
    }
    return fail(TL_E_INVALID_HANDLE,
                "scope handle 0x%llx was not issued by this context (another context's, or never issued)",
                (unsigned long long)handle.bits);
}

tl_scope tl_context::handle_of(const tl::Scope &scope) {
    return tl::pack_scope_handle(scope.depth, scope.epoch.opened);
}

// ---- scopes ----------------------------------------------------------------------------------

tl_status tl_context::open_scope(const char *name, const tl_scope_options &options, tl::Scope **out) {
    if (open_depth_ == TL_MAX_SCOPE_DEPTH)
        return fail(TL_E_SCOPE_ORDER, "scope '%s': %d scopes are open already, the deepest nesting", name,
                    TL_MAX_SCOPE_DEPTH);
    uint32_t depth = open_depth_ + 1;
    tl::Scope *&record = depths_[depth - 1];
    if (!record) {
        void *p = memory.allocate(sizeof(tl::Scope), alignof(tl::Scope));
        if (!p) return tl::allocation_refused("no memory for scope '%s'", name);
        record = new (p) tl::Scope(this, &memory, depth);
    }
    TL_TRY(record->generations.reserve());
    if (!record->name.assign(name)) return tl::allocation_refused("no memory for the name of scope '%s'", name);
    tl_status st = record->slab.open(options.growth, options.max_bytes, options.slab_bytes, name);
    if (st != TL_OK) {
        record->name.clear();
        return st;
    }
    record->open = true;
    record->current = record->generations.next();
    record->epoch = {++scopes_opened_, record->current, record->generations.issued() - 1, 0};
    open_depth_ = depth;
    *out = record;
    return TL_OK;
}

tl_status tl_context::check_innermost(const tl::Scope *scope) const {
    if (scope->depth != open_depth_)
        return fail(TL_E_SCOPE_ORDER, "scope '%s' is not the innermost open scope ('%s' is)", scope->name.c_str(),
                    current_scope()->name.c_str());
    return TL_OK;
}

tl_status tl_context::reset_scope(tl::Scope *scope) {
    TL_TRY(check_innermost(scope));
    TL_TRY(scope->generations.reserve());  // the one step that can fail: before any change
    release_mappings(*scope);
    scope->slab.reset();
    scope->headers.clear();  // capacity kept: the next step places its headers without allocating
    scope->current = scope->generations.next();
    ++scope->epoch.resets;
    return TL_OK;
}

tl_status tl_context::close_scope(tl::Scope *scope) {
    TL_TRY(check_innermost(scope));
    tl::Scope::Closed &c = scope->closed[scope->closed_count++ % tl::Scope::kClosedKept];
    c.epoch = scope->epoch;
    c.last_index = scope->generations.issued() - 1;
    std::snprintf(c.name, sizeof c.name, "%s", scope->name.c_str());
    scope->name.clear();
    release_mappings(*scope);
    scope->slab.release_all();
    scope->headers.clear();
    scope->open = false;  // its handles no longer match: nothing current at this depth
    --open_depth_;
    return TL_OK;
}

// ---- handles ---------------------------------------------------------------------------------

tl_status tl_context::stale_scope_handle(const tl::Scope &s, tl_tensor t, uint64_t g) const {
    const int64_t found = s.generations.index_of(g);
    if (found < 0 && s.generations.before_history(g))
        return fail(TL_E_STORAGE_CLOSED,
                    "tensor handle 0x%016llx is of an old generation at depth %u, or another context's",
                    (unsigned long long)t.bits, s.depth);
    if (found < 0) return not_ours(t);
    const uint64_t index = uint64_t(found);
    if (s.open && index >= s.epoch.first_index)
        return fail(TL_E_STORAGE_CLOSED, "storage '%s' #%llu gen %llu is closed (scope is at gen %llu)", s.name.c_str(),
                    (unsigned long long)s.epoch.id, (unsigned long long)(index - s.epoch.first_index),
                    (unsigned long long)s.resets());
    const uint64_t kept = s.closed_count < tl::Scope::kClosedKept ? s.closed_count : tl::Scope::kClosedKept;
    for (uint64_t back = 1; back <= kept; ++back) {
        const tl::Scope::Closed &c = s.closed[(s.closed_count - back) % tl::Scope::kClosedKept];
        if (index >= c.epoch.first_index && index <= c.last_index)
            return fail(TL_E_STORAGE_CLOSED, "storage '%s' #%llu gen %llu is closed (scope was closed at gen %llu)",
                        c.name, (unsigned long long)c.epoch.id, (unsigned long long)(index - c.epoch.first_index),
                        (unsigned long long)c.epoch.resets);
    }
    return fail(TL_E_STORAGE_CLOSED,
                "storage of an earlier scope at depth %u is closed (%llu scopes were closed there)", s.depth,
                (unsigned long long)s.closed_count);
}

tl_status tl_context::lookup_slow(tl_tensor t, const tl::TensorHeader **out) {
    if (t.bits == 0) return fail(TL_E_INVALID_HANDLE, "no tensor (handle bits are 0)");
    tl::HandleParts p = tl::unpack_handle(t);
    if (p.depth == 0) {
        const tl::TensorHeader *h = ambient_.find(p.slot, p.generation);
        if (h) return *out = h, TL_OK;
        if (!ambient_.issued(p.generation)) return not_ours(t);
        return fail(TL_E_INVALID_HANDLE, "ambient tensor (slot %u, gen %llu) was freed", p.slot,
                    (unsigned long long)p.generation);
    }
    const tl::Scope *s = depths_[p.depth - 1];
    if (!s) return not_ours(t);
    if (!s->open || p.generation != s->current) return stale_scope_handle(*s, t, p.generation);
    if (p.slot >= s->headers.size()) return not_ours(t);  // the generation is current, the slot never issued
    *out = &s->headers[p.slot];
    return TL_OK;
}

tl_status tl_context::resolve(tl_tensor t, tl::Resolved *out) {
    const tl::TensorHeader *h = nullptr;
    TL_TRY(lookup(t, &h));
    if (h->base != 0) {
        const tl::TensorHeader *base = nullptr;
        TL_TRY(lookup(tl_tensor{h->base}, &base));  // a view dies with its base
    }
    tl::view_into(*h, out->view);
    out->storage = h->storage;
    out->owner = h->base ? h->base : t.bits;
    out->read_only = h->read_only;
    return TL_OK;
}

const char *tl_context::storage_name(tl_tensor t) const {
    tl::HandleParts p = tl::unpack_handle(t);
    return p.depth == 0 ? "ambient" : depths_[p.depth - 1]->name.c_str();
}

uint64_t tl_context::storage_generation(tl_tensor t) const {
    tl::HandleParts p = tl::unpack_handle(t);
    return p.depth == 0 ? 0 : depths_[p.depth - 1]->resets();
}

// ---- placing tensors -------------------------------------------------------------------------

tl_status tl_context::grow_headers(tl::Scope *target) {
    if (!target) return ambient_.reserve_one();
    auto &headers = target->headers;
    if (headers.size() >= tl::kMaxSlots)
        return fail(TL_E_SCOPE_FULL, "scope '%s' holds the most tensors a generation can (%u)", target->name.c_str(),
                    tl::kMaxSlots);
    if (!tl::room_for_one_more(headers, 64))
        return tl::allocation_refused("scope '%s': no memory to grow its tensor table", target->name.c_str());
    return TL_OK;
}

tl_tensor tl_context::place_header(tl::Scope *target, const tl::TensorHeader &h) {
    if (!target) {
        uint32_t slot;
        uint64_t generation;
        // An ambient view is listed with its ambient base, which frees it.
        const tl::HandleParts base = tl::unpack_handle(tl_tensor{h.base});
        ambient_.add(h, h.base && base.depth == 0 ? base.slot : tl::AmbientStore::kNone, &slot, &generation);
        return tl::pack_handle({0, slot, generation});
    }
    uint32_t slot = uint32_t(target->headers.size());
    target->headers.push_back(h);  // capacity reserved: cannot throw
    if (h.base == 0 && h.region) ++target->mapped_owners;
    return scoped_handle(*target, slot);
}

tl_status tl_context::make_tensor(tl::Scope *target, tl_dtype dt, int ndim, const int64_t *shape, tl::NewTensor *out) {
    int64_t numel;
    size_t bytes;
    TL_TRY(tl::check_shape(ndim, shape, dt, &numel, &bytes));
    TL_TRY(reserve_header(target));
    std::byte *data, *storage;
    size_t owned_bytes = 0;
    if (target) {
        TL_TRY(target->slab.allocate(bytes, target->name.c_str(), &data, &storage));
    } else if (bytes == 0) {
        data = storage = tl::empty_tensor_home();
    } else {
        data = storage = static_cast<std::byte *>(memory.allocate(bytes, tl::kTensorAlignment));
        if (!data)
            return tl::allocation_refused("%zu bytes for an ambient tensor", bytes);
        owned_bytes = bytes;
    }
    // Nothing fails from here.  A scoped header is written in its slot, field by field, and the
    // View from the same values: building a header on the stack and copying it (whole-struct
    // moves of fields just stored one by one) was most of a tiny op's cost.
    tl::TensorHeader ambient_header;
    const uint32_t slot = target ? uint32_t(target->headers.size()) : 0;
    tl::TensorHeader &h = target ? target->headers.emplace_back() : ambient_header;  // capacity reserved
    clear_header(h, dt, ndim);
    h.storage = storage;
    h.offset = tl::elements_between(storage, data, dt);
    h.storage_bytes = owned_bytes;
    for (int i = 0; i < ndim; ++i) h.shape[i] = shape[i];
    tl::set_contiguous_strides(ndim, shape, h.strides);
    tl::View &v = out->view;
    v.dtype = dt;
    v.ndim = ndim;
    for (int i = 0; i < ndim; ++i) {
        v.shape[i] = shape[i];
        v.strides[i] = h.strides[i];
    }
    v.data = data;
    out->handle = target ? scoped_handle(*target, slot) : place_header(nullptr, ambient_header);
    return TL_OK;
}

tl_status tl_context::wrap_tensor(const tl::View &v, tl_tensor *handle) {
    tl::Scope *target = current_scope();
    TL_TRY(reserve_header(target));
    tl::TensorHeader h = header_of(v);
    h.storage = v.data;  // storage_bytes 0: not ours to free
    *handle = place_header(target, h);
    return TL_OK;
}

tl_status tl_context::map_tensor(const tl::View &v, tl::SharedStorage *region, tl_tensor *handle) {
    tl::Scope *target = current_scope();
    TL_TRY(reserve_header(target));
    tl::TensorHeader h = header_of(v);
    h.storage = v.data;  // storage_bytes 0: the region owns it
    h.region = region;
    h.read_only = true;
    region->acquire();  // nothing can fail past here
    *handle = place_header(target, h);
    return TL_OK;
}

tl_status tl_context::make_view(const tl::Resolved &base, const tl::View &v, tl_tensor *handle) {
    tl::Scope *target = current_scope();
    TL_TRY(reserve_header(target));
    tl::TensorHeader h = header_of(v);
    h.storage = base.storage;
    h.offset = tl::elements_between(base.storage, v.data, v.dtype);
    h.base = base.owner;
    h.read_only = base.read_only;
    *handle = place_header(target, h);
    return TL_OK;
}

tl_status tl_context::free_tensor(tl_tensor t) {
    const tl::TensorHeader *h = nullptr;
    TL_TRY(lookup(t, &h));
    tl::HandleParts p = tl::unpack_handle(t);
    if (p.depth != 0) return TL_OK;  // scoped: dies at its scope's reset
    release_owned(*h);
    ambient_.remove(p.slot);
    return TL_OK;
}

void tl_context::release_owned(const tl::TensorHeader &h) {
    if (h.base != 0) return;  // a view owns nothing
    if (h.storage_bytes) memory.release(h.storage, h.storage_bytes);
    if (h.region) h.region->release();
}

tl_status tl_context::scratch(size_t bytes, std::byte **out) {
    if (bytes > scratch_bytes_) {
        size_t grown = bytes > scratch_bytes_ * 2 ? bytes : scratch_bytes_ * 2;
        void *p = memory.allocate(grown, tl::kTensorAlignment);
        if (!p) return tl::allocation_refused("%zu bytes of scratch", grown);
        memory.release(scratch_, scratch_bytes_);
        scratch_ = static_cast<std::byte *>(p);
        scratch_bytes_ = grown;
    }
    *out = scratch_;
    return TL_OK;
}
