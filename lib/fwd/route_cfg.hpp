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

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/eth.hpp"

namespace rocelab {

struct ip_prefix {
    bool v6 = false;
    std::array<std::uint8_t, 16> addr{};  // v4 in the first 4 bytes, network order
    std::uint8_t len = 0;
};

// The prefix with its host bits zeroed.
inline ip_prefix network_of(const ip_prefix& p) noexcept {
    ip_prefix n = p;
    const unsigned width = p.v6 ? 16 : 4;
    for (unsigned i = 0; i < width; ++i) {
        const int bits = std::clamp(static_cast<int>(p.len) - static_cast<int>(i * 8), 0, 8);
        const std::uint8_t mask = bits == 0 ? 0 : static_cast<std::uint8_t>(0xFFu << (8 - bits));
        n.addr[i] = static_cast<std::uint8_t>(n.addr[i] & mask);
    }
    return n;
}

// Is host's address inside the prefix net (same family)? host's len is ignored.
inline bool contains(const ip_prefix& net, const ip_prefix& host) noexcept {
    if (net.v6 != host.v6) {
        return false;
    }
    ip_prefix h = host;
    h.len = net.len;
    return network_of(h).addr == network_of(net).addr;
}

// "10.0.0.1/31", "fc00::1/126"; the address alone with with_len false.
inline std::string to_string(const ip_prefix& p, bool with_len = true) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(p.v6 ? AF_INET6 : AF_INET, p.addr.data(), buf, sizeof buf);
    std::string s = buf;
    if (with_len) {
        s += '/';  // (not "/" + ...: GCC 12's -Wrestrict false positive, PR 105329)
        s += std::to_string(p.len);
    }
    return s;
}

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
