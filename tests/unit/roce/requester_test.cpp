// Unit tests for roce/requester.hpp: segmentation, window, go-back-N on NAK,
// local ACK timeout with retry count and error state, FCT, PSN wrap.
#include "roce/requester.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/clock.hpp"
#include "core/rng.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

qp_cfg base_cfg() {
    qp_cfg c;
    c.pmtu = 1024;
    c.window = 64;
    c.ack_timeout = 1;  // 8.192 us
    c.retry_cnt = 2;
    return c;
}

std::vector<tx_desc> drain(requester& rq, nanos now, int max = 1000) {
    std::vector<tx_desc> v;
    tx_desc d;
    while (max-- > 0 && rq.next(now, d)) {
        v.push_back(d);
    }
    return v;
}

TEST(requester, segments_message_into_first_middle_last) {
    requester rq{base_cfg()};
    ASSERT_TRUE(rq.post_message(nanos{100}, bytes{3000}));
    const auto v = drain(rq, nanos{200});
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].opcode, roce_op::rc_write_first);
    EXPECT_EQ(v[1].opcode, roce_op::rc_write_middle);
    EXPECT_EQ(v[2].opcode, roce_op::rc_write_last);
    EXPECT_EQ(v[0].offset, 0u);
    EXPECT_EQ(v[1].offset, 1024u);
    EXPECT_EQ(v[2].offset, 2048u);
    EXPECT_EQ(v[0].len, 1024u);
    EXPECT_EQ(v[2].len, 952u);
    EXPECT_EQ(v[2].msg_size, 3000u);
    EXPECT_FALSE(v[0].ack_req);
    EXPECT_FALSE(v[1].ack_req);
    EXPECT_TRUE(v[2].ack_req);
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(v[i].psn, i);
        EXPECT_EQ(v[i].msg_id, 0u);
        EXPECT_FALSE(v[i].retransmit);
    }
    // SEND family and a zero-byte message.
    qp_cfg c = base_cfg();
    c.family = op_family::send;
    requester rs{c};
    rs.post_message(nanos{0}, bytes{0});
    rs.post_message(nanos{0}, bytes{2048});
    const auto w = drain(rs, nanos{0});
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].opcode, roce_op::rc_send_only);
    EXPECT_EQ(w[0].len, 0u);
    EXPECT_EQ(w[1].opcode, roce_op::rc_send_first);
    EXPECT_EQ(w[2].opcode, roce_op::rc_send_last);
    EXPECT_EQ(w[2].len, 1024u);
    EXPECT_EQ(w[2].msg_id, 1u);
    EXPECT_EQ(rs.counters().tx_bytes, 2048u);
}

TEST(requester, ack_completes_messages_and_records_fct) {
    requester rq{base_cfg(), 16, 4};
    rq.post_message(nanos{1000}, bytes{2048});  // psn 0,1
    rq.post_message(nanos{1500}, bytes{512});   // psn 2
    drain(rq, nanos{2000});
    rq.on_ack(nanos{5000}, 0, 0);  // mid-message: no completion
    EXPECT_EQ(rq.counters().messages_completed, 0u);
    rq.on_ack(nanos{6000}, 1, 1);
    msg_completion c;
    ASSERT_TRUE(rq.pop_completion(c));
    EXPECT_EQ(c.msg_id, 0u);
    EXPECT_EQ(c.fct().v, 5000);
    EXPECT_FALSE(rq.pop_completion(c));
    rq.on_ack(nanos{9000}, 2, 2);
    ASSERT_TRUE(rq.pop_completion(c));
    EXPECT_EQ(c.msg_id, 1u);
    EXPECT_EQ(c.size, 512u);
    EXPECT_EQ(c.fct().v, 7500);
    const auto& k = rq.counters();
    EXPECT_EQ(k.messages_completed, 2u);
    EXPECT_EQ(k.bytes_completed, 2560u);
    EXPECT_EQ(k.fct_sum_ns, 12500u);
    EXPECT_EQ(k.fct_max_ns, 7500u);
    EXPECT_EQ(k.msn_mismatch, 0u);
    EXPECT_EQ(k.acks_rx, 3u);
    EXPECT_EQ(rq.unacked(), 0u);
    // Duplicate and never-sent ACKs are counted and ignored.
    rq.on_ack(nanos{9100}, 1, 1);
    rq.on_ack(nanos{9100}, 50, 2);
    EXPECT_EQ(rq.counters().acks_dup, 1u);
    EXPECT_EQ(rq.counters().acks_invalid, 1u);
    EXPECT_EQ(rq.counters().msn_mismatch, 0u);
    rq.post_message(nanos{9200}, bytes{100});
    drain(rq, nanos{9200});
    rq.on_ack(nanos{9300}, 3, 7);  // wrong MSN: counted, PSN still rules
    EXPECT_EQ(rq.counters().msn_mismatch, 1u);
    EXPECT_EQ(rq.counters().messages_completed, 3u);
}

TEST(requester, completion_ring_full_drops_records_not_counts) {
    requester rq{base_cfg(), 16, 2};
    for (int i = 0; i < 5; ++i) {
        rq.post_message(nanos{0}, bytes{64});
    }
    drain(rq, nanos{0});
    rq.on_ack(nanos{10}, 4, 5);
    EXPECT_EQ(rq.counters().messages_completed, 5u);
    EXPECT_EQ(rq.completions_pending(), 2u);
    EXPECT_EQ(rq.counters().completions_dropped, 3u);
}

TEST(requester, message_table_full_rejects_post) {
    requester rq{base_cfg(), 4};
    for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(rq.post_message(nanos{0}, bytes{64}));
    }
    EXPECT_FALSE(rq.post_message(nanos{0}, bytes{64}));
    EXPECT_FALSE(rq.post_message(nanos{0}, bytes{(1ull << 31) + 1}));
    EXPECT_EQ(rq.counters().post_rejected, 2u);
    EXPECT_EQ(rq.messages_in_flight(), 4u);
}

TEST(requester, window_limits_outstanding_packets) {
    qp_cfg c = base_cfg();
    c.window = 4;
    requester rq{c};
    rq.post_message(nanos{0}, bytes{16 * 1024});
    EXPECT_EQ(drain(rq, nanos{0}).size(), 4u);
    EXPECT_EQ(rq.outstanding(), 4u);
    EXPECT_FALSE(rq.can_send(nanos{0}));
    rq.on_ack(nanos{1}, 1, 0);  // two acked
    const auto v = drain(rq, nanos{1});
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].psn, 4u);
    EXPECT_EQ(v[1].psn, 5u);
}

TEST(requester, ack_req_every_n_packets) {
    qp_cfg c = base_cfg();
    c.ack_req_every = 4;
    requester rq{c};
    rq.post_message(nanos{0}, bytes{10 * 1024});
    const auto v = drain(rq, nanos{0});
    ASSERT_EQ(v.size(), 10u);
    for (std::size_t i = 0; i < v.size(); ++i) {
        EXPECT_EQ(v[i].ack_req, i == 3 || i == 7 || i == 9) << i;
    }
}

TEST(requester, nak_sequence_error_goes_back_n) {
    requester rq{base_cfg()};
    rq.post_message(nanos{0}, bytes{2048});  // 0,1
    rq.post_message(nanos{0}, bytes{8192});  // 2..9
    EXPECT_EQ(drain(rq, nanos{0}).size(), 10u);
    rq.on_nak(nanos{100}, 5, 0x60);
    EXPECT_EQ(rq.snd_una_psn(), 5u);
    EXPECT_EQ(rq.snd_nxt_psn(), 5u);
    EXPECT_EQ(rq.counters().messages_completed, 1u);  // message 0 implicitly acked
    const auto v = drain(rq, nanos{100});
    ASSERT_EQ(v.size(), 5u);
    for (std::size_t i = 0; i < v.size(); ++i) {
        EXPECT_EQ(v[i].psn, 5u + i);
        EXPECT_TRUE(v[i].retransmit);
        EXPECT_EQ(v[i].msg_id, 1u);
        EXPECT_EQ(v[i].offset, (3u + i) * 1024u);
    }
    EXPECT_EQ(v.back().opcode, roce_op::rc_write_last);
    const auto& k = rq.counters();
    EXPECT_EQ(k.naks_rx, 1u);
    EXPECT_EQ(k.naks_seq, 1u);
    EXPECT_EQ(k.retx_packets, 5u);
    EXPECT_EQ(k.retx_bytes, 5u * 1024u);
    EXPECT_EQ(k.tx_packets, 15u);
    // New data after the retransmissions is not a retransmission.
    rq.post_message(nanos{200}, bytes{100});
    const auto w = drain(rq, nanos{200});
    ASSERT_EQ(w.size(), 1u);
    EXPECT_FALSE(w[0].retransmit);
    // A stale NAK (behind snd_una) is ignored.
    rq.on_ack(nanos{300}, 7, 1);
    rq.on_nak(nanos{300}, 6, 0x60);
    EXPECT_EQ(rq.counters().naks_stale, 1u);
    EXPECT_EQ(rq.snd_nxt_psn(), 11u);
}

TEST(requester, nak_into_middle_of_first_message_rewinds_offsets) {
    requester rq{base_cfg()};
    rq.post_message(nanos{0}, bytes{4 * 1024});
    drain(rq, nanos{0});
    rq.on_nak(nanos{10}, 1, 0x60);
    const auto v = drain(rq, nanos{10});
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].opcode, roce_op::rc_write_middle);
    EXPECT_EQ(v[0].offset, 1024u);
    EXPECT_EQ(v[2].opcode, roce_op::rc_write_last);
}

TEST(requester, timeout_retries_then_error) {
    requester rq{base_cfg()};  // timeout 8192 ns, retry_cnt 2
    rq.post_message(nanos{0}, bytes{2048});
    EXPECT_EQ(drain(rq, nanos{1000}).size(), 2u);
    EXPECT_EQ(rq.next_deadline().v, 1000 + 8192);
    EXPECT_EQ(rq.poll_timeout(nanos{9191}).v, 9192);
    EXPECT_EQ(rq.counters().timeouts, 0u);
    // First timeout: rewind to snd_una, retry 1.
    EXPECT_EQ(rq.poll_timeout(nanos{9192}).v, 9192 + 8192);
    EXPECT_EQ(rq.counters().timeouts, 1u);
    EXPECT_EQ(rq.retries_used(), 1u);
    auto v = drain(rq, nanos{9192});
    ASSERT_EQ(v.size(), 2u);
    EXPECT_TRUE(v[0].retransmit);
    EXPECT_EQ(v[0].psn, 0u);
    // Second timeout.
    rq.poll_timeout(nanos{9192 + 8192});
    EXPECT_EQ(rq.retries_used(), 2u);
    drain(rq, nanos{9192 + 8192});
    // Third: retry_cnt exhausted -> error, nothing more is sent.
    EXPECT_EQ(rq.poll_timeout(nanos{9192 + 2 * 8192}), nanos::max());
    EXPECT_EQ(rq.state(), qp_state::error);
    EXPECT_EQ(rq.error(), qp_error::retry_exceeded);
    EXPECT_EQ(rq.counters().timeouts, 3u);
    EXPECT_EQ(rq.counters().retry_exceeded, 1u);
    EXPECT_TRUE(drain(rq, nanos{1'000'000}).empty());
    EXPECT_FALSE(rq.post_message(nanos{1'000'000}, bytes{1}));
    EXPECT_EQ(rq.counters().retx_packets, 4u);
}

TEST(requester, progress_refills_retry_budget) {
    requester rq{base_cfg()};
    rq.post_message(nanos{0}, bytes{8 * 1024});
    drain(rq, nanos{0});
    nanos t{0};
    for (int round = 0; round < 6; ++round) {
        t += nanos{8192};
        rq.poll_timeout(t);  // one timeout
        drain(rq, t);
        rq.on_ack(t, static_cast<std::uint32_t>(round), 0);  // progress
        EXPECT_EQ(rq.retries_used(), 0u);
    }
    EXPECT_EQ(rq.state(), qp_state::ready);
    EXPECT_EQ(rq.counters().timeouts, 6u);
}

TEST(requester, retry_cnt_7_is_7_unless_retry_infinite) {
    for (bool inf : {false, true}) {
        qp_cfg c = base_cfg();
        c.retry_cnt = 7;
        c.retry_infinite = inf;
        requester rq{c};
        rq.post_message(nanos{0}, bytes{64});
        drain(rq, nanos{0});
        nanos t{0};
        for (int i = 0; i < 20; ++i) {
            t += nanos{8192};
            rq.poll_timeout(t);
            drain(rq, t);
        }
        EXPECT_EQ(rq.state(), inf ? qp_state::ready : qp_state::error);
        EXPECT_EQ(rq.counters().timeouts, inf ? 20u : 8u);
    }
}

TEST(requester, no_timeout_when_nothing_outstanding_or_infinite) {
    requester rq{base_cfg()};
    EXPECT_EQ(rq.poll_timeout(nanos{1'000'000}), nanos::max());
    rq.post_message(nanos{0}, bytes{64});
    drain(rq, nanos{0});
    rq.on_ack(nanos{10}, 0, 1);
    EXPECT_EQ(rq.poll_timeout(nanos{1'000'000}), nanos::max());
    qp_cfg c = base_cfg();
    c.ack_timeout = 0;
    requester ri{c};
    ri.post_message(nanos{0}, bytes{64});
    drain(ri, nanos{0});
    EXPECT_EQ(ri.poll_timeout(nanos{1'000'000'000}), nanos::max());
    EXPECT_EQ(ri.counters().timeouts, 0u);
}

TEST(requester, psn_wraps_at_2_pow_24) {
    qp_cfg c = base_cfg();
    c.start_psn = 0xFFFFF8;
    requester rq{c};
    rq.post_message(nanos{0}, bytes{16 * 1024});
    const auto v = drain(rq, nanos{0});
    ASSERT_EQ(v.size(), 16u);
    EXPECT_EQ(v[7].psn, 0xFFFFFFu);
    EXPECT_EQ(v[8].psn, 0u);
    EXPECT_EQ(v[15].psn, 7u);
    rq.on_ack(nanos{1}, 0xFFFFFE, 0);  // 7 acked
    EXPECT_EQ(rq.snd_una_psn(), 0xFFFFFFu);
    rq.on_nak(nanos{2}, 2, 0x60);  // across the wrap
    EXPECT_EQ(rq.snd_una_psn(), 2u);
    const auto w = drain(rq, nanos{2});
    ASSERT_EQ(w.size(), 6u);
    EXPECT_EQ(w[0].psn, 2u);
    EXPECT_EQ(w[0].offset, 10u * 1024u);
    rq.on_ack(nanos{3}, 7, 1);
    EXPECT_EQ(rq.counters().messages_completed, 1u);
    EXPECT_EQ(rq.counters().msn_mismatch, 0u);
}

TEST(requester, rnr_nak_pauses_then_resends) {
    qp_cfg c = base_cfg();
    c.rnr_retry = 1;
    requester rq{c};
    rq.post_message(nanos{0}, bytes{4096});
    drain(rq, nanos{0});
    rq.on_nak(nanos{100}, 1, aeth_syndrome_rnr_nak(1));  // 10 us
    EXPECT_EQ(rq.counters().naks_rnr, 1u);
    EXPECT_TRUE(drain(rq, nanos{100 + 9999}).empty());
    EXPECT_EQ(rq.next_deadline().v, 100 + 10'000);
    auto v = drain(rq, nanos{100 + 10'000});
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].psn, 1u);
    // Second RNR NAK without progress exceeds rnr_retry 1.
    rq.on_nak(nanos{20'000}, 1, aeth_syndrome_rnr_nak(1));
    EXPECT_EQ(rq.state(), qp_state::error);
    EXPECT_EQ(rq.error(), qp_error::rnr_retry_exceeded);
}

TEST(requester, fatal_nak_moves_to_error) {
    requester rq{base_cfg()};
    rq.post_message(nanos{0}, bytes{64});
    drain(rq, nanos{0});
    rq.on_aeth(nanos{1}, 0, aeth_syndrome_nak(nak_code::invalid_request), 0);
    EXPECT_EQ(rq.state(), qp_state::error);
    EXPECT_EQ(rq.error(), qp_error::remote_nak);
    EXPECT_EQ(rq.counters().naks_fatal, 1u);
}


// next_burst(now, out, k) is k calls of next(now): the same packets, the
// same counters and state after them. Two requesters get the same random
// life (messages of 1..5 packets and odd sizes, small windows, AckReq every
// 3, ACKs, PSN-sequence and RNR NAKs (10-30 us), timeouts, a PSN wrap), one sending
// packet by packet, the other in bursts of 1..40.
TEST(requester, next_burst_is_next_called_that_many_times) {
    qp_cfg c = base_cfg();
    c.pmtu = 256;
    c.window = 9;
    c.ack_req_every = 3;
    c.retry_cnt = 7;
    c.retry_infinite = true;
    c.rnr_retry = 7;
    c.start_psn = 0xFFFFF0;
    requester a{c, 16, 16};
    requester b{c, 16, 16};
    rng r(7);
    std::int64_t now = 0;
    std::uint64_t sent = 0;
    for (int step = 0; step < 40000; ++step) {
        now += static_cast<std::int64_t>(r.next_u32() % 3000);
        const std::uint32_t op = r.next_u32() % 16;
        if (op < 3) {
            const std::uint64_t size = 1 + r.next_u32() % (5 * 256);
            ASSERT_EQ(a.post_message(nanos{now}, bytes{size}), b.post_message(nanos{now}, bytes{size}));
        } else if (op < 10) {
            const std::uint32_t k = 1 + r.next_u32() % 40;
            std::vector<tx_desc> va = drain(a, nanos{now}, static_cast<int>(k));
            std::vector<tx_desc> vb(k);
            vb.resize(b.next_burst(nanos{now}, vb.data(), k));
            ASSERT_EQ(va.size(), vb.size()) << "step " << step;
            for (std::size_t i = 0; i < va.size(); ++i) {
                const tx_desc& x = va[i];
                const tx_desc& y = vb[i];
                ASSERT_TRUE(x.msg_id == y.msg_id && x.msg_size == y.msg_size && x.offset == y.offset &&
                            x.len == y.len && x.psn == y.psn && x.opcode == y.opcode && x.ack_req == y.ack_req &&
                            x.retransmit == y.retransmit)
                    << "step " << step << " packet " << i;
            }
            sent += va.size();
        } else if (op < 13 && a.unacked() != 0) {  // an ACK up to a random sent PSN
            const std::uint32_t psn = (a.snd_una_psn() + r.next_u32() % a.unacked()) & psn_mask;
            a.on_ack(nanos{now}, psn, 0);
            b.on_ack(nanos{now}, psn, 0);
        } else if (op < 14 && a.unacked() != 0) {  // a NAK: sequence error or RNR
            const std::uint32_t psn = (a.snd_una_psn() + r.next_u32() % a.unacked()) & psn_mask;
            const std::uint8_t syn = r.next_u32() % 2 ? aeth_syndrome_nak(nak_code::psn_seq_error)
                                                      : aeth_syndrome_rnr_nak(static_cast<std::uint8_t>(1 + r.next_u32() % 3));
            a.on_nak(nanos{now}, psn, syn);
            b.on_nak(nanos{now}, psn, syn);
        } else {
            ASSERT_EQ(a.poll_timeout(nanos{now}), b.poll_timeout(nanos{now}));
        }
        ASSERT_EQ(a.snd_nxt_psn(), b.snd_nxt_psn());
        ASSERT_EQ(a.snd_una_psn(), b.snd_una_psn());
        ASSERT_EQ(a.unacked(), b.unacked());
        ASSERT_EQ(a.next_deadline(), b.next_deadline());
        ASSERT_EQ(a.state(), b.state());
#define ROCELAB_CMP(n) ASSERT_EQ(a.counters().n, b.counters().n) << #n << " step " << step;
        ROCELAB_REQUESTER_COUNTERS(ROCELAB_CMP)
#undef ROCELAB_CMP
    }
    EXPECT_GT(sent, 20000u);
    EXPECT_GT(a.counters().retx_packets, 1000u);
    EXPECT_GT(a.counters().naks_rnr, 100u);
    EXPECT_GT(a.counters().messages_completed, 1000u);
    EXPECT_EQ(a.state(), qp_state::ready);
}

}  // namespace
}  // namespace rocelab
