// INTERFACE (mode l3): the ports' addresses, in the keys.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view refused[] = {"vrf_name", "scope", "family", "nat_zone", "mpls"};

}  // namespace

constexpr table_spec interface_table =
    keyed_table("INTERFACE",
                "`\"<port>|<address>/<prefix length>\"` (IPv4 or IPv6; several per port); SONiC's bare "
                "`\"Ethernet0\"` is accepted and sets nothing",
                "mode l3: the ports' addresses; the value is empty.", {}, refused);

void loader::load_interfaces(const entry& t) {
    std::vector<std::pair<ip_prefix, std::string>> used;  // address -> key that set it
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        fields(k, interface_table);
        const auto bar = k.key.find('|');
        const auto [port, text] = port_and_address(k, bar);
        if (bar == std::string::npos) {
            continue;
        }  // SONiC's bare "Ethernet0" entry: nothing to set
        const auto p = parse_prefix(text);
        if (!p) {
            fail_address(k, text,
                         "an address with its prefix length, such as \"Ethernet0|10.0.0.1/31\" or "
                         "\"Ethernet0|fc00::1/126\"");
        }
        for (const auto& [a, by] : used) {
            if (a.v6 == p->v6 && a.addr == p->addr) {
                fail(k.key_node.Mark(), path,
                     "address " + to_string(*p, false) + " is already assigned by key " + quote(by));
            }
        }
        used.emplace_back(*p, k.key);
        _cfg.ports[port].addresses.push_back(*p);
    }
}

}  // namespace rocelab::detail
