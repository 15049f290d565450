// SCHEDULER: DWRR/STRICT schedulers by name, and the default QUEUE bindings
// (by name, so redefining scheduler.0 changes them).
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view type_choices[] = {"DWRR", "WRR", "STRICT"};
constexpr std::string_view refused[] = {"meter_type", "cir", "cbs", "pir", "pbs", "priority"};

namespace fld {

constexpr field_spec type =
    choice_field("type", type_choices, "required",
                 "`WRR` is treated as `DWRR`; `STRICT` is served before every DWRR queue");
constexpr field_spec weight =
    count_field("weight", 1, 100, "a weight", "required with DWRR/WRR",
                "the queue's share against the other DWRR queues; not allowed with `STRICT`");
constexpr field_spec all[] = {type, weight};

}  // namespace fld
}  // namespace

constexpr table_spec scheduler_table = keyed_table(
    "SCHEDULER", "a scheduler name (`scheduler.0`, `scheduler.1` and `scheduler.strict` are built in)",
    "egress schedulers, bound to queues by QUEUE `scheduler`.", fld::all, refused);

void loader::load_schedulers(const entry* t) {
    _schedulers.clear();
    _schedulers["scheduler.0"] = {sched_type::dwrr, 14};
    _schedulers["scheduler.1"] = {sched_type::dwrr, 15};
    _schedulers["scheduler.strict"] = {sched_type::strict, 0};
    if (t != nullptr) {
        for (const auto& k : entries(*t)) {
            const std::string& path = k.path;
            const auto f = fields(k, scheduler_table);
            const entry& type = required(k, f, fld::type, "type is required: DWRR, WRR or STRICT");
            queue_sched q;
            const std::string ty = get_choice(type, fld::type);
            q.type = ty == "STRICT" ? sched_type::strict : sched_type::dwrr;
            const auto* w = find(f, fld::weight);
            if (q.type == sched_type::strict) {
                if (w != nullptr) {
                    fail(w->key_node.Mark(), w->path, "weight is only used with type DWRR or WRR");
                }
                q.weight = 0;
            } else {
                if (w == nullptr) {
                    fail(k.key_node.Mark(), path,
                         "type " + ty + " needs a weight " + range_text(fld::weight));
                }
                q.weight = static_cast<std::uint32_t>(get_uint(*w, fld::weight));
            }
            _schedulers[k.key] = q;
        }
    }
    // Default QUEUE bindings, by name, so redefining scheduler.0 changes them.
    scheduler_cfg s = azure_roce_scheduler();
    for (int q = 0; q < num_queues; ++q) {
        const char* name = (q == 3 || q == 4) ? "scheduler.1" : q == 6 ? "scheduler.strict" : "scheduler.0";
        s.queues[static_cast<std::size_t>(q)] = _schedulers.at(name);
    }
    _cfg.port_defaults.sched = s;
    for (auto& p : _cfg.ports) {
        p.sched = s;
    }
}

}  // namespace rocelab::detail
