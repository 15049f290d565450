// Link state (issue: rocelab-switch as a lab engineer's switch). Three
// ports over net_ring; the receiving host on Ethernet1 stops reading, so the
// switch's egress towards it fills (its TX ring, then the egress queue).
// Then Ethernet1's link goes down (rte_eth_dev_set_link_down on the
// switch's ring device, seen by poll_link_states() as the app's control
// thread calls it): the queued frames are dropped and counted
// (drop_link_down), the ingress buffer they held is released (every PG of
// the sender's port back to 0 and the shared pool empty), the FDB entry
// of the host behind the port is removed, a link_down event is queued, and
// frames forwarded towards the port while it is down are dropped while the
// other ports still get them. Link up: forwarding resumes.
#include <rte_ethdev.h>

#include "ring_harness.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

roce_v4_params flow(const test::ring_testbed& tb, int from, int to, std::uint8_t dscp) {
    roce_v4_params p;
    p.src_mac = tb.hosts[static_cast<std::size_t>(from)].mac;
    p.dst_mac = tb.hosts[static_cast<std::size_t>(to)].mac;
    p.src_ip = ipv4_addr(10, 0, 0, static_cast<std::uint8_t>(from + 1));
    p.dst_ip = ipv4_addr(10, 0, 0, static_cast<std::uint8_t>(to + 1));
    p.dscp = dscp;
    p.bth.opcode = 0x04;
    p.bth.dest_qpn = 0x40;
    return p;
}

// Sends at least `n` frames from host `from` to host `to` (paced at 1 Gbps,
// in the pacer's bursts of up to 4 frames); returns how many it sent.
std::uint64_t send_n(test::ring_testbed& tb, int from, int to, std::uint8_t dscp, std::uint64_t n) {
    test::paced_sender s(tb.pool(), tb.hosts[static_cast<std::size_t>(from)].port_id, flow(tb, from, to, dscp), 1000,
                         bits_per_sec{1'000'000'000});
    dpdk::tsc_clock clk = tb.clock;
    const nanos give_up = clk.now() + 2_s;
    while (s.sent < n && clk.now() < give_up) { s.poll(clk.now()); }
    return s.sent;
}

template <typename Pred>
bool wait_for(Pred p, nanos limit = 2_s) {
    dpdk::tsc_clock clk;
    const nanos end = clk.now() + limit;
    while (clk.now() < end) {
        if (p()) { return true; }
        rte_delay_us_sleep(200);
    }
    return p();
}

std::uint64_t link_drops(const test::ring_testbed& tb, std::size_t port) {
    return sw::read_counter(tb.pipe->counters(port).drops[static_cast<std::size_t>(sw::drop_reason::link_down)]);
}

TEST(link_state, down_flushes_releases_buffer_and_fdb_then_up_resumes) {
    test::init_eal_once("linkstate");
    switch_cfg cfg = default_switch_cfg();  // the RoCE defaults: buffer model, lossless PG 3-4
    for (int i = 0; i < 3; ++i) {
        port_cfg p = default_port_cfg();
        p.name = "Ethernet" + std::to_string(i);
        p.speed = 10_Gbps;
        cfg.ports.push_back(p);
    }
    cfg.ports[1].speed = 1_Gbps;
    test::ring_testbed tb(cfg, "lks");
    ASSERT_TRUE(tb.pipe);
    ASSERT_TRUE(tb.pipe->buffer_accounting());
    const std::uint16_t sw1 = tb.pipe->binding(1).port_id;
    EXPECT_EQ(tb.pipe->poll_link_states(), 0u) << "all links up at the start";
    tb.start();

    // Learn h1 and h0 (one frame each way), then h0 -> h1 lossy TC (DSCP 0)
    // while h1 does not read: 6000 frames, more than its 4096-frame ring.
    // h1 -> h0 frames miss (h0 unknown), h0 -> h1 frames hit.
    const std::uint64_t n_learn = send_n(tb, 1, 0, 0, 1);
    ASSERT_GE(n_learn, 1u);
    ASSERT_TRUE(wait_for([&] { return tb.pipe->fdb_size() >= 1; }));
    tb.drain(tb.hosts[0].port_id);
    const std::uint64_t n_known = send_n(tb, 0, 1, 0, 6000);
    ASSERT_GE(n_known, 6000u);
    ASSERT_TRUE(wait_for([&] { return tb.pipe->fdb_size() == 2; }));
    std::uint32_t queued = 0;
    ASSERT_TRUE(wait_for([&] {
        queued = 0;
        for (int q = 0; q < 8; ++q) { queued += tb.pipe->queue(1, q).depth_packets; }
        return queued > 500;
    })) << "the egress towards the silent host holds frames: " << queued << " queued, tail drops "
        << tb.pipe->queue(1, 1).drop_packets << ", tx " << tb.pipe->counters(1).tx_packets;
    EXPECT_GT(tb.pipe->pool_shared_used(), 0u) << "queued frames hold ingress buffer";
    const std::uint64_t tx_before = tb.pipe->counters(1).tx_packets;

    ASSERT_EQ(rte_eth_dev_set_link_down(sw1), 0);
    EXPECT_EQ(tb.pipe->poll_link_states(), 1u);
    ASSERT_TRUE(wait_for([&] { return !tb.pipe->link_up(1); }));
    sw::switch_event ev;
    ASSERT_TRUE(tb.pipe->pop_event(ev));
    EXPECT_EQ(ev.what, sw::switch_event::kind::link_down);
    EXPECT_EQ(ev.port, 1u);
    for (int q = 0; q < 8; ++q) { EXPECT_EQ(tb.pipe->queue(1, q).depth_packets, 0u) << "queue " << q; }
    EXPECT_GE(link_drops(tb, 1), queued) << "every queued frame is counted";
    EXPECT_EQ(tb.pipe->pool_shared_used(), 0u) << "the shared pool is released";
    for (int pg = 0; pg < 8; ++pg) {
        const auto st = tb.pipe->pg(0, pg);
        EXPECT_EQ(st.use, 0u) << "PG " << pg << " of the sender's port";
        EXPECT_FALSE(st.xoff) << "PG " << pg;
    }
    EXPECT_EQ(tb.pipe->fdb_size(), 1u) << "h1's entry (on the down port) is gone, h0's stays";
    EXPECT_EQ(tb.pipe->fdb_totals().flushed, 1u) << "h1's entry, flushed with its port";
    EXPECT_EQ(tb.pipe->counters(1).tx_packets, tx_before) << "nothing sent on a down link";

    // While down: h0 -> h1 is unknown again and floods; the copy to the
    // down port is dropped, Ethernet2's host still gets its copy.
    tb.drain(tb.hosts[2].port_id);
    const std::uint64_t drops_down = link_drops(tb, 1);
    const std::uint64_t n_down = send_n(tb, 0, 1, 0, 100);
    ASSERT_GE(n_down, 100u);
    ASSERT_TRUE(wait_for([&] { return link_drops(tb, 1) == drops_down + n_down; })) << link_drops(tb, 1);
    std::size_t h2 = 0;
    ASSERT_TRUE(wait_for([&] { h2 += tb.drain(tb.hosts[2].port_id); return h2 == n_down; })) << h2;

    // Link up: h1 reads again and frames reach it.
    tb.drain(tb.hosts[1].port_id);
    ASSERT_EQ(rte_eth_dev_set_link_up(sw1), 0);
    EXPECT_EQ(tb.pipe->poll_link_states(), 1u);
    ASSERT_TRUE(wait_for([&] { return tb.pipe->link_up(1); }));
    ASSERT_TRUE(tb.pipe->pop_event(ev));
    EXPECT_EQ(ev.what, sw::switch_event::kind::link_up);
    const std::uint64_t n_up = send_n(tb, 0, 1, 0, 100);
    ASSERT_GE(n_up, 100u);
    std::size_t h1 = 0;
    ASSERT_TRUE(wait_for([&] { h1 += tb.drain(tb.hosts[1].port_id); return h1 == n_up; })) << h1;
    EXPECT_EQ(link_drops(tb, 1), drops_down + n_down) << "no drop after link up";

    // The FDB's counters, from the frames above: two stations learned (h1,
    // h0), h1's flushed with its port and never learned again (h1 sent
    // nothing since). Lookups are cached per RX burst (at most max_burst
    // frames, switch/l2_bridge.hpp): the n_known frames to a known h1 hit, at
    // least once per burst; the h1 -> h0 frames (h0 not yet known) and the
    // frames to h1 after its entry went miss.
    const fdb_counters f = tb.pipe->fdb_totals();
    constexpr std::uint64_t burst = sw::switch_pipeline::max_burst;
    EXPECT_EQ(f.learned, 2u);
    EXPECT_EQ(f.flushed, 1u);
    EXPECT_EQ(tb.pipe->fdb_size(), 1u);
    EXPECT_EQ(f.moved, 0u);
    EXPECT_EQ(f.aged, 0u) << "aging is 300 s";
    EXPECT_EQ(f.table_full, 0u);
    EXPECT_EQ(f.invalid_src, 0u);
    EXPECT_GE(f.hits, (n_known + burst - 1) / burst);
    EXPECT_LE(f.hits, n_known);
    EXPECT_GE(f.misses, 1 + (n_down + burst - 1) / burst + (n_up + burst - 1) / burst);
    EXPECT_LE(f.misses, n_learn + n_down + n_up);

    tb.stop();
    for (const auto& h : tb.hosts) { tb.drain(h.port_id); }
    tb.pipe->release_all();
    for (const auto& h : tb.hosts) { tb.drain(h.port_id); }
    EXPECT_EQ(tb.pool_in_use(), 0u) << "no mbuf leaked";
}

// A port whose link has never been up (a memif peer not yet connected) is
// taken as up: nothing changes until it has been seen up once.
TEST(link_state, never_up_is_taken_as_up_until_seen) {
    test::init_eal_once("linkstate");
    switch_cfg cfg = default_switch_cfg();
    for (int i = 0; i < 2; ++i) {
        port_cfg p = default_port_cfg();
        p.name = "Ethernet" + std::to_string(i);
        cfg.ports.push_back(p);
    }
    test::ring_testbed tb(cfg, "lkn");
    ASSERT_TRUE(tb.pipe);
    const std::uint16_t sw1 = tb.pipe->binding(1).port_id;
    ASSERT_EQ(rte_eth_dev_set_link_down(sw1), 0);
    EXPECT_EQ(tb.pipe->poll_link_states(), 0u) << "never seen up: no change";
    ASSERT_EQ(rte_eth_dev_set_link_up(sw1), 0);
    EXPECT_EQ(tb.pipe->poll_link_states(), 0u) << "up, as assumed";
    ASSERT_EQ(rte_eth_dev_set_link_down(sw1), 0);
    EXPECT_EQ(tb.pipe->poll_link_states(), 1u) << "seen up once, now down";
    tb.start();
    EXPECT_TRUE(wait_for([&] { return !tb.pipe->link_up(1); }));
    tb.stop();
}

}  // namespace
