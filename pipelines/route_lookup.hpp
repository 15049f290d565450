// route_lookup.hpp - the inline bodies of dpdk::lpm's lookups, on rte_lpm /
// rte_lpm6 (see lib/dpdk/lpm.hpp; dpdk::route_table is fwd/route_table.hpp
// on that LPM).
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

#include "dpdk/lpm.hpp"

namespace rocelab::dpdk {

inline bool lpm::lookup_v4(std::uint32_t dst, std::uint32_t* value) const noexcept {
    return rte_lpm_lookup(_v4, dst, value) == 0;
}

inline bool lpm::lookup_v6(const std::uint8_t* dst16, std::uint32_t* value) const noexcept {
    return _v6 != nullptr && rte_lpm6_lookup(_v6, dst16, value) == 0;
}

inline void lpm::lookup_v4_bulk(const std::uint32_t* dst, std::uint32_t* value, unsigned n) const noexcept {
    rte_lpm_lookup_bulk(_v4, dst, value, n);
    for (unsigned i = 0; i < n; ++i) {
        value[i] = (value[i] & RTE_LPM_LOOKUP_SUCCESS) != 0 ? (value[i] & 0x00FFFFFFu) : lpm_miss;
    }
}

// rte_lpm6_lookup_bulk_func walks the addresses' tries side by side (its
// first-level reads overlap); it takes a non-const array it only reads.
// Chunks of 64: its next hops are int32_t, -1 on a miss.
inline void lpm::lookup_v6_bulk(const ip6_addr* dst, std::uint32_t* value, unsigned n) const noexcept {
    if (_v6 == nullptr) {
        for (unsigned i = 0; i < n; ++i) { value[i] = lpm_miss; }
        return;
    }
    std::int32_t hop[64];
    for (unsigned base = 0; base < n; base += 64) {
        const unsigned m = n - base < 64 ? n - base : 64;
        rte_lpm6_lookup_bulk_func(_v6, const_cast<std::uint8_t(*)[16]>(dst + base), hop, m);
        for (unsigned i = 0; i < m; ++i) { value[base + i] = hop[i] < 0 ? lpm_miss : static_cast<std::uint32_t>(hop[i]); }
    }
}

}  // namespace rocelab::dpdk
