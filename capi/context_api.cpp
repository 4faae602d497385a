// Contexts and scopes.
#include "blas/blas.h"
#include "kernels/quant.h"
#include "boundary.h"
#include "tensorlife/tl.h"

using tl::fail;

extern "C" {

tl_status tl_context_create(const tl_allocator *allocator, tl_context **out) {
    if (!out) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    if (allocator && (!allocator->alloc || !allocator->free))
        return fail(TL_E_INVALID_ARGUMENT, "allocator needs both alloc and free");
    return tl::guarded([&] {
        tl::Memory memory(allocator);
        void *p = memory.allocate(sizeof(tl_context), alignof(tl_context));
        if (!p) return tl::allocation_refused("the context itself");
        *out = new (p) tl_context(allocator);
        return TL_OK;
    });
}

void tl_context_destroy(tl_context *ctx) {
    if (!ctx) return;
    tl::Memory memory = ctx->memory;  // the context's memory frees the context itself last
    ctx->~tl_context();
    memory.release(ctx, sizeof(tl_context));
}

tl_status tl_scope_open_ex(tl_context *ctx, const char *name, const tl_scope_options *opts, tl_scope *out) {
    return tl::with_context(ctx, out, [&](tl_context &c) {
        if (!name) return fail(TL_E_INVALID_ARGUMENT, "scope name is NULL");
        tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
        if (opts) {
            TL_TRY(tl::check_struct_size(*opts, "scope options"));
            tl::read_versioned(*opts, &o);
        }
        if (o.growth != TL_GROW && o.growth != TL_FIXED)
            return fail(TL_E_INVALID_ARGUMENT, "scope '%s': growth %d is neither TL_GROW nor TL_FIXED", name,
                        int(o.growth));
        if (o.max_bytes && o.slab_bytes > o.max_bytes)
            return fail(TL_E_INVALID_ARGUMENT, "scope '%s': slab_bytes %zu past max_bytes %zu", name, o.slab_bytes,
                        o.max_bytes);
        tl::Scope *s;
        TL_TRY(c.open_scope(name, o, &s));
        *out = tl_context::handle_of(*s);
        return TL_OK;
    });
}

tl_status tl_scope_open(tl_context *ctx, const char *name, size_t slab_bytes, tl_scope *out) {
    tl_scope_options o = TL_SCOPE_OPTIONS_INIT;
    o.slab_bytes = slab_bytes;
    return tl_scope_open_ex(ctx, name, &o, out);
}

tl_status tl_scope_reset(tl_context *ctx, tl_scope scope) {
    return tl::with_context(ctx, [&](tl_context &c) {
        tl::Scope *s;
        TL_TRY(c.find_scope(scope, &s));
        return c.reset_scope(s);
    });
}

tl_status tl_scope_close(tl_context *ctx, tl_scope scope) {
    return tl::with_context(ctx, [&](tl_context &c) {
        tl::Scope *s;
        TL_TRY(c.find_scope(scope, &s));
        return c.close_scope(s);
    });
}

tl_status tl_scope_stats_get(tl_context *ctx, tl_scope scope, tl_scope_stats *out) {
    if (out) TL_TRY(tl::check_struct_size(*out, "scope stats"));
    return tl::with_context(ctx, out, [&](tl_context &c) {
        tl::Scope *s;
        TL_TRY(c.find_scope(scope, &s));
        tl::write_versioned(s->stats(), out);
        return TL_OK;
    });
}

// Asking never fails: no busy check, no error set (a question, as sokol's *_query_state).
const char *tl_scope_name(tl_context *ctx, tl_scope scope) {
    const tl::Scope *s = ctx ? ctx->peek_scope(scope) : nullptr;
    return s ? s->name.c_str() : nullptr;
}

tl_status tl_context_set_executor(tl_context *ctx, const tl_executor *executor) {
    return tl::with_context(ctx, [&](tl_context &c) {
        c.executor = executor && executor->parallel_for ? *executor : tl_executor{};
        return TL_OK;
    });
}

tl_status tl_context_set_thread_check(tl_context *ctx, int check) {
    return tl::with_context(ctx, [&](tl_context &c) {
        c.thread_check.store(check != 0, std::memory_order_relaxed);
        return TL_OK;
    });
}

tl_status tl_set_blas_threads(int threads) {
    if (threads < 1) return fail(TL_E_INVALID_ARGUMENT, "BLAS threads must be at least 1, not %d", threads);
    tl::blas::set_threads(threads);
    return TL_OK;
}

int tl_blas_threads(void) { return tl::blas::threads(); }

const char *tl_blas_core(void) { return tl::blas::core_name(); }

const char *tl_simd_target(void) { return tl::simd_target(); }

tl_status tl_scope_current(tl_context *ctx, tl_scope *out) {
    return tl::with_context(ctx, out, [&](tl_context &c) {
        const tl::Scope *s = c.current_scope();
        *out = s ? tl_context::handle_of(*s) : tl_scope{0};
        return TL_OK;
    });
}

}  // extern "C"
