// units.hpp - strong unit types used across rocelab.
//
// bytes, nanos and bits_per_sec are thin wrappers around 64-bit integers so
// that a byte count can never be passed where a time is expected. They are
// trivially copyable and cost nothing at run time.
//
// Parsing of written-out units ("100Gbps", "55us", "96KiB") lives in
// config/units_parse.hpp; this header is data-path safe (no allocation).
#pragma once

#include <compare>
#include <cstdint>

namespace rocelab {

// What bytes and nanos share: adding and subtracting amounts of the same
// unit (CRTP: Q is the unit's type, with a value member v).
template <class Q>
struct additive {
    constexpr auto operator<=>(const additive&) const noexcept = default;
    constexpr Q& operator+=(Q o) noexcept { self().v += o.v; return self(); }
    constexpr Q& operator-=(Q o) noexcept { self().v -= o.v; return self(); }
    friend constexpr Q operator+(Q a, Q b) noexcept { return Q{a.v + b.v}; }
    friend constexpr Q operator-(Q a, Q b) noexcept { return Q{a.v - b.v}; }

private:
    constexpr Q& self() noexcept { return static_cast<Q&>(*this); }
};

struct bytes : additive<bytes> {
    std::uint64_t v = 0;
    constexpr bytes() noexcept = default;
    constexpr explicit bytes(std::uint64_t x) noexcept : v(x) {}
    constexpr auto operator<=>(const bytes&) const noexcept = default;
};

// Nanoseconds since an arbitrary epoch chosen by the clock owner.
struct nanos : additive<nanos> {
    std::int64_t v = 0;
    constexpr nanos() noexcept = default;
    constexpr explicit nanos(std::int64_t x) noexcept : v(x) {}
    constexpr auto operator<=>(const nanos&) const noexcept = default;
    static constexpr nanos max() noexcept { return nanos{INT64_MAX}; }
};

struct bits_per_sec {
    std::uint64_t v = 0;
    constexpr bits_per_sec() noexcept = default;
    constexpr explicit bits_per_sec(std::uint64_t x) noexcept : v(x) {}
    constexpr auto operator<=>(const bits_per_sec&) const noexcept = default;
};

namespace literals {
constexpr bytes operator""_B(unsigned long long x) noexcept { return bytes{x}; }
constexpr bytes operator""_KiB(unsigned long long x) noexcept { return bytes{x * 1024}; }
constexpr bytes operator""_MiB(unsigned long long x) noexcept { return bytes{x * 1024 * 1024}; }
constexpr nanos operator""_ns(unsigned long long x) noexcept { return nanos{static_cast<std::int64_t>(x)}; }
constexpr nanos operator""_us(unsigned long long x) noexcept { return nanos{static_cast<std::int64_t>(x * 1000)}; }
constexpr nanos operator""_ms(unsigned long long x) noexcept { return nanos{static_cast<std::int64_t>(x * 1000000)}; }
constexpr nanos operator""_s(unsigned long long x) noexcept { return nanos{static_cast<std::int64_t>(x * 1000000000)}; }
constexpr bits_per_sec operator""_Mbps(unsigned long long x) noexcept { return bits_per_sec{x * 1000000ULL}; }
constexpr bits_per_sec operator""_Gbps(unsigned long long x) noexcept { return bits_per_sec{x * 1000000000ULL}; }
}  // namespace literals

// Time to serialise n bytes at rate r, in nanoseconds, rounded down.
// Uses 128-bit intermediate so 9216 B at 1 bps does not overflow.
constexpr nanos wire_time(bytes n, bits_per_sec r) noexcept {
    if (r.v == 0) { return nanos{0}; }
    const unsigned __int128 num = static_cast<unsigned __int128>(n.v) * 8u * 1000000000u;
    return nanos{static_cast<std::int64_t>(num / r.v)};
}

// Ethernet per-frame overhead not in the mbuf: preamble+SFD (8) + IFG (12).
inline constexpr bytes eth_wire_overhead{20};
// FCS is not in DPDK mbufs (stripped on rx, added by the NIC on tx).
inline constexpr bytes eth_fcs_len{4};

}  // namespace rocelab
