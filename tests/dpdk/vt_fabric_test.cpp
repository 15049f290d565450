// Virtual time (issue 13): the switch and generator pipelines, unchanged,
// as nodes of the deterministic engine (pipelines/vt/fabric.hpp), judged
// from wire captures in fabric time and from the reference's formulas:
//
//   - PFC: an XOFF of Q quanta holds TC 3 for exactly Q x 512 bit times at
//     100 Gb/s; TC 3 leaves again the nanosecond the quanta expire;
//   - shaping: a port shaped to 40 Gb/s on a 100 Gb/s cable sends its
//     frames exactly (len + 24) x 8 / 40e9 s apart (to the clock's 1 ns);
//   - an 8:1 lossless incast at 100 Gb/s for 10 ms of fabric time: no drop
//     anywhere, the receiver's port >= 99 % busy, every PG within its
//     threshold plus headroom;
//   - determinism: two runs give byte-identical captures and counters.
// Strict priority + shaping, the PFC watchdog and the same transfer in real
// time and virtual time are in vt_timing_test.cpp.
// Nothing here has a tolerance for machine load: fabric time is exact.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/gen_config.hpp"
#include "config/switch_config.hpp"
#include "core/wire_time.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "vt/fabric.hpp"
#include "vt_harness.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

using namespace rocelab::test;
void init_eal() { init_vt_eal("vtfabric"); }

std::string ports_yaml(int n, const std::string& speed, const std::string& extra = "") {
    std::string s = "PORT:\n";
    for (int i = 0; i < n; ++i) {
        s += "  Ethernet" + std::to_string(i) + ": {port_id: " + std::to_string(i) + ", speed: " + speed + "}\n";
    }
    return s + extra;
}

std::string tmpdir(const std::string& tag) {
    std::string d = "/tmp/rocelab-vt-" + tag + "-" + std::to_string(::getpid());
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

constexpr bits_per_sec g100{100'000'000'000ULL};
const vt::cable_cfg cable100{.rate = g100, .prop_delay = 25_ns};  // 5 m (SONiC's default CABLE_LENGTH)

// ---------------------------------------------------------------------------

TEST(vt_fabric, pfc_xoff_holds_tc3_for_exactly_q_x_512_bit_times_at_100g) {
    init_eal();
    pool_guard pool(65536, "vt_pfc");
    ASSERT_NE(pool.mp, nullptr);
    const std::string dir = tmpdir("pfc");
    constexpr int quanta = 4000;  // 4000 x 512 bit / 100 Gb/s = 20480 ns
    {
        vt::fabric f;
        const auto leaf = f.add_switch("leaf", sw_cfg(ports_yaml(2, "100Gbps", "BUFFER_POOL: {}\nWRED_PROFILE: {}\n")));
        const auto hosts = f.add_gen("hosts", g_cfg("seed: 1\npattern: incast\nsenders: 1\nmsg_size: 64KiB\n"
                                                    "pmtu: 1024\ndcqcn: off\n"
                                                    "pfc_tx:\n  - port=1,prio=3,quanta=4000,count=1,start=200us\n"));
        f.connect(hosts, 0, leaf, 0, cable100);
        f.connect(hosts, 1, leaf, 1, cable100);
        ASSERT_EQ(f.build(pool.mp), "");
        ASSERT_EQ(f.capture_to(dir, 64), "");
        f.run_until(400_us);
        EXPECT_EQ(f.spins(), 0u);
        EXPECT_EQ(switch_drops(f.switch_at(leaf)), 0u);
        EXPECT_EQ(f.switch_at(leaf).counters(1).rx_pfc_prio[3], 1u);
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u) << "every mbuf back in the pool";

    // The XOFF as the switch's port received it (its last bit), from the wire.
    const auto rx = read_pcap(dir + "/leaf-Ethernet1-rx.pcap");
    std::int64_t t_xoff = -1;
    for (const auto& r : rx) {
        if (r.pfc()) {
            ASSERT_EQ(t_xoff, -1) << "one XOFF";
            t_xoff = r.ns;
            ASSERT_GE(r.b.size(), 20u);
            EXPECT_EQ((r.b[16] << 8 | r.b[17]), 0x0008) << "class-enable vector: priority 3";
        }
    }
    ASSERT_GT(t_xoff, 0);
    const std::int64_t pause = std::int64_t(quanta) * 512 * 1'000'000'000 / std::int64_t(g100.v);
    ASSERT_EQ(pause, 20480);
    const std::int64_t t_resume = t_xoff + pause;

    // TC 3 (DSCP 26) departures out of Ethernet1.
    const auto tx = read_pcap(dir + "/leaf-Ethernet1-tx.pcap");
    std::vector<const rec*> tc3;
    for (const auto& r : tx) {
        if (r.dscp() == 26) { tc3.push_back(&r); }
    }
    ASSERT_GT(tc3.size(), 500u);
    // Before the XOFF the class flowed (TC 3 frames departed in the 20 us before it).
    std::size_t k = 0;
    while (k < tc3.size() && tc3[k]->ns <= t_xoff) { ++k; }
    ASSERT_GT(k, 100u);
    ASSERT_LT(k, tc3.size());
    ASSERT_GE(tc3[k - 1]->ns, t_xoff - 200);
    // After it, only frames already handed to the TX ring leave: the port's
    // shaper lets at most its 16 KiB burst + one frame run ahead of the wire.
    std::size_t after = k;
    while (after < tc3.size() && tc3[after]->ns < t_resume) { ++after; }
    ASSERT_LT(after, tc3.size()) << "TC 3 must resume";
    if (after > k) {
        EXPECT_LE(tc3[after - 1]->ns, t_xoff + wire_ns_ceil(16 * 1024 + 2 * 1100, g100))
            << "a frame dequeued during the pause";
    }
    // The first frame dequeued when the quanta expire leaves the idle line
    // exactly one wire time after t_resume.
    const rec& first = *tc3[after];
    EXPECT_EQ(first.ns, t_resume + wire_ns_ceil(first.len, g100))
        << "XOFF at " << t_xoff << " ns, pause " << pause << " ns: TC 3 resumed " << first.ns - t_xoff << " ns later";
    std::printf("[vt pfc] XOFF(quanta %d) arrived at %lld ns; last TC3 departure before the gap %lld ns, first after "
                "%lld ns = XOFF + %lld ns (pause %lld + wire %lld)\n",
                quanta, (long long)t_xoff, (long long)(after > k ? tc3[after - 1]->ns : tc3[k - 1]->ns),
                (long long)first.ns, (long long)(first.ns - t_xoff), (long long)pause,
                (long long)wire_ns_ceil(first.len, g100));
    std::filesystem::remove_all(dir);
}

// The fabric holds its pipelines behind one node interface (vt/node.hpp):
// a switch is one unit, a generator one unit (engine node) per host; the
// ports are the pipeline's bindings under the fabric's names; visit() gives
// the typed pipeline, the same object switch_at()/gen_at() return; and
// release() returns every mbuf.
TEST(vt_fabric, pipelines_are_nodes_a_generator_one_unit_per_host) {
    init_eal();
    pool_guard pool(65536, "vt_node");
    ASSERT_NE(pool.mp, nullptr);
    {
        vt::fabric f;
        const auto leaf = f.add_switch("leaf", sw_cfg(ports_yaml(4, "100Gbps")));
        const auto hosts = f.add_gen("hosts", g_cfg("seed: 1\npattern: incast\nsenders: 3\nmsg_size: 64KiB\n"
                                                    "pmtu: 1024\n"));
        for (int i = 0; i < 4; ++i) { f.connect(hosts, i, leaf, i, cable100); }
        ASSERT_EQ(f.build(pool.mp), "");
        vt::node& sn = f.node_at(leaf);
        vt::node& gn = f.node_at(hosts);
        EXPECT_EQ(sn.kind(), vt::node_kind::switch_node);
        EXPECT_EQ(gn.kind(), vt::node_kind::gen_node);
        EXPECT_EQ(sn.units(), 1u);
        EXPECT_EQ(gn.units(), 4u) << "one unit per host (3 senders and the receiver)";
        ASSERT_EQ(sn.ports(), 4u);
        ASSERT_EQ(gn.ports(), 4u);
        for (std::size_t i = 0; i < 4; ++i) {
            EXPECT_EQ(sn.port(i).name, "Ethernet" + std::to_string(i));
            EXPECT_EQ(sn.port(i).name, f.port_name(leaf, static_cast<int>(i)));
            EXPECT_EQ(gn.port(i).line_rate, g100);
        }
        struct seen : vt::node_visitor {
            sw::switch_pipeline* s = nullptr;
            gen::gen_pipeline* g = nullptr;
            std::size_t flows = 0;
            void on_switch(sw::switch_pipeline& p, const switch_cfg&) override { s = &p; }
            void on_gen(gen::gen_pipeline& p, const gen_cfg& c) override {
                g = &p;
                flows = c.flows.size();
            }
        } v;
        sn.visit(v);
        gn.visit(v);
        EXPECT_EQ(v.s, &f.switch_at(leaf));
        EXPECT_EQ(v.g, &f.gen_at(hosts));
        EXPECT_EQ(v.flows, 3u);
        f.run_until(200_us);
        // Every unit was polled, and the generator's polls are its hosts' summed.
        EXPECT_GT(f.stats(leaf).polls, 0u);
        EXPECT_GT(f.stats(hosts).polls, 0u);
        EXPECT_EQ(f.engine_counters().node_polls, f.stats(leaf).polls + f.stats(hosts).polls);
        EXPECT_GT(pool.in_use(), 0u) << "frames in flight at 200 us";
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u);
}

// A flow's message table and completion ring hold what can be outstanding
// (gen::message_slots): a closed loop's `outstanding`, a message count,
// else 1024. Sized so, a closed loop of 2 messages in flight runs hundreds
// of messages through 2 slots with no post refused, and the fabric's
// resident floor counts 2 slots per flow, not 1024.
TEST(vt_fabric, a_flows_message_table_holds_what_can_be_outstanding) {
    init_eal();
    pool_guard pool(65536, "vt_slots");
    ASSERT_NE(pool.mp, nullptr);
    const std::string gen_yaml = "seed: 1\npattern: incast\nsenders: 3\nmsg_size: 4KiB\npmtu: 1024\n"
                                 "arrivals: closed-loop\noutstanding: 2\n";
    {
        vt::fabric f;
        const auto leaf = f.add_switch("leaf", sw_cfg(ports_yaml(4, "100Gbps")));
        const auto hosts = f.add_gen("hosts", g_cfg(gen_yaml));
        for (int i = 0; i < 4; ++i) { f.connect(hosts, i, leaf, i, cable100); }
        ASSERT_EQ(f.build(pool.mp), "");
        gen::gen_pipeline& g = f.gen_at(hosts);
        ASSERT_EQ(g.flow_count(), 3u);
        f.run_until(200_us);
        for (std::size_t i = 0; i < g.flow_count(); ++i) {
            const requester& rq = g.flow(i).rq;
            EXPECT_EQ(rq.message_capacity(), 2u) << "flow " << i;
            EXPECT_EQ(rq.completion_capacity(), 2u) << "flow " << i;
            // 200 us at ~33 Gbps each: ~200 messages of 4 KiB each.
            EXPECT_GT(rq.counters().messages_completed, 100u) << "flow " << i;
            EXPECT_EQ(rq.counters().post_rejected, 0u) << "flow " << i;
            EXPECT_EQ(rq.counters().completions_dropped, 0u) << "flow " << i;
        }
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u);
    // The policy itself: counts, closed loops, open loops, collectives.
    gen_cfg c = g_cfg(gen_yaml);
    gen_flow fl;
    fl.arrivals.kind = arrival_kind::closed_loop;
    fl.arrivals.outstanding = 4;
    EXPECT_EQ(gen::message_slots(c, fl), 4u);
    fl.arrivals.count = 3;
    EXPECT_EQ(gen::message_slots(c, fl), 3u);
    fl.arrivals.count = 0;
    fl.arrivals.outstanding = 512;
    EXPECT_EQ(gen::message_slots(c, fl), 512u);
    fl.arrivals.kind = arrival_kind::poisson;
    EXPECT_EQ(gen::message_slots(c, fl), 1024u) << "an open loop can pile messages up";
    fl.arrivals.count = 100000;
    EXPECT_EQ(gen::message_slots(c, fl), 1024u);
    fl.arrivals = {};
    fl.arrivals.kind = arrival_kind::closed_loop;
    c.pattern = gen_pattern::ring_allreduce;
    EXPECT_EQ(gen::message_slots(c, fl), 1024u) << "a collective posts its own messages";
}

TEST(vt_fabric, shaped_port_departures_are_spaced_exactly_at_the_configured_rate) {
    init_eal();
    pool_guard pool(65536, "vt_shape");
    ASSERT_NE(pool.mp, nullptr);
    const std::string dir = tmpdir("shape");
    const bits_per_sec g40{40'000'000'000ULL};
    {
        vt::fabric f;
        // Ethernet1 shaped to 40 Gb/s on a 100 Gb/s cable; the sender offers 50 Gb/s.
        const auto leaf = f.add_switch(
            "leaf", sw_cfg("PORT:\n  Ethernet0: {port_id: 0, speed: 100Gbps}\n  Ethernet1: {port_id: 1, speed: 40Gbps}\n"
                           "BUFFER_POOL: {}\nWRED_PROFILE: {}\n"));
        const auto hosts = f.add_gen("hosts", g_cfg("seed: 1\npattern: incast\nsenders: 1\nmsg_size: 64KiB\n"
                                                    "pmtu: 1024\ndcqcn: off\nflow_rate: 50Gbps\n"));
        f.connect(hosts, 0, leaf, 0, cable100);
        f.connect(hosts, 1, leaf, 1, cable100);
        ASSERT_EQ(f.build(pool.mp), "");
        ASSERT_EQ(f.capture_to(dir, 64), "");
        f.run_until(600_us);
        EXPECT_EQ(f.spins(), 0u);
        EXPECT_EQ(switch_drops(f.switch_at(leaf)), 0u);
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u);
    const auto tx = read_pcap(dir + "/leaf-Ethernet1-tx.pcap");
    // The backlog builds from the start (50 > 40); judge 100..600 us.
    std::vector<const rec*> d;
    for (const auto& r : tx) {
        if (r.ns >= 100'000 && r.dscp() == 26) { d.push_back(&r); }
    }
    ASSERT_GT(d.size(), 2000u);
    // Each frame was dequeued at t_k = depart_k - its wire time at 100 Gb/s
    // (the cable is idle between frames); t_k - t_0 must equal the exact
    // sum of the frames' wire times at 40 Gb/s, to within the 1 ns clock.
    const std::int64_t t0 = d[0]->ns - wire_ns_ceil(d[0]->len, g100);
    long double sum = 0;
    long double worst = 0;
    for (std::size_t k = 1; k < d.size(); ++k) {
        sum += wire_ns(d[k - 1]->len, g40);
        const std::int64_t tk = d[k]->ns - wire_ns_ceil(d[k]->len, g100);
        const long double err = (long double)(tk - t0) - sum;
        worst = std::max(worst, err < 0 ? -err : err);
    }
    EXPECT_LT(worst, 1.0L) << "departures drift from the configured rate";
    const long double span = (long double)(d.back()->ns - wire_ns_ceil(d.back()->len, g100) - t0);
    const long double rate = sum / span * 40e9L;
    EXPECT_NEAR((double)rate, 40e9, 40e9 * 1e-5);
    std::printf("[vt shaping] %zu frames at 40Gbps: worst deviation from the exact schedule %.3Lf ns, rate %.6Lf Gbps\n",
                d.size(), worst, rate / 1e9L);
    std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------

struct incast_result {
    std::uint64_t hops = 0, spins = 0, sw_drops = 0, link_drops = 0, gen_naks = 0, gen_bad = 0;
    double busy = 0, wall_s = 0;
    std::uint64_t peak_use = 0, use_bound = 0, peak_headroom = 0, xoff_size = 0, xoff_transitions = 0;
    std::uint64_t rx_bytes = 0, polls = 0, instants = 0;
    std::string counters;  // every node's counters, as text (determinism)
};

// n senders -> 1 receiver through one leaf, all ports at 100 Gb/s.
incast_result run_incast(int n, nanos run, nanos window_start, const std::string& capture_dir,
                         const std::string& gen_extra = "") {
    incast_result res;
    static int runs = 0;
    pool_guard pool(262144, ("vt_inc" + std::to_string(runs++)).c_str());
    EXPECT_NE(pool.mp, nullptr);
    if (pool.mp == nullptr) { return res; }
    std::chrono::steady_clock::time_point t_wall;
    {
        vt::fabric f;
        const switch_cfg scfg = sw_cfg(ports_yaml(n + 1, "100Gbps"));
        const auto leaf = f.add_switch("leaf", scfg);
        const auto hosts = f.add_gen(
            "hosts", g_cfg("seed: 7\npattern: incast\nsenders: " + std::to_string(n) +
                           "\nmsg_size: 1MiB\npmtu: 1024\nwindow: 8192\n" + gen_extra));
        for (int i = 0; i <= n; ++i) { f.connect(hosts, i, leaf, i, cable100); }
        const std::string e = f.build(pool.mp);
        EXPECT_EQ(e, "");
        if (!e.empty()) { return res; }
        if (!capture_dir.empty()) { EXPECT_EQ(f.capture_to(capture_dir, 96), ""); }
        const auto* out = f.tx_link(leaf, n);  // the receiver's port
        t_wall = std::chrono::steady_clock::now();  // the run only (not the set-up)
        f.run_until(window_start);
        const std::uint64_t b0 = out->counters().tx_bytes, p0 = out->counters().tx_accepted;
        f.run_until(run);
        res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_wall).count();
        res.polls = f.engine_counters().node_polls;
        res.instants = f.engine_counters().instants;
        const std::uint64_t b1 = out->counters().tx_bytes, p1 = out->counters().tx_accepted;
        // Busy: wire time of what the port sent in the window / the window.
        res.busy = double((b1 - b0) + 24 * (p1 - p0)) * 8 / (double(g100.v) * double((run - window_start).v) / 1e9);
        auto& s = f.switch_at(leaf);
        auto& g = f.gen_at(hosts);
        res.hops = f.packet_hops();
        res.spins = f.spins();
        res.sw_drops = switch_drops(s);
        res.link_drops = link_drops(f);
        std::ostringstream os;
        for (std::size_t p = 0; p < s.port_count(); ++p) {
            const auto& c = s.counters(p);
            os << "sw port " << p << " rx " << c.rx_packets << " tx " << c.tx_packets << " pfc " << c.tx_pfc_frames;
            for (int q = 0; q < 8; ++q) {
                const auto qs = s.queue(p, q);
                os << " q" << q << ":" << qs.enq_packets << "/" << qs.max_depth_bytes << "/" << qs.ecn_marked;
            }
            os << "\n";
            if (static_cast<int>(p) < n) {
                const sw::pg_status pg = s.pg(p, 3);
                res.peak_use = std::max(res.peak_use, pg.peak_use);
                res.peak_headroom = std::max(res.peak_headroom, pg.peak_headroom);
                res.xoff_transitions += pg.xoff_transitions;
            }
        }
        for (std::size_t p = 0; p < g.port_count(); ++p) {
            const auto& c = g.counters(p);
            os << "gen port " << p << " tx " << c.tx_packets << " rx " << c.rx_packets << " pfc " << c.rx_pfc << " cnp "
               << c.tx_cnp << "\n";
            res.gen_bad += c.rx_bad_icrc + c.rx_malformed_total + c.drop_reply_full + c.drop_cnp_full;
            if (static_cast<int>(p) == n) { res.rx_bytes = c.rx_bytes; }
        }
        for (std::size_t i = 0; i < g.flow_count(); ++i) {
            const auto& fl = g.flow(i);
            res.gen_naks += fl.rq.counters().naks_rx + fl.rq.counters().timeouts;
            os << "flow " << i << " psn " << fl.rq.snd_nxt_psn() << " fct " << fl.fct_ns.size() << " rate "
               << fl.pacer.rate().v << " cnp " << fl.cnp_rx << "\n";
        }
        res.counters = os.str();
        const auto& pgc = f.switch_config(leaf).ports[0].pgs[3];
        const std::uint64_t shared = s.pool_shared_size();
        const std::uint64_t max_th = pgc.dynamic_th >= 0 ? shared << pgc.dynamic_th : shared >> -pgc.dynamic_th;
        res.use_bound = pgc.reserved.v + max_th + pgc.xoff.v;
        res.xoff_size = pgc.xoff.v;
        f.release_all();
    }
    EXPECT_EQ(pool.in_use(), 0u) << "every mbuf back in the pool";
    return res;
}

TEST(vt_fabric, lossless_incast_8_to_1_at_100g_for_10ms) {
    init_eal();
    const incast_result r = run_incast(8, 10_ms, 1_ms, "");
    std::printf("[vt incast 8:1 100G 10ms] busy %.3f%%, drops switch %llu links %llu, NAKs+timeouts %llu, peak PG3 "
                "use %llu B (bound %llu), peak headroom %llu B (xoff %llu), XOFF transitions %llu; %llu packet-hops "
                "in %.3f s wall = %.2f M/s (%llu node polls, %llu instants)\n%s",
                r.busy * 100, (unsigned long long)r.sw_drops, (unsigned long long)r.link_drops,
                (unsigned long long)r.gen_naks, (unsigned long long)r.peak_use, (unsigned long long)r.use_bound,
                (unsigned long long)r.peak_headroom, (unsigned long long)r.xoff_size,
                (unsigned long long)r.xoff_transitions, (unsigned long long)r.hops, r.wall_s,
                double(r.hops) / r.wall_s / 1e6, (unsigned long long)r.polls, (unsigned long long)r.instants,
                r.counters.c_str());
    EXPECT_EQ(r.spins, 0u);
    EXPECT_EQ(r.sw_drops, 0u);
    EXPECT_EQ(r.link_drops, 0u);
    EXPECT_EQ(r.gen_naks, 0u);
    EXPECT_EQ(r.gen_bad, 0u);
    EXPECT_GE(r.busy, 0.99);
    EXPECT_LE(r.peak_use, r.use_bound);
    EXPECT_LE(r.peak_headroom, r.xoff_size);
    EXPECT_GT(r.xoff_transitions, 0u) << "an 8:1 incast must need PFC";
}

TEST(vt_fabric, two_runs_give_byte_identical_captures_and_counters) {
    init_eal();
    const std::string a = tmpdir("detA"), b = tmpdir("detB");
    const incast_result ra = run_incast(4, 1_ms, 100_us, a);
    const incast_result rb = run_incast(4, 1_ms, 100_us, b);
    EXPECT_EQ(ra.counters, rb.counters);
    EXPECT_GT(ra.hops, 10000u);
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(a)) {
        const auto other = std::filesystem::path(b) / e.path().filename();
        ASSERT_TRUE(std::filesystem::exists(other)) << other;
        std::ifstream fa(e.path(), std::ios::binary), fb(other, std::ios::binary);
        const std::string sa((std::istreambuf_iterator<char>(fa)), {}), sb((std::istreambuf_iterator<char>(fb)), {});
        EXPECT_GT(sa.size(), 24u) << e.path();
        EXPECT_TRUE(sa == sb) << e.path() << " differs between two runs";
        ++files;
    }
    EXPECT_EQ(files, 2u * 2u * 5u) << "tx and rx, on both ends of 5 cables";
    std::filesystem::remove_all(a);
    std::filesystem::remove_all(b);
}

}  // namespace

namespace {

// Unknown unicast is flooded until the receiver is learned: at the start of
// a 63:1 incast the first frames of every sender go to all 63 other ports.
// An ASIC stores such a frame once, so the ingress PG is charged once per
// received frame, not once per copy (63 x 1152 B per frame overflowed the
// 72704 B headroom of a 100G/5m lossless PG before the switch charged each
// copy; 2237 drops in 2 ms). The buffer accounts return to zero at the end.
TEST(vt_fabric, flooded_frames_charge_the_ingress_pg_once) {
    init_eal();
    pool_guard pool(327680, "vt_flood");
    ASSERT_NE(pool.mp, nullptr);
    {
        vt::fabric f;
        const auto leaf = f.add_switch("leaf", sw_cfg(ports_yaml(64, "100Gbps")));
        const auto hosts = f.add_gen("hosts", g_cfg("seed: 3\npattern: incast\nsenders: 63\nmsg_size: 64KiB\n"
                                                    "pmtu: 1024\nwindow: 256\nmbufs: 98304\n"));
        for (int i = 0; i < 64; ++i) { f.connect(hosts, i, leaf, i, cable100); }
        ASSERT_EQ(f.build(pool.mp), "");
        f.run_until(200_us);
        auto& s = f.switch_at(leaf);
        std::uint64_t copies = 0, overflow = 0, peak = 0;
        for (std::size_t p = 0; p < s.port_count(); ++p) {
            copies += s.counters(p).flood_copies;
            overflow += s.counters(p).drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)];
            peak = std::max(peak, s.pg(p, 3).peak_use);
        }
        const auto& pgc = f.switch_config(leaf).ports[0].pgs[3];
        std::printf("[vt flood] 63:1 start: %llu flood copies, headroom overflows %llu, peak PG3 use %llu B "
                    "(reserved %llu + xoff %llu)\n",
                    (unsigned long long)copies, (unsigned long long)overflow, (unsigned long long)peak,
                    (unsigned long long)pgc.reserved.v, (unsigned long long)pgc.xoff.v);
        EXPECT_GT(copies, 63u * 62u) << "every sender's first frame must have been flooded";
        EXPECT_EQ(overflow, 0u);
        EXPECT_EQ(switch_drops(s), 0u);
        EXPECT_EQ(f.spins(), 0u);
        f.release_all();
        EXPECT_EQ(s.pool_shared_used(), 0u) << "every charge released exactly once";
        for (std::size_t p = 0; p < s.port_count(); ++p) { EXPECT_EQ(s.pg(p, 3).use, 0u) << p; }
    }
    EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
