// egress_queues.hpp - the 8 egress queues of one port, with tail drop.
//
// What: 8 FIFO queues (ring buffers, no allocation) of items T (rte_mbuf* in
// the switch, anything in tests), each item stored together with its frame
// length so byte accounting never touches the packet. A queue tail-drops an
// arriving item when admitting it would exceed its queue_limits
// (max_bytes or max_packets) or the ring is full.
//
// Parameters:
//   T      item type (pointer-like, trivially copyable).
//          Storage is one array; indices are free-running 32-bit counters
//          masked by Depth-1 and rewound to 0 whenever a queue empties.
//   Depth  ring capacity per queue (power of two). Effective packet limit is
//          min(limits.max_packets, Depth).
//   limits per-queue queue_limits (scheduler_cfg.hpp), settable at run time
//          from the control path with set_limits().
//
// Hot state (read per packet by the scheduler): the `nonempty` bitmap (bit q
// set = queue q holds at least one item) and per-queue queued bytes.
// Cold state: egress_queue_stats per queue, in a separate cache-aligned
// struct read by telemetry:
//   enq_packets/enq_bytes         admitted
//   deq_packets/deq_bytes         dequeued for transmission
//   drop_tail_packets/bytes       refused by enqueue() (limit or ring full)
//   drop_flush_packets/bytes      discarded by flush() (PFC watchdog)
//   depth_max_packets/bytes       high-water marks since reset_stats()
//
// Example:
//   egress_queues<rte_mbuf*, 1024> eq{limits};
//   if (!eq.enqueue(tc_to_queue[tc], m, m->pkt_len)) { rte_pktmbuf_free(m); }
//   int q = sched.pick(eq.nonempty_mask() & ~paused, [&](int i) { return eq.head_len(i); });
//   auto [m, len, tag] = eq.dequeue(q);  sched.charge(q, len);
//
// Config example (YAML, parsed elsewhere):
//   queues: { 3: { max_bytes: 512KiB, max_packets: 1024 } }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/units.hpp"
#include "qos/scheduler_cfg.hpp"

namespace rocelab {

struct egress_queue_stats {
    std::uint64_t enq_packets = 0;
    std::uint64_t enq_bytes = 0;
    std::uint64_t deq_packets = 0;
    std::uint64_t deq_bytes = 0;
    std::uint64_t drop_tail_packets = 0;
    std::uint64_t drop_tail_bytes = 0;
    std::uint64_t drop_flush_packets = 0;
    std::uint64_t drop_flush_bytes = 0;
    std::uint64_t depth_max_bytes = 0;
    std::uint64_t depth_max_packets = 0;
};

struct alignas(64) egress_port_stats {
    std::array<egress_queue_stats, 8> q{};
};

template <typename T, std::size_t Depth>
class egress_queues {
    static_assert(Depth >= 2 && (Depth & (Depth - 1)) == 0, "egress queue depth must be a power of two");

public:
    static constexpr int num_queues = 8;

    struct entry {
        T item{};
        std::uint32_t len = 0;
        std::uint32_t tag = 0;  // caller's 32 bits carried with the item (fits the padding after a pointer)
    };

    egress_queues() noexcept { set_limits(queue_limits{}); }
    explicit egress_queues(const std::array<queue_limits, 8>& limits) noexcept {
        for (int q = 0; q < num_queues; ++q) {
            set_limits(q, limits[q]);
        }
    }

    // Control path: change the limits of one queue / all queues. Items already
    // queued above a lowered limit stay; only new arrivals are refused.
    void set_limits(int q, const queue_limits& l) noexcept {
        _max_bytes[q] = l.max_bytes.v;
        _max_packets[q] = l.max_packets < Depth ? l.max_packets : static_cast<std::uint32_t>(Depth);
    }
    void set_limits(const queue_limits& l) noexcept {
        for (int q = 0; q < num_queues; ++q) {
            set_limits(q, l);
        }
    }

    // Admit `item` of `len` bytes to queue q (0..7). Returns false when the
    // item is tail dropped (counted); the caller then frees it.
    bool enqueue(int q, T item, std::uint32_t len, std::uint32_t tag = 0) noexcept {
        const std::uint64_t nb = _bytes[q] + len;
        const std::uint32_t np = _tail[q] - _head[q] + 1;
        auto& st = _stats.q[q];
        if (nb > _max_bytes[q] || np > _max_packets[q]) {
            ++st.drop_tail_packets;
            st.drop_tail_bytes += len;
            return false;
        }
        slot(q, _tail[q]) = entry{item, len, tag};  // fits: np <= _max_packets <= Depth
        ++_tail[q];
        _bytes[q] = nb;
        _nonempty |= static_cast<std::uint8_t>(1u << q);
        ++st.enq_packets;
        st.enq_bytes += len;
        if (nb > st.depth_max_bytes) {
            st.depth_max_bytes = nb;
        }
        if (np > st.depth_max_packets) {
            st.depth_max_packets = np;
        }
        return true;
    }

    // Remove the head of queue q. Precondition: queue q is non-empty
    // (its bit is set in nonempty_mask()).
    entry dequeue(int q) noexcept {
        const entry e = slot(q, _head[q]);
        ++_head[q];
        _bytes[q] -= e.len;
        if (_head[q] == _tail[q]) {
            // Empty: restart at slot 0, so a queue that drains every poll
            // keeps reusing the same few (hot) cache lines.
            _head[q] = 0;
            _tail[q] = 0;
            _nonempty &= static_cast<std::uint8_t>(~(1u << q));
        }
        auto& st = _stats.q[q];
        ++st.deq_packets;
        st.deq_bytes += e.len;
        return e;
    }

    // Length of the head item of queue q, 0 when empty.
    std::uint32_t head_len(int q) const noexcept { return empty(q) ? 0 : slot(q, _head[q]).len; }
    const T& head(int q) const noexcept { return slot(q, _head[q]).item; }

    bytes depth_bytes(int q) const noexcept { return bytes{_bytes[q]}; }
    std::uint32_t depth_packets(int q) const noexcept { return _tail[q] - _head[q]; }
    std::uint8_t nonempty_mask() const noexcept { return _nonempty; }
    bool empty(int q) const noexcept { return (_nonempty >> q & 1u) == 0; }

    // Discard everything queued in q, calling on_item(const entry&) for each
    // (to free it). Counted as drop_flush. Returns items dropped.
    template <typename Fn>
    std::uint32_t flush(int q, Fn&& on_item) noexcept(noexcept(on_item(entry{}))) {
        auto& st = _stats.q[q];
        std::uint32_t n = 0;
        while (_head[q] != _tail[q]) {
            const entry e = slot(q, _head[q]);
            ++_head[q];
            ++st.drop_flush_packets;
            st.drop_flush_bytes += e.len;
            on_item(e);
            ++n;
        }
        _head[q] = 0;
        _tail[q] = 0;
        _bytes[q] = 0;
        _nonempty &= static_cast<std::uint8_t>(~(1u << q));
        return n;
    }

    const egress_port_stats& stats() const noexcept { return _stats; }
    const egress_queue_stats& stats(int q) const noexcept { return _stats.q[q]; }
    void reset_stats() noexcept { _stats = egress_port_stats{}; }

private:
    // Queue q's slots start at q * stride; head/tail are free-running
    // counters (tail - head <= Depth) masked to a slot.
    // The extra 4 entries (64 bytes) per queue stagger the queues' first
    // slots over different cache sets: with a power-of-two stride the hot
    // first slots of all 8 queues (and of every port) alias one L1 set.
    static constexpr std::size_t stride = Depth + 4;
    entry& slot(int q, std::uint32_t i) noexcept { return _slots[q * stride + (i & (Depth - 1))]; }
    const entry& slot(int q, std::uint32_t i) const noexcept { return _slots[q * stride + (i & (Depth - 1))]; }

    // hot: the bitmap, ring indices, byte depths and limits (3 cache lines)
    std::uint8_t _nonempty = 0;
    std::array<std::uint32_t, 8> _head{};
    std::array<std::uint32_t, 8> _tail{};
    std::array<std::uint32_t, 8> _max_packets{};
    std::array<std::uint64_t, 8> _bytes{};
    std::array<std::uint64_t, 8> _max_bytes{};
    // cold
    egress_port_stats _stats{};
    std::array<entry, 8 * stride> _slots{};
};

}  // namespace rocelab
