// PORT: the ports, their DPDK devices, speeds, MTUs and VLAN modes.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace rocelab::detail {
namespace {

using namespace literals;

constexpr std::string_view trust_choices[] = {"dscp", "pcp"};
constexpr std::string_view vlan_mode_choices[] = {"untagged", "tagged"};
// SONiC's PORT fields with no rocelab meaning: refused in YAML, dropped and
// listed in a config_db.json (config_db.cpp), which always has some of them.
constexpr std::string_view refused[] = {"alias",
                                        "index",
                                        "fec",
                                        "autoneg",
                                        "admin_status",
                                        "description",
                                        "pfc_asym",
                                        "tpid",
                                        "parent_port",
                                        "role",
                                        "adv_speeds",
                                        "adv_interface_types",
                                        "interface_type",
                                        "link_training",
                                        "subport",
                                        "dhcp_rate_limit"};

namespace fld {

constexpr field_spec device =
    noun_field(field_kind::text, "device", "a DPDK device name such as net_ring0", "-",
               "`net_ring0`, `net_pcap1`, `0000:3b:00.0`; give exactly one of `device` and `port_id`");
constexpr field_spec port_id = count_field("port_id", 0, 1023, "a DPDK port id", "-", "DPDK port id");
constexpr field_spec speed =
    ranged_field(field_kind::rate, "speed", (1_Mbps).v, 1'600'000'000'000, "the driver's",
                 "egress rate; the shaper sends at this rate even if the device is faster (vdevs "
                 "have no natural rate)");
// SONiC gives the MTU in bytes, so a bare number is accepted.
constexpr field_spec mtu =
    byte_count_field("mtu", 68, 9216, "9100",
                     "L3 MTU, SONiC meaning (IP packet). `mtu` + 14 (+4 if tagged) must fit `ROCELAB "
                     "max_frame`");
constexpr field_spec mac = a_field(field_kind::mac, "mac", "the device's", "port MAC");
constexpr field_spec trust = choice_field(
    "trust", trust_choices, "`dscp`", "which marking classifies frames (DSCP_TO_TC_MAP or DOT1P_TO_TC_MAP)");
constexpr field_spec vlan_mode =
    choice_field("vlan_mode", vlan_mode_choices, "`untagged`",
                 "`tagged`: frames leave with an 802.1Q tag and must arrive with it");
constexpr field_spec vlan = count_field("vlan", 1, 4094, "a VLAN id", "-",
                                        "the VLAN id; required with `tagged`, an error with `untagged`");
constexpr field_spec tx_ring_size = count_field("tx_ring_size", 16, 32768, "a descriptor count",
                                                "ROCELAB `tx_ring_size`", "per-port override");
constexpr field_spec lanes =
    noun_field(field_kind::text, "lanes", "a comma list of lane numbers such as \"0,1,2,3\"", "-",
               "the serdes lanes the port uses (SONiC's string); each lane belongs to one "
               "port. Needed by BREAKOUT_CFG; otherwise only checked");
constexpr field_spec all[] = {device, port_id, speed, mtu, mac, trust, vlan_mode, vlan, tx_ring_size, lanes};

// "0,1,2,3" -> {0, 1, 2, 3}; empty on a malformed list.
std::vector<std::uint32_t> parse_lanes(const std::string& text) {
    std::vector<std::uint32_t> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        std::string item = text.substr(at, comma - at);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item.empty() || item.size() > 5 || item.find_first_not_of("0123456789") != std::string::npos) {
            return {};
        }
        out.push_back(static_cast<std::uint32_t>(std::stoul(item)));
        at = comma + 1;
    }
    return out;
}


}  // namespace fld
}  // namespace

constexpr table_spec port_table =
    keyed_table("PORT", "the port name (SONiC style `Ethernet0`; no `|`, `,` or spaces, not `global` or `*`)",
                "the ports, each bound to one DPDK device or port id.", fld::all, refused);

void loader::load_ports(const entry& t) {
    std::map<std::uint32_t, std::string> by_lane;
    std::map<int, std::string> by_id;
    std::map<std::string, std::string> by_device;
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        if (k.key.empty() || k.key == "global" || k.key == "*" ||
            k.key.find_first_of("|, \t") != std::string::npos) {
            fail(
                k.key_node.Mark(), path,
                "a port name must not be empty, \"global\" or \"*\", and must not contain '|', ',' or spaces "
                "(SONiC style: Ethernet0)");
        }
        const auto f = fields(k, port_table);
        port_cfg p = _cfg.port_defaults;
        p.name = k.key;
        const auto* dev = find(f, fld::device);
        const auto* id = find(f, fld::port_id);
        if ((dev == nullptr) == (id == nullptr)) {
            fail(k.key_node.Mark(), path,
                 std::string(dev == nullptr ? "no device given" : "both device and port_id given") +
                     ": give exactly one of device (a DPDK device name such as net_ring0 or 0000:3b:00.0) "
                     "or port_id (a DPDK port id such as 0)");
        }
        if (dev != nullptr) {
            p.device = get_text(*dev, fld::device);
            if (p.device.empty()) {
                fail_value(*dev, fld::device.noun);
            }
            const auto [it, inserted] = by_device.emplace(p.device, k.key);
            if (!inserted) {
                fail(mark_of(*dev), dev->path, quote(p.device) + " is already used by port " + it->second);
            }
        } else {
            p.port_id = static_cast<int>(get_uint(*id, fld::port_id));
            const auto [it, inserted] = by_id.emplace(p.port_id, k.key);
            if (!inserted) {
                fail(mark_of(*id), id->path,
                     "port id " + std::to_string(p.port_id) + " is already used by port " + it->second);
            }
        }
        read(f, fld::speed, p.speed);
        read(f, fld::mtu, p.mtu);
        read(f, fld::mac, p.mac);
        if (const auto* e = find(f, fld::trust)) {
            p.trust = get_choice(*e, fld::trust) == "dscp" ? trust_mode::dscp : trust_mode::pcp;
        }
        if (const auto* e = find(f, fld::vlan_mode)) {
            p.vlan = get_choice(*e, fld::vlan_mode) == "tagged" ? vlan_mode::tagged : vlan_mode::untagged;
        }
        if (const auto* e = find(f, fld::vlan)) {
            if (p.vlan != vlan_mode::tagged) {
                fail(e->key_node.Mark(), e->path, "a VLAN id is only used with vlan_mode: tagged");
            }
            p.vlan_id = static_cast<std::uint16_t>(get_uint(*e, fld::vlan));
        } else if (p.vlan == vlan_mode::tagged) {
            fail(k.key_node.Mark(), path,
                 "vlan_mode: tagged needs a VLAN id: vlan: " + range_text(fld::vlan));
        }
        read(f, fld::tx_ring_size, p.tx_ring_size);
        if (const auto* e = find(f, fld::lanes)) {
            p.lanes = fld::parse_lanes(get_text(*e, fld::lanes));
            if (p.lanes.empty() || p.lanes.size() > 16) {
                fail_value(*e, std::string(fld::lanes.noun) + " (1 to 16 lanes, each 0..99999)");
            }
            for (const std::uint32_t l : p.lanes) {
                const auto [it, inserted] = by_lane.emplace(l, k.key);
                if (!inserted) {
                    fail(mark_of(*e), e->path,
                         "lane " + std::to_string(l) + " is already used by port " + it->second +
                             (it->second == k.key ? " (listed twice)" : ""));
                }
            }
        }
        const std::uint32_t l2_header = p.vlan == vlan_mode::tagged ? 18 : 14;
        if (p.mtu + l2_header > _cfg.max_frame) {
            const auto* e = find(f, fld::mtu);
            fail(e != nullptr ? mark_of(*e) : k.key_node.Mark(), path + "|mtu",
                 "mtu " + std::to_string(p.mtu) + " plus the " + std::to_string(l2_header) +
                     "-byte Ethernet header exceeds ROCELAB|max_frame " + std::to_string(_cfg.max_frame) +
                     "B; lower the mtu or raise max_frame");
        }
        _cfg.ports.push_back(std::move(p));
    }
}

}  // namespace rocelab::detail
