// The classification maps: DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, TC_TO_QUEUE_MAP,
// TC_TO_PRIORITY_GROUP_MAP and MAP_PFC_PRIORITY_TO_QUEUE (one shape, one loader).
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

// DSCP_TO_TC_MAP and friends: {NAME: {"3": "3", "10-20": "1", default: "0"}}.
template <std::size_t N>
void loader::load_map_table(const entry* t, const std::string& table, std::string_view key_noun,
                    std::string_view value_noun, named_maps<N>& maps) {
    maps.clear();
    // The built-in AZURE map (RoCE profile); a file may redefine it.
    const qos_maps az = azure_roce_maps();
    if constexpr (N == 64) {
        maps["AZURE"] = az.dscp_to_tc;
    } else if (table == "DOT1P_TO_TC_MAP") {
        maps["AZURE"] = az.pcp_to_tc;
    } else if (table == "TC_TO_QUEUE_MAP") {
        maps["AZURE"] = az.tc_to_queue;
    } else if (table == "TC_TO_PRIORITY_GROUP_MAP") {
        maps["AZURE"] = az.tc_to_pg;
    } else {
        maps["AZURE"] = az.pfc_prio_to_queue;
    }
    if (t == nullptr) {
        return;
    }
    for (const auto& m : entries(t->value, t->key_node.Mark(), table)) {
        const std::string path = table + "|" + m.key;
        if (m.key.empty() || m.key.find('|') != std::string::npos) {
            fail(m.key_node.Mark(), path, "a map name must not be empty or contain '|'");
        }
        std::array<std::uint8_t, N> values{};
        std::array<std::string, N> set_by{};
        std::optional<std::uint8_t> dflt;
        const std::string key_expected = std::string(key_noun) + " 0.." + std::to_string(N - 1) +
                                         ", a range such as \"1-2\", or default";
        const std::string value_expected = "a " + std::string(value_noun) + " 0..7";
        for (const auto& e : entries(m.value, m.key_node.Mark(), path)) {
            const std::string epath = path + "|" + e.key;
            const std::uint8_t v = static_cast<std::uint8_t>(get_uint(e, epath, 0, 7, value_noun));
            if (e.key == "default") {
                dflt = v;
                continue;
            }
            // "3" or "10-20" (DSCP needs 64 keys, so no bit mask here).
            const auto bounds = split(e.key, '-');
            unsigned lo = 0;
            unsigned hi = 0;
            bool ok = bounds.size() <= 2 && e.key.find(',') == std::string::npos;
            for (std::size_t b = 0; ok && b < bounds.size(); ++b) {
                ok = !bounds[b].empty() && bounds[b].size() <= 2 &&
                     std::all_of(bounds[b].begin(), bounds[b].end(),
                                 [](char c) { return c >= '0' && c <= '9'; });
                if (ok) {
                    (b == 0 ? lo : hi) = static_cast<unsigned>(std::stoul(std::string(bounds[b])));
                }
            }
            if (bounds.size() == 1) {
                hi = lo;
            }
            if (!ok || lo > hi || hi > N - 1) {
                fail(e.key_node.Mark(), epath,
                     "key " + quote(e.key) + " is not valid: expected a " + key_expected);
            }
            for (unsigned k = lo; k <= hi; ++k) {
                if (!set_by[k].empty()) {
                    fail(e.key_node.Mark(), epath,
                         std::string(key_noun) + " " + std::to_string(k) + " is already mapped by key " +
                             quote(set_by[k]));
                }
                set_by[k] = e.key;
                values[k] = v;
            }
        }
        // Entries not listed take the map's default (0 when not given).
        for (std::size_t k = 0; k < N; ++k) {
            if (set_by[k].empty()) {
                values[k] = dflt.value_or(0);
            }
        }
        maps[m.key] = values;
    }
}

template void loader::load_map_table<64>(const entry*, const std::string&, std::string_view, std::string_view,
                                           named_maps<64>&);
template void loader::load_map_table<8>(const entry*, const std::string&, std::string_view, std::string_view,
                                          named_maps<8>&);

}  // namespace rocelab::detail
