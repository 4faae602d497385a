// Storage that tensors share but the library's scopes do not own (a mapped file's pages):
// counted references, atomically (tensors of several contexts, on several threads, may hold
// one).  Core only counts; the kind of storage behind it (io's MappedRegion) says how it ends.
#pragma once
#include <atomic>

namespace tl {

struct SharedStorage {
    using LastRelease = void (*)(SharedStorage *);
    // One reference, held by the maker.
    explicit SharedStorage(LastRelease last_release) : last_release_(last_release) {}
    SharedStorage(const SharedStorage &) = delete;
    SharedStorage &operator=(const SharedStorage &) = delete;

    void acquire() { refs_.fetch_add(1, std::memory_order_relaxed); }
    // The last release ends the storage (and this record with it).
    void release() {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) last_release_(this);
    }

private:
    std::atomic<long> refs_{1};
    LastRelease last_release_;
};

}  // namespace tl
