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

#include "config/result.hpp"
#include "config/switch_cfg.hpp"

namespace rocelab {

// Read and validate `path`. The error message starts with `path:line:column:`.
result<switch_cfg> load_switch_cfg(const std::string& path) noexcept;

// Validate YAML text; `source_name` is used in error messages and as cfg.source.
result<switch_cfg> load_switch_cfg_from_string(std::string_view yaml, std::string source_name) noexcept;

// The configuration used without a file: mode l2, every probed port with
// AZURE+RoCE maps (azure_roce_maps()), the AZURE+RoCE scheduler
// (azure_roce_scheduler()), pfc_enable 3,4. conf/default.yaml spells it out.
switch_cfg default_switch_cfg();

// One port with the built-in defaults: AZURE+RoCE maps and scheduler,
// pfc_enable 3,4, mtu 9100, trust dscp. name is empty and port_id -1.
// (Ignores the file's `global` PORT_QOS_MAP/QUEUE entries; for probed ports
// of a loaded config use probed_port_cfg().)
port_cfg default_port_cfg();

// The configuration of probed DPDK port `port_id` when cfg.ports is empty:
// cfg.port_defaults named "Ethernet<port_id>".
port_cfg probed_port_cfg(const switch_cfg& cfg, int port_id);

}  // namespace rocelab
