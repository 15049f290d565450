// PFC_WD: the PFC watchdog per port, and (key GLOBAL) its poll interval.
// Descriptors and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <algorithm>
#include <map>

namespace rocelab::detail {
namespace {

using namespace literals;

// One PFC_WD entry's fields.
struct wd_override {
    std::optional<nanos> detection_time;
    std::optional<nanos> restoration_time;
    std::optional<pfc_wd_action> action;
};

constexpr std::string_view global_key = "GLOBAL";
constexpr std::string_view action_choices[] = {"drop", "forward", "alert"};
constexpr std::string_view refused[] = {"pfc_stat_history"};
constexpr std::string_view global_refused[] = {"BIG_RED_SWITCH"};

// Times: bare numbers are milliseconds (SONiC); below 100ms is a rocelab extension.
namespace fld {

constexpr field_spec detection_time = time_field("detection_time", (1_ms).v, (5000_ms).v, (1_ms).v, "`200ms`",
                                                 "a queue paused (PFC storm) this long is mitigated");
constexpr field_spec restoration_time =
    time_field("restoration_time", (1_ms).v, (60000_ms).v, (1_ms).v, "`200ms`",
               "mitigation ends after this long without received PFC");
constexpr field_spec action =
    choice_field("action", action_choices, "`drop`",
                 "`drop`: discard the queue's traffic and the PG's ingress (incl. PFC frames); "
                 "`forward`: ignore PFC and transmit; `alert`: count only");
constexpr field_spec all[] = {detection_time, restoration_time, action};

}  // namespace fld

namespace gfld {

// SONiC: 100..1000 ms; shorter is a rocelab extension.
constexpr field_spec poll_interval =
    time_field("POLL_INTERVAL", (1_ms).v, (1000_ms).v, (1_ms).v, "`10ms`",
               "how often the watchdog samples; at most the shortest detection or "
               "restoration time of an enabled port");
constexpr field_spec all[] = {poll_interval};

}  // namespace gfld
}  // namespace

constexpr table_spec pfc_wd_table = keyed_table(
    "PFC_WD",
    "a port, a comma list or `global` (every port); `GLOBAL` (upper case) holds POLL_INTERVAL (below)",
    "the PFC watchdog: an entry enables it on the port's `pfcwd_sw_enable` queues.", fld::all, refused);

constexpr table_spec pfc_wd_global_table =
    fields_table("PFC_WD|GLOBAL", "none: the fields are directly under `PFC_WD: {GLOBAL: ...}`",
                 "the watchdog's poll interval, for every port.", gfld::all, global_refused);

void loader::load_pfc_wd(const entry& t) {
    std::map<std::size_t, YAML::Mark> enabled_by;  // port (or all_ports) -> last key that set it
    std::optional<nanos> poll;
    YAML::Mark poll_mark;
    // PFC_WD|GLOBAL holds the poll interval, not a port's settings.
    const auto global_entry = [&](const entry& k) {
        if (k.key != global_key) {
            return false;
        }
        const auto f = fields(k, pfc_wd_global_table);
        if (const auto* e = find(f, gfld::poll_interval)) {
            poll = get_time(*e, gfld::poll_interval);
            poll_mark = mark_of(*e);
        }
        return true;
    };
    walk_port_keys(t, pfc_wd_table, global_entry, [&](const entry& k, const field_map& f) {
        wd_override o;
        read(f, fld::detection_time, o.detection_time);
        read(f, fld::restoration_time, o.restoration_time);
        if (const auto* e = find(f, fld::action)) {
            const std::string a = get_choice(*e, fld::action);
            o.action = a == "drop"      ? pfc_wd_action::drop
                       : a == "forward" ? pfc_wd_action::forward
                                        : pfc_wd_action::alert;
        }
        return [&, o, mark = k.key_node.Mark()](std::size_t target) {
            enabled_by[target] = mark;
            for_target(target, [&](port_cfg& p, bool) {
                p.wd.enabled = true;
                set_if(p.wd.detection_time, o.detection_time);
                set_if(p.wd.restoration_time, o.restoration_time);
                set_if(p.wd.action, o.action);
            });
        };
    });
    if (poll) {
        for_target(all_ports, [&](port_cfg& p, bool) { p.wd.poll_interval = *poll; });
    }
    // The watchdog cannot decide faster than it polls (SONiC's rule).
    const auto check = [&](const port_cfg& p, const std::string& who, const YAML::Mark& at) {
        const nanos shortest = std::min(p.wd.detection_time, p.wd.restoration_time);
        if (p.wd.enabled && p.wd.poll_interval > shortest) {
            fail(poll ? poll_mark : at, poll ? "PFC_WD|GLOBAL|POLL_INTERVAL" : "PFC_WD|" + who,
                 "poll interval " + format_time(p.wd.poll_interval) + (poll ? "" : " (the default)") +
                     " is longer than the shortest detection/restoration time " + format_time(shortest) +
                     " of " + who + "; accepted: POLL_INTERVAL " +
                     format_time(nanos{gfld::poll_interval.lo}) + ".." + format_time(shortest) +
                     " (set PFC_WD|GLOBAL|POLL_INTERVAL) or longer times");
        }
    };
    if (_cfg.ports.empty()) {
        const auto it = enabled_by.find(all_ports);
        check(_cfg.port_defaults, "global", it == enabled_by.end() ? t.key_node.Mark() : it->second);
    }
    for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
        auto it = enabled_by.find(i);
        if (it == enabled_by.end()) {
            it = enabled_by.find(all_ports);
        }
        check(_cfg.ports[i], _cfg.ports[i].name, it == enabled_by.end() ? t.key_node.Mark() : it->second);
    }
}

}  // namespace rocelab::detail
