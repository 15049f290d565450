// worker_link.hpp - the link between workers (a stage of switch_pipeline.cpp).
//
// With several workers a port belongs to one of them: its RX, its ingress
// PGs and its egress unit. A frame for another worker's port crosses here:
//
//   forward_to(eg) -> [owned: eg.admit()] | [handoff_out: VLAN rewrite,
//     ingress charge, staged per destination] -> flush_stage (burst push;
//     lossless frames a full queue refuses wait in the stash, in order)
//   drain_in (next poll of eg's owner): credits (buffer released for its
//     ingress PGs), FDB learns, then one burst of frames -> take_handoff
//     -> eg.admit() (or neighbour resolution, or the ingress charge)
//
// Each worker pair has three single-producer queues: frames, credits and
// learns (worker_rt::peer). Counters: worker_stats (handed_out/in,
// stashed, credits_out, learns_out/lost) and drop_handoff_full.
//
// Part of switch_pipeline.cpp's translation unit (included there once):
// the build has no LTO, and the per-frame path inlines across stages.
#pragma once

#include "switch/switch_rt.hpp"

namespace rocelab::sw {


namespace {

// ---- several workers: ownership, buffer releases, handoff staging ----

// Send what is owed to the ingress ports' owners (end of every poll). What
// does not fit stays owed: a release is never lost, only later.
void send_credits(switch_pipeline::impl& p, worker_rt& w) noexcept {
    std::size_t keep = 0;
    for (std::size_t k = 0; k < w.owed_list.size(); ++k) {
        const std::uint16_t i = w.owed_list[k];
        const std::size_t port = i / 8;
        std::uint64_t& b = w.owed[i];
        auto& q = *w.peers[p.ports[port]->owner].credits;
        while (b != 0) {
            const std::uint64_t part = std::min<std::uint64_t>(b, 0x7FFFFFFFu);
            if (!q.push(credit{acct_tag(static_cast<std::uint16_t>(port), static_cast<std::uint8_t>(i % 8)),
                               static_cast<std::uint32_t>(part)})) {
                break;
            }
            b -= part;
            ++w.st.credits_out;
        }
        if (b != 0) { w.owed_list[keep++] = i; }
    }
    w.owed_list.resize(keep);
}

inline bool handoff_lossless(const switch_pipeline::impl& p, const handoff& h) noexcept { return tag_lossless(p, h.tag); }

// A lossy frame the full handoff queue did not take (lossless ones wait in the stash).
void handoff_refused(switch_pipeline::impl& p, worker_rt& w, const handoff& h) noexcept {
    w.c[h.port].drop(drop_reason::handoff_full);
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    rte_pktmbuf_free(h.m);
}

// A handoff record kept in the frame itself while it waits in the stash.
inline void stash_push(switch_pipeline::impl& p, frame_fifo& stash, const handoff& h) noexcept {
    frame_meta& fm = p.link.meta(h.m);
    fm.q.len = h.aux;
    fm.q.tag = h.tag;
    fm.port = h.port;
    fm.in = h.in;
    fm.tc = h.tc;
    fm.kind = static_cast<std::uint8_t>(h.kind);
    fm.flags = h.flags;
    stash.push(p.link, h.m);
}
// A handoff record written field by field where it will be read (a stage
// slot, a burst being pushed): a record built on the stack and copied was
// read back 16 bytes at a time from its narrower stores, a failed store
// forward per frame (perf: two thirds of handoff_out's samples, half of
// flush_stage's).
inline void write_handoff(handoff& h, rte_mbuf* m, std::uint32_t tag, std::uint32_t aux, std::uint16_t port,
                          std::uint16_t in, std::uint8_t tc, handoff_kind kind, std::uint8_t flags) noexcept {
    h.m = m;
    h.tag = tag;
    h.aux = aux;
    h.port = port;
    h.in = in;
    h.tc = tc;
    h.kind = kind;
    h.flags = flags;
    h.pad = 0;
}

// A stashed frame's record, read back from the frame.
inline void stash_peek(const switch_pipeline::impl& p, rte_mbuf* m, handoff& h) noexcept {
    const frame_meta& fm = p.link.meta(m);
    write_handoff(h, m, fm.q.tag, fm.q.len, fm.port, fm.in, fm.tc, static_cast<handoff_kind>(fm.kind), fm.flags);
}

// Push the frames staged for worker `to`. A full queue: lossless frames wait
// in the stash (in order, ahead of later lossless frames), others are
// dropped by name (drop_handoff_full on the egress port). Everything moves
// in bursts (a push that finds the queue full reads the consumer's index,
// another core's cache line: once per burst, not per frame).
void flush_stage(switch_pipeline::impl& p, worker_rt& w, std::size_t to) noexcept {
    worker_rt::peer& pr = w.peers[to];
    auto& q = *pr.frames;
    frame_fifo& stash = pr.stash;
    handoff tmp[worker_rt::stage_max];
    while (!stash.empty()) {  // the oldest waiting lossless frames first
        const std::size_t m = std::min<std::size_t>(stash.size(), worker_rt::stage_max);
        rte_mbuf* x = stash.front();
        rte_mbuf* after[worker_rt::stage_max];  // each frame's successor, read while it is still ours
        for (std::size_t i = 0; i < m; ++i) {
            stash_peek(p, x, tmp[i]);
            x = p.link.node(x).next;
            after[i] = x;
        }
        const std::size_t k = q.push_burst(tmp, m);
        // The k frames pushed belong to the consumer now: its worker may be
        // linking them into an egress queue already, so their links are not
        // read again here.
        if (k != 0) { stash.drop_front(static_cast<std::uint32_t>(k), after[k - 1]); }
        if (k < m) { break; }
    }
    const std::size_t n = pr.n_stage;
    pr.n_stage = 0;
    if (n == 0) { return; }
    std::size_t k = 0;
    if (stash.empty()) {
        k = q.push_burst(pr.stage.data(), n);
        w.st.handed_out += k;
        if (k == n) [[likely]] { return; }
    }
    // What did not fit: lossless frames join the stash (behind the ones
    // already waiting), lossy ones get one more try, then are dropped.
    std::size_t nl = 0;
    for (std::size_t i = k; i < n; ++i) {
        const handoff& h = pr.stage[i];
        if (!handoff_lossless(p, h)) {
            tmp[nl++] = h;
        } else {
            stash_push(p, stash, h);
            ++w.st.stashed;
            ++w.st.handed_out;
        }
    }
    const std::size_t kl = nl != 0 ? q.push_burst(tmp, nl) : 0;
    w.st.handed_out += kl;
    for (std::size_t i = kl; i < nl; ++i) { handoff_refused(p, w, tmp[i]); }
    w.waits_on_peer = true;
}

// Push this poll's staged frames (and the stashed ones) to the other workers.
inline void flush_stages(switch_env& env) noexcept {
    worker_rt& w = env.w;
    for (std::size_t k = 0; k < w.peers.size(); ++k) {
        if (k != w.id && (w.peers[k].n_stage != 0 || !w.peers[k].stash.empty())) {
            flush_stage(env.p, w, k);
            if (!w.peers[k].stash.empty()) { w.waits_on_peer = true; }
        }
    }
}

// Stage a frame for worker `to`: its record written in place in the next
// stage slot (write_handoff), the stage pushed when full.
inline void stage(switch_pipeline::impl& p, worker_rt& w, std::uint16_t to, rte_mbuf* m, std::uint32_t tag,
                  std::uint32_t aux, std::uint16_t port, std::uint16_t in, std::uint8_t tc, handoff_kind kind,
                  std::uint8_t flags) noexcept {
    worker_rt::peer& pr = w.peers[to];
    write_handoff(pr.stage[pr.n_stage], m, tag, aux, port, in, tc, kind, flags);
    if (++pr.n_stage == worker_rt::stage_max) { flush_stage(p, w, to); }
}

// A frame for a port another worker owns: rewritten for that port (VLAN),
// charged to its ingress PG here (unless `charged` is false: a flood copy),
// and staged for the owner. False only when the ingress buffer refused it.
[[gnu::noinline]] bool handoff_out(switch_pipeline::impl& p, worker_rt& w, port_rt& in, port_rt& eg, rte_mbuf* x,
                                   std::uint8_t tc, bool tagged, bool charged, handoff_kind kind = handoff_kind::enqueue,
                                   std::uint32_t aux = 0, std::uint8_t flags = 0) noexcept {
    if (__atomic_load_n(&eg.link_down, __ATOMIC_RELAXED)) {
        w.c[eg.idx].drop(drop_reason::link_down);
        rte_pktmbuf_free(x);
        return true;
    }
    const std::uint32_t before = rte_pktmbuf_pkt_len(x);
    // The egress VLAN rewrite, done here: the frame crosses as it will leave.
    if ((tagged || eg.vmode == vlan_mode::tagged) && !eg.rewrite_vlan(x, tc, tagged)) {
        w.c[eg.idx].drop(drop_reason::flood_nombuf);
        rte_pktmbuf_free(x);
        return true;
    }
    if (eg.vmode == vlan_mode::tagged) { flags |= hf_tagged; }
    const std::uint32_t xlen = rte_pktmbuf_pkt_len(x);
    if (kind == handoff_kind::resolve && (aux & aux_dynhop) == 0) { aux = aux + xlen - before; }  // tag in/out
    std::uint32_t tag = 0;
    if (kind == handoff_kind::resolve) {
        tag = tag_handed;  // not admitted while it waits for its neighbour: charged once resolved
    } else if (p.buf) {
        tag = tag_uncharged | acct_tag(in.idx, in.maps.tc_to_pg[tc]);
        if (charged) {
            tag = charge_ingress(p, w, in, x, tc, xlen);
            if (tag == tag_refused) [[unlikely]] { return false; }
        }
    }
    stage(p, w, eg.owner, x, tag, aux, eg.idx, in.idx, tc, kind, flags);
    return true;
}

// Tell the other workers' FDB copies about a write to this one's.
[[gnu::noinline]] void learn_out(worker_rt& w, std::uint64_t key, std::uint16_t port, nanos now) noexcept {
    learn_msg lm;
    lm.key = key;
    lm.now = now.v;
    lm.port = port;
    for (std::size_t k = 0; k < w.peers.size(); ++k) {
        if (k == w.id) { continue; }
        if (w.peers[k].learns->push(lm)) {
            ++w.st.learns_out;
        } else {
            ++w.st.learns_lost;
        }
    }
}


// forward_to's half for an egress port this worker owns (the caller knows:
// rx_burst remembers such a port).
template <bool AnyPort = false>
[[gnu::always_inline]] inline bool admit_owned(switch_env& env, port_rt& in, port_rt& eg, rte_mbuf* x, std::uint8_t tc,
                                               bool tagged, bool charged = true) noexcept {
    switch_pipeline::impl& p = env.p;
    const vlan_in v = tagged ? vlan_in::tagged : vlan_in::untagged;
    if constexpr (AnyPort) {
        if (charged) {
            any_port_env ae{{env.p, env.w, env.capture}};
            return eg.admit(ae, x, tc, v, charge_tag(p, in, tc), p.buf ? in.idx : no_charge);
        }
    }
    if (charged) { return eg.admit(env, x, tc, v, charge_tag(p, in, tc), p.buf ? in.idx : no_charge); }
    return eg.admit(env, x, tc, v, p.buf ? (tag_uncharged | charge_tag(p, in, tc)) : 0u);
}

// Forward frame x (from `in`) to port eg: the one admission path,
// egress_port::admit(), here when this worker owns eg, else on eg's owner
// after handoff_out(). `charged`: false for a flood copy, which carries no
// charge of its own. AnyPort: `in` may be another worker's port (an RSS
// queue's frame: its charge draws on credit); false where this worker owns
// `in`. False only when the ingress buffer refused the frame.
template <bool AnyPort = false>
[[gnu::always_inline]] inline bool forward_to(switch_env& env, port_rt& in, port_rt& eg, rte_mbuf* x, std::uint8_t tc,
                                              bool tagged, bool charged = true) noexcept {
    if (eg.owner == env.w.id) [[likely]] { return admit_owned<AnyPort>(env, in, eg, x, tc, tagged, charged); }
    return handoff_out(env.p, env.w, in, eg, x, tc, tagged, charged);
}


// Defined in switch_pipeline.cpp: frames taken as if received on `in` (RSS, handoff_kind::rx).
std::uint32_t rx_given(switch_env& env, port_rt& in, nanos now, rte_mbuf* const* pkts, std::uint16_t n) noexcept;

// Defined in l3_router.hpp.
std::uint16_t neigh_forward(switch_env& env, const held_frame& h, const neigh_key& k, std::uint16_t port, nanos now) noexcept;
void admit_resolved(switch_env& env, const held_frame& h, port_rt& eg) noexcept;


// A frame another worker handed to this one (see handoff_kind).
void take_handoff(switch_env& env, const handoff& h, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    switch (h.kind) {
        case handoff_kind::enqueue:
            (void)p.ports[h.port]->admit(env, h.m, h.tc, vlan_in::egress, h.tag);
            return;
        case handoff_kind::ingress: {
            port_rt& in = *p.ports[h.port];
            (void)forward_to(env, in, in, h.m, h.tc, (h.flags & hf_tagged) != 0);
            return;
        }
        case handoff_kind::resolve: {
            neigh_key k;
            if ((h.aux & aux_dynhop) != 0) {
                const ip_prefix& a = p.routes->dynamic_hop(h.aux & ~aux_dynhop);
                std::memcpy(k.addr.data(), a.addr.data(), 16);
                k.v6 = a.v6;
            } else if ((h.flags & hf_v6) != 0) {
                k = neigh_key::v6_from(reinterpret_cast<const std::uint8_t*>(data(h.m) + h.aux));
            } else {
                k = neigh_key::v4(load_be32(data(h.m) + h.aux));
            }
            const held_frame hf{h.m, h.in, h.tc, (h.flags & hf_tagged) != 0, tag_handed};
            const std::uint16_t o = neigh_forward(env, hf, k, h.port, now);
            if (o == out_drop) {
                rte_pktmbuf_free(h.m);
            } else if (o != out_held) {
                admit_resolved(env, hf, *p.ports[o]);
            }
            return;
        }
        case handoff_kind::rx:  // received on our port's RSS queue by another worker
            (void)rx_given(env, *p.ports[h.port], now, &h.m, 1);
            return;
        case handoff_kind::admit: {  // resolved on eg's worker: charge here, then send it there
            port_rt& in = *p.ports[h.in];
            port_rt& eg = *p.ports[h.port];
            (void)forward_to(env, in, eg, h.m, h.tc, (h.flags & hf_tagged) != 0);
            return;
        }
    }
}

// RSS, on a port's owner: the credit requests worker v sent for this
// worker's ports, each charged here as the frame itself would be, and
// answered in order (with a chunk ahead when the PG has room for it).
// v keeps no more requests out than the answer queue holds, so an answer
// always fits.
std::uint32_t answer_rss(switch_pipeline::impl& p, worker_rt& w, std::size_t v) noexcept {
    auto& req = *w.inbound[v]->rss_req;
    auto& ans = *w.peers[v].rss_grant;
    credit c[64];
    std::size_t n;
    std::uint32_t work = 0;
    while ((n = req.pop_burst(c, 64)) != 0) {
        for (std::size_t i = 0; i < n; ++i) {
            const int port = tag_port(c[i].tag), pg = tag_pg(c[i].tag);
            const admit_result r = p.buf->admit(port, pg, c[i].bytes);
            mark_egress(p, static_cast<std::size_t>(port));  // its PGs may enter XOFF
            credit a{c[i].tag, c[i].bytes};
            if (!r.ok()) {
                a.tag |= r.verdict == admit_verdict::drop_lossy ? grant_refused_lossy : grant_refused_headroom;
            } else {
                if (p.buf->admit_credit(port, pg, p.rss_chunk_charge)) { a.bytes += p.rss_chunk_charge; }
            }
            const bool pushed = ans.push(a);
            (void)pushed;  // v keeps at most rss_slots requests out
        }
        work += static_cast<std::uint32_t>(n);
    }
    return work;
}

// RSS, on a worker that polls other workers' port queues: worker v's
// answers, each to the oldest waiting frame of its port without one.
std::uint32_t take_grants(worker_rt& w, std::size_t v) noexcept {
    auto& ans = *w.inbound[v]->rss_grant;
    credit c[64];
    std::size_t n;
    std::uint32_t work = 0;
    while ((n = ans.pop_burst(c, 64)) != 0) {
        for (std::size_t i = 0; i < n; ++i) {
            rss_rx& r = w.rss[static_cast<std::size_t>(w.rss_of_port[static_cast<std::size_t>(tag_port(c[i].tag))])];
            rss_parked& e = r.at(r.resolved++);
            if ((c[i].tag & grant_refused_lossy) != 0) {
                e.state = rss_state::refused_lossy;
            } else if ((c[i].tag & grant_refused_headroom) != 0) {
                e.state = rss_state::refused_headroom;
            } else {
                e.state = rss_state::granted;
                r.credit[e.pg] += c[i].bytes;
            }
        }
        w.peers[v].rss_out -= static_cast<std::uint32_t>(n);
        work += static_cast<std::uint32_t>(n);
    }
    return work;
}

// Start of a worker's poll: buffer released by the others for its ingress
// ports, their FDB writes, then the frames they handed it (a bounded number
// per peer and poll, so its own RX is never starved).
std::uint32_t drain_in(switch_env& env, nanos now) noexcept {
    switch_pipeline::impl& p = env.p;
    worker_rt& w = env.w;
    std::uint32_t work = 0;
    for (std::size_t v = 0; v < p.workers.size(); ++v) {
        if (v == w.id) { continue; }
        worker_rt::peer& from = *w.inbound[v];
        if (p.buf) {
            credit c[64];
            std::size_t n;
            while ((n = from.credits->pop_burst(c, 64)) != 0) {
                for (std::size_t i = 0; i < n; ++i) {
                    p.buf->release(tag_port(c[i].tag), tag_pg(c[i].tag), charge{c[i].bytes});
                }
            }
        }
        if (p.buf) {  // RSS credit: requests for our ports, answers for theirs
            work += answer_rss(p, w, v);
            if (!w.rss.empty()) { work += take_grants(w, v); }
        }
        learn_msg l[32];
        std::size_t nl;
        while ((nl = from.learns->pop_burst(l, 32)) != 0) {
            for (std::size_t i = 0; i < nl; ++i) {
                if (l[i].flush != 0) {
                    w.table->flush_port(l[i].port);
                    continue;
                }
                std::uint8_t mac[8];
                std::memcpy(mac, &l[i].key, 8);
                (void)w.table->learn(nanos{l[i].now}, mac, static_cast<std::uint16_t>(l[i].key >> 48), l[i].port);
            }
        }
        // Per peer and poll, one burst (what a port's TX sends per poll):
        // polls take microseconds, so below CPU overload frames reach the
        // egress queues as they come (queue depth, WRED/ECN and PFC see them
        // there). When this worker is the bottleneck the surplus waits in the
        // handoff queue, still charged to its ingress PG, and lossy frames
        // are dropped at the sending worker (drop_handoff_full) before they
        // cross, instead of crossing only to be tail-dropped here.
        handoff h[switch_pipeline::max_burst];
        const std::size_t n = from.frames->pop_burst(h, p.burst);
        if (n == 0) { continue; }
        w.st.handed_in += n;
        work += static_cast<std::uint32_t>(n);
        // Every frame of the burst was last written by the other CPU: ask
        // for all of their lines at once (the length in the first, the queue
        // link admit() writes in the frame's meta), so the misses overlap
        // instead of coming one per frame.
        for (std::size_t i = 0; i < n; ++i) {
            rte_prefetch0(h[i].m);
            __builtin_prefetch(&p.link.meta(h[i].m), 1, 3);
        }
        for (std::size_t i = 0; i < n; ++i) { take_handoff(env, h[i], now); }
    }
    return work;
}

}  // namespace

}  // namespace rocelab::sw
