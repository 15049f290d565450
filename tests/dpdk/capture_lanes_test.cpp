// capture_lanes_test.cpp - dpdk::capture with several producers at once.
//
// Each EAL lcore taps into a lane of its own (a single-producer ring), and
// any other thread into the shared lane (capture.hpp: a multi-producer ring
// made producers wait for each other, whole time slices when two workers
// share a CPU). Here two worker lcores on one CPU (--lcores 0@0,1@1,2@1, as
// the tests run workers) and a thread that is no EAL lcore tap at once,
// each its own numbered frames with interleaved times, and the pcap file is
// read back with libpcap (not with the code under test):
//   - every frame tapped is in the file, once, and counted (captured,
//     dropped) with nothing dropped (the pool holds them all);
//   - each producer's frames are in the order it tapped them;
//   - drained after the producers stop, the lanes are merged oldest first:
//     the file's times increase strictly, across producers.
#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "dpdk/capture.hpp"
#include "eal_once.hpp"

namespace rocelab {
namespace {

constexpr std::uint32_t frames_each = 20000;  // 3 producers: 60000, within the 65535-frame pool at snaplen 128
constexpr int producers = 3;

struct producer_arg {
    dpdk::capture* cap = nullptr;
    rte_mempool* pool = nullptr;
    int id = 0;
    std::atomic<bool>* go = nullptr;
    std::atomic<int>* done = nullptr;
};

// Producer id's frames: 64 bytes, byte 0 its id, bytes 1-4 its sequence
// number; tapped at time seq * producers + id (the producers interleave).
int produce(void* a) {
    auto& p = *static_cast<producer_arg*>(a);
    rte_mbuf* m = rte_pktmbuf_alloc(p.pool);
    if (m == nullptr) { return -1; }
    char* d = rte_pktmbuf_append(m, 64);
    std::memset(d, 0, 64);
    d[0] = static_cast<char>(p.id);
    while (!p.go->load(std::memory_order_acquire)) {}
    for (std::uint32_t s = 0; s < frames_each; ++s) {
        std::memcpy(d + 1, &s, 4);
        p.cap->tap(0, true, m, nanos{static_cast<std::int64_t>(s) * producers + p.id});
    }
    rte_pktmbuf_free(m);
    p.done->fetch_add(1, std::memory_order_release);
    return 0;
}

struct frame_seen {
    std::int64_t ns;
    int id;
    std::uint32_t seq;
};

std::vector<frame_seen> read_back(const std::string& path) {
    std::vector<frame_seen> out;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* pc = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (pc == nullptr) { return out; }
    pcap_pkthdr* h = nullptr;
    const u_char* b = nullptr;
    while (pcap_next_ex(pc, &h, &b) == 1) {
        if (h->caplen < 5) { continue; }
        frame_seen f;
        f.ns = static_cast<std::int64_t>(h->ts.tv_sec) * 1000000000 + h->ts.tv_usec;
        f.id = b[0];
        std::memcpy(&f.seq, b + 1, 4);
        out.push_back(f);
    }
    pcap_close(pc);
    return out;
}

// Runs the three producers (worker lcores 1 and 2, and a std::thread that
// is no EAL lcore); drains meanwhile when `drain_while`, else only after.
std::vector<frame_seen> run(const std::string& tag, bool drain_while, std::uint64_t& captured,
                            std::uint64_t& dropped) {
    test::init_eal_once("caplanes", "0@0,1@1,2@1");
    rte_mempool* pool = rte_pktmbuf_pool_create(("clp_" + tag).c_str(), 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                SOCKET_ID_ANY);
    EXPECT_NE(pool, nullptr);
    const std::string dir = ::testing::TempDir() + "rocelab-caplanes-" + tag + "-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    auto cr = dpdk::capture::open(dir, {"p0"}, 128, 0, "cl" + tag);
    EXPECT_TRUE(std::holds_alternative<std::unique_ptr<dpdk::capture>>(cr));
    if (!std::holds_alternative<std::unique_ptr<dpdk::capture>>(cr) || pool == nullptr) { return {}; }
    auto cap = std::move(std::get<0>(cr));

    std::atomic<bool> go{false};
    std::atomic<int> done{0};
    producer_arg args[producers];
    for (int k = 0; k < producers; ++k) { args[k] = producer_arg{cap.get(), pool, k, &go, &done}; }
    const unsigned w1 = rte_get_next_lcore(-1, 1, 0);
    const unsigned w2 = rte_get_next_lcore(w1, 1, 0);
    EXPECT_LT(w2, RTE_MAX_LCORE) << "needs three lcores (--lcores 0@0,1@1,2@1)";
    if (w2 >= RTE_MAX_LCORE) { return {}; }
    EXPECT_EQ(rte_eal_remote_launch(produce, &args[0], w1), 0);
    EXPECT_EQ(rte_eal_remote_launch(produce, &args[1], w2), 0);
    std::thread other([&] { produce(&args[2]); });  // no EAL lcore: the shared lane
    go.store(true, std::memory_order_release);
    while (done.load(std::memory_order_acquire) < producers) {
        if (drain_while) { cap->drain(); }
    }
    other.join();
    rte_eal_wait_lcore(w1);
    rte_eal_wait_lcore(w2);
    while (cap->drain() != 0) {}
    cap->flush();
    captured = cap->captured();
    dropped = cap->dropped();
    cap.reset();  // closes the file
    rte_mempool_free(pool);
    auto seen = read_back(dir + "/p0-tx.pcap");
    std::filesystem::remove_all(dir);
    return seen;
}

void check_each_producer(const std::vector<frame_seen>& seen) {
    std::int64_t next[producers] = {0, 0, 0};
    for (const frame_seen& f : seen) {
        ASSERT_GE(f.id, 0);
        ASSERT_LT(f.id, producers);
        ASSERT_EQ(f.seq, static_cast<std::uint32_t>(next[f.id])) << "producer " << f.id << "'s frames out of order";
        ASSERT_EQ(f.ns, static_cast<std::int64_t>(f.seq) * producers + f.id) << "the frame's time";
        ++next[f.id];
    }
    for (int k = 0; k < producers; ++k) { EXPECT_EQ(next[k], frames_each) << "producer " << k; }
}

TEST(CaptureLanes, ConcurrentProducersLoseNothingAndKeepTheirOrder) {
    std::uint64_t captured = 0, dropped = 0;
    const auto seen = run("c", true, captured, dropped);
    EXPECT_EQ(dropped, 0u);
    EXPECT_EQ(captured, std::uint64_t{producers} * frames_each);
    EXPECT_EQ(seen.size(), captured);
    check_each_producer(seen);
}

TEST(CaptureLanes, LanesAreMergedOldestFirst) {
    std::uint64_t captured = 0, dropped = 0;
    const auto seen = run("m", false, captured, dropped);
    EXPECT_EQ(dropped, 0u);
    ASSERT_EQ(seen.size(), std::uint64_t{producers} * frames_each);
    check_each_producer(seen);
    for (std::size_t i = 1; i < seen.size(); ++i) {
        ASSERT_LT(seen[i - 1].ns, seen[i].ns) << "frame " << i << ": lanes not merged by time";
    }
}

}  // namespace
}  // namespace rocelab
