// config_db.hpp - read a SONiC config_db.json as rocelab-switch's config.
//
// load_switch_cfg() recognises a config_db.json by its content: the text
// starts with '{' and the top-level object has a DEVICE_METADATA or PORT
// table. Such a file is rewritten, as a parsed YAML tree, into the tables and
// encodings the YAML loader reads (docs/config.md, "config_db.json"), then
// loaded by the same loader, so a config_db.json and its YAML equivalent give
// the same switch_cfg:
//
//   * tables rocelab does not model (BGP_NEIGHBOR, SYSLOG_SERVER, FEATURE,
//     BUFFER_PORT_*_PROFILE_LIST, ...) are left out and listed in
//     switch_cfg::ignored_tables;
//   * SONiC fields and entries with no rocelab meaning (PORT lanes/alias/
//     index, DEVICE_METADATA hostname, other line cards' QUEUE keys, ...)
//     are left out and listed in switch_cfg::ignored_fields;
//   * every buffer table is read (egress pools, BUFFER_QUEUE, "NULL"
//     profiles, DEVICE_METADATA buffer_model); LOSSLESS_TRAFFIC_PATTERN
//     becomes ROCELAB headroom lossless_mtu / small_packet_percent;
//   * multi-ASIC / VOQ chassis keys "<host>|<asic>|<port>|<queues>" of this
//     line card (DEVICE_METADATA hostname, asic_name) lose the prefix;
//   * references "[TABLE|name]" become "name" (the table is checked);
//   * PORT speed "100000" (Mb/s) becomes 100000Mbps;
//   * VLAN_MEMBER tagging_mode tagged sets the port's vlan_mode/vlan;
//   * a non-empty INTERFACE table selects ROCELAB mode l3 (unless given);
//   * ports get DPDK port ids by order (SONiC `index`, then the number in the
//     name: Ethernet0 < Ethernet4 < ...), or devices/ids from an explicit
//     port map (ROCELAB: {port_map: {...}} in the file, or --port-map).
//     With an explicit map, ports it does not name are left out, with
//     their entries in the port-keyed tables.
// Every other table and field goes through the loader's checks unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/result.hpp"
#include "config/switch_cfg.hpp"

namespace rocelab {

// SONiC port name -> DPDK device name ("net_ring0") or port id ("0").
struct port_map_entry {
    std::string name;
    std::string target;
};
using port_map = std::vector<port_map_entry>;

// --port-map: "Ethernet0=net_ring0,Ethernet4=1" (entries separated by
// commas, spaces or new lines), or the path of a file holding such entries
// ('#' starts a comment). An error is one line starting with "--port-map".
result<port_map> parse_port_map(std::string_view spec) noexcept;

struct load_options {
    port_map ports;  // overrides ROCELAB port_map and the by-order mapping (config_db.json only)
};

// As load_switch_cfg(path) / load_switch_cfg_from_string(), with options.
result<switch_cfg> load_switch_cfg(const std::string& path, const load_options& opt) noexcept;
result<switch_cfg> load_switch_cfg_from_string(std::string_view text, std::string source_name,
                                               const load_options& opt) noexcept;

// True when `text` starts (after white space) with '{'. The loader also
// requires a DEVICE_METADATA or PORT table before treating it as config_db.
bool starts_as_json_object(std::string_view text) noexcept;

}  // namespace rocelab
