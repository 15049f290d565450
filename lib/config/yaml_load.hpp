// yaml_load.hpp - lib/config's own entry points from an already parsed YAML
// node (private to lib/config: it exposes yaml-cpp). Used by the topology
// and scenario loader, whose inline switch and generator configs are nodes
// of its own file: their errors then give that file's lines and columns.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config_db.hpp"
#include "config/gen_config.hpp"
#include "config/result.hpp"
#include "config/switch_cfg.hpp"

namespace rocelab::detail {

result<switch_cfg> switch_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept;
result<gen_cfg> gen_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept;

// The top-level tables the switch loader reads (ROCELAB, PORT, ...).
const std::vector<std::string>& switch_tables();

// config_db.json (config/config_db.hpp): `text` starts with '{' and `root`
// is a mapping with a DEVICE_METADATA or PORT table.
bool is_config_db(std::string_view text, const YAML::Node& root);

// The top-level tables of a config_db.json that rocelab does not model,
// sorted: everything but switch_tables() and the tables the rewrite reads
// (VLAN, VLAN_MEMBER).
std::vector<std::string> config_db_ignored_tables(const YAML::Node& root);

struct config_db_notes {
    std::vector<std::string> ignored_tables;  // sorted
    std::vector<std::string> ignored_fields;  // "PORT|lanes", "BUFFER_POOL|egress_lossy_pool (egress pool)", sorted
};

// Rewrites a parsed config_db.json in place into the switch loader's tables
// and encodings (see config_db.hpp). Returns "" or one error line
// "source:line:column: TABLE|key|field: ...". `ports` (--port-map) overrides
// the file's ROCELAB port_map.
std::string normalise_config_db(YAML::Node& root, const std::string& source, const port_map& ports,
                                config_db_notes& notes);

}  // namespace rocelab::detail
