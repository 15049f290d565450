// fifo.hpp - bounded FIFO whose capacity is chosen at set-up (run time).
//
// What: like core/fixed_ring.hpp, but the capacity comes from configuration
// (a link's tx_ring_size, rx_ring_size), so the storage is allocated once in
// the constructor and never again. Storage is rounded up to a power of two
// for mask indexing; the logical capacity is exactly what was asked for.
// Indices are free-running 64-bit counters (never wrap in practice).
// Not thread safe: one owner.
//
// Counters: none (callers count what push() refused).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace rocelab::sim {

template <typename T>
class fifo {
public:
    fifo() = default;
    // The storage is left as the allocator gives it (not value-initialised):
    // a slot is always written by push() before anything reads it, and a
    // fabric's thousands of rings (a cable's TX, RX and wire rings) were
    // otherwise zeroed at set-up, every page of them touched before the
    // first frame. T is an aggregate or scalar (an implicit-lifetime type,
    // which the allocation creates) and trivially destructible.
    explicit fifo(std::size_t capacity)
        : _cap(capacity),
          _mask(std::bit_ceil(capacity < 1 ? std::size_t{1} : capacity) - 1),
          _buf(std::allocator<T>{}.allocate(_mask + 1), deleter{_mask + 1}) {}

    std::size_t capacity() const noexcept { return _cap; }
    std::size_t size() const noexcept { return static_cast<std::size_t>(_tail - _head); }
    bool empty() const noexcept { return _tail == _head; }
    bool full() const noexcept { return size() >= _cap; }
    std::size_t free_space() const noexcept { return _cap - size(); }

    // Precondition: !full().
    void push(const T& v) noexcept {
        _buf.get()[_tail & _mask] = v;
        ++_tail;
    }
    // Precondition: !empty().
    T& front() noexcept { return _buf.get()[_head & _mask]; }
    const T& front() const noexcept { return _buf.get()[_head & _mask]; }
    void pop() noexcept { ++_head; }
    // i-th element from the front (0 = oldest). Precondition: i < size().
    T& operator[](std::size_t i) noexcept { return _buf.get()[(_head + i) & _mask]; }
    const T& operator[](std::size_t i) const noexcept { return _buf.get()[(_head + i) & _mask]; }

private:
    static_assert(std::is_trivially_destructible_v<T> && (std::is_aggregate_v<T> || std::is_scalar_v<T>),
                  "sim::fifo leaves its slots uninitialised until push(): T must be an aggregate or a scalar");
    struct deleter {
        std::size_t n = 0;
        void operator()(T* p) const noexcept { std::allocator<T>{}.deallocate(p, n); }
    };
    std::size_t _cap = 0;
    std::size_t _mask = 0;
    std::unique_ptr<T, deleter> _buf;
    std::uint64_t _head = 0;
    std::uint64_t _tail = 0;
};

}  // namespace rocelab::sim
