// port.hpp - ethdev set-up for rocelab (switch and generator).
//
// port_open() configures rx_queues RX queues (default 1) and one TX queue on
// a DPDK port, with:
//  - with several RX queues: RSS over the IP addresses and the TCP/UDP ports
//    (the PMD's default key and redirection table), where the PMD hashes
//    (port_info::rss says whether it does; net_ring and memif do not: their
//    peers choose the queue);
//  - NIC flow control OFF (software does PFC) and, where the PMD allows,
//    mac_ctrl_frame_fwd=1 so MAC Control (0x8808) frames reach software;
//  - a shallow TX descriptor ring (tx_ring_size) so strict priority and the
//    PFC response budget are decided in software, not in a deep NIC FIFO;
//  - scatter RX / multi-segment TX when frames can exceed one mbuf (jumbo);
//  - promiscuous mode (a switch port receives every frame).
// What the PMD refused is recorded in port_info, never silently assumed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"

struct rte_mempool;

namespace rocelab::dpdk {

struct port_params {
    std::uint16_t port_id = 0;
    std::uint16_t rx_ring_size = 1024;
    std::uint16_t tx_ring_size = 256;
    std::uint32_t max_frame = 9216;  // largest L2 frame without FCS we accept
    rte_mempool* pool = nullptr;
    bool promiscuous = true;
    std::uint16_t rx_queues = 1;  // RX queues (several: RSS where the PMD hashes)
};

struct port_info {
    std::uint16_t port_id = 0;
    std::string device;        // rte_eth_dev_get_name_by_port
    std::string driver;
    std::array<std::uint8_t, 6> mac{};
    bits_per_sec driver_speed{};  // 0 when the driver reports none
    bool link_up = false;
    bool scatter = false;         // RX scatter enabled (jumbo over small mbufs)
    bool multi_seg_tx = false;
    bool flow_ctrl_off = false;   // NIC flow control disabled (or not supported)
    std::string flow_ctrl_note;   // what the PMD said
    std::uint32_t mtu = 0;           // configured MTU (may be below max_frame on small-frame devices)
    std::uint16_t rx_ring_size = 0;  // as adjusted by the driver
    std::uint16_t tx_ring_size = 0;
    std::uint16_t rx_queues = 1;
    bool rss = false;           // the PMD spreads frames over the RX queues by hash
    std::string rss_note;       // what was asked and granted (several queues only)
};

// Returns an empty string on success, else one error line naming the port.
std::string port_open(const port_params& p, port_info& out);
void port_close(std::uint16_t port_id) noexcept;

// Port id for a device name ("net_ring0") or a decimal port id; -1 if none.
int port_by_name(const std::string& name_or_id) noexcept;
std::vector<std::uint16_t> probed_ports();

}  // namespace rocelab::dpdk
