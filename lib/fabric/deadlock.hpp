// deadlock.hpp - finds PFC deadlocks in a fabric's egress queues: a cycle of
// lossless queues, each paused by the switch at the other end of its cable,
// which is holding that pause because its own ingress buffer is full of
// frames queued on the next paused queue of the cycle - and none of them
// sent anything over the last interval. Routes can all be loop-free and the
// buffers still wait on each other in a cycle (a cyclic buffer dependency):
// nothing moves again until something drops frames (the PFC watchdog) or a
// pause is lifted by hand.
//
// The runner (rocelab-fabric) hands the detector the state of every
// switch's lossless egress queues at each sample; the detector keeps the
// previous sample to see which queues are stuck:
//   stuck   = paused now and at the previous sample, not empty, and it sent
//             no frame in between;
//   u -> v  = u is stuck, the switch at the other end of u's cable holds
//             u's pause (one of its lossless ingress PGs on that port is in
//             XOFF), and v is a stuck queue of that switch.
// A cycle of such edges is a deadlock: recorded once, with the time it was
// confirmed, and cleared at the first sample where a queue on it is no
// longer stuck. The wait-for edge is per port, not per frame: the switch
// does not record which egress queue holds which ingress PG's bytes, so a
// stuck queue of the peer is taken as holding the paused port's frames.
// With one lossless class (the usual RoCE set-up) that is what happens.
//
// Pure C++ (no DPDK, no fabric types): unit-tested with hand-made states.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace rocelab {

struct dl_queue_ref {
    std::uint32_t node = 0;  // the fabric's node index
    std::uint16_t port = 0;
    std::uint8_t queue = 0;
    auto operator<=>(const dl_queue_ref&) const = default;
};

inline constexpr std::uint32_t dl_no_node = UINT32_MAX;

// One lossless egress queue of a switch at a sample.
struct dl_queue_state {
    dl_queue_ref q;
    bool paused = false;             // its priority is paused by received PFC now
    std::uint64_t depth_bytes = 0;   // queued now
    std::uint64_t sent_packets = 0;  // dequeued so far (monotonic)
    std::uint32_t peer = dl_no_node; // the switch at the other end of the cable (dl_no_node: a host or none)
    bool peer_holds = false;         // that switch asserts XOFF on its end of this cable
};

struct dl_deadlock {
    nanos detected{0};  // the sample that confirmed it
    nanos cleared{-1};  // the first sample where a queue on it moved again; -1: it still holds
    std::vector<dl_queue_ref> cycle;  // in wait-for order, starting at the smallest reference
};

class deadlock_detector {
public:
    // One sample: every lossless egress queue of every switch (any order).
    void observe(nanos now, const std::vector<dl_queue_state>& queues);

    const std::vector<dl_deadlock>& found() const noexcept { return _found; }
    // Deadlocks found and not cleared.
    std::size_t open() const noexcept;
    // Indices in found() of the deadlocks the last observe() found or cleared.
    const std::vector<std::size_t>& new_found() const noexcept { return _new_found; }
    const std::vector<std::size_t>& new_cleared() const noexcept { return _new_cleared; }

private:
    struct prev_state {
        bool paused = false;
        std::uint64_t sent = 0;
    };
    std::map<dl_queue_ref, prev_state> _prev;
    std::vector<dl_deadlock> _found;
    std::vector<std::size_t> _new_found, _new_cleared;
};

// "s0:Ethernet1 q3 -> s1:Ethernet1 q3 -> s0:Ethernet1 q3": names from the caller.
template <typename Name>
std::string dl_cycle_text(const std::vector<dl_queue_ref>& cycle, Name&& port_name) {
    std::string s;
    for (std::size_t i = 0; i <= cycle.size() && !cycle.empty(); ++i) {
        const dl_queue_ref& r = cycle[i % cycle.size()];
        if (i != 0) { s += " -> "; }
        s += port_name(r.node, r.port) + " q" + std::to_string(r.queue);
    }
    return s;
}

}  // namespace rocelab
