// The ABI boundary: argument checks common to every call, and the catch that keeps C++
// exceptions from crossing into C.
#pragma once
#include <exception>
#include <new>

#include "../impl/context.h"
#include "../impl/error.h"

namespace tl {

template <class F>
tl_status guarded(F &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return fail(TL_E_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception &e) {
        return fail(TL_E_INTERNAL, "internal error: %s", e.what());
    } catch (...) {
        return fail(TL_E_INTERNAL, "internal error: unknown exception");
    }
}

// For calls on a context that write one output: both must be there.
template <class Out, class F>
tl_status with_context(tl_context *ctx, Out *out, F &&body) noexcept {
    if (!ctx) return fail(TL_E_INVALID_ARGUMENT, "context is NULL");
    if (!out) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    return guarded([&] { return body(*ctx); });
}

template <class F>
tl_status with_context(tl_context *ctx, F &&body) noexcept {
    if (!ctx) return fail(TL_E_INVALID_ARGUMENT, "context is NULL");
    return guarded([&] { return body(*ctx); });
}

}  // namespace tl
