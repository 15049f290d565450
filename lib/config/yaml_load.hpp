// yaml_load.hpp - lib/config's own entry points from an already parsed YAML
// node (private to lib/config: it exposes yaml-cpp). Used by the topology
// and scenario loader, whose inline switch and generator configs are nodes
// of its own file: their errors then give that file's lines and columns.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "config/gen_config.hpp"
#include "config/result.hpp"
#include "config/switch_cfg.hpp"

namespace rocelab::detail {

result<switch_cfg> switch_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept;
result<gen_cfg> gen_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept;

}  // namespace rocelab::detail
