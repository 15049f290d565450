// route_table.hpp - IPv4/IPv6 longest-prefix-match routing to ECMP next-hop
// groups, on any LPM (fwd/lpm.hpp): rte_lpm / rte_lpm6 on the data path
// (dpdk::route_table, lib/dpdk/lpm.hpp), a reference LPM in unit tests.
//
// What it does
//   build() turns the ports' addresses, the static neighbours and the static
//   routes (route_sources) into an immutable table:
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
//                 dynamic_neighbors: nexthop::dynamic() is true and
//                 dynamic_hop(nh.dynamic_index()) is the address to resolve
//                 on nh.port. Anything else unresolved is a build error
//                 naming the route
//     local       each port address adds a host route -> route_local, so the
//                 data path can tell packets addressed to the switch itself
//   At equal prefix the later kind in this list wins.
//
//   A default route (0.0.0.0/0, ::/0) is not put in the LPM: an address the
//   LPM misses takes its value (without one, route_value::no_route). As the
//   two /1 halves it would write every entry of rte_lpm's 2^24-entry first
//   level, 64 MiB touched per address family and switch; kept apart, the
//   table touches only the pages its prefixes cover (an L3 leaf: ~2 MB, was
//   ~130 MB). The price is a load and a taken branch on the miss path:
//   fwd_bench's bm_lpm_v4_single, nearly all default-routed, went from 1.2
//   to 1.6 ns per lookup; prefixes other than the default cost the same.
//
//   Port names (route_port::name) resolve to port indexes (the index into
//   route_sources::ports); nexthop::port_id and src_mac come from that
//   route_port (the caller passes each port's effective MAC, i.e.
//   switch_mac if configured, else the port's/device's MAC).
//
// Data path
//   lookup_v4 / lookup_v6 / lookup_v4_bulk are noexcept, allocation-free and
//   read-only, so one table can be shared by all lcores; each lcore counts
//   results into its own route_stats. Return value: route_ok (0, *out
//   points at the selected nexthop: egress port index, DPDK port id, MACs)
//   or one of route_no_route, route_no_neighbor, route_local (*out untouched
//   but for no_neighbor, see connected; nullptr in bulk unless
//   no_neighbor). is_local_v4/v6 check the switch's own addresses. ECMP:
//   nh_table::select(group, flow_hash) = member ecmp_select(hash, n), so a
//   flow always takes the same member. The LPM is a template parameter:
//   its lookups are inlined, no virtual call per frame.
//
// Config example (SONiC CONFIG_DB names)
//   INTERFACE: { "Ethernet0|10.0.0.1/31": {} }
//   NEIGH:     { "Ethernet0|10.0.0.0": { neigh: "52:54:00:00:00:10" } }
//   ROUTE:     { "0.0.0.0/0": { nexthop: "10.0.0.0,10.0.0.2", ifname: "Ethernet0,Ethernet4" } }
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "fwd/ecmp.hpp"
#include "fwd/local_addr.hpp"
#include "fwd/lpm.hpp"
#include "fwd/route_cfg.hpp"

namespace rocelab {

// Lookup results (basic_route_table::ok etc. name the same values).
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

// One port as the route table sees it; its index in route_sources::ports is
// the port index of nexthop::port.
struct route_port {
    std::string name;                  // "Ethernet0": what NEIGH and ROUTE ifname name
    std::vector<ip_prefix> addresses;  // INTERFACE "Ethernet0|10.0.0.1/31"
    mac_addr mac{};                    // our MAC on it (the source of rewritten frames)
    std::uint16_t port_id = 0;         // DPDK port id (nexthop::port_id)
};

// What build() reads: nothing else of the switch's configuration.
struct route_sources {
    std::span<const route_port> ports;
    std::span<const neigh_cfg> neighbors;  // NEIGH
    std::span<const route_cfg> routes;     // ROUTE
    bool dynamic_neighbors = true;         // ROCELAB neigh_dynamic: next hops without NEIGH resolved by ARP/ND
};

// The LPM values route_plan gives its rules: a next-hop group id below
// special_base (which fits rte_lpm6's 21 bits), or one of the specials.
namespace route_value {
inline constexpr std::uint32_t special_base = 1u << 20;
inline constexpr std::uint32_t local = special_base;
// No route: what an address no prefix holds resolves to without a default route.
inline constexpr std::uint32_t no_route = special_base + 1;
// A connected subnet of port p (no static neighbour): connected + p.
inline constexpr std::uint32_t connected = special_base + 16;
static_assert(connected + 64 <= lpm_value_limit, "64 ports' connected values fit the LPM");
}  // namespace route_value

// Everything build() computes before an LPM exists (route_table.cpp): the
// table's contents but the LPM, and the LPM's rules. Pure, so any LPM can
// be built from it.
struct route_plan {
    nh_table nht;
    local_addrs locals;
    std::vector<route_info> routes;
    std::vector<nexthop> conn;     // per port: {port, port id, zero MAC, our MAC}
    std::vector<ip_prefix> dyn;    // dynamic next hops' addresses
    std::vector<lpm_rule> rules_v4;  // in install order: at equal prefix the later wins; depth >= 1
    std::vector<lpm_rule> rules_v6;
    std::uint32_t default_v4 = route_value::no_route;  // the value of 0.0.0.0/0, if any
    std::uint32_t default_v6 = route_value::no_route;  // ::/0

    // The plan, or an error naming the interface, neighbour or route at fault.
    static std::variant<route_plan, std::string> make(const route_sources& src);
};

template <lpm_table Lpm>
class basic_route_table {
public:
    static constexpr unsigned max_bulk = 64;  // lookup_v4_bulk chunk size
    static constexpr int ok = route_ok;
    static constexpr int no_route = route_no_route;
    static constexpr int no_neighbor = route_no_neighbor;
    static constexpr int local = route_local;

    static std::variant<basic_route_table, std::string> build(const route_sources& src) {
        auto plan = route_plan::make(src);
        if (auto* e = std::get_if<std::string>(&plan)) { return std::move(*e); }
        route_plan& p = std::get<route_plan>(plan);
        auto lpm = Lpm::build(p.rules_v4, p.rules_v6);
        if (auto* e = std::get_if<std::string>(&lpm)) { return "route table: " + *e; }
        return std::variant<basic_route_table, std::string>(
            std::in_place_index<0>, basic_route_table(std::move(std::get<Lpm>(lpm)), std::move(p)));
    }

    // dst in host order.
    int lookup_v4(std::uint32_t dst, std::uint32_t flow_hash, const nexthop** out) const noexcept {
        return lookup_v4(dst, [flow_hash] { return flow_hash; }, out);
    }
    // Same, with the flow hash computed by hash_fn() only when the route is
    // an ECMP group of more than one next hop. bias: ECMP local bias, a
    // worker's nexthops().local_subgroups(), or nullptr (nh_table::select_lazy).
    template <typename HashFn>
        requires std::is_invocable_r_v<std::uint32_t, HashFn>
    int lookup_v4(std::uint32_t dst, HashFn&& hash_fn, const nexthop** out,
                  const nh_group* bias = nullptr) const noexcept {
        std::uint32_t v;
        if (!_lpm.lookup_v4(dst, &v)) {
            v = _default_v4;
        }
        return resolve(v, hash_fn, out, bias);
    }

    // dst16: 16 address bytes, network order.
    int lookup_v6(const std::uint8_t* dst16, std::uint32_t flow_hash, const nexthop** out) const noexcept {
        return lookup_v6(dst16, [flow_hash] { return flow_hash; }, out);
    }
    template <typename HashFn>
        requires std::is_invocable_r_v<std::uint32_t, HashFn>
    int lookup_v6(const std::uint8_t* dst16, HashFn&& hash_fn, const nexthop** out,
                  const nh_group* bias = nullptr) const noexcept {
        std::uint32_t v;
        if (!_lpm.lookup_v6(dst16, &v)) {
            v = _default_v6;
        }
        return resolve(v, hash_fn, out, bias);
    }

    // Burst lookup: for i < n, rc[i] = lookup_v4(dst[i], hash[i], &out[i])
    // (out[i] = nullptr unless rc[i] == ok), in chunks of max_bulk through
    // the LPM's own bulk lookup.
    void lookup_v4_bulk(const std::uint32_t* dst, const std::uint32_t* hash, unsigned n, const nexthop** out,
                        int* rc) const noexcept {
        std::uint32_t v[max_bulk];
        for (unsigned base = 0; base < n; base += max_bulk) {
            const unsigned m = (n - base) < max_bulk ? (n - base) : max_bulk;
            _lpm.lookup_v4_bulk(dst + base, v, m);
            for (unsigned i = 0; i < m; ++i) {
                out[base + i] = nullptr;
                rc[base + i] = resolve_hash(v[i] != lpm_miss ? v[i] : _default_v4, hash[base + i], &out[base + i]);
            }
        }
    }

    // The route for a value the LPM's own bulk lookup returned
    // (lpm().lookup_v4_bulk; lpm_miss: the default route, if any): what
    // lookup_v4 returns for that address.
    template <typename HashFn>
        requires std::is_invocable_r_v<std::uint32_t, HashFn>
    int resolve_v4(std::uint32_t lpm_value, HashFn&& hash_fn, const nexthop** out,
                   const nh_group* bias = nullptr) const noexcept {
        return resolve(lpm_value != lpm_miss ? lpm_value : _default_v4, hash_fn, out, bias);
    }

    // The same for IPv6 (lpm().lookup_v6_bulk).
    template <typename HashFn>
        requires std::is_invocable_r_v<std::uint32_t, HashFn>
    int resolve_v6(std::uint32_t lpm_value, HashFn&& hash_fn, const nexthop** out,
                   const nh_group* bias = nullptr) const noexcept {
        return resolve(lpm_value != lpm_miss ? lpm_value : _default_v6, hash_fn, out, bias);
    }

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
    std::optional<std::uint16_t> connected_port(const std::uint8_t* addr16, bool v6) const noexcept {
        std::uint32_t v = 0;
        const bool hit = v6 ? _lpm.lookup_v6(addr16, &v)
                            : _lpm.lookup_v4(std::uint32_t{addr16[0]} << 24 | std::uint32_t{addr16[1]} << 16 |
                                                 std::uint32_t{addr16[2]} << 8 | addr16[3],
                                             &v);
        if (!hit) { v = v6 ? _default_v6 : _default_v4; }
        if (v < route_value::connected || v - route_value::connected >= _conn.size()) {
            return std::nullopt;
        }
        return static_cast<std::uint16_t>(v - route_value::connected);
    }
    const nh_table& nexthops() const noexcept { return _nht; }
    const std::vector<route_info>& routes() const noexcept { return _routes; }
    const Lpm& lpm() const noexcept { return _lpm; }

private:
    basic_route_table(Lpm&& lpm, route_plan&& p) noexcept
        : _lpm(std::move(lpm)),
          _default_v4(p.default_v4),
          _default_v6(p.default_v6),
          _nht(std::move(p.nht)),
          _conn(std::move(p.conn)),
          _locals(p.locals),
          _routes(std::move(p.routes)),
          _dyn(std::move(p.dyn)) {}

    int resolve_hash(std::uint32_t v, std::uint32_t hash, const nexthop** out) const noexcept {
        auto h = [hash] { return hash; };
        return resolve(v, h, out);
    }
    template <typename HashFn>
    int resolve(std::uint32_t v, HashFn& hash_fn, const nexthop** out, const nh_group* bias = nullptr) const noexcept {
        if (v < route_value::special_base) [[likely]] {
            *out = &_nht.select_lazy(v, hash_fn, bias);
            return route_ok;
        }
        if (v >= route_value::connected) {
            *out = &_conn[v - route_value::connected];
            return route_no_neighbor;
        }
        return v == route_value::local ? route_local : route_no_route;
    }

    Lpm _lpm;
    std::uint32_t _default_v4;  // the value of 0.0.0.0/0, or route_value::no_route
    std::uint32_t _default_v6;
    nh_table _nht;
    std::vector<nexthop> _conn;
    local_addrs _locals;
    std::vector<route_info> _routes;
    std::vector<ip_prefix> _dyn;
};

}  // namespace rocelab
