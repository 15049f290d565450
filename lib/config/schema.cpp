// schema.cpp - the registry of the switch configuration's tables, and the
// text every tool derives from it (see schema.hpp). The descriptors
// themselves are in tables/<table>.cpp, next to their loading code.
#include "config/schema.hpp"

#include <array>
#include <string>

#include "config/tables/tables.hpp"
#include "config/units_parse.hpp"

namespace rocelab {
namespace {

using namespace detail;

// Loading order (config/loader.cpp); a nested mapping follows its table.
constexpr std::array<const table_spec*, 26> all_tables = {
    &rocelab_table,
    &headroom_table,
    &device_metadata_table,
    &switch_table,
    &port_table,
    &breakout_cfg_table,
    &dscp_to_tc_map_table,
    &dot1p_to_tc_map_table,
    &tc_to_queue_map_table,
    &tc_to_priority_group_map_table,
    &map_pfc_priority_to_queue_table,
    &scheduler_table,
    &wred_profile_table,
    &port_qos_map_table,
    &queue_table,
    &cable_length_table,
    &default_lossless_buffer_parameter_table,
    &buffer_pool_table,
    &buffer_profile_table,
    &buffer_pg_table,
    &buffer_queue_table,
    &pfc_wd_table,
    &pfc_wd_global_table,
    &interface_table,
    &route_table,
    &neigh_table,
};

// SONiC tables a user may reasonably paste that this version does not read.
constexpr std::array<std::string_view, 13> unsupported_tables = {
    "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "VLAN",
    "VLAN_MEMBER",
    "VLAN_INTERFACE",
    "PORTCHANNEL",
    "PORTCHANNEL_MEMBER",
    "LOOPBACK_INTERFACE",
    "BGP_NEIGHBOR",
    "STATIC_ROUTE",
    "MGMT_PORT",
    "MGMT_INTERFACE",
};

// 5000 -> "5km", 2500 -> "2500m", 0 -> "0m".
std::string metres(std::uint64_t m) {
    return m > 0 && m % 1000 == 0 ? std::to_string(m / 1000) + "km" : std::to_string(m) + "m";
}

std::string plain_range(const field_spec& f, std::uint64_t hi) {
    return std::to_string(f.lo) + ".." + std::to_string(hi);
}

// `a`, `b`, `c`
std::string code_list(std::span<const std::string_view> names) {
    std::string out;
    for (const auto n : names) {
        out += (out.empty() ? "`" : ", `") + std::string(n) + "`";
    }
    return out;
}

// A table cell: '|' escaped, so "[TABLE|name]" stays in its cell.
std::string cell(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '|') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

// The unit of a bare number, for the docs: nanos{1'000'000} -> "ms", 1s -> "seconds".
std::string bare_time_unit(std::int64_t ns) {
    std::string t = format_time(nanos{ns});
    t = t.size() > 1 && t[0] == '1' ? t.substr(1) : t;
    return t == "s" ? "seconds" : t;
}

// "the ports, ..." -> "The ports, ...": a table's doc opens its section.
std::string sentence(std::string_view s) {
    std::string out(s);
    if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') {
        out[0] = static_cast<char>(out[0] - 'a' + 'A');
    }
    return out;
}

std::string key_text(const table_spec& t) {
    if (t.only_key.empty()) {
        return std::string(t.key);
    }
    std::string out(1, '`');  // (appends, not "`" + ...: GCC 12 warns falsely on that, -Wrestrict)
    out.append(t.only_key).append("` (the only key)");
    return out;
}

}  // namespace

std::span<const table_spec* const> switch_schema() noexcept {
    return all_tables;
}

std::span<const std::string_view> unsupported_switch_tables() noexcept {
    return unsupported_tables;
}

const table_spec* find_table(std::string_view name) noexcept {
    for (const auto* t : all_tables) {
        if (t->name == name) {
            return t;
        }
    }
    return nullptr;
}

std::string range_text(const field_spec& f, std::uint64_t hi) {
    switch (f.kind) {
        case field_kind::uint:
        case field_kind::ratio:
        case field_kind::number_set:
            return plain_range(f, hi);
        case field_kind::integer:
            return std::to_string(f.lo) + ".." + std::to_string(static_cast<std::int64_t>(hi));
        case field_kind::bytes:
            return f.in_bytes ? plain_range(f, hi) + " bytes"
                              : format_bytes(bytes{static_cast<std::uint64_t>(f.lo)}) + ".." +
                                    format_bytes(bytes{hi});
        case field_kind::fraction_bytes:
            return plain_range(f, hi) + " bytes";
        case field_kind::rate:
            return format_rate(bits_per_sec{static_cast<std::uint64_t>(f.lo)}) + ".." +
                   format_rate(bits_per_sec{hi});
        case field_kind::time:
            return format_time(nanos{f.lo}) + ".." + format_time(nanos{static_cast<std::int64_t>(hi)});
        case field_kind::percent:
            return plain_range(f, hi) + "%";
        case field_kind::length:
            return metres(static_cast<std::uint64_t>(f.lo)) + ".." + metres(hi);
        default:
            return {};
    }
}

std::string accepted_text(const field_spec& f) {
    std::string t;
    switch (f.kind) {
        case field_kind::uint:
        case field_kind::integer:
        case field_kind::rate:
        case field_kind::ratio:
        case field_kind::length:
            t = range_text(f);
            break;
        case field_kind::bytes:
            t = range_text(f);
            if (f.bare_unit > 0 && !f.in_bytes) {
                t += " (a bare number is bytes)";
            }
            break;
        case field_kind::fraction_bytes:
            t = range_text(f) + ", decimals allowed";
            break;
        case field_kind::time:
            t = range_text(f);
            if (f.bare_unit > 0) {
                t += " (a bare number is " + bare_time_unit(f.bare_unit) + ")";
            }
            break;
        case field_kind::percent:
            t = range_text(f) + (f.bare_unit > 0 ? " (`%` optional)" : "");
            break;
        case field_kind::choice:
        case field_kind::flag:
            t = code_list(f.choices);
            break;
        case field_kind::mac:
            t = "a unicast MAC address";
            break;
        case field_kind::number_set:
            t = std::string(f.noun) + " " + range_text(f) +
                ": `\"3,4\"`, ranges `\"3-4\"`, or `\"\"` for none";
            break;
        case field_kind::reference:
            t = "a " + std::string(f.ref_table) + " name";
            if (f.bracketed) {
                t += " (`[" + std::string(f.ref_table) + "|name]` also accepted)";
            }
            break;
        case field_kind::text:
        case field_kind::address_list:
        case field_kind::port_list:
            t = f.noun;
            break;
        case field_kind::mapping:
            t = "a mapping: the fields of " + std::string(f.noun);
            break;
    }
    if (!f.limit.empty() && f.kind != field_kind::ratio) {
        t += "; " + std::string(f.limit);
    } else if (!f.limit.empty()) {
        t += " (" + std::string(f.limit) + ")";
    }
    return t;
}

std::string schema_block(const table_spec& t) {
    const bool entries = t.shape == table_shape::named_entries;
    std::string out = "<!-- schema:" + std::string(t.name) + " begin -->\n";
    out += entries ? "| Key | Value | Default | Meaning |\n" : "| Field | Accepted | Default | Meaning |\n";
    out += "|---|---|---|---|\n";
    for (const auto& f : t.fields) {
        std::string name;
        std::string accepted = accepted_text(f);
        if (entries) {
            // The maps: "DSCP `0`..`63`, ..." -> "TC 0..7".
            name = std::string(f.name);
            if (t.entry_keys > 0) {
                name += " `0`..`" + std::to_string(t.entry_keys - 1) + "`, a range `\"a-b\"`, or `default`";
            }
            if (f.kind == field_kind::uint && !f.noun.empty()) {
                accepted = std::string(f.noun) + " " + accepted;
            }
        } else {
            name = "`" + std::string(f.name) + "`";
        }
        std::string doc(f.doc);
        if (f.sonic_only) {
            doc += " (SONiC's; read and checked, not modelled: a start-up note says so)";
        }
        out += "| " + cell(name) + " | " + cell(accepted) + " | " + cell(f.dflt) + " | " + cell(doc) + " |\n";
    }
    if (t.fields.empty()) {
        out += "| (no fields) | | | |\n";
    }
    if (!t.refused.empty()) {
        out += "\nSONiC fields refused as not supported: " + code_list(t.refused) + ".\n";
    }
    out += "<!-- schema:" + std::string(t.name) + " end -->\n";
    return out;
}

std::string schema_markdown() {
    std::string out =
        "# rocelab-switch configuration schema\n\n"
        "Every table and field rocelab-switch reads (docs/config.md explains them), in loading order.\n"
        "Tables it refuses as not supported: " +
        code_list(unsupported_tables) + ".\n";
    for (const auto* t : all_tables) {
        out += "\n## " + std::string(t->name) + "\n\n" + sentence(t->doc) + "\n\nKey: " + key_text(*t) +
               "\n\n" + schema_block(*t);
    }
    return out;
}

}  // namespace rocelab
