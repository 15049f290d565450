// gen_rx.cpp - the generator's RX stage.
//
// What: per port, one rx burst (dpdk::port_rx; not polled in --tx-only),
// counted and tapped for capture, then either straight to rx_frame or, with
// link_delay, through the port's delay line (sized to every mbuf of both
// pools: never overflows; drop_delay_full counts the impossible). Due frames
// leave the line while the reply ring has room (each data frame may need
// room for its ACK; what waits is queued, not lost).
// rx_frame, per frame, in order:
//   multi-segment frames dropped (rx_multiseg); parse_frame (proto/parse.hpp)
//     failures counted by status (malformed[status], rx_malformed_total);
//   MAC Control: PFC / PAUSE into the port's pause_timer at the port rate
//     (rx_mac_control, rx_pfc, rx_pause);
//   ARP request / ICMPv6 Neighbor Solicitation for a local host: answered in
//     place into the reply ring (rx_arp, arp_replies, rx_nd, nd_replies;
//     drop_reply_full);
//   anything not RoCEv2 (rx_non_roce), not for a local host (rx_not_local);
//   loss injection, seeded, by direction (loss_data, loss_ack; CNPs exempt);
//   ICRC (rx_bad_icrc: never accepted); QPN lookup (rx_unknown_qpn);
//   dispatch by QP role: a CNP for a requester QP to the DCQCN reaction
//     point (rx_cnp, flow cnp_rx; the pacer's rate via apply_rate,
//     gen_pacer.cpp); an ACK/NAK to the requester (requester::on_aeth);
//     data to the responder (respond, gen_responder.hpp); an opcode the role
//     does not take: rx_unsupported_opcode.
// Inputs: the port's rx queue (or delay line), now. Outputs: the flows'
// requester/responder state (and their svc bits: touch), the pause timer,
// the reply and CNP rings. Every frame is freed, reused for its reply, or
// held in the delay line; every drop has a named counter.
#include <rte_mbuf.h>

#include <cstring>

#include "dpdk/capture.hpp"
#include "fwd/arp_nd.hpp"
#include "gen/gen_responder.hpp"
#include "gen/gen_stages.hpp"
#include "port_burst.hpp"
#include "proto/arp.hpp"
#include "proto/icrc.hpp"
#include "proto/mac_control.hpp"
#include "roce/frame.hpp"

namespace rocelab::gen {

std::uint32_t gen_pipeline::rx_port(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    rte_mbuf* pkts[max_burst];
    const std::uint16_t n = dpdk::port_rx(ps.b, now, pkts, max_burst);
    for (std::uint16_t k = 0; k < n; ++k) {
        bump(ps.c.rx_packets);
        bump(ps.c.rx_bytes, static_cast<std::uint64_t>(rte_pktmbuf_pkt_len(pkts[k])));
        if (_cap != nullptr) {
            _cap->tap(static_cast<std::uint16_t>(pi), false, pkts[k], now);
        }
    }
    if (_link_delay.v == 0) {
        for (std::uint16_t k = 0; k < n; ++k) {
            rx_frame(pi, pkts[k], now);
        }
        return n;
    }
    for (std::uint16_t k = 0; k < n; ++k) {
        if (ps.delay_tail - ps.delay_head == ps.delay.size()) {  // cannot happen: sized to every mbuf
            bump(ps.c.drop_delay_full);
            rte_pktmbuf_free(pkts[k]);
            continue;
        }
        ps.delay[ps.delay_tail++ & ps.delay_mask] = delayed{pkts[k], now.v + _link_delay.v};
    }
    // Release what is due, but no more than the reply ring can take: after a
    // long stall (the OS took the CPU) thousands of frames fall due at once,
    // and each data frame needs room for its ACK. What waits here is queued,
    // not lost.
    std::uint32_t done = 0;
    while (ps.delay_head != ps.delay_tail && ps.delay[ps.delay_head & ps.delay_mask].due <= now.v &&
           ps.replies.free_space() != 0) {
        rx_frame(pi, ps.delay[ps.delay_head++ & ps.delay_mask].m, now);
        ++done;
    }
    return n + done;
}

// An ARP reply or neighbour advertisement written in place into m (len
// bytes): onto the port's reply ring, counted in `sent`, or dropped and
// counted when the ring is full.
void gen_pipeline::queue_reply(port_state& ps, rte_mbuf* m, std::uint32_t len, std::uint64_t& sent) noexcept {
    m->data_len = static_cast<std::uint16_t>(len);
    m->pkt_len = len;
    m->hash.usr = 0;  // no QP's reply (the RX hash shares the field)
    if (ps.replies.push(m)) {
        bump(sent);
    } else {
        bump(ps.c.drop_reply_full);
        rte_pktmbuf_free(m);
    }
}

void gen_pipeline::rx_frame(std::size_t pi, rte_mbuf* m, nanos now) noexcept {
    port_state& ps = _ports[pi];
    if (m->nb_segs != 1) {
        bump(ps.c.rx_multiseg);
        rte_pktmbuf_free(m);
        return;
    }
    std::byte* p = mdata(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const parsed_frame pf = parse_frame(p, len);
    if (!pf.ok()) {
        bump(ps.c.malformed[static_cast<std::size_t>(pf.status)]);
        bump(ps.c.rx_malformed_total);
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind == frame_kind::mac_control) {
        bump(ps.c.rx_mac_control);
        const mac_control_cview mc(p + pf.l3_off);
        if (pf.mac_control_opcode == mac_control_op_pfc) {
            bump(ps.c.rx_pfc);
            ps.pt.on_pfc(now, mc.class_enable(), mc.pfc_times(), ps.b.line_rate);
        } else if (pf.mac_control_opcode == mac_control_op_pause) {
            bump(ps.c.rx_pause);
            ps.pt.on_pause(now, mc.pause_time(), ps.b.line_rate);
        }
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind == frame_kind::arp) {
        bump(ps.c.rx_arp);
        const arp_cview a(p + pf.l3_off);
        if (a.oper() == arp_op_request) {
            for (const auto& h : ps.hosts) {
                if (h.ip == a.tpa()) {
                    const mac_addr sha = a.sha();
                    const std::uint32_t spa = a.spa();
                    queue_reply(ps, m, build_arp(p, arp_op_reply, sha, h.mac, h.ip, sha, spa), ps.c.arp_replies);
                    return;
                }
            }
        }
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind == frame_kind::ipv6 && !pf.is_roce && nd_is_solicitation(p, pf.l3_off, len)) {
        bump(ps.c.rx_nd);
        const std::uint8_t* target = nd_target(p, pf.l3_off);
        for (const auto& h : ps.hosts) {
            if (h.v6 && std::memcmp(h.ip6.data(), target, 16) == 0) {
                if (nd_make_advert(p, len, pf.l3_off, h.mac.data(), false)) {
                    queue_reply(ps, m, static_cast<std::uint32_t>(nd_na_frame_len(pf.l3_off)), ps.c.nd_replies);
                    return;
                }
                break;
            }
        }
        rte_pktmbuf_free(m);
        return;
    }
    if ((pf.kind != frame_kind::ipv4 && pf.kind != frame_kind::ipv6) || !pf.is_roce) {
        bump(ps.c.rx_non_roce);
        rte_pktmbuf_free(m);
        return;
    }
    bool local = false;
    if (pf.kind == frame_kind::ipv4) {
        for (std::uint32_t ip : ps.hosts_ip) {
            local = local || ip == pf.ip4_dst;
        }
    } else {
        for (const auto& ip : ps.hosts_ip6) {
            local = local || std::memcmp(ip.data(), p + pf.ip6_dst_off, 16) == 0;
        }
    }
    if (!local) {
        bump(ps.c.rx_not_local);
        rte_pktmbuf_free(m);
        return;
    }
    const bool is_ack = pf.opcode == roce_op::rc_ack;
    const bool is_cnp = pf.opcode == roce_op::cnp;
    // Loss injection: what the wire lost never reaches any check. (It
    // models data and ACK loss; CNPs are not subject to it.)
    if (!is_cnp && (is_ack ? ps.ack_loss.drop(ps.loss_rng) : ps.data_loss.drop(ps.loss_rng))) {
        bump(is_ack ? ps.c.loss_ack : ps.c.loss_data);
        rte_pktmbuf_free(m);
        return;
    }
    if (!icrc_ok(p, pf)) {
        bump(ps.c.rx_bad_icrc);
        rte_pktmbuf_free(m);
        return;
    }
    const std::int32_t ep = pf.dest_qpn < ps.qpn_table.size() ? ps.qpn_table[pf.dest_qpn] : -1;
    if (ep < 0) {
        bump(ps.c.rx_unknown_qpn);
        rte_pktmbuf_free(m);
        return;
    }
    flow_state& f = *_flows[static_cast<std::size_t>(ep >> 1)];
    if (is_cnp) {  // reaction point: only a requester's QP takes CNPs (rx_cnp)
        if ((ep & 1) == 0) {
            bump(ps.c.rx_cnp);
            bump(f.cnp_rx);
            if (f.dcqcn) {
                f.rp.on_cnp(now);
                f.rp_next = f.rp.next_deadline();
                apply_rate(f, now);
                touch(f, true);
            }
        } else {
            bump(ps.c.rx_unsupported_opcode);
        }
        rte_pktmbuf_free(m);
        return;
    }
    if ((ep & 1) == 0) {  // requester: ACK/NAK
        if (!is_ack) {
            bump(ps.c.rx_unsupported_opcode);
        } else {
            const aeth_fields a = read_aeth(p + pf.bth_off + bth_len);
            f.rq.on_aeth(now, pf.psn, a.syndrome, a.msn);
            touch(f, true);
        }
        rte_pktmbuf_free(m);
        return;
    }
    respond(ps, f, static_cast<std::size_t>(ep >> 1), m, p, pf, now);  // gen_responder.hpp
}

// The received frame's ICRC, checked. A data frame whose payload is the
// pattern every generator sends (checked byte for byte, pad included) has
// the payload's CRC known (_pcrc), so only its headers are run through the
// CRC and combined with it, as at TX: the same verdict as a CRC over the
// whole datagram (CRC is linear), for ~60 bytes instead of the PMTU. Any
// other frame (an ACK, a CNP, another payload) takes the full CRC.
bool gen_pipeline::icrc_ok(const std::byte* frame, const parsed_frame& pf) const noexcept {
    const std::uint32_t len = pf.roce_payload_len;
    if (len == 0 || len >= _pcrc.size() || pf.kind != frame_kind::ipv4 ||
        !roce_payload_is(frame, pf, std::span<const std::byte>(_payload.data(), len))) {
        return roce_frame_icrc_ok(frame, pf);
    }
    const std::uint32_t got = icrc_load(frame + pf.l4_off + pf.l4_len - icrc_len);
    return icrc_of(frame + pf.l3_off, static_cast<std::uint32_t>(pf.roce_payload_off - pf.l3_off), len) == got;
}

}  // namespace rocelab::gen
