// PORT_QOS_MAP: maps and PFC bound to ports.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

namespace {

// Per-port overrides parsed once from a PORT_QOS_MAP / QUEUE entry.
struct qos_override {
    std::optional<std::array<std::uint8_t, 64>> dscp_to_tc;
    std::optional<std::array<std::uint8_t, 8>> pcp_to_tc;
    std::optional<std::array<std::uint8_t, 8>> tc_to_queue;
    std::optional<std::array<std::uint8_t, 8>> tc_to_pg;
    std::optional<std::array<std::uint8_t, 8>> pfc_prio_to_queue;
    std::optional<std::uint8_t> pfc_enable;
    std::optional<std::uint8_t> pfcwd_queues;
    std::optional<flow_ctrl_mode> fc_mode;
    std::optional<std::uint16_t> pfc_quanta;
};

}  // namespace

template <std::size_t N>
std::array<std::uint8_t, N> loader::map_ref(const field_map& f, std::string_view field, const std::string& path,
                                    std::string_view table, const named_maps<N>& maps) const {
    const entry& e = *find(f, field);
    const std::string fpath = path + "|" + std::string(field);
    const std::string name =
        std::string(trim(scalar(e, fpath, "the name of a " + std::string(table) + " such as AZURE")));
    const auto it = maps.find(name);
    if (it == maps.end()) {
        std::vector<std::string> names;
        for (const auto& [n, v] : maps) {
            names.push_back(n);
        }
        fail(mark_of(e), fpath,
             "unknown map name " + quote(name) + "; " + std::string(table) + " names are " + join(names) +
                 did_you_mean(name, names));
    }
    return it->second;
}

void loader::load_port_qos_map(const entry& t) {
    const auto all = entries(t.value, t.key_node.Mark(), "PORT_QOS_MAP");
    // global first, then per-port entries on top, whatever the file order.
    const auto order = global_first(all, [](const entry& e) {
        const auto k = trim(e.key);
        return k == "global" || k == "*";
    });
    std::map<std::pair<std::size_t, std::string>, std::string> set_by;
    bool global_seen = false;
    for (const entry* kp : order) {
        const entry& k = *kp;
        const std::string path = "PORT_QOS_MAP|" + k.key;
        const auto targets = port_list(k.key, k.key_node.Mark(), path);
        if (targets.front() == all_ports) {
            if (global_seen) {
                fail(k.key_node.Mark(), path, "\"global\" and \"*\" are the same key; give only one");
            }
            global_seen = true;
        }
        const auto f =
            fields(k, path,
                   {"dscp_to_tc_map", "dot1p_to_tc_map", "tc_to_queue_map", "tc_to_pg_map",
                    "pfc_to_queue_map", "pfc_enable", "pfcwd_sw_enable", "pfc_mode", "pfc_quanta"},
                   {"pfc_to_pg_map", "scheduler", "pfc_asym"});
        qos_override o;
        if (find(f, "dscp_to_tc_map")) {
            o.dscp_to_tc = map_ref(f, "dscp_to_tc_map", path, "DSCP_TO_TC_MAP", _dscp_maps);
        }
        if (find(f, "dot1p_to_tc_map")) {
            o.pcp_to_tc = map_ref(f, "dot1p_to_tc_map", path, "DOT1P_TO_TC_MAP", _dot1p_maps);
        }
        if (find(f, "tc_to_queue_map")) {
            o.tc_to_queue = map_ref(f, "tc_to_queue_map", path, "TC_TO_QUEUE_MAP", _tc_queue_maps);
        }
        if (find(f, "tc_to_pg_map")) {
            o.tc_to_pg = map_ref(f, "tc_to_pg_map", path, "TC_TO_PRIORITY_GROUP_MAP", _tc_pg_maps);
        }
        if (find(f, "pfc_to_queue_map")) {
            o.pfc_prio_to_queue =
                map_ref(f, "pfc_to_queue_map", path, "MAP_PFC_PRIORITY_TO_QUEUE", _pfc_queue_maps);
        }
        // "3,4" -> bit mask; `what` names the members (priorities, queues).
        auto bit_list = [&](const auto& e, const char* field, const char* what) -> std::uint8_t {
            const std::string expected = std::string("a comma-separated list of ") + what +
                                         " 0..7 such as \"3,4\", or \"\" for none";
            const std::string fpath = path + "|" + field;
            const std::string s = e.value.IsNull() ? std::string() : scalar(e, fpath, expected);
            const auto mask = parse_number_set(s, 7);
            if (!mask) {
                fail_value(e, fpath, expected);
            }
            return static_cast<std::uint8_t>(*mask);
        };
        if (const auto* e = find(f, "pfc_enable")) {
            o.pfc_enable = bit_list(*e, "pfc_enable", "priorities");
        }
        if (const auto* e = find(f, "pfcwd_sw_enable")) {
            o.pfcwd_queues = bit_list(*e, "pfcwd_sw_enable", "queues");
        }
        if (const auto* e = find(f, "pfc_mode")) {
            o.fc_mode = get_choice(*e, path + "|pfc_mode", {"pfc", "pause"}) == "pfc"
                            ? flow_ctrl_mode::pfc
                            : flow_ctrl_mode::pause;
        }
        if (const auto* e = find(f, "pfc_quanta")) {
            o.pfc_quanta = static_cast<std::uint16_t>(
                get_uint(*e, path + "|pfc_quanta", 1, 65535, "a pause time in quanta of 512 bit times"));
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
            const auto apply = [&](port_cfg& p) {
                if (o.dscp_to_tc) {
                    p.maps.dscp_to_tc = *o.dscp_to_tc;
                }
                if (o.pcp_to_tc) {
                    p.maps.pcp_to_tc = *o.pcp_to_tc;
                }
                if (o.tc_to_queue) {
                    p.maps.tc_to_queue = *o.tc_to_queue;
                }
                if (o.tc_to_pg) {
                    p.maps.tc_to_pg = *o.tc_to_pg;
                }
                if (o.pfc_prio_to_queue) {
                    p.maps.pfc_prio_to_queue = *o.pfc_prio_to_queue;
                }
                if (o.pfc_enable) {
                    p.pfc_enable = *o.pfc_enable;
                }
                if (o.pfcwd_queues) {
                    p.pfcwd_queues = *o.pfcwd_queues;
                }
                if (o.fc_mode) {
                    p.fc_mode = *o.fc_mode;
                }
                if (o.pfc_quanta) {
                    p.pfc_quanta = *o.pfc_quanta;
                }
            };
            if (target == all_ports) {
                apply(_cfg.port_defaults);
                for (auto& p : _cfg.ports) {
                    apply(p);
                }
            } else {
                apply(_cfg.ports[target]);
            }
        }
    }
}

}  // namespace rocelab::detail
