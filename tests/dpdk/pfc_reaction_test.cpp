// PFC reaction (issue: lossless classes): an XOFF for priority 3 stops TC 3
// on that egress for Q x 512 / speed while other classes keep flowing; an
// XON (quanta 0) resumes it at once.
#include "ring_harness.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

struct sink_counts {
    std::uint64_t tc3 = 0, tc0 = 0;
    nanos last_tc3{0};
};

void drain_sink(std::uint16_t port, nanos now, sink_counts& c) {
    rte_mbuf* b[64];
    const std::uint16_t n = rte_eth_rx_burst(port, 0, b, 64);
    for (std::uint16_t i = 0; i < n; ++i) {
        const auto* d = rte_pktmbuf_mtod(b[i], const std::uint8_t*);
        const int dscp = d[15] >> 2;
        if (dscp == 26) {
            ++c.tc3;
            c.last_tc3 = now;
        } else if (dscp == 8) {
            ++c.tc0;
        }
    }
    rte_pktmbuf_free_bulk(b, n);
}

TEST(switch_dpdk, pfc_xoff_pauses_one_class_for_its_quanta_and_xon_resumes) {
    test::init_eal_once("pfcreact");
    switch_cfg cfg = default_switch_cfg();
    port_cfg p0 = default_port_cfg();
    p0.name = "Ethernet0";
    port_cfg p1 = default_port_cfg();
    p1.name = "Ethernet1";
    p1.speed = 1_Gbps;
    ASSERT_EQ(p1.pfc_enable & 0x08, 0x08) << "AZURE default: PFC on priorities 3 and 4";
    // Room for 20 ms of paused TC 3 at 0.3 Gbps (~1400 frames): this test is
    // about the reaction; buffering is the incast tests' subject.
    p1.limits[3] = queue_limits{bytes{4 * 1024 * 1024}, 8192};
    cfg.ports = {p0, p1};
    test::without_buffers_and_wred(cfg);  // this test is about PFC/scheduling, not the buffer model
    test::ring_testbed tb(cfg, "pr");
    ASSERT_TRUE(tb.pipe);
    tb.start();

    roce_v4_params base;
    base.src_mac = tb.hosts[0].mac;
    base.dst_mac = tb.hosts[1].mac;
    base.bth.opcode = 0x04;
    roce_v4_params r3 = base;
    r3.dscp = 26;  // TC 3
    roce_v4_params r0 = base;
    r0.dscp = 8;  // TC 0
    test::paced_sender s3(tb.pool(), tb.hosts[0].port_id, r3, 500, bits_per_sec{300'000'000});
    test::paced_sender s0(tb.pool(), tb.hosts[0].port_id, r0, 500, bits_per_sec{300'000'000});

    dpdk::tsc_clock clk;
    sink_counts c;
    auto run_for = [&](nanos d) {
        const nanos end = clk.now() + d;
        for (nanos now = clk.now(); now < end; now = clk.now()) {
            s3.poll(now);
            s0.poll(now);
            drain_sink(tb.hosts[1].port_id, now, c);
        }
    };
    run_for(200_ms);
    ASSERT_GT(c.tc3, 100u);

    // XOFF priority 3 with Q = 40000 quanta: 40000 x 512 bit / 1 Gbps = 20.48 ms.
    const std::uint16_t q = 40000;
    const double expect_ms = 40000.0 * 512 / 1e9 * 1e3;
    const nanos paused0 = tb.pipe->paused_time(1, 3, clk.now());
    ASSERT_TRUE(test::send_pfc(tb.pool(), tb.hosts[1].port_id, tb.hosts[1].mac, 0x08, q));
    const std::uint64_t tc0_before = c.tc0;
    run_for(10_ms);
    const std::uint64_t tc3_mid = c.tc3;
    run_for(5_ms);
    EXPECT_LE(c.tc3 - tc3_mid, 1u) << "TC 3 must be stopped during the pause";
    EXPECT_GT(c.tc0 - tc0_before, 500u) << "TC 0 keeps flowing";
    run_for(40_ms);
    const double paused_ms = double((tb.pipe->paused_time(1, 3, clk.now()) - paused0).v) / 1e6;
    std::printf("paused time %.3f ms (expected %.3f ms)\n", paused_ms, expect_ms);
    EXPECT_NEAR(paused_ms, expect_ms, expect_ms * 0.10);
    // Other priorities were never paused.
    EXPECT_EQ(tb.pipe->paused_time(1, 0, clk.now()).v, 0);

    // A second XOFF, then XON after 5 ms: TC 3 resumes within 1 ms.
    ASSERT_TRUE(test::send_pfc(tb.pool(), tb.hosts[1].port_id, tb.hosts[1].mac, 0x08, q));
    run_for(5_ms);
    const std::uint64_t tc3_before_xon = c.tc3;
    ASSERT_TRUE(test::send_pfc(tb.pool(), tb.hosts[1].port_id, tb.hosts[1].mac, 0x08, 0));
    const nanos t_xon = clk.now();
    nanos first_after{0};
    const nanos end = t_xon + 20_ms;
    for (nanos now = clk.now(); now < end; now = clk.now()) {
        s3.poll(now);
        s0.poll(now);
        drain_sink(tb.hosts[1].port_id, now, c);
        if (first_after.v == 0 && c.tc3 > tc3_before_xon) { first_after = now; }
    }
    ASSERT_GT(first_after.v, 0);
    std::printf("TC3 resumed %.3f ms after XON\n", double((first_after - t_xon).v) / 1e6);
    EXPECT_LT(first_after - t_xon, 1_ms);
    tb.stop();
    const auto& pc = tb.pipe->counters(1);
    EXPECT_EQ(pc.rx_pfc, 3u);
    EXPECT_EQ(pc.rx_pfc_prio[3], 3u);
    EXPECT_EQ(tb.pipe->queue(1, 3).drop_packets, 0u);
}

}  // namespace
