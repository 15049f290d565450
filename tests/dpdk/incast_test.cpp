// 4:1 incast through rocelab-switch (issue: lossless classes).
//
// conf/incast-lossless-1g.yaml: five ports at 1Gbps, lossless PG 3 (DSCP 26,
// headroom from the formula), lossy PG 0. Four test-only hosts send at line
// rate into Ethernet1..4 towards the host on Ethernet0 and honour the PFC
// frames the switch sends them (library pause timer), as RoCE NICs do.
//   lossless (DSCP 26): nothing dropped anywhere, every sender sees XOFF and
//     XON, the egress stays >= 95 % busy, PG use stays within trigger + headroom,
//     and the PFC frames decode in tshark as Class Based Flow Control;
//   lossy (DSCP 8): counted drops and no PFC at all.
#include <pcap/pcap.h>

#include <cstdio>
#include <string>

#include "qos/mmu.hpp"
#include "ring_harness.hpp"
#include "rocelab_version.h"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

// The main lcore (the test's hosts) on CPU 0, the first switch worker
// (lcore 1, the one the stall probe watches) alone on CPU 1. A second worker
// (lcore 2) shares CPU 0 with the hosts: both yield it whenever they have
// nothing to do (worker_ctl::yield_when_idle; the host loop every turn).
constexpr const char* eal_lcores = "0@0,1@1,2@0";

struct incast_result {
    std::uint64_t sent = 0, received = 0, tx_fail = 0;
    std::uint64_t sent_after_xoff = 0;  // sent while an XOFF was outstanding (its pause may have expired)
    double busy = 0;
    std::array<std::uint64_t, 4> xoff{}, xon{};
    std::uint64_t switch_drops = 0, lossy_drops = 0, tail_drops = 0, headroom_overflow = 0, ethdev_missed = 0;
    std::uint64_t peak_use = 0, peak_headroom = 0, use_bound = 0;
    std::vector<std::vector<std::byte>> pfc_frames;
    std::uint64_t pfc_sent = 0;
    double max_stall_us = 0;    // the worker thread's longest time off the CPU (schedstat, sentinel), -1 if unknown
    double switch_gap_us = 0;   // the switch's own max_poll_gap_ns (printed only, not used to judge)
    double stall_budget_us = 0; // how long a stall the headroom absorbs at line rate
    double waited_share = -1;   // the worker thread's run_delay within the busy window / the window, -1 if unknown
    double host_gap_share = 0;  // the hosts' loop frozen (test::host_loop_gaps) within the busy window / the window
    double host_gap_max_us = 0; // its longest gap over 1 ms
    std::uint64_t handed_out = 0, credits_out = 0;  // several workers: frames and releases between them
};

// sentinel: run the stall probe's sentinel thread on the worker's CPU (the
// lossless judgement needs it). It wakes every 1 ms and preempts the worker
// each time: about 0.9 % of the window added to the worker's run_delay
// (measured: 1.6 % with it, 0.6-0.7 % without), so the lossy case, which
// judges by run_delay alone, runs without it.
incast_result run_incast(std::uint8_t dscp, const std::string& tag, unsigned workers = 1,
                         std::vector<unsigned> port_worker = {}, bool sentinel = true) {
    // With a second worker on the hosts' CPU, the host loop yields every turn.
    const auto host_turn = [workers] {
        if (workers > 1) { std::this_thread::yield(); }
    };
    incast_result res;
    auto cfg_r = load_switch_cfg(std::string(ROCELAB_SOURCE_DIR) + "/conf/incast-lossless-1g.yaml");
    EXPECT_TRUE(cfg_r.ok()) << (cfg_r.ok() ? "" : cfg_r.error().message);
    if (!cfg_r.ok()) { return res; }
    test::ring_testbed tb(*cfg_r, tag, workers, port_worker);
    EXPECT_TRUE(tb.pipe);
    if (!tb.pipe) { return res; }
    EXPECT_TRUE(tb.pipe->buffer_accounting());
    tb.start();
    test::worker_stall_probe probe;
    EXPECT_TRUE(probe.ok()) << "cannot read the worker thread's /proc schedstat";
    if (sentinel) {
        probe.start_sentinel();
        EXPECT_TRUE(probe.sentinel_ok()) << "cannot pin a sentinel thread to the worker's CPU";
    }

    // The receiver speaks once so the switch learns where it is.
    roce_v4_params hello;
    hello.src_mac = tb.hosts[0].mac;
    hello.dst_mac = tb.hosts[1].mac;
    hello.bth.opcode = 0x04;
    test::paced_sender rx_host(tb.pool(), tb.hosts[0].port_id, hello, 16, bits_per_sec{1'000'000});
    dpdk::tsc_clock clk = tb.clock;  // the worker's epoch
    rx_host.poll(clk.now());

    std::vector<std::unique_ptr<test::pfc_aware_sender>> senders;
    for (int i = 1; i <= 4; ++i) {
        roce_v4_params p;
        p.src_mac = tb.hosts[i].mac;
        p.dst_mac = tb.hosts[0].mac;
        p.src_ip = ipv4_addr(10, 0, 0, static_cast<std::uint8_t>(i));
        p.dst_ip = ipv4_addr(10, 0, 0, 100);
        p.dscp = dscp;
        p.sport = static_cast<std::uint16_t>(0xC000 + i);
        p.bth.opcode = 0x0A;  // RDMA WRITE ONLY
        p.bth.dest_qpn = static_cast<std::uint32_t>(0x100 + i);
        senders.push_back(std::make_unique<test::pfc_aware_sender>(tb.pool(), tb.hosts[i].port_id, p, 1024,
                                                                   bits_per_sec{1'000'000'000}, 3));
    }
    // Let the learning frame pass, then run for 2.5 s; measure over [0.5 s, 2.5 s].
    for (nanos end = clk.now() + 10_ms, now = clk.now(); now < end; now = clk.now()) {
        tb.drain(tb.hosts[0].port_id);
        host_turn();
    }
    const nanos t0 = clk.now();
    const nanos w0 = t0 + 500_ms, w1 = t0 + 2500_ms;
    std::uint64_t win_bytes = 0;
    rte_mbuf* b[64];
    probe.sample();
    nanos next_sample = clk.now() + 1_ms;
    std::int64_t waited_w0 = -1;  // the probe's total at the window's start
    // The hosts' loop (this thread: the senders and the receiver) times its
    // own turns. While its vCPU is frozen nobody sends, so the egress idles
    // once the queue has drained: the VM, not the switch.
    test::host_loop_gaps hg(w0, w1);
    for (nanos now = clk.now(); now < w1; now = clk.now()) {
        hg.turn(now);
        if (now >= next_sample || (waited_w0 < 0 && now >= w0)) {
            probe.sample();
            next_sample = now + 1_ms;
            if (waited_w0 < 0 && now >= w0) { waited_w0 = probe.total_ns; }
        }
        for (auto& s : senders) { s->poll(now); }
        host_turn();
        const std::uint16_t n = rte_eth_rx_burst(tb.hosts[0].port_id, 0, b, 64);
        for (std::uint16_t k = 0; k < n; ++k) {
            ++res.received;
            if (now >= w0) { win_bytes += rte_pktmbuf_pkt_len(b[k]) + 24; }
        }
        rte_pktmbuf_free_bulk(b, n);
    }
    probe.sample();
    if (probe.ok() && waited_w0 >= 0) { res.waited_share = double(probe.total_ns - waited_w0) / 2e9; }
    hg.finish();
    res.host_gap_share = double(hg.frozen_ns()) / 2e9;
    res.host_gap_max_us = double(hg.longest_ns) / 1e3;
    for (auto& s : senders) { s->sending = false; }
    // Drain: the switch empties its queues (senders keep reading PFC/XON).
    for (nanos end = clk.now() + 200_ms, now = clk.now(); now < end; now = clk.now()) {
        for (auto& s : senders) { s->poll(now); }
        host_turn();
        const std::uint16_t n = rte_eth_rx_burst(tb.hosts[0].port_id, 0, b, 64);
        res.received += n;
        rte_pktmbuf_free_bulk(b, n);
    }
    tb.stop();
    const auto tot = tb.pipe->poll_totals();
    std::printf("[%s] %u worker(s): loops %llu in %.2f s (%.2f us per loop), longest stall between polls %.1f us\n",
                tag.c_str(), workers, (unsigned long long)tot.loops, double((clk.now() - t0).v) / 1e9,
                double((clk.now() - t0).v) / 1e3 / double(tot.loops + 1), double(tot.max_poll_gap_ns) / 1e3);
    for (std::size_t k = 0; k < tb.pipe->worker_count() && workers > 1; ++k) {
        const sw::worker_stats ws = tb.pipe->worker_figures(k);
        std::printf("[%s] worker %zu: handed out %llu, handed in %llu, stashed %llu, credits out %llu\n", tag.c_str(),
                    k, (unsigned long long)ws.handed_out, (unsigned long long)ws.handed_in,
                    (unsigned long long)ws.stashed, (unsigned long long)ws.credits_out);
        res.handed_out += ws.handed_out;
        res.credits_out += ws.credits_out;
    }
    res.busy = double(win_bytes) * 8 / 2.0 / 1e9;
    for (int i = 0; i < 4; ++i) {
        res.sent_after_xoff += senders[i]->sent_after_xoff;
        res.sent += senders[i]->sent;
        res.tx_fail += senders[i]->tx_fail + senders[i]->alloc_fail;
        res.xoff[i] = senders[i]->xoff_rx[3];
        res.xon[i] = senders[i]->xon_rx[3];
        for (auto& f : senders[i]->pfc_frames) {
            if (res.pfc_frames.size() < 16) { res.pfc_frames.push_back(f); }
        }
    }
    for (std::size_t port = 0; port < 5; ++port) {
        const auto& c = tb.pipe->counters(port);
        const sw::pg_status g3 = tb.pipe->pg(port, 3);
        std::printf("  port %zu: rx %llu, PG3 peak headroom %llu B, XOFF transitions %llu, PFC frames sent %llu\n",
                    port, (unsigned long long)c.rx_packets, (unsigned long long)g3.peak_headroom,
                    (unsigned long long)g3.xoff_transitions, (unsigned long long)c.tx_pfc_frames);
        for (auto d : c.drops) { res.switch_drops += d; }
        res.lossy_drops += c.drops[static_cast<std::size_t>(sw::drop_reason::lossy_pg_limit)];
        res.tail_drops += c.drops[static_cast<std::size_t>(sw::drop_reason::tail_drop)];
        res.headroom_overflow += c.drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)];
        res.pfc_sent += c.tx_pfc_frames;
        rte_eth_stats es{};
        rte_eth_stats_get(tb.pipe->binding(port).port_id, &es);
        res.ethdev_missed += es.imissed + es.rx_nombuf + es.ierrors;
        if (port >= 1) {
            const sw::pg_status pg = tb.pipe->pg(port, 3);
            res.peak_use = std::max(res.peak_use, pg.peak_use);
            res.peak_headroom = std::max(res.peak_headroom, pg.peak_headroom);
        }
    }
    // Upper bound for a PG's use: reserved + the largest possible dynamic
    // threshold (alpha x the whole shared pool) + its xoff headroom.
    const auto& pgc = cfg_r->ports[1].pgs[3];
    const std::uint64_t shared = tb.pipe->pool_shared_size();
    const std::uint64_t max_th = pgc.dynamic_th >= 0 ? shared << pgc.dynamic_th : shared >> -pgc.dynamic_th;
    res.use_bound = pgc.reserved.v + max_th + pgc.xoff.v;
    // While the worker does not poll, a line-rate sender keeps filling the RX
    // ring; the headroom (less two RX bursts) covers this long a stall.
    probe.stop_sentinel();
    const double wake_late_us = double(probe.max_wake_late_ns.load()) / 1e3;
    // Both measures are outside the switch: the kernel's run_delay and the
    // sentinel's late wake-ups on the worker's CPU (host stalls run_delay misses).
    res.max_stall_us = probe.ok() && probe.sentinel_ok() ? std::max(double(probe.max_stall_ns) / 1e3, wake_late_us)
                                                         : -1;
    res.switch_gap_us = double(tot.max_poll_gap_ns) / 1e3;
    char sentinel_says[96];
    if (sentinel) {
        std::snprintf(sentinel_says, sizeof sentinel_says, "a sentinel on its CPU woke up to %.1f us late", wake_late_us);
    } else {
        std::snprintf(sentinel_says, sizeof sentinel_says, "no sentinel thread (this case is not judged on stalls)");
    }
    std::printf("[%s] worker thread's longest wait for a CPU (kernel schedstat, sampled every 1 ms) %.1f us; "
                "%s; headroom absorbs %.1f us at 1Gbps; switch's own "
                "max_poll_gap %.1f us (not used to judge)\n",
                tag.c_str(), double(probe.max_stall_ns) / 1e3, sentinel_says,
                double(pgc.xoff.v - 2 * 32 * 1518) / 125e6 * 1e6, res.switch_gap_us);
    res.stall_budget_us = (double(pgc.xoff.v) - 2.0 * 32 * 1518) / 125e6 * 1e6;
    std::printf("[%s] sent %llu received %llu, egress busy %.1f%%, XOFF/XON per sender %llu/%llu %llu/%llu "
                "%llu/%llu %llu/%llu, PFC frames sent %llu, peak PG use %llu B (bound %llu, xoff %llu, peak "
                "headroom %llu), drops %llu (lossy %llu, headroom overflow %llu)\n",
                tag.c_str(), (unsigned long long)res.sent, (unsigned long long)res.received, res.busy * 100,
                (unsigned long long)res.xoff[0], (unsigned long long)res.xon[0], (unsigned long long)res.xoff[1],
                (unsigned long long)res.xon[1], (unsigned long long)res.xoff[2], (unsigned long long)res.xon[2],
                (unsigned long long)res.xoff[3], (unsigned long long)res.xon[3], (unsigned long long)res.pfc_sent,
                (unsigned long long)res.peak_use, (unsigned long long)res.use_bound,
                (unsigned long long)pgc.xoff.v, (unsigned long long)res.peak_headroom,
                (unsigned long long)res.switch_drops, (unsigned long long)res.lossy_drops,
                (unsigned long long)res.headroom_overflow);
    // Every byte admitted was released again: with whatever is still queued
    // flushed, no PG holds buffer and the shared pool is empty.
    tb.pipe->release_all();
    for (std::size_t port = 0; port < 5; ++port) {
        for (int g = 0; g < 8; ++g) { EXPECT_EQ(tb.pipe->pg(port, g).use, 0u) << "port " << port << " PG " << g; }
    }
    EXPECT_EQ(tb.pipe->pool_shared_used(), 0u);
    return res;
}

void judge_lossless(const incast_result& r) {
    // Judged only where judging is sound: while the worker thread waits for a
    // CPU, line-rate senders keep filling its RX rings with frames no PG has
    // been charged for; beyond what the headroom absorbs a drop is the
    // machine's, not the switch's. The decision uses measures taken outside
    // the switch - the kernel's run_delay and a sentinel thread's late
    // wake-ups on the worker's CPU - never the switch's own counters.
    ASSERT_GE(r.max_stall_us, 0) << "no independent stall measurement";
    if (r.max_stall_us > r.stall_budget_us) {
        GTEST_SKIP() << "the worker thread was off the CPU for " << r.max_stall_us
                     << " us (schedstat run_delay, or a sentinel on its CPU waking late), longer than the "
                     << r.stall_budget_us
                     << " us the configured headroom absorbs at 1Gbps: the machine is too busy to judge a "
                     << "lossless result (drops " << r.switch_drops << ")";
    }
    // The test senders honour XOFF. (Checked only here: when the worker
    // stalls longer than half the pause time its refresh comes late, the
    // senders' 65535-quanta pause legitimately expires and they send while
    // the XOFF is still outstanding.)
    EXPECT_EQ(r.sent_after_xoff, 0u) << "the test sender must honour XOFF";
    EXPECT_GT(r.sent, 200000u);
    EXPECT_EQ(r.tx_fail, 0u);
    EXPECT_EQ(r.switch_drops, 0u);
    EXPECT_EQ(r.ethdev_missed, 0u);
    EXPECT_EQ(r.received, r.sent) << "every frame sent reached the receiver";
    for (int i = 0; i < 4; ++i) {
        EXPECT_GT(r.xoff[i], 0u) << "sender " << i << " got no XOFF";
        EXPECT_GT(r.xon[i], 0u) << "sender " << i << " got no XON";
    }
    // The egress must stay busy (no pausing forever), less the time the
    // hosts' vCPU was frozen (nobody sent; docs/testing.md, "A host that
    // freezes its VM": 100 ms at a time).
    std::printf("egress busy %.2f %%, hosts' vCPU frozen %.2f %% of the window (longest gap %.1f ms): bound %.2f %%\n",
                100 * r.busy, 100 * r.host_gap_share, r.host_gap_max_us / 1e3, 95 * (1 - r.host_gap_share));
    EXPECT_GE(r.busy, 0.95 * (1 - r.host_gap_share))
        << "the egress must stay busy (no pausing forever) while the hosts send";
    EXPECT_LE(r.peak_use, r.use_bound);
    EXPECT_EQ(r.headroom_overflow, 0u);

    // The PFC frames decode in tshark as Class Based Flow Control on priority 3.
    ASSERT_FALSE(r.pfc_frames.empty());
    const std::string path = "/tmp/rocelab-incast-pfc-" + std::to_string(::getpid()) + ".pcap";
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* dump = pcap_dump_open(dead, path.c_str());
    ASSERT_NE(dump, nullptr);
    for (const auto& f : r.pfc_frames) {
        pcap_pkthdr h{};
        h.caplen = h.len = static_cast<bpf_u_int32>(f.size());
        pcap_dump(reinterpret_cast<u_char*>(dump), &h, reinterpret_cast<const u_char*>(f.data()));
    }
    pcap_dump_close(dump);
    pcap_close(dead);
    const std::string cmd = "tshark -r " + path +
                            " -T fields -e macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 -e _ws.expert 2>/dev/null";
    std::FILE* f = ::popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char line[512];
    int xoff = 0, xon = 0, lines = 0;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        ++lines;
        const std::string l(line);
        EXPECT_EQ(l.find("0x0101"), 0u) << l;                   // CBFC pause opcode
        EXPECT_NE(l.find("\t0x0008\t"), std::string::npos) << l;  // class-enable vector: priority 3
        if (l.find("\t65535") != std::string::npos) { ++xoff; }
        if (l.find("\t0\t") != std::string::npos || l.find("\t0\n") != std::string::npos) { ++xon; }
    }
    ::pclose(f);
    std::remove(path.c_str());
    EXPECT_EQ(lines, static_cast<int>(r.pfc_frames.size()));
    EXPECT_GT(xoff, 0);
    EXPECT_GT(xon, 0);
}

// A run the machine stalled longer than the headroom covers cannot be
// judged (judge_lossless skips it); such a run is repeated, up to 3 runs in
// all, and the first one that was not stalled is judged in full. A run that
// was not stalled is never repeated, whatever its result.
incast_result unstalled_incast(const std::string& tag, unsigned workers = 1, std::vector<unsigned> port_worker = {}) {
    incast_result r;
    for (int attempt = 1; attempt <= 3; ++attempt) {
        // A fresh tag per run: the net_ring devices and rings are named after it.
        r = run_incast(26, tag + (attempt > 1 ? std::to_string(attempt) : ""), workers, port_worker);
        if (r.max_stall_us >= 0 && r.max_stall_us <= r.stall_budget_us) { break; }
        std::printf("[%s] run %d stalled %.0f us > %.0f us: not judged%s\n", tag.c_str(), attempt, r.max_stall_us,
                    r.stall_budget_us, attempt < 3 ? ", running again" : "");
    }
    return r;
}

TEST(incast, lossless_4_to_1_drops_nothing_and_pauses_every_sender) {
    test::init_eal_once("incast", eal_lcores);
    judge_lossless(unstalled_incast("ll"));
}

// The same incast with two switch workers: the four senders' ports (their
// RX and ingress accounting, the XOFF/XON they get) on worker 0, the
// receiver's egress on worker 1. Every data frame crosses the handoff queue
// and every buffer release comes back as a credit; nothing may be dropped.
TEST(incast, lossless_4_to_1_across_two_workers_drops_nothing) {
    test::init_eal_once("incast", eal_lcores);
    const incast_result r = unstalled_incast("llw", 2, {1, 0, 0, 0, 0});
    if (r.sent > 0) {
        EXPECT_GE(r.handed_out, r.received) << "every frame to the receiver crossed workers";
        EXPECT_GT(r.credits_out, 0u) << "buffer releases went back to the ingress worker";
    }
    judge_lossless(r);
}

TEST(incast, lossy_4_to_1_counts_drops_and_sends_no_pfc) {
    test::init_eal_once("incast", eal_lcores);
    // The egress must stay >= 95 % busy, less the share of the window the
    // kernel kept the switch's worker off its CPU (its run_delay: the link
    // idles meanwhile; the shaper's 16 KiB burst cannot make it up), as in
    // wire_rate_test, and less the time the hosts' vCPU was frozen (their
    // loop's gaps over 1 ms less its run_delay: nobody sent). The worker's
    // allowance is capped: a run whose worker waited
    // more than 2 % of the window is not judged and is run again, and after
    // 3 such runs the busy bound is skipped (the counts are judged in every
    // run). Two CI runs measured 94.96 % and 94.94 % with no allowance.
    // No sentinel thread here (run_incast's last argument): it preempted
    // the worker every 1 ms and was most of the waiting (1.4-1.6 % with it,
    // 0.6-0.8 % without, quiet machine); under CI's load that went past 2 %
    // in all 3 runs.
    std::string shares;
    for (int attempt = 1; attempt <= 3; ++attempt) {
        const incast_result r = run_incast(8, attempt == 1 ? "ly" : "ly" + std::to_string(attempt), 1, {}, false);
        // Counted drops (tail drop at the egress or the lossy PG's shared limit), no PFC.
        EXPECT_GT(r.switch_drops, 1000u);
        EXPECT_EQ(r.switch_drops, r.tail_drops + r.lossy_drops);
        EXPECT_EQ(r.pfc_sent, 0u);
        for (int i = 0; i < 4; ++i) { EXPECT_EQ(r.xoff[i], 0u); }
        EXPECT_EQ(r.received + r.switch_drops, r.sent);
        ASSERT_GE(r.waited_share, 0.0) << "cannot read the worker thread's run_delay";
        const bool judged = r.waited_share <= 0.02;
        // Less, too, the time the hosts' vCPU was frozen (nobody sent).
        const double off = r.waited_share + r.host_gap_share;
        std::printf("[ly] egress busy %.2f %%, worker waited %.2f %% of the window, hosts' vCPU frozen %.2f %%: "
                    "bound %.2f %%%s\n",
                    100 * r.busy, 100 * r.waited_share, 100 * r.host_gap_share, 95 * (1 - off),
                    judged ? "" : ": waited more than 2 %, not judged");
        if (judged) {
            EXPECT_GE(r.busy, 0.95 * (1 - off)) << "the egress idled longer than the worker waited or the hosts were frozen";
            return;
        }
        shares += (shares.empty() ? "" : ", ") + std::to_string(100 * r.waited_share) + " %";
    }
    GTEST_SKIP() << "the switch's worker waited for a CPU " << shares << " of the window in each of 3 runs (judged "
                 << "only up to 2 %): too busy to hold the egress to 95 % busy";
}

}  // namespace
