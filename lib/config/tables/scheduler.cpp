// SCHEDULER: DWRR/STRICT schedulers by name (and the default QUEUE bindings).
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

void loader::load_schedulers(const entry* t) {
    _schedulers.clear();
    _schedulers["scheduler.0"] = {sched_type::dwrr, 14};
    _schedulers["scheduler.1"] = {sched_type::dwrr, 15};
    _schedulers["scheduler.strict"] = {sched_type::strict, 0};
    if (t != nullptr) {
        for (const auto& k : entries(t->value, t->key_node.Mark(), "SCHEDULER")) {
            const std::string path = "SCHEDULER|" + k.key;
            const auto f = fields(k, path, {"type", "weight"},
                                  {"meter_type", "cir", "cbs", "pir", "pbs", "priority"});
            const auto* type = find(f, "type");
            if (type == nullptr) {
                fail(k.key_node.Mark(), path, "type is required: DWRR, WRR or STRICT");
            }
            queue_sched q;
            const std::string ty = get_choice(*type, path + "|type", {"DWRR", "WRR", "STRICT"});
            q.type = ty == "STRICT" ? sched_type::strict : sched_type::dwrr;
            const auto* w = find(f, "weight");
            if (q.type == sched_type::strict) {
                if (w != nullptr) {
                    fail(w->key_node.Mark(), path + "|weight",
                         "weight is only used with type DWRR or WRR");
                }
                q.weight = 0;
            } else {
                if (w == nullptr) {
                    fail(k.key_node.Mark(), path, "type " + ty + " needs a weight 1..100");
                }
                q.weight = static_cast<std::uint32_t>(get_uint(*w, path + "|weight", 1, 100, "a weight"));
            }
            _schedulers[k.key] = q;
        }
    }
    // Default QUEUE bindings, by name, so redefining scheduler.0 changes them.
    scheduler_cfg s = azure_roce_scheduler();
    for (int q = 0; q < num_queues; ++q) {
        const char* name = (q == 3 || q == 4) ? "scheduler.1"
                           : q == 6           ? "scheduler.strict"
                                              : "scheduler.0";
        s.queues[static_cast<std::size_t>(q)] = _schedulers.at(name);
    }
    _cfg.port_defaults.sched = s;
    for (auto& p : _cfg.ports) {
        p.sched = s;
    }
}

}  // namespace rocelab::detail
