// route_lookup.hpp - the inline bodies of dpdk::route_table's lookups, on
// rte_lpm / rte_lpm6 (see lib/dpdk/route_table.hpp for what they do).
//
// Included by the data path's .cpp files (and DPDK tests and benchmarks)
// only: it pulls in rte_lpm.h, which lib/ headers never do.
#pragma once

// DPDK 22.11 headers use `volatile++` (deprecated in C++20): keep our
// -Wvolatile clean without hiding it for our own code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wvolatile"
#include <rte_lpm.h>
#include <rte_lpm6.h>
#pragma GCC diagnostic pop

#include "dpdk/route_table.hpp"

namespace rocelab::dpdk {

inline int route_table::lookup_v4(std::uint32_t dst, std::uint32_t flow_hash, const nexthop** out) const noexcept {
    return lookup_v4(dst, [flow_hash] { return flow_hash; }, out);
}

template <typename HashFn>
    requires std::is_invocable_r_v<std::uint32_t, HashFn>
int route_table::lookup_v4(std::uint32_t dst, HashFn&& hash_fn, const nexthop** out) const noexcept {
    std::uint32_t v;
    if (rte_lpm_lookup(_lpm4, dst, &v) != 0) {
        return route_no_route;
    }
    return resolve(v, hash_fn, out);
}

inline int route_table::lookup_v6(const std::uint8_t* dst16, std::uint32_t flow_hash,
                                  const nexthop** out) const noexcept {
    return lookup_v6(dst16, [flow_hash] { return flow_hash; }, out);
}

template <typename HashFn>
    requires std::is_invocable_r_v<std::uint32_t, HashFn>
int route_table::lookup_v6(const std::uint8_t* dst16, HashFn&& hash_fn, const nexthop** out) const noexcept {
    std::uint32_t v;
    if (_lpm6 == nullptr || rte_lpm6_lookup(_lpm6, dst16, &v) != 0) {
        return route_no_route;
    }
    return resolve(v, hash_fn, out);
}

inline void route_table::lookup_v4_bulk(const std::uint32_t* dst, const std::uint32_t* hash, unsigned n,
                                        const nexthop** out, int* rc) const noexcept {
    std::uint32_t hop[max_bulk];
    for (unsigned base = 0; base < n; base += max_bulk) {
        const unsigned m = (n - base) < max_bulk ? (n - base) : max_bulk;
        rte_lpm_lookup_bulk(_lpm4, dst + base, hop, m);
        for (unsigned i = 0; i < m; ++i) {
            out[base + i] = nullptr;
            rc[base + i] = (hop[i] & RTE_LPM_LOOKUP_SUCCESS) != 0
                               ? resolve_hash(hop[i] & 0x00FFFFFFu, hash[base + i], &out[base + i])
                               : route_no_route;
        }
    }
}

}  // namespace rocelab::dpdk
