// lpm.hpp - the longest-prefix-match interface the route table is built on.
//
// What it is
//   fwd/route_table.hpp decides which prefixes go into the LPM and what
//   their values mean; an LPM only stores (prefix, value) pairs and answers
//   "the value of the longest prefix holding this address". The route table
//   takes its LPM as a template parameter, so the data path calls the LPM's
//   own inline lookups, with no virtual call per frame:
//     dpdk::lpm  (lib/dpdk/lpm.hpp)  rte_lpm / rte_lpm6, the data path's
//     lpm_ref    (fwd/lpm_ref.hpp)   a linear scan: the specification, and
//                                    the unit tests' LPM (no EAL)
//
// The interface (the lpm_table concept below)
//   L::build(v4, v6)        -> std::variant<L, std::string>: an immutable
//                              table of the rules of both spans, or why not.
//                              Rules go in in span order: a later rule of
//                              the same prefix replaces the earlier one's
//                              value. Depth 1..32 (v4), 1..128 (v6): a
//                              default route is the route table's business
//   l.lookup_v4(dst, &v)    -> true and v = the value of the longest match,
//                              or false. dst in host order
//   l.lookup_v6(dst16, &v)  -> the same for 16 network-order address bytes
//   l.lookup_v4_bulk(dst, v, n): v[i] = the value for dst[i], or lpm_miss
//   l.lookup_v6_bulk(dst16s, v, n): the same for n 16-byte addresses
//   L is movable. Lookups are const, noexcept, allocation-free and safe to
//   call from several lcores at once.
//
// Values are below lpm_value_limit (2^21: rte_lpm6's next-hop width).
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

#include "fwd/route_cfg.hpp"

namespace rocelab {

inline constexpr std::uint32_t lpm_value_limit = 1u << 21;
inline constexpr std::uint32_t lpm_miss = ~0u;  // lookup_v4/v6_bulk: no prefix holds the address

// An IPv6 address as the bulk lookup takes it: 16 bytes, network order.
using ip6_addr = std::uint8_t[16];

// One prefix (host bits zero, len = the depth) and its value.
struct lpm_rule {
    ip_prefix prefix;
    std::uint32_t value = 0;
};

template <typename L>
concept lpm_table =
    std::movable<L> &&
    requires(const L& l, std::span<const lpm_rule> rules, std::uint32_t dst, const std::uint8_t* dst16,
             std::uint32_t* value, const std::uint32_t* dsts, const ip6_addr* dsts16, unsigned n) {
        { L::build(rules, rules) } -> std::same_as<std::variant<L, std::string>>;
        { l.lookup_v4(dst, value) } noexcept -> std::same_as<bool>;
        { l.lookup_v6(dst16, value) } noexcept -> std::same_as<bool>;
        { l.lookup_v4_bulk(dsts, value, n) } noexcept;
        { l.lookup_v6_bulk(dsts16, value, n) } noexcept;
    };

}  // namespace rocelab
