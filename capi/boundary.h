// The ABI boundary: argument checks common to every call, and the catch that keeps C++
// exceptions from crossing into C.
#pragma once
#include <cstring>
#include <exception>
#include <new>

#include "core/context.h"
#include "core/error.h"

namespace tl {

// Versioned structs (struct_size first, as libgit2's): a caller built against an older header
// passes a smaller struct, so only its struct_size bytes are read or written.  One rule for
// tl_scope_options, tl_scope_stats and tl_tensor_info.
template <class T>
tl_status check_struct_size(const T &s, const char *what) {
    if (s.struct_size < sizeof(uint32_t))
        return fail(TL_E_INVALID_ARGUMENT, "%s: struct_size %u is too small", what, s.struct_size);
    return TL_OK;
}

// The caller's fields over the defaults in *into (struct_size checked first).
template <class T>
void read_versioned(const T &in, T *into) {
    std::memcpy(into, &in, in.struct_size < sizeof *into ? in.struct_size : sizeof *into);
}

// value written over as much of *out as the caller's struct holds; *out's struct_size is kept.
template <class T>
void write_versioned(T value, T *out) {
    value.struct_size = out->struct_size;
    std::memcpy(out, &value, out->struct_size < sizeof value ? out->struct_size : sizeof value);
}

template <class F>
tl_status guarded(F &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return tl::allocation_refused("out of memory");
    } catch (const std::exception &e) {
        return fail(TL_E_INTERNAL, "internal error: %s", e.what());
    } catch (...) {
        return fail(TL_E_INTERNAL, "internal error: unknown exception");
    }
}

// One thread at a time on a context, checked: a call that finds another thread's call still
// running on the context is refused with TL_E_BUSY and touches nothing.  An atomic exchange,
// so exact: a load-then-store flag would let two calls that enter at the same instant both
// through, which a loop of small calls against a long one makes likely, not rare.  With the
// check off (tl_context_set_thread_check) the caller serialises and nothing is taken.
class CallGuard {
public:
    explicit CallGuard(tl_context &c)
        : c_(c),
          checked_(c.thread_check.load(std::memory_order_relaxed)),
          entered_(!checked_ || c.in_call.exchange(1, std::memory_order_acquire) == 0) {}
    ~CallGuard() {
        if (checked_ && entered_) c_.in_call.store(0, std::memory_order_release);
    }
    CallGuard(const CallGuard &) = delete;
    CallGuard &operator=(const CallGuard &) = delete;
    bool entered() const { return entered_; }

private:
    tl_context &c_;
    const bool checked_;  // in_call was exchanged (and, when entered, is given back)
    const bool entered_;
};

// body(c) on a context, once no other thread's call is running on it.
template <class F>
tl_status on_context(tl_context &c, F &&body) noexcept {
    CallGuard guard(c);
    if (!guard.entered())
        return fail(TL_E_BUSY, "context %p is in a call on another thread: use a context from one thread at a time",
                    static_cast<void *>(&c));
    return guarded([&] { return body(c); });
}

// For calls on a context that write one output: both must be there.
template <class Out, class F>
tl_status with_context(tl_context *ctx, Out *out, F &&body) noexcept {
    if (!ctx) return fail(TL_E_INVALID_ARGUMENT, "context is NULL");
    if (!out) return fail(TL_E_INVALID_ARGUMENT, "output pointer is NULL");
    return on_context(*ctx, body);
}

template <class F>
tl_status with_context(tl_context *ctx, F &&body) noexcept {
    if (!ctx) return fail(TL_E_INVALID_ARGUMENT, "context is NULL");
    return on_context(*ctx, body);
}

}  // namespace tl
