// PFC watchdog (issue: lossless classes), SONiC PFC_WD semantics.
// Ethernet1 (1Gbps, PFC on priority 3, watchdog on queue 3: detection 50 ms,
// restoration 100 ms, action drop, polled every 5 ms) forwards TC 3 traffic
// to a host that storms it with XOFF frames.
#include "ring_harness.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

struct wd_bed {
    std::unique_ptr<test::ring_testbed> tb;
    std::unique_ptr<test::paced_sender> s3;
    std::uint64_t tc3_rx = 0;
};

wd_bed make_bed(const std::string& tag) {
    switch_cfg cfg = default_switch_cfg();
    port_cfg p0 = default_port_cfg();
    p0.name = "Ethernet0";
    port_cfg p1 = default_port_cfg();
    p1.name = "Ethernet1";
    p1.speed = 1_Gbps;
    p1.pfc_enable = 0x08;
    p1.pfcwd_queues = 0x08;
    p1.wd.enabled = true;
    p1.wd.detection_time = 50_ms;
    p1.wd.restoration_time = 100_ms;
    p1.wd.action = pfc_wd_action::drop;
    p1.wd.poll_interval = 5_ms;
    p1.limits[3] = queue_limits{bytes{8 * 1024 * 1024}, 16384};
    cfg.ports = {p0, p1};
    test::without_buffers_and_wred(cfg);  // this test is about PFC/scheduling, not the buffer model
    wd_bed b;
    b.tb = std::make_unique<test::ring_testbed>(cfg, tag);
    roce_v4_params r;
    r.src_mac = b.tb->hosts[0].mac;
    r.dst_mac = b.tb->hosts[1].mac;
    r.dscp = 26;
    r.bth.opcode = 0x04;
    b.s3 = std::make_unique<test::paced_sender>(b.tb->pool(), b.tb->hosts[0].port_id, r, 500,
                                                 bits_per_sec{200'000'000});
    return b;
}

// Run traffic for `d`, storming (XOFF prio 3 every 5 ms) while `storm` is set.
void run(wd_bed& b, dpdk::tsc_clock& clk, nanos d, bool storm) {
    const nanos end = clk.now() + d;
    nanos next_xoff = clk.now();
    rte_mbuf* m[64];
    for (nanos now = clk.now(); now < end; now = clk.now()) {
        b.s3->poll(now);
        if (storm && now >= next_xoff) {
            test::send_pfc(b.tb->pool(), b.tb->hosts[1].port_id, b.tb->hosts[1].mac, 0x08, 0xFFFF);
            next_xoff = now + 5_ms;
        }
        const std::uint16_t n = rte_eth_rx_burst(b.tb->hosts[1].port_id, 0, m, 64);
        b.tc3_rx += n;
        rte_pktmbuf_free_bulk(m, n);
    }
}

TEST(pfc_watchdog, storm_longer_than_detection_trips_drop_and_restores) {
    test::init_eal_once("pfcwd");
    wd_bed b = make_bed("wd1");
    ASSERT_TRUE(b.tb->pipe);
    b.tb->start();
    dpdk::tsc_clock clk = b.tb->clock;  // the worker's epoch
    run(b, clk, 100_ms, false);
    ASSERT_GT(b.tc3_rx, 1000u);

    run(b, clk, 200_ms, true);  // 200 ms storm > 50 ms detection
    auto st = b.tb->pipe->pfc(1, clk.now());
    EXPECT_EQ(st.wd_storms[3], 1u);
    EXPECT_TRUE(st.wd_stormed[3]);
    EXPECT_GT(st.wd_tx_dropped[3], 0u) << "queued frames are discarded";
    EXPECT_GT(st.wd_rx_dropped[3], 0u) << "arriving frames are discarded";
    const auto q3 = b.tb->pipe->queue(1, 3);
    EXPECT_LT(q3.depth_packets, 64u) << "the stormed queue drains";
    EXPECT_GT(b.tb->pipe->counters(1).drops[static_cast<std::size_t>(sw::drop_reason::pfcwd)], 0u);

    // Storm over: restored after 100 ms without PFC frames; traffic flows again.
    run(b, clk, 60_ms, false);
    EXPECT_TRUE(b.tb->pipe->pfc(1, clk.now()).wd_stormed[3]) << "not yet: restoration takes 100 ms";
    run(b, clk, 100_ms, false);
    st = b.tb->pipe->pfc(1, clk.now());
    EXPECT_FALSE(st.wd_stormed[3]);
    EXPECT_EQ(st.wd_restores[3], 1u);
    const std::uint64_t before = b.tc3_rx;
    run(b, clk, 100_ms, false);
    EXPECT_GT(b.tc3_rx - before, 1000u) << "TC 3 flows again after restoration";
    b.tb->stop();
}

TEST(pfc_watchdog, storm_shorter_than_detection_does_not_trip) {
    test::init_eal_once("pfcwd");
    wd_bed b = make_bed("wd2");
    ASSERT_TRUE(b.tb->pipe);
    b.tb->start();
    dpdk::tsc_clock clk = b.tb->clock;  // the worker's epoch
    run(b, clk, 50_ms, false);
    run(b, clk, 30_ms, true);  // 30 ms < 50 ms detection
    run(b, clk, 150_ms, false);
    const auto st = b.tb->pipe->pfc(1, clk.now());
    EXPECT_EQ(st.wd_storms[3], 0u);
    EXPECT_FALSE(st.wd_stormed[3]);
    EXPECT_EQ(st.wd_tx_dropped[3] + st.wd_rx_dropped[3], 0u);
    EXPECT_EQ(b.tb->pipe->queue(1, 3).drop_packets, 0u);
    b.tb->stop();
}

}  // namespace
