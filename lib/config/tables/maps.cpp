// The classification maps: DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, TC_TO_QUEUE_MAP,
// TC_TO_PRIORITY_GROUP_MAP and MAP_PFC_PRIORITY_TO_QUEUE. The five tables
// have one shape, {NAME: {"3": "3", "10-20": "1", default: "0"}}, so they
// share this file and one loader.
// Descriptors and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <algorithm>
#include <stdexcept>

namespace rocelab::detail {
namespace {

constexpr std::string_view map_key = "a map name (`AZURE` is built in)";
constexpr std::string_view map_default = "the map's `default` entry, else 0";

constexpr field_spec dscp_entries[] = {
    count_field("DSCP", 0, 7, "TC", map_default, "the traffic class of frames with that DSCP")};
constexpr field_spec dot1p_entries[] = {
    count_field("802.1p priority", 0, 7, "TC", map_default,
                "the traffic class of tagged frames with that priority (PCP)")};
constexpr field_spec tc_queue_entries[] = {
    count_field("TC", 0, 7, "queue", map_default, "the egress queue of that traffic class")};
constexpr field_spec tc_pg_entries[] = {count_field("TC", 0, 7, "priority group", map_default,
                                                    "the ingress priority group of that traffic class")};
constexpr field_spec pfc_queue_entries[] = {count_field(
    "PFC priority", 0, 7, "queue", map_default, "the egress queue a PFC frame for that priority pauses")};

// A map table: {map name: {entry key 0..entry_keys-1: value}}.
constexpr table_spec map_table(std::string_view name, std::string_view doc,
                               std::span<const field_spec> entries, unsigned entry_keys = 8) {
    table_spec t = keyed_table(name, map_key, doc, entries);
    t.shape = table_shape::named_entries;
    t.entry_keys = entry_keys;
    return t;
}

}  // namespace

constexpr table_spec dscp_to_tc_map_table =
    map_table("DSCP_TO_TC_MAP", "DSCP to traffic class (ports with `trust: dscp`).", dscp_entries, 64);
constexpr table_spec dot1p_to_tc_map_table = map_table(
    "DOT1P_TO_TC_MAP", "802.1p priority to traffic class (ports with `trust: pcp`).", dot1p_entries);
constexpr table_spec tc_to_queue_map_table =
    map_table("TC_TO_QUEUE_MAP", "traffic class to egress queue.", tc_queue_entries);
constexpr table_spec tc_to_priority_group_map_table =
    map_table("TC_TO_PRIORITY_GROUP_MAP", "traffic class to ingress priority group.", tc_pg_entries);
constexpr table_spec map_pfc_priority_to_queue_table =
    map_table("MAP_PFC_PRIORITY_TO_QUEUE", "PFC priority to the egress queue it pauses.", pfc_queue_entries);

// A map table: entries not listed take the map's default (0 when not given).
template <std::size_t N>
void loader::load_map_table(const entry* t, const table_spec& spec, const std::array<std::uint8_t, N>& azure,
                            named_maps<N>& maps) {
    if (spec.entry_keys != N) {  // the schema and the loader's array disagree: a programming error
        throw std::logic_error(std::string(spec.name) + ": " + std::to_string(spec.entry_keys) +
                               " keys, not " + std::to_string(N));
    }
    const field_spec& value = spec.fields[0];
    const std::string_view key_noun = value.name;
    maps.clear();
    maps["AZURE"] = azure;  // built in (RoCE profile); a file may redefine it
    if (t == nullptr) {
        return;
    }
    for (const auto& m : entries(*t)) {
        const std::string& path = m.path;
        if (m.key.empty() || m.key.find('|') != std::string::npos) {
            fail(m.key_node.Mark(), path, "a map name must not be empty or contain '|'");
        }
        std::array<std::uint8_t, N> values{};
        std::array<std::string, N> set_by{};
        std::optional<std::uint8_t> dflt;
        const std::string key_expected =
            std::string(key_noun) + " 0.." + std::to_string(N - 1) + ", a range such as \"1-2\", or default";
        for (const auto& e : entries(m)) {
            const std::string& epath = e.path;
            const std::uint8_t v = static_cast<std::uint8_t>(get_uint(e, value));
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

template void loader::load_map_table<64>(const entry*, const table_spec&, const std::array<std::uint8_t, 64>&,
                                         named_maps<64>&);
template void loader::load_map_table<8>(const entry*, const table_spec&, const std::array<std::uint8_t, 8>&,
                                        named_maps<8>&);

}  // namespace rocelab::detail
