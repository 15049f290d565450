// schema.hpp - every table and field of rocelab-switch's configuration,
// described once: name, kind, range, unit, bare-number rule, default and a
// one-line doc.
//
// The loader (config/loader.hpp) takes each table's accepted field names and
// each field's range and unit from here, so an error message and the docs
// say the same thing:
//
//   conf/leaf.yaml:7:33: PORT|Ethernet0|speed: "2Tbps" is out of range: accepted 1Mbps..1.6Tbps
//
// `rocelab-switch --config-schema` prints schema_markdown(); the field
// tables of docs/config.md are that output (tools/config_docs.py --check,
// a meson test, keeps them equal). One file per table under
// lib/config/tables/ holds the table's descriptor next to its loading code.
//
// A descriptor is a constant (constexpr, in the table's file); nothing here
// is mutable. Ranges are in the kind's base unit: bytes, bits per second,
// nanoseconds, metres, percent, or the number itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace rocelab {

enum class field_kind : std::uint8_t {
    uint,            // a whole number lo..hi; `noun` says what it counts ("a descriptor count")
    integer,         // a signed whole number lo..hi (dynamic_th -8..8)
    bytes,           // a size with a unit (96KiB); bare_unit 1: a bare number is bytes
    fraction_bytes,  // bytes with decimals (819.2), bare or with a unit
    rate,            // 100Gbps (bits per second)
    time,            // 55us (nanoseconds); bare_unit: the unit of a bare number
    percent,         // 0..100, "%" optional
    ratio,           // a plain decimal number (2, 1.5)
    length,          // a cable length 5m, 2.5m, 10km (metres)
    choice,          // one of `choices` (case-insensitive)
    flag,            // one of `choices` (on, off, true, false): `on` and `true` mean on
    mac,             // "02:00:00:00:01:00"; unicast only
    number_set,      // "3,4", "3-4", "" for none: numbers 0..hi; `noun` names them
    reference,       // the name of an entry of table `ref_table` ("[TABLE|name]" also)
    text,            // free text (a DPDK device name); `noun` says what
    address_list,    // comma list of IP addresses (ROUTE nexthop)
    port_list,       // comma list of PORT names (ROUTE ifname)
    mapping,         // a nested mapping described by its own table (ROCELAB|headroom)
};

struct field_spec {
    std::string_view name;
    field_kind kind = field_kind::text;
    std::int64_t lo = 0;  // range, in the kind's base unit (number_set: lo unused)
    std::uint64_t hi = 0;
    std::int64_t bare_unit = 0;  // bytes/time/percent: the unit of a bare number, 0 = a unit is required
    bool in_bytes = false;       // bytes: the range reads "68..9216 bytes", not "64B..1GiB"
    std::string_view noun;       // what the value is, in messages ("a descriptor count", "TC")
    std::span<const std::string_view> choices;  // choice, flag
    std::string_view ref_table;                 // reference: the table whose entry it names
    bool bracketed = false;                     // reference: SONiC's "[TABLE|name]" is also accepted
    std::string_view limit;   // a further limit the loader applies ("at most ROCELAB mbufs")
    std::string_view dflt;    // the default, as docs/config.md shows it ("-": none)
    std::string_view doc;     // one line
    bool sonic_only = false;  // SONiC's field, read and checked but not modelled (a note says so)
};

// Builders for the kinds most fields are, so that a descriptor writes only
// what is its own. Each starts from a_field() (kind, name, default, doc) and
// sets what its kind adds.

constexpr field_spec a_field(field_kind kind, std::string_view name, std::string_view dflt,
                             std::string_view doc) {
    return {.name = name, .kind = kind, .dflt = dflt, .doc = doc};
}

// A value in lo..hi of the kind's base unit; `bare_unit`: the unit of a
// bare number (bytes, time, percent), 0 = a unit is required.
constexpr field_spec ranged_field(field_kind kind, std::string_view name, std::int64_t lo, std::uint64_t hi,
                                  std::string_view dflt, std::string_view doc, std::int64_t bare_unit = 0) {
    field_spec f = a_field(kind, name, dflt, doc);
    f.lo = lo;
    f.hi = hi;
    f.bare_unit = bare_unit;
    return f;
}

// A value `noun` describes: text (a DPDK device name), address_list,
// port_list, mapping (the nested table's name), reference.
constexpr field_spec noun_field(field_kind kind, std::string_view name, std::string_view noun,
                                std::string_view dflt, std::string_view doc) {
    field_spec f = a_field(kind, name, dflt, doc);
    f.noun = noun;
    return f;
}

// A whole number lo..hi; `noun` says what it counts ("a descriptor count");
// `limit`: a further limit the loader applies.
constexpr field_spec count_field(std::string_view name, std::int64_t lo, std::uint64_t hi,
                                 std::string_view noun, std::string_view dflt, std::string_view doc,
                                 std::string_view limit = {}) {
    field_spec f = ranged_field(field_kind::uint, name, lo, hi, dflt, doc);
    f.noun = noun;
    f.limit = limit;
    return f;
}

// "3,4", "3-4" or "" (none): a set of the numbers 0..hi, which `noun` names.
constexpr field_spec number_set_field(std::string_view name, std::uint64_t hi, std::string_view noun,
                                      std::string_view dflt, std::string_view doc) {
    field_spec f = noun_field(field_kind::number_set, name, noun, dflt, doc);
    f.hi = hi;
    return f;
}

// A size written with its unit ("1MiB"; the range reads "64B..1GiB").
constexpr field_spec size_field(std::string_view name, std::int64_t lo, std::uint64_t hi,
                                std::string_view dflt, std::string_view doc) {
    return ranged_field(field_kind::bytes, name, lo, hi, dflt, doc);
}

// Bytes as SONiC writes them: a size whose bare number is bytes, and whose
// range reads in bytes ("68..9216 bytes"); `limit`: a further limit the
// loader applies.
constexpr field_spec byte_count_field(std::string_view name, std::int64_t lo, std::uint64_t hi,
                                      std::string_view dflt, std::string_view doc,
                                      std::string_view limit = {}) {
    field_spec f = size_field(name, lo, hi, dflt, doc);
    f.bare_unit = 1;
    f.in_bytes = true;
    f.limit = limit;
    return f;
}

// A time lo..hi (nanoseconds); `bare_unit`: the unit of a bare number, 0 = a
// unit is required.
constexpr field_spec time_field(std::string_view name, std::int64_t lo, std::uint64_t hi,
                                std::int64_t bare_unit, std::string_view dflt, std::string_view doc) {
    return ranged_field(field_kind::time, name, lo, hi, dflt, doc, bare_unit);
}

// One of `choices` (case-insensitive); flag_field: on/off, true/false.
constexpr field_spec choice_field(std::string_view name, std::span<const std::string_view> choices,
                                  std::string_view dflt, std::string_view doc) {
    field_spec f = a_field(field_kind::choice, name, dflt, doc);
    f.choices = choices;
    return f;
}
constexpr field_spec flag_field(std::string_view name, std::span<const std::string_view> choices,
                                std::string_view dflt, std::string_view doc) {
    field_spec f = choice_field(name, choices, dflt, doc);
    f.kind = field_kind::flag;
    return f;
}

// The name of an entry of `table`; `bracketed`: SONiC's "[TABLE|name]" too.
constexpr field_spec reference_field(std::string_view name, std::string_view table, std::string_view noun,
                                     std::string_view dflt, std::string_view doc, bool bracketed = false,
                                     std::string_view limit = {}) {
    field_spec f = noun_field(field_kind::reference, name, noun, dflt, doc);
    f.ref_table = table;
    f.bracketed = bracketed;
    f.limit = limit;
    return f;
}

// SONiC's field, read and checked but not modelled.
constexpr field_spec sonic_only(field_spec f) {
    f.sonic_only = true;
    return f;
}
// `f` with a further limit the loader applies, or a note on a value's meaning.
constexpr field_spec with_limit(field_spec f, std::string_view limit) {
    f.limit = limit;
    return f;
}

enum class table_shape : std::uint8_t {
    fields,         // TABLE: {field: value, ...} (ROCELAB)
    keyed,          // TABLE: {key: {field: value, ...}, ...}
    named_entries,  // TABLE: {name: {entry key: value, ...}} (the maps, CABLE_LENGTH): fields[0] is the value
};

struct table_spec {
    std::string_view name;  // "PORT"; a nested mapping "ROCELAB|headroom"
    table_shape shape = table_shape::keyed;
    std::string_view key;       // what a key is
    std::string_view only_key;  // a table with one fixed key ("localhost"); `key` is then empty
    std::string_view doc;       // one line
    std::span<const field_spec> fields;
    std::span<const std::string_view> refused;  // SONiC fields refused as "not supported by rocelab"
    unsigned entry_keys = 0;  // named_entries maps: keys are 0..entry_keys-1 (64 DSCPs, 8 priorities)
};

// Builders for the three table shapes.
// TABLE: {key: {field: value, ...}, ...}; `key` says what a key is.
constexpr table_spec keyed_table(std::string_view name, std::string_view key, std::string_view doc,
                                 std::span<const field_spec> fields,
                                 std::span<const std::string_view> refused = {}) {
    return {.name = name, .key = key, .doc = doc, .fields = fields, .refused = refused};
}
// TABLE: {only_key: {field: value, ...}} (DEVICE_METADATA|localhost).
constexpr table_spec one_key_table(std::string_view name, std::string_view only_key, std::string_view doc,
                                   std::span<const field_spec> fields,
                                   std::span<const std::string_view> refused = {}) {
    table_spec t = keyed_table(name, {}, doc, fields, refused);
    t.only_key = only_key;
    return t;
}
// TABLE: {field: value, ...}; `key` says where the fields are.
constexpr table_spec fields_table(std::string_view name, std::string_view key, std::string_view doc,
                                  std::span<const field_spec> fields,
                                  std::span<const std::string_view> refused = {}) {
    table_spec t = keyed_table(name, key, doc, fields, refused);
    t.shape = table_shape::fields;
    return t;
}

// Every table in loading order (nested mappings after their table).
std::span<const table_spec* const> switch_schema() noexcept;

// The SONiC tables refused as "not supported by this version of rocelab".
std::span<const std::string_view> unsupported_switch_tables() noexcept;

// The table named `name` ("PORT", "ROCELAB|headroom"), or nullptr.
const table_spec* find_table(std::string_view name) noexcept;

// What a field accepts, as docs/config.md's "Accepted" column shows it:
// "1Mbps..1.6Tbps", "`dscp`, `pcp`", "68..9216 bytes".
std::string accepted_text(const field_spec& f);

// The range alone, as error messages give it: "1Mbps..1.6Tbps", "16..32768",
// "68..9216 bytes", "0m..100km". hi_override: a tighter upper bound the
// loader applies (QUEUE max_packets: ROCELAB mbufs).
std::string range_text(const field_spec& f, std::uint64_t hi);
inline std::string range_text(const field_spec& f) {
    return range_text(f, f.hi);
}

// The whole schema as Markdown: per table a heading, its key and doc, and
// its field table (| Field | Accepted | Default | Meaning |) between
// <!-- schema:TABLE begin --> and <!-- schema:TABLE end --> markers.
std::string schema_markdown();

// One table's block, markers included.
std::string schema_block(const table_spec& t);

}  // namespace rocelab
