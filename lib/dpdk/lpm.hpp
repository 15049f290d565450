// lpm.hpp - the data path's LPM: fwd/lpm.hpp's interface on rte_lpm (IPv4)
// and rte_lpm6 (IPv6); dpdk::route_table is fwd's route table on it.
//
// What it does
//   build() creates an rte_lpm sized for the IPv4 rules and, if there is at
//   least one IPv6 rule, an rte_lpm6 for those (else every IPv6 lookup
//   misses), and installs the rules in order (rte_lpm_add of an existing
//   prefix updates its value, so the later rule wins). Needs an initialised
//   EAL: the tables come from the EAL heap. Non-copyable, movable; the
//   destructor frees both tables.
//
// Sizing (sizes_for): from the rules, as nothing is added at run time:
//   max_rules     the number of rules (at least min_rules)
//   number_tbl8s  the tbl8 groups the rules need, exactly (at least
//                 min_tbl8s): both tables are DIR-24-8 tries, a 2^24-entry
//                 first level then 256-entry groups of 8 bits, so a rule of
//                 depth d needs, for each level boundary b = 24, 32, 40, ...
//                 below d, the group of its b-bit prefix; rules sharing that
//                 prefix share the group. rte_lpm (IPv4) only has b = 24.
//   A group is 256 entries of 4 B (1 KiB); a rule takes 8 B (v4) or a
//   hash-table entry (v6).
//
// Memory
//   rte_lpm's first level (tbl24) is a fixed 2^24-entry array of 4 B inside
//   struct rte_lpm, 64 MiB of EAL memory whatever the sizes; rte_lpm6's
//   likewise. Only the pages a rule writes are touched: a /16 writes 256
//   entries (1 KiB), a /8 64 K entries (256 KiB), which is why the route
//   table keeps a default route out of the LPM (fwd/route_table.hpp).
//
// Headers: this one needs no DPDK header. The lookups are inline (a call per
// packet would cost the L3 path) and use rte_lpm's inline lookups, so their
// bodies live in pipelines/route_lookup.hpp, which only the data path's .cpp
// files (and the DPDK tests and benchmarks) include. A caller that forgets
// it gets a link error, never a slower lookup.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>

#include "fwd/lpm.hpp"
#include "fwd/route_table.hpp"

struct rte_lpm;
struct rte_lpm6;

namespace rocelab::dpdk {

class lpm final {
public:
    static constexpr std::uint32_t min_rules = 16;
    static constexpr std::uint32_t min_tbl8s = 16;

    // rte_lpm_config / rte_lpm6_config's sizes for these rules (no EAL needed).
    struct sizes {
        std::uint32_t v4_rules = 0;
        std::uint32_t v4_tbl8s = 0;
        std::uint32_t v6_rules = 0;  // 0: no IPv6 table
        std::uint32_t v6_tbl8s = 0;
    };
    static sizes sizes_for(std::span<const lpm_rule> v4, std::span<const lpm_rule> v6);
    // The tbl8 groups a DIR-24-8 trie of `width` bits (32, 128) needs for the rules.
    static std::uint32_t tbl8_groups(std::span<const lpm_rule> rules, unsigned width);

    static std::variant<lpm, std::string> build(std::span<const lpm_rule> v4, std::span<const lpm_rule> v6);

    lpm(lpm&& o) noexcept;
    lpm& operator=(lpm&& o) noexcept;
    lpm(const lpm&) = delete;
    lpm& operator=(const lpm&) = delete;
    ~lpm();

    // (Bodies: pipelines/route_lookup.hpp.)
    inline bool lookup_v4(std::uint32_t dst, std::uint32_t* value) const noexcept;
    inline bool lookup_v6(const std::uint8_t* dst16, std::uint32_t* value) const noexcept;
    inline void lookup_v4_bulk(const std::uint32_t* dst, std::uint32_t* value, unsigned n) const noexcept;
    inline void lookup_v6_bulk(const ip6_addr* dst, std::uint32_t* value, unsigned n) const noexcept;

private:
    lpm() noexcept = default;
    void release() noexcept;

    rte_lpm* _v4 = nullptr;
    rte_lpm6* _v6 = nullptr;  // null: no IPv6 rule
};

using route_table = basic_route_table<lpm>;

}  // namespace rocelab::dpdk
