// RSS: one switch port's RX over two workers (issue "The data path as named
// stages", item 4), on net_ring ports with two RX queues each.
//
// net_ring does not hash, so the test plays the NIC: it puts every frame in
// the queue that the Toeplitz hash with the NIC's default RSS key (the
// 40-byte key of Microsoft's RSS specification, which Intel and Mellanox
// NICs ship as their default) and an even 128-entry redirection table
// choose, computed by DPDK's rte_softrss. The hash itself is checked first
// against the specification's own verification vector.
//
// conf/incast-lossless-1g.yaml: four senders at 1 Gbps into one 1 Gbps
// port, lossless PG 3 (DSCP 26) with PFC, lossy PG 0 (DSCP 8). Worker 1
// owns the receiver's port (egress), worker 0 the senders' ports (their
// queue 0, ingress PGs and PFC); queue 1 of every sender port goes to
// worker 1, which charges the senders' PGs from the credit worker 0
// grants. The test drives both workers from one thread in virtual time
// (poll_worker(0), poll_worker(1), 1 us per round), so a run is exact and
// repeatable. Hosts honour the PFC they receive, as RoCE NICs do.
//
// Checks: every flow's frames land in one queue and both queues carry
// flows; every lossless frame arrives, each flow in order, exactly as with
// one queue; nothing lossless is dropped, XOFF is sent, frames waited for
// credit and requests went out; the only drops are named lossy ones; once
// idle every PG and the shared pool are back to zero (the credit came home)
// and no mbuf is left. A PFC frame arriving on queue 1 reaches the port's
// owner and pauses its egress.
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_thash.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/switch_config.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "proto/build.hpp"
#include "proto/mac_control.hpp"
#include "qos/pause_timer.hpp"
#include "rocelab_version.h"
#include "switch/switch_pipeline.hpp"

using namespace rocelab;

namespace {

// Microsoft's RSS verification key (the default RSS key of most NICs).
constexpr std::uint8_t nic_default_key[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

std::uint32_t toeplitz_v4(std::uint32_t src, std::uint32_t dst, std::uint16_t sport, std::uint16_t dport) {
    rte_ipv4_tuple t{};
    t.src_addr = src;  // host order (rte_softrss's convention)
    t.dst_addr = dst;
    t.sport = sport;
    t.dport = dport;
    return rte_softrss(reinterpret_cast<std::uint32_t*>(&t), RTE_THASH_V4_L4_LEN, nic_default_key);
}

// The queue a NIC puts the frame in: an even redirection table of 128 entries.
unsigned nic_queue(std::uint32_t hash, unsigned queues) { return (hash & 127u) % queues; }

void init_eal() {
    static bool done = false;
    if (done) { return; }
    done = true;
    std::string prefix = "--file-prefix=rss_test" + std::to_string(::getpid());
    std::vector<std::string> args = {"rss_test", "--no-huge", "-m", "512", "--no-pci", "-l", "0", prefix,
                                     "--log-level=lib.eal:error", "--no-telemetry"};
    std::vector<char*> argv;
    for (auto& a : args) { argv.push_back(a.data()); }
    auto r = dpdk::eal_init(static_cast<int>(argv.size()), argv.data());
    ASSERT_TRUE(std::holds_alternative<int>(r)) << std::get<std::string>(r);
    std::atexit([] { dpdk::eal_cleanup(); });
}

constexpr std::size_t n_ports = 5;  // Ethernet0 (receiver), Ethernet1..4 (senders)
constexpr int flows_per_host = 8;
constexpr std::uint32_t frames_per_flow = 120;
constexpr std::uint32_t payload = 1024;

mac_addr host_mac(std::size_t i) { return {0x02, 0x48, 0, 0, 0, static_cast<std::uint8_t>(i + 1)}; }

struct flow {
    std::size_t host = 0;
    std::uint16_t sport = 0;
    bool lossless = true;
    unsigned queue = 0;   // the RSS queue its frames go to
    std::uint32_t next = 0;  // next PSN to send
};

struct run_result {
    std::map<std::uint16_t, std::vector<std::uint32_t>> got;  // sport -> PSNs received, in order
    std::array<unsigned, 2> flows_per_queue{};
    std::uint64_t lossless_sent = 0, lossy_sent = 0, lossy_got = 0;
    std::uint64_t xoff_to_hosts = 0;
    std::uint64_t drops_lossless = 0, drops_lossy_named = 0, drops_other = 0;
    std::uint64_t rss_parked = 0, rss_requests = 0, rss_to_owner = 0, handed_out = 0;
    std::uint64_t credits_home = 0;  // credit messages worker 1 sent to worker 0 (the senders' ports' owner)
    std::uint64_t pg_use_after = 0, pool_used_after = 0;
    std::uint64_t peak_pg3 = 0;
    unsigned mbufs_left = 0;
    std::uint64_t owner_pfc_rx = 0;  // PFC frames the owner took from queue 1 (probe)
    bool complete = false;
};

class rss_bed {
public:
    rss_bed(const std::string& tag, unsigned queues) : _queues(queues) {
        auto cfg_r = load_switch_cfg(std::string(ROCELAB_SOURCE_DIR) + "/conf/incast-lossless-1g.yaml");
        EXPECT_TRUE(cfg_r.ok());
        if (!cfg_r.ok()) { return; }
        cfg = *cfg_r;
        cfg.burst = 2;  // small bursts: a host's back-to-back frames span several polls
        pool = rte_pktmbuf_pool_create(("rss_" + tag).c_str(), 32767, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        EXPECT_NE(pool, nullptr);
        std::vector<sw::port_binding> bindings;
        for (std::size_t i = 0; i < n_ports; ++i) {
            std::vector<rte_ring*> rx;
            for (unsigned q = 0; q < queues; ++q) {
                rx.push_back(rte_ring_create((tag + "_h2s" + std::to_string(i) + "_" + std::to_string(q)).c_str(), 4096,
                                             0, RING_F_SP_ENQ | RING_F_SC_DEQ));
                _rings.push_back(rx.back());
            }
            rte_ring* tx = rte_ring_create((tag + "_s2h" + std::to_string(i)).c_str(), 8192, 0,
                                           RING_F_SP_ENQ | RING_F_SC_DEQ);
            _rings.push_back(tx);
            h2s.push_back(rx);
            s2h.push_back(tx);
            const int id = rte_eth_from_rings((tag + "_sw" + std::to_string(i)).c_str(), rx.data(), queues, &tx, 1, 0);
            EXPECT_GE(id, 0);
            dpdk::port_params pp;
            pp.port_id = static_cast<std::uint16_t>(id);
            pp.pool = pool;
            pp.rx_queues = static_cast<std::uint16_t>(queues);
            dpdk::port_info info;
            EXPECT_EQ(dpdk::port_open(pp, info), "");
            EXPECT_EQ(info.rx_queues, queues);
            EXPECT_FALSE(info.rss) << "net_ring does not hash: " << info.rss_note;
            _ports.push_back(pp.port_id);
            cfg.ports[i].port_id = id;
            sw::port_binding pb;
            pb.port_id = pp.port_id;
            pb.name = cfg.ports[i].name;
            pb.mac = {0x02, 0x5a, 0, 0, 0, static_cast<std::uint8_t>(i + 1)};
            pb.shaped = true;
            pb.line_rate = *cfg.ports[i].speed;
            pb.rx_queues = static_cast<std::uint16_t>(queues);
            bindings.push_back(pb);
        }
        std::vector<std::pair<int, bits_per_sec>> speeds;
        for (std::size_t i = 0; i < n_ports; ++i) { speeds.emplace_back(static_cast<int>(i), bindings[i].line_rate); }
        EXPECT_EQ(resolve_port_speeds(cfg, speeds), "");
        // Worker 1 owns the receiver's port, worker 0 the senders'; queue 1 of
        // each port goes to the other worker.
        auto r = sw::switch_pipeline::create(cfg, bindings, pool, 2, {1, 0, 0, 0, 0});
        if (auto* e = std::get_if<std::string>(&r)) {
            ADD_FAILURE() << *e;
            return;
        }
        pipe = std::move(std::get<0>(r));
    }
    ~rss_bed() {
        if (pipe) { pipe->release_all(); }
        pipe.reset();
        for (auto id : _ports) { dpdk::port_close(id); }
        for (auto* r : _rings) {
            void* m = nullptr;
            while (rte_ring_dequeue(r, &m) == 0) { rte_pktmbuf_free(static_cast<rte_mbuf*>(m)); }
            rte_ring_free(r);
        }
        rte_mempool_free(pool);
    }
    rte_mbuf* frame(std::span<const std::byte> f) {
        rte_mbuf* m = rte_pktmbuf_alloc(pool);
        EXPECT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(f.size())), f.data(), f.size());
        return m;
    }
    bool put(std::size_t port, unsigned q, rte_mbuf* m) {
        if (rte_ring_enqueue(h2s[port][q], m) != 0) {
            rte_pktmbuf_free(m);
            return false;
        }
        return true;
    }
    void poll(nanos now) {
        pipe->poll_worker(0, now);
        pipe->poll_worker(1, now);
    }
    // Three polls in an order drawn from the run's seeded generator (either
    // worker may poll twice in a row, as threads on their own cores do).
    void poll_shuffled(nanos now, std::uint64_t& rng) {
        for (int k = 0; k < 3; ++k) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            pipe->poll_worker((rng >> 33) & 1u, now);
        }
    }

    switch_cfg cfg;
    rte_mempool* pool = nullptr;
    std::unique_ptr<sw::switch_pipeline> pipe;
    std::vector<std::vector<rte_ring*>> h2s;
    std::vector<rte_ring*> s2h;

private:
    unsigned _queues;
    std::vector<rte_ring*> _rings;
    std::vector<std::uint16_t> _ports;
};

std::vector<std::byte> roce_frame(const flow& fl, std::uint32_t psn) {
    roce_v4_params p;
    p.src_mac = host_mac(fl.host);
    p.dst_mac = host_mac(0);
    p.src_ip = ipv4_addr(10, 0, 0, static_cast<std::uint8_t>(fl.host));
    p.dst_ip = ipv4_addr(10, 0, 0, 100);
    p.dscp = fl.lossless ? 26 : 8;
    p.sport = fl.sport;
    p.bth.opcode = 0x0A;  // RDMA WRITE ONLY
    p.bth.dest_qpn = 0x100u + fl.sport;
    p.bth.psn = psn;
    // Messages of 8 packets whose last one is short, as RDMA writes are: a
    // short frame must not overtake a long one of its flow waiting for credit.
    std::vector<std::byte> pl(psn % 8 == 7 ? 64 : payload, std::byte{0x3c});
    p.payload = pl;
    std::vector<std::byte> f(roce_v4_frame_len(p));
    EXPECT_EQ(build_roce_v4(f, p), f.size());
    return f;
}

// load::full: four hosts offer ~17 Gbps each into the 1 Gbps receiver (the
// incast). load::light: host 1 alone sends its lossless flows that RSS puts
// in queue 1 (worker 1's), one frame every 10 us (0.87 Gbps): nothing
// congests, and each frame leaves before the next one arrives.
enum class load { full, light };

run_result run(const std::string& tag, unsigned queues, load ld = load::full) {
    run_result res;
    rss_bed bed(tag, queues);
    EXPECT_TRUE(bed.pipe);
    if (!bed.pipe) { return res; }
    nanos now{1'000'000};
    // The receiver speaks first, so the bridge learns where it is.
    {
        roce_v4_params p;
        p.src_mac = host_mac(0);
        p.dst_mac = host_mac(1);
        p.bth.opcode = 0x04;
        std::vector<std::byte> f(roce_v4_frame_len(p));
        build_roce_v4(f, p);
        bed.put(0, 0, bed.frame(f));
        bed.poll(now);
    }
    std::vector<flow> flows;
    for (std::size_t h = 1; h < n_ports; ++h) {
        for (int k = 0; k <= flows_per_host; ++k) {
            flow fl;
            fl.host = h;
            fl.sport = static_cast<std::uint16_t>(0xC000 + h * 64 + static_cast<std::size_t>(k));
            fl.lossless = k < flows_per_host;  // one lossy flow per host
            // As a NIC with RSS on 2 queues would spread it (the test puts it there).
            fl.queue = nic_queue(toeplitz_v4(ipv4_addr(10, 0, 0, static_cast<std::uint8_t>(h)), ipv4_addr(10, 0, 0, 100),
                                             fl.sport, udp_port_roce_v2),
                                 2);
            if (ld == load::light && (h != 1 || !fl.lossless || fl.queue != 1)) { fl.next = frames_per_flow; }
            if (fl.lossless && fl.next < frames_per_flow) { ++res.flows_per_queue[fl.queue]; }  // flows that send
            flows.push_back(fl);
        }
    }
    std::array<pause_timer, n_ports> pause;
    std::array<std::size_t, n_ports> turn{};
    std::uint64_t rng = 0x5eed;  // the run's one generator: host bursts and poll order
    const bits_per_sec rate{1'000'000'000};
    rte_mbuf* b[64];
    for (int round = 0; round < 400'000; ++round) {
        now = now + nanos{1000};
        // Hosts: PFC first (a NIC reacts per frame), then 1 to 3 frames each
        // per microsecond (~17 Gbps offered per host), in runs of 8 frames
        // of one flow (a QP sends back to back), round robin over flows.
        for (std::size_t h = 1; h < n_ports; ++h) {
            unsigned n;
            while ((n = rte_ring_dequeue_burst(bed.s2h[h], reinterpret_cast<void**>(b), 64, nullptr)) != 0) {
                for (unsigned i = 0; i < n; ++i) {
                    const auto* d = rte_pktmbuf_mtod(b[i], const std::byte*);
                    if (load_be16(d + 12) == 0x8808) {
                        const mac_control_cview v(d + 14);
                        if (v.opcode() == mac_control_op_pfc) {
                            pause[h].on_pfc(now, v.class_enable(), v.pfc_times(), rate);
                            if ((v.class_enable() & 8u) != 0 && v.pfc_time(3) != 0) { ++res.xoff_to_hosts; }
                        }
                    }
                }
                rte_pktmbuf_free_bulk(b, n);
            }
            const bool paused3 = (pause[h].paused_mask(now) >> 3 & 1u) != 0;
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            const std::uint64_t frames = ld == load::full ? 1 + (rng >> 40) % 6 : round % 10 == 0 ? 1 : 0;
            for (std::uint64_t burst = frames; burst != 0; --burst) {
                for (std::size_t tries = 0; tries <= flows_per_host; ++tries) {
                    flow& fl = flows[(h - 1) * (flows_per_host + 1) + turn[h]];
                    if (fl.next >= frames_per_flow || (fl.lossless && paused3)) {
                        turn[h] = (turn[h] + 1) % (flows_per_host + 1);
                        continue;
                    }
                    const auto f = roce_frame(fl, fl.next);
                    const unsigned q = queues == 1 ? 0 : fl.queue;
                    if (!bed.put(h, q, bed.frame(f))) { break; }  // the "wire" is full: try later
                    ++fl.next;
                    ++(fl.lossless ? res.lossless_sent : res.lossy_sent);
                    if (fl.next % 8 == 0) { turn[h] = (turn[h] + 1) % (flows_per_host + 1); }
                    break;
                }
            }
        }
        bed.poll_shuffled(now, rng);
        for (std::size_t i = 1; i < n_ports; ++i) {
            res.peak_pg3 = std::max(res.peak_pg3, bed.pipe->pg_use(i, 3));
        }
        // The receiver.
        unsigned n;
        while ((n = rte_ring_dequeue_burst(bed.s2h[0], reinterpret_cast<void**>(b), 64, nullptr)) != 0) {
            for (unsigned i = 0; i < n; ++i) {
                const auto* d = rte_pktmbuf_mtod(b[i], const std::byte*);
                if (load_be16(d + 12) != 0x0800) { continue; }
                const std::uint16_t sport = load_be16(d + 34);
                const std::uint32_t psn = load_be32(d + 42 + 8) & 0xFFFFFFu;
                if ((static_cast<std::uint8_t>(d[15]) >> 2) == 26) {
                    res.got[sport].push_back(psn);
                } else {
                    ++res.lossy_got;
                }
            }
            rte_pktmbuf_free_bulk(b, n);
        }
        std::uint64_t got = 0;
        for (const auto& [s, v] : res.got) { got += v.size(); }
        bool all_sent = true;
        for (const auto& fl : flows) { all_sent = all_sent && fl.next == frames_per_flow; }
        if (all_sent && got == res.lossless_sent) {
            res.complete = true;
            // Idle for 100 us: held credit goes home.
            for (int k = 0; k < 100; ++k) {
                now = now + nanos{1000};
                bed.poll(now);
                for (std::size_t h = 0; h < n_ports; ++h) {
                    while ((n = rte_ring_dequeue_burst(bed.s2h[h], reinterpret_cast<void**>(b), 64, nullptr)) != 0) {
                        rte_pktmbuf_free_bulk(b, n);
                    }
                }
            }
            break;
        }
    }
    for (std::size_t i = 0; i < n_ports; ++i) {
        const sw::port_counters c = bed.pipe->counters(i);
        for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
            const auto why = static_cast<sw::drop_reason>(r);
            const std::uint64_t v = c.drops[r];
            if (why == sw::drop_reason::lossy_pg_limit || why == sw::drop_reason::tail_drop) {
                res.drops_lossy_named += v;
            } else if (why == sw::drop_reason::headroom_overflow) {
                res.drops_lossless += v;
            } else {
                res.drops_other += v;
            }
        }
        for (int g = 0; g < 8; ++g) { res.pg_use_after += bed.pipe->pg_use(i, g); }
    }
    res.pool_used_after = bed.pipe->buffer_pool().shared_used;
    for (std::size_t k = 0; k < 2; ++k) {
        const sw::worker_stats ws = bed.pipe->worker_figures(k);
        res.rss_parked += ws.rss_parked;
        res.rss_requests += ws.rss_requests;
        res.rss_to_owner += ws.rss_to_owner;
        res.handed_out += ws.handed_out;
    }
    res.credits_home = bed.pipe->worker_figures(1).credits_out;
    // A PFC frame from the peer of Ethernet1 on queue 1 (worker 1's): the
    // owner (worker 0) must take it and pause the port's egress.
    if (queues == 2) {
        std::array<std::byte, 60> pfc{};
        const std::array<std::uint16_t, 8> quanta{0, 0, 0, 0xFFFF, 0, 0, 0, 0};
        build_pfc(pfc.data(), host_mac(1), 0x08, quanta);
        const std::uint64_t before = bed.pipe->pfc(1, now).rx_frames[3];
        bed.put(1, 1, bed.frame(pfc));
        for (int k = 0; k < 3; ++k) {
            now = now + nanos{1000};
            bed.poll(now);
        }
        res.owner_pfc_rx = bed.pipe->pfc(1, now).rx_frames[3] - before;
        res.rss_to_owner += bed.pipe->worker_figures(1).rss_to_owner - 0;
    }
    bed.pipe->release_all();
    for (std::size_t h = 0; h < n_ports; ++h) {
        unsigned n;
        while ((n = rte_ring_dequeue_burst(bed.s2h[h], reinterpret_cast<void**>(b), 64, nullptr)) != 0) {
            rte_pktmbuf_free_bulk(b, n);
        }
    }
    res.mbufs_left = rte_mempool_in_use_count(bed.pool);
    return res;
}

TEST(rss, toeplitz_matches_the_rss_specification_vector) {
    init_eal();
    // Microsoft's "Verifying the RSS hash calculation": destination
    // 161.142.100.80:1766, source 66.9.149.187:2794, IPv4 + TCP -> 0x51ccc178.
    EXPECT_EQ(toeplitz_v4(RTE_IPV4(66, 9, 149, 187), RTE_IPV4(161, 142, 100, 80), 2794, 1766), 0x51ccc178u);
    EXPECT_EQ(toeplitz_v4(RTE_IPV4(199, 92, 111, 2), RTE_IPV4(65, 69, 140, 83), 14230, 4739), 0xc626b0eau);
}

TEST(rss, two_queues_over_two_workers_lossless_in_order_as_one_queue) {
    init_eal();
    const run_result one = run("q1", 1);
    const run_result two = run("q2", 2);
    for (const run_result* r : {&one, &two}) {
        const char* which = r == &one ? "one queue" : "two queues";
        SCOPED_TRACE(which);
        EXPECT_TRUE(r->complete) << "every lossless frame sent must arrive";
        EXPECT_EQ(r->lossless_sent, 4u * flows_per_host * frames_per_flow);
        for (const auto& [sport, psns] : r->got) {
            ASSERT_EQ(psns.size(), frames_per_flow) << "flow " << sport;
            for (std::uint32_t k = 0; k < frames_per_flow; ++k) { ASSERT_EQ(psns[k], k) << "flow " << sport << " out of order"; }
        }
        EXPECT_EQ(r->got.size(), 4u * flows_per_host);
        EXPECT_EQ(r->drops_lossless, 0u);
        EXPECT_EQ(r->drops_other, 0u);
        EXPECT_GT(r->xoff_to_hosts, 0u) << "the incast must congest and pause the senders";
        EXPECT_EQ(r->lossy_got + r->drops_lossy_named, r->lossy_sent) << "lossy frames arrive or are dropped by name";
        EXPECT_EQ(r->pg_use_after, 0u) << "every PG back to zero once idle (credit returned)";
        EXPECT_EQ(r->pool_used_after, 0u);
        EXPECT_EQ(r->mbufs_left, 0u) << "no mbuf leaked";
    }
    // RSS spread the flows over both queues, and queue 1 really ran on worker
    // 1 under credit: frames waited for it and requests went out.
    EXPECT_GT(two.flows_per_queue[0], 4u);
    EXPECT_GT(two.flows_per_queue[1], 4u);
    EXPECT_GT(two.rss_parked, 0u);
    EXPECT_GT(two.rss_requests, 0u);
    EXPECT_EQ(one.rss_parked, 0u);
    // The same result as one queue: every flow, every frame, in order.
    EXPECT_EQ(one.got, two.got);
    // Worker 0 hands the receiver's frames to worker 1 only for queue 0's
    // flows with two queues: fewer frames cross workers.
    EXPECT_LT(two.handed_out, one.handed_out);
    EXPECT_EQ(two.owner_pfc_rx, 1u) << "a PFC frame on queue 1 acts on the port's owner";
    EXPECT_GE(two.rss_to_owner, 1u);
    std::printf("[rss] one queue: handed out %llu, credits home %llu; two queues: handed out %llu, credits home "
                "%llu, parked %llu, requests %llu, peak PG3 use %llu B (one queue %llu B), XOFF to hosts %llu / %llu\n",
                (unsigned long long)one.handed_out, (unsigned long long)one.credits_home,
                (unsigned long long)two.handed_out, (unsigned long long)two.credits_home,
                (unsigned long long)two.rss_parked, (unsigned long long)two.rss_requests,
                (unsigned long long)two.peak_pg3, (unsigned long long)one.peak_pg3,
                (unsigned long long)two.xoff_to_hosts, (unsigned long long)one.xoff_to_hosts);
}

// Without congestion, an RSS queue's worker reuses the credit its frames
// give back when they leave (release_frame keeps up to a chunk, as a grant
// gives one): after the first grant its frames need no request, and the
// credit goes home once, when the queue is idle. Sending each release home
// instead costs a request every chunk's worth of frames (16 KiB: ~15 frames
// here) and a credit message per release.
TEST(rss, an_uncongested_queue_reuses_its_credit) {
    init_eal();
    const run_result r = run("light", 2, load::light);
    ASSERT_GT(r.flows_per_queue[1], 0u) << "host 1 has no flow that RSS puts in queue 1";
    EXPECT_TRUE(r.complete);
    EXPECT_GE(r.lossless_sent, 120u);
    EXPECT_EQ(r.drops_lossless + r.drops_other + r.drops_lossy_named, 0u);
    EXPECT_EQ(r.xoff_to_hosts, 0u) << "0.87 Gbps into 1 Gbps must not congest";
    EXPECT_EQ(r.pg_use_after, 0u) << "the held credit went home once idle";
    EXPECT_EQ(r.pool_used_after, 0u);
    EXPECT_EQ(r.mbufs_left, 0u);
    // The first frame of the queue waits for the first grant; none after it.
    // Credit goes home only as a release above the chunk (the first grant
    // carries the frame's charge and a chunk) and once idle: a handful of
    // messages, not one per release.
    EXPECT_LE(r.rss_requests, 1u) << "frames " << r.lossless_sent;
    EXPECT_LE(r.credits_home, 4u) << "frames " << r.lossless_sent;
    std::printf("[rss] light load: %llu frames through queue 1, requests %llu, credit messages home %llu\n",
                (unsigned long long)r.lossless_sent, (unsigned long long)r.rss_requests,
                (unsigned long long)r.credits_home);
}

}  // namespace
