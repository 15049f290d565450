// loader.cpp - the switch loader's table order, structure walk, typed
// getters and the helpers several tables share (see loader.hpp). Each
// table's own loading code is in tables/<table>.cpp.
#include "config/loader.hpp"
#include "config/tables/tables.hpp"
#include "config/yaml_load.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace rocelab::detail {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

namespace {

// Optimal-string-alignment distance (Levenshtein plus adjacent transposition).
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev2(b.size() + 1);  // row i-2, for transpositions
    std::vector<std::size_t> prev(b.size() + 1);
    std::vector<std::size_t> cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        prev[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);  // "dcsp" -> "dscp" is one edit
            }
        }
        prev2 = prev;
        prev = cur;
    }
    return prev[b.size()];
}

}  // namespace

// "; did you mean X?" when one name is close (case-insensitive, <= 1/3 of the length).
std::string did_you_mean(std::string_view given, const std::vector<std::string>& names) {
    const std::string g = lower(given);
    std::size_t best = SIZE_MAX;
    std::string best_name;
    for (const auto& n : names) {
        const std::size_t d = edit_distance(g, lower(n));
        if (d < best) {
            best = d;
            best_name = n;
        }
    }
    const std::size_t limit = std::max<std::size_t>(1, std::max(g.size(), best_name.size()) / 3);
    if (best_name.empty() || best > limit) {
        return {};
    }
    return "; did you mean " + best_name + "?";
}

// How a YAML value is shown in a message.
std::string show(const YAML::Node& n) {
    if (!n.IsDefined() || n.IsNull()) {
        return "an empty value";
    }
    if (n.IsScalar()) {
        return quote(n.Scalar());
    }
    if (n.IsSequence()) {
        return "a list";
    }
    return "a mapping";
}

// ------------------------------------------------------------ address helpers

std::string family_name(bool v6) {
    return v6 ? "IPv6" : "IPv4";
}

// "10.0.0.1" or "fc00::1" (no prefix length) -> /32 or /128.
std::optional<ip_prefix> parse_ip(std::string_view text) {
    const auto a = parse_ip_address(text);
    if (!a) {
        return std::nullopt;
    }
    ip_prefix p;
    p.v6 = a->v6;
    p.addr = a->bytes;
    p.len = a->v6 ? 128 : 32;
    return p;
}

// "10.0.0.1/31" or "fc00::/64". The length is required.
std::optional<ip_prefix> parse_prefix(std::string_view text) {
    const std::size_t slash = text.find('/');
    if (slash == std::string_view::npos) {
        return std::nullopt;
    }
    auto p = parse_ip(text.substr(0, slash));
    const std::string_view len = trim(text.substr(slash + 1));
    if (!p || len.empty() || len.size() > 3) {
        return std::nullopt;
    }
    unsigned v = 0;
    for (const char c : len) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (v > (p->v6 ? 128u : 32u)) {
        return std::nullopt;
    }
    p->len = static_cast<std::uint8_t>(v);
    return p;
}

bool same_prefix(const ip_prefix& a, const ip_prefix& b) {
    return a.v6 == b.v6 && a.len == b.len && a.addr == b.addr;
}

namespace {

// The QUEUE table binds a wred_profile somewhere (read-only scan).
bool queue_table_binds_wred(const YAML::Node& queue) {
    if (!queue.IsMap()) {
        return false;
    }
    for (const auto& kv : queue) {
        if (!kv.second.IsMap()) {
            continue;
        }
        for (const auto& field : kv.second) {
            if (field.first.IsScalar() && field.first.Scalar() == "wred_profile") {
                return true;
            }
        }
    }
    return false;
}

// The top-level tables, in loading order, for messages.
std::vector<std::string> top_level_tables() {
    std::vector<std::string> out;
    for (const auto* t : switch_schema()) {
        if (t->name.find('|') == std::string_view::npos) {
            out.emplace_back(t->name);
        }
    }
    return out;
}

}  // namespace

const std::vector<std::string>& switch_tables() {
    static const std::vector<std::string> names = top_level_tables();  // immutable once built
    return names;
}

switch_cfg loader::load(const YAML::Node& root) {
    _cfg = default_switch_cfg();
    _cfg.source = _source;
    if (!root.IsDefined() || root.IsNull()) {
        return _cfg;
    }
    if (!root.IsMap()) {
        fail(root.Mark(), "",
             "the file must be a mapping of table names (ROCELAB, PORT, ...) to tables, not " + show(root));
    }
    const std::vector<std::string>& known_tables = switch_tables();
    const auto unsupported_tables = unsupported_switch_tables();
    field_map tables;
    for (auto& e : entries(root, root.Mark(), "")) {
        if (std::find(known_tables.begin(), known_tables.end(), e.key) == known_tables.end()) {
            if (std::find(unsupported_tables.begin(), unsupported_tables.end(), e.key) !=
                unsupported_tables.end()) {
                fail(e.key_node.Mark(), e.key,
                     "this SONiC table is not supported by this version of rocelab; the tables read are " +
                         join(known_tables) + " (see docs/config.md)");
            }
            fail(e.key_node.Mark(), e.key,
                 "unknown table; the tables read are " + join(known_tables) +
                     did_you_mean(e.key, known_tables));
        }
        tables.emplace(e.key, e);
    }
    const auto table = [&](const table_spec& spec) -> const entry* {
        const auto it = tables.find(spec.name);
        return it == tables.end() ? nullptr : &it->second;
    };
    // `load` reads the table when the file gives it.
    const auto load_if = [&](const table_spec& spec, void (loader::*load)(const entry&)) {
        if (const auto* t = table(spec)) {
            (this->*load)(*t);
        }
    };
    // Each buffer/WRED table the file gives replaces the built-in default
    // as a whole (docs/config.md): any of BUFFER_POOL, BUFFER_PROFILE,
    // BUFFER_PG -> only the file's buffers; WRED_PROFILE or a QUEUE
    // wred_profile -> only the file's WRED bindings. Ports copy
    // port_defaults in load_ports, so this comes first.
    _file_buffers = table(buffer_pool_table) != nullptr || table(buffer_profile_table) != nullptr ||
                    table(buffer_pg_table) != nullptr;
    if (_file_buffers) {
        _cfg.pool = buffer_pool_cfg{};
        _cfg.port_defaults.pgs = {};
    }
    const auto* queue = table(queue_table);
    if (table(wred_profile_table) != nullptr || (queue != nullptr && queue_table_binds_wred(queue->value))) {
        _cfg.port_defaults.wred = {};
    }
    load_if(rocelab_table, &loader::load_rocelab);
    load_if(device_metadata_table, &loader::load_device_metadata);
    load_if(switch_table, &loader::load_switch);
    load_if(port_table, &loader::load_ports);
    load_if(breakout_cfg_table, &loader::load_breakout);
    const qos_maps az = azure_roce_maps();  // each map table's built-in AZURE
    load_map_table(table(dscp_to_tc_map_table), dscp_to_tc_map_table, az.dscp_to_tc, _dscp_maps);
    load_map_table(table(dot1p_to_tc_map_table), dot1p_to_tc_map_table, az.pcp_to_tc, _dot1p_maps);
    load_map_table(table(tc_to_queue_map_table), tc_to_queue_map_table, az.tc_to_queue, _tc_queue_maps);
    load_map_table(table(tc_to_priority_group_map_table), tc_to_priority_group_map_table, az.tc_to_pg,
                   _tc_pg_maps);
    load_map_table(table(map_pfc_priority_to_queue_table), map_pfc_priority_to_queue_table,
                   az.pfc_prio_to_queue, _pfc_queue_maps);
    load_schedulers(table(scheduler_table));
    load_wred_profiles(table(wred_profile_table));
    load_if(port_qos_map_table, &loader::load_port_qos_map);
    load_if(queue_table, &loader::load_queues);
    load_if(cable_length_table, &loader::load_cable_length);
    load_if(default_lossless_buffer_parameter_table, &loader::load_default_lossless);
    load_if(buffer_pool_table, &loader::load_buffer_pool);
    load_if(buffer_profile_table, &loader::load_buffer_profiles);
    if (const auto* t = table(buffer_pg_table)) {
        if (!_cfg.pool.enabled) {
            fail(t->key_node.Mark(), "BUFFER_PG",
                 "BUFFER_PG needs an ingress BUFFER_POOL: add BUFFER_POOL: {ingress_lossless_pool: {size: "
                 "..., "
                 "type: ingress, mode: dynamic}}");
        }
        load_buffer_pg(*t);
    } else if (_file_buffers && _cfg.model == buffer_model::dynamic && _cfg.pool.enabled) {
        add_dynamic_lossless_pgs();
    }
    if (_file_buffers && _cfg.pool.enabled) {
        apply_over_subscription();
        check_pool_fit();
    }
    load_if(buffer_queue_table, &loader::load_buffer_queue);
    apply_egress_buffers();
    if (_cfg.pool.enabled && _cfg.pool.shared_headroom.v > 0) {
        _cfg.notes.push_back(shared_headroom_note(_cfg));
    }
    if (!_file_buffers) {
        resolve_default_buffers();
    }
    load_if(pfc_wd_table, &loader::load_pfc_wd);
    for (const table_spec* spec : {&interface_table, &route_table, &neigh_table}) {
        const auto* t = table(*spec);
        if (t != nullptr && _cfg.mode != fwd_mode::l3 && !t->value.IsNull() && t->value.size() != 0) {
            fail(t->key_node.Mark(), spec->name,
                 "this table is only used in L3 mode; set ROCELAB mode: l3 or remove it");
        }
    }
    load_if(interface_table, &loader::load_interfaces);
    load_if(route_table, &loader::load_routes);
    load_if(neigh_table, &loader::load_neighbors);
    return _cfg;
}

[[noreturn]] void loader::fail(const YAML::Mark& m, std::string_view path, std::string_view what) const {
    std::string msg = _source;
    if (!m.is_null()) {
        msg += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
    }
    msg += ": ";
    if (!path.empty()) {
        msg += path;
        msg += ": ";
    }
    msg += what;
    throw load_failure{std::move(msg)};
}

YAML::Mark loader::mark_of(const entry& e) {
    if (e.value.IsDefined() && !e.value.IsNull() && !e.value.Mark().is_null()) {
        return e.value.Mark();
    }
    return e.key_node.Mark();
}

[[noreturn]] void loader::fail_value(const entry& e, std::string_view expected) const {
    fail(mark_of(e), e.path, "got " + show(e.value) + ", expected " + std::string(expected));
}

// The (key, value) pairs of a mapping (an empty value counts as an empty
// mapping). Keys must be scalars and unique.
std::vector<entry> loader::entries(const YAML::Node& map, const YAML::Mark& at, std::string_view path) const {
    std::vector<entry> out;
    if (!map.IsDefined() || map.IsNull()) {
        return out;
    }
    if (!map.IsMap()) {
        fail(map.Mark().is_null() ? at : map.Mark(), path,
             "got " + show(map) + ", expected a mapping of keys to values");
    }
    std::map<std::string, YAML::Mark> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const YAML::Node k = it->first;  // a copy: it->first lives in a temporary proxy
        const std::string sub = path.empty() ? "" : std::string(path) + "|";
        if (!k.IsScalar()) {
            fail(k.Mark(), path, "a key must be a plain name or number, not " + show(k));
        }
        const auto [pos, inserted] = seen.emplace(k.Scalar(), k.Mark());
        if (!inserted) {
            fail(k.Mark(), sub + k.Scalar(),
                 "duplicate key; it is already given at line " + std::to_string(pos->second.line + 1));
        }
        out.push_back(entry{k.Scalar(), k, it->second, sub.empty() ? k.Scalar() : sub + k.Scalar()});
    }
    return out;
}

field_map loader::fields(const entry& owner, const table_spec& t) const {
    field_map out;
    std::vector<std::string> accepted;
    for (const auto& f : t.fields) {
        accepted.emplace_back(f.name);
    }
    for (auto& e : entries(owner)) {
        if (std::find(accepted.begin(), accepted.end(), e.key) == accepted.end()) {
            const std::string accepted_text =
                accepted.empty() ? "no fields are accepted here" : "accepted fields are " + join(accepted);
            if (std::find(t.refused.begin(), t.refused.end(), e.key) != t.refused.end()) {
                fail(e.key_node.Mark(), e.path,
                     "this SONiC field is not supported by rocelab; " + accepted_text);
            }
            fail(e.key_node.Mark(), e.path,
                 "unknown field; " + accepted_text + did_you_mean(e.key, accepted));
        }
        out.emplace(e.key, std::move(e));
    }
    return out;
}

void loader::check_only_key(const entry& k, const table_spec& t) const {
    const std::string key(t.only_key);
    if (k.key != key) {
        fail(k.key_node.Mark(), k.path, "unknown key; the only key is " + key + did_you_mean(k.key, {key}));
    }
}

const entry* loader::find(const field_map& f, const field_spec& s) const {
    const auto it = f.find(s.name);
    return it == f.end() ? nullptr : &it->second;
}

std::pair<std::size_t, std::string_view> loader::port_and_address(const entry& k, std::size_t bar) const {
    const std::string_view key(k.key);
    const std::size_t port = port_index(trim(key.substr(0, bar)), k.key_node.Mark(), k.path);
    return {port, bar == std::string::npos ? std::string_view{} : trim(key.substr(bar + 1))};
}

void loader::fail_address(const entry& k, std::string_view text, std::string_view expected) const {
    fail(k.key_node.Mark(), k.path,
         "address " + quote(text) + " is not valid: expected " + std::string(expected));
}

const entry& loader::required(const entry& k, const field_map& f, const field_spec& s,
                              std::string_view missing) const {
    const entry* e = find(f, s);
    if (e == nullptr) {
        fail(k.key_node.Mark(), k.path, missing);
    }
    return *e;
}

void loader::check_entry_name(const entry& k, std::string_view what, bool null_refused) const {
    if (k.key.empty() || k.key.find('|') != std::string::npos || (null_refused && k.key == "NULL")) {
        fail(k.key_node.Mark(), k.path,
             std::string(what) + " must not be empty" + (null_refused ? ", NULL" : "") + " or contain '|'");
    }
}

std::string loader::scalar(const entry& e, std::string_view expected) const {
    if (!e.value.IsScalar()) {
        fail_value(e, expected);
    }
    return e.value.Scalar();
}

std::uint64_t loader::get_uint(const entry& e, const field_spec& f) const {
    return get_uint(e, f, f.hi, f.noun);
}

std::uint64_t loader::get_uint(const entry& e, const field_spec& f, std::uint64_t hi,
                               std::string_view what) const {
    const auto lo = static_cast<std::uint64_t>(f.lo);
    const std::string expected = std::string(what) + " " + std::to_string(lo) + ".." + std::to_string(hi);
    const std::string s(trim(scalar(e, expected)));
    if (s.empty() || s.size() > 20 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        fail_value(e, expected);
    }
    const unsigned __int128 v = [&] {
        unsigned __int128 x = 0;
        for (const char c : s) {
            x = x * 10 + static_cast<unsigned>(c - '0');
        }
        return x;
    }();
    if (v < lo || v > hi) {
        fail(mark_of(e), e.path, quote(s) + " is out of range: expected " + expected);
    }
    return static_cast<std::uint64_t>(v);
}

std::int64_t loader::get_int(const entry& e, const field_spec& f) const {
    const auto hi = static_cast<std::int64_t>(f.hi);
    const std::string expected = std::string(f.noun) + " " + range_text(f);
    const std::string s(trim(scalar(e, expected)));
    const std::string_view digits = std::string_view(s).substr(!s.empty() && (s[0] == '-' || s[0] == '+'));
    if (digits.empty() || digits.size() > 18 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        fail_value(e, expected);
    }
    const std::int64_t v = std::stoll(s);
    if (v < f.lo || v > hi) {
        fail(mark_of(e), e.path, quote(s) + " is out of range: expected " + expected);
    }
    return v;
}

bits_per_sec loader::get_rate(const entry& e, const field_spec& f) const {
    const std::string range = range_text(f);
    const auto r = parse_rate(scalar(e, "a rate such as 100Gbps (" + range + ")"));
    if (!r) {
        fail(mark_of(e), e.path, r.error().message + " (accepted " + range + ")");
    }
    if (r->v < static_cast<std::uint64_t>(f.lo) || r->v > f.hi) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

nanos loader::get_time(const entry& e, const field_spec& f) const {
    const std::string range = range_text(f);
    const std::optional<nanos> bare_unit =
        f.bare_unit > 0 ? std::optional<nanos>(nanos{f.bare_unit}) : std::nullopt;
    const auto r = parse_time(scalar(e, "a time such as 1s or 55us (" + range + ")"), bare_unit);
    if (!r) {
        fail(mark_of(e), e.path, r.error().message + " (accepted " + range + ")");
    }
    if (r->v < f.lo || static_cast<std::uint64_t>(r->v) > f.hi) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

bytes loader::get_bytes(const entry& e, const field_spec& f, std::optional<std::uint64_t> hi) const {
    const std::uint64_t max = hi.value_or(f.hi);
    const std::string range = range_text(f, max);
    const auto r = parse_bytes(scalar(e, "a size such as 9216B or 96KiB (" + range + ")"),
                               f.bare_unit > 0 ? bare_number::accepted : bare_number::rejected);
    if (!r) {
        fail(mark_of(e), e.path, r.error().message + " (accepted " + range + ")");
    }
    if (r->v < static_cast<std::uint64_t>(f.lo) || r->v > max) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

double loader::get_fraction_bytes(const entry& e, const field_spec& f) const {
    const std::string range = range_text(f);
    const std::string s = scalar(e, "a byte count such as 819.2 or 1KiB (" + range + ")");
    double v = 0;
    if (const auto d = parse_decimal(s)) {
        v = *d;
    } else {
        const auto r = parse_bytes(s, bare_number::rejected);
        if (!r) {
            fail(mark_of(e), e.path,
                 r.error().message + "; a bare number of bytes may have decimals, such as 819.2 (accepted " +
                     range + ")");
        }
        v = static_cast<double>(r->v);
    }
    if (v < static_cast<double>(f.lo) || v > static_cast<double>(f.hi)) {
        fail(mark_of(e), e.path, quote(s) + " is out of range: accepted " + range);
    }
    return v;
}

double loader::get_percent(const entry& e, const field_spec& f) const {
    const std::string range = range_text(f);  // "0..100%"
    const std::string expected =
        "a percentage " + std::to_string(f.lo) + ".." + std::to_string(f.hi) + " such as 100 or 50%";
    const auto r =
        parse_percent(scalar(e, expected), f.bare_unit > 0 ? bare_number::accepted : bare_number::rejected);
    if (!r) {
        fail(mark_of(e), e.path, r.error().message + " (accepted " + range + ")");
    }
    if (*r < static_cast<double>(f.lo) || *r > static_cast<double>(f.hi)) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

double loader::get_ratio(const entry& e, const field_spec& f) const {
    const std::string expected = "a ratio " + range_text(f) + " such as 2" +
                                 (f.limit.empty() ? std::string() : " (" + std::string(f.limit) + ")");
    const auto v = parse_decimal(scalar(e, expected));
    if (!v) {
        fail_value(e, expected);
    }
    if (*v < static_cast<double>(f.lo) || *v > static_cast<double>(f.hi)) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is out of range: expected " + expected);
    }
    return *v;
}

double loader::get_length(const entry& e, const field_spec& f) const {
    const std::string range = range_text(f);  // "0m..100km"
    const std::string expected = std::string(f.noun) + " (accepted " + range + ")";
    const std::string s(trim(scalar(e, expected)));
    std::size_t unit = 0;
    while (unit < s.size() && ((s[unit] >= '0' && s[unit] <= '9') || s[unit] == '.')) {
        ++unit;
    }
    const auto number = parse_decimal(std::string_view(s).substr(0, unit));
    const std::string_view u = std::string_view(s).substr(unit);
    if (!number || (u != "m" && u != "km")) {
        if (number && u.empty()) {
            fail(mark_of(e), e.path, quote(s) + " has no unit: expected " + expected);
        }
        fail(mark_of(e), e.path, "got " + quote(s) + ", expected " + expected);
    }
    const double m = u == "km" ? *number * 1000.0 : *number;
    if (m < static_cast<double>(f.lo) || m > static_cast<double>(f.hi)) {
        fail(mark_of(e), e.path, quote(s) + " is out of range: accepted " + range);
    }
    return m;
}

std::string loader::get_choice(const entry& e, const field_spec& f) const {
    std::vector<std::string> choices;
    for (const auto c : f.choices) {
        choices.emplace_back(c);
    }
    const std::string expected = "one of " + join(choices, ", ");
    const std::string s = scalar(e, expected);
    for (const auto& c : choices) {
        if (lower(c) == lower(trim(s))) {
            return c;
        }
    }
    fail(mark_of(e), e.path, "got " + quote(s) + ", expected " + expected + did_you_mean(s, choices));
}

bool loader::get_flag(const entry& e, const field_spec& f) const {
    const std::string v = get_choice(e, f);
    return v == "on" || v == "true";
}

mac_addr loader::get_mac(const entry& e, const field_spec&) const {
    const std::string expected = "a unicast MAC address such as \"02:00:00:00:01:00\"";
    const auto m = parse_mac(trim(scalar(e, expected)));
    if (!m) {
        fail_value(e, expected);
    }
    if (((*m)[0] & 1u) != 0) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is a multicast address: expected " + expected);
    }
    if (*m == mac_addr{}) {
        fail(mark_of(e), e.path, quote(e.value.Scalar()) + " is all zeros: expected " + expected);
    }
    return *m;
}

std::uint8_t loader::get_number_set(const entry& e, const field_spec& f) const {
    const std::string expected = "a comma-separated list of " + std::string(f.noun) + " " + range_text(f) +
                                 " such as \"3,4\", or \"\" for none";
    const std::string s = e.value.IsNull() ? std::string() : scalar(e, expected);
    const auto mask = parse_number_set(s, static_cast<unsigned>(f.hi));
    if (!mask) {
        fail_value(e, expected);
    }
    return *mask;
}

std::string loader::get_text(const entry& e, const field_spec& f) const {
    return std::string(trim(scalar(e, f.noun)));
}

std::string loader::get_ref(const entry& e, const field_spec& f) const {
    return f.bracketed ? strip_ref(scalar(e, f.noun), f.ref_table) : get_text(e, f);
}

// Index of a PORT name in _cfg.ports, or fail.
std::size_t loader::port_index(std::string_view name, const YAML::Mark& at, const std::string& path) const {
    for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
        if (_cfg.ports[i].name == name) {
            return i;
        }
    }
    std::vector<std::string> names;
    for (const auto& p : _cfg.ports) {
        names.push_back(p.name);
    }
    if (names.empty()) {
        fail(at, path,
             "unknown port " + quote(name) +
                 ": the PORT table is empty (every probed port gets the defaults); list the port in "
                 "PORT, or use the key \"global\" to configure every port");
    }
    fail(at, path,
         "unknown port " + quote(name) + "; ports in PORT are " + join(names) + did_you_mean(name, names));
}

// "Ethernet0,Ethernet4" -> indexes; "global" / "*" -> {all_ports}.
std::vector<std::size_t> loader::port_list(std::string_view text, const YAML::Mark& at,
                                           const std::string& path) const {
    const std::string_view t = trim(text);
    if (t == "global" || t == "*") {
        return {all_ports};
    }
    std::vector<std::size_t> out;
    for (const auto name : split(t, ',')) {
        const std::size_t i = port_index(name, at, path);
        if (std::find(out.begin(), out.end(), i) != out.end()) {
            fail(at, path, "port " + quote(name) + " is listed twice");
        }
        out.push_back(i);
    }
    return out;
}

std::vector<std::size_t> loader::key_ports(const entry& k, bool& global_seen) const {
    auto targets = port_list(k.key, k.key_node.Mark(), k.path);
    if (targets.front() == all_ports) {
        if (global_seen) {
            fail(k.key_node.Mark(), k.path, "\"global\" and \"*\" are the same key; give only one");
        }
        global_seen = true;
    }
    return targets;
}

void loader::set_once(field_owners& set_by, std::size_t target, const field_map& f, const entry& k) const {
    if (target == all_ports) {
        return;
    }
    for (const auto& [name, e] : f) {
        const auto [it, inserted] = set_by.emplace(std::pair{target, name}, k.key);
        if (!inserted) {
            fail(e.key_node.Mark(), e.path,
                 "port " + _cfg.ports[target].name + " already gets " + name + " from key " +
                     quote(it->second));
        }
    }
}

bool loader::is_global_key(std::string_view key) {
    const auto k = trim(key);
    return k == "global" || k == "*";
}

// SONiC sometimes writes references as "[BUFFER_PROFILE|name]".
std::string loader::strip_ref(std::string_view text, std::string_view table) {
    std::string_view t = trim(text);
    const std::string prefix = "[" + std::string(table) + "|";
    if (t.size() > prefix.size() && t.substr(0, prefix.size()) == prefix && t.back() == ']') {
        t = t.substr(prefix.size(), t.size() - prefix.size() - 1);
    }
    return std::string(trim(t));
}

sonic_pool_cfg* loader::find_pool(std::string_view name) {
    for (auto& p : _cfg.pools) {
        if (p.name == name) {
            return &p;
        }
    }
    return nullptr;
}

std::vector<std::string> loader::pool_names() const {
    std::vector<std::string> out;
    for (const auto& p : _cfg.pools) {
        out.push_back(p.name);
    }
    return out;
}

// The port-keyed buffer tables: "<ports>|<numbers>" -> (ports, bit mask).
std::pair<std::vector<std::size_t>, std::uint8_t> loader::buffer_key(const entry& k, const std::string& path,
                                                                     const char* what,
                                                                     const char* example) const {
    const auto bar = k.key.rfind('|');
    if (bar == std::string::npos) {
        fail(k.key_node.Mark(), path, std::string("a key is \"<ports>|<") + what + ">\", such as " + example);
    }
    const auto targets = port_list(std::string_view(k.key).substr(0, bar), k.key_node.Mark(), path);
    const auto set = parse_number_set(std::string_view(k.key).substr(bar + 1), 7);
    if (!set || *set == 0) {
        fail(k.key_node.Mark(), path,
             std::string(what) + " " + quote(std::string_view(k.key).substr(bar + 1)) +
                 " are not valid: expected numbers 0..7 such as \"3\", \"3-4\" or \"0,3-4\"");
    }
    return {targets, *set};
}

// A BUFFER_PG / BUFFER_QUEUE profile reference: nullptr for "NULL" (or,
// `absent_ok`, no profile field).
const std::pair<const std::string, buffer_profile>* loader::profile_ref(const entry& k, const table_spec& t,
                                                                        bool absent_ok) const {
    const field_spec& profile = t.fields[0];
    const auto f = fields(k, t);
    const auto* pe = find(f, profile);
    if (pe == nullptr) {
        if (absent_ok) {
            return nullptr;
        }
        fail(k.key_node.Mark(), k.path, "profile is required: a BUFFER_PROFILE name, or NULL for none");
    }
    const std::string& fpath = pe->path;
    const std::string name = get_ref(*pe, profile);
    if (name == "NULL") {
        return nullptr;
    }
    const auto it = _profiles.find(name);
    if (it == _profiles.end()) {
        const auto names = names_of(_profiles);
        fail(mark_of(*pe), fpath,
             "unknown profile " + quote(name) +
                 (names.empty() ? std::string("; there is no BUFFER_PROFILE table")
                                : "; BUFFER_PROFILE names are " + join(names) + ", or NULL for none" +
                                      did_you_mean(name, names)));
    }
    return &*it;
}

void loader::bind_buffer_profiles(
    const entry& t, const buffer_binding& b,
    const std::function<void(const entry&, const profile_entry*, std::size_t, int)>& bind) {
    const auto all = entries(t);
    const auto order = global_first(all, [](const entry& e) {
        const auto bar = e.key.rfind('|');
        return is_global_key(std::string_view(e.key).substr(0, bar == std::string::npos ? 0 : bar));
    });
    const auto pool_kind = [](bool ingress) { return std::string(ingress ? "ingress" : "egress"); };
    std::map<std::pair<std::size_t, int>, std::string> set_by;
    for (const entry* kp : order) {
        const entry& k = *kp;
        const std::string& path = k.path;
        const auto [targets, numbers] = buffer_key(k, path, b.what, b.example);
        const auto* ref = profile_ref(k, b.table, b.absent_ok);
        if (ref != nullptr && ref->second.ingress != b.ingress) {
            fail(k.key_node.Mark(), path + "|profile",
                 "profile " + ref->first + " is in the " + pool_kind(ref->second.ingress) + " pool " +
                     ref->second.pool + ": " + std::string(b.table.name) + " takes " + pool_kind(b.ingress) +
                     " profiles");
        }
        for (const std::size_t target : targets) {
            for (int n = 0; n < b.count; ++n) {
                if ((numbers & (1u << n)) == 0) {
                    continue;
                }
                if (target != all_ports) {
                    const auto [sit, inserted] = set_by.emplace(std::pair{target, n}, k.key);
                    if (!inserted) {
                        fail(k.key_node.Mark(), path,
                             std::string(b.one) + " " + std::to_string(n) + " of port " +
                                 _cfg.ports[target].name + " already gets a profile from key " +
                                 quote(sit->second));
                    }
                }
                bind(k, ref, target, n);
            }
        }
    }
}

// Port whose INTERFACE subnet holds `addr`, or all_ports if none.
std::size_t loader::on_link_port(const ip_prefix& addr) const {
    for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
        for (const auto& a : _cfg.ports[i].addresses) {
            if (contains(a, addr)) {
                return i;
            }
        }
    }
    return all_ports;
}

std::string loader::subnets_of(const port_cfg& p) const {
    std::vector<std::string> s;
    for (const auto& a : p.addresses) {
        s.push_back(to_string(a));
    }
    return s.empty() ? "it has no INTERFACE address" : "its subnets are " + join(s);
}

}  // namespace rocelab::detail
