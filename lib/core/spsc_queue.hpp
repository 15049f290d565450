// spsc_queue.hpp - single-producer single-consumer lock-free queue of POD
// items, moved in bursts between two worker lcores.
//
// Used for the switch's cross-worker handoff (frames for another worker's
// egress port), buffer releases returned to the ingress port's owner, and
// FDB learn messages. Each side caches the other's index and reads it (an
// acquire load of a line the other side writes) only when the cached value
// says the queue is full (producer) or empty (consumer), so a burst costs one
// release store and, usually, no cache-line transfer besides the items.
// push_burst() takes what fits and returns how many; pop_burst() returns
// how many it popped. Capacity N is a power of two. Nothing allocates.
//
//   spsc_queue<item, 4096> q;            // (heap-allocate: N items inline)
//   std::size_t k = q.push_burst(v, n);  // producer thread
//   std::size_t m = q.pop_burst(out, 32);  // consumer thread
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rocelab {

template <typename T, std::size_t N>
class spsc_queue {
    static_assert((N & (N - 1)) == 0 && N >= 2, "N must be a power of two");
    static_assert(std::is_trivially_copyable_v<T>);

public:
    static constexpr std::size_t capacity() noexcept { return N; }

    // Producer: append up to n items; returns how many were taken.
    std::size_t push_burst(const T* v, std::size_t n) noexcept {
        const std::uint64_t h = _head.load(std::memory_order_relaxed);
        if (N - (h - _p_tail) < n) { _p_tail = _tail.load(std::memory_order_acquire); }
        const std::size_t space = N - static_cast<std::size_t>(h - _p_tail);
        const std::size_t k = n < space ? n : space;
        // memcpy, not assignment: GCC splits a struct's assignment into its
        // fields and reassembles them on the stack, and the wide load that
        // follows the narrow stores fails to forward (perf: a third of the
        // switch's flush_stage). The items are trivially copyable.
        for (std::size_t i = 0; i < k; ++i) { std::memcpy(&_items[(h + i) & (N - 1)], &v[i], sizeof(T)); }
        if (k != 0) { _head.store(h + k, std::memory_order_release); }
        return k;
    }
    bool push(const T& v) noexcept { return push_burst(&v, 1) == 1; }

    // Consumer: take up to n items into out; returns how many.
    std::size_t pop_burst(T* out, std::size_t n) noexcept {
        const std::uint64_t t = _tail.load(std::memory_order_relaxed);
        if (_c_head - t < n) { _c_head = _head.load(std::memory_order_acquire); }
        const std::size_t avail = static_cast<std::size_t>(_c_head - t);
        const std::size_t k = n < avail ? n : avail;
        for (std::size_t i = 0; i < k; ++i) { std::memcpy(&out[i], &_items[(t + i) & (N - 1)], sizeof(T)); }
        if (k != 0) { _tail.store(t + k, std::memory_order_release); }
        return k;
    }
    bool pop(T& out) noexcept { return pop_burst(&out, 1) == 1; }

    // Either side, or a reader (approximate while both run).
    std::size_t size() const noexcept {
        const std::uint64_t t = _tail.load(std::memory_order_acquire);
        return static_cast<std::size_t>(_head.load(std::memory_order_acquire) - t);
    }
    bool empty() const noexcept { return size() == 0; }

private:
    alignas(64) std::atomic<std::uint64_t> _head{0};  // written by the producer
    std::uint64_t _p_tail = 0;                        // producer's cached tail
    alignas(64) std::atomic<std::uint64_t> _tail{0};  // written by the consumer
    std::uint64_t _c_head = 0;                        // consumer's cached head
    alignas(64) T _items[N];
};

}  // namespace rocelab
