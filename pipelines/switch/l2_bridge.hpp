// l2_bridge.hpp - the L2 forwarding stage (a stage of switch_pipeline.cpp).
//
//   l2_decide(frame) -> learn the source (MAC, VID) on the ingress port
//                       (and tell the other workers' FDB copies)
//                    -> look up the destination: its port, out_flood for
//                       broadcast / multicast / unknown unicast, or
//                       drop_same_port
//   flood(frame)     -> one admission per port but the ingress port, the
//                       ingress PG charged once (the original), copies uncharged
//
// The FDB results are cached within a burst (l2_burst): consecutive frames
// of one flow share source and destination, so learn and lookup run once.
//
// Part of switch_pipeline.cpp's translation unit (included there once).
#pragma once

#include <bit>

#include "switch/worker_link.hpp"

namespace rocelab::sw {

namespace {

// A MAC as a 48-bit key: one 8-byte load, masked. Callers guarantee 8
// readable bytes (the parser has checked the 14-byte Ethernet header).
// (A 6-byte memcpy into a zeroed u64 compiles to two narrow stores and a
// wide load: a store-forwarding stall that cost 25 % of the whole loop.)
inline std::uint64_t load_mac48(const std::byte* p) noexcept {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    return x & 0x0000FFFFFFFFFFFFULL;
}

// What one burst remembers of the FDB (see above).
struct l2_burst {
    std::uint64_t last_src = ~0ULL;
    std::uint64_t last_dst = ~0ULL;
    int last_dst_port = -1;
};

// The bridge's verdict for a frame from `in` in VLAN vid (0: untagged or
// priority-tagged): the egress port, out_flood, or out_drop (counted).
[[gnu::always_inline]] inline std::uint16_t l2_decide(switch_env& env, port_rt& in, const std::byte* d, std::uint16_t vid,
                                                      nanos now, l2_burst& b) noexcept {
    worker_rt& w = env.w;
    const std::uint64_t src = load_mac48(d + 6) | (std::uint64_t{vid} << 48);
    if (src != b.last_src) {
        if ((std::to_integer<std::uint8_t>(d[6]) & 1u) == 0) {
            if (w.table->learn(now, reinterpret_cast<const std::uint8_t*>(d + 6), vid, in.idx) && env.p.multi) [[unlikely]] {
                learn_out(w, src, in.idx, now);
            }
        }
        b.last_src = src;
    }
    if ((std::to_integer<std::uint8_t>(d[0]) & 1u) != 0) { return out_flood; }  // broadcast / multicast
    const std::uint64_t dst = load_mac48(d) | (std::uint64_t{vid} << 48);
    if (dst != b.last_dst) {
        b.last_dst = dst;
        b.last_dst_port = w.table->lookup(now, reinterpret_cast<const std::uint8_t*>(d), vid);
    }
    if (b.last_dst_port < 0) { return out_flood; }  // unknown unicast
    if (b.last_dst_port == in.idx) {
        w.c[in.idx].drop(drop_reason::same_port);
        return out_drop;
    }
    return static_cast<std::uint16_t>(b.last_dst_port);
}

// Flood to every port but the ingress port: copies for all but the last.
// With buffer accounting the ingress PG is charged once per received frame,
// as an ASIC stores a flooded frame once and replicates it at egress: the
// copies are made first, the original goes to the last target charged, and
// the copies follow uncharged, only if the ingress admitted the original
// (a lossless frame the headroom cannot take is dropped for every port).
// Without accounting the same order applies (nothing is charged).
[[gnu::noinline]] void flood(switch_env& env, port_rt& in, rte_mbuf* m, std::uint8_t tc, bool tagged) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    std::uint64_t targets = p.all_ports_mask & ~(1ULL << in.idx);
    if (targets == 0) {
        w.c[in.idx].drop(drop_reason::flood_no_port);
        rte_pktmbuf_free(m);
        return;
    }
    rte_mbuf* copies[64];
    std::uint8_t to[64];
    unsigned n = 0;
    while ((targets & (targets - 1)) != 0) {
        const int t = std::countr_zero(targets);
        targets &= targets - 1;
        rte_mbuf* x = rte_pktmbuf_copy(m, p.pool, 0, UINT32_MAX);
        if (x == nullptr) {
            w.c[t].drop(drop_reason::flood_nombuf);
            continue;
        }
        copies[n] = x;
        to[n++] = static_cast<std::uint8_t>(t);
    }
    const bool admitted = forward_to<true>(env, in, *p.ports[std::countr_zero(targets)], m, tc, tagged);  // in: maybe RSS
    for (unsigned k = 0; k < n; ++k) {
        if (!admitted) {
            rte_pktmbuf_free(copies[k]);
            continue;
        }
        ++w.c[in.idx].flood_copies;
        (void)forward_to(env, in, *p.ports[to[k]], copies[k], tc, tagged, /*charged=*/false);
    }
}


}  // namespace

}  // namespace rocelab::sw
