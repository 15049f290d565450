// Unit tests for roce/responder.hpp: the go-back-N receive state machine of
// reference sec. 1.7 (in order, one NAK per gap, duplicates re-ACKed,
// coalescing, opcode-sequence and length errors, PSN wrap).
#include "roce/responder.hpp"

#include <gtest/gtest.h>

namespace rocelab {
namespace {

using namespace rocelab::literals;

constexpr std::uint8_t wf = roce_op::rc_write_first;
constexpr std::uint8_t wm = roce_op::rc_write_middle;
constexpr std::uint8_t wl = roce_op::rc_write_last;
constexpr std::uint8_t wo = roce_op::rc_write_only;

qp_cfg cfg_with(std::uint32_t start_psn, std::uint32_t coalesce = 1) {
    qp_cfg c;
    c.start_psn = start_psn;
    c.pmtu = 1024;
    c.ack_coalesce = coalesce;
    return c;
}

TEST(responder, in_order_accepts_and_acks_each_packet) {
    responder r{cfg_with(100)};
    nanos t{0};
    auto v = r.on_packet(t, 100, wf, false, 1024);
    EXPECT_EQ(v.status, rx_status::accepted);
    EXPECT_EQ(v.reply, rx_reply::ack);
    EXPECT_EQ(v.psn, 100u);
    EXPECT_EQ(v.msn, 0u);
    EXPECT_EQ(v.syndrome, 0x1F);
    v = r.on_packet(t, 101, wm, false, 1024);
    EXPECT_EQ(v.status, rx_status::accepted);
    v = r.on_packet(t, 102, wl, true, 10);
    EXPECT_EQ(v.status, rx_status::accepted);
    EXPECT_TRUE(v.message_done);
    EXPECT_EQ(v.psn, 102u);
    EXPECT_EQ(v.msn, 1u);
    v = r.on_packet(t, 103, wo, true, 0);
    EXPECT_EQ(v.msn, 2u);
    EXPECT_EQ(r.epsn(), 104u);
    const auto& c = r.counters();
    EXPECT_EQ(c.rx_packets, 4u);
    EXPECT_EQ(c.rx_bytes, 2058u);
    EXPECT_EQ(c.messages_rx, 2u);
    EXPECT_EQ(c.acks_tx, 4u);
    EXPECT_EQ(c.naks_tx, 0u);
}

TEST(responder, gap_gives_exactly_one_nak_then_silence_until_epsn) {
    responder r{cfg_with(0)};
    nanos t{0};
    EXPECT_EQ(r.on_packet(t, 0, wo, true, 8).status, rx_status::accepted);
    // PSN 1 lost; 2..9 arrive.
    auto v = r.on_packet(t, 2, wo, true, 8);
    EXPECT_EQ(v.status, rx_status::out_of_sequence);
    EXPECT_EQ(v.reply, rx_reply::nak);
    EXPECT_EQ(v.psn, 1u);  // BTH PSN = ePSN
    EXPECT_EQ(v.syndrome, 0x60);
    EXPECT_EQ(v.msn, 1u);
    EXPECT_TRUE(r.nak_sent());
    for (std::uint32_t p = 3; p < 10; ++p) {
        v = r.on_packet(t, p, wo, true, 8);
        EXPECT_EQ(v.status, rx_status::out_of_sequence);
        EXPECT_EQ(v.reply, rx_reply::none) << p;
    }
    EXPECT_EQ(r.counters().naks_tx, 1u);
    EXPECT_EQ(r.counters().out_of_sequence, 8u);
    // Retransmission of ePSN clears the flag; the next gap NAKs again.
    v = r.on_packet(t, 1, wo, true, 8);
    EXPECT_EQ(v.status, rx_status::accepted);
    EXPECT_FALSE(r.nak_sent());
    v = r.on_packet(t, 3, wo, true, 8);
    EXPECT_EQ(v.reply, rx_reply::nak);
    EXPECT_EQ(v.psn, 2u);
    EXPECT_EQ(r.counters().naks_tx, 2u);
    EXPECT_EQ(r.counters().naks_seq_tx, 2u);
}

TEST(responder, duplicate_is_dropped_and_reacked) {
    responder r{cfg_with(10)};
    nanos t{0};
    for (std::uint32_t p = 10; p < 15; ++p) {
        r.on_packet(t, p, wo, true, 100);
    }
    auto v = r.on_packet(t, 12, wo, false, 100);
    EXPECT_EQ(v.status, rx_status::duplicate);
    EXPECT_EQ(v.reply, rx_reply::ack);
    EXPECT_EQ(v.psn, 14u);  // last accepted
    EXPECT_EQ(v.msn, 5u);
    EXPECT_EQ(r.counters().duplicates, 1u);
    EXPECT_EQ(r.counters().rx_packets, 5u);
    EXPECT_EQ(r.counters().rx_bytes, 500u);
    EXPECT_EQ(r.epsn(), 15u);
    // 2^23 behind is a duplicate; 2^23 - 1 ahead is out of sequence.
    EXPECT_EQ(r.on_packet(t, psn_sub(15, 0x800000), wo, false, 1).status, rx_status::duplicate);
    EXPECT_EQ(r.on_packet(t, psn_add(15, 0x7FFFFF), wo, false, 1).status, rx_status::out_of_sequence);
}

TEST(responder, coalescing_acks_every_n_or_on_ackreq) {
    responder r{cfg_with(0, 4)};
    nanos t{0};
    int acks = 0;
    std::uint32_t last_acked = 0;
    for (std::uint32_t p = 0; p < 16; ++p) {
        const bool areq = p == 5;
        const auto v = r.on_packet(t, p, wo, areq, 64);
        if (v.reply == rx_reply::ack) {
            ++acks;
            last_acked = v.psn;
        }
    }
    // ACKs at 3, 5 (AckReq, restarts the count), 9, 13.
    EXPECT_EQ(acks, 4);
    EXPECT_EQ(last_acked, 13u);
    EXPECT_EQ(r.counters().acks_tx, 4u);
}

TEST(responder, psn_wraps_at_2_pow_24) {
    responder r{cfg_with(0xFFFFFD)};
    nanos t{0};
    std::uint32_t p = 0xFFFFFD;
    for (int i = 0; i < 6; ++i) {
        const auto v = r.on_packet(t, p, wo, true, 4);
        EXPECT_EQ(v.status, rx_status::accepted) << i;
        EXPECT_EQ(v.psn, p);
        p = psn_add(p, 1);
    }
    EXPECT_EQ(r.epsn(), 3u);
    // Gap across the wrap: expected 3, got 5 -> NAK 3; 0xFFFFFF is a duplicate.
    auto v = r.on_packet(t, 5, wo, true, 4);
    EXPECT_EQ(v.reply, rx_reply::nak);
    EXPECT_EQ(v.psn, 3u);
    v = r.on_packet(t, 0xFFFFFF, wo, true, 4);
    EXPECT_EQ(v.status, rx_status::duplicate);
    EXPECT_EQ(v.psn, 2u);
}

TEST(responder, opcode_sequence_errors_nak_invalid_request) {
    {
        responder r{cfg_with(0)};
        const auto v = r.on_packet(nanos{0}, 0, wm, false, 1024);  // MIDDLE without FIRST
        EXPECT_EQ(v.status, rx_status::invalid_request);
        EXPECT_EQ(v.reply, rx_reply::nak);
        EXPECT_EQ(v.syndrome, 0x61);
        EXPECT_EQ(v.psn, 0u);
        EXPECT_EQ(r.counters().invalid_requests, 1u);
        EXPECT_TRUE(r.in_error());
        EXPECT_EQ(r.on_packet(nanos{0}, 0, wo, true, 1).status, rx_status::qp_error);
        EXPECT_EQ(r.counters().drop_qp_error, 1u);
        r.reset();
        EXPECT_EQ(r.on_packet(nanos{0}, 0, wo, true, 1).status, rx_status::accepted);
    }
    {
        responder r{cfg_with(0)};
        r.on_packet(nanos{0}, 0, wf, false, 1024);
        EXPECT_EQ(r.on_packet(nanos{0}, 1, wf, false, 1024).status,
                  rx_status::invalid_request);  // FIRST in msg
    }
    {
        responder r{cfg_with(0)};
        r.on_packet(nanos{0}, 0, wf, false, 1024);
        EXPECT_EQ(r.on_packet(nanos{0}, 1, roce_op::rc_send_last, false, 10).status,
                  rx_status::invalid_request);  // WRITE then SEND
    }
    {
        responder r{cfg_with(0)};
        EXPECT_EQ(r.on_packet(nanos{0}, 0, wl, false, 10).status, rx_status::invalid_request);  // LAST alone
    }
    {
        responder r{cfg_with(0)};
        r.on_packet(nanos{0}, 0, roce_op::rc_send_first, false, 1024);
        EXPECT_EQ(r.on_packet(nanos{0}, 1, roce_op::rc_send_only, false, 10).status,
                  rx_status::invalid_request);
    }
}

TEST(responder, length_errors_nak_invalid_request) {
    {
        responder r{cfg_with(0)};
        EXPECT_EQ(r.on_packet(nanos{0}, 0, wf, false, 1000).status, rx_status::invalid_request);
    }
    {
        responder r{cfg_with(0)};
        r.on_packet(nanos{0}, 0, wf, false, 1024);
        EXPECT_EQ(r.on_packet(nanos{0}, 1, wl, false, 0).status, rx_status::invalid_request);
    }
    {
        responder r{cfg_with(0)};
        EXPECT_EQ(r.on_packet(nanos{0}, 0, wo, false, 1025).status, rx_status::invalid_request);
    }
}

TEST(responder, unsupported_and_icrc_counted) {
    responder r{cfg_with(0)};
    EXPECT_EQ(r.on_packet(nanos{0}, 0, roce_op::rc_read_request, true, 0).status, rx_status::unsupported);
    EXPECT_EQ(r.on_packet(nanos{0}, 0, roce_op::rc_ack, false, 0).status, rx_status::unsupported);
    r.on_icrc_error();
    EXPECT_EQ(r.counters().unsupported_opcode, 2u);
    EXPECT_EQ(r.counters().icrc_errors, 1u);
    EXPECT_EQ(r.epsn(), 0u);
}

// Every RC data opcode's position and family; every other opcode (UC, UD,
// reads, ACKs, atomics, CNP, unknown) is none.
TEST(responder, classify_rc_opcode_covers_sends_and_writes) {
    struct row {
        std::uint8_t op;
        op_pos pos;
        std::uint8_t family;
    };
    constexpr row rows[] = {
        {roce_op::rc_send_first, op_pos::first, 1},   {roce_op::rc_send_middle, op_pos::middle, 1},
        {roce_op::rc_send_last, op_pos::last, 1},     {roce_op::rc_send_last_imm, op_pos::last, 1},
        {roce_op::rc_send_last_inv, op_pos::last, 1}, {roce_op::rc_send_only, op_pos::only, 1},
        {roce_op::rc_send_only_imm, op_pos::only, 1}, {roce_op::rc_send_only_inv, op_pos::only, 1},
        {roce_op::rc_write_first, op_pos::first, 0},  {roce_op::rc_write_middle, op_pos::middle, 0},
        {roce_op::rc_write_last, op_pos::last, 0},    {roce_op::rc_write_last_imm, op_pos::last, 0},
        {roce_op::rc_write_only, op_pos::only, 0},    {roce_op::rc_write_only_imm, op_pos::only, 0},
    };
    for (int op = 0; op < 256; ++op) {
        const op_class c = classify_rc_opcode(static_cast<std::uint8_t>(op));
        op_class want{};
        for (const row& r : rows) {
            if (r.op == op) {
                want = {r.pos, r.family};
            }
        }
        EXPECT_EQ(c.pos, want.pos) << "opcode " << op;
        EXPECT_EQ(c.family, want.family) << "opcode " << op;
    }
}

}  // namespace
}  // namespace rocelab
