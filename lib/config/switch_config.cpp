// switch_config.cpp - YAML (SONiC CONFIG_DB names) to a validated switch_cfg.
//
// Structure: a `loader` walks the tables in a fixed order (ROCELAB first, as
// its mode and max_frame are needed to check the rest), fills a private
// switch_cfg and returns it only when every table has validated. Inside the
// loader a problem is reported by throwing `load_failure`; the two public
// functions catch it (and YAML::Exception, and anything else) and turn it
// into a config_error, so nothing is half-applied and nothing escapes.
#include "config/switch_config.hpp"
#include "config/config_db.hpp"
#include "config/text.hpp"
#include "config/yaml_load.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/units_parse.hpp"
#include "qos/headroom.hpp"

namespace rocelab {
namespace {

// Internal only: never leaves this file.
struct load_failure {
    std::string message;
};

constexpr std::size_t all_ports = SIZE_MAX;  // "global" target: port_defaults and every port

// ---------------------------------------------------------------- text helpers

using detail::quote;
using detail::split;
using detail::trim;

// 2 -> "2", 1.5 -> "1.5".
std::string format_ratio(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

using detail::join;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

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

bool same_prefix(const ip_prefix& a, const ip_prefix& b) {
    return a.v6 == b.v6 && a.len == b.len && a.addr == b.addr;
}

std::optional<mac_addr> parse_mac(std::string_view text) { return detail::parse_mac(trim(text)); }

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

// ------------------------------------------------------------------ defaults

}  // namespace

wred_profile_cfg azure_lossless_wred_profile() {
    wred_profile_cfg w;
    w.name = "AZURE_LOSSLESS";  // sonic-buildimage qos_config.j2, all three colours alike
    w.wred_green_enable = w.wred_yellow_enable = w.wred_red_enable = true;
    w.green_min_threshold = w.yellow_min_threshold = w.red_min_threshold = bytes{1048576};
    w.green_max_threshold = w.yellow_max_threshold = w.red_max_threshold = bytes{2097152};
    w.green_drop_probability = w.yellow_drop_probability = w.red_drop_probability = 5;
    w.ecn = ecn_mode::ecn_all;
    return w;
}

port_cfg default_port_cfg() {
    port_cfg p;
    p.maps = azure_roce_maps();
    p.sched = azure_roce_scheduler();
    p.pfc_enable = (1u << 3) | (1u << 4);    // SONiC AZURE PORT_QOS_MAP pfc_enable "3,4"
    p.pfcwd_queues = (1u << 3) | (1u << 4);  // SONiC AZURE PORT_QOS_MAP pfcwd_sw_enable "3,4"
    // BUFFER_PG "|0": ingress_lossy_profile (size 0, dynamic_th 3).
    pg_buffer_cfg lossy;
    lossy.configured = true;
    lossy.dynamic_th = 3;
    p.pgs[0] = lossy;
    // BUFFER_PG "|3-4": a pg_lossless profile with xoff: auto, dynamic_th 0,
    // no size (reserved = formula size - xoff = xon): resolved from the
    // port's speed by the loader or resolve_port_speeds().
    pg_buffer_cfg lossless;
    lossless.configured = true;
    lossless.dynamic_th = 0;
    lossless.xoff_auto = true;
    lossless.reserved_auto = true;
    p.pgs[3] = lossless;
    p.pgs[4] = lossless;
    // QUEUE "|3-4": wred_profile AZURE_LOSSLESS.
    const wred_cfg w = wred_cfg::from_profile(azure_lossless_wred_profile());
    p.wred[3] = w;
    p.wred[4] = w;
    return p;
}

buffer_pool_cfg default_buffer_pool() {
    buffer_pool_cfg b;
    b.enabled = true;
    b.name = "ingress_lossless_pool";
    b.size = bytes{12u << 20};
    b.cell = bytes{96};
    b.mode = threshold_mode::dynamic_th;
    return b;
}

namespace {

// xoff: auto for one PG of a port whose speed is known: fills xoff, xon and
// (no size given) reserved. Returns "" or why it cannot (static_th < xon).
// Shared by the loader (PORT gives the speed) and resolve_port_speeds().
std::string apply_auto_headroom(pg_buffer_cfg& pg, const port_cfg& p, const headroom_asic_cfg& asic) {
    const headroom_result h = compute_headroom(*p.speed, p.cable_length_m, asic);
    if (pg.mode == threshold_mode::static_th && h.xon > pg.static_th) {
        return "the computed xon " + std::to_string(h.xon.v) + " for port " + p.name + " is above static_th " +
               std::to_string(pg.static_th.v) +
               "; accepted: static_th of at least the xon (ROCELAB headroom pipeline_latency)";
    }
    pg.xoff = h.xoff;
    pg.xon = h.xon;
    if (pg.reserved_auto) {
        pg.reserved = h.size.v > h.xoff.v ? h.size - h.xoff : bytes{0};  // reserved + xoff = formula size
    }
    return {};
}

// Sum over the configured PGs of one port: reserved, and xoff of the lossless ones.
std::pair<std::uint64_t, std::uint64_t> port_reservations(const port_cfg& p) {
    std::uint64_t reserved = 0;
    std::uint64_t xoff = 0;
    for (const auto& pg : p.pgs) {
        if (pg.configured) {
            reserved += pg.reserved.v;
            xoff += pg.xoff.v;
        }
    }
    return {reserved, xoff};
}

// over_subscribe_ratio (dynamic model, no pool xoff): the shared headroom
// pool is the lossless PGs' xoff / ratio, rounded up (SONiC's buffer
// manager). Needs every port (probed ports: once they are known).
void size_shared_headroom(switch_cfg& cfg) {
    if (!cfg.pool.enabled || cfg.pool.over_subscribe_ratio <= 0 || cfg.ports.empty()) {
        return;
    }
    std::uint64_t xoff = 0;
    for (const auto& p : cfg.ports) {
        xoff += port_reservations(p).second;
    }
    cfg.pool.shared_headroom = bytes{static_cast<std::uint64_t>(std::ceil(double(xoff) / cfg.pool.over_subscribe_ratio))};
}

// The start-up note for a shared headroom pool.
std::string shared_headroom_note(const switch_cfg& cfg) {
    std::uint64_t xoff = 0;
    for (const auto& p : cfg.ports) {
        xoff += port_reservations(p).second;
    }
    std::string from = cfg.pool.over_subscribe_ratio > 0
                           ? "DEFAULT_LOSSLESS_BUFFER_PARAMETER over_subscribe_ratio " +
                                 format_ratio(cfg.pool.over_subscribe_ratio) + ": the lossless PGs' xoff (" +
                                 std::to_string(xoff) + " bytes) / ratio"
                           : "the pool's xoff";
    return "BUFFER_POOL|" + cfg.pool.name + "|xoff: shared headroom pool of " +
           std::to_string(cfg.pool.shared_headroom.v) + " bytes (" + from +
           "): the headroom of every lossless priority group is taken from it, each PG still capped at its "
           "own xoff; the shared part is the pool minus the reservations and this headroom pool";
}

// Every port's reservations must fit the ingress pool (the same sum as
// mmu::validate): size of every PG plus either each lossless PG's xoff
// (headroom reserved per PG) or, with a shared headroom pool, that pool
// once. Returns "" or the reason, starting after "<size> is too small".
std::string pool_fit_problem(const switch_cfg& cfg) {
    const bool shp = cfg.pool.shared_headroom.v > 0;
    const auto port_total = [&](const port_cfg& p) {
        const auto [reserved, xoff] = port_reservations(p);
        return reserved + (shp ? 0 : xoff);
    };
    std::uint64_t total = 0;
    std::vector<std::string> parts;
    if (cfg.ports.empty()) {
        total = port_total(cfg.port_defaults);
        parts.push_back("per probed port " + std::to_string(total));
    } else {
        for (const auto& p : cfg.ports) {
            const std::uint64_t t = port_total(p);
            total += t;
            if (t > 0) {
                parts.push_back(p.name + " " + std::to_string(t));
            }
        }
    }
    if (shp) {
        total += cfg.pool.shared_headroom.v;
        parts.push_back("shared headroom pool " + std::to_string(cfg.pool.shared_headroom.v));
    }
    if (!cfg.pool.enabled || total <= cfg.pool.size.v) {
        return {};
    }
    std::string list;
    for (const auto& x : parts) {
        list += (list.empty() ? "" : ", ") + x;
    }
    return " is too small for the BUFFER_PG reservations: " +
           std::string(shp ? "size of every priority group and the shared headroom pool"
                           : "size + xoff of every priority group") +
           " add up to " + std::to_string(total) + " bytes (" + list + "); accepted: at least " +
           std::to_string(total) + " bytes, or smaller profiles";
}

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

// -------------------------------------------------------------------- loader

struct entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
};

using field_map = std::map<std::string, entry, std::less<>>;

template <std::size_t N>
using named_maps = std::map<std::string, std::array<std::uint8_t, N>, std::less<>>;

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

// A BUFFER_PROFILE as written; resolved per port by BUFFER_PG (xoff: auto
// needs the port's speed and cable length).
struct buffer_profile {
    YAML::Mark mark;            // the profile's key
    std::string pool;           // its BUFFER_POOL
    bool ingress = true;        // the pool's type
    std::optional<bytes> pool_size;  // the pool's size as written (none: computed)
    bool headroom_dynamic = false;   // headroom_type dynamic (xoff_auto too)
    bool default_th = false;         // threshold from DEFAULT_LOSSLESS_BUFFER_PARAMETER
    std::optional<bytes> size;  // required unless xoff: auto
    threshold_mode mode = threshold_mode::dynamic_th;
    int dynamic_th = 0;
    bytes static_th{0};
    bool xoff_auto = false;
    bytes xoff{0};
    std::optional<bytes> xon;
    std::optional<bytes> xon_offset;
};

// One PFC_WD entry's fields.
struct wd_override {
    std::optional<nanos> detection_time;
    std::optional<nanos> restoration_time;
    std::optional<pfc_wd_action> action;
};

struct queue_override {
    std::optional<queue_sched> sched;
    std::optional<wred_cfg> wred;
    std::optional<bytes> max_bytes;
    std::optional<std::uint32_t> max_packets;
};

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

class loader {
public:
    explicit loader(std::string source) : _source(std::move(source)) {}

    switch_cfg load(const YAML::Node& root) {
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

private:
    // ----------------------------------------------------------- reporting

    [[noreturn]] void fail(const YAML::Mark& m, std::string_view path, std::string_view what) const {
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

    static YAML::Mark mark_of(const entry& e) {
        if (e.value.IsDefined() && !e.value.IsNull() && !e.value.Mark().is_null()) {
            return e.value.Mark();
        }
        return e.key_node.Mark();
    }

    [[noreturn]] void fail_value(const entry& e, std::string_view path, std::string_view expected) const {
        fail(mark_of(e), path, "got " + show(e.value) + ", expected " + std::string(expected));
    }

    // ------------------------------------------------------ structure walk

    // The (key, value) pairs of a mapping (an empty value counts as an empty
    // mapping). Keys must be scalars and unique.
    std::vector<entry> entries(const YAML::Node& map, const YAML::Mark& at, std::string_view path) const {
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

    // Entries matching `is_global` first, then the others, each in file order.
    // (Pointers, not a sorted copy: assigning a YAML::Node rewrites the node
    // it refers to, so entries must never be assigned or swapped.)
    template <class Pred>
    static std::vector<const entry*> global_first(const std::vector<entry>& all, Pred is_global) {
        std::vector<const entry*> out;
        for (const auto& e : all) {
            if (is_global(e)) {
                out.push_back(&e);
            }
        }
        for (const auto& e : all) {
            if (!is_global(e)) {
                out.push_back(&e);
            }
        }
        return out;
    }

    // The fields of an entry, checked against the accepted names.
    field_map fields(const entry& owner, const std::string& path, const std::vector<std::string>& accepted,
                     const std::vector<std::string>& sonic_unsupported = {}) const {
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

    std::string scalar(const entry& e, std::string_view path, std::string_view expected) const {
        if (!e.value.IsScalar()) {
            fail_value(e, path, expected);
        }
        return e.value.Scalar();
    }

    std::uint64_t get_uint(const entry& e, std::string_view path, std::uint64_t min, std::uint64_t max,
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

    bits_per_sec get_rate(const entry& e, std::string_view path, bits_per_sec min, bits_per_sec max) const {
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

    nanos get_time(const entry& e, std::string_view path, nanos min, nanos max,
                   std::optional<nanos> bare_unit = std::nullopt) const {
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
    bytes get_bytes(const entry& e, std::string_view path, bytes min, bytes max, bare_number bare,
                    bool plain = false) const {
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
    std::int64_t get_int(const entry& e, std::string_view path, std::int64_t min, std::int64_t max,
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
    static std::optional<double> parse_decimal(std::string_view text) {
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
    double get_fractional_bytes(const entry& e, std::string_view path, std::uint64_t max) const {
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
    double get_cable_length(const entry& e, std::string_view path) const {
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

    std::string get_choice(const entry& e, std::string_view path,
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

    mac_addr get_mac(const entry& e, std::string_view path, bool unicast) const {
        const std::string expected = unicast ? "a unicast MAC address such as \"02:00:00:00:01:00\""
                                             : "a MAC address such as \"02:00:00:00:01:00\"";
        const auto m = parse_mac(scalar(e, path, expected));
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

    const entry* find(const field_map& f, std::string_view name) const {
        const auto it = f.find(name);
        return it == f.end() ? nullptr : &it->second;
    }

    // Index of a PORT name in _cfg.ports, or fail.
    std::size_t port_index(std::string_view name, const YAML::Mark& at, const std::string& path) const {
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
    std::vector<std::size_t> port_list(std::string_view text, const YAML::Mark& at,
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

    // --------------------------------------------------------------- tables

    void load_rocelab(const entry& t) {
        const auto f = fields(t, "ROCELAB",
                              {"mode", "seed", "status_interval", "queue_sample_interval", "tx_ring_size",
                               "rx_ring_size", "mbufs", "mbuf_data_size", "burst", "max_frame", "headroom", "ecn_at",
                               "icmp_errors", "icmp_rate", "neigh_dynamic", "neigh_max", "neigh_reachable_time",
                               "neigh_retrans_time", "neigh_probes", "neigh_gc_time", "neigh_queue"});
        using namespace literals;
        if (const auto* e = find(f, "mode")) {
            _cfg.mode = get_choice(*e, "ROCELAB|mode", {"l2", "l3"}) == "l2" ? fwd_mode::l2 : fwd_mode::l3;
        }
        if (const auto* e = find(f, "seed")) {
            _cfg.seed = get_uint(*e, "ROCELAB|seed", 0, UINT64_MAX, "a whole number");
        }
        if (const auto* e = find(f, "status_interval")) {
            _cfg.status_interval = get_time(*e, "ROCELAB|status_interval", 10_ms, 3600_s);
        }
        if (const auto* e = find(f, "queue_sample_interval")) {
            _cfg.queue_sample_interval = get_time(*e, "ROCELAB|queue_sample_interval", 1_us, 10_s);
        }
        if (const auto* e = find(f, "tx_ring_size")) {
            _cfg.tx_ring_size = static_cast<std::uint16_t>(
                get_uint(*e, "ROCELAB|tx_ring_size", 16, 32768, "a descriptor count"));
        }
        if (const auto* e = find(f, "rx_ring_size")) {
            _cfg.rx_ring_size = static_cast<std::uint16_t>(
                get_uint(*e, "ROCELAB|rx_ring_size", 16, 32768, "a descriptor count"));
        }
        if (const auto* e = find(f, "mbufs")) {
            _cfg.mbufs =
                static_cast<std::uint32_t>(get_uint(*e, "ROCELAB|mbufs", 1024, 16777216, "an mbuf count"));
        }
        if (const auto* e = find(f, "mbuf_data_size")) {
            _cfg.mbuf_data_size = static_cast<std::uint16_t>(
                get_bytes(*e, "ROCELAB|mbuf_data_size", bytes{256}, bytes{65535}, bare_number::rejected).v);
        }
        if (const auto* e = find(f, "burst")) {
            _cfg.burst = static_cast<std::uint16_t>(get_uint(*e, "ROCELAB|burst", 1, 64, "a packet count"));
        }
        if (const auto* e = find(f, "max_frame")) {
            _cfg.max_frame = static_cast<std::uint32_t>(
                get_bytes(*e, "ROCELAB|max_frame", bytes{64}, bytes{16384}, bare_number::rejected).v);
        }
        if (const auto* e = find(f, "headroom")) {
            load_headroom(*e);
        }
        if (const auto* e = find(f, "ecn_at")) {
            _cfg.wred_at_enqueue = get_choice(*e, "ROCELAB|ecn_at", {"dequeue", "enqueue"}) == "enqueue";
        }
        if (const auto* e = find(f, "icmp_errors")) {
            const std::string v = get_choice(*e, "ROCELAB|icmp_errors", {"on", "off", "true", "false"});
            _cfg.icmp_errors = v == "on" || v == "true";
        }
        if (const auto* e = find(f, "icmp_rate")) {
            _cfg.icmp_rate = static_cast<std::uint32_t>(
                get_uint(*e, "ROCELAB|icmp_rate", 1, 1000000, "ICMP errors per second"));
        }
        if (const auto* e = find(f, "neigh_dynamic")) {
            const std::string v = get_choice(*e, "ROCELAB|neigh_dynamic", {"on", "off", "true", "false"});
            _cfg.neigh.dynamic = v == "on" || v == "true";
        }
        if (const auto* e = find(f, "neigh_max")) {
            _cfg.neigh.max = static_cast<std::uint32_t>(
                get_uint(*e, "ROCELAB|neigh_max", 16, 1048576, "neighbour entries"));
        }
        if (const auto* e = find(f, "neigh_reachable_time")) {
            _cfg.neigh.reachable = get_time(*e, "ROCELAB|neigh_reachable_time", 1_s, 86400_s);
        }
        if (const auto* e = find(f, "neigh_retrans_time")) {
            _cfg.neigh.retrans = get_time(*e, "ROCELAB|neigh_retrans_time", 10_ms, 60_s);
        }
        if (const auto* e = find(f, "neigh_probes")) {
            _cfg.neigh.probes = static_cast<std::uint8_t>(get_uint(*e, "ROCELAB|neigh_probes", 1, 30, "requests"));
        }
        if (const auto* e = find(f, "neigh_gc_time")) {
            _cfg.neigh.gc = get_time(*e, "ROCELAB|neigh_gc_time", 1_s, 86400_s);
        }
        if (const auto* e = find(f, "neigh_queue")) {
            _cfg.neigh.queue = static_cast<std::uint8_t>(
                get_uint(*e, "ROCELAB|neigh_queue", 0, 8, "frames per unresolved neighbour"));
        }
    }

    // ROCELAB|headroom: the ASIC constants of the headroom formula (xoff: auto).
    void load_headroom(const entry& t) {
        const std::string path = "ROCELAB|headroom";
        const auto f = fields(t, path,
                              {"cell", "pipeline_latency", "mac_phy_delay", "small_packet_percent",
                               "lossless_mtu", "port_mtu"});
        headroom_asic_cfg& a = _cfg.asic;
        if (const auto* e = find(f, "cell")) {
            a.cell = get_bytes(*e, path + "|cell", bytes{1}, bytes{16384}, bare_number::accepted, true);
        }
        if (const auto* e = find(f, "pipeline_latency")) {
            a.pipeline_latency =
                get_bytes(*e, path + "|pipeline_latency", bytes{0}, bytes{16u << 20}, bare_number::accepted);
        }
        if (const auto* e = find(f, "mac_phy_delay")) {
            a.mac_phy_delay_bytes = get_fractional_bytes(*e, path + "|mac_phy_delay", 16u << 20);
        }
        if (const auto* e = find(f, "small_packet_percent")) {
            const std::string expected = "a percentage 0..100 such as 100 or 50%";
            const auto r =
                parse_percent(scalar(*e, path + "|small_packet_percent", expected), bare_number::accepted);
            if (!r) {
                fail(mark_of(*e), path + "|small_packet_percent", r.error().message + " (accepted 0..100%)");
            }
            if (*r < 0.0 || *r > 100.0) {
                fail(mark_of(*e), path + "|small_packet_percent",
                     quote(e->value.Scalar()) + " is out of range: accepted 0..100%");
            }
            a.small_packet_percent = *r;
        }
        if (const auto* e = find(f, "lossless_mtu")) {
            a.lossless_mtu =
                get_bytes(*e, path + "|lossless_mtu", bytes{64}, bytes{16384}, bare_number::accepted, true);
        }
        if (const auto* e = find(f, "port_mtu")) {
            a.port_mtu =
                get_bytes(*e, path + "|port_mtu", bytes{64}, bytes{16384}, bare_number::accepted, true);
        }
    }

    void load_device_metadata(const entry& t) {
        for (const auto& k : entries(t.value, t.key_node.Mark(), "DEVICE_METADATA")) {
            const std::string path = "DEVICE_METADATA|" + k.key;
            if (k.key != "localhost") {
                fail(k.key_node.Mark(), path,
                     "unknown key; the only key is localhost" + did_you_mean(k.key, {"localhost"}));
            }
            const auto f = fields(k, path, {"mac", "buffer_model"},
                                  {"hostname", "hwsku", "platform", "type", "bgp_asn", "deployment_id"});
            if (const auto* e = find(f, "mac")) {
                _cfg.switch_mac = get_mac(*e, path + "|mac", true);
            }
            if (const auto* e = find(f, "buffer_model")) {
                _cfg.model = get_choice(*e, path + "|buffer_model", {"traditional", "dynamic"}) == "dynamic"
                                 ? buffer_model::dynamic
                                 : buffer_model::traditional;
            }
        }
    }

    void load_switch(const entry& t) {
        for (const auto& k : entries(t.value, t.key_node.Mark(), "SWITCH")) {
            const std::string path = "SWITCH|" + k.key;
            if (k.key != "switch") {
                fail(k.key_node.Mark(), path,
                     "unknown key; the only key is switch" + did_you_mean(k.key, {"switch"}));
            }
            const auto f = fields(k, path, {"fdb_aging_time"},
                                  {"ecmp_hash_seed", "lag_hash_seed", "fdb_unicast_miss_packet_action"});
            if (const auto* e = find(f, "fdb_aging_time")) {
                using namespace literals;
                // SONiC gives this in seconds, so a bare number is accepted.
                _cfg.fdb_aging = get_time(*e, path + "|fdb_aging_time", 1_s, 1000000_s, 1_s);
            }
        }
    }

    void load_ports(const entry& t) {
        std::map<int, std::string> by_id;
        std::map<std::string, std::string> by_device;
        for (const auto& k : entries(t.value, t.key_node.Mark(), "PORT")) {
            const std::string path = "PORT|" + k.key;
            if (k.key.empty() || k.key == "global" || k.key == "*" ||
                k.key.find_first_of("|, \t") != std::string::npos) {
                fail(k.key_node.Mark(), path,
                     "a port name must not be empty, \"global\" or \"*\", and must not contain '|', ',' or "
                     "spaces "
                     "(SONiC style: Ethernet0)");
            }
            const auto f = fields(
                k, path,
                {"device", "port_id", "speed", "mtu", "mac", "trust", "vlan_mode", "vlan", "tx_ring_size"},
                {"lanes", "alias", "index", "fec", "autoneg", "admin_status", "description", "pfc_asym",
                 "tpid", "parent_port"});
            port_cfg p = _cfg.port_defaults;
            p.name = k.key;
            const auto* dev = find(f, "device");
            const auto* id = find(f, "port_id");
            if ((dev == nullptr) == (id == nullptr)) {
                fail(
                    k.key_node.Mark(), path,
                    std::string(dev == nullptr ? "no device given" : "both device and port_id given") +
                        ": give exactly one of device (a DPDK device name such as net_ring0 or 0000:3b:00.0) "
                        "or port_id (a DPDK port id such as 0)");
            }
            if (dev != nullptr) {
                p.device =
                    std::string(trim(scalar(*dev, path + "|device", "a DPDK device name such as net_ring0")));
                if (p.device.empty()) {
                    fail_value(*dev, path + "|device", "a DPDK device name such as net_ring0");
                }
                const auto [it, inserted] = by_device.emplace(p.device, k.key);
                if (!inserted) {
                    fail(mark_of(*dev), path + "|device",
                         quote(p.device) + " is already used by port " + it->second);
                }
            } else {
                p.port_id = static_cast<int>(get_uint(*id, path + "|port_id", 0, 1023, "a DPDK port id"));
                const auto [it, inserted] = by_id.emplace(p.port_id, k.key);
                if (!inserted) {
                    fail(mark_of(*id), path + "|port_id",
                         "port id " + std::to_string(p.port_id) + " is already used by port " + it->second);
                }
            }
            using namespace literals;
            if (const auto* e = find(f, "speed")) {
                p.speed = get_rate(*e, path + "|speed", 1_Mbps, bits_per_sec{1'600'000'000'000});
            }
            if (const auto* e = find(f, "mtu")) {
                // SONiC gives the MTU in bytes, so a bare number is accepted.
                p.mtu = static_cast<std::uint32_t>(
                    get_bytes(*e, path + "|mtu", bytes{68}, bytes{9216}, bare_number::accepted, true).v);
            }
            if (const auto* e = find(f, "mac")) {
                p.mac = get_mac(*e, path + "|mac", true);
            }
            if (const auto* e = find(f, "trust")) {
                p.trust = get_choice(*e, path + "|trust", {"dscp", "pcp"}) == "dscp" ? trust_mode::dscp
                                                                                     : trust_mode::pcp;
            }
            if (const auto* e = find(f, "vlan_mode")) {
                p.vlan = get_choice(*e, path + "|vlan_mode", {"untagged", "tagged"}) == "tagged"
                             ? vlan_mode::tagged
                             : vlan_mode::untagged;
            }
            if (const auto* e = find(f, "vlan")) {
                if (p.vlan != vlan_mode::tagged) {
                    fail(e->key_node.Mark(), path + "|vlan", "a VLAN id is only used with vlan_mode: tagged");
                }
                p.vlan_id = static_cast<std::uint16_t>(get_uint(*e, path + "|vlan", 1, 4094, "a VLAN id"));
            } else if (p.vlan == vlan_mode::tagged) {
                fail(k.key_node.Mark(), path, "vlan_mode: tagged needs a VLAN id: vlan: 1..4094");
            }
            if (const auto* e = find(f, "tx_ring_size")) {
                p.tx_ring_size = static_cast<std::uint16_t>(
                    get_uint(*e, path + "|tx_ring_size", 16, 32768, "a descriptor count"));
            }
            const std::uint32_t l2_header = p.vlan == vlan_mode::tagged ? 18 : 14;
            if (p.mtu + l2_header > _cfg.max_frame) {
                const auto* e = find(f, "mtu");
                fail(e != nullptr ? mark_of(*e) : k.key_node.Mark(), path + "|mtu",
                     "mtu " + std::to_string(p.mtu) + " plus the " + std::to_string(l2_header) +
                         "-byte Ethernet header exceeds ROCELAB|max_frame " + std::to_string(_cfg.max_frame) +
                         "B; lower the mtu or raise max_frame");
            }
            _cfg.ports.push_back(std::move(p));
        }
    }

    // DSCP_TO_TC_MAP and friends: {NAME: {"3": "3", "10-20": "1", default: "0"}}.
    template <std::size_t N>
    void load_map_table(const entry* t, const std::string& table, std::string_view key_noun,
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

    void load_schedulers(const entry* t) {
        _schedulers.clear();
        _schedulers["scheduler.0"] = {sched_type::dwrr, 14};
        _schedulers["scheduler.1"] = {sched_type::dwrr, 15};
        _schedulers["scheduler.strict"] = {sched_type::strict, 0};
        if (t != nullptr) {
            for (const auto& k : entries(t->value, t->key_node.Mark(), "SCHEDULER")) {
                const std::string path = "SCHEDULER|" + k.key;
                const auto f = fields(k, path, {"type", "weight"},
                                      {"meter_type", "cir", "cbs", "pir", "pbs", "priority"});
                const auto* type = find(f, "type");
                if (type == nullptr) {
                    fail(k.key_node.Mark(), path, "type is required: DWRR, WRR or STRICT");
                }
                queue_sched q;
                const std::string ty = get_choice(*type, path + "|type", {"DWRR", "WRR", "STRICT"});
                q.type = ty == "STRICT" ? sched_type::strict : sched_type::dwrr;
                const auto* w = find(f, "weight");
                if (q.type == sched_type::strict) {
                    if (w != nullptr) {
                        fail(w->key_node.Mark(), path + "|weight",
                             "weight is only used with type DWRR or WRR");
                    }
                    q.weight = 0;
                } else {
                    if (w == nullptr) {
                        fail(k.key_node.Mark(), path, "type " + ty + " needs a weight 1..100");
                    }
                    q.weight = static_cast<std::uint32_t>(get_uint(*w, path + "|weight", 1, 100, "a weight"));
                }
                _schedulers[k.key] = q;
            }
        }
        // Default QUEUE bindings, by name, so redefining scheduler.0 changes them.
        scheduler_cfg s = azure_roce_scheduler();
        for (int q = 0; q < num_queues; ++q) {
            const char* name = (q == 3 || q == 4) ? "scheduler.1"
                               : q == 6           ? "scheduler.strict"
                                                  : "scheduler.0";
            s.queues[static_cast<std::size_t>(q)] = _schedulers.at(name);
        }
        _cfg.port_defaults.sched = s;
        for (auto& p : _cfg.ports) {
            p.sched = s;
        }
    }

    template <std::size_t N>
    std::array<std::uint8_t, N> map_ref(const field_map& f, std::string_view field, const std::string& path,
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

    void load_port_qos_map(const entry& t) {
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

    void load_queues(const entry& t) {
        const auto all = entries(t.value, t.key_node.Mark(), "QUEUE");
        const auto order = global_first(all, [](const entry& e) {
            const auto bar = e.key.rfind('|');
            const auto ports = trim(std::string_view(e.key).substr(0, bar == std::string::npos ? 0 : bar));
            return ports == "global" || ports == "*";
        });
        // (port, queue, field) -> key that set it, for non-global keys.
        std::map<std::tuple<std::size_t, int, std::string>, std::string> set_by;
        for (const entry* kp : order) {
            const entry& k = *kp;
            const std::string path = "QUEUE|" + k.key;
            const auto bar = k.key.rfind('|');
            if (bar == std::string::npos) {
                fail(k.key_node.Mark(), path,
                     "a QUEUE key is \"<ports>|<queues>\", such as \"Ethernet0|3\", "
                     "\"Ethernet0,Ethernet4|3-4\" or "
                     "\"global|6\"");
            }
            const auto targets = port_list(std::string_view(k.key).substr(0, bar), k.key_node.Mark(), path);
            const auto queues = parse_number_set(std::string_view(k.key).substr(bar + 1), 7);
            if (!queues || *queues == 0) {
                fail(k.key_node.Mark(), path,
                     "queues " + quote(std::string_view(k.key).substr(bar + 1)) +
                         " are not valid: expected queue numbers 0..7 such as \"3\", \"3-4\" or \"0-2,5\"");
            }
            const auto f = fields(k, path, {"scheduler", "max_bytes", "max_packets", "wred_profile"},
                                  {"buffer_profile"});
            queue_override o;
            if (const auto* e = find(f, "wred_profile")) {
                const std::string fpath = path + "|wred_profile";
                const std::string name = strip_ref(
                    scalar(*e, fpath, "a WRED_PROFILE name such as AZURE_LOSSLESS"), "WRED_PROFILE");
                const auto it = _wred_profiles.find(name);
                if (it == _wred_profiles.end()) {
                    std::vector<std::string> names;
                    for (const auto& [n, v] : _wred_profiles) {
                        names.push_back(n);
                    }
                    fail(mark_of(*e), fpath,
                         "unknown WRED_PROFILE " + quote(name) + "; WRED_PROFILE names are " + join(names) +
                             did_you_mean(name, names));
                }
                o.wred = wred_cfg::from_profile(it->second);
            }
            if (const auto* e = find(f, "scheduler")) {
                const std::string name = std::string(
                    trim(scalar(*e, path + "|scheduler", "a SCHEDULER name such as scheduler.0")));
                const auto it = _schedulers.find(name);
                if (it == _schedulers.end()) {
                    std::vector<std::string> names;
                    for (const auto& [n, v] : _schedulers) {
                        names.push_back(n);
                    }
                    fail(mark_of(*e), path + "|scheduler",
                         "unknown scheduler " + quote(name) + "; SCHEDULER names are " + join(names) +
                             did_you_mean(name, names));
                }
                o.sched = it->second;
            }
            if (const auto* e = find(f, "max_bytes")) {
                o.max_bytes =
                    get_bytes(*e, path + "|max_bytes", bytes{64}, bytes{1ULL << 30}, bare_number::rejected);
            }
            if (const auto* e = find(f, "max_packets")) {
                // Egress queues are linked through the frames (no ring): a
                // queue can hold at most every mbuf of the switch.
                o.max_packets = static_cast<std::uint32_t>(
                    get_uint(*e, path + "|max_packets", 1, _cfg.mbufs,
                             "a packet count (at most ROCELAB|mbufs " + std::to_string(_cfg.mbufs) +
                                 ": a queue cannot hold more frames than there are mbufs)"));
            }
            for (const std::size_t target : targets) {
                for (int q = 0; q < num_queues; ++q) {
                    if ((*queues & (1u << q)) == 0) {
                        continue;
                    }
                    if (o.max_bytes) {
                        _queue_bytes_set.insert({target, q});
                    }
                    if (target != all_ports) {
                        for (const auto& [name, e] : f) {
                            const auto [it, inserted] = set_by.emplace(std::tuple{target, q, name}, k.key);
                            if (!inserted) {
                                fail(e.key_node.Mark(), path + "|" + name,
                                     "queue " + std::to_string(q) + " of port " + _cfg.ports[target].name +
                                         " already gets " + name + " from key " + quote(it->second));
                            }
                        }
                    }
                    const auto apply = [&](port_cfg& p) {
                        const auto qi = static_cast<std::size_t>(q);
                        if (o.sched) {
                            p.sched.queues[qi] = *o.sched;
                        }
                        if (o.max_bytes) {
                            p.limits[qi].max_bytes = *o.max_bytes;
                        }
                        if (o.max_packets) {
                            p.limits[qi].max_packets = *o.max_packets;
                        }
                        if (o.wred) {
                            p.wred[qi] = *o.wred;
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
    }

    // ------------------------------------------------- lossless classes

    static bool is_global_key(std::string_view key) {
        const auto k = trim(key);
        return k == "global" || k == "*";
    }

    // Apply `fn` to the target port, or to port_defaults and every port.
    template <class Fn>
    void for_target(std::size_t target, Fn fn) {
        if (target == all_ports) {
            fn(_cfg.port_defaults, true);
            for (auto& p : _cfg.ports) {
                fn(p, false);
            }
        } else {
            fn(_cfg.ports[target], false);
        }
    }

    // SONiC sometimes writes references as "[BUFFER_PROFILE|name]".
    static std::string strip_ref(std::string_view text, std::string_view table) {
        std::string_view t = trim(text);
        const std::string prefix = "[" + std::string(table) + "|";
        if (t.size() > prefix.size() && t.substr(0, prefix.size()) == prefix && t.back() == ']') {
            t = t.substr(prefix.size(), t.size() - prefix.size() - 1);
        }
        return std::string(trim(t));
    }

    // CABLE_LENGTH: {AZURE: {Ethernet0: 5m, "Ethernet4,Ethernet8": 40m, global: 5m}}.
    void load_cable_length(const entry& t) {
        struct item {
            std::string path;
            const entry* e;
        };
        const auto names = entries(t.value, t.key_node.Mark(), "CABLE_LENGTH");
        std::vector<std::vector<entry>> lists;  // keeps the entries alive; never assigned
        lists.reserve(names.size());
        std::vector<item> order;  // global keys first, then the others, each in file order
        for (const auto& n : names) {
            lists.push_back(entries(n.value, n.key_node.Mark(), "CABLE_LENGTH|" + n.key));
        }
        for (const bool global : {true, false}) {
            for (std::size_t i = 0; i < names.size(); ++i) {
                for (const auto& e : lists[i]) {
                    if (is_global_key(e.key) == global) {
                        order.push_back(item{"CABLE_LENGTH|" + names[i].key + "|" + e.key, &e});
                    }
                }
            }
        }
        std::map<std::size_t, std::string> set_by;
        bool global_seen = false;
        for (const auto& [path, kp] : order) {
            const entry& k = *kp;
            const auto targets = port_list(k.key, k.key_node.Mark(), path);
            if (targets.front() == all_ports) {
                if (global_seen) {
                    fail(k.key_node.Mark(), path, "a global cable length is already given; give only one");
                }
                global_seen = true;
            }
            const double m = get_cable_length(k, path);
            for (const std::size_t target : targets) {
                if (target != all_ports) {
                    const auto [it, inserted] = set_by.emplace(target, path);
                    if (!inserted) {
                        fail(k.key_node.Mark(), path,
                             "port " + _cfg.ports[target].name + " already gets a cable length from " +
                                 it->second);
                    }
                }
                for_target(target, [&](port_cfg& p, bool) { p.cable_length_m = m; });
            }
        }
    }

    // DEFAULT_LOSSLESS_BUFFER_PARAMETER: {AZURE: {default_dynamic_th: "0", over_subscribe_ratio: "2"}}.
    void load_default_lossless(const entry& t) {
        for (const auto& k : entries(t.value, t.key_node.Mark(), "DEFAULT_LOSSLESS_BUFFER_PARAMETER")) {
            const std::string path = "DEFAULT_LOSSLESS_BUFFER_PARAMETER|" + k.key;
            const auto f = fields(k, path, {"default_dynamic_th", "over_subscribe_ratio"});
            if (const auto* e = find(f, "default_dynamic_th")) {
                _cfg.default_dynamic_th = static_cast<int>(
                    get_int(*e, path + "|default_dynamic_th", -8, 8, "an exponent (alpha = 2^dynamic_th)"));
            }
            if (const auto* e = find(f, "over_subscribe_ratio")) {
                const std::string expected = "a ratio 0..1000 such as 2 (0: no shared headroom pool)";
                const auto v = parse_decimal(scalar(*e, path + "|over_subscribe_ratio", expected));
                if (!v) {
                    fail_value(*e, path + "|over_subscribe_ratio", expected);
                }
                if (*v > 1000.0) {
                    fail(mark_of(*e), path + "|over_subscribe_ratio",
                         quote(e->value.Scalar()) + " is out of range: expected " + expected);
                }
                _cfg.over_subscribe_ratio = *v;
            }
            if (_cfg.model != buffer_model::dynamic) {
                _cfg.notes.push_back(path + ": only read with DEVICE_METADATA|localhost|buffer_model dynamic; "
                                            "this file uses the traditional model, so it has no effect");
                _cfg.default_dynamic_th = 0;
                _cfg.over_subscribe_ratio = 0;
            }
        }
    }

    sonic_pool_cfg* find_pool(std::string_view name) {
        for (auto& p : _cfg.pools) {
            if (p.name == name) {
                return &p;
            }
        }
        return nullptr;
    }

    std::vector<std::string> pool_names() const {
        std::vector<std::string> out;
        for (const auto& p : _cfg.pools) {
            out.push_back(p.name);
        }
        return out;
    }

    // BUFFER_POOL: every pool is kept (cfg.pools); the ingress pool named
    // ingress_lossless_pool (else the first ingress pool) is the one the MMU
    // models (cfg.pool), with any other ingress pool's size added to it.
    void load_buffer_pool(const entry& t) {
        constexpr std::uint64_t max_pool = 1ULL << 36;
        std::optional<bytes> cell;
        for (const auto& k : entries(t.value, t.key_node.Mark(), "BUFFER_POOL")) {
            const std::string path = "BUFFER_POOL|" + k.key;
            if (k.key.empty() || k.key.find('|') != std::string::npos) {
                fail(k.key_node.Mark(), path, "a pool name must not be empty or contain '|'");
            }
            const auto f = fields(k, path, {"type", "mode", "size", "xoff", "cell", "percentage"});
            const auto* type = find(f, "type");
            if (type == nullptr) {
                fail(k.key_node.Mark(), path, "type is required: ingress or egress");
            }
            sonic_pool_cfg sp;
            sp.name = k.key;
            sp.ingress = get_choice(*type, path + "|type", {"ingress", "egress"}) == "ingress";
            if (const auto* e = find(f, "mode")) {
                sp.mode = get_choice(*e, path + "|mode", {"dynamic", "static"}) == "dynamic"
                              ? threshold_mode::dynamic_th
                              : threshold_mode::static_th;
            }
            if (const auto* e = find(f, "size")) {
                sp.size = get_bytes(*e, path + "|size", bytes{1024}, bytes{max_pool}, bare_number::accepted, true);
                _pool_size_texts[k.key] = show(e->value);
                _pool_marks[k.key + "|size"] = mark_of(*e);
            } else if (_cfg.model != buffer_model::dynamic) {
                fail(k.key_node.Mark(), path,
                     "size is required: the pool's bytes, such as 12766208 or 12MiB (only "
                     "DEVICE_METADATA|localhost|buffer_model dynamic computes pool sizes)");
            }
            if (const auto* e = find(f, "xoff")) {
                if (!sp.ingress) {
                    fail(e->key_node.Mark(), path + "|xoff",
                         "xoff (the shared headroom pool) is only used on an ingress pool");
                }
                sp.xoff = get_bytes(*e, path + "|xoff", bytes{0}, bytes{max_pool}, bare_number::accepted, true);
            }
            if (const auto* e = find(f, "cell")) {
                if (!sp.ingress) {
                    fail(e->key_node.Mark(), path + "|cell", "cell is only used on an ingress pool");
                }
                cell = get_bytes(*e, path + "|cell", bytes{0}, bytes{16384}, bare_number::accepted, true);
            }
            if (const auto* e = find(f, "percentage")) {
                get_uint(*e, path + "|percentage", 1, 100, "a percentage");
                _cfg.notes.push_back(path + "|percentage: not modelled (SONiC's dynamic pool sizing); the "
                                            "pool size is " +
                                     std::string(sp.size ? "the size given" : "computed as below"));
            }
            _pool_marks[k.key] = k.key_node.Mark();
            _cfg.pools.push_back(sp);
        }
        // The modelled ingress pool.
        const sonic_pool_cfg* main = nullptr;
        for (const auto& p : _cfg.pools) {
            if (p.ingress && (main == nullptr || p.name == "ingress_lossless_pool")) {
                main = &p;
            }
        }
        if (main == nullptr) {
            return;  // egress pools only: BUFFER_PG reports the missing ingress pool
        }
        _pool_name = main->name;
        _cfg.pool.enabled = true;
        _cfg.pool.name = main->name;
        _cfg.pool.mode = main->mode;
        if (cell) {
            _cfg.pool.cell = *cell;
        }
        _pool_size_mark = _pool_marks[main->name];
        std::uint64_t size = 0;
        if (main->size) {
            size = main->size->v;
            _pool_size_text = _pool_size_texts[main->name];
            _pool_size_mark = _pool_marks[main->name + "|size"];
        } else {
            // Dynamic model: SONiC's buffer manager sizes the pool as the
            // ASIC's memory minus the reservations; the MMU subtracts the
            // reservations itself, so the pool is the memory. On Mellanox
            // the egress lossless pool spans the whole memory.
            const sonic_pool_cfg* egress_lossless = nullptr;
            for (const auto& p : _cfg.pools) {
                if (!p.ingress && p.size && (egress_lossless == nullptr || p.name == "egress_lossless_pool")) {
                    egress_lossless = &p;
                }
            }
            if (egress_lossless != nullptr) {
                size = egress_lossless->size->v;
                _cfg.notes.push_back("BUFFER_POOL|" + main->name + "|size: not given (buffer_model dynamic): the "
                                     "pool is the ASIC's buffer, taken as " + egress_lossless->name + " size " +
                                     std::to_string(size) + " bytes, minus the reservations (as SONiC's buffer "
                                     "manager computes it)");
            } else {
                size = default_buffer_pool().size.v;
                _cfg.notes.push_back("BUFFER_POOL|" + main->name + "|size: not given (buffer_model dynamic) and no "
                                     "egress pool gives the ASIC's buffer size: the pool is rocelab's default " +
                                     std::to_string(size) + " bytes, minus the reservations");
            }
            _pool_size_text = std::to_string(size) + " bytes (computed)";
        }
        for (const auto& p : _cfg.pools) {
            if (p.ingress && &p != main) {
                const std::uint64_t add = p.size ? p.size->v : 0;
                size += add;
                _cfg.notes.push_back("BUFFER_POOL|" + p.name + ": rocelab models one ingress pool: the priority "
                                     "groups of its profiles are accounted in " + main->name +
                                     (add > 0 ? ", which gets its " + std::to_string(add) + " bytes" : std::string()));
            }
        }
        if (main->xoff.v > 0) {
            // Shared headroom pool, carved out of the pool's size: Broadcom's
            // sizes include it (TH3: size 66394076 with xoff 27200352 on a
            // 64 MB ASIC); Mellanox's may not, which then models xoff bytes
            // less buffer than the ASIC has (never more).
            _cfg.pool.shared_headroom = main->xoff;
        }
        _cfg.pool.size = bytes{size};
    }

    // The pool a profile names (plain or "[BUFFER_POOL|name]"), or fail.
    const sonic_pool_cfg& profile_pool(const entry& e, const std::string& fpath) {
        const std::string name =
            strip_ref(scalar(e, fpath, "a BUFFER_POOL name such as ingress_lossless_pool"), "BUFFER_POOL");
        if (const auto* p = find_pool(name)) {
            return *p;
        }
        if (_cfg.pools.empty()) {
            fail(mark_of(e), fpath,
                 "unknown pool " + quote(name) + ": there is no BUFFER_POOL table; add BUFFER_POOL: {" + name +
                     ": {size: ..., type: ingress, mode: dynamic}}");
        }
        const auto names = pool_names();
        fail(mark_of(e), fpath,
             "unknown pool " + quote(name) + "; BUFFER_POOL names are " + join(names) + did_you_mean(name, names));
    }

    void load_buffer_profiles(const entry& t) {
        constexpr std::uint64_t max_bytes = 1ULL << 36;
        for (const auto& k : entries(t.value, t.key_node.Mark(), "BUFFER_PROFILE")) {
            const std::string path = "BUFFER_PROFILE|" + k.key;
            if (k.key.empty() || k.key.find('|') != std::string::npos || k.key == "NULL") {
                fail(k.key_node.Mark(), path, "a profile name must not be empty, NULL or contain '|'");
            }
            const auto f = fields(
                k, path, {"pool", "size", "dynamic_th", "static_th", "xoff", "xon", "xon_offset", "headroom_type"},
                {"packet_discard_action", "congesting_probability"});
            buffer_profile b;
            b.mark = k.key_node.Mark();
            if (const auto* e = find(f, "headroom_type")) {
                b.headroom_dynamic =
                    get_choice(*e, path + "|headroom_type", {"static", "dynamic"}) == "dynamic";
                if (b.headroom_dynamic && _cfg.model != buffer_model::dynamic) {
                    fail(mark_of(*e), path + "|headroom_type",
                         "headroom_type dynamic needs DEVICE_METADATA|localhost|buffer_model dynamic (the "
                         "traditional model takes xoff and size in bytes, or rocelab's xoff: auto)");
                }
            }
            const auto* pool = find(f, "pool");
            if (pool != nullptr) {
                const sonic_pool_cfg& sp = profile_pool(*pool, path + "|pool");
                b.pool = sp.name;
                b.ingress = sp.ingress;
                b.pool_size = sp.size;
            } else if (b.headroom_dynamic && _cfg.pool.enabled) {
                b.pool = _pool_name;  // SONiC: handled by the buffer manager in the lossless pool
            } else {
                fail(k.key_node.Mark(), path,
                     "pool is required: the BUFFER_POOL name, such as ingress_lossless_pool" +
                         std::string(b.headroom_dynamic ? " (there is no ingress pool to take it from)" : ""));
            }
            if (b.headroom_dynamic && !b.ingress) {
                fail(mark_of(*pool), path + "|pool", "headroom_type dynamic is for ingress (lossless) profiles; " +
                                                         b.pool + " is an egress pool");
            }
            const std::uint64_t cap = b.pool_size ? b.pool_size->v : max_bytes;
            const std::string cap_text = b.pool_size ? " (the pool size)" : "";
            const auto* dyn = find(f, "dynamic_th");
            const auto* stat = find(f, "static_th");
            const std::string th_expected =
                "give exactly one of dynamic_th (-8..8, alpha = 2^dynamic_th) or static_th (bytes)";
            if (dyn != nullptr && stat != nullptr) {
                fail(stat->key_node.Mark(), path + "|static_th",
                     "both dynamic_th and static_th are given: " + th_expected);
            }
            if (dyn == nullptr && stat == nullptr && !b.headroom_dynamic) {
                fail(k.key_node.Mark(), path, "no threshold given: " + th_expected);
            }
            if (dyn != nullptr) {
                b.mode = threshold_mode::dynamic_th;
                b.dynamic_th = static_cast<int>(
                    get_int(*dyn, path + "|dynamic_th", -8, 8, "an exponent (alpha = 2^dynamic_th)"));
            } else if (stat != nullptr) {
                // Either threshold on either pool mode: SONiC's own
                // ingress_lossy_profile has static_th on a dynamic pool.
                b.mode = threshold_mode::static_th;
                b.static_th = get_bytes(*stat, path + "|static_th", bytes{1}, bytes{max_bytes},
                                        bare_number::accepted, true);
            } else {
                b.mode = threshold_mode::dynamic_th;
                b.dynamic_th = _cfg.default_dynamic_th;
                b.default_th = true;
            }
            if (const auto* e = find(f, "xoff")) {
                if (!b.ingress) {
                    fail(e->key_node.Mark(), path + "|xoff",
                         "xoff is only used by an ingress (priority group) profile; " + b.pool + " is an egress pool");
                }
                if (b.headroom_dynamic) {
                    fail(e->key_node.Mark(), path + "|xoff",
                         "headroom_type dynamic computes xoff, xon and size; remove them or the headroom_type");
                }
                if (e->value.IsScalar() && lower(trim(e->value.Scalar())) == "auto") {
                    b.xoff_auto = true;
                } else {
                    b.xoff = get_bytes(*e, path + "|xoff", bytes{0}, bytes{cap}, bare_number::accepted, true);
                }
            }
            if (b.headroom_dynamic) {
                b.xoff_auto = true;
            }
            const bool lossless = b.xoff_auto || b.xoff.v > 0;
            if (const auto* e = find(f, "size")) {
                if (b.headroom_dynamic) {
                    fail(e->key_node.Mark(), path + "|size",
                         "headroom_type dynamic computes xoff, xon and size; remove them or the headroom_type");
                }
                b.size = get_bytes(*e, path + "|size", bytes{0}, bytes{cap}, bare_number::accepted, true);
            } else if (!b.xoff_auto) {
                fail(k.key_node.Mark(), path,
                     "size is required: the bytes reserved for each priority group or queue using this profile, "
                     "0.." + std::to_string(cap) + " bytes" + cap_text + "; only a profile with xoff: auto or "
                     "headroom_type dynamic may leave it out");
            }
            for (const char* name : {"xon", "xon_offset"}) {
                const auto* e = find(f, name);
                if (e == nullptr) {
                    continue;
                }
                const std::string fpath = path + "|" + name;
                if (!lossless) {
                    fail(e->key_node.Mark(), fpath,
                         std::string(name) +
                             " is only used by a lossless profile: give xoff in bytes (> 0) or "
                             "xoff: auto, or remove " +
                             name);
                }
                if (b.xoff_auto && std::string_view(name) == "xon") {
                    fail(e->key_node.Mark(), fpath,
                         b.headroom_dynamic ? std::string("headroom_type dynamic computes xoff, xon and size; remove "
                                                          "them or the headroom_type")
                                            : std::string("xon is computed with xoff: auto (ROCELAB headroom "
                                                          "pipeline_latency); remove it or give xoff in bytes"));
                }
                bytes max{cap};
                if (b.mode == threshold_mode::static_th) {
                    max = b.static_th;  // XON must be reachable below the XOFF threshold
                }
                const bytes v = get_bytes(*e, fpath, bytes{0}, max, bare_number::accepted, true);
                (std::string_view(name) == "xon" ? b.xon : b.xon_offset) = v;
            }
            if (b.xon && b.xon_offset) {
                const auto* e = find(f, "xon_offset");
                fail(e->key_node.Mark(), path + "|xon_offset",
                     "both xon and xon_offset are given: give one (xon: XON below that many shared bytes; "
                     "xon_offset: XON below threshold - xon_offset)");
            }
            _profiles[k.key] = b;
        }
    }

    // A profile resolved for one port. xoff: auto computes xoff/xon (and
    // reserved when no size is given) now if the port has a PORT speed, else
    // leaves the PG pending for resolve_port_speeds() (probed ports, or a port
    // whose speed comes from the driver).
    pg_buffer_cfg resolve_profile(const buffer_profile& b, const std::string& name, const port_cfg& p,
                                  const entry& at, const std::string& path) const {
        pg_buffer_cfg pg;
        pg.configured = true;
        pg.mode = b.mode;
        pg.dynamic_th = b.dynamic_th;
        pg.static_th = b.static_th;
        pg.xoff = b.xoff;
        pg.xon = b.xon;
        pg.xon_offset = b.xon_offset;
        pg.reserved = b.size.value_or(bytes{0});
        pg.xoff_auto = b.xoff_auto;
        pg.reserved_auto = b.xoff_auto && !b.size;
        if (!b.xoff_auto || !p.speed) {
            return pg;
        }
        const std::string problem = apply_auto_headroom(pg, p, _cfg.asic);
        if (!problem.empty()) {
            fail(mark_of(at), path, "profile " + name + ": " + problem);
        }
        return pg;
    }

    // SONiC's dynamic model: a lossless PG whose headroom the buffer manager
    // computes from the port's speed and cable length ("NULL" profile).
    buffer_profile computed_lossless_profile() const {
        buffer_profile b;
        b.pool = _pool_name;
        b.mode = threshold_mode::dynamic_th;
        b.dynamic_th = _cfg.default_dynamic_th;
        b.xoff_auto = true;
        b.headroom_dynamic = true;
        return b;
    }

    // The port-keyed buffer tables: "<ports>|<numbers>" -> (ports, bit mask).
    std::pair<std::vector<std::size_t>, std::uint8_t> buffer_key(const entry& k, const std::string& path,
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
    const std::pair<const std::string, buffer_profile>* profile_ref(const entry& k, const std::string& path,
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

    // BUFFER_PG: {"Ethernet0|3-4": {profile: pg_lossless_100000_5m_profile}, "global|0": {profile: lossy}}.
    // "NULL": traditional model: no buffer for the PG (SONiC removes it);
    // dynamic model: a lossless PG whose headroom is computed.
    void load_buffer_pg(const entry& t) {
        const auto all = entries(t.value, t.key_node.Mark(), "BUFFER_PG");
        const auto order = global_first(all, [](const entry& e) {
            const auto bar = e.key.rfind('|');
            return is_global_key(std::string_view(e.key).substr(0, bar == std::string::npos ? 0 : bar));
        });
        const bool dynamic = _cfg.model == buffer_model::dynamic;
        const buffer_profile computed = computed_lossless_profile();
        std::map<std::pair<std::size_t, int>, std::string> set_by;
        for (const entry* kp : order) {
            const entry& k = *kp;
            const std::string path = "BUFFER_PG|" + k.key;
            const auto [targets, pgs] =
                buffer_key(k, path, "priority groups", "\"Ethernet0|3-4\", \"Ethernet0,Ethernet4|0\" or \"global|3-4\"");
            const auto* ref = profile_ref(k, path, dynamic);
            const std::string fpath = path + "|profile";
            if (ref != nullptr && !ref->second.ingress) {
                fail(k.key_node.Mark(), fpath,
                     "profile " + ref->first + " is in the egress pool " + ref->second.pool +
                         ": BUFFER_PG takes ingress profiles");
            }
            for (const std::size_t target : targets) {
                for (int pg = 0; pg < num_pgs; ++pg) {
                    if ((pgs & (1u << pg)) == 0) {
                        continue;
                    }
                    if (target != all_ports) {
                        const auto [sit, inserted] = set_by.emplace(std::pair{target, pg}, k.key);
                        if (!inserted) {
                            fail(k.key_node.Mark(), path,
                                 "priority group " + std::to_string(pg) + " of port " +
                                     _cfg.ports[target].name + " already gets a profile from key " +
                                     quote(sit->second));
                        }
                    }
                    for_target(target, [&](port_cfg& p, bool) {
                        auto& slot = p.pgs[static_cast<std::size_t>(pg)];
                        if (ref != nullptr) {
                            slot = resolve_profile(ref->second, ref->first, p, k, fpath);
                        } else if (dynamic) {
                            slot = resolve_profile(computed, "NULL (computed)", p, k, fpath);
                        } else {
                            slot = pg_buffer_cfg{};  // SONiC: the PG's buffer is removed
                        }
                    });
                    if (target != all_ports) {
                        _pg_given.insert({target, pg});
                    }
                }
            }
        }
        if (dynamic) {
            add_dynamic_lossless_pgs();
        }
    }

    // Dynamic model: SONiC's buffer manager creates the lossless PGs of the
    // PFC-enabled priorities itself; a port whose BUFFER_PG does not give
    // them gets a computed one (headroom from speed and cable length).
    void add_dynamic_lossless_pgs() {
        const buffer_profile computed = computed_lossless_profile();
        entry none{"", YAML::Node(), YAML::Node()};
        std::vector<std::string> added;
        for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
            port_cfg& p = _cfg.ports[i];
            std::string pgs;
            for (int pg = 0; pg < num_pgs; ++pg) {
                if ((p.pfc_enable & (1u << pg)) == 0 || _pg_given.count({i, pg}) != 0 ||
                    p.pgs[static_cast<std::size_t>(pg)].configured) {
                    continue;
                }
                p.pgs[static_cast<std::size_t>(pg)] =
                    resolve_profile(computed, "computed", p, none, "BUFFER_PG|" + p.name + "|" + std::to_string(pg));
                if (!pgs.empty()) {
                    pgs += ',';
                }
                pgs += std::to_string(pg);
            }
            if (!pgs.empty()) {
                added.push_back(p.name + "|" + pgs);
            }
        }
        if (!added.empty()) {
            _cfg.notes.push_back("BUFFER_PG: buffer_model dynamic: lossless priority groups of the PFC-enabled "
                                 "priorities with no BUFFER_PG entry get a computed headroom (as SONiC's buffer "
                                 "manager): " + join(added));
        }
    }

    // BUFFER_QUEUE: {"Ethernet0|3-4": {profile: egress_lossless_profile}, "Ethernet0|0-2": {profile: q_lossy_profile}}.
    void load_buffer_queue(const entry& t) {
        const auto all = entries(t.value, t.key_node.Mark(), "BUFFER_QUEUE");
        const auto order = global_first(all, [](const entry& e) {
            const auto bar = e.key.rfind('|');
            return is_global_key(std::string_view(e.key).substr(0, bar == std::string::npos ? 0 : bar));
        });
        std::map<std::pair<std::size_t, int>, std::string> set_by;
        for (const entry* kp : order) {
            const entry& k = *kp;
            const std::string path = "BUFFER_QUEUE|" + k.key;
            const auto [targets, queues] =
                buffer_key(k, path, "queues", "\"Ethernet0|3-4\", \"Ethernet0,Ethernet4|0-2\" or \"global|5-6\"");
            const auto* ref = profile_ref(k, path, false);
            if (ref != nullptr && ref->second.ingress) {
                fail(k.key_node.Mark(), path + "|profile",
                     "profile " + ref->first + " is in the ingress pool " + ref->second.pool +
                         ": BUFFER_QUEUE takes egress profiles");
            }
            queue_buffer_cfg qb;
            if (ref != nullptr) {
                const buffer_profile& b = ref->second;
                qb.configured = true;
                qb.profile = ref->first;
                qb.pool = b.pool;
                qb.size = b.size.value_or(bytes{0});
                qb.mode = b.mode;
                qb.dynamic_th = b.dynamic_th;
                qb.static_th = b.static_th;
            }
            for (const std::size_t target : targets) {
                for (int q = 0; q < num_queues; ++q) {
                    if ((queues & (1u << q)) == 0) {
                        continue;
                    }
                    if (target != all_ports) {
                        const auto [sit, inserted] = set_by.emplace(std::pair{target, q}, k.key);
                        if (!inserted) {
                            fail(k.key_node.Mark(), path,
                                 "queue " + std::to_string(q) + " of port " + _cfg.ports[target].name +
                                     " already gets a profile from key " + quote(sit->second));
                        }
                    }
                    for_target(target, [&](port_cfg& p, bool) {
                        p.egress_buffers[static_cast<std::size_t>(q)] = qb;
                    });
                }
            }
        }
    }

    // After PORT_QOS_MAP, QUEUE and BUFFER_QUEUE: a lossy queue whose
    // egress profile has a static_th gets QUEUE max_bytes = size + static_th
    // (unless QUEUE gives max_bytes); a lossless queue whose egress profile
    // could hold less than the ingress pool may admit for it is warned
    // about (one line per profile, naming the queues).
    void apply_egress_buffers() {
        std::map<std::string, std::vector<std::pair<std::string, std::uint8_t>>> warned;  // profile -> (port, queues)
        std::map<std::string, std::string> why;
        std::vector<std::string> dynamic_lossy;
        const auto lossless_queues = [](const port_cfg& p) {
            std::uint8_t m = 0;
            for (int prio = 0; prio < 8; ++prio) {
                if ((p.pfc_enable & (1u << prio)) != 0) {
                    m = static_cast<std::uint8_t>(m | (1u << p.maps.pfc_prio_to_queue[static_cast<std::size_t>(prio)]));
                }
            }
            return m;
        };
        const auto visit = [&](port_cfg& p, std::size_t index) {
            const std::uint8_t lossless = lossless_queues(p);
            for (int q = 0; q < num_queues; ++q) {
                const auto& qb = p.egress_buffers[static_cast<std::size_t>(q)];
                if (!qb.configured) {
                    continue;
                }
                const std::string name = (p.name.empty() ? std::string("global") : p.name) + "|" + std::to_string(q);
                if ((lossless & (1u << q)) == 0) {
                    if (qb.mode == threshold_mode::static_th) {
                        if (_queue_bytes_set.count({index, q}) == 0 && _queue_bytes_set.count({all_ports, q}) == 0) {
                            p.limits[static_cast<std::size_t>(q)].max_bytes =
                                bytes{std::min<std::uint64_t>(qb.size.v + qb.static_th.v, 1ULL << 30)};
                        }
                    } else if (std::find(dynamic_lossy.begin(), dynamic_lossy.end(), qb.profile) == dynamic_lossy.end()) {
                        dynamic_lossy.push_back(qb.profile);
                    }
                    continue;
                }
                if (!_cfg.pool.enabled) {
                    continue;
                }
                const std::uint64_t ingress = _cfg.pool.size.v;
                std::uint64_t egress = 0;
                std::string how;
                if (qb.mode == threshold_mode::static_th) {
                    egress = qb.size.v + qb.static_th.v;
                    how = "size + static_th = " + std::to_string(egress) + " bytes";
                } else {
                    const sonic_pool_cfg* sp = find_pool(qb.pool);
                    if (sp == nullptr || !sp->size) {
                        continue;  // a computed egress pool: nothing to compare
                    }
                    // One queue alone in the pool settles where its use
                    // equals alpha x (pool - use): use = pool x alpha / (1 + alpha).
                    // dynamic_th 7 and above is SAI's "infinity": the whole pool.
                    if (qb.dynamic_th >= 7) {
                        egress = qb.size.v + sp->size->v;
                        how = "size + " + sp->name + " " + std::to_string(sp->size->v) + " (dynamic_th " +
                              std::to_string(qb.dynamic_th) + ": no limit but the pool) = " + std::to_string(egress) +
                              " bytes";
                    } else {
                        const double alpha = std::ldexp(1.0, qb.dynamic_th);
                        egress = qb.size.v + static_cast<std::uint64_t>(double(sp->size->v) * alpha / (1.0 + alpha));
                        how = "size + " + sp->name + " " + std::to_string(sp->size->v) + " x alpha/(1+alpha) with "
                              "dynamic_th " + std::to_string(qb.dynamic_th) + " = " + std::to_string(egress) + " bytes";
                    }
                }
                if (egress < ingress) {
                    auto& list = warned[qb.profile];
                    const std::string port_name = p.name.empty() ? std::string("every probed port") : p.name;
                    if (list.empty() || list.back().first != port_name) {
                        list.push_back({port_name, 0});
                    }
                    list.back().second = static_cast<std::uint8_t>(list.back().second | (1u << q));
                    why[qb.profile] = how;
                }
            }
        };
        if (_cfg.ports.empty()) {
            visit(_cfg.port_defaults, all_ports);
        }
        for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
            visit(_cfg.ports[i], i);
        }
        for (const auto& [profile, ports] : warned) {
            // Ports with the same queues together: "queues 3-4 of Ethernet0, Ethernet4, ..., Ethernet124 (32 ports)".
            std::vector<std::string> parts;
            std::vector<bool> done(ports.size(), false);
            for (std::size_t i = 0; i < ports.size(); ++i) {
                if (done[i]) {
                    continue;
                }
                std::vector<std::string> names;
                for (std::size_t j = i; j < ports.size(); ++j) {
                    if (!done[j] && ports[j].second == ports[i].second) {
                        names.push_back(ports[j].first);
                        done[j] = true;
                    }
                }
                std::string qs;
                for (int q = 0; q < num_queues; ++q) {
                    if ((ports[i].second & (1u << q)) != 0) {
                        if (!qs.empty()) {
                            qs += ',';
                        }
                        qs += std::to_string(q);
                    }
                }
                std::string list;
                if (names.size() <= 4) {
                    list = join(names);
                } else {
                    list = join({names[0], names[1], names[2], "..."});
                    list += ", ";
                    list += names.back();
                    list += " (";
                    list += std::to_string(names.size());
                    list += " ports)";
                }
                std::string part = "queues ";
                part += qs;
                part += " of ";
                part += list;
                parts.push_back(part);
            }
            _cfg.notes.push_back("warning: BUFFER_QUEUE: lossless " + join(parts, "; ") + " use egress profile " +
                                 profile + ", which holds at most " + why[profile] + ", less than the " +
                                 std::to_string(_cfg.pool.size.v) + " bytes ingress pool " + _cfg.pool.name +
                                 " may admit for one queue: a switch enforcing it could drop frames the ingress "
                                 "admitted (rocelab never tail-drops a lossless queue)");
        }
        for (const auto& profile : dynamic_lossy) {
            _cfg.notes.push_back("BUFFER_PROFILE|" + profile + "|dynamic_th: egress dynamic thresholds are not "
                                 "modelled: its lossy queues keep their QUEUE max_bytes/max_packets");
        }
    }

    // Dynamic model with over_subscribe_ratio and no pool xoff: the shared
    // headroom pool is the lossless PGs' xoff / ratio (carved out of the pool).
    void apply_over_subscription() {
        if (_cfg.model == buffer_model::dynamic && _cfg.over_subscribe_ratio > 0 && _cfg.pool.enabled) {
            const sonic_pool_cfg* main = find_pool(_pool_name);
            if (main != nullptr && main->xoff.v == 0) {
                _cfg.pool.over_subscribe_ratio = _cfg.over_subscribe_ratio;
                size_shared_headroom(_cfg);
            }
        }
    }

    // Every port's reserved + xoff bytes must fit the ingress pool (pending
    // xoff: auto PGs count once resolve_port_speeds() has computed them).
    void check_pool_fit() const {
        const std::string problem = pool_fit_problem(_cfg);
        if (!problem.empty()) {
            fail(_pool_size_mark, "BUFFER_POOL|" + _pool_name + "|size", _pool_size_text + problem);
        }
    }

    // The built-in buffers (no BUFFER_* table): compute xoff: auto for the
    // ports that PORT gives a speed (CABLE_LENGTH and ROCELAB headroom are
    // loaded by now) and check that they fit the built-in pool.
    void resolve_default_buffers() {
        for (auto& p : _cfg.ports) {
            if (!p.speed) {
                continue;
            }
            for (auto& pg : p.pgs) {
                if (pg.configured && pg.xoff_auto) {
                    const std::string problem = apply_auto_headroom(pg, p, _cfg.asic);
                    if (!problem.empty()) {
                        fail(YAML::Mark::null_mark(), "PORT|" + p.name, problem);
                    }
                }
            }
        }
        const std::string problem = pool_fit_problem(_cfg);
        if (!problem.empty()) {
            fail(YAML::Mark::null_mark(), "BUFFER_POOL|" + _cfg.pool.name + "|size",
                 format_bytes(_cfg.pool.size) + " (the built-in default pool)" + problem +
                     "; give BUFFER_POOL, BUFFER_PROFILE and BUFFER_PG tables to size the buffers");
        }
    }

    // WRED_PROFILE: {AZURE_LOSSLESS: {wred_green_enable: "true", green_min_threshold: "1048576", ...}}.
    // AZURE_LOSSLESS is built in (SONiC's default); the file may redefine it.
    void load_wred_profiles(const entry* t) {
        _wred_profiles.clear();
        _wred_profiles["AZURE_LOSSLESS"] = azure_lossless_wred_profile();
        if (t == nullptr) {
            return;
        }
        constexpr std::uint64_t max_threshold = 1ULL << 32;
        const std::vector<std::string> colours = {"green", "yellow", "red"};
        std::vector<std::string> accepted = {"wred_green_enable", "wred_yellow_enable", "wred_red_enable", "ecn"};
        for (const auto& c : colours) {
            accepted.push_back(c + "_min_threshold");
            accepted.push_back(c + "_max_threshold");
            accepted.push_back(c + "_drop_probability");
        }
        std::vector<std::string> ecn_names;
        for (const auto n : ecn_mode_names) {
            ecn_names.emplace_back(n);
        }
        for (const auto& k : entries(t->value, t->key_node.Mark(), "WRED_PROFILE")) {
            const std::string path = "WRED_PROFILE|" + k.key;
            if (k.key.empty() || k.key.find('|') != std::string::npos) {
                fail(k.key_node.Mark(), path, "a profile name must not be empty or contain '|'");
            }
            const auto f = fields(k, path, accepted,
                                  {"ecn_green_min_threshold", "ecn_green_max_threshold", "ecn_green_mark_probability",
                                   "ecn_yellow_min_threshold", "ecn_yellow_max_threshold",
                                   "ecn_yellow_mark_probability", "ecn_red_min_threshold", "ecn_red_max_threshold",
                                   "ecn_red_mark_probability", "wred_weight"});
            wred_profile_cfg w;
            w.name = k.key;
            if (const auto* e = find(f, "ecn")) {
                w.ecn = *parse_ecn_mode(get_choice(*e, path + "|ecn", ecn_names));
            }
            for (std::size_t c = 0; c < colours.size(); ++c) {
                const std::string& col = colours[c];
                bool* enable = c == 0 ? &w.wred_green_enable : c == 1 ? &w.wred_yellow_enable : &w.wred_red_enable;
                bytes* lo = c == 0 ? &w.green_min_threshold : c == 1 ? &w.yellow_min_threshold : &w.red_min_threshold;
                bytes* hi = c == 0 ? &w.green_max_threshold : c == 1 ? &w.yellow_max_threshold : &w.red_max_threshold;
                std::uint8_t* prob = c == 0   ? &w.green_drop_probability
                                     : c == 1 ? &w.yellow_drop_probability
                                              : &w.red_drop_probability;
                const bool marks = c == 0 ? ecn_marks_green(w.ecn) : c == 1 ? ecn_marks_yellow(w.ecn) : ecn_marks_red(w.ecn);
                if (const auto* e = find(f, "wred_" + col + "_enable")) {
                    *enable = get_choice(*e, path + "|wred_" + col + "_enable", {"true", "false"}) == "true";
                }
                const auto* emin = find(f, col + "_min_threshold");
                const auto* emax = find(f, col + "_max_threshold");
                if (emin != nullptr) {
                    *lo = get_bytes(*emin, path + "|" + col + "_min_threshold", bytes{0}, bytes{max_threshold},
                                    bare_number::accepted, true);
                }
                if (emax != nullptr) {
                    const std::string mpath = path + "|" + col + "_max_threshold";
                    *hi = get_bytes(*emax, mpath, bytes{0}, bytes{max_threshold}, bare_number::accepted, true);
                    if (emin != nullptr && *hi < *lo) {
                        fail(mark_of(*emax), mpath,
                             quote(emax->value.Scalar()) + " is below " + col + "_min_threshold " +
                                 std::to_string(lo->v) + ": accepted " + std::to_string(lo->v) + ".." +
                                 std::to_string(max_threshold) + " bytes (max_threshold >= min_threshold)");
                    }
                }
                if (const auto* e = find(f, col + "_drop_probability")) {
                    *prob = static_cast<std::uint8_t>(
                        get_uint(*e, path + "|" + col + "_drop_probability", 0, 100, "a percentage"));
                }
                // Green is what RoCE uses: its thresholds must be written when
                // green is dropped or marked. Yellow/red are checked but unused.
                if (c == 0 && (*enable || marks) && (emin == nullptr || emax == nullptr)) {
                    fail(k.key_node.Mark(), path,
                         col + "_min_threshold and " + col + "_max_threshold (bytes) are required when " +
                             (*enable ? "wred_" + col + "_enable is true" : "ecn marks " + col) +
                             "; missing: " +
                             (emin == nullptr && emax == nullptr ? col + "_min_threshold, " + col + "_max_threshold"
                              : emin == nullptr                  ? col + "_min_threshold"
                                                                 : col + "_max_threshold"));
                }
            }
            _wred_profiles[k.key] = w;
        }
    }

    // PFC_WD: {Ethernet0: {detection_time: 200, restoration_time: 200, action: drop}, GLOBAL: {POLL_INTERVAL:
    // 200}}.
    void load_pfc_wd(const entry& t) {
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

    void load_interfaces(const entry& t) {
        std::vector<std::pair<ip_prefix, std::string>> used;  // address -> key that set it
        for (const auto& k : entries(t.value, t.key_node.Mark(), "INTERFACE")) {
            const std::string path = "INTERFACE|" + k.key;
            fields(k, path, {}, {"vrf_name", "scope", "family", "nat_zone", "mpls"});
            const auto bar = k.key.find('|');
            const std::size_t port =
                port_index(trim(std::string_view(k.key).substr(0, bar)), k.key_node.Mark(), path);
            if (bar == std::string::npos) {
                continue;
            }  // SONiC's bare "Ethernet0" entry: nothing to set
            const std::string_view text = trim(std::string_view(k.key).substr(bar + 1));
            const auto p = parse_prefix(text);
            if (!p) {
                fail(k.key_node.Mark(), path,
                     "address " + quote(text) +
                         " is not valid: expected an address with its prefix length, such as "
                         "\"Ethernet0|10.0.0.1/31\" or \"Ethernet0|fc00::1/126\"");
            }
            for (const auto& [a, by] : used) {
                if (a.v6 == p->v6 && a.addr == p->addr) {
                    fail(k.key_node.Mark(), path,
                         "address " + to_string(*p, false) + " is already assigned by key " + quote(by));
                }
            }
            used.emplace_back(*p, k.key);
            _cfg.ports[port].addresses.push_back(*p);
        }
    }

    // Port whose INTERFACE subnet holds `addr`, or all_ports if none.
    std::size_t on_link_port(const ip_prefix& addr) const {
        for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
            for (const auto& a : _cfg.ports[i].addresses) {
                if (contains(a, addr)) {
                    return i;
                }
            }
        }
        return all_ports;
    }

    std::string subnets_of(const port_cfg& p) const {
        std::vector<std::string> s;
        for (const auto& a : p.addresses) {
            s.push_back(to_string(a));
        }
        return s.empty() ? "it has no INTERFACE address" : "its subnets are " + join(s);
    }

    void load_routes(const entry& t) {
        for (const auto& k : entries(t.value, t.key_node.Mark(), "ROUTE")) {
            const std::string path = "ROUTE|" + k.key;
            const auto prefix = parse_prefix(trim(k.key));
            if (!prefix) {
                fail(k.key_node.Mark(), path,
                     "prefix " + quote(k.key) +
                         " is not valid: expected a prefix such as \"10.1.0.0/16\", \"0.0.0.0/0\" "
                         "or \"fc00:1::/64\"");
            }
            if (network_of(*prefix).addr != prefix->addr) {
                fail(k.key_node.Mark(), path,
                     "prefix " + quote(k.key) + " has host bits set; did you mean " +
                         to_string(network_of(*prefix)) + "?");
            }
            for (const auto& r : _cfg.routes) {
                if (same_prefix(r.prefix, *prefix)) {
                    fail(k.key_node.Mark(), path, "route " + to_string(*prefix) + " is given twice");
                }
            }
            const auto f =
                fields(k, path, {"nexthop", "ifname"}, {"distance", "blackhole", "nexthop-vrf", "vrf_name"});
            const auto* nh = find(f, "nexthop");
            if (nh == nullptr) {
                fail(k.key_node.Mark(), path,
                     "nexthop is required: a comma-separated list such as \"10.0.0.0,10.0.0.2\"");
            }
            const std::string nh_expected =
                "a comma-separated list of next-hop addresses such as \"10.0.0.0,10.0.0.2\"";
            // The split views point into these strings, which must outlive them.
            const std::string hop_text = scalar(*nh, path + "|nexthop", nh_expected);
            const auto hops = split(hop_text, ',');
            std::string ifname_text;
            std::vector<std::string_view> ifnames;
            const auto* ifn = find(f, "ifname");
            if (ifn != nullptr) {
                ifname_text = scalar(*ifn, path + "|ifname",
                                     "a comma-separated list of ports such as \"Ethernet0,Ethernet4\"");
                ifnames = split(ifname_text, ',');
                if (ifnames.size() != hops.size()) {
                    fail(mark_of(*ifn), path + "|ifname",
                         "ifname lists " + std::to_string(ifnames.size()) + " port(s) but nexthop lists " +
                             std::to_string(hops.size()) +
                             " address(es); the lists pair up one to one and must have the same length");
                }
            }
            route_cfg r;
            r.prefix = *prefix;
            for (std::size_t i = 0; i < hops.size(); ++i) {
                const auto addr = parse_ip(hops[i]);
                if (!addr) {
                    fail(mark_of(*nh), path + "|nexthop",
                         "next hop " + quote(hops[i]) + " is not valid: expected " + nh_expected);
                }
                if (addr->v6 != prefix->v6) {
                    fail(mark_of(*nh), path + "|nexthop",
                         "next hop " + quote(hops[i]) + " is " + family_name(addr->v6) +
                             " but the prefix is " + family_name(prefix->v6));
                }
                std::size_t port = all_ports;
                if (ifn != nullptr) {
                    port = port_index(ifnames[i], mark_of(*ifn), path + "|ifname");
                    bool on_link = false;
                    for (const auto& a : _cfg.ports[port].addresses) {
                        on_link = on_link || contains(a, *addr);
                    }
                    if (!on_link) {
                        fail(mark_of(*nh), path + "|nexthop",
                             "next hop " + quote(hops[i]) + " is not on a subnet of " +
                                 _cfg.ports[port].name + " (" + subnets_of(_cfg.ports[port]) +
                                 "); add an INTERFACE address or fix the ifname");
                    }
                } else {
                    port = on_link_port(*addr);
                    if (port == all_ports) {
                        fail(mark_of(*nh), path + "|nexthop",
                             "next hop " + quote(hops[i]) +
                                 " is not on any INTERFACE subnet; add an INTERFACE address "
                                 "or give ifname");
                    }
                }
                for (const auto& h : r.nexthops) {
                    if (h.addr.addr == addr->addr && h.ifname == _cfg.ports[port].name) {
                        fail(mark_of(*nh), path + "|nexthop",
                             "next hop " + quote(hops[i]) + " is listed twice");
                    }
                }
                r.nexthops.push_back(nexthop_cfg{*addr, _cfg.ports[port].name});
            }
            _cfg.routes.push_back(std::move(r));
        }
    }

    void load_neighbors(const entry& t) {
        for (const auto& k : entries(t.value, t.key_node.Mark(), "NEIGH")) {
            const std::string path = "NEIGH|" + k.key;
            const auto bar = k.key.find('|');
            if (bar == std::string::npos) {
                fail(k.key_node.Mark(), path,
                     "a NEIGH key is \"<port>|<address>\", such as \"Ethernet0|10.0.0.0\"");
            }
            const std::size_t port =
                port_index(trim(std::string_view(k.key).substr(0, bar)), k.key_node.Mark(), path);
            const std::string_view text = trim(std::string_view(k.key).substr(bar + 1));
            const auto addr = parse_ip(text);
            if (!addr) {
                fail(k.key_node.Mark(), path,
                     "address " + quote(text) +
                         " is not valid: expected an IPv4 or IPv6 address without prefix length, "
                         "such as \"Ethernet0|10.0.0.0\"");
            }
            const auto f = fields(k, path, {"neigh", "family"});
            const auto* mac = find(f, "neigh");
            if (mac == nullptr) {
                fail(k.key_node.Mark(), path, "neigh is required: the neighbour's MAC address");
            }
            neigh_cfg n;
            n.ifname = _cfg.ports[port].name;
            n.addr = *addr;
            n.mac = get_mac(*mac, path + "|neigh", true);
            if (const auto* fam = find(f, "family")) {
                const bool v6 = get_choice(*fam, path + "|family", {"IPv4", "IPv6"}) == "IPv6";
                if (v6 != addr->v6) {
                    fail(mark_of(*fam), path + "|family",
                         "family " + family_name(v6) + " does not match the address " + quote(text) +
                             ", which is " + family_name(addr->v6));
                }
            }
            bool on_link = false;
            for (const auto& a : _cfg.ports[port].addresses) {
                on_link = on_link || contains(a, *addr);
            }
            if (!on_link) {
                fail(k.key_node.Mark(), path,
                     "address " + quote(text) + " is not on a subnet of " + n.ifname + " (" +
                         subnets_of(_cfg.ports[port]) + ")");
            }
            for (const auto& o : _cfg.neighbors) {
                if (o.ifname == n.ifname && o.addr.addr == n.addr.addr && o.addr.v6 == n.addr.v6) {
                    fail(k.key_node.Mark(), path,
                         "neighbour " + to_string(n.addr, false) + " on " + n.ifname + " is given twice");
                }
            }
            _cfg.neighbors.push_back(n);
        }
    }

    std::string _source;
    switch_cfg _cfg;
    named_maps<64> _dscp_maps;
    named_maps<8> _dot1p_maps;
    named_maps<8> _tc_queue_maps;
    named_maps<8> _tc_pg_maps;
    named_maps<8> _pfc_queue_maps;
    std::map<std::string, queue_sched, std::less<>> _schedulers;
    std::map<std::string, buffer_profile, std::less<>> _profiles;
    std::map<std::string, wred_profile_cfg, std::less<>> _wred_profiles;
    bool _file_buffers = false;   // the file gives BUFFER_* tables: no built-in buffers
    std::string _pool_name;       // the BUFFER_POOL key
    YAML::Mark _pool_size_mark;   // where its size is, for the pool-fit error
    std::string _pool_size_text;  // its size as written
    std::map<std::string, YAML::Mark> _pool_marks;   // BUFFER_POOL keys (and "<key>|size")
    std::map<std::string, std::string> _pool_size_texts;  // sizes as written
    std::set<std::pair<std::size_t, int>> _pg_given;  // (port, PG) with a BUFFER_PG entry
    std::set<std::pair<std::size_t, int>> _queue_bytes_set;  // (port or all_ports, queue) with QUEUE max_bytes
};

result<switch_cfg> load_text(std::string_view text, const std::string& source, const load_options& opt) {
    YAML::Node root;
    const bool json = starts_as_json_object(text);
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        std::string msg = source;
        if (!e.mark.is_null()) {
            msg += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
        }
        return config_error{msg + (json ? ": malformed JSON/YAML: " : ": malformed YAML: ") + e.msg};
    }
    if (!detail::is_config_db(text, root)) {
        return loader(source).load(root);
    }
    // A SONiC config_db.json: rewritten into the tables read below (config_db.cpp).
    detail::config_db_notes notes;
    if (std::string err = detail::normalise_config_db(root, source, opt.ports, notes); !err.empty()) {
        return config_error{std::move(err)};
    }
    switch_cfg cfg = loader(source).load(root);
    cfg.config_db = true;
    cfg.ignored_tables = std::move(notes.ignored_tables);
    cfg.ignored_fields = std::move(notes.ignored_fields);
    return cfg;
}

}  // namespace

switch_cfg default_switch_cfg() {
    switch_cfg c;
    c.source = "<built-in defaults>";
    c.port_defaults = default_port_cfg();
    c.pool = default_buffer_pool();
    return c;
}

std::string resolve_port_speeds(switch_cfg& cfg, const std::vector<std::pair<int, bits_per_sec>>& driver_speeds) {
    try {
        for (const auto& [i, speed] : driver_speeds) {
            if (i < 0 || static_cast<std::size_t>(i) >= cfg.ports.size()) {
                return cfg.source + ": resolve_port_speeds: port index " + std::to_string(i) + " is not in 0.." +
                       std::to_string(cfg.ports.size()) + " (cfg.ports)";
            }
            port_cfg& p = cfg.ports[static_cast<std::size_t>(i)];
            if (!p.speed && speed.v > 0) {
                p.speed = speed;
            }
        }
        for (auto& p : cfg.ports) {
            for (std::size_t g = 0; g < p.pgs.size(); ++g) {
                pg_buffer_cfg& pg = p.pgs[g];
                if (!pg.configured || !pg.xoff_auto) {
                    continue;
                }
                if (!p.speed) {
                    return cfg.source + ": PORT|" + p.name + "|speed: priority group " + std::to_string(g) +
                           " has xoff: auto, which computes the headroom from the port speed, but neither PORT nor "
                           "the driver gives a speed; set PORT|" + p.name + "|speed (such as 100Gbps)";
                }
                const std::string problem = apply_auto_headroom(pg, p, cfg.asic);
                if (!problem.empty()) {
                    return cfg.source + ": BUFFER_PG|" + p.name + "|" + std::to_string(g) + ": " + problem;
                }
            }
        }
        size_shared_headroom(cfg);
        const std::string problem = pool_fit_problem(cfg);
        if (!problem.empty()) {
            return cfg.source + ": BUFFER_POOL|" + cfg.pool.name + "|size: " + std::to_string(cfg.pool.size.v) +
                   problem;
        }
        return {};
    } catch (const std::exception& e) {
        return cfg.source + ": resolve_port_speeds: " + e.what();
    }
}

namespace {

std::string th_text(threshold_mode m, int dynamic_th, bytes static_th) {
    return m == threshold_mode::dynamic_th ? "dynamic_th " + std::to_string(dynamic_th)
                                           : "static_th " + std::to_string(static_th.v);
}

std::string pg_text(const pg_buffer_cfg& pg) {
    std::string t = pg.lossless() ? "lossless" : "lossy";
    if (pg.headroom_pending()) {
        return t + " xoff auto (pending: the driver's speed), " + th_text(pg.mode, pg.dynamic_th, pg.static_th);
    }
    t += " reserved " + std::to_string(pg.reserved.v) + ", " + th_text(pg.mode, pg.dynamic_th, pg.static_th);
    if (pg.lossless()) {
        t += ", xoff " + std::to_string(pg.xoff.v);
        if (pg.xon) {
            t += ", xon " + std::to_string(pg.xon->v);
        }
        if (pg.xon_offset) {
            t += ", xon_offset " + std::to_string(pg.xon_offset->v);
        }
        if (pg.xoff_auto) {
            t += " (computed)";
        }
    }
    return t;
}

// "0-2: text; 3-4: text" from 8 per-index texts ("" = left out).
std::string ranges(const std::array<std::string, 8>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size();) {
        std::size_t j = i;
        while (j + 1 < items.size() && items[j + 1] == items[i]) {
            ++j;
        }
        if (!items[i].empty()) {
            out += (out.empty() ? "" : "; ") + std::to_string(i) + (j > i ? "-" + std::to_string(j) : "") + ": " +
                   items[i];
        }
        i = j + 1;
    }
    return out;
}

std::string port_text(const switch_cfg& cfg, const port_cfg& p) {
    std::string t = p.speed ? format_rate(*p.speed) : std::string("speed from the driver");
    t += ", mtu " + std::to_string(p.mtu);
    std::ostringstream cable;
    cable << p.cable_length_m;
    t += ", cable " + cable.str() + "m";
    std::string pfc;
    for (int i = 0; i < 8; ++i) {
        if ((p.pfc_enable & (1u << i)) != 0) {
            pfc += (pfc.empty() ? "" : ",") + std::to_string(i);
        }
    }
    t += ", pfc_enable " + (pfc.empty() ? std::string("none") : pfc);
    if (cfg.pool.enabled) {
        std::array<std::string, 8> pgs;
        for (std::size_t g = 0; g < 8; ++g) {
            if (p.pgs[g].configured) {
                pgs[g] = pg_text(p.pgs[g]);
            }
        }
        const std::string r = ranges(pgs);
        t += "\n      PG " + (r.empty() ? std::string("none configured (pool-limited, lossy)") : r);
    }
    std::array<std::string, 8> qs;
    for (std::size_t q = 0; q < 8; ++q) {
        const auto& b = p.egress_buffers[q];
        std::string x = b.configured ? b.profile + " (" + b.pool + ", size " + std::to_string(b.size.v) + ", " +
                                           th_text(b.mode, b.dynamic_th, b.static_th) + ") "
                                     : std::string();
        bool lossless = false;
        for (std::size_t prio = 0; prio < 8; ++prio) {
            lossless = lossless || (((p.pfc_enable >> prio) & 1u) != 0 && p.maps.pfc_prio_to_queue[prio] == q);
        }
        x += lossless ? std::string("lossless, never tail-dropped")
                      : "max " + std::to_string(p.limits[q].max_bytes.v) + " bytes/" +
                            std::to_string(p.limits[q].max_packets) + " packets";
        qs[q] = x;
    }
    t += "\n      queue " + ranges(qs);
    return t;
}

}  // namespace

std::string describe_switch_cfg(const switch_cfg& cfg) {
    std::ostringstream o;
    o << "effective configuration of " << cfg.source << ":\n";
    o << "  mode " << (cfg.mode == fwd_mode::l2 ? "l2" : "l3") << ", buffer_model "
      << (cfg.model == buffer_model::dynamic ? "dynamic" : "traditional");
    if (cfg.model == buffer_model::dynamic) {
        o << " (default_dynamic_th " << cfg.default_dynamic_th << ", over_subscribe_ratio "
          << format_ratio(cfg.over_subscribe_ratio) << ")";
    }
    o << "\n";
    for (const auto& sp : cfg.pools) {
        o << "  BUFFER_POOL " << sp.name << ": " << (sp.ingress ? "ingress" : "egress") << ", "
          << (sp.mode == threshold_mode::dynamic_th ? "dynamic" : "static") << ", size "
          << (sp.size ? std::to_string(sp.size->v) : std::string("computed"));
        if (sp.xoff.v > 0) {
            o << ", xoff " << sp.xoff.v;
        }
        o << "\n";
    }
    if (cfg.pool.enabled) {
        std::uint64_t reserved = 0;
        std::uint64_t xoff = 0;
        for (const auto& p : cfg.ports) {
            const auto [r, x] = port_reservations(p);
            reserved += r;
            xoff += x;
        }
        const bool shp = cfg.pool.shared_headroom.v > 0;
        const std::uint64_t taken = reserved + (shp ? cfg.pool.shared_headroom.v : xoff);
        o << "  ingress buffer (MMU): pool " << cfg.pool.name << " " << cfg.pool.size.v << " bytes";
        if (cfg.pool.cell.v > 0) {
            o << " in " << cfg.pool.cell.v << "-byte cells";
        }
        o << "; reserved " << reserved << ", headroom "
          << (shp ? "shared pool " + std::to_string(cfg.pool.shared_headroom.v) + " (PGs' xoff " +
                        std::to_string(xoff) + ")"
                  : "per PG " + std::to_string(xoff));
        if (!cfg.ports.empty()) {
            o << "; shared " << (cfg.pool.size.v > taken ? cfg.pool.size.v - taken : 0);
        }
        o << "\n";
    } else {
        o << "  ingress buffer: accounting only (no ingress BUFFER_POOL)\n";
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    const auto add = [&](const std::string& name, const std::string& text) {
        for (auto& g : groups) {
            if (g.first == text) {
                g.second.push_back(name);
                return;
            }
        }
        groups.push_back({text, {name}});
    };
    if (cfg.ports.empty()) {
        add("every probed port", port_text(cfg, cfg.port_defaults));
    }
    for (const auto& p : cfg.ports) {
        add(p.name, port_text(cfg, p));
    }
    for (const auto& [text, names] : groups) {
        std::string list;
        for (const auto& n : names) {
            list += (list.empty() ? "" : ",") + n;
        }
        o << "  " << list << (names.size() > 1 ? " (" + std::to_string(names.size()) + " ports)" : "") << ": "
          << text << "\n";
    }
    for (const auto& n : cfg.notes) {
        o << "  note: " << n << "\n";
    }
    return o.str();
}

port_cfg probed_port_cfg(const switch_cfg& cfg, int port_id) {
    port_cfg p = cfg.port_defaults;
    p.name = "Ethernet" + std::to_string(port_id);
    p.port_id = port_id;
    return p;
}

const std::vector<std::string>& detail::switch_tables() { return known_tables; }

result<switch_cfg> load_switch_cfg_from_string(std::string_view yaml, std::string source_name) noexcept {
    return load_switch_cfg_from_string(yaml, std::move(source_name), load_options{});
}

result<switch_cfg> load_switch_cfg_from_string(std::string_view yaml, std::string source_name,
                                               const load_options& opt) noexcept {
    try {
        return load_text(yaml, source_name, opt);
    } catch (const load_failure& f) {
        return config_error{f.message};
    } catch (const YAML::Exception& e) {
        return config_error{source_name + ": " + e.what()};
    } catch (const std::exception& e) {
        return config_error{source_name + ": cannot load the configuration: " + e.what()};
    } catch (...) {
        return config_error{source_name + ": cannot load the configuration"};
    }
}

result<switch_cfg> detail::switch_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept {
    try {
        return loader(source).load(root);
    } catch (const load_failure& f) {
        return config_error{f.message};
    } catch (const YAML::Exception& e) {
        return config_error{source + ": " + e.what()};
    } catch (const std::exception& e) {
        return config_error{source + ": cannot load the configuration: " + e.what()};
    }
}

result<switch_cfg> load_switch_cfg(const std::string& path) noexcept { return load_switch_cfg(path, load_options{}); }

result<switch_cfg> load_switch_cfg(const std::string& path, const load_options& opt) noexcept {
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            return config_error{path + ": cannot open the file: " + std::strerror(errno)};
        }
        std::ostringstream text;
        text << in.rdbuf();
        if (in.bad()) {
            return config_error{path + ": cannot read the file: " + std::strerror(errno)};
        }
        return load_switch_cfg_from_string(text.str(), path, opt);
    } catch (...) {
        return config_error{path + ": cannot read the file"};
    }
}

}  // namespace rocelab
