// bitops.hpp - small bit tricks over 8-bit queue/priority masks.
//
// The QoS code keeps per-port state for 8 queues/priorities as one byte
// (bit n = queue n). These helpers answer "which bit" questions in O(1)
// with std::countl_zero / std::countr_zero, no loops, no tables.
//
//   highest_bit(0b0100'1000) == 6     lowest_bit(0b0100'1000) == 3
//   next_bit_after(3, 0b0100'1001) == 6,  next_bit_after(6, 0b0100'1001) == 0 (wraps)
//
// All functions require a non-zero mask unless stated otherwise.
#pragma once

#include <bit>
#include <cstdint>

namespace rocelab {

// Index of the most significant set bit of a non-zero 8-bit mask.
constexpr int highest_bit(std::uint8_t m) noexcept { return 7 - std::countl_zero(m); }

// Index of the least significant set bit of a non-zero 8-bit mask.
constexpr int lowest_bit(std::uint8_t m) noexcept { return std::countr_zero(m); }

// Round-robin successor: the first set bit strictly after `pos` (0..7),
// wrapping around to the lowest set bit. Returns `pos` itself when it is the
// only set bit. Mask must be non-zero.
constexpr int next_bit_after(int pos, std::uint8_t m) noexcept {
    const unsigned above = static_cast<unsigned>(m) & ~((2u << pos) - 1u);
    return above != 0 ? std::countr_zero(above) : std::countr_zero(static_cast<unsigned>(m));
}

// Calls fn(i) for every set bit i of m, lowest first.
template <typename Fn>
constexpr void for_each_bit(std::uint8_t m, Fn&& fn) noexcept(noexcept(fn(0))) {
    unsigned x = m;
    while (x != 0) {
        fn(std::countr_zero(x));
        x &= x - 1;
    }
}

}  // namespace rocelab
