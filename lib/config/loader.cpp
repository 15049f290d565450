// loader.cpp - the switch loader's table order, structure walk, typed
// getters and the helpers several tables share (see loader.hpp). Each
// table's own loading code is in tables/<table>.cpp.
#include "config/loader.hpp"
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
    const std::string s(trim(text));
    ip_prefix p;
    if (s.find(':') != std::string::npos) {
        p.v6 = true;
        if (inet_pton(AF_INET6, s.c_str(), p.addr.data()) != 1) {
            return std::nullopt;
        }
        p.len = 128;
    } else {
        if (inet_pton(AF_INET, s.c_str(), p.addr.data()) != 1) {
            return std::nullopt;
        }
        p.len = 32;
    }
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

ip_prefix network_of(const ip_prefix& p) {
    ip_prefix n = p;
    const unsigned width = p.v6 ? 16 : 4;
    for (unsigned i = 0; i < width; ++i) {
        const int bits = std::clamp(static_cast<int>(p.len) - static_cast<int>(i * 8), 0, 8);
        const std::uint8_t mask = bits == 0 ? 0 : static_cast<std::uint8_t>(0xFFu << (8 - bits));
        n.addr[i] = static_cast<std::uint8_t>(n.addr[i] & mask);
    }
    return n;
}

bool same_prefix(const ip_prefix& a, const ip_prefix& b) {
    return a.v6 == b.v6 && a.len == b.len && a.addr == b.addr;
}

bool contains(const ip_prefix& net, const ip_prefix& host) {
    if (net.v6 != host.v6) {
        return false;
    }
    ip_prefix h = host;
    h.len = net.len;
    return network_of(h).addr == network_of(net).addr;
}

std::string to_string(const ip_prefix& p, bool with_len) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(p.v6 ? AF_INET6 : AF_INET, p.addr.data(), buf, sizeof buf);
    std::string s = buf;
    if (with_len) {
        s += "/" + std::to_string(p.len);
    }
    return s;
}

// "3,4" (or "" for none) -> bit mask of 0..7. Returns nullopt on bad text.
std::optional<std::uint8_t> parse_number_set(std::string_view text, unsigned max) {
    std::uint32_t mask = 0;
    if (trim(text).empty()) {
        return 0;
    }
    for (const auto part : split(text, ',')) {
        const auto bounds = split(part, '-');
        if (bounds.size() > 2) {
            return std::nullopt;
        }
        unsigned lo = 0;
        unsigned hi = 0;
        for (std::size_t b = 0; b < bounds.size(); ++b) {
            if (bounds[b].empty() || bounds[b].size() > 2) {
                return std::nullopt;
            }
            unsigned v = 0;
            for (const char c : bounds[b]) {
                if (c < '0' || c > '9') {
                    return std::nullopt;
                }
                v = v * 10 + static_cast<unsigned>(c - '0');
            }
            (b == 0 ? lo : hi) = v;
        }
        if (bounds.size() == 1) {
            hi = lo;
        }
        if (hi > max || lo > hi) {
            return std::nullopt;
        }
        for (unsigned v = lo; v <= hi; ++v) {
            mask |= 1u << v;
        }
    }
    return static_cast<std::uint8_t>(mask);
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

const std::vector<std::string> known_tables = {
    "ROCELAB",
    "DEVICE_METADATA",
    "SWITCH",
    "PORT",
    "INTERFACE",
    "ROUTE",
    "NEIGH",
    "DSCP_TO_TC_MAP",
    "DOT1P_TO_TC_MAP",
    "TC_TO_QUEUE_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "PORT_QOS_MAP",
    "SCHEDULER",
    "QUEUE",
    "CABLE_LENGTH",
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_PG",
    "BUFFER_QUEUE",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
    "PFC_WD",
    "WRED_PROFILE",
};

// SONiC tables a user may reasonably paste that this version does not read.
const std::vector<std::string> unsupported_tables = {
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

}  // namespace

const std::vector<std::string>& switch_tables() { return known_tables; }

switch_cfg loader::load(const YAML::Node& root) {
    _cfg = default_switch_cfg();
    _cfg.source = _source;
    if (!root.IsDefined() || root.IsNull()) {
        return _cfg;
    }
    if (!root.IsMap()) {
        fail(root.Mark(), "",
             "the file must be a mapping of table names (ROCELAB, PORT, ...) to tables, not " +
                 show(root));
    }
    field_map tables;
    for (auto& e : entries(root, root.Mark(), "")) {
        if (std::find(known_tables.begin(), known_tables.end(), e.key) == known_tables.end()) {
            if (std::find(unsupported_tables.begin(), unsupported_tables.end(), e.key) !=
                unsupported_tables.end()) {
                fail(
                    e.key_node.Mark(), e.key,
                    "this SONiC table is not supported by this version of rocelab; the tables read are " +
                        join(known_tables) + " (see docs/config.md)");
            }
            fail(e.key_node.Mark(), e.key,
                 "unknown table; the tables read are " + join(known_tables) +
                     did_you_mean(e.key, known_tables));
        }
        tables.emplace(e.key, e);
    }
    const auto table = [&](std::string_view name) -> const entry* {
        const auto it = tables.find(name);
        return it == tables.end() ? nullptr : &it->second;
    };
    // Each buffer/WRED table the file gives replaces the built-in default
    // as a whole (docs/config.md): any of BUFFER_POOL, BUFFER_PROFILE,
    // BUFFER_PG -> only the file's buffers; WRED_PROFILE or a QUEUE
    // wred_profile -> only the file's WRED bindings. Ports copy
    // port_defaults in load_ports, so this comes first.
    _file_buffers = table("BUFFER_POOL") != nullptr || table("BUFFER_PROFILE") != nullptr ||
                    table("BUFFER_PG") != nullptr;
    if (_file_buffers) {
        _cfg.pool = buffer_pool_cfg{};
        _cfg.port_defaults.pgs = {};
    }
    const auto* queue_table = table("QUEUE");
    if (table("WRED_PROFILE") != nullptr || (queue_table != nullptr && queue_table_binds_wred(queue_table->value))) {
        _cfg.port_defaults.wred = {};
    }
    if (const auto* t = table("ROCELAB")) {
        load_rocelab(*t);
    }
    if (const auto* t = table("DEVICE_METADATA")) {
        load_device_metadata(*t);
    }
    if (const auto* t = table("SWITCH")) {
        load_switch(*t);
    }
    if (const auto* t = table("PORT")) {
        load_ports(*t);
    }
    load_map_table(table("DSCP_TO_TC_MAP"), "DSCP_TO_TC_MAP", "DSCP", "TC", _dscp_maps);
    load_map_table(table("DOT1P_TO_TC_MAP"), "DOT1P_TO_TC_MAP", "802.1p priority", "TC", _dot1p_maps);
    load_map_table(table("TC_TO_QUEUE_MAP"), "TC_TO_QUEUE_MAP", "TC", "queue", _tc_queue_maps);
    load_map_table(table("TC_TO_PRIORITY_GROUP_MAP"), "TC_TO_PRIORITY_GROUP_MAP", "TC", "priority group",
                   _tc_pg_maps);
    load_map_table(table("MAP_PFC_PRIORITY_TO_QUEUE"), "MAP_PFC_PRIORITY_TO_QUEUE", "PFC priority",
                   "queue", _pfc_queue_maps);
    load_schedulers(table("SCHEDULER"));
    load_wred_profiles(table("WRED_PROFILE"));
    if (const auto* t = table("PORT_QOS_MAP")) {
        load_port_qos_map(*t);
    }
    if (const auto* t = table("QUEUE")) {
        load_queues(*t);
    }
    if (const auto* t = table("CABLE_LENGTH")) {
        load_cable_length(*t);
    }
    if (const auto* t = table("DEFAULT_LOSSLESS_BUFFER_PARAMETER")) {
        load_default_lossless(*t);
    }
    if (const auto* t = table("BUFFER_POOL")) {
        load_buffer_pool(*t);
    }
    if (const auto* t = table("BUFFER_PROFILE")) {
        load_buffer_profiles(*t);
    }
    if (const auto* t = table("BUFFER_PG")) {
        if (!_cfg.pool.enabled) {
            fail(t->key_node.Mark(), "BUFFER_PG",
                 "BUFFER_PG needs an ingress BUFFER_POOL: add BUFFER_POOL: {ingress_lossless_pool: {size: ..., "
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
    if (const auto* t = table("BUFFER_QUEUE")) {
        load_buffer_queue(*t);
    }
    apply_egress_buffers();
    if (_cfg.pool.enabled && _cfg.pool.shared_headroom.v > 0) {
        _cfg.notes.push_back(shared_headroom_note(_cfg));
    }
    if (!_file_buffers) {
        resolve_default_buffers();
    }
    if (const auto* t = table("PFC_WD")) {
        load_pfc_wd(*t);
    }
    for (const char* name : {"INTERFACE", "ROUTE", "NEIGH"}) {
        const auto* t = table(name);
        if (t != nullptr && _cfg.mode != fwd_mode::l3 && !t->value.IsNull() && t->value.size() != 0) {
            fail(t->key_node.Mark(), name,
                 "this table is only used in L3 mode; set ROCELAB mode: l3 or remove it");
        }
    }
    if (const auto* t = table("INTERFACE")) {
        load_interfaces(*t);
    }
    if (const auto* t = table("ROUTE")) {
        load_routes(*t);
    }
    if (const auto* t = table("NEIGH")) {
        load_neighbors(*t);
    }
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

[[noreturn]] void loader::fail_value(const entry& e, std::string_view path, std::string_view expected) const {
    fail(mark_of(e), path, "got " + show(e.value) + ", expected " + std::string(expected));
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
        out.push_back(entry{k.Scalar(), k, it->second});
    }
    return out;
}

// The fields of an entry, checked against the accepted names.
field_map loader::fields(const entry& owner, const std::string& path, const std::vector<std::string>& accepted,
                 const std::vector<std::string>& sonic_unsupported) const {
    field_map out;
    for (auto& e : entries(owner.value, owner.key_node.Mark(), path)) {
        if (std::find(accepted.begin(), accepted.end(), e.key) == accepted.end()) {
            const std::string fpath = path + "|" + e.key;
            const std::string accepted_text = accepted.empty() ? "no fields are accepted here"
                                                               : "accepted fields are " + join(accepted);
            if (std::find(sonic_unsupported.begin(), sonic_unsupported.end(), e.key) !=
                sonic_unsupported.end()) {
                fail(e.key_node.Mark(), fpath,
                     "this SONiC field is not supported by rocelab; " + accepted_text);
            }
            fail(e.key_node.Mark(), fpath,
                 "unknown field; " + accepted_text + did_you_mean(e.key, accepted));
        }
        out.emplace(e.key, std::move(e));
    }
    return out;
}

std::string loader::scalar(const entry& e, std::string_view path, std::string_view expected) const {
    if (!e.value.IsScalar()) {
        fail_value(e, path, expected);
    }
    return e.value.Scalar();
}

std::uint64_t loader::get_uint(const entry& e, std::string_view path, std::uint64_t min, std::uint64_t max,
                       std::string_view what) const {
    const std::string expected =
        std::string(what) + " " + std::to_string(min) + ".." + std::to_string(max);
    const std::string s(trim(scalar(e, path, expected)));
    if (s.empty() || s.size() > 20 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        fail_value(e, path, expected);
    }
    const unsigned __int128 v = [&] {
        unsigned __int128 x = 0;
        for (const char c : s) {
            x = x * 10 + static_cast<unsigned>(c - '0');
        }
        return x;
    }();
    if (v < min || v > max) {
        fail(mark_of(e), path, quote(s) + " is out of range: expected " + expected);
    }
    return static_cast<std::uint64_t>(v);
}

bits_per_sec loader::get_rate(const entry& e, std::string_view path, bits_per_sec min, bits_per_sec max) const {
    const std::string range = format_rate(min) + ".." + format_rate(max);
    const auto r = parse_rate(scalar(e, path, "a rate such as 100Gbps (" + range + ")"));
    if (!r) {
        fail(mark_of(e), path, r.error().message + " (accepted " + range + ")");
    }
    if (*r < min || *r > max) {
        fail(mark_of(e), path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

nanos loader::get_time(const entry& e, std::string_view path, nanos min, nanos max,
               std::optional<nanos> bare_unit) const {
    const std::string range = format_time(min) + ".." + format_time(max);
    const auto r = parse_time(scalar(e, path, "a time such as 1s or 55us (" + range + ")"), bare_unit);
    if (!r) {
        fail(mark_of(e), path, r.error().message + " (accepted " + range + ")");
    }
    if (*r < min || *r > max) {
        fail(mark_of(e), path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

// Byte ranges print with binary units ("64B..1GiB") unless `plain`, for
// fields people think of in bytes ("68..9216 bytes" for an MTU).
bytes loader::get_bytes(const entry& e, std::string_view path, bytes min, bytes max, bare_number bare,
                bool plain) const {
    const std::string range = plain ? std::to_string(min.v) + ".." + std::to_string(max.v) + " bytes"
                                    : format_bytes(min) + ".." + format_bytes(max);
    const auto r = parse_bytes(scalar(e, path, "a size such as 9216B or 96KiB (" + range + ")"), bare);
    if (!r) {
        fail(mark_of(e), path, r.error().message + " (accepted " + range + ")");
    }
    if (*r < min || *r > max) {
        fail(mark_of(e), path, quote(e.value.Scalar()) + " is out of range: accepted " + range);
    }
    return *r;
}

// A signed whole number, e.g. dynamic_th -3.
std::int64_t loader::get_int(const entry& e, std::string_view path, std::int64_t min, std::int64_t max,
                     std::string_view what) const {
    const std::string expected =
        std::string(what) + " " + std::to_string(min) + ".." + std::to_string(max);
    const std::string s(trim(scalar(e, path, expected)));
    const std::string_view digits =
        std::string_view(s).substr(!s.empty() && (s[0] == '-' || s[0] == '+'));
    if (digits.empty() || digits.size() > 18 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        fail_value(e, path, expected);
    }
    const std::int64_t v = std::stoll(s);
    if (v < min || v > max) {
        fail(mark_of(e), path, quote(s) + " is out of range: expected " + expected);
    }
    return v;
}

// A plain decimal number ("819.2", "5"); nullopt if the text is not one.
std::optional<double> loader::parse_decimal(std::string_view text) {
    const std::string_view t = trim(text);
    std::size_t dots = 0;
    std::size_t digits = 0;
    for (const char c : t) {
        if (c == '.') {
            ++dots;
        } else if (c >= '0' && c <= '9') {
            ++digits;
        } else {
            return std::nullopt;
        }
    }
    if (digits == 0 || digits > 15 || dots > 1) {
        return std::nullopt;
    }
    return std::stod(std::string(t));
}

// Bytes that may be fractional (a model constant such as mac_phy_delay
// 819.2): a bare decimal number of bytes, or a size with a unit (0.8KiB is
// not exact, so write 819.2).
double loader::get_fractional_bytes(const entry& e, std::string_view path, std::uint64_t max) const {
    const std::string range = "0.." + std::to_string(max) + " bytes";
    const std::string s = scalar(e, path, "a byte count such as 819.2 or 1KiB (" + range + ")");
    double v = 0;
    if (const auto d = parse_decimal(s)) {
        v = *d;
    } else {
        const auto r = parse_bytes(s, bare_number::rejected);
        if (!r) {
            fail(mark_of(e), path,
                 r.error().message +
                     "; a bare number of bytes may have decimals, such as 819.2 (accepted " + range +
                     ")");
        }
        v = static_cast<double>(r->v);
    }
    if (v < 0 || v > static_cast<double>(max)) {
        fail(mark_of(e), path, quote(s) + " is out of range: accepted " + range);
    }
    return v;
}

// CABLE_LENGTH values: "5m", "2.5m", "40m", "10km" (SONiC writes "5m").
double loader::get_cable_length(const entry& e, std::string_view path) const {
    constexpr double max_m = 100000.0;
    const std::string expected =
        "a length in metres such as 5m, 40m or 2.5m, or in kilometres such as 10km (accepted 0m..100km)";
    const std::string s(trim(scalar(e, path, expected)));
    std::size_t unit = 0;
    while (unit < s.size() && ((s[unit] >= '0' && s[unit] <= '9') || s[unit] == '.')) {
        ++unit;
    }
    const auto number = parse_decimal(std::string_view(s).substr(0, unit));
    const std::string_view u = std::string_view(s).substr(unit);
    if (!number || (u != "m" && u != "km")) {
        if (number && u.empty()) {
            fail(mark_of(e), path, quote(s) + " has no unit: expected " + expected);
        }
        fail(mark_of(e), path, "got " + quote(s) + ", expected " + expected);
    }
    const double m = u == "km" ? *number * 1000.0 : *number;
    if (m > max_m) {
        fail(mark_of(e), path, quote(s) + " is out of range: accepted 0m..100km");
    }
    return m;
}

std::string loader::get_choice(const entry& e, std::string_view path,
                       const std::vector<std::string>& choices) const {
    const std::string expected = "one of " + join(choices, ", ");
    const std::string s = scalar(e, path, expected);
    for (const auto& c : choices) {
        if (lower(c) == lower(trim(s))) {
            return c;
        }
    }
    fail(mark_of(e), path, "got " + quote(s) + ", expected " + expected + did_you_mean(s, choices));
}

mac_addr loader::get_mac(const entry& e, std::string_view path, bool unicast) const {
    const std::string expected = unicast ? "a unicast MAC address such as \"02:00:00:00:01:00\""
                                         : "a MAC address such as \"02:00:00:00:01:00\"";
    const auto m = parse_mac(trim(scalar(e, path, expected)));
    if (!m) {
        fail_value(e, path, expected);
    }
    if (unicast && ((*m)[0] & 1u) != 0) {
        fail(mark_of(e), path, quote(e.value.Scalar()) + " is a multicast address: expected " + expected);
    }
    if (*m == mac_addr{}) {
        fail(mark_of(e), path, quote(e.value.Scalar()) + " is all zeros: expected " + expected);
    }
    return *m;
}

const entry* loader::find(const field_map& f, std::string_view name) const {
    const auto it = f.find(name);
    return it == f.end() ? nullptr : &it->second;
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
    fail(
        at, path,
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
                                                             const char* what, const char* example) const {
    const auto bar = k.key.rfind('|');
    if (bar == std::string::npos) {
        fail(k.key_node.Mark(), path,
             std::string("a key is \"<ports>|<") + what + ">\", such as " + example);
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
const std::pair<const std::string, buffer_profile>* loader::profile_ref(const entry& k, const std::string& path,
                                                               bool absent_ok) const {
    const auto f = fields(k, path, {"profile"});
    const auto* pe = find(f, "profile");
    if (pe == nullptr) {
        if (absent_ok) {
            return nullptr;
        }
        fail(k.key_node.Mark(), path, "profile is required: a BUFFER_PROFILE name, or NULL for none");
    }
    const std::string fpath = path + "|profile";
    const std::string name = strip_ref(
        scalar(*pe, fpath, "a BUFFER_PROFILE name such as pg_lossless_100000_5m_profile, or NULL"),
        "BUFFER_PROFILE");
    if (name == "NULL") {
        return nullptr;
    }
    const auto it = _profiles.find(name);
    if (it == _profiles.end()) {
        std::vector<std::string> names;
        for (const auto& [n, v] : _profiles) {
            names.push_back(n);
        }
        fail(mark_of(*pe), fpath,
             "unknown profile " + quote(name) +
                 (names.empty() ? std::string("; there is no BUFFER_PROFILE table")
                                : "; BUFFER_PROFILE names are " + join(names) + ", or NULL for none" +
                                      did_you_mean(name, names)));
    }
    return &*it;
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
