// DEVICE_METADATA: the switch MAC and the buffer model.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

void loader::load_device_metadata(const entry& t) {
    for (const auto& k : entries(t.value, t.key_node.Mark(), "DEVICE_METADATA")) {
        const std::string path = "DEVICE_METADATA|" + k.key;
        if (k.key != "localhost") {
            fail(k.key_node.Mark(), path,
                 "unknown key; the only key is localhost" + did_you_mean(k.key, {"localhost"}));
        }
        const auto f = fields(k, path, {"mac", "buffer_model"},
                              {"hostname", "hwsku", "platform", "type", "bgp_asn", "deployment_id"});
        if (const auto* e = find(f, "mac")) {
            _cfg.switch_mac = get_mac(*e, path + "|mac", true);
        }
        if (const auto* e = find(f, "buffer_model")) {
            _cfg.model = get_choice(*e, path + "|buffer_model", {"traditional", "dynamic"}) == "dynamic"
                             ? buffer_model::dynamic
                             : buffer_model::traditional;
        }
    }
}

}  // namespace rocelab::detail
