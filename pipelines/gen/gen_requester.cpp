// gen_requester.cpp - the generator's requester stage: the per-flow service.
//
// What: each worker keeps the flows it serves a side of (worker_state::flows,
// one ref each) and visits only the refs whose timer came due (timer_heap:
// ACK timeout, RNR end, DCQCN timer, deferred CNP, start, next arrival) or
// that a frame, a send or a completion touched (svc bits), in flow order.
// service_flows, per such ref:
//   responder side only: a CNP the notification point deferred
//     (send_cnp, gen_responder.cpp);
//   requester side: the RC requester's ACK timeout (roce/requester.hpp:
//     go-back-N retransmission is its business; the QP's next() then
//     yields the resent packets to TX), the DCQCN reaction point's timers
//     (its rate to the pacer: apply_rate, gen_pacer.cpp), a deferred CNP of
//     its own responder, completions (FCT samples into the preallocated
//     fct_ns, fct_dropped past it; first_posted / last_done for the flow's
//     FCT; the message source's closed loop; collectives' records), then new
//     messages: the message source's arrivals (seeded by the worker's rng)
//     or, for a collective, its step gate (coll_post, gen_collectives.cpp);
//     with message limits, whether the flow has finished (all_finished);
//   then reschedule (the ref's next timer) and update_ready (the QP's place
//   in its port's ready set and pace heap, gen_pacer.cpp).
// self_ack (--tx-only, called by tx_port): the requester acknowledges its
// own burst cumulatively, with the MSN a responder would return.
// Inputs: now, the ACKs/NAKs rx_frame fed to the requester (on_aeth).
// Outputs: posted messages (the QP's next() for TX), the flow's FCT samples
// and counters (requester_counters, posted, finished), the worker's timers.
#include <algorithm>
#include <bit>

#include "gen/gen_stages.hpp"

namespace rocelab::gen {

// When ref r next needs service without any input (timer_heap).
void gen_pipeline::reschedule(worker_state& w, std::uint32_t r, nanos now) noexcept {
    const flow_ref& ref = w.flows[r];
    flow_state& f = *_flows[ref.flow];
    nanos d = nanos::max();
    if (ref.resp && f.np.pending()) { d = std::min(d, f.np.next_due()); }
    if (ref.req) {
        d = std::min(d, f.rq.next_deadline());
        if (f.dcqcn) { d = std::min(d, f.rp_next); }
        if (now < f.cfg.start) {
            d = std::min(d, f.cfg.start);
        } else if (!_ring) {
            d = std::min(d, f.src.next_deadline());
        }
    }
    if (!_deadlines) {  // polled without pause: a later deadline fires early instead (poll_continuously)
        if (d < w.timers.time_of(r)) { w.timers.set(r, d); }
        return;
    }
    w.timers.set(r, d);
}

std::uint32_t gen_pipeline::service_flows(worker_state& w, nanos now) noexcept {
    w.timers.pop_due(now, [&](std::uint32_t r) noexcept { w.svc[r >> 6] |= std::uint64_t{1} << (r & 63); });
    std::uint32_t serviced = 0;
    // The refs due or touched, in flow order (the order every ref once was).
    for (std::size_t b = 0; b < w.svc.size(); ++b) {
        while (w.svc[b] != 0) {
            const auto r = static_cast<std::uint32_t>(b * 64 + static_cast<std::size_t>(std::countr_zero(w.svc[b])));
            w.svc[b] &= w.svc[b] - 1;
            ++serviced;
            const flow_ref& ref = w.flows[r];
            flow_state& f = *_flows[ref.flow];
            if (!ref.req) {  // only the responder side is this worker's
                if (f.np.pending() && f.np.poll(now)) [[unlikely]] {
                    send_cnp(f, _ports[f.dst_port]);
                }
                reschedule(w, r, now);
                continue;
            }
            f.rq.poll_timeout(now);
            if (f.dcqcn && now >= f.rp_next) [[unlikely]] {
                f.rp_next = f.rp.advance(now);
                apply_rate(f, now);
            }
            if (ref.resp && f.np.pending() && f.np.poll(now)) [[unlikely]] {
                send_cnp(f, _ports[f.dst_port]);
            }
            msg_completion c;
            while (f.rq.pop_completion(c)) {
                if (f.fct_ns.size() < f.fct_ns.capacity()) {
                    f.fct_ns.push_back(static_cast<std::uint64_t>(c.fct().v));
                } else {
                    bump(f.fct_dropped);
                }
                if (f.first_posted.v < 0) { f.first_posted = c.posted; }
                f.last_done = c.completed;
                f.src.on_complete();
                if (_ring) {
                    coll_completed(f, c);
                }
            }
            if (_ring) {
                if (now >= f.cfg.start) {
                    coll_post(f, now);
                }
            } else if (now >= f.cfg.start) {
                arrival a;
                while (f.src.poll(now, w.arrivals_rng, a)) {
                    f.rq.post_message(now < a.at || f.cfg.arrivals.kind == arrival_kind::closed_loop ? now : a.at,
                                      a.size);
                    bump(f.posted);
                }
            }
            if (_has_limit && !f.finished) {
                f.finished = f.posted >= f.cfg.arrivals.count && f.rq.messages_in_flight() == 0;
                if (f.finished) { --w.unfinished; }
            }
            reschedule(w, r, now);
            update_ready(f);
        }
    }
    const bool all_done = _has_limit && w.unfinished == 0;
    if (all_done != __atomic_load_n(&w.done, __ATOMIC_RELAXED)) {
        __atomic_store_n(&w.done, all_done, __ATOMIC_RELAXED);
    }
    if (all_done && !__atomic_load_n(&_all_finished, __ATOMIC_RELAXED)) {
        bool every = true;
        for (const auto& o : _workers) { every = every && __atomic_load_n(&o->done, __ATOMIC_RELAXED); }
        if (every) { __atomic_store_n(&_all_finished, true, __ATOMIC_RELAXED); }
    }
    return serviced;
}

void gen_pipeline::self_ack(flow_state& f, nanos now, std::uint32_t psn, std::uint32_t ends) noexcept {
    // No receiver (--tx-only): acknowledge cumulatively up to psn with the MSN
    // a responder would return after it.
    f.rq.on_ack(now, psn, static_cast<std::uint32_t>(f.rq.counters().messages_completed + ends));
    // Completions to take: the flow's service (next service_flows). Without
    // any, the service would find nothing to do but set the QP's timer and
    // ready bit again, which its visit's caller does at once, while the
    // flow's lines are still in L1 (tx_port: stage_data).
    if (f.rq.completions_pending() != 0) {
        touch(f, true);
    }
}

}  // namespace rocelab::gen
