// ROCELAB (rocelab's own settings) and its headroom mapping.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

void loader::load_rocelab(const entry& t) {
    const auto f = fields(t, "ROCELAB",
                          {"mode", "seed", "status_interval", "queue_sample_interval", "tx_ring_size",
                           "rx_ring_size", "mbufs", "mbuf_data_size", "burst", "max_frame", "headroom", "ecn_at",
                           "icmp_errors", "icmp_rate", "neigh_dynamic", "neigh_max", "neigh_reachable_time",
                           "neigh_retrans_time", "neigh_probes", "neigh_gc_time", "neigh_queue"});
    using namespace literals;
    if (const auto* e = find(f, "mode")) {
        _cfg.mode = get_choice(*e, "ROCELAB|mode", {"l2", "l3"}) == "l2" ? fwd_mode::l2 : fwd_mode::l3;
    }
    if (const auto* e = find(f, "seed")) {
        _cfg.seed = get_uint(*e, "ROCELAB|seed", 0, UINT64_MAX, "a whole number");
    }
    if (const auto* e = find(f, "status_interval")) {
        _cfg.status_interval = get_time(*e, "ROCELAB|status_interval", 10_ms, 3600_s);
    }
    if (const auto* e = find(f, "queue_sample_interval")) {
        _cfg.queue_sample_interval = get_time(*e, "ROCELAB|queue_sample_interval", 1_us, 10_s);
    }
    if (const auto* e = find(f, "tx_ring_size")) {
        _cfg.tx_ring_size = static_cast<std::uint16_t>(
            get_uint(*e, "ROCELAB|tx_ring_size", 16, 32768, "a descriptor count"));
    }
    if (const auto* e = find(f, "rx_ring_size")) {
        _cfg.rx_ring_size = static_cast<std::uint16_t>(
            get_uint(*e, "ROCELAB|rx_ring_size", 16, 32768, "a descriptor count"));
    }
    if (const auto* e = find(f, "mbufs")) {
        _cfg.mbufs =
            static_cast<std::uint32_t>(get_uint(*e, "ROCELAB|mbufs", 1024, 16777216, "an mbuf count"));
    }
    if (const auto* e = find(f, "mbuf_data_size")) {
        _cfg.mbuf_data_size = static_cast<std::uint16_t>(
            get_bytes(*e, "ROCELAB|mbuf_data_size", bytes{256}, bytes{65535}, bare_number::rejected).v);
    }
    if (const auto* e = find(f, "burst")) {
        _cfg.burst = static_cast<std::uint16_t>(get_uint(*e, "ROCELAB|burst", 1, 64, "a packet count"));
    }
    if (const auto* e = find(f, "max_frame")) {
        _cfg.max_frame = static_cast<std::uint32_t>(
            get_bytes(*e, "ROCELAB|max_frame", bytes{64}, bytes{16384}, bare_number::rejected).v);
    }
    if (const auto* e = find(f, "headroom")) {
        load_headroom(*e);
    }
    if (const auto* e = find(f, "ecn_at")) {
        _cfg.wred_at_enqueue = get_choice(*e, "ROCELAB|ecn_at", {"dequeue", "enqueue"}) == "enqueue";
    }
    if (const auto* e = find(f, "icmp_errors")) {
        const std::string v = get_choice(*e, "ROCELAB|icmp_errors", {"on", "off", "true", "false"});
        _cfg.icmp_errors = v == "on" || v == "true";
    }
    if (const auto* e = find(f, "icmp_rate")) {
        _cfg.icmp_rate = static_cast<std::uint32_t>(
            get_uint(*e, "ROCELAB|icmp_rate", 1, 1000000, "ICMP errors per second"));
    }
    if (const auto* e = find(f, "neigh_dynamic")) {
        const std::string v = get_choice(*e, "ROCELAB|neigh_dynamic", {"on", "off", "true", "false"});
        _cfg.neigh.dynamic = v == "on" || v == "true";
    }
    if (const auto* e = find(f, "neigh_max")) {
        _cfg.neigh.max = static_cast<std::uint32_t>(
            get_uint(*e, "ROCELAB|neigh_max", 16, 1048576, "neighbour entries"));
    }
    if (const auto* e = find(f, "neigh_reachable_time")) {
        _cfg.neigh.reachable = get_time(*e, "ROCELAB|neigh_reachable_time", 1_s, 86400_s);
    }
    if (const auto* e = find(f, "neigh_retrans_time")) {
        _cfg.neigh.retrans = get_time(*e, "ROCELAB|neigh_retrans_time", 10_ms, 60_s);
    }
    if (const auto* e = find(f, "neigh_probes")) {
        _cfg.neigh.probes = static_cast<std::uint8_t>(get_uint(*e, "ROCELAB|neigh_probes", 1, 30, "requests"));
    }
    if (const auto* e = find(f, "neigh_gc_time")) {
        _cfg.neigh.gc = get_time(*e, "ROCELAB|neigh_gc_time", 1_s, 86400_s);
    }
    if (const auto* e = find(f, "neigh_queue")) {
        _cfg.neigh.queue = static_cast<std::uint8_t>(
            get_uint(*e, "ROCELAB|neigh_queue", 0, 8, "frames per unresolved neighbour"));
    }
}

// ROCELAB|headroom: the ASIC constants of the headroom formula (xoff: auto).
void loader::load_headroom(const entry& t) {
    const std::string path = "ROCELAB|headroom";
    const auto f = fields(t, path,
                          {"cell", "pipeline_latency", "mac_phy_delay", "small_packet_percent",
                           "lossless_mtu", "port_mtu"});
    headroom_asic_cfg& a = _cfg.asic;
    if (const auto* e = find(f, "cell")) {
        a.cell = get_bytes(*e, path + "|cell", bytes{1}, bytes{16384}, bare_number::accepted, true);
    }
    if (const auto* e = find(f, "pipeline_latency")) {
        a.pipeline_latency =
            get_bytes(*e, path + "|pipeline_latency", bytes{0}, bytes{16u << 20}, bare_number::accepted);
    }
    if (const auto* e = find(f, "mac_phy_delay")) {
        a.mac_phy_delay_bytes = get_fractional_bytes(*e, path + "|mac_phy_delay", 16u << 20);
    }
    if (const auto* e = find(f, "small_packet_percent")) {
        const std::string expected = "a percentage 0..100 such as 100 or 50%";
        const auto r =
            parse_percent(scalar(*e, path + "|small_packet_percent", expected), bare_number::accepted);
        if (!r) {
            fail(mark_of(*e), path + "|small_packet_percent", r.error().message + " (accepted 0..100%)");
        }
        if (*r < 0.0 || *r > 100.0) {
            fail(mark_of(*e), path + "|small_packet_percent",
                 quote(e->value.Scalar()) + " is out of range: accepted 0..100%");
        }
        a.small_packet_percent = *r;
    }
    if (const auto* e = find(f, "lossless_mtu")) {
        a.lossless_mtu =
            get_bytes(*e, path + "|lossless_mtu", bytes{64}, bytes{16384}, bare_number::accepted, true);
    }
    if (const auto* e = find(f, "port_mtu")) {
        a.port_mtu =
            get_bytes(*e, path + "|port_mtu", bytes{64}, bytes{16384}, bare_number::accepted, true);
    }
}

}  // namespace rocelab::detail
