// route_table.hpp - IPv4/IPv6 longest-prefix-match routing to ECMP next-hop
// groups, on DPDK rte_lpm / rte_lpm6.
//
// What it does
//   build() turns the validated switch_cfg into an immutable table:
//     connected   each port address (INTERFACE "Ethernet0|10.0.0.1/31") adds
//                 its subnet; a destination in it resolves per host through
//                 the static neighbour table; a host with no NEIGH entry
//                 yields route_no_neighbor, with *out at the port's
//                 connected() next hop (port, port id, our MAC; dst_mac
//                 zero): the caller resolves the host dynamically
//                 (fwd/neigh_table.hpp) or drops it (drop_no_neighbor)
//     neighbour   each NEIGH entry adds a host route (/32, /128) to a
//                 single-member group {port, neighbour MAC, our port MAC}
//     static      each ROUTE adds its prefix -> group of its next hops, each
//                 resolved through NEIGH (same address, same interface).
//                 Without a NEIGH entry, a next hop in a connected subnet
//                 (of its ifname's port, if given) is dynamic when
//                 cfg.neigh.dynamic: nexthop::dynamic() is true and
//                 dynamic_hop(nh.dynamic_index()) is the address to resolve
//                 on nh.port. Anything else unresolved is a build error
//                 naming the route
//     local       each port address adds a host route -> route_local, so the
//                 data path can tell packets addressed to the switch itself
//   At equal prefix the later kind in this list wins. A default route
//   (0.0.0.0/0, ::/0) is installed as the two /1 halves because rte_lpm
//   depths start at 1. Port names (port_cfg.name) resolve to port indexes
//   (index into cfg.ports); nexthop::port_id comes from port_ids_by_index and
//   nexthop::src_mac from port_macs (the caller passes each port's effective
//   MAC, i.e. switch_mac if configured, else the port's/device's MAC).
//
// Data path
//   lookup_v4 / lookup_v6 / lookup_v4_bulk are noexcept, allocation-free and
//   read-only, so one table can be shared by all lcores; each lcore counts
//   results into its own route_stats. Return value: route_table::ok (0,
//   *out points at the selected nexthop: egress port index, DPDK port id,
//   MACs) or one of no_route, no_neighbor, local (*out untouched but for
//   no_neighbor, see connected; nullptr in bulk unless no_neighbor). is_local_v4/v6 check the switch's own addresses. ECMP:
//   nh_table::select(group, flow_hash) = member ecmp_select(hash, n), so a
//   flow always takes the same member.
//
// Memory
//   rte_lpm allocates its 2^24-entry tbl24 (64 MiB) from the EAL heap; the
//   IPv6 table (another 64 MiB + tbl8s) is only created when there is at
//   least one IPv6 prefix. Needs an initialised EAL. Non-copyable, movable;
//   the destructor frees both LPMs.
//
// Config example (SONiC CONFIG_DB names)
//   INTERFACE: { "Ethernet0|10.0.0.1/31": {} }
//   NEIGH:     { "Ethernet0|10.0.0.0": { neigh: "52:54:00:00:00:10" } }
//   ROUTE:     { "0.0.0.0/0": { nexthop: "10.0.0.0,10.0.0.2", ifname: "Ethernet0,Ethernet4" } }
//
// Headers: this one declares the table and needs no DPDK header. The
// lookups are inline (a call per packet would cost the L3 path) and use
// rte_lpm's inline lookups, so their bodies live in
// pipelines/route_lookup.hpp, which only the data path's .cpp files (and
// the DPDK tests and benchmarks) include. A caller that forgets it gets a
// link error, never a slower lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "config/switch_cfg.hpp"
#include "fwd/ecmp.hpp"
#include "fwd/local_addr.hpp"

struct rte_lpm;
struct rte_lpm6;

namespace rocelab::dpdk {

// Lookup results (route_table::ok etc. name the same values).
inline constexpr int route_ok = 0;
inline constexpr int route_no_route = -1;
inline constexpr int route_no_neighbor = -2;
inline constexpr int route_local = -3;

// Per-lcore result counters; route_stats::count(rc) after every lookup.
struct route_stats {
    std::uint64_t forwarded = 0;
    std::uint64_t local = 0;
    std::uint64_t drop_no_route = 0;
    std::uint64_t drop_no_neighbor = 0;

    void count(int rc) noexcept {
        if (rc == route_ok) [[likely]] {
            ++forwarded;
        } else if (rc == route_local) {
            ++local;
        } else if (rc == route_no_neighbor) {
            ++drop_no_neighbor;
        } else {
            ++drop_no_route;
        }
    }
};

enum class route_kind : std::uint8_t { connected, neighbor, static_route, local };

// One installed prefix, for "show routes" (control path).
struct route_info {
    ip_prefix prefix;
    route_kind kind = route_kind::static_route;
    std::uint32_t group = 0;  // valid for neighbor / static_route
};

class route_table {
public:
    static constexpr unsigned max_bulk = 64;  // lookup_v4_bulk chunk size
    static constexpr int ok = route_ok;
    static constexpr int no_route = route_no_route;
    static constexpr int no_neighbor = route_no_neighbor;
    static constexpr int local = route_local;

    static std::variant<route_table, std::string> build(const switch_cfg& cfg,
                                                        const std::vector<mac_addr>& port_macs,
                                                        const std::vector<std::uint16_t>& port_ids_by_index);

    route_table(route_table&& o) noexcept;
    route_table& operator=(route_table&& o) noexcept;
    route_table(const route_table&) = delete;
    route_table& operator=(const route_table&) = delete;
    ~route_table();

    // dst in host order. (Bodies: pipelines/route_lookup.hpp.)
    inline int lookup_v4(std::uint32_t dst, std::uint32_t flow_hash, const nexthop** out) const noexcept;
    // Same, with the flow hash computed by hash_fn() only when the route is
    // an ECMP group of more than one next hop.
    template <typename HashFn>
        requires std::is_invocable_r_v<std::uint32_t, HashFn>
    int lookup_v4(std::uint32_t dst, HashFn&& hash_fn, const nexthop** out) const noexcept;

    // dst16: 16 address bytes, network order.
    inline int lookup_v6(const std::uint8_t* dst16, std::uint32_t flow_hash, const nexthop** out) const noexcept;
    template <typename HashFn>
        requires std::is_invocable_r_v<std::uint32_t, HashFn>
    int lookup_v6(const std::uint8_t* dst16, HashFn&& hash_fn, const nexthop** out) const noexcept;

    // Burst lookup: for i < n, rc[i] = lookup_v4(dst[i], hash[i], &out[i])
    // (out[i] = nullptr unless rc[i] == ok). Uses rte_lpm_lookup_bulk in
    // chunks of max_bulk.
    inline void lookup_v4_bulk(const std::uint32_t* dst, const std::uint32_t* hash, unsigned n, const nexthop** out,
                               int* rc) const noexcept;

    // Is this one of the switch's own interface addresses?
    bool is_local_v4(std::uint32_t addr) const noexcept { return _locals.is_local_v4(addr); }
    bool is_local_v6(const std::uint8_t* addr16) const noexcept { return _locals.is_local_v6(addr16); }

    const local_addrs& locals() const noexcept { return _locals; }
    // The address a dynamic next hop resolves (nexthop::dynamic_index()).
    const ip_prefix& dynamic_hop(std::uint32_t i) const noexcept { return _dyn[i]; }
    std::size_t dynamic_hops() const noexcept { return _dyn.size(); }
    // Port index of the connected subnet holding addr (slow path: learning
    // from ARP/ND), if any and if no static NEIGH entry or route covers it
    // more specifically; addr16: 16 bytes, IPv4 in the first 4.
    std::optional<std::uint16_t> connected_port(const std::uint8_t* addr16, bool v6) const noexcept;
    const nh_table& nexthops() const noexcept { return _nht; }
    const std::vector<route_info>& routes() const noexcept { return _routes; }

private:
    // LPM values: a group id below special_base (fits rte_lpm6's 21 bits),
    // or one of the special values.
    static constexpr std::uint32_t special_base = 1u << 20;
    static constexpr std::uint32_t val_local = special_base;
    // A connected subnet of port p (no static neighbour): val_connected + p.
    static constexpr std::uint32_t val_connected = special_base + 16;

    route_table(nh_table&& nht) noexcept : _nht(std::move(nht)) {}

    int resolve_hash(std::uint32_t v, std::uint32_t hash, const nexthop** out) const noexcept {
        auto h = [hash] { return hash; };
        return resolve(v, h, out);
    }
    template <typename HashFn>
    int resolve(std::uint32_t v, HashFn& hash_fn, const nexthop** out) const noexcept {
        if (v < special_base) [[likely]] {
            *out = &_nht.select_lazy(v, hash_fn);
            return route_ok;
        }
        if (v >= val_connected) {
            *out = &_conn[v - val_connected];
            return route_no_neighbor;
        }
        return route_local;
    }

    void release() noexcept;

    rte_lpm* _lpm4 = nullptr;
    rte_lpm6* _lpm6 = nullptr;
    nh_table _nht;
    local_addrs _locals;
    std::vector<route_info> _routes;
    std::vector<nexthop> _conn;    // per port: {port, port id, zero MAC, our MAC}
    std::vector<ip_prefix> _dyn;   // dynamic next hops' addresses
};

}  // namespace rocelab::dpdk
