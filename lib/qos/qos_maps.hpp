// qos_maps.hpp - classification maps (SONiC DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP,
// TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE).
//
// A port trusts either the IP DSCP or the 802.1p PCP. classify() turns the
// frame's marking into a traffic class (0..7); the TC then selects the egress
// queue and the ingress priority group.
//
// Built-in profile: SONiC "AZURE" (qos_config.j2) with two RoCE deviations,
// documented in docs/qos-defaults.md:
//   1. DSCP 26 -> TC 3 as well as DSCP 3 (NVIDIA/Cumulus RoCE marking);
//   2. queue 6 (CNP, DSCP 48) is strict priority (see scheduler defaults).
#pragma once

#include <array>
#include <cstdint>

namespace rocelab {

inline constexpr int num_tcs = 8;
inline constexpr int num_queues = 8;
inline constexpr int num_pgs = 8;

enum class trust_mode : std::uint8_t { dscp, pcp };

struct qos_maps {
    std::array<std::uint8_t, 64> dscp_to_tc{};
    std::array<std::uint8_t, 8> pcp_to_tc{};
    std::array<std::uint8_t, 8> tc_to_queue{};
    std::array<std::uint8_t, 8> tc_to_pg{};
    std::array<std::uint8_t, 8> pfc_prio_to_queue{};
    // TC used for a frame that carries no field the port trusts (non-IP on a
    // DSCP port, untagged on a PCP port).
    std::uint8_t default_tc = 0;

    // Resolve the traffic class. `dscp` < 0 means "not IP"; `pcp` < 0 "untagged".
    constexpr std::uint8_t classify(trust_mode t, int dscp, int pcp) const noexcept {
        if (t == trust_mode::dscp) {
            return dscp >= 0 ? dscp_to_tc[static_cast<unsigned>(dscp) & 63u] : default_tc;
        }
        return pcp >= 0 ? pcp_to_tc[static_cast<unsigned>(pcp) & 7u] : default_tc;
    }
};

// SONiC AZURE maps plus the two RoCE deviations above.
constexpr qos_maps azure_roce_maps() noexcept {
    qos_maps m{};
    for (auto& tc : m.dscp_to_tc) { tc = 1; }
    m.dscp_to_tc[3] = 3;
    m.dscp_to_tc[4] = 4;
    m.dscp_to_tc[5] = 2;
    m.dscp_to_tc[8] = 0;
    m.dscp_to_tc[46] = 5;
    m.dscp_to_tc[48] = 6;
    m.dscp_to_tc[26] = 3;  // deviation 1: RoCE on DSCP 26 is lossless too
    for (int i = 0; i < 8; ++i) {
        m.pcp_to_tc[i] = static_cast<std::uint8_t>(i);
        m.tc_to_queue[i] = static_cast<std::uint8_t>(i);
        m.pfc_prio_to_queue[i] = static_cast<std::uint8_t>(i);
        m.tc_to_pg[i] = 0;
    }
    m.tc_to_pg[3] = 3;
    m.tc_to_pg[4] = 4;
    m.tc_to_pg[7] = 7;
    m.default_tc = 0;
    return m;
}

}  // namespace rocelab
