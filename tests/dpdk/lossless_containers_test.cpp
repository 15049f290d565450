// Lossless containers (docs/architecture.md, "Lossless containers: the rule").
//
// A frame the MMU admitted to a lossless PG leaves only by transmission,
// link down or the PFC watchdog: no container it passes through may run
// out of slots. These tests drive the real switch_pipeline on net_ring
// ports by hand (no worker threads, a manual clock), so they are exact:
//
//  - two workers, the receiver's port on worker 1, the sender's on worker 0;
//    worker 1 is not polled while 9000 lossless frames arrive, so the
//    handoff queue (2048) fills and the rest wait in the stash, far beyond
//    the 4096 entries the stash used to have. Every frame the MMU admitted
//    then reaches the receiver, in order, and nothing is dropped but what
//    the MMU itself refused (headroom overflow: the test's sender ignores
//    XOFF on purpose);
//  - one worker, one egress queue holding far more frames than the 16384
//    slots the per-queue ring used to have (a paused lossless queue).
#include <cstdio>
#include <string>

#include "ring_harness.hpp"
#include "rocelab_version.h"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

// A RoCEv2 WRITE ONLY frame from host `from` to host `to` with PSN `psn`.
rte_mbuf* roce_frame(rte_mempool* pool, const test::host_port& from, const test::host_port& to, std::uint8_t dscp,
                     std::uint32_t psn, std::uint32_t payload) {
    static std::vector<std::byte> pl(4096, std::byte{0x5a});
    roce_v4_params p;
    p.src_mac = from.mac;
    p.dst_mac = to.mac;
    p.src_ip = ipv4_addr(10, 0, 0, 1);
    p.dst_ip = ipv4_addr(10, 0, 0, 100);
    p.dscp = dscp;
    p.sport = 0xC001;
    p.bth.opcode = 0x0A;
    p.bth.dest_qpn = 0x101;
    p.bth.psn = psn;
    p.payload = std::span<const std::byte>(pl.data(), payload);
    std::vector<std::byte> f(9216);
    const std::size_t len = build_roce_v4(f, p);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    EXPECT_NE(m, nullptr);
    if (m == nullptr) { return nullptr; }
    std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)), f.data(), len);
    return m;
}

// BTH PSN of an untagged RoCEv2/IPv4 frame (14 + 20 + 8 bytes of headers, PSN in BTH bytes 9..11).
std::uint32_t psn_of(rte_mbuf* m) {
    const auto* d = rte_pktmbuf_mtod(m, const std::uint8_t*);
    const std::size_t o = 14 + 20 + 8 + 9;
    return std::uint32_t{d[o]} << 16 | std::uint32_t{d[o + 1]} << 8 | d[o + 2];
}

switch_cfg incast_cfg() {
    auto r = load_switch_cfg(std::string(ROCELAB_SOURCE_DIR) + "/conf/incast-lossless-1g.yaml");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : switch_cfg{};
}

std::uint64_t total_drops(const sw::port_counters& c) {
    std::uint64_t t = 0;
    for (auto d : c.drops) { t += d; }
    return t;
}

// The receiver speaks once, so the switch learns its port (no flooding).
void learn_receiver(test::ring_testbed& tb, rte_mempool* pool, nanos now, unsigned workers) {
    rte_mbuf* m = roce_frame(pool, tb.hosts[0], tb.hosts[1], 0, 0, 16);
    ASSERT_EQ(rte_eth_tx_burst(tb.hosts[0].port_id, 0, &m, 1), 1);
    for (unsigned k = 0; k < workers; ++k) {
        for (int i = 0; i < 4; ++i) { tb.pipe->poll_worker(k, now); }
    }
    tb.drain(tb.hosts[1].port_id);
}

TEST(lossless_containers, stash_holds_what_the_mmu_admitted_across_workers) {
    test::init_eal_once("llc", "0");
    switch_cfg cfg = incast_cfg();
    cfg.pool.size = bytes{64u << 20};  // the PG admits all 9000 small frames
    test::ring_testbed tb(cfg, "st", 2, {1, 0, 0, 0, 0});
    ASSERT_TRUE(tb.pipe);
    rte_mempool* pool = tb.pool();
    nanos now{1'000'000};
    learn_receiver(tb, pool, now, 2);
    EXPECT_FALSE(tb.pipe->worker_waits(0)) << "nothing waits for worker 1 yet";

    // 9000 lossless frames of 64 B payload from host 1 to host 0; only
    // worker 0 (the sender's port) runs: everything crosses towards worker 1.
    constexpr std::uint32_t frames = 9000;
    std::uint32_t sent = 0;
    while (sent < frames) {
        rte_mbuf* b[256];
        const std::uint32_t n = std::min<std::uint32_t>(256, frames - sent);
        for (std::uint32_t i = 0; i < n; ++i) { b[i] = roce_frame(pool, tb.hosts[1], tb.hosts[0], 26, sent + i, 64); }
        ASSERT_EQ(rte_eth_tx_burst(tb.hosts[1].port_id, 0, b, static_cast<std::uint16_t>(n)), n);
        sent += n;
        for (int i = 0; i < 16; ++i) { tb.pipe->poll_worker(0, now); }
        tb.drain(tb.hosts[1].port_id);  // the sender ignores the XOFF it gets
    }
    const sw::port_counters in = tb.pipe->counters(1);
    const std::uint64_t refused = in.drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)];
    const std::uint64_t admitted = frames - refused;
    const sw::worker_stats ws = tb.pipe->worker_figures(0);
    std::printf("admitted %llu of %u, stashed %llu\n", static_cast<unsigned long long>(admitted), frames,
                static_cast<unsigned long long>(ws.stashed));
    EXPECT_GT(admitted, 2048u + 4096u + 64u) << "the MMU must admit more than the old handoff queue + stash held";
    EXPECT_GT(ws.stashed, 4096u) << "more frames waited than the old 4096-entry stash held";
    EXPECT_TRUE(tb.pipe->worker_waits(0)) << "worker 0's last poll left frames in the stash: it waits on worker 1 "
                                             "(with --idle-yield it yields the CPU)";
    EXPECT_FALSE(tb.pipe->worker_waits(1));
    EXPECT_EQ(total_drops(in), refused) << "only the MMU refused frames (headroom overflow)";
    EXPECT_EQ(total_drops(tb.pipe->counters(0)), 0u) << "no drop at the egress: drop_handoff_full on a lossless frame "
                                                        "is what the stash prevents";

    // Now worker 1 runs: every admitted frame reaches the receiver, in order.
    std::uint64_t got = 0;
    std::int64_t last = -1;
    bool in_order = true;
    for (int round = 0; round < 200000 && got < admitted; ++round) {
        now = now + 2_us;
        tb.pipe->poll_worker(0, now);  // credits back, XON
        tb.pipe->poll_worker(1, now);
        rte_mbuf* b[64];
        const std::uint16_t n = rte_eth_rx_burst(tb.hosts[0].port_id, 0, b, 64);
        for (std::uint16_t i = 0; i < n; ++i) {
            const auto psn = static_cast<std::int64_t>(psn_of(b[i]));
            in_order = in_order && psn > last;
            last = psn;
        }
        got += n;
        rte_pktmbuf_free_bulk(b, n);
    }
    for (int i = 0; i < 8; ++i) {  // the last credits home
        tb.pipe->poll_worker(1, now);
        tb.pipe->poll_worker(0, now);
    }
    EXPECT_EQ(got, admitted);
    EXPECT_FALSE(tb.pipe->worker_waits(0)) << "the stash emptied: worker 0 no longer waits";
    EXPECT_TRUE(in_order) << "frames of one flow kept their order through queue, stash and egress";
    EXPECT_EQ(total_drops(tb.pipe->counters(0)), 0u);
    const sw::pg_status pg = tb.pipe->pg(1, 3);
    EXPECT_EQ(pg.use, 0u) << "every byte charged to the PG came back";
}

TEST(lossless_containers, one_queue_holds_more_than_the_old_ring) {
    test::init_eal_once("llc", "0");
    switch_cfg cfg = incast_cfg();
    // A pool and headroom large enough to admit 40000 small frames to one PG.
    cfg.pool.size = bytes{64u << 20};
    test::ring_testbed tb(cfg, "q1", 1);
    ASSERT_TRUE(tb.pipe);
    rte_mempool* pool = tb.pool();
    nanos now{1'000'000};
    learn_receiver(tb, pool, now, 1);

    // The receiver pauses priority 3 for as long as the test runs (PFC with
    // the longest quanta, refreshed), so queue 3 of Ethernet0 only grows.
    auto pause = [&] {
        std::byte f[64]{};
        build_pfc(f, tb.hosts[0].mac, 0x08, std::array<std::uint16_t, 8>{0, 0, 0, 0xFFFF, 0, 0, 0, 0});
        rte_mbuf* m = rte_pktmbuf_alloc(pool);
        std::memcpy(rte_pktmbuf_append(m, 60), f, 60);
        ASSERT_EQ(rte_eth_tx_burst(tb.hosts[0].port_id, 0, &m, 1), 1);
    };
    pause();
    tb.pipe->poll(now);
    constexpr std::uint32_t frames = 20000;
    std::uint32_t sent = 0;
    while (sent < frames) {
        rte_mbuf* b[256];
        const std::uint32_t n = std::min<std::uint32_t>(256, frames - sent);
        for (std::uint32_t i = 0; i < n; ++i) { b[i] = roce_frame(pool, tb.hosts[1], tb.hosts[0], 26, sent + i, 64); }
        ASSERT_EQ(rte_eth_tx_burst(tb.hosts[1].port_id, 0, b, static_cast<std::uint16_t>(n)), n);
        sent += n;
        for (int i = 0; i < 16; ++i) { tb.pipe->poll(now); }
        tb.drain(tb.hosts[1].port_id);
    }
    const sw::queue_snapshot q = tb.pipe->queue(0, 3);
    const sw::port_counters in = tb.pipe->counters(1);
    const std::uint64_t refused = in.drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)];
    std::printf("queue 3 holds %u frames (%llu bytes), refused %llu\n", q.depth_packets,
                static_cast<unsigned long long>(q.depth_bytes), static_cast<unsigned long long>(refused));
    EXPECT_GT(q.depth_packets, 16384u) << "a paused lossless queue holds more than the old ring's 16384 slots";
    EXPECT_EQ(q.drop_packets, 0u) << "never tail-dropped";
    EXPECT_EQ(q.depth_packets + refused, frames);
    EXPECT_EQ(total_drops(in), refused);
    EXPECT_EQ(total_drops(tb.pipe->counters(0)), 0u);
}

// The drain's release notes (egress_port::release_notes) are a container
// too: 64 notes, one per run of frames from one (ingress port, PG), the
// buffer of each run released in order after the loop. A WRED drop at
// dequeue is not staged, so it does not count against the burst: one drain
// can take far more than 64 frames off a queue. Here queue 0 of Ethernet0
// (DSCP 8, lossy PG 0, WRED in step mode: every frame that leaves more than 16 KiB
// behind it is dropped, ECT or not) holds 300 frames that alternate between
// Ethernet1 and Ethernet2, so every frame is a run of its own, and one
// drain drops ~280 of them: the notes fill four times and are released
// early, in order. Every byte charged to the two PGs must come back, and
// every frame is either delivered or counted as a WRED drop.
TEST(lossless_containers, release_notes_overflow_in_one_drain) {
    test::init_eal_once("llc", "0");
    switch_cfg cfg = incast_cfg();
    constexpr std::uint64_t kmin = 16 * 1024;
    cfg.ports[0].wred[0] = wred_cfg::make(bytes{kmin}, bytes{kmin}, 1.0, false, true);
    test::ring_testbed tb(cfg, "rn", 1);
    ASSERT_TRUE(tb.pipe);
    rte_mempool* pool = tb.pool();
    nanos now{1'000'000};
    learn_receiver(tb, pool, now, 1);
    tb.drain(tb.hosts[0].port_id);

    // One frame per poll, from Ethernet1 and Ethernet2 in turn, at one
    // instant: the 1 Gbps shaper lets the first few out, the rest queue.
    constexpr std::uint32_t frames = 300;
    for (std::uint32_t i = 0; i < frames; ++i) {
        const test::host_port& from = tb.hosts[1 + i % 2];
        rte_mbuf* m = roce_frame(pool, from, tb.hosts[0], 8, i, 1000);  // DSCP 8: TC 0, queue 0, PG 0
        ASSERT_EQ(rte_eth_tx_burst(from.port_id, 0, &m, 1), 1);
        tb.pipe->poll(now);
    }
    const sw::queue_snapshot q0 = tb.pipe->queue(0, 0);
    const std::uint64_t held = q0.depth_packets;
    const std::uint64_t early = tb.pipe->counters(0).tx_packets;
    EXPECT_EQ(held + early, frames) << "nothing dropped while the queue filled";
    EXPECT_GT(q0.depth_bytes, kmin + 70 * 1000) << "more than 70 frames above Kmin, each a run of its own";
    EXPECT_GT(tb.pipe->pg(1, 0).use, 0u);
    EXPECT_GT(tb.pipe->pg(2, 0).use, 0u);

    // One poll, a second later: one drain drops every frame that leaves
    // more than Kmin behind it.
    now = now + 1_s;
    tb.pipe->poll(now);
    const std::uint64_t dropped_at_once = tb.pipe->counters(0).wred_dropped[0];
    std::printf("held %llu frames (%llu bytes); one drain dropped %llu\n", static_cast<unsigned long long>(held),
                static_cast<unsigned long long>(q0.depth_bytes), static_cast<unsigned long long>(dropped_at_once));
    EXPECT_GT(dropped_at_once, 64u) << "one drain noted more runs than its 64 notes";

    std::uint64_t got = 0;
    for (int round = 0; round < 1000 && tb.pipe->queue(0, 0).depth_packets > 0; ++round) {
        now = now + 100_us;
        tb.pipe->poll(now);
        got += tb.drain(tb.hosts[0].port_id);
    }
    got += tb.drain(tb.hosts[0].port_id);
    const sw::port_counters out = tb.pipe->counters(0);
    EXPECT_EQ(tb.pipe->queue(0, 0).depth_packets, 0u);
    EXPECT_EQ(got, out.tx_packets) << "what Ethernet0 sent reached its host";
    EXPECT_EQ(out.tx_packets + out.wred_dropped[0], frames + 0u) << "every frame delivered or counted as a WRED drop";
    EXPECT_EQ(total_drops(out), out.wred_dropped[0]);
    EXPECT_EQ(tb.pipe->pg(1, 0).use, 0u) << "every byte charged to Ethernet1's PG 0 came back";
    EXPECT_EQ(tb.pipe->pg(2, 0).use, 0u) << "every byte charged to Ethernet2's PG 0 came back";
    EXPECT_EQ(tb.pipe->pool_shared_used(), 0u);
}

}  // namespace
