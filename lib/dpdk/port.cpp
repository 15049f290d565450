#include "dpdk/port.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace rocelab::dpdk {

namespace {
std::string err(std::uint16_t port, const char* what, int rc) {
    return "port " + std::to_string(port) + ": " + what + " failed: " + rte_strerror(-rc);
}
}  // namespace

std::string port_open(const port_params& p, port_info& out) {
    out = {};
    out.port_id = p.port_id;
    rte_eth_dev_info info{};
    int rc = rte_eth_dev_info_get(p.port_id, &info);
    if (rc != 0) { return err(p.port_id, "rte_eth_dev_info_get", rc); }
    char name[RTE_ETH_NAME_MAX_LEN] = {};
    rte_eth_dev_get_name_by_port(p.port_id, name);
    out.device = name;
    out.driver = info.driver_name ? info.driver_name : "";

    rte_eth_conf conf{};
    const std::uint32_t room = rte_pktmbuf_data_room_size(p.pool) - RTE_PKTMBUF_HEADROOM;
    if (p.max_frame > room) {
        if ((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0) {
            conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
            out.scatter = true;
        }
        if ((info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0) {
            conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
            out.multi_seg_tx = true;
        }
    }
    // MTU = L3 size; max_frame includes the 14-byte header and one VLAN tag.
    // Devices with a smaller maximum frame (memif: 1518 B) get their maximum;
    // larger frames are then counted by the PMD, and port_info says so.
    std::uint32_t mtu = p.max_frame > 18 ? p.max_frame - 18 : p.max_frame;
    if (info.max_rx_pktlen > 18 && mtu > info.max_rx_pktlen - 18) { mtu = info.max_rx_pktlen - 18; }
    if (info.max_mtu != 0 && mtu > info.max_mtu) { mtu = info.max_mtu; }
    if (mtu >= info.min_mtu) { conf.rxmode.mtu = mtu; }
    out.mtu = conf.rxmode.mtu;

    // Several RX queues: RSS over the 5-tuple where the PMD hashes (the NIC's
    // default key and an even redirection table), so a flow's frames always
    // reach one queue, the worker that polls it (docs/real-nics.md, "RSS").
    const std::uint16_t nq = std::max<std::uint16_t>(1, p.rx_queues);
    if (nq > 1) {
        if (info.max_rx_queues < nq) {
            return "port " + std::to_string(p.port_id) + " (" + out.device + "): " + std::to_string(nq) +
                   " RX queues asked, the driver " + out.driver + " has at most " + std::to_string(info.max_rx_queues);
        }
        const std::uint64_t want = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP;
        const std::uint64_t hf = want & info.flow_type_rss_offloads;
        if (hf != 0) {
            conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_key = nullptr;  // the PMD's default key
            conf.rx_adv_conf.rss_conf.rss_hf = hf;
            out.rss = true;
            out.rss_note = std::to_string(nq) + " RX queues, RSS" + ((hf & RTE_ETH_RSS_UDP) != 0 ? " over IP + UDP/TCP ports"
                                                                                                 : " over IP addresses only");
        } else {
            out.rss_note = std::to_string(nq) + " RX queues; the driver " + out.driver +
                           " does not hash (its peer chooses the queue)";
        }
    }
    out.rx_queues = nq;
    rc = rte_eth_dev_configure(p.port_id, nq, 1, &conf);
    if (rc != 0) { return err(p.port_id, "rte_eth_dev_configure", rc); }
    std::uint16_t nrx = p.rx_ring_size;
    std::uint16_t ntx = p.tx_ring_size;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(p.port_id, &nrx, &ntx);
    if (rc != 0) { return err(p.port_id, "rte_eth_dev_adjust_nb_rx_tx_desc", rc); }
    out.rx_ring_size = nrx;
    out.tx_ring_size = ntx;
    const int socket = rte_eth_dev_socket_id(p.port_id);
    rte_eth_rxconf rxc = info.default_rxconf;
    rxc.offloads = conf.rxmode.offloads;
    for (std::uint16_t q = 0; q < nq; ++q) {
        rc = rte_eth_rx_queue_setup(p.port_id, q, nrx, socket < 0 ? 0 : socket, &rxc, p.pool);
        if (rc != 0) { return err(p.port_id, "rte_eth_rx_queue_setup", rc); }
    }
    rte_eth_txconf txc = info.default_txconf;
    txc.offloads = conf.txmode.offloads;
    rc = rte_eth_tx_queue_setup(p.port_id, 0, ntx, socket < 0 ? 0 : socket, &txc);
    if (rc != 0) { return err(p.port_id, "rte_eth_tx_queue_setup", rc); }

    // Flow control off, MAC Control frames forwarded to software.
    rte_eth_fc_conf fc{};
    rc = rte_eth_dev_flow_ctrl_get(p.port_id, &fc);
    if (rc == 0) {
        fc.mode = RTE_ETH_FC_NONE;
        fc.mac_ctrl_frame_fwd = 1;
        rc = rte_eth_dev_flow_ctrl_set(p.port_id, &fc);
        out.flow_ctrl_off = rc == 0;
        out.flow_ctrl_note = rc == 0 ? "flow control off, MAC Control forwarded"
                                     : std::string("flow_ctrl_set: ") + rte_strerror(-rc);
    } else {
        // Virtual devices have no NIC flow control: nothing to switch off.
        out.flow_ctrl_off = true;
        out.flow_ctrl_note = "no NIC flow control (" + std::string(rte_strerror(-rc)) + ")";
    }

    rc = rte_eth_dev_start(p.port_id);
    if (rc != 0) { return err(p.port_id, "rte_eth_dev_start", rc); }
    if (p.promiscuous) { rte_eth_promiscuous_enable(p.port_id); }
    rte_ether_addr mac{};
    rte_eth_macaddr_get(p.port_id, &mac);
    std::memcpy(out.mac.data(), mac.addr_bytes, 6);
    rte_eth_link link{};
    rte_eth_link_get_nowait(p.port_id, &link);
    out.link_up = link.link_status == RTE_ETH_LINK_UP;
    if (link.link_speed != RTE_ETH_SPEED_NUM_NONE && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN) {
        out.driver_speed = bits_per_sec{static_cast<std::uint64_t>(link.link_speed) * 1000000ULL};
    }
    return {};
}

void port_close(std::uint16_t port_id) noexcept {
    rte_eth_dev_stop(port_id);
    rte_eth_dev_close(port_id);
}

int port_by_name(const std::string& s) noexcept {
    if (s.empty()) { return -1; }
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (end != nullptr && *end == '\0') {
        return (v >= 0 && v < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port(static_cast<std::uint16_t>(v)))
                   ? static_cast<int>(v)
                   : -1;
    }
    std::uint16_t id = 0;
    if (rte_eth_dev_get_port_by_name(s.c_str(), &id) == 0) { return id; }
    return -1;
}

std::vector<std::uint16_t> probed_ports() {
    std::vector<std::uint16_t> v;
    std::uint16_t id = 0;
    RTE_ETH_FOREACH_DEV(id) { v.push_back(id); }
    return v;
}

}  // namespace rocelab::dpdk
