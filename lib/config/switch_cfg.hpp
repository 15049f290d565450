// switch_cfg.hpp - the validated, immutable configuration of rocelab-switch.
//
// Produced by load_switch_cfg() (config/switch_config.hpp) from a YAML file
// that uses SONiC CONFIG_DB table and field names, or by default_switch_cfg()
// when no file is given. The data path only reads the finished structure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "fwd/route_cfg.hpp"
#include "qos/buffer_cfg.hpp"
#include "qos/qos_maps.hpp"
#include "qos/scheduler_cfg.hpp"
#include "qos/wred.hpp"

namespace rocelab {

enum class fwd_mode : std::uint8_t { l2, l3 };
enum class vlan_mode : std::uint8_t { untagged, tagged };

// BUFFER_QUEUE|<port>|<queue>: the egress buffer profile bound to a queue
// (kept for telemetry, --check-config and the lossless checks). rocelab has
// no egress pool accounting: a static_th on a lossy queue becomes its QUEUE
// max_bytes (unless QUEUE gives max_bytes); a dynamic_th is not enforced
// (the queue keeps its QUEUE limits); lossless queues are never tail-dropped.
struct queue_buffer_cfg {
    bool configured = false;  // false: no BUFFER_QUEUE entry (or "NULL")
    std::string profile;      // BUFFER_PROFILE name
    std::string pool;         // its egress BUFFER_POOL
    bytes size{0};            // reserved bytes
    threshold_mode mode = threshold_mode::dynamic_th;
    int dynamic_th = 0;
    bytes static_th{0};
};

// A BUFFER_POOL as written (every pool, ingress and egress). The one ingress
// pool the MMU models is switch_cfg::pool; see docs/config.md.
struct sonic_pool_cfg {
    std::string name;
    bool ingress = true;
    threshold_mode mode = threshold_mode::dynamic_th;
    std::optional<bytes> size;  // none: computed (buffer_model dynamic)
    bytes xoff{0};              // shared headroom pool (ingress lossless pool)
};

enum class buffer_model : std::uint8_t { traditional, dynamic };

struct port_cfg {
    std::string name;            // "Ethernet0"
    std::string device;          // DPDK device name ("net_ring0"); empty = use port_id
    int port_id = -1;            // DPDK port id; -1 = resolve from device
    std::optional<bits_per_sec> speed;  // none = take it from the driver
    std::uint32_t mtu = 9100;    // L3 MTU (IP packet), SONiC default 9100
    trust_mode trust = trust_mode::dscp;
    vlan_mode vlan = vlan_mode::untagged;
    std::uint16_t vlan_id = 0;   // tagged egress VID (and accepted ingress VID)
    std::optional<mac_addr> mac; // none = the device's MAC
    qos_maps maps = azure_roce_maps();          // resolved PORT_QOS_MAP
    scheduler_cfg sched = azure_roce_scheduler();  // resolved SCHEDULER per QUEUE
    std::array<queue_limits, 8> limits{};
    std::uint8_t pfc_enable = 0; // bit n = priority n (used by the PFC issue)
    std::vector<ip_prefix> addresses;  // INTERFACE "Ethernet0|10.0.0.1/31"
    std::optional<std::uint16_t> tx_ring_size;  // none = switch_cfg::tx_ring_size
    std::vector<std::uint32_t> lanes;  // PORT lanes ("0,1,2,3"): the serdes lanes it uses; empty = not given
    // Lossless classes: BUFFER_PG (by ingress PG), PORT_QOS_MAP pfc_mode /
    // pfc_quanta / pfcwd_sw_enable, CABLE_LENGTH, PFC_WD.
    std::array<pg_buffer_cfg, num_pgs> pgs{};
    flow_ctrl_mode fc_mode = flow_ctrl_mode::pfc;  // pause: 802.3x PAUSE for the whole link
    std::uint16_t pfc_quanta = 0xFFFF;  // pause time sent in XOFF frames (quanta of 512 bit times)
    double cable_length_m = 5.0;        // CABLE_LENGTH (headroom formula); SONiC's server-facing 5m
    std::uint8_t pfcwd_queues = 0;      // bit n = egress queue n watched (default_port_cfg: 3,4)
    pfc_wd_cfg wd{};                    // PFC_WD; wd.enabled false = no watchdog
    // WRED/ECN per egress queue (QUEUE|<port>|<q> wred_profile), resolved for
    // green traffic. Default: AZURE_LOSSLESS on queues 3 and 4.
    std::array<wred_cfg, 8> wred{};
    // BUFFER_QUEUE per egress queue (empty unless the file gives BUFFER_QUEUE).
    std::array<queue_buffer_cfg, 8> egress_buffers{};
};

// BREAKOUT_CFG|<port>: one physical port (its lanes) used as `count` ports
// of `speed` each (brkout_mode "2x200G", "4x100G[40G]"). The ports are
// PORT entries, the first one named by the key; see docs/config.md.
struct breakout_cfg {
    std::string port;                      // the key: the first port of the breakout
    std::string mode;                      // brkout_mode as written
    unsigned count = 1;                    // ports it makes
    bits_per_sec speed{};                  // each one's speed
    std::vector<bits_per_sec> alt_speeds;  // the bracket's speeds ("[40G]"): also allowed
    bits_per_sec lane_speed{};             // lane_speed (rocelab): what one lane carries
    std::vector<std::uint32_t> lanes;      // the physical port's lanes, in order
    std::vector<std::string> ports;        // the ports it makes, in lane order
};

struct switch_cfg {
    std::string source;             // file path, or "<built-in defaults>"
    fwd_mode mode = fwd_mode::l2;
    std::optional<mac_addr> switch_mac;  // none = each port's own MAC
    nanos fdb_aging{300'000'000'000};    // 300s
    std::uint64_t seed = 1;
    std::vector<port_cfg> ports;    // empty = all probed ports with defaults
    std::vector<breakout_cfg> breakouts;  // BREAKOUT_CFG, checked against PORT's lanes and speeds
    // Settings for probed ports when `ports` is empty: AZURE maps and
    // scheduler, pfc_enable 3,4, plus any `global` PORT_QOS_MAP / QUEUE
    // entries. name is empty and port_id -1; see probed_port_cfg().
    port_cfg port_defaults{};
    std::vector<route_cfg> routes;
    std::vector<neigh_cfg> neighbors;
    nanos status_interval{1'000'000'000};
    nanos queue_sample_interval{1'000'000};  // queue-depth CSV sampling
    std::uint16_t tx_ring_size = 256;  // TX descriptors (keep shallow, see docs)
    std::uint16_t rx_ring_size = 1024;
    // Backs the default 12MiB pool in 96-byte cells (131072) plus the RX/TX
    // rings of 12 ports (12 x 1344): about 350 MB of packet memory.
    std::uint32_t mbufs = 147456;
    std::uint16_t mbuf_data_size = 2048 + 128;  // >= 9216+headroom enables jumbo via sized mbufs
    std::uint16_t burst = 32;
    std::uint32_t max_frame = 9216;  // larger frames are counted as oversize and dropped
    buffer_pool_cfg pool{};          // BUFFER_POOL (ingress_lossless_pool); see default_switch_cfg()
    // DEVICE_METADATA|localhost|buffer_model (SONiC: traditional unless set).
    // dynamic: BUFFER_PG "NULL" profiles and headroom_type dynamic profiles
    // get their headroom from the formula (as xoff: auto); pool sizes may be
    // left out.
    buffer_model model = buffer_model::traditional;
    std::vector<sonic_pool_cfg> pools;  // every BUFFER_POOL of the file, in file order
    // DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE (dynamic model): dynamic_th of
    // computed lossless profiles; over_subscribe_ratio sizes the shared
    // headroom pool (sum of the lossless PGs' xoff / ratio) when the ingress
    // pool gives no xoff. 0 = not given.
    int default_dynamic_th = 0;
    double over_subscribe_ratio = 0;
    // Start-up notes and warnings, one line each, without the source prefix
    // ("BUFFER_POOL|ingress_lossless_pool|xoff: ..."): what the file asks
    // that rocelab models differently. rocelab-switch prints them.
    std::vector<std::string> notes;
    bool wred_at_enqueue = false;    // ROCELAB ecn_at: enqueue; default dequeue (HPCC ns-3, ns3-rdma)
    // L3: ICMP/ICMPv6 errors for TTL expiry and no route (ROCELAB icmp_errors:
    // on|off), at most icmp_rate per second per switch with a burst of 50
    // (Linux's icmp_msgs_per_sec / icmp_msgs_burst defaults).
    bool icmp_errors = true;
    // L3 with several workers (ROCELAB ecmp_local_bias: on|off): an ECMP
    // group's frames leave by the members on the receiving worker's own
    // ports when it has some (local bias), so they do not cross workers.
    bool ecmp_local_bias = false;
    std::uint32_t icmp_rate = 1000;
    // L3: dynamic neighbours by ARP / IPv6 ND (fwd/neigh_table.hpp), ROCELAB
    // neigh_* fields. Defaults are Linux's (base_reachable_time 30s,
    // retrans_time 1s, mcast_solicit 3, gc_stale_time 60s).
    struct neigh_settings {
        bool dynamic = true;             // neigh_dynamic: on|off
        std::uint32_t max = 4096;        // neigh_max: entries
        nanos reachable{30'000'000'000}; // neigh_reachable_time
        nanos retrans{1'000'000'000};    // neigh_retrans_time
        std::uint8_t probes = 3;         // neigh_probes
        nanos gc{60'000'000'000};        // neigh_gc_time: stale and unused this long -> removed
        std::uint8_t queue = 4;          // neigh_queue: frames waiting per unresolved neighbour (0..8)
    } neigh{};
    headroom_asic_cfg asic{};        // ROCELAB.headroom: constants for computed xoff/xon
    // The file was a SONiC config_db.json (config/config_db.hpp): what it
    // holds that rocelab does not model, sorted.
    bool config_db = false;
    std::vector<std::string> ignored_tables;  // "BGP_NEIGHBOR", "SYSLOG_SERVER", ...
    std::vector<std::string> ignored_fields;  // "PORT|lanes", "BUFFER_POOL|egress_lossy_pool (egress)", ...
};

}  // namespace rocelab
