// port_burst.hpp - rx/tx bursts through a port_binding's I/O (dpdk/port_io.hpp).
//
// Included by the pipelines' .cpp files only (it pulls in rte_ethdev.h).
// With no ops (production) these are the inline ethdev calls on queue 0;
// otherwise one indirect call per burst.
#pragma once

#include <rte_ethdev.h>

#include "dpdk/port_io.hpp"
#include "dpdk/tsan.hpp"

namespace rocelab::dpdk {

inline std::uint16_t port_rx(const port_binding& b, nanos now, rte_mbuf** pkts, std::uint16_t n) noexcept {
    if (b.io.ops == nullptr) [[likely]] {
        const std::uint16_t got = rte_eth_rx_burst(b.port_id, 0, pkts, n);
        // A PMD that passes mbufs between lcores (net_ring loopback pairs)
        // does so in uninstrumented code: the frames are taken here (dpdk/tsan.hpp).
        tsan_acquire_n(reinterpret_cast<void* const*>(pkts), got);
        return got;
    }
    return b.io.ops->rx(b.io.ctx, now, pkts, n);
}

// RX queue q of an ethdev port (several queues: RSS; port_io ops have queue 0 only).
inline std::uint16_t port_rx_queue(const port_binding& b, std::uint16_t q, nanos now, rte_mbuf** pkts,
                                   std::uint16_t n) noexcept {
    if (q == 0) { return port_rx(b, now, pkts, n); }
    const std::uint16_t got = rte_eth_rx_burst(b.port_id, q, pkts, n);
    tsan_acquire_n(reinterpret_cast<void* const*>(pkts), got);
    return got;
}

// False when the port I/O knows that no frame waits on RX (rx would return 0).
inline bool port_rx_maybe(const port_binding& b) noexcept {
    return b.io.rx_waiting == nullptr || *b.io.rx_waiting != 0;
}

inline std::uint16_t port_tx(const port_binding& b, nanos now, rte_mbuf** pkts, std::uint16_t n) noexcept {
    if (b.io.ops == nullptr) [[likely]] {
        tsan_release_n(reinterpret_cast<void* const*>(pkts), n);
        return rte_eth_tx_burst(b.port_id, 0, pkts, n);
    }
    return b.io.ops->tx(b.io.ctx, now, pkts, n);
}

}  // namespace rocelab::dpdk
