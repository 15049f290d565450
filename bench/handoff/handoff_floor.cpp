// handoff_floor - what handing frames between two lcores costs on this
// machine with nothing else done to them: the floor under rocelab-switch's
// 2w-cross (tools/bench_scaling.py), measured the same way.
//
// Two streams, each from a net_pcap infinite_rx port into a net_null port
// (ports 0 -> 1 and 2 -> 3, as bench_scaling's L3 leaf set-up), through
// DPDK's own pieces only: rte_eth_rx_burst, an rte_ring of mbuf pointers
// (single producer, single consumer, bursts), rte_eth_tx_burst.
//
//   io1    one worker lcore: both streams, RX -> TX (bench_scaling's 1w)
//   io2    two worker lcores, a stream each, RX -> TX (2w)
//   cross  two worker lcores; each receives its stream and hands every
//          frame to the other through a ring, which transmits it (2w-cross)
//   grant  the same placement, but only a descriptor crosses: the receiving
//          worker keeps the frame, the egress port's owner answers with a
//          grant (how many of them may go), and the receiving worker sends
//          them on its own TX queue of that port - the frames' cache lines
//          never change CPU (an ingress-queued design, as VOQ switches do)
//
// --touch reads each frame's first data line and writes a word of the mbuf
// on each side (what parsing and a handoff record at least do). Frames a
// full ring or TX queue does not take are freed and counted. The main lcore
// prints the frames sent per window; the result line is the median Mpps.
//
//   handoff_floor --no-huge -m 1024 --no-pci --lcores 0@0,1@0,2@1
//     --vdev=net_pcap0,rx_pcap=a.pcap,infinite_rx=1 --vdev=net_null1,no-rx=1
//     --vdev=net_pcap2,rx_pcap=b.pcap,infinite_rx=1 --vdev=net_null3,no-rx=1
//     -- --mode cross [--touch] [--windows 4] [--window 2] [--warmup 3]
//
// tools/bench_handoff_floor.py runs the three modes alternated and prints
// their ratios next to rocelab-switch's.
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr unsigned burst = 32;

struct alignas(64) worker {
    unsigned id = 0;
    // (RX port, TX port): io modes send what RX gave to that TX port;
    // cross hands it to the other worker (`out`) instead.
    std::vector<std::pair<std::uint16_t, std::uint16_t>> streams;
    rte_ring* out = nullptr;              // cross: to the other worker
    rte_ring* in = nullptr;               // cross: from the other worker
    std::uint16_t in_tx = 0;              // cross: where frames from `in` go
    // grant: the frames stay here (fifo) while `out` carries one descriptor
    // per frame to the egress port's owner, which answers on grant_out with
    // how many may go; they go out on this worker's own TX queue (id).
    rte_ring* grant_out = nullptr;
    rte_ring* grant_in = nullptr;
    std::uint16_t own_tx = 0;
    static constexpr unsigned fifo_slots = 2048;
    std::vector<rte_mbuf*> fifo = std::vector<rte_mbuf*>(fifo_slots);
    std::uint32_t head = 0, tail = 0;
    bool touch = false;
    std::atomic<std::uint64_t> sent{0};
    std::atomic<std::uint64_t> dropped{0};
};

std::atomic<bool> g_stop{false};

inline std::uint64_t touch_burst(rte_mbuf** m, unsigned n) {
    std::uint64_t s = 0;
    for (unsigned i = 0; i < n; ++i) {
        s += *rte_pktmbuf_mtod(m[i], const std::uint8_t*);
        m[i]->hash.rss = static_cast<std::uint32_t>(s);
    }
    return s;
}

void send(std::uint16_t port, rte_mbuf** m, unsigned n, std::uint64_t& sent, std::uint64_t& dropped) {
    const unsigned k = rte_eth_tx_burst(port, 0, m, static_cast<std::uint16_t>(n));
    if (k < n) {
        rte_pktmbuf_free_bulk(m + k, n - k);
        dropped += n - k;
    }
    sent += k;
}

// --mode grant: a descriptor crosses, the frame does not.
int run_grant(worker& w) {
    rte_mbuf* m[burst];
    void* d[burst];
    std::uint64_t sent = 0, dropped = 0, loops = 0, sink = 0;
    const std::uint16_t rx = w.streams[0].first;
    while (!g_stop.load(std::memory_order_relaxed)) {
        unsigned n = rte_eth_rx_burst(rx, 0, m, burst);
        if (n != 0) {
            if (w.touch) { sink += touch_burst(m, n); }
            const unsigned room = worker::fifo_slots - (w.tail - w.head);
            const unsigned k = std::min(n, room);
            std::uint64_t bytes = 0;
            for (unsigned i = 0; i < k; ++i) {
                w.fifo[(w.tail + i) % worker::fifo_slots] = m[i];
                bytes += m[i]->pkt_len;
            }
            w.tail += k;
            if (k < n) {
                rte_pktmbuf_free_bulk(m + k, n - k);
                dropped += n - k;
            }
            // One request per burst: its frames and bytes (what the owner's
            // scheduler needs). The ring holds more than the fifo's frames
            // in requests: never full.
            if (k != 0) {
                d[0] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(bytes << 16 | k));
                (void)rte_ring_sp_enqueue_burst(w.out, d, 1, nullptr);
            }
        }
        // The owner's side: take the other worker's descriptors, grant them.
        n = rte_ring_sc_dequeue_burst(w.in, d, burst, nullptr);
        if (n != 0) {  // granted as asked: one grant per request
            for (unsigned i = 0; i < n; ++i) {
                const auto r = reinterpret_cast<std::uintptr_t>(d[i]);
                sink += r >> 16;
                d[i] = reinterpret_cast<void*>(r & 0xffffu);
            }
            (void)rte_ring_sp_enqueue_burst(w.grant_out, d, n, nullptr);
        }
        // Grants for our frames: send them on our own TX queue.
        void* g[burst];
        const unsigned ng = rte_ring_sc_dequeue_burst(w.grant_in, g, burst, nullptr);
        for (unsigned j = 0; j < ng; ++j) {
            const auto c = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(g[j]));
            for (unsigned i = 0; i < c; ++i) { m[i] = w.fifo[(w.head + i) % worker::fifo_slots]; }
            w.head += c;
            const unsigned k = rte_eth_tx_burst(w.own_tx, static_cast<std::uint16_t>(w.id), m, static_cast<std::uint16_t>(c));
            if (k < c) {
                rte_pktmbuf_free_bulk(m + k, c - k);
                dropped += c - k;
            }
            sent += k;
        }
        if ((++loops & 63u) == 0) {
            w.sent.store(sent, std::memory_order_relaxed);
            w.dropped.store(dropped, std::memory_order_relaxed);
        }
    }
    w.sent.store(sent, std::memory_order_relaxed);
    w.dropped.store(dropped, std::memory_order_relaxed);
    asm volatile("" : : "r"(sink));
    return 0;
}

int run(void* arg) {
    worker& w = *static_cast<worker*>(arg);
    if (w.grant_in != nullptr) { return run_grant(w); }
    rte_mbuf* m[burst];
    std::uint64_t sent = 0, dropped = 0, loops = 0, sink = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        for (const auto& [rx, tx] : w.streams) {
            const unsigned n = rte_eth_rx_burst(rx, 0, m, burst);
            if (n == 0) { continue; }
            if (w.touch) { sink += touch_burst(m, n); }
            if (w.out != nullptr) {
                const unsigned k = rte_ring_sp_enqueue_burst(w.out, reinterpret_cast<void**>(m), n, nullptr);
                if (k < n) {
                    rte_pktmbuf_free_bulk(m + k, n - k);
                    dropped += n - k;
                }
            } else {
                send(tx, m, n, sent, dropped);
            }
        }
        if (w.in != nullptr) {
            const unsigned n = rte_ring_sc_dequeue_burst(w.in, reinterpret_cast<void**>(m), burst, nullptr);
            if (n != 0) {
                if (w.touch) { sink += touch_burst(m, n); }
                send(w.in_tx, m, n, sent, dropped);
            }
        }
        if ((++loops & 63u) == 0) {
            w.sent.store(sent, std::memory_order_relaxed);
            w.dropped.store(dropped, std::memory_order_relaxed);
        }
    }
    w.sent.store(sent, std::memory_order_relaxed);
    w.dropped.store(dropped, std::memory_order_relaxed);
    asm volatile("" : : "r"(sink));  // the reads --touch makes are kept
    return 0;
}

void usage() {
    std::puts(
        "usage: handoff_floor EAL-ARGS -- --mode io1|io2|cross|grant [--touch] [--windows N]\n"
        "                     [--window SECONDS] [--warmup SECONDS]\n"
        "Four ports (pcap RX 0 -> null 1, pcap RX 2 -> null 3) and 1 (io1) or 2\n"
        "worker lcores. Prints the Mpps sent per window and their median.");
}

int port_up(std::uint16_t p, rte_mempool* pool, std::uint16_t txq) {
    rte_eth_conf conf{};
    if (rte_eth_dev_configure(p, 1, txq, &conf) != 0) { return -1; }
    if (rte_eth_rx_queue_setup(p, 0, 1024, static_cast<unsigned>(rte_eth_dev_socket_id(p)), nullptr, pool) != 0) {
        return -1;
    }
    for (std::uint16_t q = 0; q < txq; ++q) {
        if (rte_eth_tx_queue_setup(p, q, 1024, static_cast<unsigned>(rte_eth_dev_socket_id(p)), nullptr) != 0) {
            return -1;
        }
    }
    return rte_eth_dev_start(p);
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {  // before EAL, which has a --help of its own
        if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
            usage();
            return 0;
        }
    }
    const int used = rte_eal_init(argc, argv);
    if (used < 0) {
        std::fprintf(stderr, "handoff_floor: EAL init failed\n");
        return 1;
    }
    argc -= used;
    argv += used;
    std::string mode = "cross";
    bool touch = false;
    int windows = 4;
    double window = 2.0, warmup = 3.0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "handoff_floor: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--mode") {
            mode = next();
        } else if (a == "--touch") {
            touch = true;
        } else if (a == "--windows") {
            windows = std::atoi(next());
        } else if (a == "--window") {
            window = std::atof(next());
        } else if (a == "--warmup") {
            warmup = std::atof(next());
        } else {
            std::fprintf(stderr, "handoff_floor: unknown option %s\n", a.c_str());
            usage();
            return 2;
        }
    }
    if (mode != "io1" && mode != "io2" && mode != "cross" && mode != "grant") {
        std::fprintf(stderr, "handoff_floor: --mode is io1, io2, cross or grant, not %s\n", mode.c_str());
        return 2;
    }
    if (rte_eth_dev_count_avail() != 4) {
        std::fprintf(stderr, "handoff_floor: needs 4 ports (pcap RX 0, null 1, pcap RX 2, null 3), has %u\n",
                     rte_eth_dev_count_avail());
        return 2;
    }
    std::vector<unsigned> lcores;
    unsigned lc;
    RTE_LCORE_FOREACH_WORKER(lc) { lcores.push_back(lc); }
    const std::size_t need = mode == "io1" ? 1 : 2;
    if (lcores.size() < need) {
        std::fprintf(stderr, "handoff_floor: --mode %s needs %zu worker lcores, has %zu\n", mode.c_str(), need,
                     lcores.size());
        return 2;
    }
    // 16K mbufs, as bench_scaling gives rocelab-switch; DPDK's default ops.
    rte_mempool* pool = rte_pktmbuf_pool_create("hf_pool", 16384, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                static_cast<int>(rte_socket_id()));
    if (pool == nullptr) {
        std::fprintf(stderr, "handoff_floor: no mbuf pool\n");
        return 1;
    }
    for (std::uint16_t p = 0; p < 4; ++p) {
        // grant: each worker transmits on its own queue of the sinks.
        const std::uint16_t txq = mode == "grant" && (p == 1 || p == 3) ? 2 : 1;
        if (port_up(p, pool, txq) != 0) {
            std::fprintf(stderr, "handoff_floor: port %u does not start\n", p);
            return 1;
        }
    }
    std::vector<worker> ws(need);
    if (mode == "io1") { ws[0].streams = {{0, 1}, {2, 3}}; }
    if (mode == "io2") {
        ws[0].streams = {{0, 1}};
        ws[1].streams = {{2, 3}};
    }
    if (mode == "cross") {
        rte_ring* a = rte_ring_create("hf_ab", 2048, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
        rte_ring* b = rte_ring_create("hf_ba", 2048, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (a == nullptr || b == nullptr) {
            std::fprintf(stderr, "handoff_floor: no ring\n");
            return 1;
        }
        // Worker 0 receives stream 0 (port 0) and transmits stream 1 (port
        // 3); worker 1 the other way round: every frame crosses.
        ws[0].streams = {{0, 1}};
        ws[0].out = a;
        ws[0].in = b;
        ws[0].in_tx = 3;
        ws[1].streams = {{2, 3}};
        ws[1].out = b;
        ws[1].in = a;
        ws[1].in_tx = 1;
    }
    if (mode == "grant") {
        rte_ring* r[4];
        const char* names[4] = {"hf_d01", "hf_d10", "hf_g01", "hf_g10"};
        for (int i = 0; i < 4; ++i) {
            r[i] = rte_ring_create(names[i], 4096, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
            if (r[i] == nullptr) {
                std::fprintf(stderr, "handoff_floor: no ring\n");
                return 1;
            }
        }
        // Stream 0 (port 0 -> 3) is received by worker 0, whose frames go
        // out port 3, owned by worker 1: worker 1 grants them. And back.
        ws[0].streams = {{0, 3}};
        ws[0].out = r[0];
        ws[1].in = r[0];
        ws[1].grant_out = r[2];
        ws[0].grant_in = r[2];
        ws[0].own_tx = 3;
        ws[1].streams = {{2, 1}};
        ws[1].out = r[1];
        ws[0].in = r[1];
        ws[0].grant_out = r[3];
        ws[1].grant_in = r[3];
        ws[1].own_tx = 1;
    }
    for (std::size_t i = 0; i < ws.size(); ++i) {
        ws[i].id = static_cast<unsigned>(i);
        ws[i].touch = touch;
    }
    for (std::size_t i = 0; i < ws.size(); ++i) { rte_eal_remote_launch(run, &ws[i], lcores[i]); }
    auto total = [&] {
        std::uint64_t s = 0;
        for (auto& w : ws) { s += w.sent.load(std::memory_order_relaxed); }
        return s;
    };
    std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
    std::vector<double> mpps;
    for (int k = 0; k < windows; ++k) {
        const std::uint64_t a = total();
        const auto t0 = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::duration<double>(window));
        const std::uint64_t b = total();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        mpps.push_back(static_cast<double>(b - a) / s / 1e6);
        std::printf("window %d: %.2f Mpps\n", k, mpps.back());
    }
    g_stop.store(true);
    rte_eal_mp_wait_lcore();
    std::uint64_t dropped = 0;
    for (auto& w : ws) { dropped += w.dropped.load(); }
    std::sort(mpps.begin(), mpps.end());
    std::printf("RESULT mode=%s touch=%d median=%.2f Mpps dropped=%llu\n", mode.c_str(), touch ? 1 : 0,
                mpps[mpps.size() / 2], static_cast<unsigned long long>(dropped));
    rte_eal_cleanup();
    return 0;
}
