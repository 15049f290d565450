// fuzz_gen_rx - the generator's receive path (gen_pipeline) fed from memory.
//
// Two generators live in one process, each on its own net_ring ports, built
// once in LLVMFuzzerInitialize (EAL: --no-huge -m 512 --no-pci, one lcore):
//   bed 0  IPv4, pattern incast, 2 senders on ports 0 and 1 into port 2,
//          4KiB messages, PMTU 1024, prefilled payloads.
//   bed 1  IPv6, one-to-one, port 0 -> port 1, copied payloads.
// Input: byte 0: bit 0 picks the bed, bit 1 turns the "wire" on: frames the
// generator transmits are delivered to the port of their destination MAC
// (byte 4 of the generator's host MACs is the port), so ACKs, NAKs and
// retransmissions run as in a real loop between the fuzzed frames. Then
// frames, each a control byte and a 2-byte length-prefixed body:
//   ctl & 15      the port that receives the frame (modulo the ports)
//   ctl bit 4     "fix": recompute the IPv4 header checksum and the RoCE
//                 ICRC, so a mutated frame gets past the ICRC check to the
//                 QPN lookup, the responder and the requester (without it,
//                 the bad-ICRC drop is what is exercised)
//   ctl >> 5      time step added to the fake clock: 0, 100ns, 1us, 10us,
//                 100us, 1ms, 10ms, 100ms
// After each frame poll(now) runs and the TX rings are drained. At the end
// the generator runs a few more polls (on the wire, if on), then
// release_all(); what is left on the rings is freed.
// Invariants (trap): the common mempool's in-use count and the prefilled
// pool's (own_mbufs_in_use) are back to 0: no path leaks an mbuf.
//
// Seeds: with FUZZ_GEN_SEEDS=DIR set, LLVMFuzzerInitialize runs each bed on
// the wire for a while and writes inputs holding real frames it captured
// (a data frame for a live QPN, an ACK for one, a CNP-like mutation) into
// DIR, then exits. tests/fuzz/corpus/fuzz_gen_rx was made that way.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config/gen_config.hpp"
#include "fuzz_common.hpp"
#include "gen/gen_pipeline.hpp"
#include "proto/icrc.hpp"
#include "proto/ipv4.hpp"
#include "proto/parse.hpp"

using namespace rocelab;
using namespace rocelab::fuzz;

namespace {

struct bed {
    std::unique_ptr<gen::gen_pipeline> pipe;
    std::vector<ring_port> ports;
};

rte_mempool* g_pool = nullptr;
bed g_beds[2];
std::int64_t g_now = 1'000'000;

bed make_bed(const std::vector<std::pair<std::string, std::string>>& keys, int nports, gen::tx_payload payload,
             const std::string& tag) {
    gen_cfg c;
    for (const auto& [k, v] : keys) {
        const std::string e = gen_cfg_set(c, k, v);
        if (!e.empty()) {
            std::fprintf(stderr, "fuzz_gen_rx: %s\n", e.c_str());
            std::abort();
        }
    }
    if (auto e = expand_gen_cfg(c, nports); !e.empty()) {
        std::fprintf(stderr, "fuzz_gen_rx: %s\n", e.c_str());
        std::abort();
    }
    bed b;
    std::vector<gen::port_binding> bindings;
    for (int i = 0; i < nports; ++i) {
        ring_port rp = make_ring_port(tag + std::to_string(i), g_pool);
        gen::port_binding pb;
        pb.port_id = rp.port_id;
        pb.name = tag + std::to_string(i);
        pb.line_rate = c.rate;
        bindings.push_back(pb);
        b.ports.push_back(rp);
    }
    gen::gen_tx_opts opts;
    opts.payload = payload;
    auto r = gen::gen_pipeline::create(c, bindings, g_pool, opts);
    if (auto* e = std::get_if<std::string>(&r)) {
        std::fprintf(stderr, "fuzz_gen_rx: %s: %s\n", tag.c_str(), e->c_str());
        std::abort();
    }
    b.pipe = std::move(std::get<0>(r));
    return b;
}

// Transmitted frames: delivered to their destination port (wire on) or freed.
void move_tx(bed& b, bool wire) {
    const std::size_t np = b.ports.size();
    for (const auto& p : b.ports) {
        void* x[64];
        for (;;) {
            const unsigned n = rte_ring_dequeue_burst(p.tx, x, 64, nullptr);
            if (n == 0) { break; }
            for (unsigned i = 0; i < n; ++i) {
                auto* m = static_cast<rte_mbuf*>(x[i]);
                if (wire && rte_pktmbuf_data_len(m) >= 14) {
                    const auto* d = rte_pktmbuf_mtod(m, const std::uint8_t*);
                    inject(b.ports[d[4] % np], m);
                } else {
                    rte_pktmbuf_free(m);
                }
            }
        }
    }
}

// Makes a mutated frame consistent: IPv4 header checksum, then the ICRC.
void fix_frame(std::byte* d, std::uint32_t len) {
    const parsed_frame l3 = parse_frame<parse_depth::l3>(d, len);
    if (l3.ok() && l3.kind == frame_kind::ipv4) {
        const std::uint32_t hlen = (load_u8(d + l3.l3_off) & 0x0Fu) * 4u;
        store_be16(d + l3.l3_off + 10, ipv4_header_checksum(d + l3.l3_off, hlen));
    }
    const parsed_frame pf = parse_frame(d, len);
    if (pf.ok() && pf.is_roce) {
        const std::uint32_t end = pf.l4_off + pf.l4_len;
        icrc_store(d + end - icrc_len,
                   roce_icrc(d + pf.l3_off, end - icrc_len - pf.l3_off, pf.kind == frame_kind::ipv6));
        FUZZ_CHECK(roce_frame_icrc_ok(d, pf));
    }
}

constexpr std::int64_t steps_ns[8] = {0, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000};

void finish(bed& b, bool wire) {
    for (std::int64_t step : {1'000LL, 10'000LL, 100'000LL, 1'000'000LL}) {
        g_now += step;
        b.pipe->poll(nanos{g_now});
        move_tx(b, wire);
    }
    b.pipe->release_all();
    move_tx(b, false);
    // Frames still on RX rings (injected after the last poll) are ours to free.
    for (const auto& p : b.ports) {
        void* m = nullptr;
        while (rte_ring_dequeue(p.rx, &m) == 0) { rte_pktmbuf_free(static_cast<rte_mbuf*>(m)); }
    }
}

// Seed mode: capture real frames from each bed and write inputs.
void write_seeds(const std::string& dir) {
    int n = 0;
    auto put = [&](int bed_i, bool wire, std::uint8_t ctl, const std::vector<std::uint8_t>& f) {
        std::vector<std::uint8_t> in = {static_cast<std::uint8_t>(bed_i | (wire ? 2 : 0)), ctl,
                                        static_cast<std::uint8_t>(f.size()), static_cast<std::uint8_t>(f.size() >> 8)};
        in.insert(in.end(), f.begin(), f.end());
        std::ofstream(dir + "/seed_" + std::to_string(n++), std::ios::binary)
            .write(reinterpret_cast<const char*>(in.data()), static_cast<std::streamsize>(in.size()));
    };
    for (int bi = 0; bi < 2; ++bi) {
        bed& b = g_beds[bi];
        const std::size_t np = b.ports.size();
        std::vector<std::uint8_t> data, ack;
        int data_port = 0, ack_port = 0;
        for (int i = 0; i < 2000 && (data.empty() || ack.empty()); ++i) {
            g_now += 1'000;
            b.pipe->poll(nanos{g_now});
            for (std::size_t pi = 0; pi < np; ++pi) {
                drain(b.ports[pi], [&](rte_mbuf* m) {
                    const auto* d = rte_pktmbuf_mtod(m, const std::uint8_t*);
                    const std::uint32_t len = rte_pktmbuf_data_len(m);
                    const parsed_frame pf = parse_frame(reinterpret_cast<const std::byte*>(d), len);
                    if (!pf.ok() || !pf.is_roce) { return; }
                    const int dst = d[4] % static_cast<int>(np);
                    auto& slot = pf.opcode == roce_op::rc_ack ? ack : data;
                    if (slot.empty() || (pf.opcode != roce_op::rc_ack && pf.psn == 0)) {
                        slot.assign(d, d + len);
                        (pf.opcode == roce_op::rc_ack ? ack_port : data_port) = dst;
                    }
                    // Loop it back so the responder ACKs.
                    rte_mbuf* c = frame_mbuf(g_pool, std::span<const std::uint8_t>(d, len));
                    if (c != nullptr) { inject(b.ports[static_cast<std::size_t>(dst)], c); }
                });
            }
        }
        finish(b, false);
        FUZZ_CHECK(!data.empty() && !ack.empty());
        const std::uint8_t step1us = 2 << 5;
        put(bi, false, static_cast<std::uint8_t>(step1us | data_port), data);
        put(bi, true, static_cast<std::uint8_t>(step1us | 0x10 | data_port), data);
        put(bi, false, static_cast<std::uint8_t>(step1us | ack_port), ack);
        put(bi, true, static_cast<std::uint8_t>(step1us | 0x10 | ack_port), ack);
        // A NAK (AETH syndrome 0x60: PSN sequence error) and a CNP (opcode 0x81), ICRC fixed by ctl.
        const parsed_frame pa = parse_frame(reinterpret_cast<const std::byte*>(ack.data()),
                                            static_cast<std::uint32_t>(ack.size()));
        std::vector<std::uint8_t> nak = ack;
        nak[pa.bth_off + bth_len] = 0x60;
        put(bi, true, static_cast<std::uint8_t>(step1us | 0x10 | ack_port), nak);
        std::vector<std::uint8_t> cnp = data;
        const parsed_frame pd = parse_frame(reinterpret_cast<const std::byte*>(data.data()),
                                            static_cast<std::uint32_t>(data.size()));
        cnp[pd.bth_off] = roce_op::cnp;
        put(bi, false, static_cast<std::uint8_t>(step1us | 0x10 | data_port), cnp);
        // Several frames: the data frame twice (a duplicate), then its ACK.
        std::vector<std::uint8_t> multi = data;
        std::vector<std::uint8_t> hdr = {static_cast<std::uint8_t>(step1us | 0x10 | data_port),
                                         static_cast<std::uint8_t>(data.size()),
                                         static_cast<std::uint8_t>(data.size() >> 8)};
        multi.insert(multi.end(), hdr.begin(), hdr.end());
        multi.insert(multi.end(), data.begin(), data.end());
        put(bi, true, static_cast<std::uint8_t>(step1us | 0x10 | data_port), multi);
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_eal("fuzz_gen_");
    g_pool = rte_pktmbuf_pool_create("fuzz_gen", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    FUZZ_CHECK(g_pool != nullptr);
    const std::vector<std::pair<std::string, std::string>> common = {
        {"rate", "10Gbps"}, {"msg_size", "4KiB"}, {"pmtu", "1024"},  {"outstanding", "2"},
        {"window", "16"},   {"ack_timeout", "1ms"}, {"mbufs", "2048"}, {"seed", "5"}};
    auto v4 = common;
    v4.insert(v4.end(), {{"pattern", "incast"}, {"senders", "2"}});
    auto v6 = common;
    v6.insert(v6.end(), {{"pattern", "one-to-one"}, {"ip_version", "6"}});
    g_beds[0] = make_bed(v4, 3, gen::tx_payload::prefilled, "g4_");
    g_beds[1] = make_bed(v6, 2, gen::tx_payload::copy, "g6_");
    std::atexit([] {
        for (auto& b : g_beds) {
            if (b.pipe) { b.pipe->release_all(); }
            move_tx(b, false);
            b.pipe.reset();
            for (const auto& p : b.ports) { dpdk::port_close(p.port_id); }
        }
    });
    if (const char* dir = std::getenv("FUZZ_GEN_SEEDS")) {
        write_seeds(dir);
        std::exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input_reader in(data, size);
    const std::uint8_t head = in.u8();
    bed& b = g_beds[head & 1u];
    const bool wire = (head & 2u) != 0;
    const std::size_t np = b.ports.size();
    std::vector<std::byte> buf;
    int frames = 0;
    while (!in.empty() && frames < 64) {
        const std::uint8_t ctl = in.u8();
        const auto body = in.frame();
        g_now += steps_ns[ctl >> 5];
        buf.assign(reinterpret_cast<const std::byte*>(body.data()),
                   reinterpret_cast<const std::byte*>(body.data()) + body.size());
        if ((ctl & 0x10u) != 0) { fix_frame(buf.data(), static_cast<std::uint32_t>(buf.size())); }
        rte_mbuf* m = frame_mbuf(
            g_pool, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(buf.data()), buf.size()));
        if (m != nullptr) { inject(b.ports[(ctl & 0x0Fu) % np], m); }
        ++frames;
        b.pipe->poll(nanos{g_now});
        move_tx(b, wire);
    }
    finish(b, wire);
    static const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;
    if (verbose) {  // what the input reached, per port
        for (std::size_t i = 0; i < np; ++i) {
            const auto& c = b.pipe->counters(i);
            std::fprintf(stderr, "port %zu: rx %lu bad_icrc %lu unknown_qpn %lu not_local %lu malformed %lu "
                         "cnp %lu acks %lu naks %lu tx %lu\n", i, c.rx_packets, c.rx_bad_icrc, c.rx_unknown_qpn,
                         c.rx_not_local, c.rx_malformed_total, c.rx_cnp, c.tx_acks, c.tx_naks, c.tx_packets);
        }
        for (std::size_t f = 0; f < b.pipe->flow_count(); ++f) {
            const auto& rq = b.pipe->flow(f).rq.counters();
            const auto& rs = b.pipe->flow(f).rs.counters();
            std::fprintf(stderr, "flow %zu: acks %lu naks %lu retx %lu timeouts %lu | rs packets %lu dup %lu oos %lu\n",
                         f, rq.acks_rx, rq.naks_rx, rq.retx_packets, rq.timeouts, rs.rx_packets, rs.duplicates,
                         rs.out_of_sequence);
        }
    }
    FUZZ_CHECK(rte_mempool_in_use_count(g_pool) == 0);
    FUZZ_CHECK(b.pipe->own_mbufs_in_use() == 0);
    return 0;
}
