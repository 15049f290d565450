// Google Benchmark for lib/roce: cost per packet of the pure RC transport.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/rng.hpp"
#include "roce/dcqcn.hpp"
#include "roce/loss.hpp"
#include "roce/requester.hpp"
#include "roce/responder.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

// A requester with `msgs` messages of 64 KiB posted at time 0.
requester posted_requester(std::uint32_t pmtu, std::uint32_t window, int msgs) {
    qp_cfg c;
    c.pmtu = pmtu;
    c.window = window;
    requester rq{c, 64, 64};
    for (int i = 0; i < msgs; ++i) {
        rq.post_message(nanos{0}, 64_KiB);
    }
    return rq;
}

// One next() plus one cumulative on_ack() per packet (ACK every packet), with
// a message re-posted as each completes: the steady-state sender cost.
void bm_requester_next_ack(benchmark::State& st) {
    requester rq = posted_requester(4096, 128, 8);
    std::int64_t t = 0;
    std::uint32_t msn = 0;
    tx_desc d;
    msg_completion mc;
    for (auto _ : st) {
        const nanos now{t += 10};
        if (!rq.next(now, d)) {
            st.SkipWithError("requester stalled");
            break;
        }
        msn += d.ack_req ? 1u : 0u;
        rq.on_ack(now, d.psn, msn);
        while (rq.pop_completion(mc)) {
            rq.post_message(now, 64_KiB);
        }
        benchmark::DoNotOptimize(d);
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_requester_next_ack);

// next() only, ACKing once per 64 packets (coalesced ACKs).
void bm_requester_next_coalesced(benchmark::State& st) {
    requester rq = posted_requester(4096, 128, 8);
    std::int64_t t = 0;
    std::uint32_t msn = 0;
    std::uint32_t n = 0;
    tx_desc d;
    msg_completion mc;
    for (auto _ : st) {
        const nanos now{t += 10};
        if (!rq.next(now, d)) {
            st.SkipWithError("requester stalled");
            break;
        }
        msn += d.ack_req ? 1u : 0u;
        if ((++n & 63u) == 0) {
            rq.on_ack(now, d.psn, msn);
            while (rq.pop_completion(mc)) {
                rq.post_message(now, 64_KiB);
            }
        }
        benchmark::DoNotOptimize(d);
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_requester_next_coalesced);

// next_burst(max = Arg) as the generator's tx_port calls it (a burst per
// visit; 64 KiB messages of 1 KiB packets, so a message ends every 64), one
// cumulative ACK per burst. Items: packets. Arg 1 is one next() per visit
// (256 QPs: a packet per QP per visit).
void bm_requester_next_burst(benchmark::State& st) {
    requester rq = posted_requester(1024, 1024, 16);
    const auto max = static_cast<std::uint32_t>(st.range(0));
    std::int64_t t = 0;
    std::uint32_t msn = 0;
    std::uint64_t pkts = 0;
    tx_desc d[64];
    msg_completion mc;
    for (auto _ : st) {
        const nanos now{t += 10};
        const std::uint32_t k = rq.next_burst(now, d, max);
        if (k == 0) {
            st.SkipWithError("requester stalled");
            break;
        }
        for (std::uint32_t i = 0; i < k; ++i) { msn += d[i].ack_req ? 1u : 0u; }
        rq.on_ack(now, d[k - 1].psn, msn);
        while (rq.pop_completion(mc)) {
            rq.post_message(now, 64_KiB);
        }
        benchmark::DoNotOptimize(d);
        pkts += k;
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(pkts));
}
BENCHMARK(bm_requester_next_burst)->Arg(1)->Arg(32);

// Responder on_packet for in-order WRITE traffic, ACK per 16 packets.
void bm_responder_in_order(benchmark::State& st) {
    qp_cfg c;
    c.pmtu = 4096;
    c.ack_coalesce = 16;
    responder rs{c};
    std::uint32_t psn = 0;
    std::uint32_t i = 0;
    for (auto _ : st) {
        const std::uint32_t k = i++ & 15u;
        const std::uint8_t op = k == 0    ? roce_op::rc_write_first
                                : k == 15 ? roce_op::rc_write_last
                                          : roce_op::rc_write_middle;
        const rx_verdict v = rs.on_packet(nanos{0}, psn, op, k == 15, 4096);
        psn = psn_add(psn, 1);
        benchmark::DoNotOptimize(v);
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_responder_in_order);

// Responder on out-of-sequence traffic (the silent-drop path after a NAK).
void bm_responder_out_of_sequence(benchmark::State& st) {
    qp_cfg c;
    responder rs{c};
    std::uint32_t psn = 1;
    for (auto _ : st) {
        const rx_verdict v = rs.on_packet(nanos{0}, psn, roce_op::rc_write_only, true, 1024);
        psn = psn_add(psn, 1) | 1u;
        benchmark::DoNotOptimize(v);
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_responder_out_of_sequence);

void bm_loss_bernoulli(benchmark::State& st) {
    loss_cfg lc;
    lc.p = 0.01;
    loss_injector l{lc};
    rng r{1};
    for (auto _ : st) {
        benchmark::DoNotOptimize(l.drop(r));
    }
}
BENCHMARK(bm_loss_bernoulli);

// DCQCN reaction point, per sent packet as the generator calls it: the byte
// counter (on_sent), the rate-change check and the deadline check; a CNP
// every `range(0)` packets (0 = never: a QP at line rate).
void bm_dcqcn_rp_per_packet(benchmark::State& st) {
    dcqcn_rp rp{dcqcn_defaults(dcqcn_profile::nvidia_cx, bits_per_sec{100'000'000'000ULL})};
    const std::int64_t cnp_every = st.range(0);
    std::int64_t t = 0;
    std::int64_t n = 0;
    nanos next = nanos::max();
    std::uint64_t changes = 0;
    for (auto _ : st) {
        const nanos now{t += 84};  // 1 KB frames at 100Gbps
        if (cnp_every != 0 && ++n % cnp_every == 0) {
            rp.on_cnp(now);
            next = rp.next_deadline();
        }
        rp.on_sent(now, bytes{1086});
        if (now >= next) {
            next = rp.advance(now);
        }
        if (rp.next_deadline() < next) {
            next = rp.next_deadline();
        }
        changes += rp.take_rate_changed() ? 1u : 0u;
        benchmark::DoNotOptimize(changes);
    }
    st.counters["rate_changes"] = static_cast<double>(changes);
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_dcqcn_rp_per_packet)->Arg(0)->Arg(64)->Arg(4096);

}  // namespace
}  // namespace rocelab

BENCHMARK_MAIN();
