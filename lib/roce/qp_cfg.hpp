// qp_cfg.hpp - configuration of one RC queue pair in the traffic generator,
// plus the small pure helpers the requester and responder share.
//
// What: the immutable per-QP settings (validated once on the control path by
// qp_cfg_check) and derived values:
//   * roce_udp_sport(src_qpn, dst_qpn): the UDP source port Linux RDMA drivers
//     use when the GID has no flow label (see the derivation below);
//   * ack_timeout_of(code): local ACK timeout 4.096 us x 2^code, 0 = infinite;
//   * rnr_timer_of(code): the IBTA RNR NAK timer table;
//   * packets_of(size, pmtu) and rc_opcode(family, first, last);
//   * roce_v4_wire_len / roce_v6_wire_len: frame bytes (no FCS) for a packet,
//     as build_roce_v4/v6 would write them, for pacing without building.
//
// Parameters (qp_cfg fields; ranges enforced by qp_cfg_check):
//   src_qpn, dst_qpn   24-bit QP numbers (dst_qpn goes into BTH.DestQP)
//   start_psn          first PSN, 24 bits
//   pmtu               256 | 512 | 1024 | 2048 | 4096 bytes of payload
//   msg_size           default message size for sources (0 .. 2^31 bytes)
//   family             rdma_write (WRITE_FIRST/MIDDLE/LAST/ONLY, RETH on
//                      FIRST/ONLY) or send (SEND_FIRST/MIDDLE/LAST/ONLY)
//   dscp, ecn          IP marking (ecn default ECT(0) = 2)
//   udp_sport          0 = derive roce_udp_sport(src_qpn, dst_qpn)
//   ack_req_every      requester sets AckReq on the last packet of every
//                      message and, when N > 0, also on every N-th packet
//   ack_coalesce       responder ACKs every N in-order packets, or at once
//                      when AckReq is set (1 = ACK every packet)
//   ack_timeout        local ACK timeout code 0..31 (0 = infinite); 14 ~ 67 ms
//   retry_cnt          0..7 timeout retries before the QP enters error
//   retry_infinite     treat retry_cnt 7 as infinite (Linux rxe behaviour;
//                      IBTA says retry_cnt 7 is 7 and only rnr_retry 7 is
//                      infinite, so the default is false)
//   rnr_retry          0..7, 7 = infinite (IBTA)
//   window             max packets outstanding (snd_nxt - snd_una), >= 1
//   remote_va, rkey    RETH contents for RDMA WRITE (the caller builds it)
//
// UDP source port derivation (Linux include/rdma/ib_verbs.h,
// rdma_calc_flow_label + rdma_flow_label_to_udp_sport, re-derived here):
//   v  = (u64)src_qpn * dst_qpn          symmetric in the two QPNs, so both
//   v ^= v >> 20; v ^= v >> 40           ends of the connection agree
//   fl = v & 0xFFFFF                      20-bit IPv6 flow label
//   sport = ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000
// i.e. the top 6 bits of the flow label are folded onto the low 14 bits and
// the result is placed in the IANA ephemeral range 0xC000..0xFFFF. Drivers
// that do not do this (or get a non-zero flow label from the GID) differ;
// set udp_sport explicitly to match such a NIC.
//
// Config example:
//   qp: { src_qpn: 0x11, dst_qpn: 0x22, pmtu: 1024, msg_size: 64KiB,
//         op: write, dscp: 26, ack_timeout: 14, retry_cnt: 7, window: 128 }
// Counters: none.
#pragma once

#include <cstdint>
#include <string>

#include "core/units.hpp"
#include "proto/bth.hpp"
#include "proto/ipv4.hpp"
#include "proto/psn.hpp"

namespace rocelab {

enum class op_family : std::uint8_t { rdma_write = 0, send = 1 };

struct qp_cfg {
    std::uint32_t src_qpn = 0x11;
    std::uint32_t dst_qpn = 0x11;
    std::uint32_t start_psn = 0;
    std::uint32_t pmtu = 1024;
    bytes msg_size{65536};
    op_family family = op_family::rdma_write;
    std::uint8_t dscp = 26;
    std::uint8_t ecn = ecn_ect0;
    std::uint16_t udp_sport = 0;
    std::uint32_t ack_req_every = 0;
    std::uint32_t ack_coalesce = 1;
    std::uint8_t ack_timeout = 14;
    std::uint8_t retry_cnt = 7;
    bool retry_infinite = false;
    std::uint8_t rnr_retry = 7;
    std::uint32_t window = 128;
    std::uint64_t remote_va = 0;
    std::uint32_t rkey = 0;
};

constexpr bool pmtu_valid(std::uint32_t pmtu) noexcept {
    return pmtu == 256 || pmtu == 512 || pmtu == 1024 || pmtu == 2048 || pmtu == 4096;
}

// Largest message accepted (the RETH DMA length is 32 bits; IBTA caps a
// message at 2^31 bytes).
inline constexpr std::uint64_t max_message_size = std::uint64_t{1} << 31;

// Control path: "" when cfg is valid, else one message naming the field, the
// value given and what is accepted.
inline std::string qp_cfg_check(const qp_cfg& c) {
    auto bad = [](const char* field, std::uint64_t v, const char* accepted) {
        return std::string("qp.") + field + ": " + std::to_string(v) +
               " is out of range; accepted: " + accepted;
    };
    if (c.src_qpn > psn_mask) {
        return bad("src_qpn", c.src_qpn, "0..16777215 (24 bits)");
    }
    if (c.dst_qpn > psn_mask) {
        return bad("dst_qpn", c.dst_qpn, "0..16777215 (24 bits)");
    }
    if (c.start_psn > psn_mask) {
        return bad("start_psn", c.start_psn, "0..16777215 (24 bits)");
    }
    if (!pmtu_valid(c.pmtu)) {
        return bad("pmtu", c.pmtu, "256, 512, 1024, 2048 or 4096");
    }
    if (c.msg_size.v > max_message_size) {
        return bad("msg_size", c.msg_size.v, "0..2147483648 bytes");
    }
    if (c.dscp > 63) {
        return bad("dscp", c.dscp, "0..63");
    }
    if (c.ecn > 3) {
        return bad("ecn", c.ecn, "0 (not-ECT), 1 (ECT(1)), 2 (ECT(0)), 3 (CE)");
    }
    if (c.udp_sport != 0 && c.udp_sport < 0xC000) {
        return bad("udp_sport", c.udp_sport, "0 (derive from the QPNs) or 49152..65535");
    }
    if (c.ack_coalesce == 0) {
        return bad("ack_coalesce", c.ack_coalesce, "1.. packets");
    }
    if (c.ack_timeout > 31) {
        return bad("ack_timeout", c.ack_timeout, "0..31 (4.096us x 2^t, 0 = infinite)");
    }
    if (c.retry_cnt > 7) {
        return bad("retry_cnt", c.retry_cnt, "0..7");
    }
    if (c.rnr_retry > 7) {
        return bad("rnr_retry", c.rnr_retry, "0..7 (7 = infinite)");
    }
    if (c.window == 0 || c.window >= (psn_modulus >> 1)) {
        return bad("window", c.window, "1..8388607 packets");
    }
    return {};
}

// 20-bit flow label Linux derives from the two QPNs (symmetric).
constexpr std::uint32_t roce_flow_label(std::uint32_t src_qpn, std::uint32_t dst_qpn) noexcept {
    std::uint64_t v = static_cast<std::uint64_t>(src_qpn) * dst_qpn;
    v ^= v >> 20;
    v ^= v >> 40;
    return static_cast<std::uint32_t>(v & 0xFFFFFu);
}

// Fold a 20-bit flow label into a UDP source port in 0xC000..0xFFFF.
constexpr std::uint16_t roce_flow_label_to_sport(std::uint32_t fl) noexcept {
    const std::uint32_t low = fl & 0x3FFFu;
    const std::uint32_t high = (fl & 0xFC000u) >> 14;
    return static_cast<std::uint16_t>((low ^ high) | 0xC000u);
}

constexpr std::uint16_t roce_udp_sport(std::uint32_t src_qpn, std::uint32_t dst_qpn) noexcept {
    return roce_flow_label_to_sport(roce_flow_label(src_qpn, dst_qpn));
}
static_assert(roce_udp_sport(0x11, 0x22) == roce_udp_sport(0x22, 0x11));
static_assert(roce_udp_sport(0, 0) == 0xC000);

inline std::uint16_t qp_udp_sport(const qp_cfg& c) noexcept {
    return c.udp_sport != 0 ? c.udp_sport : roce_udp_sport(c.src_qpn, c.dst_qpn);
}

// Local ACK timeout: 4.096 us x 2^code; code 0 = infinite (nanos::max()).
constexpr nanos ack_timeout_of(std::uint8_t code) noexcept {
    if (code == 0) {
        return nanos::max();
    }
    return nanos{static_cast<std::int64_t>(4096) << (code & 31u)};
}
static_assert(ack_timeout_of(14).v == 67'108'864);

// RNR NAK timer (IBTA table 45): 5-bit code to time, in units of 0.01 ms;
// code 0 is the longest, 655.36 ms.
constexpr nanos rnr_timer_of(std::uint8_t code) noexcept {
    constexpr std::uint32_t units_10us[32] = {
        65536, 1,   2,   3,   4,    6,    8,    12,   16,   24,   32,   48,    64,    96,    128,   192,
        256,   384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    };
    return nanos{static_cast<std::int64_t>(units_10us[code & 31u]) * 10'000};
}
static_assert(rnr_timer_of(16).v == 2'560'000);
static_assert(rnr_timer_of(1).v == 10'000);
static_assert(rnr_timer_of(0).v == 655'360'000);

// Packets in a message of `size` bytes (a 0-byte message is one ONLY packet).
constexpr std::uint32_t packets_of(std::uint64_t size, std::uint32_t pmtu) noexcept {
    return size == 0 ? 1u : static_cast<std::uint32_t>((size + pmtu - 1) / pmtu);
}

constexpr std::uint8_t rc_opcode(op_family f, bool first, bool last) noexcept {
    if (f == op_family::rdma_write) {
        return first ? (last ? roce_op::rc_write_only : roce_op::rc_write_first)
                     : (last ? roce_op::rc_write_last : roce_op::rc_write_middle);
    }
    return first ? (last ? roce_op::rc_send_only : roce_op::rc_send_first)
                 : (last ? roce_op::rc_send_last : roce_op::rc_send_middle);
}

// Frame length (no FCS, no VLAN tag) as build_roce_v4/v6 writes it:
// Ethernet 14 + IP + UDP 8 + BTH 12 + extended headers + payload padded to 4
// + ICRC 4, padded to the 60-byte Ethernet minimum.
constexpr std::uint32_t roce_wire_len(std::uint32_t ip_hdr_len, std::uint8_t opcode,
                                      std::uint32_t payload) noexcept {
    const std::uint32_t padded = (payload + 3u) & ~3u;
    const std::uint32_t n =
        14u + ip_hdr_len + 8u + bth_len + roce_opcode_lookup(opcode).ext_len + padded + icrc_len;
    return n < 60u ? 60u : n;
}
constexpr std::uint32_t roce_v4_wire_len(std::uint8_t opcode, std::uint32_t payload) noexcept {
    return roce_wire_len(20, opcode, payload);
}
constexpr std::uint32_t roce_v6_wire_len(std::uint8_t opcode, std::uint32_t payload) noexcept {
    return roce_wire_len(40, opcode, payload);
}
static_assert(roce_v4_wire_len(roce_op::rc_send_only, 16) == 74);   // reference vector A
static_assert(roce_v4_wire_len(roce_op::rc_write_only, 16) == 90);  // vector B
static_assert(roce_v4_wire_len(roce_op::rc_ack, 0) == 62);          // vector C

}  // namespace rocelab
