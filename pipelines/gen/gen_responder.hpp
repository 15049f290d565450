// gen_responder.hpp - the generator's responder stage (private to pipelines/gen/).
//
// What: a RoCEv2 data frame that RX (gen_rx.cpp) has checked (local host,
// loss injection, ICRC) and found for the responder end of a flow's QP
// (qpn_table role 1) is handed to respond(), which runs, in order:
//   notification point (roce/dcqcn.hpp dcqcn_np): a CE-marked frame
//     (rx_ce) may decide a CNP; send_cnp (gen_responder.cpp) builds it in
//     its own mbuf onto the port's CNP ring (tx_cnp / drop_cnp_full,
//     flow cnp_tx / cnp_tx_fail; gen_tx.cpp's tx_cnps sends it). A CNP the
//     NP defers is sent when the flow is next serviced (gen_requester.cpp);
//   RC responder (roce/responder.hpp): PSN check, message accounting, the
//     ACK/NAK verdict; a completed message may open a collective's gate
//     (coll_arrived, gen_collectives.cpp);
//   reply: the ACK/NAK is built into the received mbuf (IPv4 from the QP's
//     template, proto/ack_template.hpp, or by build_roce_v4 in a buffer with
//     less room than the template copies; IPv6 by build_roce_v6; no allocation; a
//     prefilled mbuf is never written into: the reply takes a fresh one from
//     the common pool, tx_alloc_fail) and queued on the port's reply ring
//     (tx_acks / tx_naks). A full ring (the port paused on the RoCE
//     priority) folds it into the QP's reply still waiting there
//     (replies_coalesced), else it is dropped (drop_reply_full).
// Inputs: the port, the flow, the frame (mbuf, its data, parse result), now.
// Outputs: the reply ring, the CNP ring, the flow's responder counters.
//
// Included by gen_rx.cpp only, for respond(): it runs once per data frame
// inside the RX loop and was part of rx_frame's body, so it is always
// inlined there. forget_reply() is inline for the TX drain (gen_tx.cpp).
#pragma once

#include <cstring>

#include "gen/gen_stages.hpp"
#include "proto/build.hpp"
#include "roce/frame.hpp"

namespace rocelab::gen {

// A data frame for flow f's responder (fi: the flow's index) on port ps.
inline void gen_pipeline::respond(port_state& ps, flow_state& f, std::size_t fi, rte_mbuf* m, std::byte* p,
                                  const parsed_frame& pf, nanos now) noexcept {
    // Notification point: a CE-marked data packet may trigger a CNP.
    if (pf.ecn == ecn_ce) [[unlikely]] {
        bump(ps.c.rx_ce);
        if (f.np.on_ce(now)) {
            send_cnp(f, ps);
        }
    }
    const std::uint64_t msgs_before = f.rs.counters().messages_rx;
    const rx_verdict v = f.rs.on_packet(now, pf.psn, pf.opcode, pf.ack_req, pf.roce_payload_len);
    touch(f, false);  // its notification point may have a CNP to defer
    if (_ring && f.rs.counters().messages_rx != msgs_before) {  // a message in: a gate may open
        coll_arrived(f);
    }
    if (v.status == rx_status::unsupported) {
        bump(ps.c.rx_unsupported_opcode);
    }
    if (v.reply != rx_reply::none) {
        // Reuse the received mbuf for the reply: no allocation at all.
        if (m->pool == _pf_pool) {
            // Never write into a prefilled mbuf's payload area: reply from the common pool.
            rte_pktmbuf_free(m);
            m = rte_pktmbuf_alloc(_pool);
            if (m == nullptr) {
                bump(ps.c.tx_alloc_fail);
                return;
            }
            p = mdata(m);
        }
        const std::span<std::byte> room(p, static_cast<std::size_t>(m->buf_len - m->data_off));
        std::uint32_t l = 0;
        if (f.v6) {
            fill_reply_params(f.rs_cfg_, v, f.reply6);
            l = build_roce_v6(room, f.reply6);
        } else if (room.size() >= ack_template_v4::room) [[likely]] {  // IPv4: the QP's template (set up at create)
            l = f.ack.write(p, v.psn & psn_mask, v.syndrome, v.msn & psn_mask);
        } else {
            // A buffer with less room than the template's fixed-size copy
            // (it needs 72 bytes; the reply itself is 62): built field by
            // field into a copy of the reply's parameters (the flow's own
            // are read by both ends and stay as create() set them).
            roce_v4_params r = f.reply;
            fill_reply_params(f.rs_cfg_, v, r);
            l = build_roce_v4(room, r);
        }
        m->data_len = static_cast<std::uint16_t>(l);
        m->pkt_len = l;
        if (l != 0) {
            m->hash.usr = static_cast<std::uint32_t>(fi + 1);  // whose reply (tx clears)
            if (ps.replies.push(m)) {
                f.queued_reply = m;
                bump(v.reply == rx_reply::ack ? ps.c.tx_acks : ps.c.tx_naks);
                return;
            }
            // The ring is full: the port has been paused (PFC on the RoCE
            // priority holds replies) while data kept arriving. As an RC
            // responder does, the newest ACK/NAK of a QP stands for the
            // ones before it (both are cumulative: they carry the expected
            // PSN), so it overwrites the QP's reply still waiting instead of
            // being dropped (a dropped ACK costs the requester an ACK timeout).
            if (rte_mbuf* q = f.queued_reply; q != nullptr && l <= static_cast<std::uint32_t>(q->buf_len - q->data_off)) {
                std::memcpy(mdata(q), p, l);
                q->data_len = static_cast<std::uint16_t>(l);
                q->pkt_len = l;
                bump(ps.c.replies_coalesced);
                rte_pktmbuf_free(m);
                return;
            }
        }
        bump(ps.c.drop_reply_full);
    }
    rte_pktmbuf_free(m);
}

// A reply leaves the ring (sent or freed): its QP's waiting reply, if it
// was this one, is gone.
inline void gen_pipeline::forget_reply(rte_mbuf* m) noexcept {
    const std::uint32_t u = m->hash.usr;
    if (u != 0 && u <= _flows.size() && _flows[u - 1]->queued_reply == m) { _flows[u - 1]->queued_reply = nullptr; }
}

}  // namespace rocelab::gen
