// Shaping rate and DWRR weights measured at the receiver (issue: hostile
// input and honest tests). Nothing here reads the shaper's or the
// scheduler's own state: the host thread stamps every frame it receives
// from the shaped egress (clock read after rx_burst returns, so never
// earlier than the arrival) and counts wire bytes as pkt_len + 24 (FCS,
// preamble, inter-frame gap), as a 1 Gbps wire would carry them.
//
// Rate window: from the first to the last arrival in [0.5 s, 2.5 s] whose
// stamp follows the previous arrival by less than two 1542 B frame times
// (so the host was polling and the stamp is within ~25 us of the arrival):
// the rate is the bytes of the arrivals after the first, divided by the
// time between the two stamps. Stamp error over a ~2 s window: ~2.5e-5.
//
// The switch's worker shares a 2-core machine: while the kernel keeps it
// off the CPU the link idles (the shaper's 16 KiB burst cannot make up a
// millisecond). The kernel's account of that waiting (schedstat run_delay,
// test::worker_stall_probe) gives the lowest rate the switch can be held to:
// R x (1 - waited / window) - 1 %, less the share of the window the host
// thread's vCPU was frozen (its loop's gaps over 1 ms less its own
// run_delay, test::host_loop_gaps; docs/testing.md, "A host that freezes
// its VM"). In a VM the worker also loses the CPU to
// timer ticks and interrupts (tens of microseconds every few milliseconds)
// that run_delay does not see; the switch counts those itself as stalls
// (stalled_ns). They are printed but not allowed for: the switch's own
// counter must not excuse its rate, and a stall shorter than the bucket's
// 131 us at 1 Gbps costs nothing (measured: 71 ms of counted stalls in a 2 s
// window with 7.8 ms of run_delay, rate 0.9939 Gbps); the 1 % covers the
// few that are longer. The allowance is capped: a run whose worker waited
// more than 2 % of the window is not judged and is run again, and so is a
// run whose worker's vCPU the hypervisor froze (a sentinel thread on its
// CPU, asleep 10 ms at a time, woke more than 20 ms late:
// worker_stall_probe::froze); after
// 3 such runs the test skips (kLostCap below). The upper bound needs no
// allowance.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ring_harness.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

struct arrival {
    nanos at;
    std::uint32_t wire;  // pkt_len + 24
    int dscp;
};

struct measured {
    double seconds = 0;
    double rate_bps = 0;
    std::array<double, 64> bytes_by_dscp{};        // wire bytes (pkt_len + 24)
    std::array<double, 64> frame_bytes_by_dscp{};  // frame bytes as the scheduler counts them (pkt_len)
    double waited_s = 0;   // worker's wait for a CPU during the window (kernel)
    double max_wait_s = 0;
    double stalled_s = 0;  // the switch's own count of its stalls during the window
    double host_gap_s = 0; // the host thread's vCPU frozen within [w0, w1] (test::host_loop_gaps)
    std::int64_t frozen_ns = -1;  // a sentinel's latest wake-up on the worker's CPU (10 ms sleeps), -1 if none ran
    double lost_s() const { return waited_s; }  // the kernel's count only (above)
};

// Runs senders into port 0 and measures what the host on port 1 receives.
template <typename Senders>
measured run_and_measure(test::ring_testbed& tb, Senders& senders, nanos run) {
    dpdk::tsc_clock clk = tb.clock;  // the worker's epoch
    test::worker_stall_probe probe;
    EXPECT_TRUE(probe.ok()) << "cannot read the worker thread's /proc schedstat";
    probe.start_sentinel(test::worker_stall_probe::freeze_period);
    EXPECT_TRUE(probe.sentinel_ok()) << "cannot pin a sentinel thread to the worker's CPU";
    std::vector<arrival> arr;
    arr.reserve(1u << 21);
    const nanos t0 = clk.now(), w0 = t0 + 500_ms, w1 = t0 + run - 500_ms, end = t0 + run;
    rte_mbuf* b[64];
    nanos next_sample = w0;
    bool probing = false;
    std::int64_t stalled0 = 0, stalled1 = 0;
    // The host thread (sender and receiver) times its own turns: while its
    // vCPU is frozen nothing is sent and nothing is taken off the
    // receiver's ring, which fills and stops the egress.
    test::host_loop_gaps hg(w0, w1);
    for (nanos now = clk.now(); now < end; now = clk.now()) {
        hg.turn(now);
        if (now >= next_sample && now < w1 + 1_ms) {
            if (!probing) {
                probe.reset();
                stalled0 = __atomic_load_n(&tb.pipe->stalled_ns, __ATOMIC_RELAXED);
                probing = true;
            } else {
                probe.sample();
            }
            stalled1 = __atomic_load_n(&tb.pipe->stalled_ns, __ATOMIC_RELAXED);
            next_sample = now + 1_ms;
        }
        for (auto& s : senders) { s->poll(now); }
        const std::uint16_t n = rte_eth_rx_burst(tb.hosts[1].port_id, 0, b, 64);
        if (n == 0) { continue; }
        const nanos at = clk.now();
        for (std::uint16_t i = 0; i < n; ++i) {
            const auto* d = rte_pktmbuf_mtod(b[i], const std::uint8_t*);
            arr.push_back({at, rte_pktmbuf_pkt_len(b[i]) + 24, d[15] >> 2});
        }
        rte_pktmbuf_free_bulk(b, n);
    }
    probe.stop_sentinel();
    measured m;
    m.frozen_ns = probe.sentinel_ok() ? probe.max_wake_late_ns.load() : -1;
    m.waited_s = double(probe.total_ns) / 1e9;
    m.max_wait_s = double(probe.max_stall_ns) / 1e9;
    m.stalled_s = double(stalled1 - stalled0) / 1e9;
    hg.finish();
    m.host_gap_s = double(hg.frozen_ns()) / 1e9;
    const nanos close{2 * 1542 * 8};  // two full-size frames at 1 Gbps
    auto good = [&](std::size_t i) { return i > 0 && arr[i].at - arr[i - 1].at < close && arr[i - 1].at < arr[i].at; };
    std::size_t first = 0, last = 0;
    for (std::size_t i = 1; i < arr.size(); ++i) {
        if (arr[i].at < w0 || !good(i)) { continue; }
        first = i;
        break;
    }
    for (std::size_t i = arr.size(); i-- > first + 1;) {
        if (arr[i].at > w1 || !good(i)) { continue; }
        last = i;
        break;
    }
    EXPECT_GT(last, first + 1000) << "too few arrivals to measure";
    if (last <= first) { return m; }
    // Frames after `first` up to and including `last` arrived in (t_first, t_last].
    // Stamps are per burst: count whole bursts, i.e. everything stamped in
    // (t_first, t_last].
    for (std::size_t i = first + 1; i < arr.size() && arr[i].at <= arr[last].at; ++i) {
        if (arr[i].at <= arr[first].at) { continue; }
        m.bytes_by_dscp[arr[i].dscp] += arr[i].wire;
        m.frame_bytes_by_dscp[arr[i].dscp] += arr[i].wire - 24;
    }
    m.seconds = double((arr[last].at - arr[first].at).v) / 1e9;
    double total = 0;
    for (double v : m.bytes_by_dscp) { total += v; }
    m.rate_bps = total * 8 / m.seconds;
    return m;
}

switch_cfg two_ports_1g() {
    switch_cfg cfg = default_switch_cfg();
    port_cfg p0 = default_port_cfg();
    p0.name = "Ethernet0";
    port_cfg p1 = default_port_cfg();
    p1.name = "Ethernet1";
    p1.speed = 1_Gbps;
    cfg.ports = {p0, p1};
    test::without_buffers_and_wred(cfg);  // scheduling and shaping only
    return cfg;
}

roce_v4_params flow(const test::ring_testbed& tb, std::uint8_t dscp) {
    roce_v4_params p;
    p.src_mac = tb.hosts[0].mac;
    p.dst_mac = tb.hosts[1].mac;
    p.src_ip = ipv4_addr(10, 0, 0, 1);
    p.dst_ip = ipv4_addr(10, 0, 1, 1);
    p.dscp = dscp;
    p.bth.opcode = 0x04;
    p.bth.dest_qpn = 0x20 + dscp;
    return p;
}

struct shaped_run {
    measured m;
    std::uint32_t depth_end = 0;
    std::uint64_t drops = 0;
    unsigned pool_in_use = 0;
};

shaped_run run_shaped(const std::string& tag) {
    shaped_run r;
    switch_cfg cfg = two_ports_1g();
    // 3 Gbps offered into a port shaped to 1 Gbps, through an 8 MiB queue
    // (67 ms at 1 Gbps): the egress stays backlogged through the host
    // thread's own stalls (it is the sender too).
    cfg.ports[1].limits[0] = queue_limits{bytes{8 * 1024 * 1024}, 8192};
    test::ring_testbed tb(cfg, tag);
    EXPECT_TRUE(tb.pipe);
    if (!tb.pipe) { return r; }
    tb.start();
    std::vector<std::unique_ptr<test::paced_sender>> s;
    s.push_back(std::make_unique<test::paced_sender>(tb.pool(), tb.hosts[0].port_id, flow(tb, 8), 1000,
                                                     bits_per_sec{3'000'000'000}));
    // Let the learning frame of host 1 not matter: the destination floods to port 1 only (2 ports).
    r.m = run_and_measure(tb, s, 3_s);
    r.depth_end = tb.pipe->queue(1, 0).depth_packets;
    tb.stop();
    r.drops = tb.pipe->queue(1, 0).drop_packets;
    tb.drain(tb.hosts[1].port_id);
    tb.pipe->release_all();
    tb.drain(tb.hosts[1].port_id);
    tb.drain(tb.hosts[0].port_id);
    tb.drain_switch_rx();
    r.pool_in_use = tb.pool_in_use();
    return r;
}

// The lower bound R (1 - waited / window) widens with the time the worker waited,
// so it is only used while that is small: a run whose worker lost more than
// kLostCap of the window is not judged on it and is run again, up to 3 runs;
// the first run within the cap is judged (never repeated, whatever its
// result). When all 3 lost more, the test SKIPs with the measured shares.
// The upper bound and the backlog are asserted on every run.
constexpr double kLostCap = 0.02;
// A worker whose vCPU the hypervisor froze (worker_stall_probe::froze: the
// sentinel woke more than 20 ms late; run_delay does not see it) idled the
// line for that long: such a run is not judged on the lower bound either, and
// runs again.

TEST(wire, shaped_rate_at_the_receiver_is_the_configured_rate) {
    test::init_eal_once("wirerate");
    const double R = 1e9;
    std::string lost_shares;
    for (int attempt = 1; attempt <= 3; ++attempt) {
        const shaped_run r = run_shaped(attempt == 1 ? "shp" : "shp" + std::to_string(attempt));
        const measured& m = r.m;
        ASSERT_GT(m.seconds, 1.0) << "no rate window";
        const double lost_share = m.lost_s() / m.seconds;
        // Less, too, the time the host thread's vCPU was frozen (docs/testing.md,
        // "A host that freezes its VM"): the egress may idle that long, whatever
        // the switch does.
        const double host_share = m.host_gap_s / m.seconds;
        const double low = R * (1 - lost_share - host_share) * 0.99;
        ASSERT_GE(m.frozen_ns, 0) << "no sentinel on the worker's CPU";
        const bool frozen = test::worker_stall_probe::froze(m.frozen_ns);
        const bool judged = lost_share <= kLostCap && !frozen;
        std::printf("run %d: receiver-side rate %.6f Gbps over %.3f s (configured 1 Gbps); worker waited %.1f ms for a "
                    "CPU (longest %.1f ms; %.2f %% of the window), stalled %.1f ms (not allowed for); the host thread's "
                    "vCPU was frozen %.1f ms; a sentinel on the worker's CPU woke up to %.1f ms late: lower bound "
                    "%.6f Gbps, upper %.6f Gbps%s%s\n",
                    attempt, m.rate_bps / 1e9, m.seconds, m.waited_s * 1e3, m.max_wait_s * 1e3, 100 * lost_share,
                    m.stalled_s * 1e3, m.host_gap_s * 1e3, double(m.frozen_ns) / 1e6, low / 1e9, R * 1.01 / 1e9,
                    judged ? "" : frozen ? ": the worker's vCPU froze, not judged" : ": waited more than 2 %, not judged",
                    judged || attempt == 3 ? "" : ", running again");
        EXPECT_LE(m.rate_bps, R * 1.01) << "the shaper let more than the configured rate onto the wire";
        EXPECT_GT(r.depth_end, 0u) << "the egress queue ran empty: not backlogged";
        EXPECT_GT(r.drops, 0u) << "the egress was not backlogged";
        EXPECT_EQ(r.pool_in_use, 0u);
        if (judged) {
            EXPECT_GE(m.rate_bps, low)
                << "the egress idled for longer than the worker was kept off the CPU or the host thread frozen";
            return;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.1f %%%s", lost_shares.empty() ? "" : ", ", 100 * lost_share,
                      frozen ? " (frozen)" : "");
        lost_shares += buf;
    }
    GTEST_SKIP() << "the switch's worker waited for a CPU " << lost_shares << " of the rate window in each of 3 "
                 << "runs (judged only up to 2 % and unfrozen): too busy to hold the shaped rate to a lower bound";
}

// DWRR 5:2:1 on queues 0, 1, 2 of a 1 Gbps egress, each offered more than
// its share (2.0, 1.0, 0.6 Gbps for shares 0.625, 0.25, 0.125), with
// different frame sizes (1078, 478, 1478 B on the wire: DWRR shares bytes,
// not frames). Deep queues (4 MiB, 4096 frames: >= 15 ms of each share)
// keep each backlogged through the host thread's own stalls (it sends
// too). Expected byte shares 5/8, 2/8, 1/8 of the frame bytes (pkt_len,
// what the scheduler charges: DWRR weights frame bytes, while the shaper
// charges wire bytes, len + 24). In wire bytes the small-frame queue gets
// relatively more (24 B more per frame): 5 x 1.0228 : 2 x 1.0529 : 1 x 1.0165,
// i.e. 0.6209 : 0.2557 : 0.1234, printed but not asserted.
//
// Tolerance: DWRR serves each backlogged queue w x 1152 B per round, give or
// take one frame of deficit carried over; over the window the error is at
// most a round (9216 B) plus a frame (1454 B) per queue, 4e-4 of the
// smallest share (queue 2: >= 15 MB in 2 s even at half rate). The stamp
// error is ~2.5e-5. So +-0.2 % (relative) of each share is 5x the bound
// (measured: within 0.005 %), and a scheduler that ignored weights (1/3
// each), served by frames (5:2:1 in frames = 0.68:0.12:0.20 of bytes here)
// or by wire bytes (0.6209 : 0.2557 : 0.1234) fails.
TEST(wire, dwrr_5_2_1_byte_shares_at_the_receiver) {
    test::init_eal_once("wirerate");
    switch_cfg cfg = two_ports_1g();
    cfg.ports[1].sched.queues[0] = {sched_type::dwrr, 5};
    cfg.ports[1].sched.queues[1] = {sched_type::dwrr, 2};
    cfg.ports[1].sched.queues[2] = {sched_type::dwrr, 1};
    for (int q = 0; q < 3; ++q) { cfg.ports[1].limits[q] = queue_limits{bytes{4 * 1024 * 1024}, 4096}; }
    test::ring_testbed tb(cfg, "dwrr");
    ASSERT_TRUE(tb.pipe);
    tb.start();
    // DSCP 8 -> TC 0, DSCP 0 -> TC 1, DSCP 5 -> TC 2 (AZURE maps); TC = queue.
    const std::array<std::uint8_t, 3> dscp{8, 0, 5};
    const std::array<std::uint32_t, 3> payload{1000, 400, 1400};
    const std::array<std::uint64_t, 3> offered{2'000'000'000, 1'000'000'000, 600'000'000};
    const std::array<double, 3> share{5.0 / 8, 2.0 / 8, 1.0 / 8};
    std::vector<std::unique_ptr<test::paced_sender>> s;
    for (int i = 0; i < 3; ++i) {
        s.push_back(std::make_unique<test::paced_sender>(tb.pool(), tb.hosts[0].port_id, flow(tb, dscp[i]),
                                                         payload[i], bits_per_sec{offered[i]}));
    }
    const measured m = run_and_measure(tb, s, 3_s);
    std::array<std::uint32_t, 3> depth_end{};
    for (int i = 0; i < 3; ++i) { depth_end[i] = tb.pipe->queue(1, i).depth_packets; }
    tb.stop();
    double total = 0, wire_total = 0, all = 0;
    for (int i = 0; i < 3; ++i) {
        total += m.frame_bytes_by_dscp[dscp[i]];
        wire_total += m.bytes_by_dscp[dscp[i]];
    }
    for (double v : m.frame_bytes_by_dscp) { all += v; }
    ASSERT_GT(total, 0);
    EXPECT_EQ(total, all) << "frames of another class reached the receiver";
    for (int i = 0; i < 3; ++i) {
        const double got = m.frame_bytes_by_dscp[dscp[i]] / total;
        std::printf("queue %d (weight %d, %u B frames): frame-byte share %.5f, expected %.5f (%+.3f %%); wire-byte "
                    "share %.5f; %.1f Mbps on the wire\n", i, i == 0 ? 5 : i == 1 ? 2 : 1,
                    s[i]->frame_len(), got, share[i], (got / share[i] - 1) * 100,
                    m.bytes_by_dscp[dscp[i]] / wire_total, m.bytes_by_dscp[dscp[i]] * 8 / m.seconds / 1e6);
        EXPECT_NEAR(got, share[i], 0.002 * share[i]) << "queue " << i;
        EXPECT_GT(depth_end[i], 0u) << "queue " << i << " ran empty: not backlogged";
    }
    std::printf("total %.6f Gbps over %.3f s; worker waited %.1f ms\n", m.rate_bps / 1e9, m.seconds, m.waited_s * 1e3);
    EXPECT_LE(m.rate_bps, 1e9 * 1.01);
    tb.drain(tb.hosts[1].port_id);
    tb.pipe->release_all();
    tb.drain(tb.hosts[1].port_id);
    tb.drain(tb.hosts[0].port_id);
    tb.drain_switch_rx();
    EXPECT_EQ(tb.pool_in_use(), 0u);
}

}  // namespace
