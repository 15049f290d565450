// fuzz_common.hpp - helpers shared by the libFuzzer targets in tests/fuzz.
//
// FUZZ_CHECK(cond): an invariant; on violation it prints the condition and
// traps, which libFuzzer reports as a crash (with the input saved).
//
// input_reader splits a fuzz input into fields and frames:
//   u8()      one byte (0 when the input is used up)
//   frame()   a 2-byte little-endian length prefix, then that many bytes
//             (cut to what is left); empty when nothing is left.
//
// The DPDK targets (fuzz_switch_path, fuzz_gen_rx) call init_eal() once from
// LLVMFuzzerInitialize: --no-huge -m 512 --no-pci, one lcore, --in-memory
// (--in-memory is refused with --no-huge; --no-shconf writes no config file) and a
// per-process --file-prefix; EAL is cleaned up at exit. ring_port() makes a
// net_ring ethdev whose RX and TX rings the harness reaches directly: it
// enqueues received frames to `rx` and drains transmitted ones from `tx`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#define FUZZ_CHECK(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            __builtin_trap();                                                             \
        }                                                                                 \
    } while (0)

namespace rocelab::fuzz {

class input_reader {
public:
    input_reader(const std::uint8_t* p, std::size_t n) noexcept : _p(p), _n(n) {}
    bool empty() const noexcept { return _n == 0; }
    std::size_t left() const noexcept { return _n; }
    std::uint8_t u8() noexcept {
        if (_n == 0) { return 0; }
        --_n;
        return *_p++;
    }
    std::uint16_t u16() noexcept {
        const std::uint16_t lo = u8();
        return static_cast<std::uint16_t>(lo | (u8() << 8));
    }
    std::span<const std::uint8_t> frame() noexcept {
        const std::size_t want = u16();
        const std::size_t n = want < _n ? want : _n;
        std::span<const std::uint8_t> s(_p, n);
        _p += n;
        _n -= n;
        return s;
    }
    std::span<const std::uint8_t> rest() noexcept {
        std::span<const std::uint8_t> s(_p, _n);
        _p += _n;
        _n = 0;
        return s;
    }

private:
    const std::uint8_t* _p;
    std::size_t _n;
};

}  // namespace rocelab::fuzz

#ifdef ROCELAB_FUZZ_DPDK
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <unistd.h>

#include <variant>

#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"

namespace rocelab::fuzz {

inline void init_eal(const char* tag) {
    std::vector<std::string> args = {tag,      "--no-huge", "-m", "512", "--no-pci", "-l", "0", "--no-shconf",
                                     "--file-prefix=" + std::string(tag) + std::to_string(::getpid()),
                                     "--log-level=1", "--no-telemetry"};
    std::vector<char*> argv;
    for (auto& a : args) { argv.push_back(a.data()); }
    auto r = dpdk::eal_init(static_cast<int>(argv.size()), argv.data());
    if (!std::holds_alternative<int>(r)) {
        std::fprintf(stderr, "%s: EAL init failed: %s\n", tag, std::get<std::string>(r).c_str());
        std::abort();
    }
    std::atexit([] { dpdk::eal_cleanup(); });
}

struct ring_port {
    std::uint16_t port_id = 0;
    rte_ring* rx = nullptr;  // the harness enqueues here; the port receives
    rte_ring* tx = nullptr;  // the port transmits here; the harness drains
};

inline ring_port make_ring_port(const std::string& name, rte_mempool* pool) {
    ring_port p;
    p.rx = rte_ring_create((name + "_rx").c_str(), 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
    p.tx = rte_ring_create((name + "_tx").c_str(), 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
    FUZZ_CHECK(p.rx != nullptr && p.tx != nullptr);
    const int id = rte_eth_from_rings(name.c_str(), &p.rx, 1, &p.tx, 1, 0);
    FUZZ_CHECK(id >= 0);
    p.port_id = static_cast<std::uint16_t>(id);
    dpdk::port_params pp;
    pp.port_id = p.port_id;
    pp.pool = pool;
    dpdk::port_info info;
    const std::string e = dpdk::port_open(pp, info);
    if (!e.empty()) {
        std::fprintf(stderr, "port %s: %s\n", name.c_str(), e.c_str());
        std::abort();
    }
    return p;
}

// Copies `f` into a fresh single-segment mbuf (cut to the data room);
// nullptr when the pool is empty.
inline rte_mbuf* frame_mbuf(rte_mempool* pool, std::span<const std::uint8_t> f) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) { return nullptr; }
    const std::size_t room = rte_pktmbuf_tailroom(m);
    const std::size_t n = f.size() < room ? f.size() : room;
    char* d = rte_pktmbuf_append(m, static_cast<std::uint16_t>(n));
    FUZZ_CHECK(d != nullptr);
    if (n != 0) { std::memcpy(d, f.data(), n); }
    return m;
}

// Hands one frame to a port's receive ring; frees it if the ring is full.
inline void inject(const ring_port& p, rte_mbuf* m) {
    if (rte_ring_enqueue(p.rx, m) != 0) { rte_pktmbuf_free(m); }
}

// Frees everything the port transmitted; calls look(mbuf) first on each.
template <typename Look>
inline std::size_t drain(const ring_port& p, Look&& look) {
    void* b[64];
    std::size_t t = 0;
    for (;;) {
        const unsigned n = rte_ring_dequeue_burst(p.tx, b, 64, nullptr);
        if (n == 0) { return t; }
        for (unsigned i = 0; i < n; ++i) {
            auto* m = static_cast<rte_mbuf*>(b[i]);
            look(m);
            rte_pktmbuf_free(m);
        }
        t += n;
    }
}
inline std::size_t drain(const ring_port& p) {
    return drain(p, [](rte_mbuf*) {});
}

}  // namespace rocelab::fuzz
#endif
