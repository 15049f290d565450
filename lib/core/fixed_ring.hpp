// fixed_ring.hpp - fixed-capacity single-owner FIFO ring, no allocation.
//
// What: a circular buffer of N elements of T held inline (std::array), used
// for per-port egress queues of rte_mbuf* and anywhere a bounded FIFO is
// needed on the data path. Not thread safe: one lcore owns it (use rte_ring
// between lcores).
//
// Parameters: T must be default-constructible and copy/move-assignable
// (pointers, small PODs, pairs). N must be a power of two >= 2.
//
// Indices: _head and _tail are free-running 32-bit counters; the slot is
// index & (N-1) and size() is (_tail - _head) in modulo-2^32 arithmetic.
// Because N divides 2^32, wrap-around of the counters is harmless, so no
// "one slot wasted" rule: all N slots are usable.
//
// Example:
//   fixed_ring<rte_mbuf*, 1024> q;
//   std::size_t n = q.push_burst(std::span{pkts, nb_rx});   // n accepted
//   std::size_t m = q.pop_burst(std::span{out, 32});        // m popped
//
// Counters: none (callers count what push_burst did not accept).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace rocelab {

template <typename T, std::size_t N>
class fixed_ring {
    static_assert(N >= 2 && (N & (N - 1)) == 0, "fixed_ring capacity must be a power of two");
    static_assert(N <= (std::size_t{1} << 31), "fixed_ring capacity must fit the 32-bit index scheme");

public:
    using value_type = T;
    static constexpr std::size_t capacity() noexcept { return N; }

    std::size_t size() const noexcept { return static_cast<std::uint32_t>(_tail - _head); }
    bool empty() const noexcept { return _tail == _head; }
    bool full() const noexcept { return size() == N; }
    std::size_t free_space() const noexcept { return N - size(); }

    // Appends one element; returns false (ring unchanged) when full.
    bool push(const T& v) noexcept {
        if (full()) {
            return false;
        }
        _buf[_tail & _mask] = v;
        ++_tail;
        return true;
    }
    bool push(T&& v) noexcept {
        if (full()) {
            return false;
        }
        _buf[_tail & _mask] = std::move(v);
        ++_tail;
        return true;
    }

    // Removes the oldest element into `out`; returns false when empty.
    bool pop(T& out) noexcept {
        if (empty()) {
            return false;
        }
        out = std::move(_buf[_head & _mask]);
        ++_head;
        return true;
    }

    // Removes and returns the oldest element. Precondition: !empty().
    T pop() noexcept {
        T v = std::move(_buf[_head & _mask]);
        ++_head;
        return v;
    }

    // Oldest / newest element. Precondition: !empty().
    T& front() noexcept { return _buf[_head & _mask]; }
    const T& front() const noexcept { return _buf[_head & _mask]; }
    T& back() noexcept { return _buf[(_tail - 1) & _mask]; }
    const T& back() const noexcept { return _buf[(_tail - 1) & _mask]; }

    // i-th element from the front (0 = oldest). Precondition: i < size().
    T& operator[](std::size_t i) noexcept { return _buf[(_head + static_cast<std::uint32_t>(i)) & _mask]; }
    const T& operator[](std::size_t i) const noexcept {
        return _buf[(_head + static_cast<std::uint32_t>(i)) & _mask];
    }

    // Appends as many elements of `in` as fit, in order; returns how many.
    // The caller owns (frees/counts) in[ret..].
    std::size_t push_burst(std::span<const T> in) noexcept {
        const std::size_t n = in.size() < free_space() ? in.size() : free_space();
        for (std::size_t i = 0; i < n; ++i) {
            _buf[(_tail + static_cast<std::uint32_t>(i)) & _mask] = in[i];
        }
        _tail += static_cast<std::uint32_t>(n);
        return n;
    }

    // Pops up to out.size() oldest elements into out; returns how many.
    std::size_t pop_burst(std::span<T> out) noexcept {
        const std::size_t n = out.size() < size() ? out.size() : size();
        for (std::size_t i = 0; i < n; ++i) {
            out[i] = std::move(_buf[(_head + static_cast<std::uint32_t>(i)) & _mask]);
        }
        _head += static_cast<std::uint32_t>(n);
        return n;
    }

    // Drops everything (elements are not destroyed individually; T is
    // expected to be trivially managed, e.g. a pointer the caller freed).
    void clear() noexcept { _head = _tail; }
    // Restart at slot 0 when empty. A queue that drains every poll then
    // reuses the same few (hot) cache lines instead of walking the whole
    // buffer; contents and order are unaffected.
    void rewind_if_empty() noexcept {
        if (_head == _tail) {
            _head = 0;
            _tail = 0;
        }
    }

private:
    static constexpr std::uint32_t _mask = static_cast<std::uint32_t>(N - 1);
    std::uint32_t _head = 0;
    std::uint32_t _tail = 0;
    std::array<T, N> _buf{};
};

}  // namespace rocelab
