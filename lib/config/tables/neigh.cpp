// NEIGH (mode l3): static neighbours.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

void loader::load_neighbors(const entry& t) {
    for (const auto& k : entries(t.value, t.key_node.Mark(), "NEIGH")) {
        const std::string path = "NEIGH|" + k.key;
        const auto bar = k.key.find('|');
        if (bar == std::string::npos) {
            fail(k.key_node.Mark(), path,
                 "a NEIGH key is \"<port>|<address>\", such as \"Ethernet0|10.0.0.0\"");
        }
        const std::size_t port =
            port_index(trim(std::string_view(k.key).substr(0, bar)), k.key_node.Mark(), path);
        const std::string_view text = trim(std::string_view(k.key).substr(bar + 1));
        const auto addr = parse_ip(text);
        if (!addr) {
            fail(k.key_node.Mark(), path,
                 "address " + quote(text) +
                     " is not valid: expected an IPv4 or IPv6 address without prefix length, "
                     "such as \"Ethernet0|10.0.0.0\"");
        }
        const auto f = fields(k, path, {"neigh", "family"});
        const auto* mac = find(f, "neigh");
        if (mac == nullptr) {
            fail(k.key_node.Mark(), path, "neigh is required: the neighbour's MAC address");
        }
        neigh_cfg n;
        n.ifname = _cfg.ports[port].name;
        n.addr = *addr;
        n.mac = get_mac(*mac, path + "|neigh", true);
        if (const auto* fam = find(f, "family")) {
            const bool v6 = get_choice(*fam, path + "|family", {"IPv4", "IPv6"}) == "IPv6";
            if (v6 != addr->v6) {
                fail(mark_of(*fam), path + "|family",
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
