// port_io.hpp - the port-I/O seam: how a pipeline reaches one of its ports.
//
// A pipeline never calls rte_eth_rx_burst/rte_eth_tx_burst itself. Each of
// its ports is a port_binding whose `io` says where bursts go:
//   - ethdev (production, the default: ops == nullptr): queue 0 of DPDK
//     port `port_id` (a NIC or a vdev);
//   - anything else (ops != nullptr): ops->rx / ops->tx with ctx, e.g. a
//     simulated port in virtual time (pipelines/vt), whose RX hands out only
//     the frames that have arrived by `now` and whose TX is a bounded ring
//     drained by a modelled link.
// Both calls behave like the ethdev ones: rx returns up to n frames, tx
// takes the first k <= n frames and the caller keeps (and retries) the rest.
// The ethdev case is one predictable branch and the inline DPDK call
// (pipelines/port_burst.hpp), so production pays nothing for the seam.
//
// port_binding is what both pipelines know of a port: its DPDK port id,
// its name (reports, captures), its MAC (the switch's own MAC for PFC/ARP
// sources), its line rate (shaping, pause quanta, the generator's cap) and
// whether that rate came from config (the switch shapes only then).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/units.hpp"

struct rte_mbuf;

namespace rocelab {
struct credit_tx;  // qos/credit.hpp
}

namespace rocelab::dpdk {

struct port_io_ops {
    std::uint16_t (*rx)(void* ctx, nanos now, rte_mbuf** pkts, std::uint16_t n) noexcept;
    std::uint16_t (*tx)(void* ctx, nanos now, rte_mbuf** pkts, std::uint16_t n) noexcept;
};

struct port_io {
    const port_io_ops* ops = nullptr;  // nullptr: ethdev queue 0 of port_binding::port_id
    void* ctx = nullptr;
    // Optional: frames waiting on RX, kept by the port I/O (virtual time).
    // A pipeline skips rx of a port whose count is 0; nullptr = unknown
    // (ethdev: always poll).
    const std::uint32_t* rx_waiting = nullptr;
    // Optional, with rx_waiting: a bitmask shared by every port of one
    // pipeline (bit i = its port i), which the port I/O sets when frames
    // arrive and the pipeline clears once the port's RX is empty, so a
    // pipeline of many ports visits only those with frames (virtual time).
    std::uint64_t* rx_pending = nullptr;
};

struct port_binding {
    std::uint16_t port_id = 0;
    std::string name;
    std::array<std::uint8_t, 6> mac{};  // the port's own MAC
    bits_per_sec line_rate{};           // configured speed, else the driver's (0 = unknown)
    bool shaped = false;                // the speed came from config (the switch shapes to it)
    port_io io{};
    // Ethdev RX queues (RSS): queue 0 is polled by the port's own worker, the
    // others by the workers the switch assigns (port_io ops: queue 0 only).
    std::uint16_t rx_queues = 1;
    // Credit mode (qos/credit.hpp; the fabric sets these on a cable run with
    // credits instead of PFC). credit_port: this port gives credits instead
    // of sending PFC (no PFC frame leaves it). credit: the credits this port
    // holds to send with, or nullptr (its peer gives none: PFC, or a host).
    bool credit_port = false;
    credit_tx* credit = nullptr;
};

}  // namespace rocelab::dpdk
