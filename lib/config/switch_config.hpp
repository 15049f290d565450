// switch_config.hpp - load rocelab-switch's configuration from YAML.
//
// The file uses SONiC CONFIG_DB table and field names written as YAML
// mappings (TABLE -> key -> field -> value); see docs/config.md for every
// table, field, unit and default, and conf/*.yaml for commented examples:
//
//   ROCELAB: {mode: l3}
//   PORT:
//     Ethernet0: {device: net_ring0, speed: 100Gbps, mtu: 9100}
//   INTERFACE:
//     "Ethernet0|10.0.0.1/31": {}
//   ROUTE:
//     "10.1.0.0/16": {nexthop: "10.0.0.0", ifname: "Ethernet0"}
//
// The whole file is validated before anything is returned: a config either
// loads completely or yields one config_error, e.g.
//
//   conf/leaf.yaml:7:33: PORT|Ethernet0|speed: "100G" has an unknown unit "G": ...
//
// Unknown tables and fields are errors (with a "did you mean"), so a typo is
// never silently ignored. No exception escapes these functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/result.hpp"
#include "config/switch_cfg.hpp"

namespace rocelab {

// Read and validate `path`. The error message starts with `path:line:column:`.
result<switch_cfg> load_switch_cfg(const std::string& path) noexcept;

// Validate YAML text; `source_name` is used in error messages and as cfg.source.
result<switch_cfg> load_switch_cfg_from_string(std::string_view yaml, std::string source_name) noexcept;

// The configuration used without a file: mode l2, every probed port with
// AZURE+RoCE maps (azure_roce_maps()), the AZURE+RoCE scheduler
// (azure_roce_scheduler()), pfc_enable 3,4, SONiC's RoCE buffers
// (default_buffer_pool(); lossless PGs 3-4 with xoff: auto, lossy PG 0) and
// WRED AZURE_LOSSLESS on queues 3 and 4. conf/default.yaml spells it out.
// The lossless PGs need the port speed: call resolve_port_speeds() once the
// ports are probed.
switch_cfg default_switch_cfg();

// One port with the built-in defaults: AZURE+RoCE maps and scheduler,
// pfc_enable 3,4, mtu 9100, trust dscp; BUFFER_PG 0 = ingress_lossy_profile
// (size 0, dynamic_th 3), BUFFER_PG 3-4 = lossless, dynamic_th 0, xoff: auto
// (pending until the speed is known); QUEUE 3-4 wred_profile AZURE_LOSSLESS.
// name is empty and port_id -1.
// (Ignores the file's `global` PORT_QOS_MAP/QUEUE entries; for probed ports
// of a loaded config use probed_port_cfg().)
port_cfg default_port_cfg();

// The configuration of probed DPDK port `port_id` when cfg.ports is empty:
// cfg.port_defaults named "Ethernet<port_id>".
port_cfg probed_port_cfg(const switch_cfg& cfg, int port_id);

// SONiC's default WRED_PROFILE AZURE_LOSSLESS: wred_<colour>_enable true,
// thresholds 1048576..2097152 bytes and drop probability 5 % for green,
// yellow and red alike, ecn_all.
wred_profile_cfg azure_lossless_wred_profile();

// The built-in BUFFER_POOL: ingress_lossless_pool, 12MiB, dynamic, accounted
// in 96-byte cells (the cell the headroom formula assumes, ROCELAB headroom).
buffer_pool_cfg default_buffer_pool();

// Start-up step after the DPDK ports are probed and cfg.ports is filled
// (probed_port_cfg for an empty PORT table). driver_speeds pairs an index
// into cfg.ports with the speed the driver reports (0 = unknown). A port
// without a PORT speed takes the driver's; then every xoff: auto priority
// group (the built-in lossless PGs 3-4 included) gets its xoff, xon and
// reserved bytes from the headroom formula at that speed and the port's
// cable length, and the reservations are checked against the pool.
// Idempotent. Returns "" or one error line starting with cfg.source, e.g.
//   <built-in defaults>: PORT|Ethernet0|speed: priority group 3 has xoff: auto ...
std::string resolve_port_speeds(switch_cfg& cfg, const std::vector<std::pair<int, bits_per_sec>>& driver_speeds);

// The effective configuration as text, for --check-config: mode, buffer
// model, every BUFFER_POOL, the ingress pool the MMU models (size, shared
// headroom, shared part), then one line per group of ports with the same
// settings (speed, MTU, cable length, PFC priorities, each configured PG's
// reserved/threshold/xoff/xon, each egress queue's BUFFER_QUEUE profile and
// limits), then the start-up notes (cfg.notes). Lines end with '\n'.
std::string describe_switch_cfg(const switch_cfg& cfg);

}  // namespace rocelab
