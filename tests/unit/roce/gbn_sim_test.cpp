// Scenario tests in virtual time: requester -> lossy channel -> responder ->
// ACK/NAK -> requester, driven by a manual clock; goodput efficiency versus
// the go-back-N model of reference sec. 5.4; per-QP pacing with qos/shaper.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <deque>

#include "core/clock.hpp"
#include "core/rng.hpp"
#include "qos/shaper.hpp"
#include "roce/arrivals.hpp"
#include "roce/loss.hpp"
#include "roce/requester.hpp"
#include "roce/responder.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

struct sim_params {
    double p = 0.0;                // i.i.d. data-packet loss
    std::int64_t t_p = 80;         // ns per packet on the line
    std::int64_t one_way = 2000;   // ns, each direction (RTT = 2 x one_way)
    std::uint32_t window = 64;     // packets
    std::uint8_t ack_timeout = 3;  // 32.768 us
    std::uint64_t ticks = 2'000'000;
    std::uint64_t seed = 1;
};

struct sim_result {
    double efficiency = 0;  // in-order packets accepted x t_p / elapsed
    double model = 0;
    requester_counts rq{};
    responder_counts rs{};
    loss_counters loss{};
    bool qp_ok = true;
};

// Model of reference 5.4: eta = 1 / (1 + p (W + 1) + p^2 RTO / t_p), W = BDP
// in packets = RTT / t_p.
double gbn_model(double p, double w, double rto_over_tp) {
    return 1.0 / (1.0 + p * (w + 1.0) + p * p * rto_over_tp);
}

sim_result run_gbn(const sim_params& sp) {
    qp_cfg c;
    c.pmtu = 1024;
    c.window = sp.window;
    c.ack_timeout = sp.ack_timeout;
    c.retry_cnt = 7;
    c.retry_infinite = true;
    c.ack_coalesce = 1;
    c.start_psn = 0xFFF000;  // wraps during the run
    requester rq{c, 64, 64};
    responder rs{c};
    loss_cfg lc;
    lc.p = sp.p;
    loss_injector loss{lc};
    rng r{sp.seed};
    message_source src{arrival_cfg{arrival_kind::closed_loop, nanos{0}, 8}, size_dist::fixed(64_KiB)};

    struct data_ev {
        std::int64_t at;
        tx_desc d;
    };
    struct ack_ev {
        std::int64_t at;
        rx_verdict v;
    };
    std::deque<data_ev> data_q;
    std::deque<ack_ev> ack_q;
    manual_clock clk;
    arrival a;
    for (std::uint64_t tick = 0; tick < sp.ticks; ++tick) {
        clk.set(nanos{static_cast<std::int64_t>(tick) * sp.t_p});
        const nanos now = clk.now();
        while (!data_q.empty() && data_q.front().at <= now.v) {
            const tx_desc& d = data_q.front().d;
            const rx_verdict v = rs.on_packet(now, d.psn, d.opcode, d.ack_req, d.len);
            if (v.reply != rx_reply::none) {
                ack_q.push_back({now.v + sp.one_way, v});
            }
            data_q.pop_front();
        }
        while (!ack_q.empty() && ack_q.front().at <= now.v) {
            const rx_verdict& v = ack_q.front().v;
            rq.on_aeth(now, v.psn, v.syndrome, v.msn);
            ack_q.pop_front();
        }
        msg_completion mc;
        while (rq.pop_completion(mc)) {
            src.on_complete();
        }
        while (src.poll(now, r, a)) {
            rq.post_message(a.at, a.size);
        }
        rq.poll_timeout(now);
        tx_desc d;
        if (rq.next(now, d) && !loss.drop(r)) {
            data_q.push_back({now.v + sp.one_way, d});
        }
    }
    sim_result res;
    const double elapsed = static_cast<double>(sp.ticks) * static_cast<double>(sp.t_p);
    res.efficiency = static_cast<double>(rs.counters().rx_packets) * static_cast<double>(sp.t_p) / elapsed;
    const double w = 2.0 * static_cast<double>(sp.one_way) / static_cast<double>(sp.t_p);
    res.model = gbn_model(sp.p, w, static_cast<double>(ack_timeout_of(sp.ack_timeout).v) / sp.t_p);
    res.rq = snapshot(rq.counters());
    res.rs = snapshot(rs.counters());
    res.loss = loss.counters();
    res.qp_ok = rq.state() == qp_state::ready && !rs.in_error();
    return res;
}

void check_sweep(std::uint8_t ack_timeout) {
    double prev = 2.0;
    std::printf(
        "go-back-N loss sweep: t_p 80 ns, RTT 4 us (W = 50), window 64, ack_timeout %u (RTO %.3f us)\n",
        ack_timeout, static_cast<double>(ack_timeout_of(ack_timeout).v) / 1000.0);
    std::printf("  %-7s %-10s %-10s %-8s %-8s %-8s %-8s\n", "p", "measured", "model", "ratio", "naks",
                "timeouts", "retx");
    for (double p : {0.0, 0.001, 0.01, 0.02}) {
        sim_params sp;
        sp.p = p;
        sp.ack_timeout = ack_timeout;
        const sim_result r = run_gbn(sp);
        std::printf("  %-7.3f %-10.4f %-10.4f %-8.3f %-8llu %-8llu %-8llu\n", p, r.efficiency, r.model,
                    r.efficiency / r.model, static_cast<unsigned long long>(r.rq.naks_rx),
                    static_cast<unsigned long long>(r.rq.timeouts),
                    static_cast<unsigned long long>(r.rq.retx_packets));
        EXPECT_TRUE(r.qp_ok);
        EXPECT_NEAR(r.efficiency / r.model, 1.0, 0.20) << "p=" << p;
        EXPECT_LT(r.efficiency, prev) << "p=" << p;
        prev = r.efficiency;
        EXPECT_EQ(r.rq.acks_invalid, 0u);
        EXPECT_EQ(r.rq.msn_mismatch, 0u);
        EXPECT_EQ(r.rs.invalid_requests, 0u);
        // Every message the requester completed was delivered in order.
        EXPECT_LE(r.rq.messages_completed, r.rs.messages_rx);
        EXPECT_GE(r.rq.messages_completed + 8, r.rs.messages_rx);
        if (p == 0.0) {
            EXPECT_GT(r.efficiency, 0.99);
            EXPECT_EQ(r.rq.retx_packets, 0u);
            EXPECT_EQ(r.rs.naks_tx, 0u);
        } else {
            EXPECT_GT(r.rq.naks_rx, 0u);
            // Each NAK comes from one responder gap; NAKs never outnumber losses.
            EXPECT_LE(r.rs.naks_seq_tx, r.loss.dropped);
        }
    }
}

TEST(gbn_sim, efficiency_vs_loss_matches_model_short_rto) {
    check_sweep(3);
}

TEST(gbn_sim, efficiency_vs_loss_matches_model_long_rto) {
    check_sweep(6);
}

TEST(gbn_sim, deterministic_with_seed) {
    sim_params sp;
    sp.p = 0.01;
    sp.ticks = 200'000;
    const sim_result a = run_gbn(sp);
    const sim_result b = run_gbn(sp);
    EXPECT_EQ(a.rs.rx_packets, b.rs.rx_packets);
    EXPECT_EQ(a.rq.retx_packets, b.rq.retx_packets);
    EXPECT_EQ(a.rq.timeouts, b.rq.timeouts);
}

// Per-QP pacing: a requester behind a qos/shaper at a fixed rate, with an
// instant loss-free responder; wire rate over 1e5 packets within 0.5%.
TEST(gbn_sim, shaper_paces_requester_within_half_percent) {
    for (bits_per_sec rate : {10_Gbps, 25_Gbps, 97_Gbps}) {
        qp_cfg c;
        c.pmtu = 4096;
        c.window = 256;
        requester rq{c};
        responder rs{c};
        shaper pacer{rate, bytes{2 * 4200}};
        rng r{77};
        const size_dist sizes = size_dist::uniform(bytes{1}, bytes{100'000});
        manual_clock clk;
        clk.set(nanos{1'000'000});
        const nanos t0 = clk.now();
        std::uint64_t wire_bits = 0;
        std::uint64_t packets = 0;
        tx_desc d;
        while (packets < 100'000) {
            if (rq.messages_in_flight() < 4) {
                rq.post_message(clk.now(), sizes.sample(r));
                continue;
            }
            if (!pacer.conforms(clk.now())) {
                clk.set(pacer.next_send_time());
                continue;
            }
            ASSERT_TRUE(rq.next(clk.now(), d));
            const std::uint32_t frame = roce_v4_wire_len(d.opcode, d.len);
            pacer.on_send(clk.now(), frame);
            wire_bits += (frame + shaper::default_overhead.v) * 8ull;
            ++packets;
            const rx_verdict v = rs.on_packet(clk.now(), d.psn, d.opcode, d.ack_req, d.len);
            if (v.reply != rx_reply::none) {
                rq.on_aeth(clk.now(), v.psn, v.syndrome, v.msn);
            }
        }
        const double secs = static_cast<double>((pacer.finish_time() - t0).v) * 1e-9;
        const double measured = static_cast<double>(wire_bits) / secs;
        EXPECT_NEAR(measured / static_cast<double>(rate.v), 1.0, 0.005) << rate.v;
        EXPECT_EQ(rq.counters().retx_packets, 0u);
        EXPECT_EQ(rq.counters().msn_mismatch, 0u);
    }
}

}  // namespace
}  // namespace rocelab
