// vt_harness.hpp - what the virtual-time tests share: EAL start-up, an mbuf
// pool that must be whole again at the end, configs from YAML text, wire
// captures read back (nanosecond pcap, fabric time), exact wire times, and
// drop totals.
#pragma once

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "config/gen_config.hpp"
#include "config/switch_config.hpp"
#include "dpdk/eal.hpp"
#include "vt/fabric.hpp"

namespace rocelab::test {

// EAL once per process: no hugepages, no PCI, one lcore, its own file prefix.
inline void init_vt_eal(const char* prog) {
    static bool done = false;
    if (done) { return; }
    done = true;
    std::string prefix = std::string("--file-prefix=") + prog + std::to_string(::getpid());
    std::vector<std::string> args = {prog, "--no-huge", "-m", "1536", "--no-pci", "-l", "0",
                                     prefix, "--log-level=lib.eal:error", "--no-telemetry"};
    std::vector<char*> argv;
    for (auto& a : args) { argv.push_back(a.data()); }
    auto r = dpdk::eal_init(static_cast<int>(argv.size()), argv.data());
    ASSERT_TRUE(std::holds_alternative<int>(r)) << std::get<std::string>(r);
    std::atexit([] { dpdk::eal_cleanup(); });
}

struct pool_guard {
    rte_mempool* mp = nullptr;
    explicit pool_guard(unsigned n, const char* name) {
        mp = rte_pktmbuf_pool_create(name, n, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    }
    ~pool_guard() {
        if (mp != nullptr) { rte_mempool_free(mp); }
    }
    pool_guard(const pool_guard&) = delete;
    pool_guard& operator=(const pool_guard&) = delete;
    unsigned in_use() const { return rte_mempool_in_use_count(mp); }
};

inline switch_cfg sw_cfg(const std::string& yaml) {
    auto r = load_switch_cfg_from_string(yaml, "test-switch");
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : switch_cfg{};
}
inline gen_cfg g_cfg(const std::string& yaml) {
    auto r = load_gen_cfg_from_string(yaml, "test-gen");
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : gen_cfg{};
}

// One captured frame (untagged IPv4 RoCEv2, PFC, or anything else).
struct rec {
    std::int64_t ns = 0;
    std::uint32_t len = 0;
    std::vector<std::uint8_t> b;
    bool pfc() const { return b.size() >= 14 && b[12] == 0x88 && b[13] == 0x08; }
    bool ipv4() const { return b.size() > 15 && b[12] == 0x08 && b[13] == 0x00; }
    int dscp() const { return ipv4() ? b[15] >> 2 : -1; }
    // BTH (after Ethernet 14 + IPv4 20 + UDP 8).
    int opcode() const { return ipv4() && b.size() > 42 ? b[42] : -1; }
    std::uint32_t psn() const {
        return b.size() > 53 ? (std::uint32_t(b[51]) << 16 | std::uint32_t(b[52]) << 8 | b[53]) : UINT32_MAX;
    }
    bool ack() const { return opcode() == 0x11; }
    bool data() const { return opcode() >= 0 && opcode() <= 0x0B; }  // RC SEND/WRITE first..only
};

inline std::vector<rec> read_pcap(const std::string& path) {
    std::vector<rec> out;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    EXPECT_NE(p, nullptr) << path << ": " << err;
    if (p == nullptr) { return out; }
    pcap_pkthdr* h = nullptr;
    const u_char* d = nullptr;
    while (pcap_next_ex(p, &h, &d) == 1) {
        rec r;
        r.ns = std::int64_t(h->ts.tv_sec) * 1'000'000'000 + h->ts.tv_usec;
        r.len = h->len;
        r.b.assign(d, d + h->caplen);
        out.push_back(std::move(r));
    }
    pcap_close(p);
    return out;
}

// A capture directory, removed however the test ends (a failed ASSERT too).
struct tmp_dir {
    std::string path;
    explicit tmp_dir(const std::string& tag) : path("/tmp/rocelab-vt-" + tag + "-" + std::to_string(::getpid())) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~tmp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    tmp_dir(const tmp_dir&) = delete;
    tmp_dir& operator=(const tmp_dir&) = delete;
};

// Exact wire time of `wire_bytes` (frame + 24 B) at `rate`, rounded up, in ns.
inline std::int64_t wire_ns_ceil_wire(std::uint64_t wire_bytes, bits_per_sec rate) {
    const unsigned __int128 num = (unsigned __int128)wire_bytes * 8u * 1'000'000'000u;
    return static_cast<std::int64_t>((num + rate.v - 1) / rate.v);
}
inline std::int64_t wire_ns_ceil(std::uint32_t len, bits_per_sec rate) { return wire_ns_ceil_wire(len + 24u, rate); }
// The same, exact (rational), in ns.
inline long double wire_ns(std::uint32_t len, bits_per_sec rate) {
    return (long double)(len + 24) * 8.0L * 1e9L / (long double)rate.v;
}

inline std::uint64_t switch_drops(sw::switch_pipeline& s) {
    std::uint64_t n = 0;
    for (std::size_t p = 0; p < s.port_count(); ++p) {
        for (std::size_t r = 0; r < static_cast<std::size_t>(sw::drop_reason::count); ++r) {
            n += s.counters(p).drops[r];
        }
    }
    return n;
}

// Cable losses, RX-ring overflows and wire-storage refusals, over every link.
inline std::uint64_t link_drops(vt::fabric& f) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < f.node_count(); ++i) {
        for (std::size_t p = 0; p < f.port_count(i); ++p) {
            if (const auto* l = f.tx_link(i, static_cast<int>(p))) {
                n += l->counters().lost + l->counters().rx_ring_full + l->counters().tx_refused_wire_full;
            }
        }
    }
    return n;
}

}  // namespace rocelab::test
