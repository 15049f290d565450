// PFC_WD: the PFC watchdog per port, and its poll interval.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

namespace {

// One PFC_WD entry's fields.
struct wd_override {
    std::optional<nanos> detection_time;
    std::optional<nanos> restoration_time;
    std::optional<pfc_wd_action> action;
};

}  // namespace

// PFC_WD: {Ethernet0: {detection_time: 200, restoration_time: 200, action: drop}, GLOBAL: {POLL_INTERVAL:
// 200}}.
void loader::load_pfc_wd(const entry& t) {
    using namespace literals;
    const auto all = entries(t.value, t.key_node.Mark(), "PFC_WD");
    const auto order = global_first(all, [](const entry& e) { return is_global_key(e.key); });
    std::map<std::pair<std::size_t, std::string>, std::string> set_by;
    std::map<std::size_t, YAML::Mark> enabled_by;  // port (or all_ports) -> last key that set it
    std::optional<nanos> poll;
    YAML::Mark poll_mark;
    bool global_seen = false;
    for (const entry* kp : order) {
        const entry& k = *kp;
        const std::string path = "PFC_WD|" + k.key;
        if (k.key == "GLOBAL") {
            const auto f = fields(k, path, {"POLL_INTERVAL"}, {"BIG_RED_SWITCH"});
            if (const auto* e = find(f, "POLL_INTERVAL")) {
                // SONiC: 100..1000 ms; shorter is a rocelab extension.
                poll = get_time(*e, path + "|POLL_INTERVAL", 1_ms, 1000_ms, 1_ms);
                poll_mark = mark_of(*e);
            }
            continue;
        }
        const auto targets = port_list(k.key, k.key_node.Mark(), path);
        if (targets.front() == all_ports) {
            if (global_seen) {
                fail(k.key_node.Mark(), path, "\"global\" and \"*\" are the same key; give only one");
            }
            global_seen = true;
        }
        const auto f =
            fields(k, path, {"detection_time", "restoration_time", "action"}, {"pfc_stat_history"});
        wd_override o;
        // Bare numbers are milliseconds (SONiC); below 100ms is a rocelab extension.
        if (const auto* e = find(f, "detection_time")) {
            o.detection_time = get_time(*e, path + "|detection_time", 1_ms, 5000_ms, 1_ms);
        }
        if (const auto* e = find(f, "restoration_time")) {
            o.restoration_time = get_time(*e, path + "|restoration_time", 1_ms, 60000_ms, 1_ms);
        }
        if (const auto* e = find(f, "action")) {
            const std::string a = get_choice(*e, path + "|action", {"drop", "forward", "alert"});
            o.action = a == "drop"      ? pfc_wd_action::drop
                       : a == "forward" ? pfc_wd_action::forward
                                        : pfc_wd_action::alert;
        }
        for (const std::size_t target : targets) {
            if (target != all_ports) {
                for (const auto& [name, e] : f) {
                    const auto [it, inserted] = set_by.emplace(std::pair{target, name}, k.key);
                    if (!inserted) {
                        fail(e.key_node.Mark(), path + "|" + name,
                             "port " + _cfg.ports[target].name + " already gets " + name + " from key " +
                                 quote(it->second));
                    }
                }
            }
            enabled_by[target] = k.key_node.Mark();
            for_target(target, [&](port_cfg& p, bool) {
                p.wd.enabled = true;
                if (o.detection_time) {
                    p.wd.detection_time = *o.detection_time;
                }
                if (o.restoration_time) {
                    p.wd.restoration_time = *o.restoration_time;
                }
                if (o.action) {
                    p.wd.action = *o.action;
                }
            });
        }
    }
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
                     " of " + who + "; accepted: POLL_INTERVAL 1ms.." + format_time(shortest) +
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
