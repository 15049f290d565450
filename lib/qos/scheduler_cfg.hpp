// scheduler_cfg.hpp - per-port egress scheduling configuration (SONiC SCHEDULER).
#pragma once

#include <array>
#include <cstdint>

#include "core/units.hpp"

namespace rocelab {

enum class sched_type : std::uint8_t { strict, dwrr };

struct queue_sched {
    sched_type type = sched_type::dwrr;
    std::uint32_t weight = 1;  // 1..100, DWRR only
};

struct queue_limits {
    bytes max_bytes{1024 * 1024};    // tail drop above this many queued bytes
    std::uint32_t max_packets = 1024;  // ... or this many queued packets
};

struct scheduler_cfg {
    std::array<queue_sched, 8> queues{};
    // DWRR quantum for weight 1, in bytes. A queue of weight w gets w*quantum
    // bytes of credit per round. Default: one 9216 B jumbo frame / 8.
    bytes quantum{1152};
};

// Default egress scheduling: SONiC AZURE (scheduler.0 DWRR 14 on queues
// 0,1,2,5,6; scheduler.1 DWRR 15 on queues 3,4) with queue 6 strict
// (RoCE deviation 2: CNPs must never wait behind data). Queue 7 is DWRR 14.
constexpr scheduler_cfg azure_roce_scheduler() noexcept {
    scheduler_cfg s{};
    for (auto& q : s.queues) { q = {sched_type::dwrr, 14}; }
    s.queues[3] = {sched_type::dwrr, 15};
    s.queues[4] = {sched_type::dwrr, 15};
    s.queues[6] = {sched_type::strict, 0};
    return s;
}

}  // namespace rocelab
