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
// Memory
//   rte_lpm's tbl24 is a fixed 2^24-entry array (64 MiB) inside the table;
//   rte_lpm6's first level likewise. max_rules and number_tbl8s follow the
//   rule counts.
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

private:
    lpm() noexcept = default;
    void release() noexcept;

    rte_lpm* _v4 = nullptr;
    rte_lpm6* _v6 = nullptr;  // null: no IPv6 rule
};

using route_table = basic_route_table<lpm>;

}  // namespace rocelab::dpdk
