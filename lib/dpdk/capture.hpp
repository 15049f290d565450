// capture.hpp - per-port, per-direction pcap capture written off the data path.
//
// The worker calls tap() for each frame it receives or transmits: the first
// `snaplen` bytes are copied into an mbuf from a dedicated capture pool and put
// on its lcore's own single-producer, single-consumer rte_ring (a "lane"; a
// thread that is no EAL lcore shares one multi-producer lane). The control
// thread calls drain(), which takes from every lane, oldest frame first, and
// writes nanosecond-resolution pcap files <dir>/<port>-rx.pcap and
// <dir>/<port>-tx.pcap with libpcap.
//
// Why a lane per lcore: a multi-producer rte_ring makes each producer wait,
// spinning, until the producers before it have published their slots. Two
// workers sharing a CPU (several lcores per core, as the tests run) then
// lose whole scheduler time slices: a worker preempted inside the enqueue
// holds up the other one until it runs again (the lock-waiter preemption
// that DPDK's ring documentation warns of). perf saw 99 % of ring_put's
// samples on that wait, and polls of 500 ms that made RC QPs time out.
// With a lane per lcore no worker ever waits for another, and no two
// workers write the same cache line (each lane's counters are its own).
//
// When a lane or the capture pool is full the frame is not captured and
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

    // Data path, from any lcore (each writes its own lane). Never blocks.
    void tap(std::uint16_t port_idx, bool tx, const rte_mbuf* m, nanos now) noexcept;
    // Control thread: write up to `budget` queued frames; returns frames
    // written. Bounded so a producer faster than the disk cannot hold the
    // control loop (what does not fit is counted as dropped by tap()).
    std::size_t drain(std::size_t budget = 16384);
    void flush();

    std::uint64_t captured() const noexcept;  // summed over the lanes
    std::uint64_t dropped() const noexcept;
    std::uint64_t written() const noexcept { return _written; }

private:
    capture() = default;
    struct impl;
    struct lane;  // capture.cpp
    lane& my_lane() noexcept;
    void write(rte_mbuf* c);
    std::unique_ptr<impl> _impl;
    rte_mempool* _pool = nullptr;
    lane* _lanes = nullptr;  // [_n_lanes + 1]: one per EAL lcore, then the shared one
    unsigned _n_lanes = 0;
    std::uint32_t _snaplen = 0;
    std::uint64_t _written = 0;
};

}  // namespace rocelab::dpdk
