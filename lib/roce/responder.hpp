// responder.hpp - the receiving side of one RC queue pair (go-back-N).
//
// What: one expected PSN (ePSN) per QP and the rules of reference sec. 1.7
// (as rxe_resp.c check_psn / check_op_seq / check_length apply them). For
// each received RC SEND/WRITE packet, on_packet() classifies it and says what
// to send back; the caller builds the ACKNOWLEDGE frame (opcode 0x11, BTH PSN
// and AETH {syndrome, msn} from the verdict) with lib/proto. ICRC and header
// checks happen before, in the caller (on_icrc_error() counts failures).
//
//   PSN == ePSN   in order: the opcode sequence and length are checked, then
//                 the packet is accepted, ePSN += 1, the "NAK sent" flag is
//                 cleared, and LAST/ONLY completes a message (MSN += 1). ACK
//                 (syndrome 0x1F, PSN = this PSN, MSN) when AckReq is set or
//                 after ack_coalesce accepted packets since the last ACK.
//   PSN ahead     (within 2^23): out of sequence, dropped. The first such
//                 packet after the last accepted one sends ONE NAK (syndrome
//                 0x60, PSN = ePSN); later ones are dropped silently until
//                 ePSN arrives.
//   PSN behind    (within 2^23): duplicate, payload dropped, re-ACK with the
//                 last accepted PSN (ePSN - 1) and the current MSN.
//   Opcode sequence error (MIDDLE/LAST without FIRST, FIRST/ONLY inside a
//   message, SEND and WRITE mixed) or bad length (FIRST/MIDDLE != PMTU,
//   LAST 0 or > PMTU, ONLY > PMTU): NAK invalid request (0x61, PSN = the
//   packet's PSN); the QP enters the error state and drops everything after
//   (counted in drop_qp_error) until reset().
//   Other opcodes (READ, atomics, ACKs, UC/UD): not handled here, counted in
//   unsupported_opcode, no reply.
//
// Parameters (from qp_cfg): start_psn (initial ePSN), pmtu, ack_coalesce.
//
// Counters (responder_counters; per-flow result names of USERS.md):
//   rx_packets/rx_bytes (accepted, payload bytes), out_of_sequence (all
//   dropped ahead-of-ePSN packets), duplicates, acks_tx, naks_tx (all NAKs),
//   naks_seq_tx, invalid_requests, messages_rx, icrc_errors,
//   unsupported_opcode, drop_qp_error.
//
// Example:
//   responder rs{cfg};
//   rx_verdict v = rs.on_packet(now, bth.psn(), bth.opcode(), bth.ack_req(), payload_len);
//   if (v.reply != rx_reply::none) { send ACK(psn = v.psn, aeth = {v.syndrome, v.msn}); }
#pragma once

#include <cstdint>

#include "core/counter.hpp"
#include "core/units.hpp"
#include "proto/bth.hpp"
#include "proto/psn.hpp"
#include "roce/qp_cfg.hpp"

namespace rocelab {

enum class rx_status : std::uint8_t {
    accepted = 0,
    duplicate,
    out_of_sequence,
    invalid_request,
    unsupported,
    qp_error,
};
enum class rx_reply : std::uint8_t { none = 0, ack, nak };

struct rx_verdict {
    rx_status status = rx_status::accepted;
    rx_reply reply = rx_reply::none;
    std::uint32_t psn = 0;      // BTH PSN of the reply
    std::uint32_t msn = 0;      // AETH MSN of the reply
    std::uint8_t syndrome = 0;  // AETH syndrome of the reply
    bool message_done = false;  // this packet completed a message
};

// The counters (doc block above), one list for the struct and the reports
// that list them all (core/counter.hpp), a group a line (clang-format off:
// it would re-flow the groups).
// clang-format off
#define ROCELAB_RESPONDER_COUNTERS(X)                          \
    X(rx_packets) X(rx_bytes) X(out_of_sequence) X(duplicates) \
    X(acks_tx) X(naks_tx) X(naks_seq_tx)                       \
    X(invalid_requests) X(messages_rx)                         \
    X(icrc_errors) X(unsupported_opcode) X(drop_qp_error)
// clang-format on

// Live (counter64: read by other threads while the worker runs), and a
// snapshot of them in plain integers.
struct responder_counters {
    ROCELAB_RESPONDER_COUNTERS(ROCELAB_COUNTER64)
};
struct responder_counts {
    ROCELAB_RESPONDER_COUNTERS(ROCELAB_U64_COUNTER)
};
ROCELAB_COUNTER_SNAPSHOT(ROCELAB_RESPONDER_COUNTERS, responder_counters, responder_counts)

// Position of an RC data opcode in its message.
enum class op_pos : std::uint8_t { first, middle, last, only, none };
struct op_class {
    op_pos pos = op_pos::none;
    std::uint8_t family = 0xFF;  // 0 = RDMA WRITE, 1 = SEND
};
// RC sends (0x00-0x05) and RDMA writes (0x06-0x0B) run through the same six
// positions: first, middle, last, last with immediate, only, only with
// immediate; the two sends with invalidate come later (0x16, 0x17).
constexpr op_class classify_rc_opcode(std::uint8_t op) noexcept {
    constexpr op_pos pos_in_family[6] = {op_pos::first, op_pos::middle, op_pos::last,
                                         op_pos::last,  op_pos::only,   op_pos::only};
    if (op <= roce_op::rc_write_only_imm) {
        return {pos_in_family[op % 6], static_cast<std::uint8_t>(op < roce_op::rc_write_first ? 1 : 0)};
    }
    if (op == roce_op::rc_send_last_inv) {
        return {op_pos::last, 1};
    }
    if (op == roce_op::rc_send_only_inv) {
        return {op_pos::only, 1};
    }
    return {};
}

class responder {
public:
    explicit responder(const qp_cfg& cfg) noexcept
        : _epsn(cfg.start_psn & psn_mask),
          _pmtu(cfg.pmtu),
          _coalesce(cfg.ack_coalesce == 0 ? 1 : cfg.ack_coalesce),
          _start_psn(cfg.start_psn & psn_mask) {}

    rx_verdict on_packet(nanos now, std::uint32_t psn, std::uint8_t opcode, bool ack_req,
                         std::uint32_t payload_len) noexcept {
        (void)now;  // no ACK timer yet; kept so the API does not change when one is added
        rx_verdict v{};
        const op_class oc = classify_rc_opcode(opcode);
        if (oc.pos == op_pos::none) {
            ++_c.unsupported_opcode;
            v.status = rx_status::unsupported;
            return v;
        }
        if (_error) {
            ++_c.drop_qp_error;
            v.status = rx_status::qp_error;
            return v;
        }
        const std::int32_t d = psn_diff(psn & psn_mask, _epsn);
        if (d > 0) {
            ++_c.out_of_sequence;
            v.status = rx_status::out_of_sequence;
            if (!_nak_sent) {
                _nak_sent = true;
                ++_c.naks_tx;
                ++_c.naks_seq_tx;
                v.reply = rx_reply::nak;
                v.psn = _epsn;
                v.msn = _msn;
                v.syndrome = aeth_syndrome_nak(nak_code::psn_seq_error);
            }
            return v;
        }
        if (d < 0) {
            ++_c.duplicates;
            ++_c.acks_tx;
            v.status = rx_status::duplicate;
            v.reply = rx_reply::ack;
            v.psn = psn_sub(_epsn, 1);
            v.msn = _msn;
            v.syndrome = aeth_syndrome_ack();
            return v;
        }
        if (!sequence_ok(oc) || !length_ok(oc.pos, payload_len)) {
            ++_c.invalid_requests;
            ++_c.naks_tx;
            _error = true;
            v.status = rx_status::invalid_request;
            v.reply = rx_reply::nak;
            v.psn = _epsn;
            v.msn = _msn;
            v.syndrome = aeth_syndrome_nak(nak_code::invalid_request);
            return v;
        }
        // In order and well formed: accept.
        _in_msg = oc.pos == op_pos::first || oc.pos == op_pos::middle;
        _family = oc.family;
        _nak_sent = false;
        ++_c.rx_packets;
        _c.rx_bytes += payload_len;
        if (oc.pos == op_pos::last || oc.pos == op_pos::only) {
            _msn = psn_add(_msn, 1);
            ++_c.messages_rx;
            v.message_done = true;
        }
        v.status = rx_status::accepted;
        ++_unacked;
        if (ack_req || _unacked >= _coalesce) {
            _unacked = 0;
            ++_c.acks_tx;
            v.reply = rx_reply::ack;
            v.psn = _epsn;
            v.msn = _msn;
            v.syndrome = aeth_syndrome_ack();
        }
        _epsn = psn_add(_epsn, 1);
        return v;
    }

    // The caller found a bad ICRC (the packet is not given to on_packet).
    void on_icrc_error() noexcept { ++_c.icrc_errors; }

    // Back to the initial state (ePSN = start_psn, MSN 0); counters are kept.
    void reset() noexcept {
        _epsn = _start_psn;
        _msn = 0;
        _unacked = 0;
        _nak_sent = false;
        _in_msg = false;
        _error = false;
    }

    std::uint32_t epsn() const noexcept { return _epsn; }
    std::uint32_t msn() const noexcept { return _msn; }
    bool nak_sent() const noexcept { return _nak_sent; }
    bool in_error() const noexcept { return _error; }
    const responder_counters& counters() const noexcept { return _c; }

private:
    bool sequence_ok(op_class oc) const noexcept {
        if (oc.pos == op_pos::first || oc.pos == op_pos::only) {
            return !_in_msg;
        }
        return _in_msg && oc.family == _family;
    }
    bool length_ok(op_pos pos, std::uint32_t len) const noexcept {
        switch (pos) {
            case op_pos::first:
            case op_pos::middle:
                return len == _pmtu;
            case op_pos::last:
                return len != 0 && len <= _pmtu;
            default:
                return len <= _pmtu;
        }
    }

    // Hot state.
    std::uint32_t _epsn;
    std::uint32_t _msn = 0;
    std::uint32_t _unacked = 0;
    std::uint32_t _pmtu;
    std::uint32_t _coalesce;
    std::uint8_t _family = 0xFF;
    bool _in_msg = false;
    bool _nak_sent = false;
    bool _error = false;
    std::uint32_t _start_psn;

    // Cold state.
    responder_counters _c{};
};

}  // namespace rocelab
