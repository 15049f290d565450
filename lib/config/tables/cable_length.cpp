// CABLE_LENGTH: the cable length of each port, for the headroom formula
// (xoff: auto): {AZURE: {Ethernet0: 5m, "Ethernet4,Ethernet8": 40m, global: 5m}}.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <map>

namespace rocelab::detail {
namespace {

constexpr field_spec lengths[] = {
    {.name = "a port, a comma list or `global`",
     .kind = field_kind::length,
     .lo = 0,
     .hi = 100000,
     .noun = "a length in metres such as 5m, 40m or 2.5m, or in kilometres such as 10km",
     .dflt = "`5m`",
     .doc = "the port's cable (SONiC's server-facing default 5m); a bare number is an error; `global` first, "
            "then "
            "per-port entries, each port at most once"}};

}  // namespace

constexpr table_spec cable_length_table{
    .name = "CABLE_LENGTH",
    .shape = table_shape::named_entries,
    .key = "a name (SONiC uses `AZURE`), then port -> length",
    .doc = "cable length per port, only used by `xoff: auto`.",
    .fields = lengths,
};

void loader::load_cable_length(const entry& t) {
    const field_spec& length = cable_length_table.fields[0];
    const auto names = entries(t);
    std::vector<std::vector<entry>> lists;  // keeps the entries alive; never assigned
    lists.reserve(names.size());
    std::vector<const entry*> order;  // global keys first, then the others, each in file order
    for (const auto& n : names) {
        lists.push_back(entries(n));
    }
    for (const bool global : {true, false}) {
        for (const auto& list : lists) {
            for (const auto& e : list) {
                if (is_global_key(e.key) == global) {
                    order.push_back(&e);
                }
            }
        }
    }
    std::map<std::size_t, std::string> set_by;
    bool global_seen = false;
    for (const entry* kp : order) {
        const entry& k = *kp;
        const std::string& path = k.path;
        const auto targets = port_list(k.key, k.key_node.Mark(), path);
        if (targets.front() == all_ports) {
            if (global_seen) {
                fail(k.key_node.Mark(), path, "a global cable length is already given; give only one");
            }
            global_seen = true;
        }
        const double m = get_length(k, length);
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
