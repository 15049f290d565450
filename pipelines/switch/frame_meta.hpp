// frame_meta.hpp - what the switch keeps inside a frame while it holds it.
//
// Every container that holds a frame the buffer model admitted links the
// frame through this metadata, kept in the mbuf's dynamic field
// (dpdk/mbuf_meta.hpp): the egress queues (qos/egress_queues.hpp, through
// mbuf_link) and the per-worker-pair stash of lossless frames waiting for a
// full handoff queue (frame_fifo). None of them has slots to run out of: the
// buffer model (the MMU's pool, thresholds and headroom) is the only limit,
// as an ASIC's queues are linked lists of the cells its buffer holds
// (docs/architecture.md, "Lossless containers").
//
// Layout (24 bytes, aligned 8; DPDK's dynfield1 has room for it beside
// net_pcap's 8-byte timestamp):
//   q      egress queue / stash link: next frame, length (stash: aux), tag
//   port   stash: egress port         in    stash: ingress port
//   tc     stash: traffic class       kind  stash: handoff kind
//   flags  stash: handoff flags
#pragma once

#include <cstddef>
#include <cstdint>

#include "qos/egress_queues.hpp"

struct rte_mbuf;

namespace rocelab::sw {

struct frame_meta {
    queue_link<rte_mbuf*> q{};
    std::uint16_t port = 0;
    std::uint16_t in = 0;
    std::uint8_t tc = 0;
    std::uint8_t kind = 0;
    std::uint8_t flags = 0;
    std::uint8_t pad = 0;
};
static_assert(sizeof(frame_meta) == 24 && alignof(frame_meta) == 8);

// The frame_meta of an mbuf, at the registered dynamic-field offset.
struct mbuf_link {
    int off = 0;
    frame_meta& meta(rte_mbuf* m) const noexcept {
        return *reinterpret_cast<frame_meta*>(reinterpret_cast<std::byte*>(m) + off);
    }
    queue_link<rte_mbuf*>& node(rte_mbuf* m) const noexcept { return meta(m).q; }
};

// A FIFO of frames linked through their frame_meta: no capacity, one owner.
class frame_fifo {
public:
    bool empty() const noexcept { return _n == 0; }
    std::uint32_t size() const noexcept { return _n; }
    rte_mbuf* front() const noexcept { return _head; }
    // Append m; its meta (but the link) is the caller's to fill first.
    void push(const mbuf_link& l, rte_mbuf* m) noexcept {
        l.node(m).next = nullptr;
        if (_n == 0) {
            _head = m;
        } else {
            l.node(_tail).next = m;
        }
        _tail = m;
        ++_n;
    }
    // Forget the first k frames without reading their links: they have been
    // handed to another core, which may already be relinking or freeing them.
    // `next` is the frame after the k-th, read before they were handed over.
    void drop_front(std::uint32_t k, rte_mbuf* next) noexcept {
        _n -= k;
        _head = _n == 0 ? nullptr : next;
        if (_n == 0) { _tail = nullptr; }
    }
    rte_mbuf* pop(const mbuf_link& l) noexcept {
        rte_mbuf* m = _head;
        _head = l.node(m).next;
        if (--_n == 0) { _tail = nullptr; }
        return m;
    }

private:
    rte_mbuf* _head = nullptr;
    rte_mbuf* _tail = nullptr;
    std::uint32_t _n = 0;
};

// ---- what a queued frame's tag says about its ingress buffer charge ----
// Ingress buffer accounting: where a queued frame was charged (ingress
// port, PG) travels in the egress queue entry's tag; the charge itself is
// mmu::charge_for(len), recomputed at release from the entry's length.
constexpr std::uint32_t acct_tag(std::uint16_t in_port, std::uint8_t pg) noexcept {
    return std::uint32_t{in_port} | std::uint32_t{pg} << 16;
}
constexpr int tag_port(std::uint32_t tag) noexcept { return static_cast<int>(tag & 0xFFFFu); }
constexpr int tag_pg(std::uint32_t tag) noexcept { return static_cast<int>(tag >> 16 & 0xFFu); }
// A flood copy that carries no charge (the ingress PG is charged once per
// received frame, on the copy that keeps the original mbuf): nothing to
// release when it leaves. It still names its ingress (port, PG), so that a
// copy of a lossless frame is treated as lossless (never WRED-dropped, never
// dropped for a full handoff queue).
constexpr std::uint32_t tag_uncharged = 0x80000000u;
// A frame parked for neighbour resolution: not admitted (not charged) yet;
// admission happens when its neighbour resolves (docs/architecture.md,
// "Lossless containers"). tag_handed: the same, for a frame another worker
// handed over for resolution (already rewritten for its egress port).
constexpr std::uint32_t tag_none = 0x40000000u;
constexpr std::uint32_t tag_handed = tag_none | 0x20000000u;
// Made by the switch itself (ARP requests, Neighbor Solicitations): no ingress PG.
constexpr std::uint32_t tag_made = tag_uncharged | tag_none;
// Not a tag: the ingress buffer refused the frame (charge_ingress).
constexpr std::uint32_t tag_refused = 0xFFFFFFFFu;
constexpr bool tag_charged(std::uint32_t tag) noexcept { return (tag & (tag_uncharged | tag_none)) == 0; }

}  // namespace rocelab::sw
