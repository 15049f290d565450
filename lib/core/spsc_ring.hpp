// spsc_ring.hpp - single-producer single-consumer lock-free ring of POD items.
//
// Used to move samples (queue depths, events) from a worker lcore to the
// control thread without locks or allocation on the producer side. Capacity N
// is a power of two; push() returns false when full (the caller counts it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace rocelab {

template <typename T, std::size_t N>
class spsc_ring {
    static_assert((N & (N - 1)) == 0, "N must be a power of two");
    static_assert(std::is_trivially_copyable_v<T>);

public:
    bool push(const T& item) noexcept {
        const auto h = _head.load(std::memory_order_relaxed);
        if (h - _tail.load(std::memory_order_acquire) == N) { return false; }
        _items[h & (N - 1)] = item;
        _head.store(h + 1, std::memory_order_release);
        return true;
    }
    bool pop(T& out) noexcept {
        const auto t = _tail.load(std::memory_order_relaxed);
        if (t == _head.load(std::memory_order_acquire)) { return false; }
        out = _items[t & (N - 1)];
        _tail.store(t + 1, std::memory_order_release);
        return true;
    }
    std::size_t size() const noexcept {
        return _head.load(std::memory_order_acquire) - _tail.load(std::memory_order_acquire);
    }

private:
    alignas(64) std::atomic<std::uint64_t> _head{0};
    alignas(64) std::atomic<std::uint64_t> _tail{0};
    alignas(64) T _items[N];
};

}  // namespace rocelab
