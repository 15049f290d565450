// The timing-sensitive DPDK tests again, in virtual time (issue 13: "also
// run in virtual time, with tight tolerances and no skip"). The real-time
// versions (sp_congestion_test, pfc_watchdog_test) judge rates and storm
// times from the TSC with wide tolerances; here the same switch and
// generator pipelines run as nodes of pipelines/vt/fabric.hpp and are judged
// from wire captures in fabric time, against the reference's rules:
//
//   - strict priority + shaping: TC 6 (strict) takes exactly what it is
//     offered, TC 3 and TC 0 (DWRR 15:14) exactly the rest of a port shaped
//     to 1 Gb/s, which is busy back to back; a strict frame waits at most one
//     frame slot;
//   - PFC watchdog (SONiC rules, ROCE_REFERENCE 2.4 / 5.3): a continuous XOFF
//     storm is detected at the poll the rule names (derived from the XOFF
//     arrival times on the wire), restored restoration_time after the last
//     XOFF (poll granularity), and with action drop every TC 3 frame is
//     either forwarded (before the storm or after the restore) or counted as
//     a watchdog drop; none leaves during it. A storm shorter than detection_time never trips;
//   - PFC reaction (pfc_reaction_test in virtual time, its timing oracle): an
//     XOFF stops TC 3 (but for what the TX ring already held), it resumes at
//     exactly Q x 512 bit times or at an XON, within one frame; TC 0 flows;
//   - same code: one transfer with the same configs through the same
//     pipeline classes, once in real time over DPDK net_ring ports and once
//     in virtual time: identical packet and byte counts, no drop, no NAK; the
//     virtual-time FCTs equal the closed-form ideal to the nanosecond;
//   - a generator switched to poll_continuously (no pace heap, timers that
//     only move earlier) mid-run sends the same frames at the same times as
//     one that is not, through loss, timeouts and DCQCN (every capture alike).
// Nothing here depends on machine load: fabric time is exact, and the
// real-time run is only compared on counts (its FCTs only against a bound).
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "config/gen_config.hpp"
#include "config/switch_config.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "vt/fabric.hpp"
#include "vt_harness.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

using namespace rocelab::test;
void init_eal() { init_vt_eal("vttiming"); }

// NAKs, timeouts and retransmissions over every flow of a generator.
std::uint64_t gen_trouble(const gen::gen_pipeline& g) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < g.flow_count(); ++i) {
        const auto& c = g.flow(i).rq.counters();
        n += c.naks_rx + c.timeouts + c.retx_packets + c.retry_exceeded;
        n += g.flow(i).rs.counters().naks_tx + g.flow(i).rs.counters().out_of_sequence;
    }
    for (std::size_t p = 0; p < g.port_count(); ++p) {
        const auto& c = g.counters(p);
        n += c.rx_bad_icrc + c.rx_malformed_total + c.drop_reply_full + c.drop_cnp_full + c.tx_naks;
    }
    return n;
}

constexpr bits_per_sec g1{1'000'000'000ULL};
constexpr bits_per_sec g10{10'000'000'000ULL};

// ---------------------------------------------------------------------------
// 1. Strict priority + DWRR + shaping (sp_congestion_test in virtual time).
//
// Three RC flows from host a (gen port 0) to host b (gen port 1), all SEND
// with a 1024 B PMTU, so every data frame is 1082 B (1106 B on the wire):
//   TC 6 (DSCP 48, strict)     paced at 300 Mb/s
//   TC 3 (DSCP 26, DWRR 15)    paced at 2 Gb/s, limited by its window
//   TC 0 (DSCP 8,  DWRR 14)    paced at 2 Gb/s, limited by its window
// into Ethernet0; Ethernet1 is shaped to 1 Gb/s on a 10 Gb/s cable. The
// real-time test uses an open-loop sender and sees TC 0 tail drops; RC
// flows are closed loop (a tail drop would cost a go-back-N timeout), so
// here the DWRR classes are kept backlogged by their windows (128 packets,
// well under the queues' 1 MiB / 1024 packets) and nothing is dropped.
// Expected in the window [5 ms, 25 ms) of Ethernet1's wire:
//   - the port never idles: departures exactly 1106 x 8 / 1e9 s = 8848 ns
//     apart (1 ns for the 10 Gb/s wire clock's rounding);
//   - TC 6 leaves at its offered rate: its departures in the window equal
//     its arrivals in the window and W x 0.3e9 / 8848 frames, each +-1 frame;
//   - TC 3 + TC 0 = the rest, exactly (all frames are one size); split
//     15:14 by bytes, within the DRR bound (one quantum + one frame);
//   - every TC 6 frame waits less than one frame slot at 1 Gb/s (strict:
//     only the shaper's current slot is ahead of it), plus its own wire time;
//   - no drop anywhere, no NAK, no timeout.
// ---------------------------------------------------------------------------

TEST(vt_timing, strict_priority_takes_its_offered_rate_and_dwrr_classes_share_the_rest_of_a_shaped_port) {
    init_eal();
    pool_guard pool(65536, "vtt_sp");
    ASSERT_NE(pool.mp, nullptr);
    const tmp_dir tmp("sp");
    const std::string& dir = tmp.path;
    constexpr std::int64_t t0 = 5'000'000, t1 = 25'000'000;  // measurement window, ns
    std::uint64_t q_drops = 0, q_enq[8] = {};
    {
        vt::fabric f;
        const switch_cfg scfg = sw_cfg(
            "PORT:\n"
            "  Ethernet0: {port_id: 0}\n"
            "  Ethernet1: {port_id: 1, speed: 1Gbps}\n"
            "BUFFER_POOL: {}\nWRED_PROFILE: {}\n");
        // The built-in AZURE maps and scheduler: DSCP 48 -> TC 6 strict,
        // 26 -> TC 3 DWRR 15 (scheduler.1), 8 -> TC 0 DWRR 14 (scheduler.0).
        ASSERT_EQ(scfg.ports.size(), 2u);
        const auto& s1 = scfg.ports[1].sched;
        ASSERT_EQ(s1.queues[6].type, sched_type::strict);
        ASSERT_EQ(s1.queues[3].type, sched_type::dwrr);
        ASSERT_EQ(s1.queues[0].type, sched_type::dwrr);
        ASSERT_EQ(s1.queues[3].weight, 15u);
        ASSERT_EQ(s1.queues[0].weight, 14u);
        const auto leaf = f.add_switch("leaf", scfg);
        const auto hosts = f.add_gen("hosts", g_cfg(
            "seed: 1\ndcqcn: off\npmtu: 1024\nop: send\nmsg_size: 64KiB\n"
            "hosts:\n  - {name: a, port: 0}\n  - {name: b, port: 1}\n"
            "flows:\n"
            "  - {src: a, dst: b, dscp: 48, priority: 6, rate: 300Mbps}\n"
            "  - {src: a, dst: b, dscp: 26, priority: 3, rate: 2Gbps}\n"
            "  - {src: a, dst: b, dscp: 8, priority: 0, rate: 2Gbps}\n"));
        const vt::cable_cfg c10{.rate = g10, .prop_delay = 25_ns};
        f.connect(hosts, 0, leaf, 0, c10);
        f.connect(hosts, 1, leaf, 1, c10);
        ASSERT_EQ(f.build(pool.mp), "");
        ASSERT_EQ(f.capture_to(dir, 64), "");
        f.run_until(nanos{t1 + 1'000'000});
        EXPECT_EQ(f.spins(), 0u);
        auto& s = f.switch_at(leaf);
        EXPECT_EQ(switch_drops(s), 0u);
        EXPECT_EQ(link_drops(f), 0u);
        EXPECT_EQ(gen_trouble(f.gen_at(hosts)), 0u) << "no NAK, timeout or retransmission";
        for (int q = 0; q < 8; ++q) {
            const auto qs = s.queue(1, q);
            q_drops += qs.drop_packets + qs.wred_dropped;
            q_enq[q] = qs.enq_packets;
        }
        std::printf("[vt sp] Ethernet1 queue peaks: q6 %u pkts, q3 %u pkts, q0 %u pkts\n",
                    s.queue(1, 6).max_depth_packets, s.queue(1, 3).max_depth_packets,
                    s.queue(1, 0).max_depth_packets);
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u) << "every mbuf back in the pool";
    EXPECT_EQ(q_drops, 0u);
    EXPECT_GT(q_enq[6], 0u);
    EXPECT_GT(q_enq[3], 0u);
    EXPECT_GT(q_enq[0], 0u);

    const auto in = read_pcap(dir + "/leaf-Ethernet0-rx.pcap");
    const auto out = read_pcap(dir + "/leaf-Ethernet1-tx.pcap");
    constexpr std::uint32_t frame = 1082;  // 14 + 20 + 8 + 12 (BTH) + 1024 + 4 (ICRC)
    constexpr std::int64_t slot = (frame + 24) * 8;  // ns per frame at 1 Gb/s: 8848
    const std::int64_t wire10 = wire_ns_ceil(frame, g10);  // 885
    // Every frame that came in reached its class's queue (by the AZURE DSCP map).
    std::uint64_t in_by_q[8] = {};
    for (const auto& r : in) {
        const int d = r.dscp();
        in_by_q[d == 48 ? 6 : d == 26 ? 3 : d == 8 ? 0 : 7] += 1;
    }
    EXPECT_EQ(in_by_q[7], 0u);
    for (int q : {6, 3, 0}) { EXPECT_EQ(q_enq[q], in_by_q[q]) << "queue " << q; }
    std::vector<const rec*> win;
    std::uint64_t n6 = 0, n3 = 0, n0 = 0, other = 0;
    for (const auto& r : out) {
        if (r.ns < t0 || r.ns >= t1) { continue; }
        win.push_back(&r);
        EXPECT_EQ(r.len, frame) << "every data frame is one full SEND packet";
        switch (r.dscp()) {
            case 48: ++n6; break;
            case 26: ++n3; break;
            case 8: ++n0; break;
            default: ++other;
        }
    }
    EXPECT_EQ(other, 0u);
    ASSERT_GT(win.size(), 2000u);
    // The shaped port is busy back to back: every gap is one frame slot.
    std::int64_t worst_gap_err = 0;
    for (std::size_t k = 1; k < win.size(); ++k) {
        worst_gap_err = std::max(worst_gap_err, std::abs(win[k]->ns - win[k - 1]->ns - slot));
    }
    EXPECT_LE(worst_gap_err, 1) << "Ethernet1 idled or ran faster than 1 Gb/s in the window";
    const double W = double(t1 - t0);
    const double n_total_exact = W / double(slot);
    EXPECT_LE(std::abs(double(win.size()) - n_total_exact), 1.0);

    // TC 6: what it was offered in the window (its arrivals at Ethernet0),
    // and the closed form (paced at exactly 300 Mb/s: one frame per 29493.3 ns).
    std::uint64_t n6_in = 0;
    for (const auto& r : in) {
        if (r.ns >= t0 && r.ns < t1 && r.dscp() == 48) { ++n6_in; }
    }
    const double n6_exact = W * 0.3 / double(slot);  // 0.3 bit/ns
    EXPECT_LE(std::abs(double(n6) - double(n6_in)), 1.0) << "TC 6 egress != its offered load";
    EXPECT_LE(std::abs(double(n6) - n6_exact), 1.0) << "TC 6 egress != 300 Mb/s";
    EXPECT_LE(std::abs(double(n6_in) - n6_exact), 1.0) << "the generator's pacer is not exact";
    // TC 3 + TC 0 take the rest: 1 Gb/s - 0.3 Gb/s.
    const double rest_exact = n_total_exact - n6_exact;
    EXPECT_LE(std::abs(double(n3 + n0) - rest_exact), 2.0);
    // DWRR 15:14 by bytes (equal frames: by count); the DRR bound is one
    // quantum (15 x 1152 B) plus one frame.
    const double n3_exact = double(n3 + n0) * 15.0 / 29.0;
    const double drr_bound = (15.0 * 1152.0 + frame) / frame;
    EXPECT_LE(std::abs(double(n3) - n3_exact), drr_bound) << "DWRR split off its 15:14 weights";

    // Strict: each TC 6 frame leaves less than one 1 Gb/s slot after it
    // arrived, plus its own 10 Gb/s wire time. Frames pair up in order (one
    // FIFO, no drops); the PSNs prove it.
    std::vector<const rec*> i6, o6, i0, o0;
    for (const auto& r : in) {
        if (r.dscp() == 48) { i6.push_back(&r); }
        if (r.dscp() == 8) { i0.push_back(&r); }
    }
    for (const auto& r : out) {
        if (r.dscp() == 48) { o6.push_back(&r); }
        if (r.dscp() == 8) { o0.push_back(&r); }
    }
    ASSERT_GT(o6.size(), 600u);
    std::int64_t max6 = 0, max6_win = 0;
    for (std::size_t k = 0; k < o6.size() && k < i6.size(); ++k) {
        ASSERT_EQ(o6[k]->psn(), i6[k]->psn()) << "TC 6 frame " << k << " out of order";
        const std::int64_t soj = o6[k]->ns - i6[k]->ns;
        max6 = std::max(max6, soj);
        if (i6[k]->ns >= t0) { max6_win = std::max(max6_win, soj); }
    }
    EXPECT_LE(max6_win, slot + wire10) << "a TC 6 frame waited longer than one frame slot";
    std::int64_t max0 = 0;
    for (std::size_t k = 0; k < o0.size() && k < i0.size(); ++k) {
        if (o0[k]->psn() == i0[k]->psn() && i0[k]->ns >= t0) { max0 = std::max(max0, o0[k]->ns - i0[k]->ns); }
    }
    std::printf("[vt sp] window %.0f ms at 1Gbps: %zu frames (exact %.2f), worst gap error %lld ns; TC6 %llu "
                "(offered %llu, exact %.2f) = %.4f Gbps; TC3 %llu + TC0 %llu = %llu (exact %.2f), TC3 share %.4f "
                "(15/29 = %.4f); TC6 sojourn max %lld ns in window (%lld ns overall, bound %lld), TC0 %lld ns\n",
                W / 1e6, win.size(), n_total_exact, (long long)worst_gap_err, (unsigned long long)n6,
                (unsigned long long)n6_in, n6_exact, double(n6) * (frame + 24) * 8 / W,
                (unsigned long long)n3, (unsigned long long)n0, (unsigned long long)(n3 + n0), rest_exact,
                double(n3) / double(n3 + n0), 15.0 / 29.0, (long long)max6_win, (long long)max6,
                (long long)(slot + wire10), (long long)max0);
}

// ---------------------------------------------------------------------------
// 2. PFC watchdog (pfc_watchdog_test in virtual time).
//
// Host a (gen port 0) sends TC 3 (DSCP 26) at 200 Mb/s to host b (gen port
// 1) through Ethernet0 -> Ethernet1 (10 Gb/s cables). Host b's PFC source
// storms Ethernet1 with XOFF(prio 3, 65535 quanta = 3.355 ms at 10 Gb/s)
// every 1 ms from 100 ms on. Ethernet1: pfc_enable 3, pfcwd_sw_enable 3,
// PFC_WD detection 50 ms, restoration 100 ms, action drop, POLL_INTERVAL
// 5 ms. The watchdog polls at k x 5 ms (the switch is first polled at 0).
// Rule (ROCE_REFERENCE 2.4): an interval between two polls agrees when the
// queue was paused at both and the PFC rx counter moved; agreeing time
// (capped at detection - 1 per interval) summed to detection_time = storm;
// while stormed, quiet intervals (counter unchanged) summed to
// restoration_time = restored. The expected instants are computed from the
// XOFF arrival times in Ethernet1's rx capture by that rule, and agree with
// the closed forms ceil(first XOFF / P) x P + detection and
// ceil(last XOFF / P) x P + restoration.
// ---------------------------------------------------------------------------

struct wd_expect {
    std::int64_t detect = -1, restore = -1;
};

// The watchdog rule applied to the wire: polls at k x P up to `end`.
wd_expect watchdog_rule(const std::vector<std::int64_t>& xoff, std::int64_t pause, std::int64_t P, std::int64_t D,
                        std::int64_t R, std::int64_t end) {
    wd_expect e;
    auto paused = [&](std::int64_t t) {
        for (std::int64_t a : xoff) {
            if (a <= t && t < a + pause) { return true; }
        }
        return false;
    };
    auto rx = [&](std::int64_t t) { return std::count_if(xoff.begin(), xoff.end(), [&](std::int64_t a) { return a <= t; }); };
    bool have = false, last_paused = false, stormed = false;
    std::int64_t last_t = 0, last_rx = 0, acc = 0;
    for (std::int64_t t = 0; t <= end; t += P) {
        const bool p = paused(t);
        const std::int64_t r = rx(t);
        if (have) {
            const std::int64_t el = t - last_t;
            const bool moved = r != last_rx;
            if (!stormed) {
                if (last_paused && p && moved) {
                    acc += std::min(el, D - 1);
                    if (acc >= D) {
                        stormed = true;
                        acc = 0;
                        if (e.detect < 0) { e.detect = t; }
                    }
                } else {
                    acc = 0;
                }
            } else if (!moved) {
                acc += el;
                if (acc >= R) {
                    stormed = false;
                    acc = 0;
                    if (e.restore < 0) { e.restore = t; }
                }
            } else {
                acc = 0;
            }
        }
        have = true;
        last_t = t;
        last_paused = p;
        last_rx = r;
    }
    return e;
}

struct wd_run {
    std::vector<std::int64_t> xoff;       // XOFF arrivals at Ethernet1 (last bit)
    std::vector<sw::switch_event> events;
    sw::pfc_status st{};
    std::uint64_t pfcwd_drops = 0, other_drops = 0, tail_drops = 0, link_drops = 0, q3_depth = 0;
    std::uint64_t completed_at_detect = 0, completed_end = 0, spins = 0;
    std::vector<rec> in, out;  // Ethernet0 rx, Ethernet1 tx
    bool cfg_ok = false;
};

wd_run run_watchdog(int storm_frames, nanos run, nanos detect_probe) {
    wd_run res;
    static int runs = 0;
    pool_guard pool(65536, ("vtt_wd" + std::to_string(runs++)).c_str());
    EXPECT_NE(pool.mp, nullptr);
    if (pool.mp == nullptr) { return res; }
    const tmp_dir tmp("wd" + std::to_string(runs));
    const std::string& dir = tmp.path;
    {
        vt::fabric f;
        const switch_cfg scfg = sw_cfg(
            "PORT:\n"
            "  Ethernet0: {port_id: 0}\n"
            "  Ethernet1: {port_id: 1}\n"
            "BUFFER_POOL: {}\nWRED_PROFILE: {}\n"
            "PORT_QOS_MAP:\n  Ethernet1: {pfc_enable: \"3\", pfcwd_sw_enable: \"3\"}\n"
            "QUEUE:\n  \"Ethernet1|3\": {max_bytes: 8MiB, max_packets: 16384}\n"
            "PFC_WD:\n"
            "  Ethernet1: {detection_time: 50ms, restoration_time: 100ms, action: drop}\n"
            "  GLOBAL: {POLL_INTERVAL: 5ms}\n");
        if (scfg.ports.size() != 2) { return res; }
        const port_cfg& p1 = scfg.ports[1];
        res.cfg_ok = p1.wd.enabled && p1.pfcwd_queues == 0x08 && (p1.pfc_enable & 0x08) != 0 &&
                     p1.wd.detection_time == 50_ms && p1.wd.restoration_time == 100_ms &&
                     p1.wd.poll_interval == 5_ms && p1.wd.action == pfc_wd_action::drop;
        const auto leaf = f.add_switch("leaf", scfg);
        // ack_timeout 10ms (code 12, 16.8 ms) and infinite retries: the
        // flow's go-back-N keeps offering TC 3 frames through the storm and
        // recovers after it.
        const auto hosts = f.add_gen("hosts", g_cfg(
            "seed: 1\ndcqcn: off\npmtu: 1024\nop: send\nmsg_size: 64KiB\nack_timeout: 10ms\nretry_infinite: true\n"
            "hosts:\n  - {name: a, port: 0}\n  - {name: b, port: 1}\n"
            "flows:\n  - {src: a, dst: b, dscp: 26, priority: 3, rate: 200Mbps}\n"
            "pfc_tx:\n  - port=1,prio=3,quanta=65535,interval=1ms,count=" + std::to_string(storm_frames) +
            ",start=100ms\n"));
        const vt::cable_cfg c10{.rate = g10, .prop_delay = 25_ns};
        f.connect(hosts, 0, leaf, 0, c10);
        f.connect(hosts, 1, leaf, 1, c10);
        EXPECT_EQ(f.build(pool.mp), "");
        EXPECT_EQ(f.capture_to(dir, 64), "");
        auto& s = f.switch_at(leaf);
        auto& g = f.gen_at(hosts);
        f.run_until(detect_probe);
        res.completed_at_detect = g.flow(0).rq.counters().messages_completed;
        f.run_until(run);
        res.completed_end = g.flow(0).rq.counters().messages_completed;
        res.spins = f.spins();
        sw::switch_event ev;
        while (s.pop_event(ev)) { res.events.push_back(ev); }
        res.st = s.pfc(1, f.now());
        for (std::size_t p = 0; p < s.port_count(); ++p) {
            for (std::size_t r = 0; r < static_cast<std::size_t>(sw::drop_reason::count); ++r) {
                const std::uint64_t n = s.counters(p).drops[r];
                if (r == static_cast<std::size_t>(sw::drop_reason::pfcwd)) {
                    res.pfcwd_drops += n;
                } else {
                    res.other_drops += n;
                }
            }
        }
        for (int q = 0; q < 8; ++q) { res.tail_drops += s.queue(1, q).drop_packets; }
        res.q3_depth = s.queue(1, 3).depth_packets;
        res.link_drops = link_drops(f);
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u) << "every mbuf back in the pool";
    for (const auto& r : read_pcap(dir + "/leaf-Ethernet1-rx.pcap")) {
        if (r.pfc()) { res.xoff.push_back(r.ns); }
    }
    res.in = read_pcap(dir + "/leaf-Ethernet0-rx.pcap");
    res.out = read_pcap(dir + "/leaf-Ethernet1-tx.pcap");
    return res;
}

constexpr std::int64_t wd_P = 5'000'000, wd_D = 50'000'000, wd_R = 100'000'000;
// 65535 quanta x 512 bit / 10 Gb/s.
constexpr std::int64_t wd_pause = 65535LL * 512 * 1'000'000'000 / 10'000'000'000LL;
static_assert(wd_pause == 3'355'392);

std::int64_t ceil_to(std::int64_t t, std::int64_t p) { return (t + p - 1) / p * p; }

TEST(vt_timing, pfc_watchdog_detects_a_storm_and_restores_at_the_polls_the_rule_names) {
    init_eal();
    constexpr int storm = 120;  // XOFF every 1 ms from 100 ms: a 119 ms storm > 50 ms detection
    // Probe the flow just before the expected detection (155 ms).
    const wd_run r = run_watchdog(storm, 400_ms, 150_ms);
    ASSERT_TRUE(r.cfg_ok) << "PORT_QOS_MAP / PFC_WD did not load as intended";
    EXPECT_EQ(r.spins, 0u);
    ASSERT_EQ(r.xoff.size(), std::size_t(storm));
    // A continuous storm on the wire: every XOFF arrives before the previous one's pause ends.
    for (std::size_t k = 1; k < r.xoff.size(); ++k) {
        ASSERT_LT(r.xoff[k] - r.xoff[k - 1], wd_pause) << "gap in the storm at XOFF " << k;
    }
    EXPECT_EQ(r.st.rx_frames[3], std::uint64_t(storm));
    const std::int64_t a1 = r.xoff.front(), an = r.xoff.back();
    const wd_expect e = watchdog_rule(r.xoff, wd_pause, wd_P, wd_D, wd_R, 400'000'000);
    // The rule on the wire agrees with the closed forms.
    EXPECT_EQ(e.detect, ceil_to(a1, wd_P) + wd_D);
    EXPECT_EQ(e.restore, ceil_to(an, wd_P) + wd_R);
    // The switch's events: exactly one storm and one restore, at those instants.
    ASSERT_EQ(r.events.size(), 2u);
    EXPECT_EQ(r.events[0].what, sw::switch_event::kind::storm_detected);
    EXPECT_EQ(r.events[0].ns, e.detect) << "first XOFF at " << a1 << " ns";
    EXPECT_EQ(r.events[0].port, 1u);
    EXPECT_EQ(r.events[0].queue, 3u);
    EXPECT_EQ(r.events[1].what, sw::switch_event::kind::storm_restored);
    EXPECT_EQ(r.events[1].ns, e.restore) << "last XOFF at " << an << " ns";
    EXPECT_EQ(r.events[1].queue, 3u);
    EXPECT_EQ(r.st.wd_storms[3], 1u);
    EXPECT_EQ(r.st.wd_restores[3], 1u);
    EXPECT_FALSE(r.st.wd_stormed[3]);

    // TC 3 on the wire: into Ethernet0, out of Ethernet1.
    std::vector<const rec*> in3, out3;
    for (const auto& x : r.in) {
        if (x.dscp() == 26) { in3.push_back(&x); }
    }
    for (const auto& x : r.out) {
        if (x.dscp() == 26) { out3.push_back(&x); }
    }
    auto count_le = [](const std::vector<const rec*>& v, std::int64_t t) {
        return std::uint64_t(std::count_if(v.begin(), v.end(), [&](const rec* x) { return x->ns <= t; }));
    };
    // Flowing before the storm; after the first XOFF only a frame already on
    // the wire finishes; nothing leaves until the restore; then it flows again.
    ASSERT_GT(count_le(out3, a1), 1000u);
    std::uint64_t during = 0, after = 0;
    std::int64_t first_after = -1;
    for (const rec* x : out3) {
        if (x->ns > a1 && x->ns <= e.restore) {
            EXPECT_LE(x->ns, a1 + wire_ns_ceil(x->len, g10)) << "a TC 3 frame left Ethernet1 during the storm";
            ++during;
        } else if (x->ns > e.restore) {
            if (first_after < 0) { first_after = x->ns; }
            ++after;
        }
    }
    EXPECT_LE(during, 1u);
    EXPECT_GT(after, 1000u) << "TC 3 flows again after the restore";
    EXPECT_GT(r.completed_end, r.completed_at_detect) << "the flow completes messages again";
    // Every TC 3 frame is accounted for: forwarded, or dropped by the
    // watchdog. Queued at detection = flushed (tx); arriving while stormed,
    // i.e. in (detect, restore] (the watchdog polls after the poll's RX) =
    // dropped on arrival (rx). No other drop anywhere.
    const std::uint64_t tx_exp = count_le(in3, e.detect) - count_le(out3, e.detect);
    const std::uint64_t rx_exp = count_le(in3, e.restore) - count_le(in3, e.detect);
    EXPECT_EQ(r.st.wd_tx_dropped[3], tx_exp);
    EXPECT_EQ(r.st.wd_rx_dropped[3], rx_exp);
    EXPECT_GT(tx_exp, 0u) << "frames were queued behind the pause when the storm was detected";
    EXPECT_GT(rx_exp, 0u) << "frames arrived while stormed";
    EXPECT_EQ(r.pfcwd_drops, tx_exp + rx_exp);
    EXPECT_EQ(r.other_drops, 0u);
    EXPECT_EQ(r.tail_drops, 0u);
    EXPECT_EQ(r.link_drops, 0u);
    EXPECT_EQ(r.q3_depth, 0u);
    EXPECT_EQ(std::uint64_t(in3.size()), std::uint64_t(out3.size()) + r.pfcwd_drops) << "TC 3 frames unaccounted";
    std::printf("[vt pfcwd] %zu XOFF, first at %lld ns, last at %lld ns; storm detected at %lld ns (rule %lld = "
                "ceil(first/5ms)x5ms + 50ms), restored at %lld ns (rule %lld = ceil(last/5ms)x5ms + 100ms); TC3 "
                "in %zu, out %zu (%llu during the storm, first after the restore at %lld ns), watchdog drops: %llu "
                "queued + %llu arriving\n",
                r.xoff.size(), (long long)a1, (long long)an, (long long)r.events[0].ns, (long long)e.detect,
                (long long)r.events[1].ns, (long long)e.restore, in3.size(), out3.size(),
                (unsigned long long)during, (long long)first_after,
                (unsigned long long)r.st.wd_tx_dropped[3], (unsigned long long)r.st.wd_rx_dropped[3]);
}

TEST(vt_timing, pfc_watchdog_ignores_a_storm_shorter_than_detection_time) {
    init_eal();
    constexpr int storm = 40;  // 100..139 ms: paused samples at 100..140 ms span 40 ms < 50 ms
    const wd_run r = run_watchdog(storm, 300_ms, 150_ms);
    ASSERT_TRUE(r.cfg_ok);
    EXPECT_EQ(r.spins, 0u);
    ASSERT_EQ(r.xoff.size(), std::size_t(storm));
    const wd_expect e = watchdog_rule(r.xoff, wd_pause, wd_P, wd_D, wd_R, 300'000'000);
    EXPECT_EQ(e.detect, -1) << "the rule itself must not fire on this storm";
    EXPECT_TRUE(r.events.empty());
    EXPECT_EQ(r.st.wd_storms[3], 0u);
    EXPECT_FALSE(r.st.wd_stormed[3]);
    EXPECT_EQ(r.st.wd_tx_dropped[3] + r.st.wd_rx_dropped[3], 0u);
    EXPECT_EQ(r.pfcwd_drops + r.other_drops + r.tail_drops + r.link_drops, 0u);
    // Lossless: everything that came in went out (the queue was only paused).
    std::uint64_t in3 = 0, out3 = 0;
    for (const auto& x : r.in) { in3 += x.dscp() == 26; }
    for (const auto& x : r.out) { out3 += x.dscp() == 26; }
    EXPECT_EQ(in3, out3);
    std::printf("[vt pfcwd short] %zu XOFF (%lld..%lld ns): no storm, TC3 in %llu = out %llu\n", r.xoff.size(),
                (long long)r.xoff.front(), (long long)r.xoff.back(), (unsigned long long)in3,
                (unsigned long long)out3);
}

// ---------------------------------------------------------------------------
// 2b. PFC reaction (pfc_reaction_test in virtual time): the oracle for its
// timing. The real-time test can only judge within the polling gaps it
// measures on a shared machine; here the instants are exact.
//
// Host a (gen port 0) sends TC 3 (DSCP 26) and TC 0 (DSCP 8), each paced at
// 300 Mb/s, RC SEND with a 1024 B PMTU (1082 B frames), to host b (gen port
// 1) through Ethernet0 -> Ethernet1; Ethernet1 is a 1 Gb/s port (shaped,
// 16 KiB burst) on a 10 Gb/s cable, PFC on priorities 3 and 4 (AZURE
// default). Host b's PFC source sends, on the wire into Ethernet1:
//   XOFF(prio 3, 40000 quanta) at 100 ms: 40000 x 512 bit / 1 Gb/s = 20.48 ms;
//   XOFF(prio 3, 40000 quanta) at 150 ms, then XON (quanta 0) at 155 ms.
// With a1, a2, x the XOFF/XON arrivals (last bit) in Ethernet1's rx capture
// and departures from its tx capture (last bit; first bit = last - the
// frame's 10 Gb/s wire time), the rules (802.1Qbb; ROCE_REFERENCE 2.x):
//   - stop: every TC 3 frame that arrived at Ethernet0 after the XOFF (paired
//     by PSN) leaves no earlier than the pause's end; frames that leave
//     during the pause arrived before the XOFF and were already handed to
//     the port's TX ring (at most the shaper's 16 KiB burst plus a frame,
//     gone by a1 + that on the 10 Gb/s wire);
//   - resume at exactly Q x 512 bit times: the first TC 3 frame after the
//     pause starts (first bit) at max(a1 + 20.48 ms, the end of the frame
//     then on the wire), to the nanosecond (TC 3 frames are waiting and the
//     shaper's bucket is full after the pause);
//   - XON: likewise at max(x, the wire free), and TC 3 frames that arrived
//     between the second XOFF and x leave no earlier than x;
//   - TC 0 is never paused: the switch's paused_time for priority 0 is 0,
//     and each TC 0 frame arriving while TC 3 is paused leaves after exactly
//     its own 10 Gb/s wire time (store and forward, the port otherwise idle);
//   - the switch's own paused_time for priority 3 is exactly
//     20.48 ms + (x - a2); 3 PFC frames received; nothing dropped.
// ---------------------------------------------------------------------------

TEST(vt_timing, pfc_xoff_pauses_priority_3_for_its_quanta_and_xon_resumes_it_exactly) {
    init_eal();
    pool_guard pool(65536, "vtt_pfc");
    ASSERT_NE(pool.mp, nullptr);
    const tmp_dir tmp("pfc");
    const std::string& dir = tmp.path;
    constexpr std::int64_t pause = 40000LL * 512;  // ns at 1 Gb/s
    static_assert(pause == 20'480'000);
    std::int64_t paused3 = -1, paused0 = -1;
    std::uint64_t rx_pfc = 0, rx_pfc3 = 0, drops = 0, ldrops = 0, trouble = 0;
    {
        vt::fabric f;
        const switch_cfg scfg = sw_cfg(
            "PORT:\n"
            "  Ethernet0: {port_id: 0}\n"
            "  Ethernet1: {port_id: 1, speed: 1Gbps}\n"
            "BUFFER_POOL: {}\nWRED_PROFILE: {}\n"
            "QUEUE:\n  \"Ethernet1|3\": {max_bytes: 8MiB, max_packets: 8192}\n");
        ASSERT_EQ(scfg.ports.size(), 2u);
        ASSERT_EQ(scfg.ports[1].pfc_enable & 0x08, 0x08) << "AZURE default: PFC on priorities 3 and 4";
        const auto leaf = f.add_switch("leaf", scfg);
        // ack_timeout 100 ms: the paused flow's window waits in the switch
        // for 20 ms without a timeout.
        const auto hosts = f.add_gen("hosts", g_cfg(
            "seed: 1\ndcqcn: off\npmtu: 1024\nop: send\nmsg_size: 64KiB\nack_timeout: 100ms\n"
            "hosts:\n  - {name: a, port: 0}\n  - {name: b, port: 1}\n"
            "flows:\n"
            "  - {src: a, dst: b, dscp: 26, priority: 3, rate: 300Mbps}\n"
            "  - {src: a, dst: b, dscp: 8, priority: 0, rate: 300Mbps}\n"
            "pfc_tx:\n"
            "  - port=1,prio=3,quanta=40000,start=100ms,count=1\n"
            "  - port=1,prio=3,quanta=40000,start=150ms,count=1\n"
            "  - port=1,prio=3,quanta=0,start=155ms,count=1\n"));
        const vt::cable_cfg c10{.rate = g10, .prop_delay = 25_ns};
        f.connect(hosts, 0, leaf, 0, c10);
        f.connect(hosts, 1, leaf, 1, c10);
        ASSERT_EQ(f.build(pool.mp), "");
        ASSERT_EQ(f.capture_to(dir, 64), "");
        f.run_until(200_ms);
        EXPECT_EQ(f.spins(), 0u);
        auto& s = f.switch_at(leaf);
        paused3 = s.paused_time(1, 3, f.now()).v;
        paused0 = s.paused_time(1, 0, f.now()).v;
        rx_pfc = s.counters(1).rx_pfc;
        rx_pfc3 = s.counters(1).rx_pfc_prio[3];
        drops = switch_drops(s);
        for (int q = 0; q < 8; ++q) { drops += s.queue(1, q).drop_packets; }
        ldrops = link_drops(f);
        trouble = gen_trouble(f.gen_at(hosts));
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u) << "every mbuf back in the pool";
    EXPECT_EQ(drops, 0u);
    EXPECT_EQ(ldrops, 0u);
    EXPECT_EQ(trouble, 0u) << "no NAK, timeout or retransmission";
    EXPECT_EQ(rx_pfc, 3u);
    EXPECT_EQ(rx_pfc3, 3u);

    std::vector<std::int64_t> pfc_at;
    for (const auto& r : read_pcap(dir + "/leaf-Ethernet1-rx.pcap")) {
        if (r.pfc()) { pfc_at.push_back(r.ns); }
    }
    ASSERT_EQ(pfc_at.size(), 3u);
    const std::int64_t a1 = pfc_at[0], a2 = pfc_at[1], x = pfc_at[2];
    const auto in = read_pcap(dir + "/leaf-Ethernet0-rx.pcap");
    const auto out = read_pcap(dir + "/leaf-Ethernet1-tx.pcap");
    constexpr std::uint32_t frame = 1082;
    const std::int64_t w10 = wire_ns_ceil(frame, g10);            // 885 ns on the 10 Gb/s wire
    const std::int64_t leak = wire_ns_ceil_wire(16 * 1024 + 2 * (frame + 24), g10);  // burst + 2 frames
    std::vector<std::int64_t> o3, o0;                               // departures, last bit
    for (const auto& r : out) {
        if (r.dscp() == 26) { o3.push_back(r.ns); }
        if (r.dscp() == 8) { o0.push_back(r.ns); }
        if (r.dscp() == 26 || r.dscp() == 8) { EXPECT_EQ(r.len, frame); }
    }
    ASSERT_GT(o3.size(), 3000u);
    auto last_before = [&](std::int64_t t) {
        auto it = std::lower_bound(o3.begin(), o3.end(), t);
        return it == o3.begin() ? std::int64_t{-1} : *(it - 1);
    };
    auto first_after = [&](std::int64_t t) {
        auto it = std::upper_bound(o3.begin(), o3.end(), t);
        return it == o3.end() ? std::int64_t{-1} : *it;
    };
    // TC 3 arrivals (last bit at Ethernet0) by PSN.
    std::map<std::uint32_t, std::int64_t> in3;
    for (const auto& r : in) {
        if (r.dscp() == 26) { in3[r.psn()] = r.ns; }
    }
    // 1. Stop: frames that arrived during a pause leave at its end or later;
    // what leaves during it was handed to the TX ring before the XOFF.
    std::uint64_t held1 = 0, held2 = 0, leaked = 0;
    for (const auto& r : out) {
        if (r.dscp() != 26) { continue; }
        const auto it = in3.find(r.psn());
        ASSERT_NE(it, in3.end()) << "TC 3 PSN " << r.psn() << " left Ethernet1 but never arrived";
        const std::int64_t arrived = it->second, start = r.ns - w10;
        if (arrived > a1 && arrived < a1 + pause) {
            ++held1;
            EXPECT_GE(start, a1 + pause) << "TC 3 PSN " << r.psn() << " arrived during the pause and left in it";
        }
        if (arrived > a2 && arrived < x) {
            ++held2;
            EXPECT_GE(start, x) << "TC 3 PSN " << r.psn() << " arrived between the second XOFF and the XON and left";
        }
        if ((r.ns > a1 && r.ns < a1 + pause) || (r.ns > a2 && r.ns < x)) {
            ++leaked;
            EXPECT_LT(arrived, r.ns > a2 ? a2 : a1) << "TC 3 PSN " << r.psn() << " left during a pause";
            EXPECT_LE(r.ns, (r.ns > a2 ? a2 : a1) + leak) << "TC 3 left long after the XOFF";
        }
    }
    EXPECT_GT(held1, 10u) << "TC 3 frames arrived during the pause";
    EXPECT_GT(held2, 10u) << "TC 3 frames arrived between the second XOFF and the XON";
    const std::int64_t stop1 = last_before(a1 + pause), stop2 = last_before(x);
    // 2. Resume at Q x 512 bit times, or when the frame on the wire ends.
    // Last bit of the latest departure (any class) before t, or -1.
    auto wire_free_at = [&](std::int64_t t) {
        std::int64_t e = -1;
        for (const auto& r : out) {
            if (r.ns - wire_ns_ceil(r.len, g10) < t) { e = std::max(e, r.ns); }
        }
        return e;
    };
    const std::int64_t res1 = first_after(a1 + leak);
    ASSERT_GT(res1, 0) << "TC 3 never resumed";
    const std::int64_t want1 = std::max(a1 + pause, wire_free_at(a1 + pause));
    EXPECT_EQ(res1 - w10, want1) << "TC 3 did not resume when the pause ran out";
    // 3. The XON resumes it at once.
    const std::int64_t res2 = first_after(x);
    ASSERT_GT(res2, 0);
    const std::int64_t want2 = std::max(x, wire_free_at(x));
    EXPECT_EQ(res2 - w10, want2) << "TC 3 did not resume at the XON";
    // 4. TC 0 flowed throughout: each frame (in order, by PSN) left within a
    // slot plus its wire time; none waited behind the paused class.
    std::vector<const rec*> i0, oo0;
    for (const auto& r : in) {
        if (r.dscp() == 8) { i0.push_back(&r); }
    }
    for (const auto& r : out) {
        if (r.dscp() == 8) { oo0.push_back(&r); }
    }
    ASSERT_GT(oo0.size(), 3000u);
    std::int64_t max0_paused = 0, min0_paused = INT64_MAX, max0 = 0;
    std::uint64_t n0_paused = 0;
    for (std::size_t k = 0; k < oo0.size() && k < i0.size(); ++k) {
        ASSERT_EQ(oo0[k]->psn(), i0[k]->psn()) << "TC 0 frame " << k << " out of order";
        const std::int64_t soj = oo0[k]->ns - i0[k]->ns;
        max0 = std::max(max0, soj);
        if (i0[k]->ns > a1 && i0[k]->ns < a1 + pause) {
            max0_paused = std::max(max0_paused, soj);
            min0_paused = std::min(min0_paused, soj);
            ++n0_paused;
        }
    }
    EXPECT_GT(n0_paused, 600u) << "TC 0 kept arriving during the pause";
    EXPECT_EQ(max0_paused, w10) << "a TC 0 frame waited while TC 3 was paused";
    EXPECT_EQ(min0_paused, w10);
    EXPECT_EQ(paused0, 0);
    // 5. The switch's own account: exactly the two pauses.
    EXPECT_EQ(paused3, pause + (x - a2));
    std::printf("[vt pfc] XOFF at %lld ns: last TC 3 out %lld ns after it (%llu left during pauses, bound %lld ns), "
                "%llu held; first again %lld ns after it (first bit %+lld ns from the 20.48 ms expiry, %+lld from the "
                "rule); second XOFF at %lld ns (last TC 3 %+lld ns), XON at %lld ns (%llu held): TC 3 again %lld ns "
                "after it; TC 0 sojourn %lld..%lld ns while paused (%llu frames), %lld overall; switch paused_time "
                "prio 3 %lld ns\n",
                (long long)a1, (long long)(stop1 - a1), (unsigned long long)leaked, (long long)leak,
                (unsigned long long)held1, (long long)(res1 - a1), (long long)(res1 - w10 - a1 - pause),
                (long long)(res1 - w10 - want1), (long long)a2, (long long)(stop2 - a2), (long long)x,
                (unsigned long long)held2, (long long)(res2 - x), (long long)min0_paused, (long long)max0_paused,
                (unsigned long long)n0_paused, (long long)max0, (long long)paused3);
}

// ---------------------------------------------------------------------------
// 3. Same code: one transfer, real time over net_ring and virtual time.
//
// The same switch_cfg and gen_cfg objects, the same pipeline classes: once on
// DPDK ring-backed ethdevs (bindings with io.ops == nullptr, i.e. inline
// rte_eth_rx_burst/tx_burst), polled in one loop with the TSC clock; once as
// fabric nodes over 1 Gb/s cables. One RC flow from port 0 to port 1, 64 KiB
// WRITEs, one outstanding, a fixed count, paced at 1 Gb/s.
// Both runs: every message completes; the receiver sees the same data and
// ACK packet counts and bytes (the closed-form ones: the responder ACKs
// every packet, ack_coalesce 1); no drop, NAK, timeout
// or retransmission. Virtual time: each FCT is exactly the ideal
//   (S + w_max + 2 x w_ack) x 8 / R + 4 x prop
// (S = the message's wire bytes, serialised once onto the first cable; the
// store-and-forward hop adds the longest frame, the WRITE FIRST with its
// RETH, whose lead the equal-or-shorter frames behind it never make up; the
// last packet's ACK crosses two idle cables). Real time has no wire: its FCTs are only checked
// against what the generator's pacer allows at all, (S - w_last - 2200) x 8
// / R (the pacer's 2200 B burst lets the first frames go at once).
// ---------------------------------------------------------------------------

struct transfer_result {
    bool finished = false;
    std::uint64_t completed = 0, bytes_completed = 0, posted = 0;
    std::uint64_t rx_data = 0, rx_data_bytes = 0, rx_acks = 0, rx_ack_bytes = 0;  // receiver / sender rx
    std::uint64_t resp_msgs = 0, resp_acks = 0;
    std::uint64_t tx_data = 0, sw_drops = 0, trouble = 0, link_drops = 0;
    std::uint64_t sw_rx[2] = {}, sw_tx[2] = {};
    std::vector<std::uint64_t> fct;
    double wall_s = 0;
};

void collect(transfer_result& t, const gen::gen_pipeline& g, sw::switch_pipeline& s) {
    const auto& f = g.flow(0);
    t.finished = g.all_finished();
    t.completed = f.rq.counters().messages_completed;
    t.bytes_completed = f.rq.counters().bytes_completed;
    t.posted = f.rq.counters().messages_posted;
    t.tx_data = f.rq.counters().tx_packets;
    t.rx_data = g.counters(1).rx_packets;
    t.rx_data_bytes = g.counters(1).rx_bytes;
    t.rx_acks = g.counters(0).rx_packets;
    t.rx_ack_bytes = g.counters(0).rx_bytes;
    t.resp_msgs = f.rs.counters().messages_rx;
    t.resp_acks = f.rs.counters().acks_tx;
    t.sw_drops = switch_drops(s);
    t.trouble = gen_trouble(g);
    for (int p = 0; p < 2; ++p) {
        t.sw_rx[p] = s.counters(p).rx_packets;
        t.sw_tx[p] = s.counters(p).tx_packets;
    }
    t.fct = f.fct_ns;
}

// Real time: two ring-backed ethdev pairs, gen port i <-> switch port i.
transfer_result run_real_time(const switch_cfg& scfg_in, const gen_cfg& gcfg_in, rte_mempool* pool) {
    transfer_result t;
    switch_cfg scfg = scfg_in;
    gen_cfg gcfg = gcfg_in;
    std::vector<rte_ring*> rings;
    std::vector<std::uint16_t> gen_ids, sw_ids;
    // ethdev and ring names stay taken after close: one set per call (--gtest_repeat).
    static int calls = 0;
    const std::string tag = "vtt" + std::to_string(calls++);
    auto free_rings = [&] {
        for (rte_ring* r : rings) {
            void* m = nullptr;
            while (rte_ring_dequeue(r, &m) == 0) {
                ++t.link_drops;  // left in flight: a frame nobody received
                rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
            }
            rte_ring_free(r);
        }
    };
    for (int i = 0; i < 2; ++i) {
        rte_ring* g2s = rte_ring_create((tag + "_g2s" + std::to_string(i)).c_str(), 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        rte_ring* s2g = rte_ring_create((tag + "_s2g" + std::to_string(i)).c_str(), 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        EXPECT_NE(g2s, nullptr);
        EXPECT_NE(s2g, nullptr);
        for (rte_ring* r : {g2s, s2g}) {
            if (r != nullptr) { rings.push_back(r); }
        }
        const int sp = g2s && s2g ? rte_eth_from_rings((tag + "_sw" + std::to_string(i)).c_str(), &g2s, 1, &s2g, 1, 0) : -1;
        const int gp = g2s && s2g ? rte_eth_from_rings((tag + "_gen" + std::to_string(i)).c_str(), &s2g, 1, &g2s, 1, 0) : -1;
        EXPECT_GE(sp, 0);
        EXPECT_GE(gp, 0);
        for (int id : {sp, gp}) {
            if (id >= 0) { (id == sp ? sw_ids : gen_ids).push_back(static_cast<std::uint16_t>(id)); }
        }
        if (sp < 0 || gp < 0) {
            for (std::uint16_t id : sw_ids) { dpdk::port_close(id); }
            for (std::uint16_t id : gen_ids) { dpdk::port_close(id); }
            free_rings();
            return t;
        }
        for (int id : {sp, gp}) {
            dpdk::port_params pp;
            pp.port_id = static_cast<std::uint16_t>(id);
            pp.pool = pool;
            dpdk::port_info info;
            EXPECT_EQ(dpdk::port_open(pp, info), "");
        }
    }
    // Bindings as the fabric makes them, but on ethdevs (io.ops == nullptr):
    // the line rate the cables have in virtual time.
    std::vector<dpdk::port_binding> sb(2), gb(2);
    std::vector<std::pair<int, bits_per_sec>> speeds;
    for (int i = 0; i < 2; ++i) {
        sb[i].port_id = sw_ids[i];
        sb[i].name = scfg.ports[i].name;
        sb[i].mac = {0x02, 0x56, 0, 0, 0, static_cast<std::uint8_t>(i)};
        sb[i].shaped = scfg.ports[i].speed.has_value();
        sb[i].line_rate = scfg.ports[i].speed ? *scfg.ports[i].speed : g1;
        speeds.emplace_back(i, g1);
        gb[i].port_id = gen_ids[i];
        gb[i].name = "port" + std::to_string(i);
        gb[i].mac = {0x02, 0x56, 0, 1, 0, static_cast<std::uint8_t>(i)};
        gb[i].line_rate = gcfg.rate.v != 0 ? gcfg.rate : g1;
        EXPECT_EQ(sb[i].io.ops, nullptr);
        EXPECT_EQ(gb[i].io.ops, nullptr);
    }
    EXPECT_EQ(resolve_port_speeds(scfg, speeds), "");
    EXPECT_EQ(expand_gen_cfg(gcfg, 2), "");
    auto sr = sw::switch_pipeline::create(scfg, sb, pool);
    auto gr = gen::gen_pipeline::create(gcfg, gb, pool);
    if (auto* e = std::get_if<std::string>(&sr)) { ADD_FAILURE() << *e; }
    if (auto* e = std::get_if<std::string>(&gr)) { ADD_FAILURE() << *e; }
    if (sr.index() == 0 && gr.index() == 0) {
        auto& s = *std::get<0>(sr);
        auto& g = *std::get<0>(gr);
        dpdk::tsc_clock clk;
        const auto w0 = std::chrono::steady_clock::now();
        // A wall-clock guard only (the transfer takes ~0.1 s); it does not judge timing.
        const nanos guard = clk.now() + 60_s;
        for (nanos now = clk.now(); now < guard && !g.all_finished(); now = clk.now()) {
            g.poll(now);
            s.poll(now);
        }
        t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        collect(t, g, s);
        s.release_all();
        g.release_all();
        EXPECT_EQ(g.own_mbufs_in_use(), 0u);
    }
    sr = std::string();
    gr = std::string();
    for (int i = 0; i < 2; ++i) {
        dpdk::port_close(sw_ids[i]);
        dpdk::port_close(gen_ids[i]);
    }
    free_rings();
    return t;
}

transfer_result run_virtual_time(const switch_cfg& scfg, const gen_cfg& gcfg, rte_mempool* pool, nanos prop,
                                 const std::string& dir) {
    transfer_result t;
    vt::fabric f;
    const auto leaf = f.add_switch("leaf", scfg);
    const auto hosts = f.add_gen("hosts", gcfg);
    const vt::cable_cfg c1{.rate = g1, .prop_delay = prop};
    f.connect(hosts, 0, leaf, 0, c1);
    f.connect(hosts, 1, leaf, 1, c1);
    const std::string e = f.build(pool);
    EXPECT_EQ(e, "");
    if (!e.empty()) { return t; }
    EXPECT_EQ(f.capture_to(dir, 96), "");
    auto& g = f.gen_at(hosts);
    const auto w0 = std::chrono::steady_clock::now();
    while (!g.all_finished() && f.now() < 10_s) { f.run_until(f.now() + 1_ms); }
    t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    EXPECT_EQ(f.spins(), 0u);
    collect(t, g, f.switch_at(leaf));
    t.link_drops = link_drops(f);
    f.release_all();
    EXPECT_EQ(g.own_mbufs_in_use(), 0u);
    return t;
}

TEST(vt_timing, same_pipelines_and_configs_in_real_time_over_net_ring_and_in_virtual_time_agree) {
    init_eal();
    constexpr std::uint64_t msgs = 100, msg_size = 64 * 1024, pmtu = 1024;
    constexpr std::uint64_t pkts = msg_size / pmtu;
    const switch_cfg scfg = sw_cfg(
        "PORT:\n  Ethernet0: {port_id: 0}\n  Ethernet1: {port_id: 1}\nBUFFER_POOL: {}\nWRED_PROFILE: {}\n");
    // ack_timeout 1s: a descheduled real-time loop must not cause a retry.
    const gen_cfg gcfg = g_cfg("seed: 3\nrate: 1Gbps\ndcqcn: off\npmtu: 1024\nmsg_size: 64KiB\noutstanding: 1\n"
                               "messages: " + std::to_string(msgs) + "\nack_timeout: 1s\n");
    const tmp_dir tmp("same");
    const std::string& dir = tmp.path;
    transfer_result rt, vt;
    {
        pool_guard pool(32768, "vtt_same_rt");
        ASSERT_NE(pool.mp, nullptr);
        rt = run_real_time(scfg, gcfg, pool.mp);
        EXPECT_EQ(pool.in_use(), 0u) << "real time: every mbuf back in the pool";
    }
    constexpr nanos prop = 25_ns;
    {
        pool_guard pool(32768, "vtt_same_vt");
        ASSERT_NE(pool.mp, nullptr);
        vt = run_virtual_time(scfg, gcfg, pool.mp, prop, dir);
        EXPECT_EQ(pool.in_use(), 0u) << "virtual time: every mbuf back in the pool";
    }
    // Counts: the closed form, in both runs alike.
    for (const transfer_result* r : {&rt, &vt}) {
        const char* which = r == &rt ? "real time" : "virtual time";
        SCOPED_TRACE(which);
        EXPECT_TRUE(r->finished);
        EXPECT_EQ(r->completed, msgs);
        EXPECT_EQ(r->posted, msgs);
        EXPECT_EQ(r->bytes_completed, msgs * msg_size);
        EXPECT_EQ(r->tx_data, msgs * pkts);
        EXPECT_EQ(r->rx_data, msgs * pkts) << "data packets at the receiver";
        EXPECT_EQ(r->resp_msgs, msgs);
        EXPECT_EQ(r->resp_acks, msgs * pkts) << "one ACK per data packet (ack_coalesce 1)";
        EXPECT_EQ(r->rx_acks, msgs * pkts) << "ACK packets at the sender";
        EXPECT_EQ(r->sw_drops, 0u);
        EXPECT_EQ(r->link_drops, 0u);
        EXPECT_EQ(r->trouble, 0u) << "NAK, timeout, retransmission or bad frame";
        EXPECT_EQ(r->sw_rx[0], msgs * pkts);
        EXPECT_EQ(r->sw_tx[1], msgs * pkts);
        EXPECT_EQ(r->sw_rx[1], msgs * pkts);
        EXPECT_EQ(r->sw_tx[0], msgs * pkts);
        EXPECT_EQ(r->fct.size(), msgs);
    }
    // And the same as each other, byte for byte in the counts.
    EXPECT_EQ(rt.rx_data_bytes, vt.rx_data_bytes);
    EXPECT_EQ(rt.rx_ack_bytes, vt.rx_ack_bytes);
    EXPECT_EQ(rt.tx_data, vt.tx_data);

    // Wire bytes per message and frame sizes, from the virtual-time wire.
    const auto data_wire = read_pcap(dir + "/leaf-Ethernet0-rx.pcap");
    const auto ack_wire = read_pcap(dir + "/leaf-Ethernet1-rx.pcap");
    std::uint64_t data_frames = 0, data_bytes = 0;
    std::uint32_t w_max = 0, w_min = UINT32_MAX, ack_len = 0;
    std::uint32_t w_last = 0;  // the last frame of a message (WRITE LAST)
    for (const auto& r : data_wire) {
        ASSERT_TRUE(r.data()) << "only data frames go from port 0 to the switch";
        if (r.opcode() == 0x08) {
            ASSERT_TRUE(w_last == 0 || w_last == r.len + 24);
            w_last = r.len + 24;
        }
        ++data_frames;
        data_bytes += r.len;
        w_max = std::max(w_max, r.len + 24);
        w_min = std::min(w_min, r.len + 24);
    }
    for (const auto& r : ack_wire) {
        ASSERT_TRUE(r.ack()) << "only ACKs go from port 1 to the switch";
        ASSERT_TRUE(ack_len == 0 || ack_len == r.len);
        ack_len = r.len;
    }
    ASSERT_EQ(data_frames, msgs * pkts);
    ASSERT_EQ(data_bytes, vt.rx_data_bytes);
    ASSERT_EQ(ack_wire.size(), msgs * pkts);
    const std::uint64_t S = (data_bytes + 24 * data_frames) / msgs;  // wire bytes of one message
    ASSERT_EQ(S * msgs, data_bytes + 24 * data_frames) << "messages differ in size";
    const std::uint64_t w_ack = ack_len + 24u;
    const std::int64_t ideal = wire_ns_ceil_wire(S + w_max + 2 * w_ack, g1) + 4 * prop.v;
    ASSERT_GT(w_last, 0u);
    // The pacer (2200 B burst) sends the last frame no earlier than its
    // theoretical time after the others minus the burst; 1 ns for a restart.
    const std::int64_t rt_floor = (std::int64_t(S - w_last) - 2200) * 8 * 1'000'000'000 / std::int64_t(g1.v) - 1;
    std::int64_t vt_min = INT64_MAX, vt_max = 0, rt_min = INT64_MAX, rt_max = 0;
    for (std::uint64_t x : vt.fct) {
        vt_min = std::min(vt_min, std::int64_t(x));
        vt_max = std::max(vt_max, std::int64_t(x));
        EXPECT_EQ(std::int64_t(x), ideal) << "virtual-time FCT off the closed form";
    }
    for (std::uint64_t x : rt.fct) {
        rt_min = std::min(rt_min, std::int64_t(x));
        rt_max = std::max(rt_max, std::int64_t(x));
        EXPECT_GE(std::int64_t(x), rt_floor) << "real-time FCT faster than the pacer allows";
    }
    std::printf("[vt same-code] %llu x 64KiB at 1Gbps: real time %.3f s wall, virtual time %.3f s wall; both: %llu "
                "data packets (%llu B) and %llu ACKs at the receivers, no drop/NAK; message = %llu wire bytes, "
                "frames %u..%u B wire, ACK %llu B wire; FCT ideal %lld ns, virtual %lld..%lld ns, real %lld..%lld "
                "ns (pacer floor %lld ns)\n",
                (unsigned long long)msgs, rt.wall_s, vt.wall_s, (unsigned long long)vt.rx_data,
                (unsigned long long)vt.rx_data_bytes, (unsigned long long)vt.rx_acks, (unsigned long long)S,
                w_min, w_max, (unsigned long long)w_ack, (long long)ideal, (long long)vt_min, (long long)vt_max,
                (long long)rt_min, (long long)rt_max, (long long)rt_floor);
}

// ---------------------------------------------------------------------------
// 4. A generator polled without deadlines (gen_pipeline::poll_continuously,
//    as rocelab-gen's lcores run it) sends the same frames at the same times.
//
// Then it keeps no pace heap, and a flow's timer only ever moves earlier: a
// deadline that moved later fires at its old time, and the service it
// causes sets the new one. In virtual time next_deadline still answers (by
// walking the ready QPs, and early where a timer is early), so one lossy,
// closed-loop run with ACK timeouts, go-back-N and DCQCN timers on 8 QPs is
// made twice, once as is and once with poll_continuously 300 us into it;
// every capture must be the same, byte for byte (frames and fabric-time
// timestamps). A timer that fired late, or not at all, moves a timeout.
// ---------------------------------------------------------------------------

struct lazy_run {
    std::map<std::string, std::string> pcaps;  // file name -> bytes
    std::uint64_t completed = 0, posted = 0, timeouts = 0, retx = 0, naks = 0, cnps = 0;
};

lazy_run run_lossy(bool continuous, const std::string& dir) {
    lazy_run r;
    const switch_cfg scfg = sw_cfg(
        "PORT:\n  Ethernet0: {port_id: 0}\n  Ethernet1: {port_id: 1}\nBUFFER_POOL: {}\n"
        "WRED_PROFILE:\n  MARK: {wred_green_enable: \"false\", ecn: ecn_green, green_min_threshold: 20KB, "
        "green_max_threshold: 80KB, green_drop_probability: \"20\"}\n"
        "QUEUE:\n  \"global|3\": {wred_profile: MARK}\n");
    const gen_cfg gcfg = g_cfg("seed: 11\nrate: 10Gbps\npmtu: 1024\nmsg_size: 16KiB\nsenders: 8\noutstanding: 2\n"
                               "messages: 12\nloss: 2%\nack_loss: 5%\nack_timeout: 500us\n");
    pool_guard pool(32768, continuous ? "vtt_lazy_c" : "vtt_lazy_d");
    EXPECT_NE(pool.mp, nullptr);
    if (pool.mp == nullptr) { return r; }
    {
        vt::fabric f;
        const auto leaf = f.add_switch("leaf", scfg);
        const auto hosts = f.add_gen("hosts", gcfg);
        // The receiver's cable is slower: its queue marks ECN, CNPs start the
        // reaction points' timers, which come earlier than a pending timeout.
        f.connect(hosts, 0, leaf, 0, {.rate = g10, .prop_delay = 500_ns});
        f.connect(hosts, 1, leaf, 1, {.rate = bits_per_sec{4'000'000'000ULL}, .prop_delay = 500_ns});
        const std::string e = f.build(pool.mp);
        EXPECT_EQ(e, "");
        if (!e.empty()) { return r; }
        EXPECT_EQ(f.capture_to(dir, 128), "");
        auto& g = f.gen_at(hosts);
        // Switched mid-run, with QPs in the pace heap and timers set.
        f.run_until(300_us);
        if (continuous) { g.poll_continuously(); }
        while (!g.all_finished() && f.now() < 2_s) { f.run_until(f.now() + 1_ms); }
        EXPECT_TRUE(g.all_finished());
        EXPECT_EQ(f.spins(), 0u);
        for (std::size_t i = 0; i < g.flow_count(); ++i) {
            const auto& c = g.flow(i).rq.counters();
            r.completed += c.messages_completed;
            r.posted += c.messages_posted;
            r.timeouts += c.timeouts;
            r.retx += c.retx_packets;
            r.naks += c.naks_rx;
            r.cnps += g.flow(i).cnp_rx;
        }
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u);
    for (const auto& de : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(de.path(), std::ios::binary);
        r.pcaps[de.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), {});
    }
    return r;
}

TEST(vt_timing, a_generator_polled_without_deadlines_sends_the_same_frames_at_the_same_times) {
    init_eal();
    const tmp_dir a("lazy_d"), b("lazy_c");
    const lazy_run d = run_lossy(false, a.path);
    const lazy_run c = run_lossy(true, b.path);
    // The run exercises what the lazy timers change: ACK timeouts (ACKs lost),
    // NAKs and go-back-N (data lost), every message completed.
    EXPECT_EQ(d.posted, 8u * 12u);
    EXPECT_EQ(d.completed, d.posted);
    EXPECT_GT(d.timeouts, 0u);
    EXPECT_GT(d.naks, 0u);
    EXPECT_GT(d.retx, 0u);
    EXPECT_GT(d.cnps, 0u) << "DCQCN timers started by CNPs";
    EXPECT_EQ(c.cnps, d.cnps);
    EXPECT_EQ(c.completed, d.completed);
    EXPECT_EQ(c.timeouts, d.timeouts);
    EXPECT_EQ(c.naks, d.naks);
    EXPECT_EQ(c.retx, d.retx);
    ASSERT_EQ(c.pcaps.size(), d.pcaps.size());
    EXPECT_GE(d.pcaps.size(), 8u) << "tx and rx captures of four cable ends";
    for (const auto& [name, bytes] : d.pcaps) {
        const auto it = c.pcaps.find(name);
        ASSERT_NE(it, c.pcaps.end()) << name;
        EXPECT_GT(bytes.size(), 24u) << name << ": frames captured";
        EXPECT_TRUE(it->second == bytes) << name << ": differs (" << bytes.size() << " and " << it->second.size()
                                         << " bytes)";
    }
    std::printf("[vt lazy] %llu messages, %llu timeouts, %llu NAKs, %llu resent, %llu CNPs; %zu captures compared\n",
                (unsigned long long)d.completed, (unsigned long long)d.timeouts, (unsigned long long)d.naks,
                (unsigned long long)d.retx, (unsigned long long)d.cnps, d.pcaps.size());
}

}  // namespace
