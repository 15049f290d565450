// switch_pipeline.cpp - the switch's data path: one worker's poll, composed
// of the stages (see switch_pipeline.hpp for the picture):
//
//   drain_in      frames, credits and learns from the other workers (worker_link.hpp)
//   ingress       per RX burst: checks, parse, MAC Control, VLAN membership,
//                 classification, then the forwarding stage's verdict
//                 (l2_bridge.hpp / l3_router.hpp) and its admission
//                 (egress_port::admit, here or through worker_link.hpp)
//   neighbours    ARP/ND retransmissions, failures, aging (l3_router.hpp)
//   egress        per port with work: egress_port::drain (PFC TX, watchdog,
//                 scheduler, WRED/ECN, shaper, tx_burst) (egress_port.hpp)
//   credits       buffer released for other workers' ports (worker_link.hpp)
//
// The stage headers are parts of this translation unit (the build has no
// LTO, and the per-frame path inlines across stages). The control side
// (create, counters, status) is switch_control.cpp.
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <type_traits>

#include "dpdk/capture.hpp"
#include "port_burst.hpp"
#include "proto/mac_control.hpp"
#include "proto/parse.hpp"
#include "switch/l2_bridge.hpp"
#include "switch/l3_router.hpp"
#include "switch/switch_rt.hpp"
#include "switch/worker_link.hpp"

namespace rocelab::sw {

namespace {

// ---- ingress ----

// Handle a consumed MAC Control frame (PAUSE or PFC).
inline void on_mac_control(worker_rt& w, port_rt& in, const parsed_frame& pf, const std::byte* d, nanos now) noexcept {
    ++w.c[in.idx].rx_mac_control;
    const mac_control_cview v(d + pf.l3_off);  // body (opcode) follows the EtherType
    if (pf.mac_control_opcode == mac_control_op_pfc) {
        ++w.c[in.idx].rx_pfc;
        const std::uint8_t cev = v.class_enable();
        const std::uint8_t honoured = cev & in.pfc_enable;
        if ((cev & ~in.pfc_enable) != 0) { w.c[in.idx].drop(drop_reason::pfc_disabled_prio); }
        for (int i = 0; i < 8; ++i) {
            if ((honoured >> i & 1u) != 0) { ++w.c[in.idx].rx_pfc_prio[i]; }
        }
        if (honoured != 0) { in.pause.on_pfc(now, honoured, v.pfc_times(), in.b.line_rate); }
    } else if (pf.mac_control_opcode == mac_control_op_pause) {
        ++w.c[in.idx].rx_pause;
        in.pause.on_pause(now, v.pause_time(), in.b.line_rate);
    }
}


// A parsed frame's traffic class on port `in`: trust DSCP / PCP. The RSS
// poll reserves credit for the PG of this class before the ingress stage
// charges it, so both take it from here.
[[gnu::always_inline]] inline std::uint8_t frame_tc(const port_rt& in, const parsed_frame& f) noexcept {
    return in.maps.classify(in.trust, f.is_ip() ? f.dscp : -1, f.vlan_count > 0 ? f.outer_pcp : -1);
}

// The frame goes on to the forwarding stage (ingress_frame).
constexpr std::uint16_t out_pass = 0xFFFA;

// The ingress checks of one frame and its classification: size and
// segments, parse (L2: to the IP header; L3: checksum and L4 ports too),
// MAC Control and link-local frames, VLAN membership, then trust DSCP /
// PCP -> traffic class. Returns out_pass with f, tc and vid set, or
// out_drop / out_consumed (counted).
//
// In two halves around the parse, so that a caller that needs the parse
// for one frame only keeps it in registers (rx_l2: `const parsed_frame f =
// parse_frame(...)`; assigning it to an object declared before cost the
// bridge 4 % at 74 B, A/B 2026-12-03): ingress_size before,
// ingress_classify after. ingress_frame parses into f in place (f as
// constructed: rx_l3's burst array).
[[gnu::always_inline]] inline std::uint16_t ingress_size(switch_env& env, port_rt& in, rte_mbuf* m) noexcept {
    worker_rt& w = env.w;
    const std::uint32_t len = rte_pktmbuf_pkt_len(m);
    if (len > env.p.max_frame) [[unlikely]] {
        w.c[in.idx].drop(drop_reason::oversize);
        return out_drop;
    }
    const std::uint32_t seg = rte_pktmbuf_data_len(m);
    if (seg < len && seg < 128) [[unlikely]] {
        w.c[in.idx].drop(drop_reason::segmented_header);
        return out_drop;
    }
    return out_pass;
}

[[gnu::always_inline]] inline std::uint16_t ingress_classify(switch_env& env, port_rt& in, rte_mbuf* m, nanos now,
                                                             const parsed_frame& f, std::uint8_t& tc,
                                                             std::uint16_t& vid) noexcept {
    worker_rt& w = env.w;
    const std::byte* d = data(m);
    if (f.status != parse_status::ok) [[unlikely]] {
        ++w.c[in.idx].malformed[static_cast<std::size_t>(f.status)];
        w.c[in.idx].drop(drop_reason::malformed);
        return out_drop;
    }
    // Link-local group addresses 01:80:C2:00:00:00..0F are never
    // forwarded. A MAC Control frame (Length/Type 0x8808 right after
    // the source address: untagged) is never passed to the bridge
    // (IEEE 802.3 clause 31): it acts when addressed to the reserved
    // group or to this port, and is dropped by name otherwise. A
    // tagged frame is not MAC Control, whatever its inner type.
    //
    // kind alone first: `kind == mac_control && vlan_count == 0` let the
    // compiler test both bytes with one 32-bit load of f, which the parse
    // had just written byte by byte; the store could not be forwarded to that
    // load, and its stall was 19 % of rx_l2's cycles at 74 B (perf).
    bool mac_ctl = false;
    if (f.kind == frame_kind::mac_control) [[unlikely]] { mac_ctl = f.vlan_count == 0; }
    if (mac_ctl || is_link_local_reserved(reinterpret_cast<const std::uint8_t*>(d))) [[unlikely]] {
        if (mac_ctl && (is_link_local_reserved(reinterpret_cast<const std::uint8_t*>(d)) ||
                        std::memcmp(d, in.b.mac.data(), 6) == 0)) {
            on_mac_control(w, in, f, d, now);
            return out_consumed;
        }
        w.c[in.idx].drop(mac_ctl ? drop_reason::mac_control_other : drop_reason::link_local);
        return out_drop;
    }
    // VLAN membership: tagged ports accept their VID (or priority tags),
    // untagged ports accept untagged or priority-tagged frames.
    vid = 0;
    const bool tagged = f.vlan_count > 0;
    if (tagged) [[unlikely]] {
        vid = static_cast<std::uint16_t>(f.outer_vid);
        if (vid != 0 && (in.vmode != vlan_mode::tagged || vid != in.vid)) {
            w.c[in.idx].drop(drop_reason::vlan_mismatch);
            return out_drop;
        }
    }
    tc = frame_tc(in, f);
    return out_pass;
}

template <parse_depth D>
[[gnu::always_inline]] inline std::uint16_t ingress_frame(switch_env& env, port_rt& in, rte_mbuf* m, nanos now,
                                                          parsed_frame& f, std::uint8_t& tc, std::uint16_t& vid) noexcept {
    const std::uint16_t o = ingress_size(env, in, m);
    if (o != out_pass) [[unlikely]] { return o; }
    parse_frame_into<D>(f, data(m), rte_pktmbuf_pkt_len(m));
    return ingress_classify(env, in, m, now, f, tc, vid);
}

// What every RX burst does around its stages: the receive and the
// prefetch of the first frames; per frame, the prefetch four ahead, the
// byte count and the capture tap; at the end the port's RX counters and one
// bulk free of the frames the stages dropped or consumed.
struct rx_burst {
    static constexpr std::uint16_t max_burst = switch_pipeline::max_burst;
    switch_env& env;
    port_rt& in;
    nanos now;
    rte_mbuf* pkts[max_burst];
    rte_mbuf* to_free[max_burst];
    const std::uint16_t n;
    std::uint16_t n_free = 0;
    std::uint64_t rx_bytes = 0;
    // The egress port the burst's last admitted frame took, when this worker
    // owns it: a burst's frames mostly share one, and the port's pointer and
    // its owner were a chain of loads per frame (env.p, p.ports, the port).
    std::uint16_t own_o = 0xFFFF;
    port_rt* own_eg = nullptr;
    // With two ports a flood is one unicast (no copy, no call): that port,
    // or 0xFFFF (a flood copies: l2_bridge.hpp's flood()).
    std::uint16_t flood_one = 0xFFFF;

    // Given == false: a burst from the port's I/O (queue 0). Given == true:
    // the k frames received already (RSS: from another RX queue, taken by
    // the RSS poll, or handed to the port's owner). Two instances of each
    // forwarding stage: the production one stays exactly the one-queue path.
    template <bool Given>
    [[gnu::always_inline]] rx_burst(switch_env& e, port_rt& i, nanos t, std::bool_constant<Given>,
                                    rte_mbuf* const* given, std::uint16_t k) noexcept
        : env(e), in(i), now(t), n(Given ? copy(given, k) : dpdk::port_rx(i.b, t, pkts, e.p.burst)) {
        for (std::uint16_t j = 0; j < n && j < 4; ++j) { rte_prefetch0(rte_pktmbuf_mtod(pkts[j], void*)); }
        const std::uint64_t targets = e.p.all_ports_mask & ~(1ULL << i.idx);
        if (targets != 0 && (targets & (targets - 1)) == 0) { flood_one = static_cast<std::uint16_t>(std::countr_zero(targets)); }
    }
    std::uint16_t copy(rte_mbuf* const* given, std::uint16_t k) noexcept {
        std::memcpy(pkts, given, sizeof(rte_mbuf*) * k);
        return k;
    }
    // Frame i, in order: prefetches frame i + 4, counts and taps frame i.
    // l3_ingress repeats these lines with its own locals (sharing them
    // through a byte-count argument cost the L3 leaf 1.8 %: code placement).
    [[gnu::always_inline]] rte_mbuf* take(std::uint16_t i) noexcept {
        if (i + 4 < n) { rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void*)); }
        rte_mbuf* const m = pkts[i];
        rx_bytes += rte_pktmbuf_pkt_len(m);
        if (env.capture != nullptr) { env.capture->tap(in.idx, false, m, now); }
        return m;
    }
    // Frame i's verdict carried out: admission to its egress port (here, or
    // on its owner after handoff_out), a flood, or (dropped or consumed,
    // counted already) a place in the burst's free list. AnyPort: `in` may
    // be another worker's port (see forward_to).
    template <bool AnyPort>
    [[gnu::always_inline]] void dispatch(std::uint16_t i, std::uint16_t o, std::uint8_t tc, bool tagged) noexcept {
        rte_mbuf* const m = pkts[i];
        if (o == out_flood && flood_one != 0xFFFF) { o = flood_one; }
        if (o < out_handled) [[likely]] {
            if (o != own_o) {
                port_rt& eg = *env.p.ports[o];
                if (eg.owner != env.w.id) [[unlikely]] {
                    (void)forward_to<AnyPort>(env, in, eg, m, tc, tagged);  // to its owner
                    return;
                }
                own_o = o;
                own_eg = &eg;
            }
            (void)admit_owned<AnyPort>(env, in, *own_eg, m, tc, tagged);
        } else if (o == out_held || o == out_handled) {
            // parked in the neighbour table (counted neigh_held), or handed over
        } else if (o == out_flood) {
            flood(env, in, m, tc, tagged);
        } else {  // out_drop or out_consumed: already counted
            to_free[n_free++] = m;
        }
    }
    [[gnu::always_inline]] void finish() noexcept {
        env.w.c[in.idx].rx_packets += n;
        env.w.c[in.idx].rx_bytes += rx_bytes;
        if (n_free != 0) { rte_pktmbuf_free_bulk(to_free, n_free); }
    }
};

// One RX burst of port `in` through the L2 bridge, one pass per frame:
// ingress checks and classification, the bridge's verdict, its dispatch.
template <bool Given = false>
[[gnu::noinline]] std::uint32_t rx_l2(switch_env& env, port_rt& in, nanos now, rte_mbuf* const* given = nullptr,
                    std::uint16_t k = 0) noexcept {
    stage_clock sc;
    rx_burst rb(env, in, now, std::bool_constant<Given>{}, given, k);
    if (rb.n == 0) { return 0; }
    l2_burst l2b;  // the FDB results cached within the burst
    for (std::uint16_t i = 0; i < rb.n; ++i) {
        rte_mbuf* const m = rb.take(i);
        std::uint8_t tc = 0;
        bool tagged = false;
        std::uint16_t o = ingress_size(env, in, m);
        if (o == out_pass) [[likely]] {
            const parsed_frame f = parse_frame<parse_depth::l3>(data(m), rte_pktmbuf_pkt_len(m));
            std::uint16_t vid = 0;
            o = ingress_classify(env, in, m, now, f, tc, vid);
            tagged = f.vlan_count > 0;
            if (o == out_pass) { o = l2_decide(env, in, data(m), vid, now, l2b); }
        }
        rb.template dispatch<Given>(i, o, tc, tagged);
    }
    rb.finish();
    sc.lap(env.w, stage_id::l2_rx, rb.n);
    return rb.n;
}

// The L3 router's first pass over a burst (rx_l3): each frame taken (as
// rx_burst::take: prefetch four ahead, bytes, capture tap), checked,
// parsed to L4 into f[i] and classified into tc[i], its verdict so far in
// o[i]. Out of line, one call per burst: inline in rx_l3, whose admission
// pass holds much more state, the loop kept its byte count, the capture
// pointer and the burst's bounds on the stack (perf annotate).
[[gnu::noinline]] void l3_ingress(rx_burst& rb, parsed_frame* f, std::uint8_t* tc, std::uint16_t* o) noexcept {
    switch_env& env = rb.env;
    port_rt& in = rb.in;
    const nanos now = rb.now;
    const std::uint16_t n = rb.n;
    dpdk::capture* const cap = env.capture;
    std::uint64_t bytes = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
        if (i + 4 < n) { rte_prefetch0(rte_pktmbuf_mtod(rb.pkts[i + 4], void*)); }
        rte_mbuf* const m = rb.pkts[i];
        bytes += rte_pktmbuf_pkt_len(m);
        if (cap != nullptr) [[unlikely]] { cap->tap(in.idx, false, m, now); }
        std::uint16_t vid = 0;
        // As constructed: one copy of 60 bytes, where the constructor wrote
        // its fields one store each (15 stores per frame).
        static constexpr parsed_frame fresh{};
        static_assert(std::is_trivially_copyable_v<parsed_frame>);
        std::memcpy(static_cast<void*>(&f[i]), &fresh, sizeof(parsed_frame));
        std::uint8_t t = 0;
        o[i] = ingress_frame<parse_depth::l4>(env, in, m, now, f[i], t, vid);
        tc[i] = t;
    }
    rb.rx_bytes += bytes;
}

// One RX burst of port `in` through the L3 router, in passes over the
// burst: ingress checks and classification of every frame, one bulk LPM
// lookup per address family (lookup_burst), then per frame, in
// order, the router's verdict and its dispatch. Only the first pass and
// the lookup are burst-wide, and neither changes any state a verdict
// reads (MAC Control frames update the port's pause timers, which only
// its egress reads), so frames are decided and admitted exactly as one
// pass per frame would.
template <bool Given = false>
[[gnu::noinline]] std::uint32_t rx_l3(switch_env& env, port_rt& in, nanos now, rte_mbuf* const* given = nullptr,
                    std::uint16_t k = 0) noexcept {
    constexpr std::uint16_t max_burst = switch_pipeline::max_burst;
    stage_clock sc;
    rx_burst rb(env, in, now, std::bool_constant<Given>{}, given, k);
    const std::uint16_t n = rb.n;
    if (n == 0) { return 0; }
    // The burst's parsed frames: storage for a full burst, a frame constructed
    // for each frame received only.
    alignas(parsed_frame) std::byte fbuf[max_burst * sizeof(parsed_frame)];
    auto* const f = reinterpret_cast<parsed_frame*>(fbuf);
    std::uint8_t tc[max_burst];
    std::uint16_t o[max_burst];
    l3_ingress(rb, f, tc, o);
    sc.lap(env.w, stage_id::ingress, n);
    std::uint32_t lv[max_burst];
    lookup_burst(env.p, rb.pkts, f, o, n, out_pass, lv);
    sc.lap(env.w, stage_id::lpm_bulk, n);
    l3_burst lb;  // the next hop of the burst's last route, when it needed no hash
    for (std::uint16_t i = 0; i < n; ++i) {
        std::uint16_t oi = o[i];
        if (oi == out_pass) { oi = l3_decide(env, in, rb.pkts[i], f[i], tc[i], now, lv[i], lb); }
        rb.template dispatch<Given>(i, oi, tc[i], oi < out_handled || oi == out_flood ? f[i].vlan_count > 0 : false);
    }
    rb.finish();
    sc.lap(env.w, stage_id::route_admit, n);
    return n;
}

std::uint32_t rx_given(switch_env& env, port_rt& in, nanos now, rte_mbuf* const* pkts, std::uint16_t n) noexcept {
    return env.p.mode == fwd_mode::l2 ? rx_l2<true>(env, in, now, pkts, n) : rx_l3<true>(env, in, now, pkts, n);
}

// RSS: another RX queue of one of this worker's own ports.
std::uint32_t rx_queue(switch_env& env, port_rt& in, std::uint16_t q, nanos now) noexcept {
    rte_mbuf* pkts[switch_pipeline::max_burst];
    const std::uint16_t n = dpdk::port_rx_queue(in.b, q, now, pkts, env.p.burst);
    return n == 0 ? 0 : rx_given(env, in, now, pkts, n);
}

// ---- RSS: a queue of another worker's port (see rss_rx in switch_rt.hpp) ----

// The credit r holds goes back to its port's owner (a release, owed there).
void return_credit(switch_pipeline::impl& p, worker_rt& w, rss_rx& r) noexcept {
    for (std::uint8_t g = 0; g < 8; ++g) {
        if (r.credit[g] != 0) { release_tag(p, w, acct_tag(r.port, g), r.credit[g]); }
        r.credit[g] = 0;
    }
}

// A frame only the port's owner may act on: MAC Control (the port's pause
// timers), and in L3 what is not plain forwarding (ARP, ICMP and ICMPv6 with
// ND, frames to the switch's addresses: its neighbour table and answers).
inline bool rss_owner_only(const switch_pipeline::impl& p, const parsed_frame& f, const std::byte* d) noexcept {
    if (f.kind == frame_kind::mac_control) { return true; }
    if (p.mode == fwd_mode::l2 || f.status != parse_status::ok) { return false; }
    if (!f.is_ip()) { return true; }
    if (f.l4_proto == 1 || f.l4_proto == 58) { return true; }
    return f.kind == frame_kind::ipv4 ? p.routes->is_local_v4(f.ip4_dst)
                                      : p.routes->is_local_v6(reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off));
}

// One poll of RSS queue r: first the waiting frames that have their answer
// (in order, up to a burst; a refused one is dropped as the owner drops
// its own), then, only when none waits, a burst from the queue. A frame
// whose PG has credit for it goes on at once; the first without, and every
// frame after it, waits for the owner's charge. The frames that go on run
// the ingress stages as one burst and draw their charge from the credit.
// Then requests for the waiting frames, and credit idle for rss_idle_ns
// goes back to the owner.
std::uint32_t rx_rss(switch_env& env, rss_rx& r, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    port_rt& in = *p.ports[r.port];
    rte_mbuf* go[switch_pipeline::max_burst];
    std::uint16_t n = 0;
    std::array<std::uint64_t, 8> want{};  // credit the frames that go on may draw, per PG
    std::uint32_t work = 0;
    while (r.count != 0 && r.resolved != 0 && n < p.burst) {
        rss_parked& e = r.at(0);
        r.head = (r.head + 1) % rss_rx::park_slots;
        --r.count;
        --r.resolved;
        --r.requested;
        ++work;
        if (e.state == rss_state::granted) {
            want[e.pg] += e.bytes;
            go[n++] = e.m;
            continue;
        }
        ++w.c[in.idx].rx_packets;
        w.c[in.idx].rx_bytes += rte_pktmbuf_pkt_len(e.m);
        if (env.capture != nullptr) { env.capture->tap(in.idx, false, e.m, now); }
        w.c[in.idx].drop(e.state == rss_state::refused_lossy ? drop_reason::lossy_pg_limit
                                                             : drop_reason::headroom_overflow);
        rte_pktmbuf_free(e.m);
    }
    std::uint16_t got = 0;
    if (r.count == 0 && n < p.burst) {
        rte_mbuf* fresh[switch_pipeline::max_burst];
        got = dpdk::port_rx_queue(in.b, r.queue, now, fresh, static_cast<std::uint16_t>(p.burst - n));
        work += got;
        if (got != 0) { r.last_rx = now; }
        for (std::uint16_t i = 0; i < got; ++i) {
            rte_mbuf* const m = fresh[i];
            const std::uint32_t len = rte_pktmbuf_pkt_len(m);
            const parsed_frame f = parse_frame<parse_depth::l3>(data(m), len);
            if (rss_owner_only(p, f, data(m))) [[unlikely]] {
                stage(p, w, in.owner, m, 0, 0, in.idx, in.idx, 0, handoff_kind::rx, 0);
                ++w.st.rss_to_owner;
                continue;
            }
            if (!p.buf) {
                go[n++] = m;
                continue;
            }
            // The PG as the ingress stage will classify it (a frame it drops draws nothing).
            const std::uint8_t pg = in.maps.tc_to_pg[frame_tc(in, f)];
            const std::uint32_t bytes = p.buf->charge_for(len + 4);  // + a VLAN tag the egress may add
            if (r.count == 0 && r.credit[pg] >= want[pg] + bytes) {
                want[pg] += bytes;
                go[n++] = m;
                continue;
            }
            rss_parked& e = r.at(r.count++);
            e = rss_parked{m, bytes, pg, rss_state::waiting};
            ++w.st.rss_parked;
        }
    }
    if (n != 0) { (void)rx_given(env, in, now, go, n); }
    if (r.requested < r.count) {  // one request per waiting frame, in order
        worker_rt::peer& to = w.peers[in.owner];
        while (r.requested < r.count && to.rss_out < worker_rt::rss_slots) {
            const rss_parked& e = r.at(r.requested);
            if (!to.rss_req->push(credit{acct_tag(in.idx, e.pg), e.bytes})) { break; }
            ++r.requested;
            ++to.rss_out;
            ++w.st.rss_requests;
        }
    } else if (r.count == 0 && got == 0 && now.v - r.last_rx.v > worker_rt::rss_idle_ns) {
        return_credit(p, w, r);  // idle: the credit goes back to the owner
    }
    return work;
}

// ---- per port: link changes, deadlines ----

// The worker applies a link change (see set_link in the header).
[[gnu::noinline]] void link_change(switch_env& env, port_rt& eg, bool up, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    switch_event se;
    se.ns = now.v;
    se.port = eg.idx;
    if (up) {
        __atomic_store_n(&eg.link_down, false, __ATOMIC_RELAXED);
        se.what = switch_event::kind::link_up;
        (void)w.events.push(se);
        return;
    }
    // Everything the port holds goes: queued frames (their buffer released),
    // frames staged for TX (dequeued, never sent: tx_flushed, as at
    // shutdown) and a pending PFC frame.
    const std::uint16_t staged = eg.n_staged;
    w.c[eg.idx].drops[static_cast<std::size_t>(drop_reason::link_down)] += eg.discard_all(env) + staged;
    if (p.mode == fwd_mode::l2) {
        w.table->flush_port(eg.idx);
        for (std::size_t k = 0; k < w.peers.size(); ++k) {  // and the other workers' copies
            if (k == w.id) { continue; }
            learn_msg lm;
            lm.port = eg.idx;
            lm.flush = 1;
            if (!w.peers[k].learns->push(lm)) { ++w.st.learns_lost; }
        }
    }
    if (w.neigh) {  // neighbours behind the port are forgotten; frames waiting for them dropped
        w.neigh->flush_port(eg.idx, [&](const held_frame& h) noexcept { drop_held(env, h, drop_reason::link_down); });
    }
    __atomic_store_n(&eg.link_down, true, __ATOMIC_RELAXED);
    se.what = switch_event::kind::link_down;
    (void)w.events.push(se);
}

// After its egress step (one worker): the port stays active while frames
// wait for TX, a PFC frame is pending or something is due now; otherwise it
// waits in eg_timers for its own deadline, or for a mark.
void settle_egress(switch_env& env, port_rt& eg, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    const std::size_t i = eg.idx;
    if (eg.n_staged == 0 && eg.pfc_pending == nullptr) {
        const nanos d = eg.deadline(env, now);
        if (d > now) {
            p.eg_active[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
            p.eg_timers.set(static_cast<std::uint32_t>(i), d);  // nanos::max(): no timer
            return;
        }
    }
    p.eg_timers.set(static_cast<std::uint32_t>(i), nanos::max());
}

// ---- the poll's steps ----

// Ingress: the RX bursts of this worker's ports. Tracking (virtual time,
// one worker): the port I/O flags the ports with frames
// (port_io::rx_pending), visited in port order, a port's flag cleared once
// its RX ring is empty. Otherwise every owned port is polled.
std::uint32_t ingress_step(switch_env& env, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    std::uint32_t work = 0;
    auto rx_step = [&](port_rt& in) noexcept {
        work += p.mode == fwd_mode::l2 ? rx_l2(env, in, now) : rx_l3(env, in, now);
        mark_egress(p, in.idx);  // a PFC frame in changes its pauses
    };
    if (p.track) {
        std::uint64_t* const pend = p.ports[w.ports[0]]->b.io.rx_pending;
        for (std::size_t wi = 0; wi < p.eg_active.size(); ++wi) {
            for (std::uint64_t bits = pend[wi]; bits != 0; bits &= bits - 1) {
                port_rt& in = *p.ports[wi * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
                if (in.b.credit != nullptr && in.b.credit->take_news()) [[unlikely]] { mark_egress(p, in.idx); }
                if (dpdk::port_rx_maybe(in.b)) { rx_step(in); }
                if (!dpdk::port_rx_maybe(in.b)) { pend[wi] &= ~(std::uint64_t{1} << (in.idx & 63)); }
            }
        }
    } else {
        for (const std::uint16_t pi : w.ports) {
            port_rt& in = *p.ports[pi];
            if (dpdk::port_rx_maybe(in.b)) { rx_step(in); }
        }
    }
    // RSS: the other queues of its ports it polls, and other workers' port queues.
    for (const auto& [pi, q] : w.extra_rx) { work += rx_queue(env, *p.ports[pi], q, now); }
    for (rss_rx& r : w.rss) { work += rx_rss(env, r, now); }
    return work;
}

// One port's egress step: a link change from the control thread applied
// here, on the owner, then the port's drain.
inline std::uint32_t egress_step(switch_env& env, port_rt& eg, nanos now) noexcept {
    if ((__atomic_load_n(&eg.link_req, __ATOMIC_RELAXED) != 0) == eg.link_down) [[unlikely]] {
        link_change(env, eg, eg.link_down, now);
    }
    stage_clock sc;
    std::uint32_t sent = eg.drain(env, now, env.p.burst);
    // Several workers: a port's worker takes frames from the others as well
    // as from its own RX, more than one burst per poll; a drain that sent a
    // full burst sends a second (RSS bench, 74 B, plain L3 over two uplinks:
    // 9.8 -> 13.6 Mpps, its tail drops gone). One worker keeps one burst
    // per poll (virtual time's reports unchanged).
    if (env.p.multi && sent == env.p.burst) { sent += eg.drain(env, now, env.p.burst); }
    sc.lap(env.w, stage_id::drain, sent);
    return sent;
}

// Egress: every owned port, or (tracking) the active ports in port order (a
// port marked during the loop is visited in this poll when it comes later,
// in the next otherwise, as when every port is visited), each settling
// afterwards: it stays active while something is due now, else waits in
// eg_timers.
std::uint32_t egress_all(switch_env& env, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    std::uint32_t work = 0;
    if (!p.track) {
        for (const std::uint16_t pi : env.w.ports) { work += egress_step(env, *p.ports[pi], now); }
        return work;
    }
    p.eg_timers.pop_due(now, [&](std::uint32_t i) noexcept { mark_egress(p, i); });
    const std::uint32_t seq = __atomic_load_n(&p.link_seq, __ATOMIC_ACQUIRE);
    if (seq != p.link_seen) [[unlikely]] {
        p.link_seen = seq;
        for (std::size_t i = 0; i < p.ports.size(); ++i) { mark_egress(p, i); }
    }
    for (std::size_t wi = 0; wi < p.eg_active.size(); ++wi) {
        std::uint64_t ahead = p.eg_active[wi];
        while (ahead != 0) {
            const auto bit = static_cast<unsigned>(std::countr_zero(ahead));
            port_rt& eg = *p.ports[wi * 64 + bit];
            work += egress_step(env, eg, now);
            settle_egress(env, eg, now);
            ahead = bit == 63 ? 0 : p.eg_active[wi] & (~std::uint64_t{0} << (bit + 1));
        }
    }
    return work;
}

// Neighbour timers (retransmissions, failures, aging), every millisecond;
// then a listing another thread asked for (neighbors_live).
inline void neighbour_step(switch_env& env, nanos now) noexcept {
    worker_rt& w = env.w;
    if (!w.neigh || now < w.neigh_next) [[likely]] { return; }
    w.neigh_next = now + neigh_poll_interval;
    w.neigh->poll(
        now, [&](const neigh_entry& e, neigh_request kind) noexcept { send_neigh_request(env, e, kind); },
        [&](const held_frame& h) noexcept { unresolved_held(env, h, now); });
    auto& box = w.neigh_list;
    const std::uint32_t req = __atomic_load_n(&box.req, __ATOMIC_ACQUIRE);
    if (req != box.done) [[unlikely]] {
        box.n = w.neigh->list(box.rows);
        __atomic_store_n(&box.done, req, __ATOMIC_RELEASE);
    }
}

}  // namespace

// The earliest time at which poll() has work of its own (see the header).
// Ports whose TX refused frames are left to the caller (their retry time is
// the TX ring's, which only the port I/O knows).
nanos switch_pipeline::next_deadline(nanos now) noexcept {
    impl& p = *_p;
    worker_rt& w = *p.workers[0];  // virtual time runs one worker
    switch_env env{p, w, _capture};
    nanos d = nanos::max();
    if (w.neigh && w.neigh->size() != 0) { d = std::max(now, w.neigh_next); }
    if (!p.track) {
        for (auto& pp : p.ports) { d = std::min(d, pp->deadline(env, now)); }
        return d;
    }
    // The active ports, and the others' deadlines kept in eg_timers.
    for (std::size_t wi = 0; wi < p.eg_active.size(); ++wi) {
        for (std::uint64_t bits = p.eg_active[wi]; bits != 0; bits &= bits - 1) {
            d = std::min(d, p.ports[wi * 64 + static_cast<std::size_t>(std::countr_zero(bits))]->deadline(env, now));
        }
    }
    return std::min(d, p.eg_timers.top_time());
}

std::uint32_t switch_pipeline::poll(nanos now) noexcept { return poll_worker(0, now); }

// One worker's poll: the stages in order.
std::uint32_t switch_pipeline::poll_worker(std::size_t wk, nanos now) noexcept {
    impl& p = *_p;
    worker_rt& w = *p.workers[wk];
    switch_env env{p, w, _capture};
    w.last_now = now;
    w.waits_on_peer = false;  // set by a handoff queue found full (flush_stage)
    std::uint32_t work = 0;
    if (p.multi) {  // frames, credits, learns from the other workers
        stage_clock sc;
        const std::uint32_t in = drain_in(env, now);
        sc.lap(w, stage_id::handoff_in, in);
        work += in;
    }
    work += ingress_step(env, now);  // RX -> verdict -> admission
    if (p.multi) {                   // this poll's frames for the other workers
        stage_clock sc;
        flush_stages(env);
        sc.lap(w, stage_id::handoff_out, 0);
    }
    neighbour_step(env, now);        // ARP/ND timers
    work += egress_all(env, now);    // drain: PFC, watchdog, schedule, shape, TX
    if (p.multi && !w.owed_list.empty()) { send_credits(p, w); }  // buffer released for their ports
    // The buffer state complete for whoever reads it next (telemetry, the
    // fabric between polls): this poll's last run of admissions applied.
    if (p.buf) { p.buf->settle(); }
    return work;
}

// ---- shutdown ----

void switch_pipeline::release_all() noexcept {
    if (!_p) { return; }
    impl& p = *_p;
    // The workers have stopped. Frames still between them are taken as their
    // owner would take them (queued, or parked for a neighbour), then
    // everything queued is flushed as with one worker.
    if (p.multi) {
        for (int guard = 0; guard < 100000; ++guard) {
            bool busy = false;
            for (auto& w : p.workers) {
                for (std::size_t k = 0; k < w->peers.size(); ++k) {
                    if (k == w->id) { continue; }
                    if (w->peers[k].n_stage != 0 || !w->peers[k].stash.empty()) {
                        flush_stage(p, *w, k);
                        busy = true;
                    }
                }
            }
            for (auto& w : p.workers) {
                switch_env env{p, *w, nullptr};
                if (drain_in(env, w->last_now) != 0) { busy = true; }
            }
            if (!busy) { break; }
        }
    }
    // RSS: frames still waiting for credit are freed (as frames left in an RX
    // ring), and the credit every worker holds goes back to its owners.
    for (auto& w : p.workers) {
        for (rss_rx& r : w->rss) {
            for (; r.count != 0; --r.count) {
                rte_pktmbuf_free(r.at(0).m);
                r.head = (r.head + 1) % rss_rx::park_slots;
            }
            r.requested = r.resolved = 0;
            return_credit(p, *w, r);
        }
    }
    for (auto& w : p.workers) {
        if (w->neigh) {
            switch_env env{p, *w, nullptr};
            w->neigh->drop_all_held([&](const held_frame& h) noexcept { drop_held(env, h, drop_reason::neigh_unresolved); });
        }
    }
    for (auto& pp : p.ports) {
        switch_env env{p, *p.workers[pp->owner], nullptr};
        (void)pp->discard_all(env);
    }
    // What those releases kept as RSS credit (release_frame) goes home too.
    for (auto& w : p.workers) {
        for (rss_rx& r : w->rss) { return_credit(p, *w, r); }
    }
    if (p.multi) {  // buffer owed between workers goes home
        for (int guard = 0; guard < 100000; ++guard) {
            bool busy = false;
            for (auto& w : p.workers) {
                if (!w->owed_list.empty()) {
                    send_credits(p, *w);
                    busy = true;
                }
            }
            for (auto& w : p.workers) {
                switch_env env{p, *w, nullptr};
                (void)drain_in(env, w->last_now);
            }
            if (!busy) { break; }
        }
    }
}

}  // namespace rocelab::sw

