// route_table.cpp - building the LPM tables from switch_cfg (control path).
#include "dpdk/route_table.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wvolatile"  // DPDK 22.11 headers use volatile++
#include <rte_lpm.h>
#include <rte_lpm6.h>
#pragma GCC diagnostic pop

#include <arpa/inet.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

namespace rocelab::dpdk {

namespace {

std::string addr_str(const ip_prefix& p) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (p.v6) {
        inet_ntop(AF_INET6, p.addr.data(), buf, sizeof buf);
    } else {
        inet_ntop(AF_INET, p.addr.data(), buf, sizeof buf);
    }
    return buf;
}

std::string prefix_str(const ip_prefix& p) {
    return addr_str(p) + "/" + std::to_string(p.len);
}

std::uint32_t v4_host(const ip_prefix& p) {
    return (std::uint32_t{p.addr[0]} << 24) | (std::uint32_t{p.addr[1]} << 16) |
           (std::uint32_t{p.addr[2]} << 8) | p.addr[3];
}

bool same_addr(const ip_prefix& a, const ip_prefix& b) {
    return a.v6 == b.v6 && std::memcmp(a.addr.data(), b.addr.data(), a.v6 ? 16 : 4) == 0;
}

// Zero the host bits of a prefix.
ip_prefix masked(ip_prefix p) {
    const std::size_t nbytes = p.v6 ? 16 : 4;
    for (std::size_t i = 0; i < nbytes; ++i) {
        const int bits = static_cast<int>(p.len) - static_cast<int>(i * 8);
        if (bits <= 0) {
            p.addr[i] = 0;
        } else if (bits < 8) {
            p.addr[i] &= static_cast<std::uint8_t>(0xffu << (8 - bits));
        }
    }
    return p;
}

struct rule {
    ip_prefix prefix;  // masked, len >= 1 after default-route expansion
    std::uint32_t value;
    int priority;  // at equal prefix the higher priority wins
};

std::string unique_name(const char* kind) {
    static std::atomic<unsigned> seq{0};
    char buf[RTE_LPM_NAMESIZE];
    std::snprintf(buf, sizeof buf, "rl_%s_%u", kind, seq.fetch_add(1));
    return buf;
}

}  // namespace

route_table::route_table(route_table&& o) noexcept
    : _lpm4(std::exchange(o._lpm4, nullptr)),
      _lpm6(std::exchange(o._lpm6, nullptr)),
      _nht(std::move(o._nht)),
      _locals(o._locals),
      _routes(std::move(o._routes)),
      _conn(std::move(o._conn)),
      _dyn(std::move(o._dyn)) {}

route_table& route_table::operator=(route_table&& o) noexcept {
    if (this != &o) {
        release();
        _lpm4 = std::exchange(o._lpm4, nullptr);
        _lpm6 = std::exchange(o._lpm6, nullptr);
        _nht = std::move(o._nht);
        _locals = o._locals;
        _routes = std::move(o._routes);
        _conn = std::move(o._conn);
        _dyn = std::move(o._dyn);
    }
    return *this;
}

route_table::~route_table() {
    release();
}

void route_table::release() noexcept {
    if (_lpm4 != nullptr) {
        rte_lpm_free(_lpm4);
        _lpm4 = nullptr;
    }
    if (_lpm6 != nullptr) {
        rte_lpm6_free(_lpm6);
        _lpm6 = nullptr;
    }
}

std::optional<std::uint16_t> route_table::connected_port(const std::uint8_t* addr16, bool v6) const noexcept {
    std::uint32_t v = 0;
    if (v6) {
        if (_lpm6 == nullptr || rte_lpm6_lookup(_lpm6, addr16, &v) != 0) { return std::nullopt; }
    } else {
        const std::uint32_t a = std::uint32_t{addr16[0]} << 24 | std::uint32_t{addr16[1]} << 16 |
                                std::uint32_t{addr16[2]} << 8 | addr16[3];
        if (rte_lpm_lookup(_lpm4, a, &v) != 0) { return std::nullopt; }
    }
    if (v < val_connected || v - val_connected >= _conn.size()) { return std::nullopt; }
    return static_cast<std::uint16_t>(v - val_connected);
}

std::variant<route_table, std::string> route_table::build(
    const switch_cfg& cfg, const std::vector<mac_addr>& port_macs,
    const std::vector<std::uint16_t>& port_ids_by_index) {
    if (port_macs.size() != port_ids_by_index.size()) {
        return std::string("route table: ") + std::to_string(port_macs.size()) + " port MACs but " +
               std::to_string(port_ids_by_index.size()) + " port ids";
    }
    if (port_macs.size() < cfg.ports.size()) {
        return std::string("route table: ") + std::to_string(cfg.ports.size()) +
               " configured ports but only " + std::to_string(port_macs.size()) + " port MACs";
    }
    auto port_index = [&](const std::string& name) -> std::optional<std::uint16_t> {
        for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
            if (cfg.ports[i].name == name) {
                return static_cast<std::uint16_t>(i);
            }
        }
        return std::nullopt;
    };

    std::size_t n_nh_max = cfg.neighbors.size() + 1;
    std::size_t n_grp_max = cfg.neighbors.size() + 1;
    for (const auto& r : cfg.routes) {
        n_nh_max += r.nexthops.size();
        n_grp_max += 1;
    }
    if (n_grp_max >= special_base) {
        return std::string("route table: too many routes (") + std::to_string(n_grp_max) + ")";
    }
    route_table t{nh_table(n_nh_max, n_grp_max)};
    std::vector<rule> rules;
    rules.reserve(cfg.routes.size() + cfg.neighbors.size() + 16);

    auto add_rule = [&](const ip_prefix& p, std::uint32_t value, int priority, route_kind kind,
                        std::uint32_t grp) {
        t._routes.push_back(route_info{masked(p), kind, grp});
        if (p.len == 0) {
            // rte_lpm depths start at 1: install the two halves.
            ip_prefix lo = p;
            lo.addr = {};
            lo.len = 1;
            ip_prefix hi = lo;
            hi.addr[0] = 0x80;
            rules.push_back(rule{lo, value, priority});
            rules.push_back(rule{hi, value, priority});
        } else {
            rules.push_back(rule{masked(p), value, priority});
        }
    };

    // Connected subnets and local addresses.
    for (std::size_t i = 0; i < port_macs.size(); ++i) {
        t._conn.push_back(nexthop{static_cast<std::uint16_t>(i), port_ids_by_index[i], mac_addr{}, port_macs[i]});
    }
    // Does port `port` (or any port, if none) have a connected subnet holding addr?
    auto connected_on = [&](const ip_prefix& addr, std::optional<std::uint16_t> port) -> std::optional<std::uint16_t> {
        for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
            if (port && *port != i) { continue; }
            for (const ip_prefix& a : cfg.ports[i].addresses) {
                if (a.v6 != addr.v6 || a.len >= (a.v6 ? 128 : 32)) { continue; }
                ip_prefix x = addr;
                x.len = a.len;
                if (same_addr(masked(x), masked(a))) { return static_cast<std::uint16_t>(i); }
            }
        }
        return std::nullopt;
    };
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
        const port_cfg& pc = cfg.ports[i];
        const auto port = static_cast<std::uint16_t>(i);
        for (const ip_prefix& a : pc.addresses) {
            const std::uint8_t full = a.v6 ? 128 : 32;
            if (a.len > full) {
                return "interface " + pc.name + "|" + prefix_str(a) + ": prefix length above " +
                       std::to_string(full);
            }
            if (a.len < full) {
                add_rule(a, val_connected + port, 0, route_kind::connected, 0);
            }
            ip_prefix host = a;
            host.len = full;
            add_rule(host, val_local, 3, route_kind::local, 0);
            const bool ok = a.v6 ? t._locals.add_v6(a.addr.data(), a.len, port, port_macs[i])
                                 : t._locals.add_v4(v4_host(a), a.len, port, port_macs[i]);
            if (!ok) {
                return "interface " + pc.name + "|" + prefix_str(a) + ": more than " +
                       std::to_string(max_local_addrs) + " local addresses";
            }
        }
    }

    // Static neighbours: host routes, and the resolution table for routes.
    std::vector<std::uint32_t> neigh_nh(cfg.neighbors.size());
    for (std::size_t i = 0; i < cfg.neighbors.size(); ++i) {
        const neigh_cfg& n = cfg.neighbors[i];
        const std::string what = "neighbour " + n.ifname + "|" + addr_str(n.addr);
        const auto port = port_index(n.ifname);
        if (!port) {
            return what + ": unknown port '" + n.ifname + "'";
        }
        const std::uint8_t full = n.addr.v6 ? 128 : 32;
        if (n.addr.len != full && n.addr.len != 0) {
            return what + ": must be a host address (/" + std::to_string(full) + ")";
        }
        if ((n.mac[0] & 1u) != 0) {
            return what + ": multicast MAC";
        }
        const nexthop nh{*port, port_ids_by_index[*port], n.mac, port_macs[*port]};
        const auto id = t._nht.add_nexthop(nh);
        const std::uint32_t member = id.value_or(0);
        const auto grp = id ? t._nht.add_group(std::span<const std::uint32_t>(&member, 1)) : std::nullopt;
        if (!grp) {
            return what + ": next-hop table full";
        }
        neigh_nh[i] = *id;
        ip_prefix host = n.addr;
        host.len = full;
        add_rule(host, *grp, 1, route_kind::neighbor, *grp);
    }

    // Static routes.
    for (const route_cfg& r : cfg.routes) {
        const std::string what = "route " + prefix_str(r.prefix);
        const std::uint8_t full = r.prefix.v6 ? 128 : 32;
        if (r.prefix.len > full) {
            return what + ": prefix length above " + std::to_string(full);
        }
        if (r.nexthops.empty()) {
            return what + ": no next hops";
        }
        if (r.nexthops.size() > max_ecmp_ways) {
            return what + ": " + std::to_string(r.nexthops.size()) + " next hops, at most " +
                   std::to_string(max_ecmp_ways);
        }
        std::uint32_t members[max_ecmp_ways];
        for (std::size_t k = 0; k < r.nexthops.size(); ++k) {
            const nexthop_cfg& h = r.nexthops[k];
            const std::string hop = what + ": next hop " + addr_str(h.addr) +
                                    (h.ifname.empty() ? std::string() : " (" + h.ifname + ")");
            if (h.addr.v6 != r.prefix.v6) {
                return hop + ": address family differs from the prefix";
            }
            if (!h.ifname.empty() && !port_index(h.ifname)) {
                return hop + ": unknown port '" + h.ifname + "'";
            }
            std::optional<std::size_t> found;
            for (std::size_t i = 0; i < cfg.neighbors.size(); ++i) {
                const neigh_cfg& n = cfg.neighbors[i];
                if (same_addr(n.addr, h.addr) && (h.ifname.empty() || n.ifname == h.ifname)) {
                    found = i;
                    break;
                }
            }
            if (!found) {
                const std::optional<std::uint16_t> want =
                    h.ifname.empty() ? std::nullopt : port_index(h.ifname);
                const auto port = connected_on(h.addr, want);
                if (!cfg.neigh.dynamic || !port) {
                    return hop + ": unresolved, no NEIGH entry for it" +
                           (cfg.neigh.dynamic ? std::string(", and not in a connected subnet") +
                                                    (h.ifname.empty() ? "" : " of " + h.ifname) +
                                                    " to resolve it in by ARP/ND"
                                              : std::string(" (ROCELAB neigh_dynamic is off)"));
                }
                // Resolved at run time: one dynamic next hop per address.
                std::uint32_t di = 0;
                while (di < t._dyn.size() && !same_addr(t._dyn[di], h.addr)) { ++di; }
                if (di == t._dyn.size()) {
                    ip_prefix a = h.addr;
                    a.len = a.v6 ? 128 : 32;
                    t._dyn.push_back(a);
                }
                const nexthop dnh{*port, port_ids_by_index[*port], nexthop::dynamic_mark(di), port_macs[*port]};
                const auto id = t._nht.add_nexthop(dnh);
                if (!id) { return what + ": next-hop table full"; }
                members[k] = *id;
                continue;
            }
            members[k] = neigh_nh[*found];
        }
        const auto grp = t._nht.add_group(std::span<const std::uint32_t>(members, r.nexthops.size()));
        if (!grp) {
            return what + ": next-hop group table full";
        }
        add_rule(r.prefix, *grp, 2, route_kind::static_route, *grp);
    }

    // Install: lowest priority first so that an equal prefix of higher
    // priority overwrites it (rte_lpm_add on an existing rule updates it).
    std::stable_sort(rules.begin(), rules.end(),
                     [](const rule& a, const rule& b) { return a.priority < b.priority; });
    std::size_t n4 = 0;
    std::size_t n6 = 0;
    for (const rule& r : rules) {
        (r.prefix.v6 ? n6 : n4) += 1;
    }
    {
        rte_lpm_config c{};
        c.max_rules = static_cast<std::uint32_t>(n4 + 16);
        c.number_tbl8s = static_cast<std::uint32_t>(std::max<std::size_t>(n4 + 16, 64));
        const std::string name = unique_name("v4");
        t._lpm4 = rte_lpm_create(name.c_str(), SOCKET_ID_ANY, &c);
        if (t._lpm4 == nullptr) {
            return "route table: rte_lpm_create failed: " + std::string(rte_strerror(rte_errno)) +
                   " (is the EAL initialised, with >= 64 MiB free?)";
        }
    }
    if (n6 > 0) {
        rte_lpm6_config c{};
        c.max_rules = static_cast<std::uint32_t>(n6 + 16);
        // A /128 can need up to 13 tbl8 groups below the 24-bit first level.
        c.number_tbl8s = static_cast<std::uint32_t>(std::max<std::size_t>(n6 * 13 + 16, 256));
        const std::string name = unique_name("v6");
        t._lpm6 = rte_lpm6_create(name.c_str(), SOCKET_ID_ANY, &c);
        if (t._lpm6 == nullptr) {
            return "route table: rte_lpm6_create failed: " + std::string(rte_strerror(rte_errno));
        }
    }
    for (const rule& r : rules) {
        const int rc = r.prefix.v6 ? rte_lpm6_add(t._lpm6, r.prefix.addr.data(), r.prefix.len, r.value)
                                   : rte_lpm_add(t._lpm4, v4_host(r.prefix), r.prefix.len, r.value);
        if (rc < 0) {
            return "route table: cannot install " + prefix_str(r.prefix) + ": " +
                   std::string(rte_strerror(-rc));
        }
    }
    return std::variant<route_table, std::string>(std::in_place_index<0>, std::move(t));
}

}  // namespace rocelab::dpdk
