// PORT: ports, their devices, speeds, MTUs and VLAN modes.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

void loader::load_ports(const entry& t) {
    std::map<int, std::string> by_id;
    std::map<std::string, std::string> by_device;
    for (const auto& k : entries(t.value, t.key_node.Mark(), "PORT")) {
        const std::string path = "PORT|" + k.key;
        if (k.key.empty() || k.key == "global" || k.key == "*" ||
            k.key.find_first_of("|, \t") != std::string::npos) {
            fail(k.key_node.Mark(), path,
                 "a port name must not be empty, \"global\" or \"*\", and must not contain '|', ',' or "
                 "spaces "
                 "(SONiC style: Ethernet0)");
        }
        const auto f = fields(
            k, path,
            {"device", "port_id", "speed", "mtu", "mac", "trust", "vlan_mode", "vlan", "tx_ring_size"},
            {"lanes", "alias", "index", "fec", "autoneg", "admin_status", "description", "pfc_asym",
             "tpid", "parent_port"});
        port_cfg p = _cfg.port_defaults;
        p.name = k.key;
        const auto* dev = find(f, "device");
        const auto* id = find(f, "port_id");
        if ((dev == nullptr) == (id == nullptr)) {
            fail(
                k.key_node.Mark(), path,
                std::string(dev == nullptr ? "no device given" : "both device and port_id given") +
                    ": give exactly one of device (a DPDK device name such as net_ring0 or 0000:3b:00.0) "
                    "or port_id (a DPDK port id such as 0)");
        }
        if (dev != nullptr) {
            p.device =
                std::string(trim(scalar(*dev, path + "|device", "a DPDK device name such as net_ring0")));
            if (p.device.empty()) {
                fail_value(*dev, path + "|device", "a DPDK device name such as net_ring0");
            }
            const auto [it, inserted] = by_device.emplace(p.device, k.key);
            if (!inserted) {
                fail(mark_of(*dev), path + "|device",
                     quote(p.device) + " is already used by port " + it->second);
            }
        } else {
            p.port_id = static_cast<int>(get_uint(*id, path + "|port_id", 0, 1023, "a DPDK port id"));
            const auto [it, inserted] = by_id.emplace(p.port_id, k.key);
            if (!inserted) {
                fail(mark_of(*id), path + "|port_id",
                     "port id " + std::to_string(p.port_id) + " is already used by port " + it->second);
            }
        }
        using namespace literals;
        if (const auto* e = find(f, "speed")) {
            p.speed = get_rate(*e, path + "|speed", 1_Mbps, bits_per_sec{1'600'000'000'000});
        }
        if (const auto* e = find(f, "mtu")) {
            // SONiC gives the MTU in bytes, so a bare number is accepted.
            p.mtu = static_cast<std::uint32_t>(
                get_bytes(*e, path + "|mtu", bytes{68}, bytes{9216}, bare_number::accepted, true).v);
        }
        if (const auto* e = find(f, "mac")) {
            p.mac = get_mac(*e, path + "|mac", true);
        }
        if (const auto* e = find(f, "trust")) {
            p.trust = get_choice(*e, path + "|trust", {"dscp", "pcp"}) == "dscp" ? trust_mode::dscp
                                                                                 : trust_mode::pcp;
        }
        if (const auto* e = find(f, "vlan_mode")) {
            p.vlan = get_choice(*e, path + "|vlan_mode", {"untagged", "tagged"}) == "tagged"
                         ? vlan_mode::tagged
                         : vlan_mode::untagged;
        }
        if (const auto* e = find(f, "vlan")) {
            if (p.vlan != vlan_mode::tagged) {
                fail(e->key_node.Mark(), path + "|vlan", "a VLAN id is only used with vlan_mode: tagged");
            }
            p.vlan_id = static_cast<std::uint16_t>(get_uint(*e, path + "|vlan", 1, 4094, "a VLAN id"));
        } else if (p.vlan == vlan_mode::tagged) {
            fail(k.key_node.Mark(), path, "vlan_mode: tagged needs a VLAN id: vlan: 1..4094");
        }
        if (const auto* e = find(f, "tx_ring_size")) {
            p.tx_ring_size = static_cast<std::uint16_t>(
                get_uint(*e, path + "|tx_ring_size", 16, 32768, "a descriptor count"));
        }
        const std::uint32_t l2_header = p.vlan == vlan_mode::tagged ? 18 : 14;
        if (p.mtu + l2_header > _cfg.max_frame) {
            const auto* e = find(f, "mtu");
            fail(e != nullptr ? mark_of(*e) : k.key_node.Mark(), path + "|mtu",
                 "mtu " + std::to_string(p.mtu) + " plus the " + std::to_string(l2_header) +
                     "-byte Ethernet header exceeds ROCELAB|max_frame " + std::to_string(_cfg.max_frame) +
                     "B; lower the mtu or raise max_frame");
        }
        _cfg.ports.push_back(std::move(p));
    }
}

}  // namespace rocelab::detail
