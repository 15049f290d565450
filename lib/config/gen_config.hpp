// gen_config.hpp - rocelab-gen's configuration: hosts, flows (RC QPs),
// workload pattern, loss injection and PFC sources, validated on the control
// path into an immutable gen_cfg.
//
// Two front ends fill the same fields through one setter, so a command-line
// shortcut and a YAML key always accept exactly the same text:
//   command line   --pattern incast --senders 4 --rate 10Gbps --msg-size 1MiB
//   YAML           pattern: incast
//                  senders: 4
//                  rate: 10Gbps
//                  msg_size: 1MiB
// (dashes and underscores are the same). Every quantity has its unit written
// out (10Gbps, 2s, 64KiB, 1%). A bad value gives one message naming the
// field, the text given and the accepted range; the app exits 2.
//
// Keys (default):
//   seed N (1)            one seed for every random choice (loss, arrivals, permutation)
//   ip_version 4|6 (4)    address family of the default hosts: IPv4 10.0.<port>.<n>
//                         or IPv6 fc00::<port>:<n> (RoCEv2 over IPv6, hosts answer
//                         ND); explicit hosts take either kind of address in `ip`
//   rate RATE (driver)    port line rate: every port's line-rate cap and the
//                         default per-QP pacing rate
//   flow_rate RATE (rate) per-QP pacing rate
//   pattern               one-to-one | incast | permutation | all-to-all |
//                         ring-allreduce (all-reduce) | all-gather |
//                         reduce-scatter | alltoall (one-to-one)
//                         Patterns use the explicit hosts when given (host i
//                         in the place of port i), else one host per port.
//                         Collectives (docs/generator.md): msg_size is
//                         nccl-tests' size S (the whole buffer); every
//                         message is one chunk of S / H (rounded up to 4
//                         bytes). all-reduce: ring host i -> host (i+1) mod
//                         H, 2(H-1) steps; all-gather and reduce-scatter: the
//                         same ring, H-1 steps; step s+1 waits for the host's
//                         step-s message to be ACKed and its predecessor's
//                         step-s message to arrive. alltoall: every host
//                         sends a chunk to every other host, one step; a host
//                         starts iteration k+1 once its H-1 messages of k are
//                         ACKed and the H-1 sent to it have arrived.
//                         `messages` = collectives (0 = unlimited)
//   planes N (1)          ring collectives over N planes: host i is server
//                         i / N's NIC port in plane i % N; one ring per plane
//   striping              static (even) | weighted (by each plane's progress)
//   senders N (1)         one-to-one: QPs from port 0 to the last port;
//                         incast: senders into one receiver (the last port),
//                         spread over the other ports as extra hosts
//   msg_size SIZE (64KiB) fixed message size
//   size_dist             fixed | uniform:LO-HI (uniform:4KiB-1MiB) | cdf:FILE
//   arrivals              closed-loop (default, `outstanding` in flight) |
//                         fixed:INTERVAL | poisson:MEAN_INTERVAL
//   outstanding N (4)     closed-loop messages in flight per QP
//   messages N (0)        messages per QP (0 = unlimited); the run ends when
//                         every QP has completed its messages
//   start TIME (0s)       first message of every flow; start_stagger TIME adds
//                         i x stagger to flow i
//   pmtu 256..4096 (1024), window N (128 packets), ack_timeout CODE|TIME (14
//   = 67ms; a time is rounded up to the next 4.096us x 2^code), retry_cnt
//   0..7 (7), retry_infinite bool (false: retry_cnt 7 is 7 retries, as
//   the IBTA says), start_psn 0..16777215 (0: the QP's first PSN, for the
//   requester's first packet and the responder's expected PSN; near 2^24 it
//   exercises the wrap), op write|send (write),
//   dscp 0..63 (26), priority 0..7 (3, the PFC priority the QP's class uses),
//   ack_every N (0: AckReq only on the last packet of a message),
//   ack_coalesce N (1)
//   loss PERCENT (0%)     i.i.d. loss of data packets (at the receiver, before
//                         any check; seeded); ack_loss PERCENT (0%) the same
//                         for ACK/NAK packets
//   link_delay TIME (0s)  one-way delay added to every received frame
//   duration TIME         stop after TIME (none: until SIGINT or messages done)
//   mbufs N (16384)
//   pfc_tx port=P,prio=3[,prio=4],quanta=Q,interval=T,count=N,start=T
//                         a PFC frame source on port P (repeatable)
//   DCQCN (docs/generator.md "DCQCN"; reference sec. 4). The line rate is
//   known only at run time, so the profile and the overrides are kept apart
//   and merged by resolve_dcqcn(cfg, line_rate):
//   dcqcn off|dcqcn_paper|nvidia_cx|hpcc_ns3 (nvidia_cx)   reaction-point profile
//   reaction-point overrides (unset = the profile's value; NVIDIA names):
//     rpg_time_reset TIME 1ns..1s        rate-increase timer (nvidia_cx 300us)
//     rpg_byte_reset SIZE 0B..1GiB       byte counter, 0B = off (32767B)
//     rpg_threshold 1..31                fast-recovery stages F (1)
//     rpg_ai_rate / rpg_hai_rate RATE    0bps..1Tbps (5Mbps / 50Mbps)
//     rpg_min_rate RATE 1bps..1Tbps      floor (1Mbps)
//     rpg_max_rate RATE 0bps..1Tbps      cap, 0bps = line rate (0bps)
//     rpg_gd 10..15                      cut = alpha x 2^(10 - rpg_gd) (11: alpha/2)
//     rpg_min_dec_fac 0%..100%           a cut keeps >= this share of the rate (50%)
//     dce_tcp_g 0..1023                  NVIDIA fixed point: g = (1024 - value)/1024
//                                        (1019 -> g = 5/1024; 1020 -> 1/256)
//     dce_tcp_rtt TIME 1ns..1s           alpha update period (1us)
//     initial_alpha_value 0..1023        alpha on the first CNP = value/1024 (1023)
//     rate_reduce_monitor_period TIME 0s..1s  one cut per period, 0s = every CNP (4us)
//     rate_to_set_on_first_cnp RATE 0bps..1Tbps  0bps = off (0bps)
//     clamp_tgt_rate bool (false), clamp_tgt_rate_after_time_inc bool (true)
//   notification point (resolve_dcqcn_np; no CNPs when dcqcn is off):
//     cnp_mode per_qp|per_port (per_qp; hpcc_ns3: per_port, the profile's
//                                        dcqcn_np_defaults) per_qp: <= 1 CNP per
//                                        cnp_interval per QP; per_port:
//                                        min_time_between_cnps per port
//     cnp_interval TIME 0s..1s (50us), min_time_between_cnps TIME 0s..1s (0s)
//     cnp_dscp 0..63 (48), cnp_802p_prio 0..7 (6)
//   dcqcn_trace FILE ("")    CSV of per-QP rate traces; empty = off
//   hosts / flows         YAML lists for explicit set-ups (see docs/generator.md):
//     hosts: [{name: a, port: 0, mac: 02:00:00:00:00:01, ip: 10.0.0.1}, ...]
//            (ip: an IPv4 or IPv6 address; a flow's two hosts share a family)
//     flows: [{src: a, dst: b, msg_size: 1MiB, rate: 5Gbps, start: 10ms}, ...]
// Counters: none (control path).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/result.hpp"
#include "core/units.hpp"
#include "roce/arrivals.hpp"
#include "roce/dcqcn.hpp"
#include "roce/loss.hpp"
#include "roce/qp_cfg.hpp"

namespace rocelab {

// ring_allreduce .. alltoall are collectives (is_collective): iterations of
// steps, each host waiting for its part of the previous step (below).
enum class gen_pattern : std::uint8_t {
    one_to_one,
    incast,
    permutation,
    all_to_all,
    ring_allreduce,
    all_gather,
    reduce_scatter,
    alltoall
};
const char* gen_pattern_name(gen_pattern p) noexcept;
constexpr bool is_collective(gen_pattern p) noexcept {
    return p == gen_pattern::ring_allreduce || p == gen_pattern::all_gather || p == gen_pattern::reduce_scatter ||
           p == gen_pattern::alltoall;
}
// nccl-tests' bus bandwidth factor over H ranks: busbw = algbw x this
// (all-reduce 2(H-1)/H; all-gather, reduce-scatter and alltoall (H-1)/H).
inline double collective_bus_factor(gen_pattern p, std::uint32_t hosts) noexcept {
    if (hosts == 0) { return 0.0; }
    const double h = double(hosts);
    return p == gen_pattern::ring_allreduce ? 2.0 * (h - 1.0) / h : (h - 1.0) / h;
}
// nccl-tests' bandwidths of a collective of `size` (per rank) that took
// `mean_ns` on average: algbw = size / time and busbw = algbw x
// collective_bus_factor, in Gbps (bits per nanosecond); 0 with no time.
struct collective_bw {
    double algbw_gbps = 0;
    double busbw_gbps = 0;
};
inline collective_bw collective_bandwidth(gen_pattern p, std::uint32_t hosts, bytes size, double mean_ns) noexcept {
    if (!(mean_ns > 0)) { return {}; }
    const double algbw = double(size.v) * 8.0 / mean_ns;
    return {algbw, algbw * collective_bus_factor(p, hosts)};
}

struct gen_host {
    std::string name;
    int port = 0;  // index into the bound ports
    std::array<std::uint8_t, 6> mac{};
    std::uint32_t ip = 0;  // host order (IPv4 hosts)
    bool v6 = false;       // an IPv6 host: RoCEv2 over IPv6, answers ND
    std::array<std::uint8_t, 16> ip6{};  // network order (IPv6 hosts)
    // Its default gateway's MAC (an L3 switch's router MAC): frames from
    // this host go to it instead of the peer host's MAC. Unset: same L2.
    std::optional<std::array<std::uint8_t, 6>> gateway;
};

struct gen_size_cfg {
    size_kind kind = size_kind::fixed;
    bytes fixed{65536};
    bytes lo{0};
    bytes hi{0};
    std::string cdf_file;
};

struct gen_flow {
    std::string name;
    int src_host = 0;
    int dst_host = 0;
    qp_cfg qp{};
    bits_per_sec rate{0};  // 0 = the port rate
    std::uint8_t priority = 3;
    nanos start{0};
    arrival_cfg arrivals{};
    gen_size_cfg sizes{};
    // Ring collectives over planes (gen_cfg::planes): the flow's plane and
    // its source's server (host index / planes).
    std::uint32_t plane = 0;
    std::uint32_t server = 0;
};

struct pfc_source_cfg {
    int port = 0;
    std::uint8_t class_enable = 0;
    std::uint16_t quanta = 0xFFFF;
    nanos interval{0};  // 0 = once
    std::uint64_t count = 1;  // 0 = unlimited
    nanos start{0};
};

// DCQCN reaction-point keys given explicitly; unset ones come from the
// profile (resolve_dcqcn). Units as in dcqcn_cfg; the two NVIDIA fixed-point
// integers are kept as given.
struct dcqcn_overrides {
    std::optional<nanos> rpg_time_reset;
    std::optional<bytes> rpg_byte_reset;
    std::optional<std::uint32_t> rpg_threshold;
    std::optional<bits_per_sec> rpg_ai_rate;
    std::optional<bits_per_sec> rpg_hai_rate;
    std::optional<bits_per_sec> rpg_min_rate;
    std::optional<bits_per_sec> rpg_max_rate;
    std::optional<std::uint32_t> rpg_gd;
    std::optional<std::uint32_t> rpg_min_dec_fac;       // percent
    std::optional<std::uint32_t> dce_tcp_g;             // 0..1023, g = (1024 - G)/1024
    std::optional<nanos> dce_tcp_rtt;
    std::optional<std::uint32_t> initial_alpha_value;   // 0..1023, alpha = value/1024
    std::optional<nanos> rate_reduce_monitor_period;
    std::optional<bits_per_sec> rate_to_set_on_first_cnp;
    std::optional<bool> clamp_tgt_rate;
    std::optional<bool> clamp_tgt_rate_after_time_inc;
};

// Explicit YAML flow entry before host names are resolved.
struct gen_flow_spec {
    std::string name;  // optional; default "src->dst#i"
    std::string src;
    std::string dst;
    std::vector<std::pair<std::string, std::string>> overrides;  // key, value (per-flow keys)
    int line = 0;
};

struct gen_cfg {
    std::string source = "(defaults)";
    std::uint64_t seed = 1;
    bits_per_sec rate{0};       // 0 = driver speed
    bits_per_sec flow_rate{0};  // 0 = port rate
    gen_pattern pattern = gen_pattern::one_to_one;
    std::uint32_t senders = 1;
    int ip_version = 4;         // of the default (pattern) hosts
    gen_size_cfg sizes{};
    arrival_cfg arrivals{arrival_kind::closed_loop, nanos{0}, 4, 0, nanos{0}};
    nanos start_stagger{0};
    qp_cfg qp{};
    std::uint8_t priority = 3;
    loss_cfg data_loss{};
    loss_cfg ack_loss{};
    nanos link_delay{0};
    std::optional<nanos> duration;
    std::uint32_t mbufs = 16384;
    std::vector<pfc_source_cfg> pfc_sources;
    dcqcn_profile dcqcn = dcqcn_profile::nvidia_cx;
    dcqcn_overrides rp_overrides{};
    dcqcn_np_cfg cnp{};               // `enabled` is set by resolve_dcqcn_np
    bool cnp_mode_set = false;        // cnp_mode given; else the profile's (dcqcn_np_defaults)
    std::string dcqcn_trace;          // CSV path; empty = no trace
    std::vector<gen_host> hosts;        // explicit (YAML); empty = one host per port
    bool hosts_generated = false;       // `hosts` were made by expand_gen_cfg (not explicit)
    std::vector<gen_flow_spec> flow_specs;  // explicit (YAML); empty = pattern
    // Names of the hosts a pattern puts on each port (index = port; empty =
    // "h<port>"); a second host on a port gets "_<n>" appended. Set by
    // rocelab-fabric scenarios, whose hosts have their own names.
    std::vector<std::string> port_host_names;
    // gateway_mac: every host's default gateway unless the host names its own.
    std::optional<std::array<std::uint8_t, 6>> gateway_mac;
    // Filled by expand_gen_cfg once the ports are known.
    std::vector<gen_flow> flows;
    // Collectives (filled by expand_gen_cfg): hosts H; steps per collective
    // (all-reduce 2(H-1), all-gather and reduce-scatter H-1, alltoall 1);
    // chunk bytes per message (msg_size / H rounded up to 4 bytes);
    // collectives to run (0 = unlimited). The rings' flow i is host i ->
    // host (i+1) mod H; alltoall's flows are every ordered pair, source-major.
    std::uint32_t ring_hosts = 0;   // ranks: servers, with planes
    std::uint32_t ring_steps = 0;
    std::uint64_t ring_chunk = 0;
    std::uint64_t ring_collectives = 0;
    // Multi-plane (docs/generator.md "Planes"): a server has `planes` NIC
    // ports, each in its own plane; host i is server i / planes's port in
    // plane i % planes. A ring collective runs one ring per plane over the
    // servers, the buffer striped over them: evenly (static), or in
    // proportion to the throughput each plane gave the server in the
    // previous collective (weighted). A server starts a collective once it
    // has finished the previous one on every plane.
    std::uint32_t planes = 1;
    bool striping_weighted = false;
};

// Sets one key (command-line option without "--", or YAML key) from text.
// Returns "" or one error line naming the field and the accepted range.
std::string gen_cfg_set(gen_cfg& c, const std::string& key, const std::string& value);

// Same for a per-flow override (subset of keys) on a flow.
std::string gen_flow_set(gen_flow& f, const std::string& key, const std::string& value);

// Loads YAML (top-level keys as above). Errors name file:line.
result<gen_cfg> load_gen_cfg(const std::string& path) noexcept;
result<gen_cfg> load_gen_cfg_from_string(const std::string& yaml, const std::string& source) noexcept;

// Default hosts (one per port: MAC 02:00:00:00:<port>:01 style, IP
// 10.0.<port>.1, or fc00::<port>:1 with ip_version 6) and flows from the pattern, or the explicit flows. Needs the
// number of ports; "" or an error.
std::string expand_gen_cfg(gen_cfg& c, int nports);

// The reaction-point parameters: the profile's defaults at line_rate with
// the overrides on top.
dcqcn_cfg resolve_dcqcn(const gen_cfg& c, bits_per_sec line_rate) noexcept;
// The notification-point parameters (enabled unless dcqcn is off).
dcqcn_np_cfg resolve_dcqcn_np(const gen_cfg& c) noexcept;

// 4.096us x 2^code >= t (smallest code), 1..31.
std::uint8_t ack_timeout_code_for(nanos t) noexcept;

}  // namespace rocelab
