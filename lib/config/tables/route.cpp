// ROUTE (mode l3): static routes and ECMP groups.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view refused[] = {"distance", "blackhole", "nexthop-vrf", "vrf_name"};

namespace fld {

constexpr field_spec nexthop =
    noun_field(field_kind::address_list, "nexthop",
               "a comma-separated list of next-hop addresses such as \"10.0.0.0,10.0.0.2\"", "required",
               "next hops of the prefix's family, each on a subnet of its port (INTERFACE); two "
               "or more form an ECMP group");
constexpr field_spec ifname = noun_field(
    field_kind::port_list, "ifname", "a comma-separated list of ports such as \"Ethernet0,Ethernet4\"",
    "the port whose INTERFACE subnet holds the next hop",
    "the port of each next hop, pairing up one to one with `nexthop` (same length)");
constexpr field_spec all[] = {nexthop, ifname};

}  // namespace fld
}  // namespace

constexpr table_spec route_table =
    keyed_table("ROUTE", "the prefix, with no host bits set (`\"10.1.0.0/16\"`, `\"::/0\"`)",
                "mode l3: static routes (connected subnets need none).", fld::all, refused);

void loader::load_routes(const entry& t) {
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        const auto prefix = parse_prefix(trim(k.key));
        if (!prefix) {
            fail(k.key_node.Mark(), path,
                 "prefix " + quote(k.key) +
                     " is not valid: expected a prefix such as \"10.1.0.0/16\", \"0.0.0.0/0\" "
                     "or \"fc00:1::/64\"");
        }
        if (network_of(*prefix).addr != prefix->addr) {
            fail(k.key_node.Mark(), path,
                 "prefix " + quote(k.key) + " has host bits set; did you mean " +
                     to_string(network_of(*prefix)) + "?");
        }
        for (const auto& r : _cfg.routes) {
            if (same_prefix(r.prefix, *prefix)) {
                fail(k.key_node.Mark(), path, "route " + to_string(*prefix) + " is given twice");
            }
        }
        const auto f = fields(k, route_table);
        const auto* nh = find(f, fld::nexthop);
        if (nh == nullptr) {
            fail(k.key_node.Mark(), path,
                 "nexthop is required: a comma-separated list such as \"10.0.0.0,10.0.0.2\"");
        }
        const std::string nh_expected(fld::nexthop.noun);
        // The split views point into these strings, which must outlive them.
        const std::string hop_text = scalar(*nh, nh_expected);
        const auto hops = split(hop_text, ',');
        std::string ifname_text;
        std::vector<std::string_view> ifnames;
        const auto* ifn = find(f, fld::ifname);
        if (ifn != nullptr) {
            ifname_text = scalar(*ifn, fld::ifname.noun);
            ifnames = split(ifname_text, ',');
            if (ifnames.size() != hops.size()) {
                fail(mark_of(*ifn), ifn->path,
                     "ifname lists " + std::to_string(ifnames.size()) + " port(s) but nexthop lists " +
                         std::to_string(hops.size()) +
                         " address(es); the lists pair up one to one and must have the same length");
            }
        }
        route_cfg r;
        r.prefix = *prefix;
        for (std::size_t i = 0; i < hops.size(); ++i) {
            const auto addr = parse_ip(hops[i]);
            if (!addr) {
                fail(mark_of(*nh), nh->path,
                     "next hop " + quote(hops[i]) + " is not valid: expected " + nh_expected);
            }
            if (addr->v6 != prefix->v6) {
                fail(mark_of(*nh), nh->path,
                     "next hop " + quote(hops[i]) + " is " + family_name(addr->v6) + " but the prefix is " +
                         family_name(prefix->v6));
            }
            std::size_t port = all_ports;
            if (ifn != nullptr) {
                port = port_index(ifnames[i], mark_of(*ifn), ifn->path);
                bool on_link = false;
                for (const auto& a : _cfg.ports[port].addresses) {
                    on_link = on_link || contains(a, *addr);
                }
                if (!on_link) {
                    fail(mark_of(*nh), nh->path,
                         "next hop " + quote(hops[i]) + " is not on a subnet of " + _cfg.ports[port].name +
                             " (" + subnets_of(_cfg.ports[port]) +
                             "); add an INTERFACE address or fix the ifname");
                }
            } else {
                port = on_link_port(*addr);
                if (port == all_ports) {
                    fail(mark_of(*nh), nh->path,
                         "next hop " + quote(hops[i]) +
                             " is not on any INTERFACE subnet; add an INTERFACE address "
                             "or give ifname");
                }
            }
            for (const auto& h : r.nexthops) {
                if (h.addr.addr == addr->addr && h.ifname == _cfg.ports[port].name) {
                    fail(mark_of(*nh), nh->path, "next hop " + quote(hops[i]) + " is listed twice");
                }
            }
            r.nexthops.push_back(nexthop_cfg{*addr, _cfg.ports[port].name});
        }
        _cfg.routes.push_back(std::move(r));
    }
}

}  // namespace rocelab::detail
