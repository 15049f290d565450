// wire_time.hpp - exact wire-time accumulation at a bit rate, without drift.
//
// What: a time kept as integer nanoseconds plus a remainder in units of
// 1/rate ns (t = ns + rem / rate, 0 <= rem < rate), advanced by the wire
// time of `wire_bytes` at `rate` bit/s: (wire_bytes x 8 x 1e9) / rate,
// split into its quotient and remainder. Millions of frames add up to the
// exact total, with no rounding drift. Used by the shaper's TAT
// (qos/shaper.hpp) and by the simulated links' line clock (sim/link.hpp).
// Range: rate > 0; the 64-bit path covers every real frame (wire_bytes up to
// 2.3e9), a 128-bit path the rest. Nothing allocates.
#pragma once

#include <cstdint>

namespace rocelab {

// The wire time of `wire_bytes` at `rate`: (wire_bytes x 8 x 1e9) / rate ns,
// as its quotient q and remainder r (0 <= r < rate).
struct wire_cost {
    std::uint64_t q = 0;
    std::uint64_t r = 0;
};
[[gnu::always_inline]] inline wire_cost wire_cost_of(std::uint64_t wire_bytes, std::uint64_t rate) noexcept {
    constexpr std::uint64_t ns_per_s = 1'000'000'000ULL;
    if (wire_bytes <= UINT64_MAX / (8 * ns_per_s)) {
        const std::uint64_t num = wire_bytes * 8 * ns_per_s;
        return {num / rate, num % rate};
    }
    const unsigned __int128 num = static_cast<unsigned __int128>(wire_bytes) * 8 * ns_per_s;
    return {static_cast<std::uint64_t>(num / rate), static_cast<std::uint64_t>(num % rate)};
}

// Advance t = ns + rem / rate by a cost computed at the same rate.
[[gnu::always_inline]] inline void add_wire_cost(std::int64_t& ns, std::uint64_t& rem, wire_cost c,
                                                 std::uint64_t rate) noexcept {
    ns += static_cast<std::int64_t>(c.q);
    rem += c.r;
    if (rem >= rate) {
        rem -= rate;
        ++ns;
    }
}

[[gnu::always_inline]] inline void add_wire_time(std::int64_t& ns, std::uint64_t& rem, std::uint64_t wire_bytes,
                                                 std::uint64_t rate) noexcept {
    add_wire_cost(ns, rem, wire_cost_of(wire_bytes, rate), rate);
}

}  // namespace rocelab
