// capture.hpp - per-port, per-direction pcap capture written off the data path.
//
// The worker calls tap() for each frame it receives or transmits: the first
// `snaplen` bytes are copied into an mbuf from a dedicated capture pool and put
// on a multi-producer (the switch workers), single-consumer rte_ring. The control thread calls
// drain(), which writes nanosecond-resolution pcap files
// <dir>/<port>-rx.pcap and <dir>/<port>-tx.pcap with libpcap.
// When the ring or the capture pool is full the frame is not captured and
// `dropped` is counted (the data path never waits for the disk).
// Counters: captured, dropped (read by telemetry and the report).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/units.hpp"

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

namespace rocelab::dpdk {

class capture {
public:
    ~capture();
    capture(const capture&) = delete;
    capture& operator=(const capture&) = delete;

    // wall_ns_at_zero: wall-clock ns (CLOCK_REALTIME) corresponding to now == 0.
    static std::variant<std::unique_ptr<capture>, std::string> open(const std::string& dir,
                                                                    const std::vector<std::string>& port_names,
                                                                    std::uint32_t snaplen,
                                                                    std::int64_t wall_ns_at_zero,
                                                                    const std::string& tag);

    // Data path (one producer lcore). Never blocks.
    void tap(std::uint16_t port_idx, bool tx, const rte_mbuf* m, nanos now) noexcept;
    // Control thread: write up to `budget` queued frames; returns frames
    // written. Bounded so a producer faster than the disk cannot hold the
    // control loop (what does not fit is counted as dropped by tap()).
    std::size_t drain(std::size_t budget = 16384);
    void flush();

    std::uint64_t captured() const noexcept { return __atomic_load_n(&_captured, __ATOMIC_RELAXED); }
    std::uint64_t dropped() const noexcept { return __atomic_load_n(&_dropped, __ATOMIC_RELAXED); }
    std::uint64_t written() const noexcept { return _written; }

private:
    capture() = default;
    struct impl;
    std::unique_ptr<impl> _impl;
    rte_mempool* _pool = nullptr;
    rte_ring* _ring = nullptr;
    std::uint32_t _snaplen = 0;
    std::uint64_t _captured = 0;
    std::uint64_t _dropped = 0;
    std::uint64_t _written = 0;
};

}  // namespace rocelab::dpdk
