// l3_router.hpp - the L3 forwarding stage (a stage of switch_pipeline.cpp).
//
//   l3_decide(frame) -> ARP / ND: learn, answer for our addresses in place
//                    -> for us: ICMP echo answered, else drop_to_switch
//                    -> LPM + ECMP (5-tuple hash only for several next hops)
//                    -> TTL (ICMP time exceeded), next hop's MACs rewritten
//                    -> a next hop resolved by ARP/ND: forwarded, parked
//                       while it resolves (neigh_table), or dropped by name
//
// It returns a verdict per frame: the egress port, or out_drop /
// out_consumed (counted), out_held (parked, or handed to the worker that
// owns the egress port's neighbours). ICMP errors and replies are made in
// place of the frame and leave by its ingress port (traffic class 7).
// Frames that waited for a neighbour join the admission path when it
// answers (release_held) or are dropped with an ICMP unreachable.
//
// Part of switch_pipeline.cpp's translation unit (included there once).
#pragma once

#include "fwd/arp_nd.hpp"
#include "fwd/ecmp.hpp"
#include "fwd/icmp_error.hpp"
#include "proto/ipv4.hpp"
#include "proto/parse.hpp"
#include "route_lookup.hpp"
#include "switch/worker_link.hpp"

namespace rocelab::sw {

namespace {

// An ICMP/ICMPv6 error (fwd/icmp_error.hpp) for a datagram the router
// drops, made in place of it and sent back out of the ingress port to the
// previous hop. False (nothing sent) when errors are off, over the rate,
// forbidden for this datagram (an ICMP error, multicast, ...), the port has
// no address of the family, or the frame spans several segments.
[[gnu::noinline]] bool icmp_error(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                  icmp_error_kind k, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    const bool v4 = f.kind == frame_kind::ipv4;
    if (!p.icmp_on || m->nb_segs != 1 || !(v4 ? in.has_src4 : in.has_src6)) { return false; }
    if (now.v < w.icmp_tat - p.icmp_tau) {
        ++w.c[in.idx].icmp_ratelimited;
        return false;
    }
    std::byte* d = data(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const std::uint32_t cap = len + rte_pktmbuf_tailroom(m);
    const std::uint32_t n = v4 ? make_icmp4_error(d, len, cap, f.l3_off, k, in.b.mac.data(), in.icmp_src4)
                               : make_icmp6_error(d, len, cap, f.l3_off, k, in.b.mac.data(), in.icmp_src6.data());
    if (n == 0) { return false; }
    w.icmp_tat = std::max(w.icmp_tat, now.v) + p.icmp_interval;
    m->data_len = static_cast<std::uint16_t>(n);
    m->pkt_len = n;
    ++w.c[in.idx].icmp_errors;
    return true;
}

// Traffic class of what the switch sends itself: ARP/ND requests, and
// ARP/ND replies, ICMP echo replies and errors made in place of a frame.
constexpr std::uint8_t tc_own = 7;

// The verdict for a frame answered in place: back out of its ingress port,
// at tc_own.
inline std::uint16_t back_out(const port_rt& in, std::uint8_t& tc) noexcept {
    tc = tc_own;
    return in.idx;
}

// The verdict for a datagram the router dropped (the caller counted why):
// an ICMP error back out of its ingress port (icmp_error), else out_drop.
inline std::uint16_t icmp_error_or_drop(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                        icmp_error_kind k, std::uint8_t& tc, nanos now) noexcept {
    return icmp_error(env, in, m, f, k, now) ? back_out(in, tc) : out_drop;
}

// The verdict for a datagram whose TTL / hop limit runs out here: dropped
// as ttl_expired, answered with ICMP time exceeded.
inline std::uint16_t expire_ttl(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f, std::uint8_t& tc,
                                nanos now) noexcept {
    env.w.c[in.idx].drop(drop_reason::ttl_expired);
    return icmp_error_or_drop(env, in, m, f, icmp_error_kind::time_exceeded, tc, now);
}

// One hop less for a datagram the router forwards, in place: the IPv4 TTL
// (checksum patched) or the IPv6 hop limit.
inline void dec_ttl(std::byte* d, const parsed_frame& f) noexcept {
    if (f.kind == frame_kind::ipv4) {
        ipv4_dec_ttl(d + f.l3_off);
    } else {
        d[f.l3_off + 7] = std::byte(f.ttl - 1);
    }
}

// The verdict for a frame addressed to the switch that nothing answers
// (there is no IP stack): dropped as to_switch.
inline std::uint16_t drop_to_switch(worker_rt& w, const port_rt& in) noexcept {
    w.c[in.idx].drop(drop_reason::to_switch);
    return out_drop;
}

using neigh_entry = neigh_table<held_frame>::entry;
constexpr nanos neigh_poll_interval{1'000'000};

// A frame that waited for its neighbour, forwarded now that it answered
// (defined below admit()).
void release_held(switch_env& env, const held_frame& h, const mac_addr& mac, std::uint16_t port) noexcept;
void unresolved_held(switch_env& env, const held_frame& h, nanos now) noexcept;

// A frame that waited for a neighbour and is dropped (failed resolution,
// shutdown): counted on its ingress port.
void drop_held(switch_env& env, const held_frame& h, drop_reason why) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    w.c[h.in].drop(why);
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    rte_pktmbuf_free(h.m);
}

// Our address on `port` in the subnet of `k` (the source of a request);
// false if the port has none (then nothing is sent).
bool neigh_source(const switch_pipeline::impl& p, std::uint16_t port, const neigh_key& k, std::uint8_t* out16) noexcept {
    const local_addrs& l = p.routes->locals();
    if (!k.v6) {
        const std::uint32_t a = k.v4_host();
        for (const local_v4& x : l.v4()) {
            const std::uint32_t mask = x.len == 0 ? 0 : ~0u << (32 - x.len);
            if (x.port == port && (x.addr & mask) == (a & mask)) {
                store_be32(reinterpret_cast<std::byte*>(out16), x.addr);
                return true;
            }
        }
        return false;
    }
    for (const local_v6& x : l.v6()) {
        if (x.port != port) { continue; }
        bool same = true;
        for (int b = 0; b < x.len && same; b += 8) {
            const int bits = std::min(8, x.len - b);
            const auto m = static_cast<std::uint8_t>(0xFFu << (8 - bits));
            same = ((x.addr[b / 8] ^ k.addr[b / 8]) & m) == 0;
        }
        if (same) {
            std::memcpy(out16, x.addr.data(), 16);
            return true;
        }
    }
    return false;
}

// Send an ARP request / Neighbor Solicitation for e on its port, admitted
// (uncharged) to the queue of traffic class 7.
[[gnu::noinline]] void send_neigh_request(switch_env& env, const neigh_entry& e, neigh_request kind) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    port_rt& eg = *p.ports[e.port];
    std::uint8_t src[16];
    if (eg.link_down || !neigh_source(p, e.port, e.key, src)) { return; }
    rte_mbuf* m = rte_pktmbuf_alloc(p.pool);
    if (m == nullptr) { return; }  // retried at the next retransmission
    const std::size_t len = e.key.v6 ? ns_frame_len : nd_min_frame;
    auto* d = reinterpret_cast<std::byte*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)));
    if (d == nullptr) {
        rte_pktmbuf_free(m);
        return;
    }
    const mac_addr* to = kind == neigh_request::unicast ? &e.mac : nullptr;
    if (e.key.v6) {
        nd_make_solicit(d, eg.b.mac, src, e.key.addr.data(), to);
        ++w.c[eg.idx].nd_solicits;
    } else {
        arp_make_request(d, eg.b.mac, load_be32(reinterpret_cast<const std::byte*>(src)), e.key.v4_host(), to);
        ++w.c[eg.idx].arp_requests;
    }
    // Traffic class tc_own, through the same admission as forwarded frames.
    (void)eg.admit(env, m, tc_own, vlan_in::untagged, p.buf ? tag_made : 0u);
}

// A routed frame whose next hop (the destination host on a connected
// subnet, or a dynamic route next hop) is resolved by ARP/ND: forwarded with
// the neighbour's MAC, parked while it is resolved, or dropped by name.
// The TTL has been checked and decremented.
// (On the worker that owns the egress port `port`; a dropped frame's charge,
// if it has one, is released, and the caller frees it.)
[[gnu::noinline]] std::uint16_t neigh_forward(switch_env& env, const held_frame& h,
                                              const neigh_key& k, std::uint16_t port, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    const auto r = w.neigh->resolve(k, port, now, h);
    if (r.request != neigh_request::none) { send_neigh_request(env, *r.e, r.request); }
    switch (r.verdict) {
        case neigh_verdict::forward: {
            std::byte* d = data(h.m);
            std::memcpy(d, r.e->mac.data(), 6);
            std::memcpy(d + 6, p.ports[port]->b.mac.data(), 6);
            return port;
        }
        case neigh_verdict::held:
            ++w.c[h.in].neigh_held;
            return out_held;
        case neigh_verdict::queue_full:
            w.c[h.in].drop(drop_reason::neigh_queue_full);
            break;
        case neigh_verdict::table_full:
            w.c[h.in].drop(drop_reason::neigh_table_full);
            break;
    }
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    return out_drop;
}

// Learn a neighbour from an ARP/ND packet received on `in`: only an address
// in a connected subnet of that port without a static NEIGH entry (those
// win). True if the table holds it now.
bool neigh_learn(switch_env& env, port_rt& in, const neigh_key& k, const mac_addr& mac, bool create,
                 nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    if (!w.neigh) { return false; }
    const auto port = p.routes->connected_port(k.addr.data(), k.v6);
    if (!port || *port != in.idx) { return false; }
    const bool ok = w.neigh->learn(k, in.idx, mac, now, create, [&](const held_frame& h, const mac_addr& m, std::uint16_t eg) noexcept {
        ++w.c[h.in].neigh_released;
        release_held(env, h, m, eg);
    });
    if (ok) { ++w.c[in.idx].neigh_learned; }
    return ok;
}

// ARP received in L3 mode: learn the sender, answer requests for our
// addresses in place. Returns the egress (the ingress port: a reply), or
// out_consumed / out_drop (counted).
[[gnu::noinline]] std::uint16_t l3_arp(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                       std::uint8_t& tc, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    std::byte* d = data(m);
    const arp_info a = arp_parse(d, rte_pktmbuf_data_len(m), f.l3_off);
    const bool for_us = a.ok && p.routes->is_local_v4(a.tpa);
    bool learned = false;
    if (a.ok && a.spa != 0 && a.spa != a.tpa) {  // not a probe (sender 0.0.0.0) nor an announcement
        learned = neigh_learn(env, in, neigh_key::v4(a.spa), a.sha, for_us && a.oper == arp_op_request, now);
    } else if (a.ok && a.spa == a.tpa && a.spa != 0) {  // gratuitous ARP: update only
        learned = neigh_learn(env, in, neigh_key::v4(a.spa), a.sha, false, now);
    }
    if (for_us && a.oper == arp_op_request && arp_make_reply(d, rte_pktmbuf_data_len(m), f.l3_off, in.b.mac.data())) {
        ++w.c[in.idx].arp_replies;
        return back_out(in, tc);
    }
    if (learned) {  // a reply (or announcement) that told us a neighbour's MAC
        ++w.c[in.idx].neigh_consumed;
        return out_consumed;
    }
    return drop_to_switch(w, in);
}

// IPv6 neighbour discovery received in L3 mode: learn from NS (source
// link-layer option) and NA (target link-layer option), answer NS for our
// addresses in place.
[[gnu::noinline]] std::uint16_t l3_nd(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                      std::uint8_t& tc, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    std::byte* d = data(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const nd_info nd = nd_parse(d, len, f.l3_off);
    if (nd.ok && nd.type == wire::icmp6_na) {
        const mac_addr mac = nd.has_lladdr ? nd.lladdr : load_mac(d + wire::eth_src);
        if (neigh_learn(env, in, neigh_key::v6_from(nd.target), mac, false, now)) {
            ++w.c[in.idx].neigh_consumed;
            return out_consumed;
        }
        return drop_to_switch(w, in);
    }
    const std::uint8_t* target = nd_target(d, f.l3_off);
    const bool for_us = p.routes->is_local_v6(target);
    static constexpr std::uint8_t unspecified[16] = {};
    if (nd.ok && for_us && nd.has_lladdr && std::memcmp(nd.src, unspecified, 16) != 0) {
        (void)neigh_learn(env, in, neigh_key::v6_from(nd.src), nd.lladdr, true, now);
    }
    if (for_us && nd_make_advert(d, len, f.l3_off, in.b.mac.data())) {
        const auto na_len = static_cast<std::uint16_t>(nd_na_frame_len(f.l3_off));
        m->data_len = na_len;
        m->pkt_len = na_len;
        ++w.c[in.idx].nd_replies;
        return back_out(in, tc);
    }
    return drop_to_switch(w, in);
}

// An IP datagram addressed to one of our addresses: ICMP / ICMPv6 echo
// requests are answered in place (from the pinged address, out of the
// ingress port; icmp_echo_replies), anything else is dropped as to_switch
// (there is no stack behind the addresses).
[[gnu::noinline]] std::uint16_t to_us(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                      std::uint8_t& tc) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    const bool v4 = f.kind == frame_kind::ipv4;
    if (f.l4_proto == (v4 ? ip_proto_icmp : ip_proto_icmpv6) && m->nb_segs == 1) {
        std::byte* d = data(m);
        const std::uint32_t len = rte_pktmbuf_data_len(m);
        const std::span<std::byte> fr(d, len + rte_pktmbuf_tailroom(m));
        const std::span<const std::byte> rx(d, len);
        const nd_result r = v4 ? icmp4_echo_reply(rx, f.l3_off, p.routes->locals(), local_addrs::any_port, fr)
                               : icmp6_echo_reply(rx, f.l3_off, p.routes->locals(), local_addrs::any_port, fr);
        if (r.status == nd_status::reply) {
            std::memcpy(d + 6, in.b.mac.data(), 6);  // from the port it came in on
            m->data_len = static_cast<std::uint16_t>(r.len);
            m->pkt_len = static_cast<std::uint32_t>(r.len);
            ++w.c[in.idx].icmp_echo_replies;
            return back_out(in, tc);
        }
    }
    return drop_to_switch(w, in);
}

// No LPM value looked up ahead for this frame (see lookup_burst).
constexpr std::uint32_t no_lpm_value = 0xFFFFFFFEu;

// The LPM values of a burst's destinations, one bulk lookup per family
// (rte_lpm_lookup_bulk, rte_lpm6_lookup_bulk_func: the table reads of the
// whole burst overlap, where one lookup per frame waits for each in turn).
// v[i]: the value for frame i (lpm_miss: no prefix), or no_lpm_value for a
// frame that is neither (it looks up nothing). The IPv6 destinations are
// copied out of the frames (the burst's headers are in cache by now).
inline void lookup_burst(const switch_pipeline::impl& p, rte_mbuf* const* pkts, const parsed_frame* f,
                         const std::uint16_t* o, std::uint16_t n, std::uint16_t pass, std::uint32_t* v) noexcept {
    std::uint32_t dst4[switch_pipeline::max_burst];
    ip6_addr dst6[switch_pipeline::max_burst];
    std::uint32_t val[switch_pipeline::max_burst];
    std::uint8_t at4[switch_pipeline::max_burst];
    std::uint8_t at6[switch_pipeline::max_burst];
    unsigned k4 = 0, k6 = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
        v[i] = no_lpm_value;
        if (o[i] != pass) { continue; }
        if (f[i].kind == frame_kind::ipv4) {
            dst4[k4] = f[i].ip4_dst;
            at4[k4++] = static_cast<std::uint8_t>(i);
        } else if (f[i].kind == frame_kind::ipv6) [[unlikely]] {
            std::memcpy(dst6[k6], data(pkts[i]) + f[i].ip6_dst_off, 16);
            at6[k6++] = static_cast<std::uint8_t>(i);
        }
    }
    if (k4 != 0) {
        p.routes->lpm().lookup_v4_bulk(dst4, val, k4);
        for (unsigned j = 0; j < k4; ++j) { v[at4[j]] = val[j]; }
    }
    if (k6 != 0) [[unlikely]] {
        p.routes->lpm().lookup_v6_bulk(dst6, val, k6);
        for (unsigned j = 0; j < k6; ++j) { v[at6[j]] = val[j]; }
    }
}

// What a burst's frames share (rx_l3, one per burst): the next hop the
// last IPv4 frame's LPM value chose, when choosing it needed no hash (a
// group of one member, or one local member under ECMP local bias). The
// burst's frames mostly share a route, and its next hop was a chain of
// loads per frame (the route table, its group, the group's member, the
// next hop: perf, 4.5 % of rx_l3 at 74 B). Valid for one burst only: the
// tables change between polls, never within one.
struct l3_burst {
    // Empty: a value no frame brings (neither an LPM value nor no_lpm_value,
    // which l3_decide may be given and never caches).
    static constexpr std::uint32_t none = 0xFFFFFFFDu;
    static_assert(none != no_lpm_value && none != lpm_miss && none >= lpm_value_limit);
    std::uint32_t v = none;  // the LPM value whose next hop nh is
    const nexthop* nh = nullptr;
};

// L3 forwarding decision for one parsed frame (ARP/ND answered in place,
// ICMP errors for TTL expiry and no route made in place). lpm_v: the
// frame's LPM value from lookup_burst, or no_lpm_value (looked up here).
// Returns the egress port index, or out_drop with the reason counted.
// Inlined into rx_l3's two instances (switch_pipeline.cpp: the port's own
// burst and RSS's given frames), as it was into the one before (an
// out-of-line call cost the L3 leaf ~4 % at 74 B, A/B 2026-12-05).
[[gnu::always_inline]] inline std::uint16_t l3_decide(switch_env& env, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                                      std::uint8_t& tc, nanos now, std::uint32_t lpm_v,
                                                      l3_burst& lb) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    std::byte* d = data(m);
    const auto* dmac = reinterpret_cast<const std::uint8_t*>(d);
    if (f.kind == frame_kind::arp) { return l3_arp(env, in, m, f, tc, now); }
    if (f.kind == frame_kind::ipv6 && nd_is_nd(d, f.l3_off, rte_pktmbuf_data_len(m))) [[unlikely]] {
        return l3_nd(env, in, m, f, tc, now);
    }
    if (std::memcmp(dmac, in.b.mac.data(), 6) != 0) {
        w.c[in.idx].drop((dmac[0] & 1u) ? drop_reason::link_local : drop_reason::not_router_mac);
        return out_drop;
    }
    if (f.kind != frame_kind::ipv4 && f.kind != frame_kind::ipv6) {
        w.c[in.idx].drop(drop_reason::l3_not_ip);
        return out_drop;
    }
    // The 5-tuple hash is computed only for routes with several next hops.
    const auto h = [&]() noexcept -> std::uint32_t {
        return f.kind == frame_kind::ipv4
                   ? flow_hash_v4(f.ip4_src, f.ip4_dst, f.l4_proto, f.sport, f.dport, p.ecmp_seed)
                   : flow_hash_v6(reinterpret_cast<const std::uint8_t*>(d + f.ip6_src_off),
                                  reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off), f.l4_proto, f.sport,
                                  f.dport, p.ecmp_seed);
    };
    const nexthop* nh = nullptr;
    int rc;
    if (f.kind == frame_kind::ipv4) {
        if (lpm_v == lb.v) [[likely]] {
            nh = lb.nh;
            rc = 0;
        } else {
            bool hashed = false;
            const auto hh = [&]() noexcept -> std::uint32_t {
                hashed = true;
                return h();
            };
            rc = lpm_v != no_lpm_value ? p.routes->resolve_v4(lpm_v, hh, &nh, w.ecmp_bias)
                                       : p.routes->lookup_v4(f.ip4_dst, hh, &nh, w.ecmp_bias);
            if (rc == 0 && !hashed && lpm_v != no_lpm_value) { lb = l3_burst{lpm_v, nh}; }
        }
    } else {
        const auto* dst = reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off);
        rc = lpm_v != no_lpm_value ? p.routes->resolve_v6(lpm_v, h, &nh, w.ecmp_bias)
                                   : p.routes->lookup_v6(dst, h, &nh, w.ecmp_bias);
    }
    // The switch's own addresses are host routes of kind local in the LPM,
    // which win over any route at equal prefix (route_table.hpp): the lookup
    // tells them, with no scan of the address table per frame (that scan was
    // one compare per interface address for every transit frame: 12 on the
    // seed leaf). route_table_logic.lookup_says_local_exactly_for_the_address_table.
    if (rc == dpdk::route_table::local) [[unlikely]] { return to_us(env, in, m, f, tc); }
    // Resolved by ARP/ND: a connected host without a NEIGH entry, or a
    // route's dynamic next hop.
    const bool dyn = (rc == dpdk::route_table::no_neighbor && nh != nullptr && w.neigh) ||
                     (rc == 0 && nh != nullptr && nh->dynamic());
    if (dyn) [[unlikely]] {
        if (f.ttl <= 1) { return expire_ttl(env, in, m, f, tc, now); }
        dec_ttl(d, f);
        port_rt& eg = *p.ports[nh->port];
        if (eg.owner != w.id) {
            // The neighbours behind eg live on its owner: hand it over with
            // where the key is (charged here, resolved there).
            const std::uint32_t aux = nh->dynamic() ? (nh->dynamic_index() | aux_dynhop)
                                                    : static_cast<std::uint32_t>(f.kind == frame_kind::ipv4
                                                                                     ? f.l3_off + 16
                                                                                     : f.ip6_dst_off);
            const std::uint8_t fl = f.kind == frame_kind::ipv6 ? hf_v6 : 0;
            return handoff_out(p, w, in, eg, m, tc, f.vlan_count > 0, false, handoff_kind::resolve, aux, fl)
                       ? out_held
                       : out_handled;
        }
        neigh_key k;
        if (nh->dynamic()) {
            const ip_prefix& a = p.routes->dynamic_hop(nh->dynamic_index());
            std::memcpy(k.addr.data(), a.addr.data(), 16);
            k.v6 = a.v6;
        } else if (f.kind == frame_kind::ipv4) {
            k = neigh_key::v4(f.ip4_dst);
        } else {
            k = neigh_key::v6_from(reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off));
        }
        return neigh_forward(env, held_frame{m, in.idx, tc, f.vlan_count > 0, tag_none}, k, nh->port, now);
    }
    if (rc != 0 || nh == nullptr) {
        const bool no_nb = rc == dpdk::route_table::no_neighbor;
        w.c[in.idx].drop(no_nb ? drop_reason::no_neighbor : drop_reason::no_route);
        return no_nb ? out_drop : icmp_error_or_drop(env, in, m, f, icmp_error_kind::unreachable, tc, now);
    }
    if (f.ttl <= 1) { return expire_ttl(env, in, m, f, tc, now); }
    dec_ttl(d, f);
    std::memcpy(d, nh->dst_mac.data(), 6);
    std::memcpy(d + 6, nh->src_mac.data(), 6);
    return nh->port;
}

// A frame whose neighbour is known now (its MACs rewritten) is admitted:
// charged to its ingress PG and queued. One handed over by the ingress
// port's worker (tag_handed), or received here on an RSS queue of another
// worker's port (whose credit may be gone by now), goes back to the ingress
// port's owner to be charged, since only it writes the port's PGs; that
// worker hands it to eg's owner charged.
void admit_resolved(switch_env& env, const held_frame& h, port_rt& eg) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    port_rt& in = *p.ports[h.in];
    if (h.tag != tag_handed && in.owner == w.id) {  // parked here by in's owner (this worker), which owns eg too
        (void)forward_to(env, in, eg, h.m, h.tc, h.tagged);
        return;
    }
    if (!p.buf) {  // no accounting: nothing to charge
        (void)eg.admit(env, h.m, h.tc, vlan_in::egress, 0);
        return;
    }
    stage(p, w, in.owner, h.m, tag_none, 0, eg.idx, in.idx, h.tc, handoff_kind::admit, h.tagged ? hf_tagged : 0);
}

void release_held(switch_env& env, const held_frame& h, const mac_addr& mac, std::uint16_t port) noexcept {
    switch_pipeline::impl& p = env.p;
    port_rt& eg = *p.ports[port];
    std::byte* d = data(h.m);
    std::memcpy(d, mac.data(), 6);
    std::memcpy(d + 6, eg.b.mac.data(), 6);
    admit_resolved(env, h, eg);
}

// A frame whose neighbour never answered: dropped (drop_neigh_unresolved)
// and answered with ICMP host / address unreachable from its ingress port,
// as a router does when ARP / ND fails (RFC 1812 4.3.3.1, RFC 4443 3.1).
void unresolved_held(switch_env& env, const held_frame& h, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    port_rt& in = *p.ports[h.in];
    w.c[in.idx].drop(drop_reason::neigh_unresolved);
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    const parsed_frame f = parse_frame<parse_depth::l4>(data(h.m), rte_pktmbuf_pkt_len(h.m));
    if (f.status == parse_status::ok && (f.kind == frame_kind::ipv4 || f.kind == frame_kind::ipv6) &&
        icmp_error(env, in, h.m, f, icmp_error_kind::host_unreachable, now)) {
        if (in.owner == w.id) {
            (void)forward_to(env, in, in, h.m, tc_own, h.tagged);
        } else {  // back to the ingress port's worker, which charges and sends it
            stage(p, w, in.owner, h.m, tag_none, 0, in.idx, in.idx, tc_own, handoff_kind::ingress,
                  h.tagged ? hf_tagged : 0);
        }
        return;
    }
    rte_pktmbuf_free(h.m);
}

// The worker applies a link change (see set_link in the header).

}  // namespace

}  // namespace rocelab::sw
