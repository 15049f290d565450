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

[[gnu::always_inline]] inline void add_wire_time(std::int64_t& ns, std::uint64_t& rem, std::uint64_t wire_bytes,
                                                 std::uint64_t rate) noexcept {
    constexpr std::uint64_t ns_per_s = 1'000'000'000ULL;
    std::uint64_t q;
    std::uint64_t r;
    if (wire_bytes <= UINT64_MAX / (8 * ns_per_s)) {
        const std::uint64_t num = wire_bytes * 8 * ns_per_s;
        q = num / rate;
        r = num % rate;
    } else {
        const unsigned __int128 num = static_cast<unsigned __int128>(wire_bytes) * 8 * ns_per_s;
        q = static_cast<std::uint64_t>(num / rate);
        r = static_cast<std::uint64_t>(num % rate);
    }
    ns += static_cast<std::int64_t>(q);
    rem += r;
    if (rem >= rate) {
        rem -= rate;
        ++ns;
    }
}

}  // namespace rocelab
