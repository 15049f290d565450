// egress_port.hpp - one switch port's egress: the stage between the
// forwarding decision and tx_burst (a stage of switch_pipeline.cpp).
//
//   admit(frame)  ->  [link] -> [VLAN rewrite] -> [PFC watchdog drop]
//                 ->  [WRED/ECN at enqueue] -> [ingress charge] -> 8 queues (tail drop)
//   drain(now)    ->  [PFC/PAUSE TX] -> [watchdog poll] -> [strict + DWRR,
//                     skipping paused / credit-less queues] -> [WRED/ECN at dequeue]
//                 ->  [shaper at the port's rate] -> tx_burst
//
// admit() is the only way a frame joins an egress queue: frames the
// switch forwards (unicast, flood copies, frames another worker handed
// over, frames that waited for their neighbour) and frames it makes (ARP
// requests, Neighbor Solicitations, ICMP errors, ARP/ND/echo replies) take
// the same checks in the same order. A refused frame is freed, counted by
// name on this port (link_down, flood_nombuf for a VLAN tag that does not
// fit, pfcwd, wred, tail_drop) and its ingress charge released.
//
// The ingress charge is the ingress port's (its PG in the MMU): a frame
// from a port this worker owns is charged here, after the egress checks and
// just before the queue (`charge_from`); a frame from another worker's port
// arrives charged there (tag), since only a port's owner writes its PGs
// (worker_link.hpp).
//
// The port state is plain data (qos/ classes, no DPDK types but the mbufs
// it holds); what it needs from the worker that owns it comes through
// `Env` (switch_env in switch_rt.hpp):
//   env.c(port)                 that worker's counters for a port
//   env.buf()                   the MMU (nullptr: no buffer accounting)
//   env.charge(tag, m, len)     charge the ingress (port, PG) the tag names: the tag, or tag_refused (refused, counted, freed)
//   env.release(tag, bytes)     release a charge (here, or owed to its port's owner)
//   env.lossless(tag)           the frame belongs to a lossless PG (never WRED-dropped)
//   env.mark(port)              the port may have egress work (virtual-time port tracking)
//   env.pool(), env.cap()       mbufs for PFC frames; the capture (or nullptr)
//   env.event(e)                a line for the control thread (watchdog storms)
//   env.wred_at_enqueue()       ROCELAB ecn_at: enqueue
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>

#include "config/switch_cfg.hpp"
#include "core/endian.hpp"
#include "core/rng.hpp"
#include "dpdk/capture.hpp"
#include "dpdk/port_io.hpp"
#include "port_burst.hpp"
#include "proto/ecn.hpp"
#include "proto/mac_control.hpp"
#include "qos/credit.hpp"
#include "qos/egress_queues.hpp"
#include "qos/pause_timer.hpp"
#include "qos/pfc_tx.hpp"
#include "qos/pfc_watchdog.hpp"
#include "qos/scheduler.hpp"
#include "qos/shaper.hpp"
#include "qos/wred.hpp"
#include "switch/counters.hpp"
#include "switch/frame_meta.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::sw {

inline std::byte* data(rte_mbuf* m) noexcept { return rte_pktmbuf_mtod(m, std::byte*); }

// Remove the outer 802.1Q tag in place (MACs move forward by 4 bytes).
inline void vlan_strip(rte_mbuf* m) noexcept {
    std::byte* d = data(m);
    std::memmove(d + 4, d, 12);
    rte_pktmbuf_adj(m, 4);
}

// Insert (or rewrite) an 802.1Q tag with the given PCP and VID.
inline bool vlan_set(rte_mbuf* m, bool tagged_now, std::uint8_t pcp, std::uint16_t vid) noexcept {
    if (!tagged_now) {
        if (rte_pktmbuf_headroom(m) < 4 || rte_mbuf_refcnt_read(m) > 1) { return false; }
        std::byte* d = reinterpret_cast<std::byte*>(rte_pktmbuf_prepend(m, 4));
        if (d == nullptr) { return false; }
        std::memmove(d, d + 4, 12);
        store_be16(d + 12, 0x8100);
    }
    std::byte* d = data(m);
    store_be16(d + 14, static_cast<std::uint16_t>((pcp & 7u) << 13 | (vid & 0x0FFFu)));
    return true;
}

// The frame's VLAN tag as admit() finds it.
enum class vlan_in : std::uint8_t {
    untagged,  // as received without a tag (or made by the switch): tag it for a tagged port
    tagged,    // as received with a tag: rewrite it, or strip it for an untagged port
    egress,    // already rewritten for this port (by the worker that handed it over)
};

// No ingress charge to take at admission (see admit()).
inline constexpr std::uint16_t no_charge = 0xFFFF;

struct egress_port {
    port_binding b;
    std::uint16_t idx = 0;
    vlan_mode vmode = vlan_mode::untagged;
    std::uint16_t vid = 0;
    bool link_down = false;  // link state as the owner applied it (read per frame by admit())
    qos_maps maps{};
    scheduler sched;
    shaper shp;
    pause_timer pause;                                     // PFC/PAUSE received on this port
    egress_queues<rte_mbuf*, mbuf_link> eq;               // linked through the frames: no slots to run out of
    using eq_run = egress_queues<rte_mbuf*, mbuf_link>::run_result;
    std::array<rte_mbuf*, switch_pipeline::max_burst> staged{};  // dequeued, not yet taken by tx_burst
    std::array<std::uint32_t, switch_pipeline::max_burst> staged_len{};
    std::uint16_t n_staged = 0;
    bool backlog = false;  // eligible frames were left after the last drain
    // lossless classes
    pfc_tx pfc_gen;                                   // XOFF/XON (or PAUSE) sent upstream
    std::array<std::uint8_t, 256> xoff_pg_to_prio{};  // xoff PG bitmap -> priorities to pause
    rte_mbuf* pfc_pending = nullptr;                  // a PFC frame tx_burst has not taken yet
    std::array<std::unique_ptr<pfc_watchdog>, 8> wd{};  // per egress queue (pfcwd_sw_enable)
    std::uint8_t wd_drop_mask = 0;                    // queues stormed with action drop
    std::uint8_t wd_ignore_mask = 0;                  // queues whose pauses are ignored (drop/forward)
    nanos wd_next{0};
    nanos wd_interval{0};
    // Congestion point (WRED_PROFILE bound by QUEUE): per egress queue.
    std::array<wred_cfg, 8> wred{};
    std::uint8_t wred_mask = 0;  // queues with a profile (marking and/or dropping)
    rng wred_rng;                // seeded from ROCELAB seed and the port index

    egress_port(const port_cfg& pc, const port_binding& pb, std::uint16_t i, mbuf_link link)
        : b(pb),
          idx(i),
          vmode(pc.vlan),
          vid(pc.vlan_id),
          maps(pc.maps),
          sched(pc.sched),
          shp(pb.shaped ? pb.line_rate : bits_per_sec{0}, bytes{16 * 1024}),
          pause(pc.pfc_enable),
          eq(pc.limits, link),
          pfc_gen(pc.fc_mode, pb.line_rate, pc.pfc_quanta),
          wred(pc.wred),
          wred_rng(0x5EED0000u + i) {
        for (int q = 0; q < 8; ++q) {
            if (wred[q].enabled) { wred_mask |= static_cast<std::uint8_t>(1u << q); }
        }
        for (unsigned x = 0; x < 256; ++x) {
            std::uint8_t prios = 0;
            for (int pr = 0; pr < 8; ++pr) {
                // Priority pr <-> TC pr (PFC priority = 802.1p = TC); pause it when
                // its PG is in XOFF and PFC is enabled for it on this port.
                if ((pc.pfc_enable >> pr & 1u) != 0 && (x >> pc.maps.tc_to_pg[pr] & 1u) != 0) {
                    prios |= static_cast<std::uint8_t>(1u << pr);
                }
            }
            // PAUSE mode: any lossless PG in XOFF pauses the link.
            if (pc.fc_mode == flow_ctrl_mode::pause && x != 0) { prios = 0xFF; }
            // Credit mode: the port gives credits instead of pausing its peer.
            xoff_pg_to_prio[x] = pb.credit_port ? 0 : prios;
        }
        if (pc.wd.enabled) {
            for (int q = 0; q < 8; ++q) {
                if ((pc.pfcwd_queues >> q & 1u) != 0) {
                    wd[q] = std::make_unique<pfc_watchdog>(pc.wd, i, static_cast<std::uint8_t>(q));
                }
            }
            wd_interval = pc.wd.poll_interval;
        }
    }

    // ---- admission ----

    // Admit frame x of traffic class tc to this port's queue for tc (on the
    // worker that owns this port). `tag` is what the queue entry carries
    // (the ingress (port, PG) charged, an uncharged flood copy, a frame the
    // switch made, or 0 without accounting). With charge_from = an ingress
    // port (one this worker owns) the charge is taken here, after the
    // egress checks: `tag` is then the tag it will have; otherwise the
    // frame arrives as charged as it will be, and a refusal releases `tag`.
    // Returns false only when the ingress buffer refused the frame (counted
    // on the ingress port); every other refusal is counted here. Either way
    // the frame is no longer the caller's.
    template <class Env>
    [[gnu::always_inline]] inline bool admit(Env& env, rte_mbuf* x, std::uint8_t tc, vlan_in v, std::uint32_t tag,
                                             std::uint16_t charge_from = no_charge) noexcept {
        if (link_down) [[unlikely]] { return refuse(env, x, tag, charge_from, drop_reason::link_down); }
        if (v != vlan_in::egress && (v == vlan_in::tagged || vmode == vlan_mode::tagged)) [[unlikely]] {
            if (!rewrite_vlan(x, tc, v == vlan_in::tagged)) {
                return refuse(env, x, tag, charge_from, drop_reason::flood_nombuf);
            }
        }
        const int q = maps.tc_to_queue[tc];
        if ((wd_drop_mask >> q & 1u) != 0) [[unlikely]] {
            wd[q]->count_rx_drop();
            return refuse(env, x, tag, charge_from, drop_reason::pfcwd);
        }
        if (env.wred_at_enqueue() && (wred_mask >> q & 1u) != 0) [[unlikely]] {
            const std::uint64_t depth = eq.depth_bytes(q).v;
            if (depth > wred[q].kmin.v && !wred_stage(env, q, x, depth, tag)) {
                return refuse(env, x, tag, charge_from, drop_reason::count);  // counted by wred_stage
            }
        }
        const std::uint32_t xlen = rte_pktmbuf_pkt_len(x);
        if (charge_from != no_charge) {
            tag = env.charge(tag, x, xlen);
            if (tag == tag_refused) [[unlikely]] { return false; }
        }
        env.mark(idx);
        if (!eq.enqueue(q, x, xlen, tag)) [[unlikely]] {
            env.c(idx).drop(drop_reason::tail_drop);
            env.release(tag, env.buf() ? env.buf()->charge_for(xlen) : 0);
            rte_pktmbuf_free(x);
        }
        return true;
    }

    // The VLAN rewrite at egress: tag (PCP = tc) for a tagged port, strip for
    // an untagged one. False when a tag cannot be inserted (no headroom, or
    // the mbuf is shared by a flood copy).
    [[gnu::noinline]] bool rewrite_vlan(rte_mbuf* x, std::uint8_t tc, bool tagged) noexcept {
        if (vmode == vlan_mode::tagged) { return vlan_set(x, tagged, tc, vid); }
        if (tagged) { vlan_strip(x); }
        return true;
    }

    // A frame admit() refuses (reason counted here unless drop_reason::count).
    template <class Env>
    [[gnu::noinline]] bool refuse(Env& env, rte_mbuf* x, std::uint32_t tag, std::uint16_t charge_from,
                                  drop_reason r) noexcept {
        if (r != drop_reason::count) { env.c(idx).drop(r); }
        if (charge_from == no_charge) { env.release(tag, env.buf() ? env.buf()->charge_for(rte_pktmbuf_pkt_len(x)) : 0); }
        rte_pktmbuf_free(x);
        return true;
    }

    // ---- the congestion point: WRED/ECN (qos/wred.hpp, proto/ecn.hpp) ----
    // For a frame leaving queue q (default; HPCC ns-3 and ns3-rdma evaluate
    // at dequeue, so the mark is not delayed by the queue it describes) or,
    // with ROCELAB ecn_at: enqueue, for a frame about to join it. `depth` is
    // the queue's instantaneous depth in bytes: what is left behind the
    // frame at dequeue, what it finds at enqueue. Callers only call it above
    // Kmin (the common case never touches the frame). It reads the frame's
    // ECN field (behind up to 3 VLAN tags), draws from the port's seeded
    // rng, and marks ECT(0)/ECT(1) as CE (IPv4 checksum updated
    // incrementally, IPv6 traffic class), or tells the caller to drop:
    // Not-ECT frames (and non-IP frames) only when the profile enables WRED
    // drop. Counters per queue: ecn_marked, wred_dropped (the latter also as
    // drops[drop_wred]). A frame of a lossless PG (env.lossless(tag)) is
    // never dropped: a drop decision passes it (wred_lossless_kept), since
    // a lossless frame leaves only by transmission, link down or the PFC
    // watchdog. Returns false when the caller must free the frame.
    template <class Env>
    [[gnu::noinline]] bool wred_stage(Env& env, int q, rte_mbuf* m, std::uint64_t depth, std::uint32_t tag) noexcept {
        std::byte* d = data(m);
        const std::uint32_t len = rte_pktmbuf_data_len(m);
        const std::uint8_t ecn = frame_ecn(d, len);
        const bool ect = ecn != 0xFF && ecn_capable(ecn);
        port_counters& c = env.c(idx);
        switch (wred[q].decide(depth, ect, wred_rng)) {
            case wred_verdict::pass:
                return true;
            case wred_verdict::mark:
                if (mark_ce(d, len) == ce_mark_result::marked) { ++c.ecn_marked[q]; }
                return true;
            case wred_verdict::drop:
                break;
        }
        if (env.lossless(tag)) {
            ++c.wred_lossless_kept;
            return true;
        }
        ++c.wred_dropped[q];
        c.drop(drop_reason::wred);
        return false;
    }

    // ---- drain ----

    // The buffer a drain releases, per run of frames from one (ingress port,
    // PG) (a tag): the open run, and the runs closed before it, to release
    // in order (release_noted). A run of uncharged flood copies releases
    // nothing (checked per run, not per frame: the per-frame path is the
    // tag compare it always had).
    struct release_notes {
        struct note {
            std::uint32_t tag;
            std::uint64_t bytes;
        };
        std::array<note, switch_pipeline::max_burst> notes;  // not initialised: `count` are written
        unsigned count = 0;
        std::uint32_t tag = 0;     // the open run's
        std::uint64_t bytes = 0;
        // A frame's charge; a new tag closes the open run. The caller makes room first.
        void add(std::uint32_t t, std::uint64_t c) noexcept {
            if (t != tag) {
                close();
                tag = t;
            }
            bytes += c;
        }
        void close() noexcept {
            if (bytes != 0) { notes[count++] = note{tag, bytes}; }
            bytes = 0;
        }
    };
    template <class Env>
    void release_noted(Env& env, release_notes& rn) noexcept {
        for (unsigned i = 0; i < rn.count; ++i) { env.release(rn.notes[i].tag, rn.notes[i].bytes); }
        rn.count = 0;
    }

    // A run of queue q that calls nothing (drain: no capture, no credits, no
    // frame above the queue's WRED Kmin): every frame is staged, at most
    // `room`, the caller having left `room` free notes. Out of line, with
    // its state in locals: inline in drain, with the calls of the other
    // runs in the same loop, the compiler kept the run's counts in memory,
    // an add through the stack per frame (perf: 11 % of drain at 74 B).
    template <bool Shaped>
    [[gnu::noinline]] eq_run run_lean(int q, std::uint32_t room, bool strict, std::int64_t& deficit_io,
                                      mmu::cells cells, bool acct, nanos now, release_notes& rn) noexcept {
        std::int64_t deficit = deficit_io;
        std::uint32_t tag0 = rn.tag;
        std::uint64_t bytes0 = rn.bytes;
        unsigned count = rn.count;
        std::uint16_t ns = n_staged;
        const eq_run run = eq.dequeue_run(
            q, room,
            [&](std::uint32_t head_len) noexcept {
                return (!Shaped || shp.conforms(now)) && (strict || deficit >= static_cast<std::int64_t>(head_len));
            },
            [&](rte_mbuf* item, std::uint32_t len, std::uint32_t tag, std::uint64_t) noexcept {
                deficit -= len;
                if (acct) [[unlikely]] {
                    if (tag != tag0) {
                        if (bytes0 != 0) { rn.notes[count++] = release_notes::note{tag0, bytes0}; }
                        bytes0 = 0;
                        tag0 = tag;
                    }
                    bytes0 += cells(len);
                }
                if constexpr (Shaped) { shp.on_send(now, len); }
                staged_len[ns] = len;
                staged[ns++] = item;
                return true;
            });
        deficit_io = deficit;
        rn.tag = tag0;
        rn.bytes = bytes0;
        rn.count = count;
        n_staged = ns;
        return run;
    }


    // The port's egress step at `now`: PFC/PAUSE out for its ingress PGs in
    // XOFF, the watchdog when due, then up to `burst` frames scheduled,
    // shaped and handed to tx_burst. Returns the frames sent. (Link state
    // changes are applied by the caller first: they concern the whole port.)
    template <class Env>
    std::uint32_t drain(Env& env, nanos now, std::uint16_t burst) noexcept {
        if (link_down) [[unlikely]] { return 0; }
        mmu* const buf = env.buf();
        if (buf != nullptr) [[unlikely]] { send_pfc(env, now); }
        if (wd_interval.v > 0 && now >= wd_next) [[unlikely]] { poll_watchdog(env, now); }
        if (n_staged == 0 && eq.nonempty_mask() == 0) { return 0; }
        port_counters& c = env.c(idx);
        dpdk::capture* const cap = env.cap();
        std::uint8_t paused = static_cast<std::uint8_t>(pfc_paused_queues(pause.paused_mask(now), maps.pfc_prio_to_queue) &
                                                        ~wd_ignore_mask);
        credit_tx* const cr = b.credit;  // credit mode: queues wait for credits as for a pause
        if (cr != nullptr) [[unlikely]] { paused |= credit_blocked(*cr, eq.nonempty_mask()); }
        // The line sat idle for 200 us while frames were eligible: the lcore
        // (or the device) is not keeping up with the configured rate.
        if (backlog && b.shaped && now - shp.finish_time() > nanos{200000}) { ++c.tx_behind; }
        // Buffer released per run of frames from one (ingress port, PG):
        // release() is linear in the bytes, and XON is decided from the state
        // after the run (use only falls while dequeuing, so the decision is
        // the one the run's last frame would have made; the PFC frame goes
        // out at the next poll either way). The runs are noted as frames
        // leave and released, in order, after the loop (which reads nothing
        // of the MMU), or when the notes are full.
        release_notes rn;
        const mmu::cells cells = buf != nullptr ? buf->charger() : mmu::cells{};
        const bool shaped = b.shaped;
        const bool wred_at_enqueue = env.wred_at_enqueue();
        const bool lean_port = cap == nullptr && cr == nullptr;
        while (n_staged < burst) {
            const std::uint8_t nonempty = eq.nonempty_mask();
            if ((nonempty & static_cast<std::uint8_t>(~paused)) == 0) { break; }
            if (shaped && !shp.conforms(now)) { break; }
            const int q = sched.pick(nonempty, paused, [&](int qq) noexcept { return eq.head_len(qq); });
            if (q < 0) { break; }
            // Serve q for as long as pick() would return it again: a strict
            // queue until it is empty (nothing is enqueued during this loop,
            // so no higher strict queue can appear), a DWRR queue while its
            // deficit covers the head frame. Same order as a pick per frame.
            const bool strict = (sched.strict_mask() >> q & 1u) != 0;
            // The WRED/ECN stage hook at dequeue (queues with a profile only).
            const bool wred_q = (wred_mask >> q & 1u) != 0 && !wred_at_enqueue;
            const std::uint64_t kmin = wred[q].kmin.v;
            const auto room = static_cast<std::uint32_t>(burst - n_staged);
            // The DWRR deficit as the run spends it (charged once, after).
            std::int64_t deficit = sched.deficit(q);
            eq_run run;
            if (lean_port && (!wred_q || eq.depth_bytes(q).v - eq.head_len(q) <= kmin)) [[likely]] {
                // No frame of the run can reach WRED (depth only falls during
                // a run, so its first frame decides), none is captured or
                // waits for credits: the run calls nothing (run_lean).
                if (rn.count + room > rn.notes.size()) [[unlikely]] { release_noted(env, rn); }
                run = shaped ? run_lean<true>(q, room, strict, deficit, cells, buf != nullptr, now, rn)
                             : run_lean<false>(q, room, strict, deficit, cells, buf != nullptr, now, rn);
            } else {
                const auto more = [&](std::uint32_t head_len) noexcept {
                    return (!shaped || shp.conforms(now)) && (strict || deficit >= static_cast<std::int64_t>(head_len)) &&
                           (cr == nullptr || cr->can_send(q, head_len));
                };
                run = eq.dequeue_run(q, room, more,
                                     [&](rte_mbuf* item, std::uint32_t len, std::uint32_t tag,
                                         std::uint64_t depth) noexcept {
                    deficit -= len;
                    if (buf != nullptr) [[unlikely]] {
                        if (rn.count == rn.notes.size()) [[unlikely]] { release_noted(env, rn); }  // WRED drops: not staged
                        rn.add(tag, cells(len));
                    }
                    if (wred_q) [[unlikely]] {
                        if (depth > kmin && !wred_stage(env, q, item, depth, tag)) {
                            rte_pktmbuf_free(item);
                            return false;
                        }
                    }
                    if (shaped) { shp.on_send(now, len); }
                    if (cr != nullptr) [[unlikely]] { cr->on_send(q, len); }
                    if (cap != nullptr) [[unlikely]] { cap->tap(idx, true, item, now); }
                    staged_len[n_staged] = len;
                    staged[n_staged++] = item;
                    return true;
                });
            }
            sched.charge(q, static_cast<std::uint32_t>(run.bytes));
            if (cr != nullptr && !eq.empty(q) && !cr->can_send(q, eq.head_len(q))) [[unlikely]] {
                paused = static_cast<std::uint8_t>(paused | (1u << q));  // out of credits: as if paused
                ++cr->waits;
            }
        }
        if (rn.count == rn.notes.size()) [[unlikely]] { release_noted(env, rn); }
        rn.close();
        release_noted(env, rn);
        backlog = (eq.nonempty_mask() & static_cast<std::uint8_t>(~paused)) != 0;
        if (n_staged == 0) { return 0; }
        const std::uint16_t sent = dpdk::port_tx(b, now, staged.data(), n_staged);
        std::uint64_t txb = 0;
        for (std::uint16_t i = 0; i < sent; ++i) { txb += staged_len[i]; }
        c.tx_packets += sent;
        c.tx_bytes += txb;
        if (sent < n_staged) {
            ++c.tx_ring_full;
            std::copy(staged.begin() + sent, staged.begin() + n_staged, staged.begin());
            std::copy(staged_len.begin() + sent, staged_len.begin() + n_staged, staged_len.begin());
        }
        n_staged = static_cast<std::uint16_t>(n_staged - sent);
        return sent;
    }

    // When this port next has work of its own: a PFC frame to send or
    // refresh, the watchdog, a queue the shaper or a pause holds (<= now:
    // work now; nanos::max(): none until something arrives). Not included:
    // frames staged because TX refused them (the port I/O knows when its
    // ring frees).
    template <class Env>
    nanos deadline(Env& env, nanos now) noexcept {
        nanos d = nanos::max();
        if (env.buf() != nullptr && pfc_pending == nullptr) {
            d = std::min(d, pfc_gen.due(now, xoff_pg_to_prio[env.buf()->xoff_pgs(idx)]));
        }
        if (wd_interval.v > 0) { d = std::min(d, wd_next); }
        const std::uint8_t nonempty = eq.nonempty_mask();
        if (n_staged != 0 || nonempty == 0) { return d; }
        std::uint8_t paused = static_cast<std::uint8_t>(
            pfc_paused_queues(pause.paused_mask(now), maps.pfc_prio_to_queue) & ~wd_ignore_mask);
        // A queue waiting for credits has no deadline: the credits' arrival marks the port.
        if (b.credit != nullptr) [[unlikely]] { paused |= credit_blocked(*b.credit, nonempty); }
        if ((nonempty & static_cast<std::uint8_t>(~paused)) != 0) {
            d = std::min(d, b.shaped ? std::max(now, shp.next_send_time()) : now);
        }
        if ((nonempty & paused) != 0) { d = std::min(d, pause.next_deadline(now)); }
        return d;
    }

    // Credit mode: the queues among `nonempty` whose head frame the port
    // holds no credits for (qos/credit.hpp; queue q is the sender's class q).
    std::uint8_t credit_blocked(const credit_tx& cr, std::uint8_t nonempty) const noexcept {
        std::uint8_t m = 0;
        for (std::uint8_t bits = nonempty; bits != 0; bits = static_cast<std::uint8_t>(bits & (bits - 1))) {
            const int q = std::countr_zero(bits);
            if (!cr.can_send(q, eq.head_len(q))) { m = static_cast<std::uint8_t>(m | (1u << q)); }
        }
        return m;
    }

    // ---- discarding (watchdog drop, link down, shutdown) ----

    // Discard everything queued in q, releasing its buffer. Returns the frames.
    template <class Env>
    std::uint32_t flush(Env& env, int q) noexcept {
        return eq.flush(q, [&](const auto& e) noexcept {
            if (env.buf()) { env.release(e.tag, env.buf()->charge_for(e.len)); }
            rte_pktmbuf_free(e.item);
        });
    }

    // Discard everything the port holds: its queues (returned), the frames
    // staged for TX (already dequeued, their buffer released: counted
    // tx_flushed, as dequeued and never sent) and a pending PFC frame.
    template <class Env>
    std::uint64_t discard_all(Env& env) noexcept {
        std::uint64_t n = 0;
        for (int q = 0; q < 8; ++q) { n += flush(env, q); }
        if (n_staged != 0) {
            rte_pktmbuf_free_bulk(staged.data(), n_staged);
            env.c(idx).tx_flushed += n_staged;
            n_staged = 0;
        }
        if (pfc_pending != nullptr) {
            rte_pktmbuf_free(pfc_pending);
            pfc_pending = nullptr;
        }
        backlog = false;
        return n;
    }

    // ---- lossless classes: PFC out, and the watchdog on PFC in ----

    // Send XOFF/XON (or PAUSE) out of this port for its ingress PGs in XOFF.
    // The frame goes ahead of any data (MAC Control is never queued behind data).
    template <class Env>
    void send_pfc(Env& env, nanos now) noexcept {
        if (pfc_pending == nullptr) {
            const std::uint8_t want = xoff_pg_to_prio[env.buf()->xoff_pgs(idx)];
            pfc_frame f;
            if (!pfc_gen.poll(now, want, f)) { return; }
            rte_mbuf* m = rte_pktmbuf_alloc(env.pool());
            if (m == nullptr) { return; }  // counted by the pool; retried at the next refresh
            auto* d = reinterpret_cast<std::byte*>(rte_pktmbuf_append(m, mac_control_frame_len));
            if (d == nullptr) {
                rte_pktmbuf_free(m);
                return;
            }
            if (f.mode == flow_ctrl_mode::pfc) {
                build_pfc(d, b.mac, f.class_enable, f.time);
            } else {
                build_pause(d, b.mac, f.pause_time);
            }
            if (env.cap() != nullptr) { env.cap()->tap(idx, true, m, now); }
            pfc_pending = m;
        }
        if (dpdk::port_tx(b, now, &pfc_pending, 1) == 1) {
            pfc_pending = nullptr;
            ++env.c(idx).tx_pfc_frames;
        }
    }

    // SONiC PFC watchdog, polled every poll_interval per watched queue.
    template <class Env>
    [[gnu::noinline]] void poll_watchdog(Env& env, nanos now) noexcept {
        wd_next = now + wd_interval;
        const std::uint8_t paused_prios = pause.paused_mask(now);
        port_counters& c = env.c(idx);
        for (int q = 0; q < 8; ++q) {
            if (!wd[q]) { continue; }
            std::uint64_t rx = 0;
            bool paused = false;
            for (int pr = 0; pr < 8; ++pr) {
                if (maps.pfc_prio_to_queue[pr] == q) {
                    rx += c.rx_pfc_prio[pr];
                    paused = paused || (paused_prios >> pr & 1u) != 0;
                }
            }
            pfc_watchdog& w = *wd[q];
            const pfc_wd_event ev = w.poll(now, paused, rx);
            if (ev) {
                switch_event se;
                se.what = ev.kind == pfc_wd_event_kind::storm_detected ? switch_event::kind::storm_detected
                                                                       : switch_event::kind::storm_restored;
                se.ns = ev.at.v;
                se.port = idx;
                se.queue = static_cast<std::uint8_t>(q);
                env.event(se);
            }
            const auto bit = static_cast<std::uint8_t>(1u << q);
            wd_drop_mask = w.drop_active() ? (wd_drop_mask | bit) : (wd_drop_mask & ~bit);
            wd_ignore_mask = w.ignore_pause() ? (wd_ignore_mask | bit) : (wd_ignore_mask & ~bit);
            if (w.drop_active()) {
                const std::uint32_t n = flush(env, q);
                if (n != 0) {
                    w.count_tx_drop(n);
                    c.drops[static_cast<std::size_t>(drop_reason::pfcwd)] += n;
                }
            }
        }
    }
};

}  // namespace rocelab::sw
