// frame.hpp - glue from the RC transport decisions to lib/proto builders.
//
// What: fills the per-packet fields of a roce_v4_params / roce_v6_params
// from a qp_cfg and a requester tx_desc (data packets) or a responder
// rx_verdict (ACK/NAK replies). Addresses, MACs, VLAN, TTL and IP id stay the
// caller's (set once per QP); build_roce_v4/v6 then writes the frame, pad and
// ICRC.
//   data:  BTH {opcode, DestQP = cfg.dst_qpn, AckReq, PSN}, DSCP/ECN from
//          cfg, UDP source port qp_udp_sport(cfg), RETH {remote_va, rkey,
//          DMA length = message size} on RDMA WRITE FIRST/ONLY (the VA is the
//          message base: IBTA carries it only in the first packet), payload.
//   reply: opcode ACKNOWLEDGE (0x11), DestQP = cfg.dst_qpn (the requester's
//          QP as seen from the responder's cfg), PSN and AETH {syndrome, MSN}
//          from the verdict, same DSCP/ECN/source port.
// Counters: none. Nothing allocates.
#pragma once

#include <span>

#include "proto/build.hpp"
#include "roce/qp_cfg.hpp"
#include "roce/requester.hpp"
#include "roce/responder.hpp"

namespace rocelab {

template <class Params>
void fill_data_params(const qp_cfg& c, const tx_desc& d, std::span<const std::byte> payload,
                      Params& p) noexcept {
    p.dscp = c.dscp;
    p.ecn = c.ecn;
    p.sport = qp_udp_sport(c);
    p.bth = bth_fields{};
    p.bth.opcode = d.opcode;
    p.bth.dest_qpn = c.dst_qpn;
    p.bth.ack_req = d.ack_req;
    p.bth.psn = d.psn;
    p.ext.reth = reth_fields{c.remote_va, c.rkey, static_cast<std::uint32_t>(d.msg_size)};
    p.payload = payload;
}

template <class Params>
void fill_reply_params(const qp_cfg& c, const rx_verdict& v, Params& p) noexcept {
    p.dscp = c.dscp;
    p.ecn = c.ecn;
    p.sport = qp_udp_sport(c);
    p.bth = bth_fields{};
    p.bth.opcode = roce_op::rc_ack;
    p.bth.dest_qpn = c.dst_qpn;
    p.bth.psn = v.psn;
    p.ext.aeth = aeth_fields{v.syndrome, v.msn};
    p.payload = {};
}

}  // namespace rocelab
