// route_cfg.hpp - the routing part of the configuration: IP prefixes, static
// routes (ROUTE) and static neighbours (NEIGH).
//
// Plain structs, as lib/qos keeps its config structs (buffer_cfg.hpp): lib/config
// fills them from the YAML (config/switch_config.hpp) and fwd/route_table.hpp
// builds the routing table from them, so lib/fwd needs no lib/config.
//
// Config example (SONiC CONFIG_DB names)
//   ROUTE: { "0.0.0.0/0": { nexthop: "10.0.0.0,10.0.0.2", ifname: "Ethernet0,Ethernet4" } }
//   NEIGH: { "Ethernet0|10.0.0.0": { neigh: "52:54:00:00:00:10" } }
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fwd/wire.hpp"

namespace rocelab {

struct ip_prefix {
    bool v6 = false;
    std::array<std::uint8_t, 16> addr{};  // v4 in the first 4 bytes, network order
    std::uint8_t len = 0;
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

}  // namespace rocelab
