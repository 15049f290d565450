// route_table.cpp - route_plan::make: the route table's contents and LPM
// rules from the ports' addresses, NEIGH and ROUTE (control path; see
// route_table.hpp).
#include "fwd/route_table.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

namespace rocelab {

namespace {

std::uint32_t v4_host(const ip_prefix& p) {
    return (std::uint32_t{p.addr[0]} << 24) | (std::uint32_t{p.addr[1]} << 16) |
           (std::uint32_t{p.addr[2]} << 8) | p.addr[3];
}

bool same_addr(const ip_prefix& a, const ip_prefix& b) {
    return a.v6 == b.v6 && std::memcmp(a.addr.data(), b.addr.data(), a.v6 ? 16 : 4) == 0;
}

struct ranked_rule {
    lpm_rule rule;  // host bits zero
    int priority;   // at equal prefix the higher priority wins
};

}  // namespace

std::variant<route_plan, std::string> route_plan::make(const route_sources& src) {
    const std::span<const route_port> ports = src.ports;
    auto port_index = [&](const std::string& name) -> std::optional<std::uint16_t> {
        for (std::size_t i = 0; i < ports.size(); ++i) {
            if (ports[i].name == name) {
                return static_cast<std::uint16_t>(i);
            }
        }
        return std::nullopt;
    };

    std::size_t n_nh_max = src.neighbors.size() + 1;
    std::size_t n_grp_max = src.neighbors.size() + 1;
    for (const auto& r : src.routes) {
        n_nh_max += r.nexthops.size();
        n_grp_max += 1;
    }
    if (n_grp_max >= route_value::special_base) {
        return std::string("route table: too many routes (") + std::to_string(n_grp_max) + ")";
    }
    if (ports.size() > lpm_value_limit - route_value::connected) {
        return "route table: " + std::to_string(ports.size()) + " ports, at most " +
               std::to_string(lpm_value_limit - route_value::connected);
    }
    route_plan t{.nht = nh_table(n_nh_max, n_grp_max)};
    std::vector<ranked_rule> rules;
    rules.reserve(src.routes.size() + src.neighbors.size() + 16);

    auto add_rule = [&](const ip_prefix& p, std::uint32_t value, int priority, route_kind kind,
                        std::uint32_t grp) {
        t.routes.push_back(route_info{network_of(p), kind, grp});
        rules.push_back(ranked_rule{lpm_rule{network_of(p), value}, priority});
    };

    // Connected subnets and local addresses.
    for (std::size_t i = 0; i < ports.size(); ++i) {
        t.conn.push_back(nexthop{static_cast<std::uint16_t>(i), ports[i].port_id, mac_addr{}, ports[i].mac});
    }
    // Does port `port` (or any port, if none) have a connected subnet holding addr?
    auto connected_on = [&](const ip_prefix& addr, std::optional<std::uint16_t> port) -> std::optional<std::uint16_t> {
        for (std::size_t i = 0; i < ports.size(); ++i) {
            if (port && *port != i) { continue; }
            for (const ip_prefix& a : ports[i].addresses) {
                if (a.len < (a.v6 ? 128 : 32) && contains(a, addr)) { return static_cast<std::uint16_t>(i); }
            }
        }
        return std::nullopt;
    };
    for (std::size_t i = 0; i < ports.size(); ++i) {
        const route_port& pc = ports[i];
        const auto port = static_cast<std::uint16_t>(i);
        for (const ip_prefix& a : pc.addresses) {
            const std::uint8_t full = a.v6 ? 128 : 32;
            if (a.len > full) {
                return "interface " + pc.name + "|" + to_string(a) + ": prefix length above " +
                       std::to_string(full);
            }
            if (a.len < full) {
                add_rule(a, route_value::connected + port, 0, route_kind::connected, 0);
            }
            ip_prefix host = a;
            host.len = full;
            add_rule(host, route_value::local, 3, route_kind::local, 0);
            const bool ok = a.v6 ? t.locals.add_v6(a.addr.data(), a.len, port, pc.mac)
                                 : t.locals.add_v4(v4_host(a), a.len, port, pc.mac);
            if (!ok) {
                return "interface " + pc.name + "|" + to_string(a) + ": more than " +
                       std::to_string(max_local_addrs) + " local addresses";
            }
        }
    }

    // Static neighbours: host routes, and the resolution table for routes.
    std::vector<std::uint32_t> neigh_nh(src.neighbors.size());
    for (std::size_t i = 0; i < src.neighbors.size(); ++i) {
        const neigh_cfg& n = src.neighbors[i];
        const std::string what = "neighbour " + n.ifname + "|" + to_string(n.addr, false);
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
        const nexthop nh{*port, ports[*port].port_id, n.mac, ports[*port].mac};
        const auto id = t.nht.add_nexthop(nh);
        const std::uint32_t member = id.value_or(0);
        const auto grp = id ? t.nht.add_group(std::span<const std::uint32_t>(&member, 1)) : std::nullopt;
        if (!grp) {
            return what + ": next-hop table full";
        }
        neigh_nh[i] = *id;
        ip_prefix host = n.addr;
        host.len = full;
        add_rule(host, *grp, 1, route_kind::neighbor, *grp);
    }

    // Static routes.
    for (const route_cfg& r : src.routes) {
        const std::string what = "route " + to_string(r.prefix);
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
            const std::string hop = what + ": next hop " + to_string(h.addr, false) +
                                    (h.ifname.empty() ? std::string() : " (" + h.ifname + ")");
            if (h.addr.v6 != r.prefix.v6) {
                return hop + ": address family differs from the prefix";
            }
            if (!h.ifname.empty() && !port_index(h.ifname)) {
                return hop + ": unknown port '" + h.ifname + "'";
            }
            std::optional<std::size_t> found;
            for (std::size_t i = 0; i < src.neighbors.size(); ++i) {
                const neigh_cfg& n = src.neighbors[i];
                if (same_addr(n.addr, h.addr) && (h.ifname.empty() || n.ifname == h.ifname)) {
                    found = i;
                    break;
                }
            }
            if (!found) {
                const std::optional<std::uint16_t> want =
                    h.ifname.empty() ? std::nullopt : port_index(h.ifname);
                const auto port = connected_on(h.addr, want);
                if (!src.dynamic_neighbors || !port) {
                    return hop + ": unresolved, no NEIGH entry for it" +
                           (src.dynamic_neighbors ? std::string(", and not in a connected subnet") +
                                                        (h.ifname.empty() ? "" : " of " + h.ifname) +
                                                        " to resolve it in by ARP/ND"
                                                  : std::string(" (ROCELAB neigh_dynamic is off)"));
                }
                // Resolved at run time: one dynamic next hop per address.
                std::uint32_t di = 0;
                while (di < t.dyn.size() && !same_addr(t.dyn[di], h.addr)) { ++di; }
                if (di == t.dyn.size()) {
                    ip_prefix a = h.addr;
                    a.len = a.v6 ? 128 : 32;
                    t.dyn.push_back(a);
                }
                const nexthop dnh{*port, ports[*port].port_id, nexthop::dynamic_mark(di), ports[*port].mac};
                const auto id = t.nht.add_nexthop(dnh);
                if (!id) { return what + ": next-hop table full"; }
                members[k] = *id;
                continue;
            }
            members[k] = neigh_nh[*found];
        }
        const auto grp = t.nht.add_group(std::span<const std::uint32_t>(members, r.nexthops.size()));
        if (!grp) {
            return what + ": next-hop group table full";
        }
        add_rule(r.prefix, *grp, 2, route_kind::static_route, *grp);
    }

    // Install order: lowest priority first so that an equal prefix of higher
    // priority replaces it. A default route stays out of the LPM.
    std::stable_sort(rules.begin(), rules.end(),
                     [](const ranked_rule& a, const ranked_rule& b) { return a.priority < b.priority; });
    for (const ranked_rule& r : rules) {
        const bool v6 = r.rule.prefix.v6;
        if (r.rule.prefix.len == 0) {
            (v6 ? t.default_v6 : t.default_v4) = r.rule.value;
        } else {
            (v6 ? t.rules_v6 : t.rules_v4).push_back(r.rule);
        }
    }
    return std::variant<route_plan, std::string>(std::in_place_index<0>, std::move(t));
}

}  // namespace rocelab
