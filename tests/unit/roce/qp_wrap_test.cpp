// Unit tests: a requester and a responder built from the same qp_cfg (as the
// generator builds both ends of a flow) exchange packets across the 24-bit
// PSN wrap: in order with no NAK, a loss at PSN 0 recovered by one NAK and
// go-back-N, and a tail loss across the wrap recovered by the ACK timeout.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "roce/requester.hpp"
#include "roce/responder.hpp"

namespace rocelab {
namespace {

qp_cfg wrap_cfg(std::uint32_t start_psn) {
    qp_cfg c;
    c.start_psn = start_psn;
    c.pmtu = 1024;
    c.window = 64;
    c.ack_timeout = 1;  // 8.192 us
    c.retry_cnt = 2;
    return c;
}

struct wire_log {
    std::vector<std::uint32_t> psns;  // every packet the requester sent, in order
    std::vector<bool> retx;
};

// Sends everything the requester has at `now` through the responder
// (drop(desc) = lost on the way) and each reply straight back.
template <typename Drop>
void exchange(requester& rq, responder& rs, nanos now, wire_log& log, Drop drop) {
    tx_desc d;
    while (rq.next(now, d)) {
        log.psns.push_back(d.psn);
        log.retx.push_back(d.retransmit);
        if (drop(d)) {
            continue;
        }
        const rx_verdict v = rs.on_packet(now, d.psn, d.opcode, d.ack_req, d.len);
        if (v.reply != rx_reply::none) {
            rq.on_aeth(now, v.psn, v.syndrome, v.msn);
        }
    }
}

TEST(qp_wrap, in_order_across_the_wrap_needs_no_nak) {
    const std::uint32_t start = psn_mask - 99;  // 100 packets before the wrap
    const qp_cfg c = wrap_cfg(start);
    requester rq{c};
    responder rs{c};
    EXPECT_EQ(rq.snd_nxt_psn(), start);  // both ends start at start_psn
    EXPECT_EQ(rs.epsn(), start);
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(rq.post_message(nanos{0}, bytes{65536}));  // 64 packets each
    }
    wire_log log;
    exchange(rq, rs, nanos{1}, log, [](const tx_desc&) { return false; });
    ASSERT_EQ(log.psns.size(), 256u);
    EXPECT_EQ(log.psns[99], psn_mask);
    EXPECT_EQ(log.psns[100], 0u);
    EXPECT_EQ(log.psns[255], 155u);
    for (std::size_t i = 1; i < log.psns.size(); ++i) {
        EXPECT_EQ(log.psns[i], psn_add(log.psns[i - 1], 1)) << i;
    }
    EXPECT_EQ(rq.counters().messages_completed, 4u);
    EXPECT_EQ(rq.counters().naks_rx, 0u);
    EXPECT_EQ(rq.counters().retx_packets, 0u);
    EXPECT_EQ(rq.counters().acks_invalid, 0u);
    EXPECT_EQ(rq.counters().msn_mismatch, 0u);
    EXPECT_EQ(rs.counters().rx_packets, 256u);
    EXPECT_EQ(rs.counters().messages_rx, 4u);
    EXPECT_EQ(rs.counters().naks_tx, 0u);
    EXPECT_EQ(rs.counters().out_of_sequence + rs.counters().duplicates, 0u);
    EXPECT_EQ(rs.epsn(), 156u);
    EXPECT_EQ(rq.snd_una_psn(), 156u);
}

TEST(qp_wrap, loss_at_psn_0_one_nak_then_go_back_n_across_the_wrap) {
    const qp_cfg c = wrap_cfg(psn_mask - 9);  // PSN 0 is the 11th packet
    requester rq{c};
    responder rs{c};
    ASSERT_TRUE(rq.post_message(nanos{0}, bytes{32 * 1024}));
    wire_log log;
    bool dropped = false;
    exchange(rq, rs, nanos{1}, log, [&](const tx_desc& d) {
        if (d.psn == 0 && !dropped) {
            dropped = true;
            return true;
        }
        return false;
    });
    EXPECT_TRUE(dropped);
    // PSN 1 arrives ahead of ePSN 0: one NAK (PSN 0), the requester goes back to 0.
    EXPECT_EQ(rs.counters().naks_seq_tx, 1u);
    EXPECT_EQ(rq.counters().naks_seq, 1u);
    EXPECT_EQ(rs.counters().out_of_sequence, 1u);
    EXPECT_EQ(rq.counters().retx_packets, 2u);  // 0 and 1 again
    ASSERT_EQ(log.psns.size(), 34u);
    EXPECT_EQ((std::vector<std::uint32_t>{log.psns[10], log.psns[11], log.psns[12], log.psns[13]}),
              (std::vector<std::uint32_t>{0u, 1u, 0u, 1u}));
    EXPECT_TRUE(log.retx[12]);
    EXPECT_EQ(rq.counters().messages_completed, 1u);
    EXPECT_EQ(rs.counters().messages_rx, 1u);
    EXPECT_EQ(rs.counters().rx_packets, 32u);
    EXPECT_EQ(rq.counters().timeouts, 0u);
}

TEST(qp_wrap, tail_loss_across_the_wrap_recovered_by_the_ack_timeout) {
    // One 6-packet message: FFFFFC FFFFFD FFFFFE FFFFFF 0 1. The last four
    // are lost the first time: nothing arrives after the gap, so no NAK;
    // the ACK timeout rewinds to FFFFFE and the retransmission crosses the
    // wrap again.
    const qp_cfg c = wrap_cfg(0xFFFFFC);
    requester rq{c};
    responder rs{c};
    ASSERT_TRUE(rq.post_message(nanos{0}, bytes{6 * 1024}));
    wire_log log;
    exchange(rq, rs, nanos{0}, log, [](const tx_desc& d) { return d.psn >= 0xFFFFFE || d.psn <= 1; });
    EXPECT_EQ(rs.epsn(), 0xFFFFFEu);
    EXPECT_EQ(rq.snd_una_psn(), 0xFFFFFEu);
    EXPECT_EQ(rs.counters().naks_tx, 0u);
    // 8.192 us later the timeout fires once.
    const nanos t = ack_timeout_of(c.ack_timeout);
    rq.poll_timeout(t);
    EXPECT_EQ(rq.counters().timeouts, 1u);
    exchange(rq, rs, t, log, [](const tx_desc&) { return false; });
    EXPECT_TRUE(log.retx[6] && log.retx[9]);
    ASSERT_EQ(log.psns.size(), 10u);
    EXPECT_EQ((std::vector<std::uint32_t>(log.psns.begin() + 6, log.psns.end())),
              (std::vector<std::uint32_t>{0xFFFFFEu, 0xFFFFFFu, 0u, 1u}));
    EXPECT_EQ(rq.counters().messages_completed, 1u);
    EXPECT_EQ(rq.counters().retx_packets, 4u);
    EXPECT_EQ(rq.counters().naks_rx, 0u);
    EXPECT_EQ(rq.state(), qp_state::ready);
    EXPECT_EQ(rs.epsn(), 2u);
    EXPECT_EQ(rs.counters().messages_rx, 1u);
    EXPECT_EQ(rq.poll_timeout(t + t), nanos::max());  // nothing outstanding
}

}  // namespace
}  // namespace rocelab
