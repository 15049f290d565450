// gen_capture_tx_test.cpp - rocelab-gen's --pcap-out must copy a transmitted
// frame before the driver owns it.
//
// After rte_eth_tx_burst() the mbufs belong to the PMD: memif and pcap copy
// and free them at once, net_ring hands them to whoever dequeues the ring,
// and a freed mbuf can be reallocated and rewritten. A capture tap placed
// after tx_burst reads memory it no longer owns (the defect fixed in
// gen_pipeline::tx_port: frames are now tapped before rte_eth_tx_burst).
//
// The test makes that race visible: the generator (tx-only, unshaped, one
// net_ring port, --pcap-out) runs on the main lcore; a "wire" on the worker
// lcore dequeues the port's TX ring as fast as it can, overwrites each
// frame (poison) and frees it. Every frame in the capture must then still be
// an intact RoCEv2 frame: parse_frame ok and the ICRC verifies. With the tap
// after tx_burst, captured frames carry the poison.
//
// Two payload modes: `copy` (every byte of a frame is written per frame, so
// the wire poisons the whole frame) and `prefilled` (the payload sits in a
// second pool written once at start-up and never again, as a NIC never
// writes a TX buffer; the wire poisons only what the generator writes per
// frame: the headers before the payload and the ICRC after it).
//
// gen_pacing: the pipeline wires gen_tx_opts::pace_ahead into each QP's
// pacer (frames one poll may send at high rates; see below).
//
// gen_pacing.the_burst_loop_...: a QP's frames sent in bursts (tx_port's
// loop without per-frame checks) equal those of the checked loop.
//
// gen_reply: an IPv4 ACK is built in a received mbuf with less room than
// the responder's reply template copies (see below).
#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "config/gen_config.hpp"
#include "dpdk/capture.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "gen/gen_pipeline.hpp"
#include "proto/bth.hpp"
#include "proto/parse.hpp"

namespace rocelab {
namespace {

struct wire_ctl {
    rte_ring* ring = nullptr;
    bool whole_frame = true;  // poison every byte, or only what the generator writes per frame
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> frames{0};
};

// Worker lcore: the far end of the TX ring. Takes every frame as soon as it
// is there, poisons it and frees it.
int wire_main(void* arg) {
    auto* w = static_cast<wire_ctl*>(arg);
    void* objs[64];
    std::uint64_t n_total = 0;
    for (;;) {
        const unsigned n = rte_ring_dequeue_burst(w->ring, objs, 64, nullptr);
        for (unsigned i = 0; i < n; ++i) {
            auto* m = static_cast<rte_mbuf*>(objs[i]);
            auto* p = rte_pktmbuf_mtod(m, std::byte*);
            if (w->whole_frame) {
                std::memset(p, 0xA5, m->data_len);
            } else {
                // Prefilled payloads are shared state written once; the
                // generator writes the headers and the ICRC of every frame.
                const parsed_frame pf = parse_frame(p, m->data_len);
                if (pf.ok() && pf.is_roce && m->data_len >= 4) {
                    std::memset(p, 0xA5, pf.roce_payload_off);
                    std::memset(p + m->data_len - 4, 0xA5, 4);
                } else {
                    std::memset(p, 0xA5, m->data_len);
                }
            }
            rte_pktmbuf_free(m);
        }
        n_total += n;
        if (n == 0 && w->stop.load(std::memory_order_acquire)) {
            break;
        }
    }
    w->frames.store(n_total, std::memory_order_release);
    return 0;
}

struct capture_check {
    std::uint64_t frames = 0;
    std::uint64_t not_roce = 0;
    std::uint64_t bad_icrc = 0;
    std::uint64_t truncated = 0;
};

capture_check read_back(const std::string& path) {
    capture_check r;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    EXPECT_NE(p, nullptr) << err;
    if (p == nullptr) {
        return r;
    }
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    while (pcap_next_ex(p, &h, &data) == 1) {
        ++r.frames;
        if (h->caplen != h->len) {
            ++r.truncated;
            continue;
        }
        const auto* f = reinterpret_cast<const std::byte*>(data);
        const parsed_frame pf = parse_frame(f, h->caplen);
        if (!pf.ok() || !pf.is_roce) {
            ++r.not_roce;
        } else if (!roce_frame_icrc_ok(f, pf)) {
            ++r.bad_icrc;
        }
    }
    pcap_close(p);
    return r;
}

// A net_ring port for one case: its mbuf pool, its RX and TX rings (the TX
// ring is the wire: whatever the generator sends waits there), opened as
// rocelab-gen opens a port. close() frees what the rings still hold and
// checks that no mbuf is left in use.
struct ring_port {
    rte_mempool* pool = nullptr;
    rte_ring* rx = nullptr;
    rte_ring* tx = nullptr;
    int port = -1;

    // Empty string: open; otherwise what failed.
    std::string open(const std::string& tag, unsigned mbufs) {
        pool = rte_pktmbuf_pool_create(("p_" + tag).c_str(), mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                       static_cast<int>(rte_socket_id()));
        rx = rte_ring_create(("rx_" + tag).c_str(), 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        tx = rte_ring_create(("tx_" + tag).c_str(), 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (pool == nullptr || rx == nullptr || tx == nullptr) { return "pool or rings"; }
        port = rte_eth_from_rings(("r_" + tag).c_str(), &rx, 1, &tx, 1, 0);
        if (port < 0) { return "rte_eth_from_rings"; }
        dpdk::port_params pp;
        pp.port_id = static_cast<std::uint16_t>(port);
        pp.pool = pool;
        pp.max_frame = 1518;
        dpdk::port_info info;
        return dpdk::port_open(pp, info);
    }

    // The default one-to-one QP, both hosts on this port (rocelab-gen
    // --tx-only --dcqcn off), with `flow_rate` when given.
    std::variant<std::unique_ptr<gen::gen_pipeline>, std::string> tx_only_pipeline(gen::gen_tx_opts opts,
                                                                                   const char* flow_rate = nullptr,
                                                                                   const char* window = nullptr,
                                                                                   bits_per_sec line_rate = {}) {
        gen_cfg cfg;
        std::string e = gen_cfg_set(cfg, "dcqcn", "off");
        if (e.empty() && flow_rate != nullptr) { e = gen_cfg_set(cfg, "flow_rate", flow_rate); }
        if (e.empty() && window != nullptr) { e = gen_cfg_set(cfg, "window", window); }
        if (e.empty()) { e = expand_gen_cfg(cfg, 2); }
        if (!e.empty()) { return e; }
        for (auto& h : cfg.hosts) { h.port = 0; }
        opts.tx_only = true;
        gen::port_binding b;
        b.port_id = static_cast<std::uint16_t>(port);
        b.name = "ctx0";
        b.line_rate = line_rate;
        return gen::gen_pipeline::create(cfg, {b}, pool, opts);
    }

    void close() {
        if (port >= 0) { dpdk::port_close(static_cast<std::uint16_t>(port)); }
        void* m = nullptr;
        for (rte_ring* r : {tx, rx}) {
            while (r != nullptr && rte_ring_dequeue(r, &m) == 0) { rte_pktmbuf_free(static_cast<rte_mbuf*>(m)); }
        }
        if (pool != nullptr) { EXPECT_EQ(rte_mempool_in_use_count(pool), 0u); }
        rte_ring_free(rx);
        rte_ring_free(tx);
        rte_mempool_free(pool);
    }
};

void run_case(gen::tx_payload mode, bool whole_frame, const std::string& tag) {
    ring_port rp;
    ASSERT_EQ(rp.open("ctx_" + tag, 8191), "");
    rte_ring* const tx = rp.tx;

    // As rocelab-gen --tx-only --dcqcn off --tx-payload MODE: the default
    // one-to-one QP, both hosts on the one port, 64KiB RC WRITEs, unshaped.
    gen::gen_tx_opts opts;
    opts.payload = mode;
    auto pr = rp.tx_only_pipeline(opts);
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<gen::gen_pipeline>>(pr)) << std::get<std::string>(pr);
    auto pipe = std::move(std::get<0>(pr));

    const std::string dir = ::testing::TempDir() + "rocelab-captx-" + tag + "-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    dpdk::tsc_clock clk;
    const std::int64_t wall0 = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count() -
                               clk.now().v;
    auto cr = dpdk::capture::open(dir, {"ctx0"}, 2048, wall0, "t" + tag);
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<dpdk::capture>>(cr)) << std::get<std::string>(cr);
    auto cap = std::move(std::get<0>(cr));
    pipe->set_capture(cap.get());

    wire_ctl w;
    w.ring = tx;
    w.whole_frame = whole_frame;
    const unsigned worker = rte_get_next_lcore(-1, 1, 0);
    ASSERT_LT(worker, RTE_MAX_LCORE) << "needs two lcores (-l 0-1)";
    ASSERT_EQ(rte_eal_remote_launch(wire_main, &w, worker), 0);

    // 1.5 s of generator polls on this lcore; the capture is drained here too
    // (between polls, as rocelab-gen's control thread would).
    const nanos end = clk.now() + nanos{1'500'000'000};
    std::uint64_t polls = 0;
    while (clk.now() < end) {
        pipe->poll(clk.now());
        if ((++polls & 63) == 0) {
            cap->drain();
        }
    }
    w.stop.store(true, std::memory_order_release);
    rte_eal_wait_lcore(worker);
    pipe->set_capture(nullptr);
    while (cap->drain() != 0) {
    }
    cap->flush();
    const std::uint64_t captured = cap->captured();
    const std::uint64_t dropped = cap->dropped();
    cap.reset();  // closes the pcap files

    const capture_check c = read_back(dir + "/ctx0-tx.pcap");
    std::printf("[%s] the wire took %llu frames; captured %llu (%llu not, capture ring or pool full); read back "
                "%llu: not RoCE %llu, bad ICRC %llu, truncated %llu\n",
                tag.c_str(), static_cast<unsigned long long>(w.frames.load()),
                static_cast<unsigned long long>(captured), static_cast<unsigned long long>(dropped),
                static_cast<unsigned long long>(c.frames), static_cast<unsigned long long>(c.not_roce),
                static_cast<unsigned long long>(c.bad_icrc), static_cast<unsigned long long>(c.truncated));
    EXPECT_GT(w.frames.load(), 100000u) << "the wire did not run";
    EXPECT_EQ(c.frames, captured);
    EXPECT_GT(c.frames, 10000u);
    EXPECT_EQ(c.truncated, 0u);
    EXPECT_EQ(c.not_roce, 0u) << "captured frames carry the wire's poison: tapped after the driver owned them";
    EXPECT_EQ(c.bad_icrc, 0u) << "captured frames carry the wire's poison: tapped after the driver owned them";

    pipe->release_all();
    pipe.reset();
    rp.close();
    std::filesystem::remove_all(dir);
}

TEST(gen_capture, tx_frames_are_captured_before_the_driver_owns_them_copy) {
    run_case(gen::tx_payload::copy, true, "copy");
}

TEST(gen_capture, tx_frames_are_captured_before_the_driver_owns_them_prefilled) {
    run_case(gen::tx_payload::prefilled, false, "pf");
}

// ---- pacing tolerance (gen_tx_opts::pace_ahead) ----
//
// rocelab-gen lets each QP's frames go up to pace_ahead (1 us) ahead of
// their paced times, so that one real-time poll can send a burst at high
// rates; rocelab-fabric sets it to 0 (exact pacing in virtual time). The
// shaper's rule is unit-tested (qos: shaper.min_tolerance_...); this checks
// the pipeline wires it: one QP, tx-only, DCQCN off, on an unshaped port
// whose TX ring nobody drains, polled 8 times at one instant. The frames
// sent then are what the QP's tolerance allows: with 1 us at 400Gbps,
// 1 us x 400Gbps / (1082 B + 24 B of wire overhead) = 45.2, so 46 (the
// unit test's figure); with 2 frames of tolerance (pace_ahead 0, or 1 us at
// 10Gbps, which is 1.1 frames) 2 or 3.
std::uint64_t frames_at_one_instant(const char* rate, nanos pace_ahead, const std::string& tag) {
    ring_port rp;
    const std::string e = rp.open("pa_" + tag, 4095);
    EXPECT_EQ(e, "");
    std::uint64_t sent = 0;
    if (e.empty()) {
        gen::gen_tx_opts opts;
        opts.pace_ahead = pace_ahead;
        auto pr = rp.tx_only_pipeline(opts, rate);  // the QP's pacing rate
        EXPECT_TRUE(std::holds_alternative<std::unique_ptr<gen::gen_pipeline>>(pr));
        if (std::holds_alternative<std::unique_ptr<gen::gen_pipeline>>(pr)) {
            auto pipe = std::move(std::get<0>(pr));
            const nanos t{1'000'000'000};
            for (int i = 0; i < 8; ++i) { pipe->poll(t); }
            sent = rte_ring_count(rp.tx);
            pipe->release_all();
        }
    }
    rp.close();
    return sent;
}

TEST(gen_pacing, a_poll_sends_a_burst_at_400gbps_with_the_default_pace_ahead) {
    EXPECT_EQ(gen::gen_tx_opts{}.pace_ahead, nanos{1000});
    const std::uint64_t n = frames_at_one_instant("400Gbps", gen::gen_tx_opts{}.pace_ahead, "d400");
    EXPECT_GE(n, 45u);
    EXPECT_LE(n, 47u);
}

TEST(gen_pacing, without_pace_ahead_or_at_10gbps_two_frames_of_tolerance) {
    const std::uint64_t exact = frames_at_one_instant("400Gbps", nanos{0}, "z400");
    EXPECT_GE(exact, 2u);
    EXPECT_LE(exact, 3u);
    const std::uint64_t slow = frames_at_one_instant("10Gbps", gen::gen_tx_opts{}.pace_ahead, "d10");
    EXPECT_GE(slow, 2u);
    EXPECT_LE(slow, 3u);
}

// ---- the visit's burst loop (gen_tx.cpp, tx_port) ----
//
// A QP that only its pacer and the port's line cap can hold (no credits, no
// reaction point counting bytes) sends its frames of a visit in bursts:
// all of them when unshaped, else as many as shaper::frames_at says both
// let go, without the per-frame checks. gen_tx_opts::per_frame_checks sends
// every frame through the checked loop instead. Polled at the same
// instants, both must send the same frames, byte for byte, in the same
// order and the same number in each poll (PSNs, AckReq, IPv4 id and
// checksum, ICRC, the self-acknowledged windows of --tx-only): unshaped, a
// QP paced at 400Gbps, a port capped at 100Gbps, and both (the QP at 400Gbps
// on a port capped at 200Gbps), each with the default window and with one of
// 7 packets (it fills within a visit: acknowledged, and the visit goes on).
std::vector<std::vector<std::byte>> frames_of(const char* flow_rate, const char* window,
                                              bits_per_sec line_rate, bool checked, const std::string& tag,
                                              std::vector<std::size_t>& per_poll) {
    std::vector<std::vector<std::byte>> got;
    ring_port rp;
    const std::string e = rp.open("fl_" + tag, 4095);
    EXPECT_EQ(e, "");
    if (!e.empty()) {
        return got;
    }
    gen::gen_tx_opts opts;
    opts.per_frame_checks = checked;
    auto pr = rp.tx_only_pipeline(opts, flow_rate, window, line_rate);
    EXPECT_TRUE(std::holds_alternative<std::unique_ptr<gen::gen_pipeline>>(pr));
    if (std::holds_alternative<std::unique_ptr<gen::gen_pipeline>>(pr)) {
        auto pipe = std::move(std::get<0>(pr));
        for (int i = 0; i < 200; ++i) {
            // Polls 1 us apart, and now and then twice at one instant.
            pipe->poll(nanos{1'000'000'000 + std::int64_t{i} * 1000 - (i % 7 == 3 ? 1000 : 0)});
            void* obj = nullptr;
            std::size_t k = 0;
            while (rte_ring_dequeue(rp.tx, &obj) == 0) {
                auto* m = static_cast<rte_mbuf*>(obj);
                const auto* b = rte_pktmbuf_mtod(m, const std::byte*);
                got.emplace_back(b, b + m->data_len);
                rte_pktmbuf_free(m);
                ++k;
            }
            per_poll.push_back(k);
        }
        pipe->release_all();
    }
    rp.close();
    return got;
}

TEST(gen_pacing, the_burst_loop_sends_what_the_checked_loop_sends) {
    struct shaping {
        const char* qp_rate;
        std::uint64_t line_gbps;
        std::size_t min_frames;
        std::size_t max_frames;
    };
    // 200 polls of up to 32 frames (6400); at 100Gbps, 1082-byte frames (+24 B of
    // wire overhead): 11.3 a microsecond.
    const shaping cases[] = {{nullptr, 0, 6400, 6400},
                             {"400Gbps", 0, 4000, 6399},
                             {nullptr, 100, 1500, 3000},
                             {"400Gbps", 200, 3000, 5000}};
    for (const shaping& c : cases) {
        for (const char* window : {static_cast<const char*>(nullptr), "7"}) {
            const std::string name = std::string(c.qp_rate == nullptr ? "unpaced" : c.qp_rate) + ", line " +
                                     std::to_string(c.line_gbps) + "Gbps" +
                                     (window == nullptr ? "" : ", window 7");
            SCOPED_TRACE(name);
            const std::string tag = std::to_string(c.line_gbps) + (c.qp_rate == nullptr ? "u" : "p") +
                                    (window == nullptr ? "d" : "7");
            const bits_per_sec line{c.line_gbps * 1'000'000'000ull};
            std::vector<std::size_t> burst_polls;
            std::vector<std::size_t> checked_polls;
            const auto burst = frames_of(c.qp_rate, window, line, false, "b" + tag, burst_polls);
            const auto checked = frames_of(c.qp_rate, window, line, true, "c" + tag, checked_polls);
            ASSERT_GE(burst.size(), c.min_frames);
            ASSERT_LE(burst.size(), c.max_frames);
            ASSERT_EQ(burst_polls, checked_polls);
            ASSERT_EQ(burst.size(), checked.size());
            std::size_t differ = 0;
            for (std::size_t i = 0; i < burst.size(); ++i) {
                if (burst[i] != checked[i] && differ++ < 3) {
                    ADD_FAILURE() << "frame " << i << " differs";
                }
            }
            EXPECT_EQ(differ, 0u);
            // They decode and carry consecutive PSNs.
            for (std::size_t i = 0; i < burst.size(); ++i) {
                const parsed_frame pf =
                    parse_frame(burst[i].data(), static_cast<std::uint32_t>(burst[i].size()));
                ASSERT_TRUE(pf.ok() && pf.is_roce) << i;
                ASSERT_TRUE(roce_frame_icrc_ok(burst[i].data(), pf)) << i;
                ASSERT_EQ(pf.psn, static_cast<std::uint32_t>(i) & 0xFFFFFFu) << i;
            }
        }
    }
}

// ---- a reply in a small buffer (gen_responder.hpp) ----
//
// The responder builds an IPv4 ACK in the mbuf the data frame came in. The
// QP's template (proto/ack_template.hpp) copies a fixed 72 bytes; the ACK
// itself is 62. A buffer with 62..71 bytes of room must still get its ACK,
// built field by field, not be dropped as drop_reply_full. The frame: the
// generator's own first data frame (SEND ONLY, 8 bytes of payload: 66 bytes),
// copied into an mbuf of a pool whose buffers hold 68 bytes after the
// headroom, and given back to the responder on the port's RX ring. The ACK
// must come out in that mbuf, 62 bytes, PSN of the data frame, MSN 1, a
// valid ICRC.
TEST(gen_reply, an_ack_is_built_in_a_buffer_too_small_for_the_template) {
    ring_port rp;
    ASSERT_EQ(rp.open("tight", 4095), "");
    constexpr std::uint16_t room = 68;
    rte_mempool* tight = rte_pktmbuf_pool_create("p_tight_small", 63, 0, 0, RTE_PKTMBUF_HEADROOM + room,
                                                 static_cast<int>(rte_socket_id()));
    ASSERT_NE(tight, nullptr);

    gen_cfg cfg;
    for (const auto& [k, v] : std::vector<std::pair<const char*, const char*>>{
             {"dcqcn", "off"}, {"op", "send"}, {"msg_size", "8B"}, {"flow_rate", "1Gbps"}}) {
        ASSERT_EQ(gen_cfg_set(cfg, k, v), "") << k;
    }
    ASSERT_EQ(expand_gen_cfg(cfg, 2), "");
    for (auto& h : cfg.hosts) { h.port = 0; }
    gen::port_binding b;
    b.port_id = static_cast<std::uint16_t>(rp.port);
    b.name = "tight0";
    auto pr = gen::gen_pipeline::create(cfg, {b}, rp.pool, gen::gen_tx_opts{});
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<gen::gen_pipeline>>(pr)) << std::get<std::string>(pr);
    auto pipe = std::move(std::get<0>(pr));

    const nanos t{1'000'000'000};
    for (int i = 0; i < 4 && rte_ring_count(rp.tx) == 0; ++i) { pipe->poll(t); }
    void* obj = nullptr;
    ASSERT_EQ(rte_ring_dequeue(rp.tx, &obj), 0) << "the generator sent nothing";
    auto* data = static_cast<rte_mbuf*>(obj);
    const auto* dp = rte_pktmbuf_mtod(data, const std::byte*);
    const parsed_frame df = parse_frame(dp, data->data_len);
    ASSERT_TRUE(df.ok() && df.is_roce);
    EXPECT_EQ(df.opcode, 0x04) << "RC SEND ONLY";
    ASSERT_EQ(data->data_len, 66u);

    rte_mbuf* m = rte_pktmbuf_alloc(tight);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->buf_len - m->data_off, room);
    std::memcpy(rte_pktmbuf_mtod(m, std::byte*), dp, data->data_len);
    m->data_len = data->data_len;
    m->pkt_len = data->data_len;
    rte_pktmbuf_free(data);
    while (rte_ring_dequeue(rp.tx, &obj) == 0) { rte_pktmbuf_free(static_cast<rte_mbuf*>(obj)); }
    ASSERT_EQ(rte_ring_enqueue(rp.rx, m), 0);

    for (int i = 0; i < 4; ++i) { pipe->poll(t); }  // the same instant: no new data is due
    unsigned acks = 0;
    while (rte_ring_dequeue(rp.tx, &obj) == 0) {
        auto* a = static_cast<rte_mbuf*>(obj);
        const auto* ap = rte_pktmbuf_mtod(a, const std::byte*);
        const parsed_frame af = parse_frame(ap, a->data_len);
        if (af.ok() && af.is_roce && af.opcode == roce_op::rc_ack) {
            ++acks;
            EXPECT_EQ(a->pool, tight) << "the reply is built in the frame's own mbuf";
            EXPECT_EQ(a->data_len, 62u);
            EXPECT_EQ(af.psn, df.psn);
            const std::byte* aeth = ap + af.bth_off + 12;  // after the 12-byte BTH
            EXPECT_EQ(std::to_integer<unsigned>(aeth[0]) & 0xE0u, 0u) << "AETH syndrome: an ACK";
            EXPECT_EQ((std::to_integer<unsigned>(aeth[1]) << 16) | (std::to_integer<unsigned>(aeth[2]) << 8) |
                          std::to_integer<unsigned>(aeth[3]),
                      1u)
                << "MSN: one message received";
            EXPECT_TRUE(roce_frame_icrc_ok(ap, af));
        }
        rte_pktmbuf_free(a);
    }
    EXPECT_EQ(acks, 1u);
    EXPECT_EQ(pipe->counters(0).drop_reply_full, 0u);
    EXPECT_EQ(pipe->counters(0).tx_acks, 1u);

    pipe->release_all();
    pipe.reset();
    rp.close();
    EXPECT_EQ(rte_mempool_in_use_count(tight), 0u);
    rte_mempool_free(tight);
}

}  // namespace
}  // namespace rocelab

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    std::string prefix = "--file-prefix=captx" + std::to_string(::getpid());
    std::vector<std::string> args = {"gen_capture_tx_test", "--no-huge", "-m",          "512",
                                     "--no-pci",            "-l",        "0-1",         prefix,
                                     "--log-level=lib.eal:error", "--no-telemetry"};
    std::vector<char*> eal_argv;
    for (auto& a : args) {
        eal_argv.push_back(a.data());
    }
    auto r = rocelab::dpdk::eal_init(static_cast<int>(eal_argv.size()), eal_argv.data());
    if (!std::holds_alternative<int>(r)) {
        std::fprintf(stderr, "EAL: %s\n", std::get<std::string>(r).c_str());
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rocelab::dpdk::eal_cleanup();
    return rc;
}
