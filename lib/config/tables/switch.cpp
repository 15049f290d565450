// SWITCH: FDB aging.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

void loader::load_switch(const entry& t) {
    for (const auto& k : entries(t.value, t.key_node.Mark(), "SWITCH")) {
        const std::string path = "SWITCH|" + k.key;
        if (k.key != "switch") {
            fail(k.key_node.Mark(), path,
                 "unknown key; the only key is switch" + did_you_mean(k.key, {"switch"}));
        }
        const auto f = fields(k, path, {"fdb_aging_time"},
                              {"ecmp_hash_seed", "lag_hash_seed", "fdb_unicast_miss_packet_action"});
        if (const auto* e = find(f, "fdb_aging_time")) {
            using namespace literals;
            // SONiC gives this in seconds, so a bare number is accepted.
            _cfg.fdb_aging = get_time(*e, path + "|fdb_aging_time", 1_s, 1000000_s, 1_s);
        }
    }
}

}  // namespace rocelab::detail
