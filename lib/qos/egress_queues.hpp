// egress_queues.hpp - the 8 egress queues of one port, linked through the frames.
//
// What: 8 FIFO queues of items T (rte_mbuf* in the switch, test nodes in
// unit tests). A queue is a singly linked list threaded through the items
// themselves, as an ASIC links the cells of a queued packet: each item
// carries a small node (next item, length, the caller's 32-bit tag), so a
// queue holds whatever its items' memory holds. There is no ring of slots
// to run out of: the only limits are the queue's own queue_limits and,
// above them, the buffer model that admitted the frame (the MMU). A lossless
// queue (limits lifted by the switch) therefore never tail-drops; it is
// bounded by the ingress PG's XOFF and headroom alone.
//
// Parameters:
//   T      item type (pointer-like, trivially copyable; T{} is "none").
//   Link   how to reach an item's node: `queue_link<T>& Link::node(T)`.
//          A stateful policy (the switch's holds the mbuf dynamic-field
//          offset); copied into the queues once.
//   limits per-queue queue_limits (scheduler_cfg.hpp), settable at run time
//          from the control path with set_limits().
//
// An item is in at most one queue at a time (its node is written at
// enqueue and read at dequeue/flush). The caller keeps it alive while it is
// queued.
//
// Hot state (read per packet by the scheduler): the `nonempty` bitmap (bit q
// set = queue q holds at least one item), head/tail per queue, queued bytes
// and packets. Cold state: egress_queue_stats per queue, in a separate
// cache-aligned struct read by telemetry:
//   enq_packets/enq_bytes         admitted
//   deq_packets/deq_bytes         dequeued for transmission
//   drop_tail_packets/bytes       refused by enqueue() (max_bytes / max_packets)
//   drop_flush_packets/bytes      discarded by flush() (PFC watchdog, link down)
//   depth_max_packets/bytes       high-water marks since reset_stats()
//
// Example:
//   egress_queues<rte_mbuf*, mbuf_link> eq{limits, mbuf_link{offset}};
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

#include "core/counter.hpp"
#include "core/units.hpp"
#include "qos/scheduler_cfg.hpp"

namespace rocelab {

// clang-format off
#define ROCELAB_EGRESS_QUEUE_COUNTERS(X) \
    X(enq_packets) X(enq_bytes) X(deq_packets) X(deq_bytes) X(drop_tail_packets) X(drop_tail_bytes) \
    X(drop_flush_packets) X(drop_flush_bytes) X(depth_max_bytes) X(depth_max_packets)
// clang-format on
struct egress_queue_stats {
    ROCELAB_EGRESS_QUEUE_COUNTERS(ROCELAB_COUNTER64)
};

struct alignas(64) egress_port_stats {
    std::array<egress_queue_stats, 8> q{};
};

// The node an item carries while it is queued (16 bytes for a pointer T).
template <typename T>
struct queue_link {
    T next{};
    std::uint32_t len = 0;
    std::uint32_t tag = 0;
};

// Link policy for items that are pointers to a struct with a `link` member
// (tests, benchmarks).
struct member_link {
    template <typename P>
    auto& node(P p) const noexcept {
        return p->link;
    }
};

template <typename T, typename Link>
class egress_queues {
public:
    static constexpr int num_queues = 8;

    struct entry {
        T item{};
        std::uint32_t len = 0;
        std::uint32_t tag = 0;  // caller's 32 bits carried with the item
    };

    explicit egress_queues(Link link = Link{}) noexcept : _link(link) { set_limits(queue_limits{}); }
    egress_queues(const std::array<queue_limits, 8>& limits, Link link = Link{}) noexcept : _link(link) {
        for (int q = 0; q < num_queues; ++q) {
            set_limits(q, limits[q]);
        }
    }

    // Control path: change the limits of one queue / all queues. Items already
    // queued above a lowered limit stay; only new arrivals are refused.
    void set_limits(int q, const queue_limits& l) noexcept {
        _max_bytes[q] = l.max_bytes.v;
        _max_packets[q] = l.max_packets;
    }
    void set_limits(const queue_limits& l) noexcept {
        for (int q = 0; q < num_queues; ++q) {
            set_limits(q, l);
        }
    }

    // Admit `item` of `len` bytes to queue q (0..7). Returns false when the
    // item is tail dropped (counted); the caller then frees it.
    [[gnu::always_inline]] bool enqueue(int q, T item, std::uint32_t len, std::uint32_t tag = 0) noexcept {
        const std::uint64_t nb = _bytes[q] + len;
        const std::uint32_t np = _packets[q] + 1;
        auto& st = _stats.q[q];
        if (nb > _max_bytes[q] || np > _max_packets[q]) {
            ++st.drop_tail_packets;
            st.drop_tail_bytes += len;
            return false;
        }
        auto& n = _link.node(item);
        n.next = T{};
        n.len = len;
        n.tag = tag;
        if (np == 1) {
            _head[q] = item;
        } else {
            _link.node(_tail[q]).next = item;
        }
        _tail[q] = item;
        _packets[q] = np;
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
        const T item = _head[q];
        const auto& n = _link.node(item);
        const entry e{item, n.len, n.tag};
        _head[q] = n.next;
        // The next head's node is read by the scheduler's next pick
        // (head_len): in a deep queue it was written long ago and is cold.
        // Fetch it now, while this frame goes out (perf: that one load was
        // 57-73 % of the switch's drain in an 8:1 incast in virtual time).
        if (n.next != T{}) { __builtin_prefetch(&_link.node(n.next), 0, 3); }
        _bytes[q] -= e.len;
        if (--_packets[q] == 0) {
            _tail[q] = T{};
            _nonempty &= static_cast<std::uint8_t>(~(1u << q));
        }
        auto& st = _stats.q[q];
        ++st.deq_packets;
        st.deq_bytes += e.len;
        return e;
    }

    // A run of dequeues from q, exactly as this loop of dequeue() calls:
    //   do { e = dequeue(q); if (on_item(e.item, e.len, e.tag, depth_bytes(q))) ++kept; }
    //   while (kept < max && !empty(q) && more(head_len(q)));
    // (the head is always taken: precondition q non-empty). on_item may free
    // the item (its node is read before). The queue's depth, list ends and
    // statistics are written once for the run instead of per item (drain's
    // per-frame bookkeeping at 74 B). Returns the items and bytes dequeued.
    struct run_result {
        std::uint32_t items = 0;
        std::uint64_t bytes = 0;
    };
    template <typename More, typename OnItem>
    [[gnu::always_inline]] run_result dequeue_run(int q, std::uint32_t max, More&& more, OnItem&& on_item) noexcept {
        T item = _head[q];
        const std::uint32_t avail = _packets[q];
        const std::uint64_t before = _bytes[q];
        std::uint64_t depth = before;
        std::uint32_t k = 0;
        std::uint32_t kept = 0;
        for (;;) {
            const auto& n = _link.node(item);
            const T next = n.next;
            const std::uint32_t len = n.len;
            const std::uint32_t tag = n.tag;
            if (next != T{}) { __builtin_prefetch(&_link.node(next), 0, 3); }  // as dequeue()
            depth -= len;
            ++k;
            kept += on_item(item, len, tag, depth) ? 1u : 0u;
            item = next;
            if (kept >= max || k == avail || !more(_link.node(item).len)) { break; }
        }
        _head[q] = item;
        _bytes[q] = depth;
        _packets[q] = avail - k;
        if (k == avail) {
            _tail[q] = T{};
            _nonempty &= static_cast<std::uint8_t>(~(1u << q));
        }
        auto& st = _stats.q[q];
        st.deq_packets += k;
        st.deq_bytes += before - depth;
        return {k, before - depth};
    }

    // Length of the head item of queue q, 0 when empty.
    std::uint32_t head_len(int q) const noexcept { return empty(q) ? 0 : _link.node(_head[q]).len; }
    const T& head(int q) const noexcept { return _head[q]; }

    // The depth, in the owning worker's thread only (plain fields: relaxed
    // atomic stores of them cost 25 % in bm_egress_burst32).
    bytes depth_bytes(int q) const noexcept { return bytes{_bytes[q]}; }
    std::uint32_t depth_packets(int q) const noexcept { return _packets[q]; }

    // The depth as any thread may read it while the owner runs (status line,
    // telemetry, queue samples): from the statistics counters, which are
    // relaxed atomics (counter64) and cost nothing more. Equal to
    // depth_bytes()/depth_packets() in the owner's thread; from another, the
    // depth at some moment during the read, or a little more (what left the
    // queue is read before what entered it; relaxed loads may still be
    // reordered, so a reading that would be negative is 0).
    struct depth_reading {
        bytes b{};
        std::uint32_t packets = 0;
    };
    depth_reading observed_depth(int q) const noexcept {
        const auto& st = _stats.q[q];
        const std::uint64_t out_b = st.deq_bytes.load() + st.drop_flush_bytes.load();
        const std::uint64_t out_p = st.deq_packets.load() + st.drop_flush_packets.load();
        const std::uint64_t in_b = st.enq_bytes.load();
        const std::uint64_t in_p = st.enq_packets.load();
        return {bytes{in_b > out_b ? in_b - out_b : 0}, static_cast<std::uint32_t>(in_p > out_p ? in_p - out_p : 0)};
    }
    std::uint8_t nonempty_mask() const noexcept { return _nonempty; }
    bool empty(int q) const noexcept { return (_nonempty >> q & 1u) == 0; }

    // Discard everything queued in q, calling on_item(const entry&) for each
    // (to free it). Counted as drop_flush. Returns items dropped.
    template <typename Fn>
    std::uint32_t flush(int q, Fn&& on_item) noexcept(noexcept(on_item(entry{}))) {
        auto& st = _stats.q[q];
        std::uint32_t n = 0;
        while (_packets[q] != 0) {
            const T item = _head[q];
            const auto& nd = _link.node(item);
            const entry e{item, nd.len, nd.tag};
            _head[q] = nd.next;  // read before on_item frees the item
            --_packets[q];
            ++st.drop_flush_packets;
            st.drop_flush_bytes += e.len;
            on_item(e);
            ++n;
        }
        _head[q] = T{};
        _tail[q] = T{};
        _bytes[q] = 0;
        _nonempty &= static_cast<std::uint8_t>(~(1u << q));
        return n;
    }

    const egress_port_stats& stats() const noexcept { return _stats; }
    const egress_queue_stats& stats(int q) const noexcept { return _stats.q[q]; }
    // Counters back to zero; what is queued at the reset counts as enqueued
    // (and as the high-water mark), so observed_depth() stays exact.
    // Each counter is stored (relaxed), never copied over: a reader may be
    // loading it (counter64 has no copy assignment).
    void reset_stats() noexcept {
        for (int q = 0; q < num_queues; ++q) {
            auto& st = _stats.q[q];
#define ROCELAB_EQ_ZERO(name) st.name = 0u;
            ROCELAB_EGRESS_QUEUE_COUNTERS(ROCELAB_EQ_ZERO)
#undef ROCELAB_EQ_ZERO
            // The frames still queued count as enqueued since the reset, and as its high-water mark.
            st.enq_bytes = _bytes[q];
            st.depth_max_bytes = _bytes[q];
            st.enq_packets = _packets[q];
            st.depth_max_packets = _packets[q];
        }
    }

private:
    // hot: the bitmap, list ends, depths and limits
    std::uint8_t _nonempty = 0;
    Link _link{};
    std::array<T, 8> _head{};
    std::array<T, 8> _tail{};
    std::array<std::uint32_t, 8> _packets{};
    std::array<std::uint32_t, 8> _max_packets{};
    std::array<std::uint64_t, 8> _bytes{};
    std::array<std::uint64_t, 8> _max_bytes{};
    // cold
    egress_port_stats _stats{};
};

}  // namespace rocelab
