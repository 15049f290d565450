// counters.hpp - rocelab-switch counters: per port, per queue, per drop reason.
//
// Counters are plain uint64_t, one set per port for each worker lcore, written
// only by that worker (no atomics, no sharing); readers sum the workers
// (switch_pipeline::counters()). Readers on other threads (telemetry, status
// line, report) use read_counter(), a relaxed atomic load, which on x86-64 is a
// plain mov and never tears an aligned 64-bit value. This is the same model
// DPDK's software PMDs use for their stats.
//
// Every drop has a named reason; every malformed frame is also counted by its
// parse_status name (see proto/parse.hpp).
#pragma once

#include "core/counter.hpp"
#include <array>
#include <cstdint>

#include "proto/parse.hpp"

namespace rocelab::sw {

enum class drop_reason : std::uint8_t {
    malformed,          // parser rejected the frame (see malformed[] for which check)
    oversize,           // frame longer than max_frame
    segmented_header,   // multi-segment frame whose headers do not fit the first segment
    link_local,         // 01:80:C2:00:00:0x other than MAC Control: never forwarded
    vlan_mismatch,      // tagged frame on an untagged port, or wrong VID on a tagged port
    same_port,          // L2: destination learned on the ingress port (filtered)
    not_router_mac,     // L3: unicast frame not addressed to the switch
    to_switch,          // L3: addressed to one of our IPs but not ARP/ND or an ICMP echo request (no IP stack)
    no_route,           // L3: LPM miss
    no_neighbor,        // L3: host or next hop without a NEIGH entry, dynamic neighbours off
    ttl_expired,        // L3: TTL / hop limit <= 1
    l3_not_ip,          // L3: unicast to the router MAC that is neither IP nor ARP
    tail_drop,          // egress queue full (bytes or packets); per queue in queue stats
    flood_nombuf,       // L2 flood copy could not get an mbuf
    pfc_disabled_prio,  // PFC frame only for priorities not enabled (counted, consumed)
    lossy_pg_limit,     // ingress buffer: a lossy PG reached its shared threshold (or the pool is full)
    headroom_overflow,  // ingress buffer: a lossless PG's headroom overflowed (misconfiguration!)
    pfcwd,              // PFC watchdog (action drop): frames to or in a stormed queue
    wred,               // WRED_PROFILE drop (Not-ECT frame, or ECN off, with wred_green_enable); per queue too
    flood_no_port,      // L2: a frame to flood, and no port but the ingress one (a one-port bridge)
    mac_control_other,  // MAC Control (0x8808) not addressed to this port (never relayed, 802.3 clause 31)
    link_down,          // egress link down: frames queued when it went down, and frames to it while down
    neigh_queue_full,   // L3: frame for a neighbour being resolved (ARP/ND) whose wait queue is full
    neigh_unresolved,   // L3: frame that waited for a neighbour that never answered (or at shutdown)
    neigh_table_full,   // L3: frame for a new neighbour and the neighbour table is full
    handoff_full,       // several workers: the queue to the egress port's worker was full (lossy frames
                        // only: lossless ones wait, charged, in a stash linked through the frames)
    rss_no_credit,      // RSS: a frame the switch made from one received on another worker's port
                        // (an ICMP error) found too little credit for that port's PG
    count
};

constexpr const char* drop_reason_name(drop_reason r) noexcept {
    switch (r) {
        case drop_reason::malformed: return "drop_malformed";
        case drop_reason::oversize: return "drop_oversize";
        case drop_reason::segmented_header: return "drop_segmented_header";
        case drop_reason::link_local: return "drop_link_local";
        case drop_reason::vlan_mismatch: return "drop_vlan_mismatch";
        case drop_reason::same_port: return "drop_same_port";
        case drop_reason::not_router_mac: return "drop_not_router_mac";
        case drop_reason::to_switch: return "drop_to_switch";
        case drop_reason::no_route: return "drop_no_route";
        case drop_reason::no_neighbor: return "drop_no_neighbor";
        case drop_reason::ttl_expired: return "drop_ttl_expired";
        case drop_reason::l3_not_ip: return "drop_l3_not_ip";
        case drop_reason::tail_drop: return "drop_tail";
        case drop_reason::flood_nombuf: return "drop_flood_nombuf";
        case drop_reason::pfc_disabled_prio: return "rx_pfc_disabled_prio";
        case drop_reason::lossy_pg_limit: return "drop_lossy_pg_limit";
        case drop_reason::headroom_overflow: return "drop_headroom_overflow";
        case drop_reason::pfcwd: return "drop_pfcwd";
        case drop_reason::wred: return "drop_wred";
        case drop_reason::flood_no_port: return "drop_flood_no_port";
        case drop_reason::mac_control_other: return "drop_mac_control_other";
        case drop_reason::link_down: return "drop_link_down";
        case drop_reason::neigh_queue_full: return "drop_neigh_queue_full";
        case drop_reason::neigh_unresolved: return "drop_neigh_unresolved";
        case drop_reason::neigh_table_full: return "drop_neigh_table_full";
        case drop_reason::handoff_full: return "drop_handoff_full";
        case drop_reason::rss_no_credit: return "drop_rss_no_credit";
        case drop_reason::count: break;
    }
    return "?";
}
inline constexpr std::size_t drop_reason_count = static_cast<std::size_t>(drop_reason::count);

// A port's counters (each worker counts its own; readers sum the workers).
// The scalar ones are one list for the struct and for the reports that list
// them all, in that order (runtime::put_port_counters: the JSON report's
// ports and /rocelab/port; core/counter.hpp):
//   rx_mac_control      consumed MAC Control frames (PFC + PAUSE + other)
//   flood_copies        extra copies made to flood
//   icmp_errors         L3: ICMP/ICMPv6 errors sent (time exceeded, unreachable)
//   icmp_ratelimited    ... not sent: over ROCELAB icmp_rate
//   icmp_echo_replies   L3: pings to one of our addresses answered
//   arp_requests        L3: ARP requests sent on this port (neighbour resolution)
//   nd_solicits         L3: Neighbor Solicitations sent on this port
//   neigh_learned       L3: ARP/ND received here that set a neighbour's MAC
//   neigh_consumed      ... of which ARP replies / NAs / announcements taken in (no reply made)
//   neigh_held          L3: frames received here that waited for a neighbour
//   neigh_released      ... and were forwarded once it answered
//   tx_behind           polls where the shaper allowed more than the lcore sent
//   tx_ring_full        tx_burst accepted fewer than offered (retried)
//   tx_flushed          taken off a queue for TX, still staged (refused) at shutdown or link down: freed
//   wred_lossless_kept  WRED drop decisions not carried out: the frame was admitted to a lossless PG
//                       (a lossless frame leaves only by TX, link down or watchdog)
// clang-format off
#define ROCELAB_SW_PORT_COUNTERS(X)                                                           \
    X(rx_packets) X(rx_bytes) X(tx_packets) X(tx_bytes)                                       \
    X(rx_mac_control) X(rx_pfc) X(rx_pause) X(flood_copies) X(arp_replies) X(nd_replies)     \
    X(icmp_errors) X(icmp_ratelimited) X(icmp_echo_replies) X(arp_requests) X(nd_solicits)   \
    X(neigh_learned) X(neigh_consumed) X(neigh_held) X(neigh_released)                       \
    X(tx_behind) X(tx_ring_full) X(tx_flushed) X(wred_lossless_kept)
// clang-format on
struct alignas(64) port_counters {
    ROCELAB_SW_PORT_COUNTERS(ROCELAB_COUNTER64)
    counter64 tx_pfc_frames = 0;  // PFC/PAUSE frames sent upstream (reported on its own)
    std::array<counter64, drop_reason_count> drops{};
    std::array<counter64, parse_status_count> malformed{};
    std::array<counter64, 8> rx_pfc_prio{};   // PFC frames received per priority (enable bit set)
    std::array<counter64, 8> paused_ns{};     // time each priority spent paused (PFC reaction)
    std::array<counter64, 8> ecn_marked{};    // per egress queue: ECT frames marked CE (WRED_PROFILE ecn)
    std::array<counter64, 8> wred_dropped{};  // per egress queue: WRED drops (also in drops[wred])

    void drop(drop_reason r) noexcept { ++drops[static_cast<std::size_t>(r)]; }
};

using rocelab::read_counter;  // core/counter.hpp

}  // namespace rocelab::sw
