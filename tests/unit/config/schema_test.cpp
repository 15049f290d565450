// schema_test.cpp - the switch configuration's schema (config/schema.hpp)
// is complete and consistent, and the loader takes its names, ranges and
// refusals from it: for every field of every table, a value just outside
// the schema's range is an error naming TABLE|key|field and that range; a
// refused SONiC field is "not supported"; an unknown field lists every
// field the schema gives.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "config/schema.hpp"
#include "config/switch_config.hpp"

namespace rocelab {
namespace {

// Where a field of each table goes in a file, with what else the entry
// needs to get as far as that field's check ({F}: the field, {V}: the value),
// and the path the error names (key included).
struct context {
    std::string yaml;
    std::string path;
};

std::string with_field(std::string s, const std::string& f, const std::string& v) {
    for (std::size_t p; (p = s.find("{F}")) != std::string::npos;) {
        s.replace(p, 3, f);
    }
    for (std::size_t p; (p = s.find("{V}")) != std::string::npos;) {
        s.replace(p, 3, v);
    }
    return s;
}

std::optional<context> context_of(const std::string& table, const std::string& field) {
    static const std::map<std::string, context> contexts = {
        {"ROCELAB", {"ROCELAB: {{F}: {V}}\n", "ROCELAB"}},
        {"ROCELAB|headroom", {"ROCELAB: {headroom: {{F}: {V}}}\n", "ROCELAB|headroom"}},
        {"DEVICE_METADATA", {"DEVICE_METADATA: {localhost: {{F}: {V}}}\n", "DEVICE_METADATA|localhost"}},
        {"SWITCH", {"SWITCH: {switch: {{F}: {V}}}\n", "SWITCH|switch"}},
        {"PORT", {"PORT: {Ethernet0: {port_id: 0, {F}: {V}}}\n", "PORT|Ethernet0"}},
        {"SCHEDULER", {"SCHEDULER: {s: {type: DWRR, {F}: {V}}}\n", "SCHEDULER|s"}},
        {"PORT_QOS_MAP", {"PORT_QOS_MAP: {global: {{F}: {V}}}\n", "PORT_QOS_MAP|global"}},
        {"QUEUE", {"QUEUE: {\"global|3\": {{F}: {V}}}\n", "QUEUE|global|3"}},
        {"WRED_PROFILE", {"WRED_PROFILE: {w: {{F}: {V}}}\n", "WRED_PROFILE|w"}},
        {"DEFAULT_LOSSLESS_BUFFER_PARAMETER",
         {"DEVICE_METADATA: {localhost: {buffer_model: dynamic}}\n"
          "DEFAULT_LOSSLESS_BUFFER_PARAMETER: {AZURE: {{F}: {V}}}\n",
          "DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE"}},
        {"BUFFER_POOL", {"BUFFER_POOL: {p: {type: ingress, size: 1MiB, {F}: {V}}}\n", "BUFFER_POOL|p"}},
        {"BUFFER_PROFILE",
         {"BUFFER_POOL: {p: {type: ingress, size: 1MiB}}\nBUFFER_PROFILE: {x: {pool: p, size: 0, {F}: "
          "{V}}}\n",
          "BUFFER_PROFILE|x"}},
        {"PFC_WD", {"PFC_WD: {global: {{F}: {V}}}\n", "PFC_WD|global"}},
        {"PFC_WD|GLOBAL", {"PFC_WD: {GLOBAL: {{F}: {V}}}\n", "PFC_WD|GLOBAL"}},
        {"ROUTE", {"ROCELAB: {mode: l3}\nROUTE: {\"10.1.0.0/16\": {{F}: {V}}}\n", "ROUTE|10.1.0.0/16"}},
        {"NEIGH",
         {"ROCELAB: {mode: l3}\nPORT: {Ethernet0: {port_id: 0}}\nINTERFACE: {\"Ethernet0|10.0.0.1/31\": {}}\n"
          "NEIGH: {\"Ethernet0|10.0.0.0\": {neigh: \"02:00:00:00:00:10\", {F}: {V}}}\n",
          "NEIGH|Ethernet0|10.0.0.0"}},
        {"INTERFACE",
         {"ROCELAB: {mode: l3}\nPORT: {Ethernet0: {port_id: 0}}\nINTERFACE: {\"Ethernet0|10.0.0.1/31\": "
          "{{F}: {V}}}\n",
          "INTERFACE|Ethernet0|10.0.0.1/31"}},
    };
    const auto it = contexts.find(table);
    if (it == contexts.end()) {
        return std::nullopt;
    }
    context c = it->second;
    // The field itself is not also given by the context ("type: DWRR, " when
    // the field is type), and a PORT device replaces the port_id.
    if (!field.empty()) {
        const std::regex given("\\b" + (field == "device" ? std::string("port_id") : field) + ": [^,}]*, ");
        c.yaml = std::regex_replace(c.yaml, given, "");
    }
    if (table == "PORT" && field == "vlan") {
        c.yaml.replace(c.yaml.find("{F}"), 3, "vlan_mode: tagged, {F}");  // a VLAN id needs vlan_mode tagged
    }
    return c;
}

// A value one past the schema's bound, written in the kind's base unit; none
// when the kind has no numeric range or the bound is the type's own.
std::optional<std::string> beyond(const field_spec& f, bool above) {
    if (above && f.hi >= static_cast<std::uint64_t>(INT64_MAX)) {
        return std::nullopt;
    }
    if (!above && (f.lo <= 0 && f.kind != field_kind::integer)) {
        return std::nullopt;  // nothing below 0 to write in an unsigned kind
    }
    const long long v = above ? static_cast<long long>(f.hi) + 1 : f.lo - 1;
    const std::string n = std::to_string(v);
    switch (f.kind) {
        case field_kind::uint:
        case field_kind::integer:
        case field_kind::ratio:
        case field_kind::number_set:
        case field_kind::fraction_bytes:
            return n;
        case field_kind::bytes:
            return n + "B";
        case field_kind::rate:
            return n + "bps";
        case field_kind::time:
            return n + "ns";
        case field_kind::percent:
            return n + "%";
        case field_kind::length:
            return n + "m";
        default:
            return std::nullopt;
    }
}

TEST(schema, every_table_is_described_completely) {
    std::set<std::string> names;
    for (const table_spec* t : switch_schema()) {
        EXPECT_TRUE(names.insert(std::string(t->name)).second) << t->name << " twice";
        EXPECT_FALSE(t->doc.empty()) << t->name;
        EXPECT_TRUE(!t->key.empty() || !t->only_key.empty()) << t->name;
        EXPECT_EQ(find_table(t->name), t);
        std::set<std::string> fields;
        for (const auto& f : t->fields) {
            const std::string where = std::string(t->name) + "|" + std::string(f.name);
            EXPECT_TRUE(fields.insert(std::string(f.name)).second) << where << " twice";
            EXPECT_FALSE(f.doc.empty()) << where;
            EXPECT_FALSE(f.dflt.empty()) << where;
            EXPECT_FALSE(accepted_text(f).empty()) << where;
            if (f.kind == field_kind::choice || f.kind == field_kind::flag) {
                EXPECT_GE(f.choices.size(), 2u) << where;
            }
            if (f.kind == field_kind::reference) {
                EXPECT_NE(find_table(f.ref_table), nullptr) << where << " refers to " << f.ref_table;
            }
            if (f.kind == field_kind::mapping) {
                EXPECT_NE(find_table(f.noun), nullptr) << where << " nests " << f.noun;
            }
            if (!range_text(f).empty()) {
                EXPECT_LE(f.lo, static_cast<std::int64_t>(std::min<std::uint64_t>(f.hi, INT64_MAX))) << where;
            }
        }
        for (const auto r : t->refused) {
            EXPECT_EQ(fields.count(std::string(r)), 0u)
                << t->name << ": " << r << " is both accepted and refused";
        }
        if (t->shape == table_shape::named_entries) {
            EXPECT_EQ(t->fields.size(), 1u) << t->name;
        }
    }
    for (const auto u : unsupported_switch_tables()) {
        EXPECT_EQ(find_table(u), nullptr) << u << " is both read and refused";
    }
}

TEST(schema, markdown_has_one_block_per_table) {
    const std::string md = schema_markdown();
    for (const table_spec* t : switch_schema()) {
        const std::string begin = "<!-- schema:" + std::string(t->name) + " begin -->";
        const std::size_t at = md.find(begin);
        ASSERT_NE(at, std::string::npos) << t->name;
        EXPECT_EQ(md.find(begin, at + 1), std::string::npos) << t->name;
        EXPECT_NE(md.find("<!-- schema:" + std::string(t->name) + " end -->"), std::string::npos) << t->name;
        EXPECT_EQ(schema_block(*t), md.substr(at, schema_block(*t).size())) << t->name;
    }
    // A row, as docs/config.md shows it.
    EXPECT_NE(md.find("| `mtu` | 68..9216 bytes | 9100 |"), std::string::npos);
    EXPECT_NE(md.find("| `speed` | 1Mbps..1.6Tbps | the driver's |"), std::string::npos);
    EXPECT_NE(md.find("| `POLL_INTERVAL` | 1ms..1s (a bare number is ms) |"), std::string::npos);
}

// Every numeric field of every table: one past either bound of the schema's
// range is refused with the path and the schema's range.
TEST(schema, loader_takes_each_range_from_the_schema) {
    int checked = 0;
    for (const table_spec* t : switch_schema()) {
        for (const auto& f : t->fields) {
            const auto c = context_of(std::string(t->name), std::string(f.name));
            if (!c || !f.limit.empty()) {
                continue;  // no context (the maps, CABLE_LENGTH: below), or a bound the loader sets at run
                           // time
            }
            for (const bool above : {true, false}) {
                const auto v = beyond(f, above);
                if (!v) {
                    continue;
                }
                const std::string yaml = with_field(c->yaml, std::string(f.name), "\"" + *v + "\"");
                const auto r = load_switch_cfg_from_string(yaml, "s.yaml");
                ASSERT_FALSE(r) << yaml;
                const std::string& m = r.error().message;
                const std::string path = c->path + "|" + std::string(f.name);
                EXPECT_NE(m.find("s.yaml:"), std::string::npos) << m;
                EXPECT_NE(m.find(path + ": "), std::string::npos) << yaml << m;
                EXPECT_NE(m.find(range_text(f)), std::string::npos)
                    << yaml << m << "\nrange: " << range_text(f);
                if (f.kind != field_kind::number_set) {  // a list: "got ..., expected ... 0..7"
                    EXPECT_NE(m.find("out of range"), std::string::npos) << yaml << m;
                }
                ++checked;
            }
        }
    }
    EXPECT_GE(checked, 60);  // every table with numeric fields took part
}

TEST(schema, map_and_cable_length_ranges_come_from_the_schema) {
    for (const table_spec* t : switch_schema()) {
        if (t->shape != table_shape::named_entries) {
            continue;
        }
        const field_spec& f = t->fields[0];
        const std::string key = t->entry_keys > 0 ? "\"1\"" : "global";
        const std::string yaml =
            std::string(t->name) + ": {M: {" + key + ": \"" + *beyond(f, true) + "\"}}\n";
        const auto r = load_switch_cfg_from_string(yaml, "s.yaml");
        ASSERT_FALSE(r) << yaml;
        EXPECT_NE(r.error().message.find(range_text(f)), std::string::npos) << r.error().message;
        if (t->entry_keys > 0) {
            const std::string bad_key =
                std::string(t->name) + ": {M: {\"" + std::to_string(t->entry_keys) + "\": 0}}\n";
            const auto k = load_switch_cfg_from_string(bad_key, "s.yaml");
            ASSERT_FALSE(k) << bad_key;
            EXPECT_NE(k.error().message.find("0.." + std::to_string(t->entry_keys - 1)), std::string::npos)
                << k.error().message;
        }
    }
}

TEST(schema, fields_and_refusals_come_from_the_schema) {
    for (const table_spec* t : switch_schema()) {
        const auto c = context_of(std::string(t->name), "");
        if (!c) {
            continue;
        }
        const auto unknown = load_switch_cfg_from_string(with_field(c->yaml, "no_such_field", "1"), "s.yaml");
        ASSERT_FALSE(unknown) << t->name;
        const std::string& m = unknown.error().message;
        EXPECT_NE(m.find(c->path + "|no_such_field: unknown field"), std::string::npos) << m;
        for (const auto& f : t->fields) {
            EXPECT_NE(m.find(std::string(f.name)), std::string::npos)
                << t->name << ": " << f.name << " in " << m;
        }
        for (const auto r : t->refused) {
            const auto rr = load_switch_cfg_from_string(with_field(c->yaml, std::string(r), "1"), "s.yaml");
            ASSERT_FALSE(rr) << t->name << "|" << r;
            EXPECT_NE(rr.error().message.find(c->path + "|" + std::string(r) +
                                              ": this SONiC field is not supported"),
                      std::string::npos)
                << rr.error().message;
        }
    }
}

TEST(schema, choices_come_from_the_schema) {
    for (const table_spec* t : switch_schema()) {
        for (const auto& f : t->fields) {
            const auto c = context_of(std::string(t->name), std::string(f.name));
            if (!c || (f.kind != field_kind::choice && f.kind != field_kind::flag)) {
                continue;
            }
            const auto r = load_switch_cfg_from_string(
                with_field(c->yaml, std::string(f.name), "bogus_choice"), "s.yaml");
            ASSERT_FALSE(r) << t->name << "|" << f.name;
            std::string list;
            for (const auto ch : f.choices) {
                list += (list.empty() ? "" : ", ") + std::string(ch);
            }
            EXPECT_NE(r.error().message.find("expected one of " + list), std::string::npos)
                << r.error().message;
        }
    }
}

}  // namespace
}  // namespace rocelab
