// CABLE_LENGTH: cable length per port (for xoff: auto).
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

// CABLE_LENGTH: {AZURE: {Ethernet0: 5m, "Ethernet4,Ethernet8": 40m, global: 5m}}.
void loader::load_cable_length(const entry& t) {
    struct item {
        std::string path;
        const entry* e;
    };
    const auto names = entries(t.value, t.key_node.Mark(), "CABLE_LENGTH");
    std::vector<std::vector<entry>> lists;  // keeps the entries alive; never assigned
    lists.reserve(names.size());
    std::vector<item> order;  // global keys first, then the others, each in file order
    for (const auto& n : names) {
        lists.push_back(entries(n.value, n.key_node.Mark(), "CABLE_LENGTH|" + n.key));
    }
    for (const bool global : {true, false}) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            for (const auto& e : lists[i]) {
                if (is_global_key(e.key) == global) {
                    order.push_back(item{"CABLE_LENGTH|" + names[i].key + "|" + e.key, &e});
                }
            }
        }
    }
    std::map<std::size_t, std::string> set_by;
    bool global_seen = false;
    for (const auto& [path, kp] : order) {
        const entry& k = *kp;
        const auto targets = port_list(k.key, k.key_node.Mark(), path);
        if (targets.front() == all_ports) {
            if (global_seen) {
                fail(k.key_node.Mark(), path, "a global cable length is already given; give only one");
            }
            global_seen = true;
        }
        const double m = get_cable_length(k, path);
        for (const std::size_t target : targets) {
            if (target != all_ports) {
                const auto [it, inserted] = set_by.emplace(target, path);
                if (!inserted) {
                    fail(k.key_node.Mark(), path,
                         "port " + _cfg.ports[target].name + " already gets a cable length from " +
                             it->second);
                }
            }
            for_target(target, [&](port_cfg& p, bool) { p.cable_length_m = m; });
        }
    }
}

}  // namespace rocelab::detail
