// NEIGH (mode l3): static neighbours.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view family_choices[] = {"IPv4", "IPv6"};

namespace fld {

constexpr field_spec neigh = a_field(field_kind::mac, "neigh", "required", "the neighbour's MAC address");
constexpr field_spec family =
    choice_field("family", family_choices, "the address's", "must match the address");
constexpr field_spec all[] = {neigh, family};

}  // namespace fld
}  // namespace

constexpr table_spec neigh_table = keyed_table(
    "NEIGH", "`\"<port>|<address>\"`, the address on one of the port's INTERFACE subnets",
    "mode l3: static neighbours (no ARP/ND needed; they always win over what ARP/ND would say).", fld::all);

void loader::load_neighbors(const entry& t) {
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        const auto bar = k.key.find('|');
        if (bar == std::string::npos) {
            fail(k.key_node.Mark(), path,
                 "a NEIGH key is \"<port>|<address>\", such as \"Ethernet0|10.0.0.0\"");
        }
        const auto [port, text] = port_and_address(k, bar);
        const auto addr = parse_ip(text);
        if (!addr) {
            fail_address(k, text,
                         "an IPv4 or IPv6 address without prefix length, such as \"Ethernet0|10.0.0.0\"");
        }
        const auto f = fields(k, neigh_table);
        const entry& mac = required(k, f, fld::neigh, "neigh is required: the neighbour's MAC address");
        neigh_cfg n;
        n.ifname = _cfg.ports[port].name;
        n.addr = *addr;
        n.mac = get_mac(mac, fld::neigh);
        if (const auto* fam = find(f, fld::family)) {
            const bool v6 = get_choice(*fam, fld::family) == "IPv6";
            if (v6 != addr->v6) {
                fail(mark_of(*fam), fam->path,
                     "family " + family_name(v6) + " does not match the address " + quote(text) +
                         ", which is " + family_name(addr->v6));
            }
        }
        bool on_link = false;
        for (const auto& a : _cfg.ports[port].addresses) {
            on_link = on_link || contains(a, *addr);
        }
        if (!on_link) {
            fail(k.key_node.Mark(), path,
                 "address " + quote(text) + " is not on a subnet of " + n.ifname + " (" +
                     subnets_of(_cfg.ports[port]) + ")");
        }
        for (const auto& o : _cfg.neighbors) {
            if (o.ifname == n.ifname && o.addr.addr == n.addr.addr && o.addr.v6 == n.addr.v6) {
                fail(k.key_node.Mark(), path,
                     "neighbour " + to_string(n.addr, false) + " on " + n.ifname + " is given twice");
            }
        }
        _cfg.neighbors.push_back(n);
    }
}

}  // namespace rocelab::detail
