// switch_cfg.hpp - the validated, immutable configuration of rocelab-switch.
//
// Produced by load_switch_cfg() (config/switch_config.hpp) from a YAML file
// that uses SONiC CONFIG_DB table and field names, or by default_switch_cfg()
// when no file is given. The data path only reads the finished structure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "qos/qos_maps.hpp"
#include "qos/scheduler_cfg.hpp"

namespace rocelab {

using mac_addr = std::array<std::uint8_t, 6>;

enum class fwd_mode : std::uint8_t { l2, l3 };
enum class vlan_mode : std::uint8_t { untagged, tagged };

struct ip_prefix {
    bool v6 = false;
    std::array<std::uint8_t, 16> addr{};  // v4 in the first 4 bytes, network order
    std::uint8_t len = 0;
};

struct port_cfg {
    std::string name;            // "Ethernet0"
    std::string device;          // DPDK device name ("net_ring0"); empty = use port_id
    int port_id = -1;            // DPDK port id; -1 = resolve from device
    std::optional<bits_per_sec> speed;  // none = take it from the driver
    std::uint32_t mtu = 9100;    // L3 MTU (IP packet), SONiC default 9100
    trust_mode trust = trust_mode::dscp;
    vlan_mode vlan = vlan_mode::untagged;
    std::uint16_t vlan_id = 0;   // tagged egress VID (and accepted ingress VID)
    std::optional<mac_addr> mac; // none = the device's MAC
    qos_maps maps = azure_roce_maps();          // resolved PORT_QOS_MAP
    scheduler_cfg sched = azure_roce_scheduler();  // resolved SCHEDULER per QUEUE
    std::array<queue_limits, 8> limits{};
    std::uint8_t pfc_enable = 0; // bit n = priority n (used by the PFC issue)
    std::vector<ip_prefix> addresses;  // INTERFACE "Ethernet0|10.0.0.1/31"
    std::optional<std::uint16_t> tx_ring_size;  // none = switch_cfg::tx_ring_size
};

struct nexthop_cfg {
    ip_prefix addr;         // /32 or /128
    std::string ifname;     // egress port name
};

struct route_cfg {
    ip_prefix prefix;
    std::vector<nexthop_cfg> nexthops;  // >1 = ECMP group
};

struct neigh_cfg {
    std::string ifname;
    ip_prefix addr;  // /32 or /128
    mac_addr mac{};
};

struct switch_cfg {
    std::string source;             // file path, or "<built-in defaults>"
    fwd_mode mode = fwd_mode::l2;
    std::optional<mac_addr> switch_mac;  // none = each port's own MAC
    nanos fdb_aging{300'000'000'000};    // 300s
    std::uint64_t seed = 1;
    std::vector<port_cfg> ports;    // empty = all probed ports with defaults
    // Settings for probed ports when `ports` is empty: AZURE maps and
    // scheduler, pfc_enable 3,4, plus any `global` PORT_QOS_MAP / QUEUE
    // entries. name is empty and port_id -1; see probed_port_cfg().
    port_cfg port_defaults{};
    std::vector<route_cfg> routes;
    std::vector<neigh_cfg> neighbors;
    nanos status_interval{1'000'000'000};
    nanos queue_sample_interval{1'000'000};  // queue-depth CSV sampling
    std::uint16_t tx_ring_size = 256;  // TX descriptors (keep shallow, see docs)
    std::uint16_t rx_ring_size = 1024;
    std::uint32_t mbufs = 16384;
    std::uint16_t mbuf_data_size = 2048 + 128;  // >= 9216+headroom enables jumbo via sized mbufs
    std::uint16_t burst = 32;
    std::uint32_t max_frame = 9216;  // larger frames are counted as oversize and dropped
};

}  // namespace rocelab
