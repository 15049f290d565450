// gen_pacer.cpp - the generator's pacer stage: per-QP pacing, the DCQCN
// reaction point's rate, the ready QPs, and the worker's next deadline.
//
// What: every QP has a pacer (qos/shaper.hpp at the flow's rate: --rate or
// the port's line rate; rate 0 = unpaced, never called) and each port a line
// cap (shaper at the line rate, 24 B/frame overhead). The DCQCN reaction
// point (roce/dcqcn.hpp dcqcn_rp, in the flow) changes the QP's rate at a
// CNP (rx_frame), at its timers (service_flows) and at its byte counter
// (tx_port); apply_rate carries a change to the pacer, keeping its
// committed backlog, and accounts the old rate's time for the report's
// time-weighted mean (rate_area_bits, rate_t0, rate_t).
// update_ready keeps, per port, the QPs that have a packet their window
// allows: a bit per QP slot (port_state::ready, which tx_port's round robin
// visits) and a heap by pacer time (port_state::pace; an unpaced QP sorts
// first), after every change of a QP's window, posted data or pacer.
// next_deadline_worker answers, after a poll, when the worker next has work
// of its own, reading the pace heap's top instead of walking the ready QPs
// (see gen_pipeline.hpp next_deadline).
// Inputs: the reaction point's rate changes; each QP's window (requester
// can_send) and pacer; the port's pause timer and line cap; now.
// Outputs: the QP's pacer rate, the port's ready set and pace heap, the
// worker's next deadline.
// Counters: none of its own (the flows' rate statistics).
#include <algorithm>
#include <bit>

#include "gen/gen_stages.hpp"

namespace rocelab::gen {

namespace {

// An unpaced QP's key in its port's pace heap: it may send whenever the line
// lets it, so it sorts before every paced one.
constexpr nanos unpaced_key{INT64_MIN / 2};

}  // namespace

// The reaction point changed the QP's rate: re-set the pacer (keeping the
// committed backlog) and account the old rate's time for the mean.
void gen_pipeline::apply_rate(flow_state& f, nanos now) noexcept {
    if (!f.rp.take_rate_changed()) {
        return;
    }
    if (f.rate_t0.v < 0) {
        f.rate_t0 = f.rate_t = now;
    }
    f.rate_area_bits += double(f.pacer.rate().v) * double((now - f.rate_t).v) / 1e9;
    f.rate_t = now;
    if (f.rp.rate().v != 0) {
        f.pacer.set_rate(f.rp.rate(), now);
    }
}

// The QP's bit in its port's ready set: it has a packet its window allows.
// Called after every change of the QP's window, posted data or pacer
// (tx_port after it sends, service_flows after ACKs, CNPs and DCQCN timers),
// so the port's pace heap holds each ready QP at its pacer's current time.
void gen_pipeline::update_ready(flow_state& f) noexcept {
    port_state& ps = _ports[f.src_port];
    auto& word = ps.ready[f.qp_slot >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (f.qp_slot & 63);
    if (f.rq.can_send(nanos::max())) {
        word |= bit;
        if (_deadlines) { ps.pace.set(f.qp_slot, f.pacer.rate().v != 0 ? f.pacer.next_send_time() : unpaced_key); }
    } else {
        word &= ~bit;
        if (_deadlines) { ps.pace.clear(f.qp_slot); }
    }
}

void gen_pipeline::poll_continuously() noexcept {
    _deadlines = false;
    for (auto& ps : _ports) {
        ps.pace.clear_all();
    }
}

// Worker k's share: its flows' timers (ACK timeouts, RNR waits, DCQCN
// timers, deferred CNPs, starts, arrivals: the timer heap's top), a flow
// touched since its last service, the QPs of its ports that may send (the
// ready ones: when their pacer and the port's line cap conform, or their
// pause ends), and its ports' own work (CNPs and replies waiting, PFC
// sources, the delay line). Flows with nothing to do are not visited.
nanos gen_pipeline::next_deadline_worker(std::size_t k, nanos now) noexcept {
    const worker_state& w = *_workers[k];
    nanos d = w.timers.top_time();
    for (const std::uint64_t word : w.svc) {
        if (word != 0) {
            d = now;
            break;
        }
    }
    for (const std::uint16_t pi : w.ports) {
        port_state& ps = _ports[pi];
        if (!ps.cnps.empty() && (blocked_prios(ps, now) >> (_np_cfg.cnp_802p_prio & 7u) & 1u) == 0) { d = now; }
        if (ps.delay_head != ps.delay_tail) {
            d = std::min(d, nanos{ps.delay[ps.delay_head & ps.delay_mask].due});
        }
        if (ps.npend != 0) { continue; }
        for (const auto& src : ps.pfc) {
            if (src.cfg.count == 0 || src.sent < src.cfg.count) { d = std::min(d, nanos{src.next}); }
        }
        if (!ps.replies.empty()) {
            const bool paused = (blocked_prios(ps, now) & (1u << (_cfg.priority & 7u))) != 0;
            d = std::min(d, paused ? ps.pt.next_deadline(now) : now);
        }
        // With one PFC priority on the port, the first QP that may send
        // settles it when it is paused (every QP waits for the same pause) or
        // unpaced (it sends when the line lets it, and no QP sooner).
        const bool one_prio = std::has_single_bit(ps.qp_prios);
        if (one_prio && !ps.pace.empty()) {
            // The ready QP whose pacer frees first: when it has started and
            // its window lets it send now (the usual case), it gives the
            // walk's answer, since max(now, pacer, line) is smallest for the
            // smallest pacer time, and every QP shares the one pause.
            const flow_state& f = *_flows[ps.qps[ps.pace.top_id()]];
            if (now >= f.cfg.start && f.rq.can_send(now)) {
                if ((blocked_prios(ps, now) & f.prio_bit) != 0) {
                    d = std::min(d, ps.pt.next_deadline(now));  // nanos::max() for credits: their arrival wakes the host
                    continue;
                }
                nanos t = std::max(now, ps.pace.top_time());
                if (ps.line.rate().v != 0) { t = std::max(t, ps.line.next_send_time()); }
                d = std::min(d, t);
                continue;
            }
        }
        bool settled = false;
        for (std::size_t b = 0; b < ps.ready.size() && !settled; ++b) {
            for (std::uint64_t word = ps.ready[b]; word != 0 && !settled; word &= word - 1) {
                flow_state& f = *_flows[ps.qps[b * 64 + static_cast<std::size_t>(std::countr_zero(word))]];
                if (now < f.cfg.start || !f.rq.can_send(now)) { continue; }
                if ((blocked_prios(ps, now) & f.prio_bit) != 0) {
                    d = std::min(d, ps.pt.next_deadline(now));
                    settled = one_prio;
                    continue;
                }
                nanos t = now;
                if (f.pacer.rate().v != 0) { t = std::max(t, f.pacer.next_send_time()); }
                if (ps.line.rate().v != 0) { t = std::max(t, ps.line.next_send_time()); }
                d = std::min(d, t);
                settled = one_prio && f.pacer.rate().v == 0;
            }
        }
    }
    return std::max(d, now);
}

}  // namespace rocelab::gen
