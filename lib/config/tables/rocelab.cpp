// ROCELAB: rocelab's own settings (not a SONiC table), and its nested
// headroom mapping (the constants of the headroom formula, xoff: auto).
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

using namespace literals;

constexpr std::string_view mode_choices[] = {"l2", "l3"};
constexpr std::string_view ecn_at_choices[] = {"dequeue", "enqueue"};
constexpr std::string_view on_off[] = {"on", "off", "true", "false"};

namespace fld {

constexpr field_spec mode =
    choice_field("mode", mode_choices, "`l2`",
                 "`l2`: learning bridge (FDB, flooding). `l3`: IPv4/IPv6 router using INTERFACE, "
                 "ROUTE and NEIGH");
constexpr field_spec seed =
    count_field("seed", 0, UINT64_MAX, "a whole number", "1",
                "seeds every random choice (WRED, ECMP hash salt), so runs replay exactly");
constexpr field_spec status_interval =
    time_field("status_interval", (10_ms).v, (3600_s).v, 0, "`1s`", "period of the one-line status output");
constexpr field_spec queue_sample_interval =
    time_field("queue_sample_interval", (1_us).v, (10_s).v, 0, "`1ms`",
               "period of queue-depth samples in the CSV trace");
constexpr field_spec tx_ring_size =
    count_field("tx_ring_size", 16, 32768, "a descriptor count", "256",
                "TX descriptors per port; kept shallow so queueing happens in the "
                "switch's own queues, where it is measured and marked");
constexpr field_spec rx_ring_size =
    count_field("rx_ring_size", 16, 32768, "a descriptor count", "1024", "RX descriptors per port");
constexpr field_spec mbufs =
    count_field("mbufs", 1024, 16777216, "an mbuf count", "147456",
                "packet buffers in the pool. The switch requires enough to back the whole "
                "BUFFER_POOL in minimum-size frames (or cells) plus the RX/TX rings; 147456 "
                "backs the built-in 12MiB pool in 96-byte cells for up to 12 ports (about "
                "350 MB of packet memory)");
constexpr field_spec mbuf_data_size =
    size_field("mbuf_data_size", 256, 65535, "`2176B`", "data room per mbuf (2048 B + 128 B headroom)");
constexpr field_spec burst = count_field("burst", 1, 64, "a packet count", "32", "packets per RX/TX burst");
constexpr field_spec max_frame =
    size_field("max_frame", 64, 16384, "`9216B`",
               "largest frame (without FCS) accepted; larger frames are counted as "
               "oversize and dropped");
constexpr field_spec headroom =
    noun_field(field_kind::mapping, "headroom", "ROCELAB|headroom", "SONiC's example ASIC",
               "constants of the headroom formula used by `xoff: auto`");
constexpr field_spec ecn_at =
    choice_field("ecn_at", ecn_at_choices, "`dequeue`",
                 "where WRED/ECN samples the egress queue depth: when the packet leaves "
                 "(HPCC ns-3, ns3-rdma; the mark is not delayed by the queue it describes) or "
                 "when it is queued");
constexpr field_spec icmp_errors = flag_field(
    "icmp_errors", on_off, "`on`",
    "L3: answer a datagram whose TTL / hop limit expires, or that has no route, with ICMP time exceeded "
    "(11/0) / network unreachable (3/0), ICMPv6 3/0 / 1/0, out of its ingress port from that port's "
    "address (else the switch's first), quoting as much of it as fits in 576 (1280) bytes; never for "
    "ICMP "
    "errors, fragments after the first, multicast or broadcast (RFC 1812 4.3.2, RFC 4443 2.4). Also host "
    "unreachable (3/1, ICMPv6 1/3) for datagrams whose neighbour never answered ARP/ND "
    "(`drop_neigh_unresolved`). The datagram is still counted as `drop_ttl_expired` / `drop_no_route` / "
    "`drop_neigh_unresolved`; `icmp_errors` counts the replies. Echo requests (ping) to the switch's own "
    "addresses are answered whatever this says (`icmp_echo_replies`)");
constexpr field_spec ecmp_local_bias = flag_field(
    "ecmp_local_bias", on_off, "`off`",
    "L3 with several workers: a route's ECMP next hops are chosen among those on the receiving worker's own "
    "ports when it has some (local bias, as Junos `local-bias` on aggregated Ethernet), else among all. "
    "Frames then leave without crossing to another worker, which is what lets RSS (`--rx-queues`) scale; "
    "each flow still takes one next hop (RSS keeps a flow on one worker), but the uplinks' balance follows "
    "the RSS queues' and the ports' owners (`--port-workers`), and which uplink a flow takes differs from "
    "`off`. One worker: no effect");
constexpr field_spec icmp_rate =
    count_field("icmp_rate", 1, 1000000, "ICMP errors per second", "1000",
                "ICMP errors per second for the whole switch, with a burst of 50 (Linux's "
                "`icmp_msgs_per_sec` / `icmp_msgs_burst`); the excess is counted as "
                "`icmp_ratelimited`");
constexpr field_spec neigh_dynamic = flag_field(
    "neigh_dynamic", on_off, "`on`",
    "L3: resolve connected hosts and route next hops that have no NEIGH entry by ARP / IPv6 neighbour "
    "discovery (see [Neighbours](#neighbours-mode-l3)). `off`: such frames are dropped as "
    "`drop_no_neighbor`, and a ROUTE next hop without a NEIGH entry is a start-up error");
constexpr field_spec neigh_max =
    count_field("neigh_max", 16, 1048576, "neighbour entries", "4096",
                "dynamic neighbour entries; a frame for a new neighbour when the table is "
                "full is dropped as `drop_neigh_table_full`");
constexpr field_spec neigh_reachable_time = time_field(
    "neigh_reachable_time", (1_s).v, (86400_s).v, 0, "`30s`",
    "an answer keeps a neighbour `reachable` this long; after that it is `stale`: still used, and its "
    "first "
    "use sends a unicast request to reconfirm it (Linux `base_reachable_time`)");
constexpr field_spec neigh_retrans_time =
    time_field("neigh_retrans_time", (10_ms).v, (60_s).v, 0, "`1s`",
               "time between requests for one neighbour (Linux `retrans_time`)");
constexpr field_spec neigh_probes =
    count_field("neigh_probes", 1, 30, "requests", "3",
                "requests before a neighbour is given up (Linux `mcast_solicit` / "
                "`ucast_solicit`)");
constexpr field_spec neigh_gc_time = time_field("neigh_gc_time", (1_s).v, (86400_s).v, 0, "`60s`",
                                                "a stale neighbour unused this long is removed (aging; Linux "
                                                "`gc_stale_time`)");
constexpr field_spec neigh_queue =
    count_field("neigh_queue", 0, 8, "frames per unresolved neighbour", "4",
                "frames that may wait for one neighbour while it is resolved; more are "
                "dropped as `drop_neigh_queue_full` (0: none waits, the request still "
                "goes)");

constexpr field_spec all[] = {mode,
                              seed,
                              status_interval,
                              queue_sample_interval,
                              tx_ring_size,
                              rx_ring_size,
                              mbufs,
                              mbuf_data_size,
                              burst,
                              max_frame,
                              headroom,
                              ecn_at,
                              icmp_errors,
                              icmp_rate,
                              ecmp_local_bias,
                              neigh_dynamic,
                              neigh_max,
                              neigh_reachable_time,
                              neigh_retrans_time,
                              neigh_probes,
                              neigh_gc_time,
                              neigh_queue};

}  // namespace fld

// ROCELAB|headroom: bytes may be bare numbers (SONiC's unit) or carry units.
namespace hfld {

constexpr field_spec cell = byte_count_field(
    "cell", 1, 16384, "96", "buffer cell of the modelled ASIC: a 64-byte packet occupies a whole cell");
constexpr field_spec pipeline_latency = ranged_field(field_kind::bytes, "pipeline_latency", 0, (16_MiB).v,
                                                     "`18KiB`", "the XON level (rounded up to 1KiB)", 1);
constexpr field_spec mac_phy_delay =
    ranged_field(field_kind::fraction_bytes, "mac_phy_delay", 0, (16_MiB).v, "819.2",
                 "bytes already in our own MAC/PHY when XOFF goes out");
constexpr field_spec small_packet_percent =
    ranged_field(field_kind::percent, "small_packet_percent", 0, 100, "100",
                 "share of minimum-size packets; 0 = no cell inflation (exact byte accounting)", 1);
constexpr field_spec lossless_mtu =
    byte_count_field("lossless_mtu", 64, 16384, "1500", "largest lossless packet");
constexpr field_spec port_mtu = byte_count_field(
    "port_mtu", 64, 16384, "9100", "port MTU: the frame a peer may have started when it decides to stop");

constexpr field_spec all[] = {cell,         pipeline_latency, mac_phy_delay, small_packet_percent,
                              lossless_mtu, port_mtu};

}  // namespace hfld
}  // namespace

constexpr table_spec rocelab_table = fields_table("ROCELAB", "none: the fields are directly under `ROCELAB:`",
                                                  "rocelab's own settings (not a SONiC table).", fld::all);

constexpr table_spec headroom_table = fields_table(
    "ROCELAB|headroom", "none: the fields are directly under `ROCELAB: {headroom: ...}`",
    "the constants of the headroom formula (`xoff: auto`); bytes may be bare numbers or carry units.",
    hfld::all);

void loader::load_rocelab(const entry& t) {
    const auto f = fields(t, rocelab_table);
    if (const auto* e = find(f, fld::mode)) {
        _cfg.mode = get_choice(*e, fld::mode) == "l2" ? fwd_mode::l2 : fwd_mode::l3;
    }
    read(f, fld::seed, _cfg.seed);
    read(f, fld::status_interval, _cfg.status_interval);
    read(f, fld::queue_sample_interval, _cfg.queue_sample_interval);
    read(f, fld::tx_ring_size, _cfg.tx_ring_size);
    read(f, fld::rx_ring_size, _cfg.rx_ring_size);
    read(f, fld::mbufs, _cfg.mbufs);
    read(f, fld::mbuf_data_size, _cfg.mbuf_data_size);
    read(f, fld::burst, _cfg.burst);
    read(f, fld::max_frame, _cfg.max_frame);
    if (const auto* e = find(f, fld::headroom)) {
        load_headroom(*e);
    }
    if (const auto* e = find(f, fld::ecn_at)) {
        _cfg.wred_at_enqueue = get_choice(*e, fld::ecn_at) == "enqueue";
    }
    read(f, fld::icmp_errors, _cfg.icmp_errors);
    read(f, fld::icmp_rate, _cfg.icmp_rate);
    read(f, fld::ecmp_local_bias, _cfg.ecmp_local_bias);
    read(f, fld::neigh_dynamic, _cfg.neigh.dynamic);
    read(f, fld::neigh_max, _cfg.neigh.max);
    read(f, fld::neigh_reachable_time, _cfg.neigh.reachable);
    read(f, fld::neigh_retrans_time, _cfg.neigh.retrans);
    read(f, fld::neigh_probes, _cfg.neigh.probes);
    read(f, fld::neigh_gc_time, _cfg.neigh.gc);
    read(f, fld::neigh_queue, _cfg.neigh.queue);
}

void loader::load_headroom(const entry& t) {
    const auto f = fields(t, headroom_table);
    headroom_asic_cfg& a = _cfg.asic;
    read(f, hfld::cell, a.cell);
    read(f, hfld::pipeline_latency, a.pipeline_latency);
    read(f, hfld::mac_phy_delay, a.mac_phy_delay_bytes);
    read(f, hfld::small_packet_percent, a.small_packet_percent);
    read(f, hfld::lossless_mtu, a.lossless_mtu);
    read(f, hfld::port_mtu, a.port_mtu);
}

}  // namespace rocelab::detail
