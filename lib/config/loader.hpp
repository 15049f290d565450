// loader.hpp - the switch configuration loader (private to lib/config).
//
// One `loader` walks a parsed YAML tree table by table, in a fixed order
// (loader.cpp: ROCELAB first, as its mode and max_frame are needed to check
// the rest), fills a private switch_cfg and returns it only when every table
// has validated. Each table's loading code is in lib/config/tables/<table>.cpp
// (the loader's load_<table> members, defined there); the structure walk,
// the typed getters and the helpers several tables share are in loader.cpp.
//
// Inside the loader a problem is reported by throwing `load_failure`; the
// public functions (switch_config.cpp) catch it and turn it into a
// config_error, so nothing is half-applied and nothing escapes lib/config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/schema.hpp"
#include "config/switch_cfg.hpp"
#include "config/switch_config.hpp"
#include "config/text.hpp"
#include "config/units_parse.hpp"
#include "qos/headroom.hpp"

namespace rocelab::detail {

// Internal only: never leaves lib/config.
struct load_failure {
    std::string message;
};

constexpr std::size_t all_ports = SIZE_MAX;  // "global" target: port_defaults and every port

// ------------------------------------------------------------ text helpers

std::string lower(std::string_view s);

// "; did you mean X?" when one name is close (case-insensitive, <= 1/3 of the length).
std::string did_you_mean(std::string_view given, const std::vector<std::string>& names);

// How a YAML value is shown in a message: "\"100G\"", "a list", "an empty value".
std::string show(const YAML::Node& n);

// ------------------------------------------------------------ address helpers

std::string family_name(bool v6);

// "10.0.0.1" or "fc00::1" (no prefix length) -> /32 or /128.
std::optional<ip_prefix> parse_ip(std::string_view text);

// "10.0.0.1/31" or "fc00::/64". The length is required.
std::optional<ip_prefix> parse_prefix(std::string_view text);

// network_of, contains and to_string(ip_prefix) are fwd/route_cfg.hpp's.
bool same_prefix(const ip_prefix& a, const ip_prefix& b);

// ------------------------------------------------ buffer helpers (switch_config.cpp)

// xoff: auto for one PG of a port whose speed is known: fills xoff, xon and
// (no size given) reserved. Returns "" or why it cannot (static_th < xon).
// Shared by the loader (PORT gives the speed) and resolve_port_speeds().
std::string apply_auto_headroom(pg_buffer_cfg& pg, const port_cfg& p, const headroom_asic_cfg& asic);

// Sum over the configured PGs of one port: reserved, and xoff of the lossless ones.
std::pair<std::uint64_t, std::uint64_t> port_reservations(const port_cfg& p);

// over_subscribe_ratio (dynamic model, no pool xoff): the shared headroom
// pool is the lossless PGs' xoff / ratio, rounded up (SONiC's buffer
// manager). Needs every port (probed ports: once they are known).
void size_shared_headroom(switch_cfg& cfg);

// The start-up note for a shared headroom pool.
std::string shared_headroom_note(const switch_cfg& cfg);

// Every port's reservations must fit the ingress pool (the same sum as
// mmu::validate): size of every PG plus either each lossless PG's xoff
// (headroom reserved per PG) or, with a shared headroom pool, that pool
// once. Returns "" or the reason, starting after "<size> is too small".
std::string pool_fit_problem(const switch_cfg& cfg);

// -------------------------------------------------------------------- loader

// A key and its value, as found in a mapping.
struct entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
    std::string path;  // "PORT|Ethernet0|speed": where it is, for messages
};

using field_map = std::map<std::string, entry, std::less<>>;

template <std::size_t N>
using named_maps = std::map<std::string, std::array<std::uint8_t, N>, std::less<>>;

// An override read once from an entry, applied to each port it names: `to`
// takes the value when the entry gave one.
template <class T, class U>
void set_if(T& to, const std::optional<U>& v) {
    if (v) {
        to = *v;
    }
}

// A BUFFER_PROFILE as written; resolved per port by BUFFER_PG (xoff: auto
// needs the port's speed and cable length).
struct buffer_profile {
    YAML::Mark mark;                 // the profile's key
    std::string pool;                // its BUFFER_POOL
    bool ingress = true;             // the pool's type
    std::optional<bytes> pool_size;  // the pool's size as written (none: computed)
    bool headroom_dynamic = false;   // headroom_type dynamic (xoff_auto too)
    bool default_th = false;         // threshold from DEFAULT_LOSSLESS_BUFFER_PARAMETER
    std::optional<bytes> size;       // required unless xoff: auto
    // Its thresholds, xoff, xon and xon_offset (or xoff_auto) as a priority
    // group takes them (a queue takes the thresholds); `reserved` and
    // `configured` are the PG's own (resolve_profile).
    pg_buffer_cfg pg;
};

class loader {
public:
    explicit loader(std::string source) : _source(std::move(source)) {}

    switch_cfg load(const YAML::Node& root);

private:
    // ----------------------------------------------------------- reporting (loader.cpp)

    [[noreturn]] void fail(const YAML::Mark& m, std::string_view path, std::string_view what) const;
    static YAML::Mark mark_of(const entry& e);
    // "got <value>, expected <expected>" at e.path.
    [[noreturn]] void fail_value(const entry& e, std::string_view expected) const;

    // ------------------------------------------------------ structure walk (loader.cpp)

    // The (key, value) pairs of a mapping (an empty value counts as an empty
    // mapping), each with its path (path|key). Keys must be scalars and unique.
    std::vector<entry> entries(const YAML::Node& map, const YAML::Mark& at, std::string_view path) const;

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

    // The entries of an entry's value (a mapping), at its path.
    std::vector<entry> entries(const entry& owner) const {
        return entries(owner.value, owner.key_node.Mark(), owner.path);
    }

    // The fields of an entry, checked against the table's descriptor: an
    // unknown field, or a SONiC field the table refuses, is an error naming
    // the accepted fields.
    field_map fields(const entry& owner, const table_spec& t) const;
    const entry* find(const field_map& f, const field_spec& s) const;
    // The entry of field `s`, which entry k must give: else fails at k with `missing`.
    const entry& required(const entry& k, const field_map& f, const field_spec& s,
                          std::string_view missing) const;
    // A by-name table's key (a pool, a profile): not empty and no '|' (nor
    // NULL, SONiC's "no profile", when `null_refused`); `what`: "a pool name".
    void check_entry_name(const entry& k, std::string_view what, bool null_refused = false) const;
    // A table with one fixed key (t.only_key: DEVICE_METADATA|localhost):
    // `fn` gets that key's checked fields (fields()); any other key is an
    // error.
    template <class Fn>
    void with_only_key(const entry& owner, const table_spec& t, Fn fn) const {
        for (const auto& k : entries(owner)) {
            check_only_key(k, t);
            fn(fields(k, t));
        }
    }
    void check_only_key(const entry& k, const table_spec& t) const;

    // ---------------------------------------------- typed getters (loader.cpp)
    //
    // Each takes the field's descriptor (config/schema.hpp): its range,
    // unit, bare-number rule and noun, so the range is written once, in the
    // schema. Errors name e.path ("PORT|Ethernet0|speed") and the range.

    // The value's text; fails with "got <value>, expected <expected>" if it is not a scalar.
    std::string scalar(const entry& e, std::string_view expected) const;
    std::uint64_t get_uint(const entry& e, const field_spec& f) const;
    // With a tighter upper bound than the schema's, and its own wording (QUEUE max_packets).
    std::uint64_t get_uint(const entry& e, const field_spec& f, std::uint64_t hi,
                           std::string_view what) const;
    std::int64_t get_int(const entry& e, const field_spec& f) const;
    bits_per_sec get_rate(const entry& e, const field_spec& f) const;
    nanos get_time(const entry& e, const field_spec& f) const;
    // hi: a tighter upper bound than the schema's (a profile's pool size).
    bytes get_bytes(const entry& e, const field_spec& f,
                    std::optional<std::uint64_t> hi = std::nullopt) const;
    // Bytes that may be fractional (a model constant such as mac_phy_delay
    // 819.2): a bare decimal number of bytes, or a size with a unit (0.8KiB is
    // not exact, so write 819.2).
    double get_fraction_bytes(const entry& e, const field_spec& f) const;
    double get_percent(const entry& e, const field_spec& f) const;
    double get_ratio(const entry& e, const field_spec& f) const;
    // A cable length: "5m", "2.5m", "40m", "10km" (SONiC writes "5m"), in metres.
    double get_length(const entry& e, const field_spec& f) const;
    // One of f.choices (case-insensitive), as the schema spells it.
    std::string get_choice(const entry& e, const field_spec& f) const;
    // on/off (true/false): true for "on" or "true".
    bool get_flag(const entry& e, const field_spec& f) const;
    // A unicast MAC address.
    mac_addr get_mac(const entry& e, const field_spec& f) const;
    // "3,4", "3-4" or "" (none) -> bit mask of 0..f.hi.
    std::uint8_t get_number_set(const entry& e, const field_spec& f) const;
    // Trimmed text (a name, a list): fails if the value is not a scalar.
    std::string get_text(const entry& e, const field_spec& f) const;
    // The name a reference gives ("[TABLE|name]" stripped when f.bracketed);
    // the caller looks it up and words the "unknown" error.
    std::string get_ref(const entry& e, const field_spec& f) const;

    // The field's value as a T, by the getter its kind calls for: nanos
    // (time), bits_per_sec (rate), bytes, bool (flag), mac_addr, double
    // (fraction_bytes, percent, ratio, length) or a whole number (uint,
    // integer, number_set, or the byte count of a bytes field).
    template <class T>
    T get(const entry& e, const field_spec& s) const {
        if constexpr (std::is_same_v<T, nanos>) {
            return get_time(e, s);
        } else if constexpr (std::is_same_v<T, bits_per_sec>) {
            return get_rate(e, s);
        } else if constexpr (std::is_same_v<T, bytes>) {
            return get_bytes(e, s);
        } else if constexpr (std::is_same_v<T, bool>) {
            return get_flag(e, s);
        } else if constexpr (std::is_same_v<T, mac_addr>) {
            return get_mac(e, s);
        } else if constexpr (std::is_same_v<T, double>) {
            switch (s.kind) {
                case field_kind::fraction_bytes:
                    return get_fraction_bytes(e, s);
                case field_kind::percent:
                    return get_percent(e, s);
                case field_kind::ratio:
                    return get_ratio(e, s);
                default:
                    return get_length(e, s);
            }
        } else {
            static_assert(std::is_integral_v<T>, "no getter for this type");
            switch (s.kind) {
                case field_kind::integer:
                    return static_cast<T>(get_int(e, s));
                case field_kind::number_set:
                    return static_cast<T>(get_number_set(e, s));
                case field_kind::bytes:
                    return static_cast<T>(get_bytes(e, s).v);
                default:
                    return static_cast<T>(get_uint(e, s));
            }
        }
    }

    // When the entry gives field `s`: its value into `out` (get<T>), and true.
    template <class T>
    bool read(const field_map& f, const field_spec& s, T& out) const {
        const entry* e = find(f, s);
        if (e != nullptr) {
            out = get<T>(*e, s);
        }
        return e != nullptr;
    }
    template <class T>
    bool read(const field_map& f, const field_spec& s, std::optional<T>& out) const {
        const entry* e = find(f, s);
        if (e != nullptr) {
            out = get<T>(*e, s);
        }
        return e != nullptr;
    }

    // Index of a PORT name in _cfg.ports, or fail.
    std::size_t port_index(std::string_view name, const YAML::Mark& at, const std::string& path) const;
    // A "<port>|<address>" key (INTERFACE, NEIGH) split at `bar`: the port's
    // index (port_index) and the trimmed text after the bar ("" without one).
    std::pair<std::size_t, std::string_view> port_and_address(const entry& k, std::size_t bar) const;
    // Fails at key k: "address <text> is not valid: expected <expected>".
    [[noreturn]] void fail_address(const entry& k, std::string_view text, std::string_view expected) const;
    // "Ethernet0,Ethernet4" -> indexes; "global" / "*" -> {all_ports}.
    std::vector<std::size_t> port_list(std::string_view text, const YAML::Mark& at,
                                       const std::string& path) const;
    static bool is_global_key(std::string_view key);
    // The ports of a per-port entry's key (port_list); a second "global" /
    // "*" key of the table is refused (`global_seen` remembers the first).
    std::vector<std::size_t> key_ports(const entry& k, bool& global_seen) const;
    // A per-port entry sets each of its fields once per port: `set_by`
    // remembers which key set (port, field); global keys are not recorded.
    using field_owners = std::map<std::pair<std::size_t, std::string>, std::string>;
    void set_once(field_owners& set_by, std::size_t target, const field_map& f, const entry& k) const;

    // PORT_QOS_MAP and PFC_WD: keys that name ports (key_ports), `global`
    // first and then per-port entries on top, whatever the file order. For
    // each key, unless own_key(k) has dealt with it (PFC_WD|GLOBAL):
    // parse(k, fields) reads its fields (checked against `spec`) and returns
    // apply(target), called for each port the key names (or all_ports)
    // once set_once has checked that no other key set those fields there.
    template <class OwnKey, class Parse>
    void walk_port_keys(const entry& t, const table_spec& spec, OwnKey own_key, Parse parse) {
        const auto all = entries(t);
        const auto order = global_first(all, [](const entry& e) { return is_global_key(e.key); });
        field_owners set_by;
        bool global_seen = false;
        for (const entry* kp : order) {
            const entry& k = *kp;
            if (own_key(k)) {
                continue;
            }
            const auto targets = key_ports(k, global_seen);
            const auto f = fields(k, spec);
            auto apply = parse(k, f);
            for (const std::size_t target : targets) {
                set_once(set_by, target, f, k);
                apply(target);
            }
        }
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

    // The names of a by-name table (profiles, maps, schedulers), in order.
    template <class Map>
    static std::vector<std::string> names_of(const Map& m) {
        std::vector<std::string> names;
        for (const auto& [n, v] : m) {
            names.push_back(n);
        }
        return names;
    }
    // The entry `name` (given by e) of a by-name table; else fails at e:
    // "unknown <what> "<name>"; <table> names are a, b" and a did-you-mean.
    template <class Map>
    const typename Map::mapped_type& named(const Map& m, const std::string& name, const entry& e,
                                           std::string_view what, std::string_view table) const {
        const auto it = m.find(name);
        if (it == m.end()) {
            const auto names = names_of(m);
            fail(mark_of(e), e.path,
                 "unknown " + std::string(what) + " " + quote(name) + "; " + std::string(table) +
                     " names are " + join(names) + did_you_mean(name, names));
        }
        return it->second;
    }
    // SONiC sometimes writes references as "[BUFFER_PROFILE|name]".
    static std::string strip_ref(std::string_view text, std::string_view table);

    // --------------------------------------------------------------- tables (tables/*.cpp)

    void load_rocelab(const entry& t);   // rocelab.cpp
    void load_headroom(const entry& t);  // rocelab.cpp: ROCELAB|headroom
    void load_device_metadata(const entry& t);
    void load_switch(const entry& t);
    void load_ports(const entry& t);  // port.cpp
    void load_breakout(const entry& t);  // breakout_cfg.cpp (after PORT)
    // DSCP_TO_TC_MAP and friends (maps.cpp; instantiated for 64 and 8).
    template <std::size_t N>
    void load_map_table(const entry* t, const table_spec& spec, const std::array<std::uint8_t, N>& azure,
                        named_maps<N>& maps);
    void load_schedulers(const entry* t);  // scheduler.cpp
    // port_qos_map.cpp
    template <std::size_t N>
    std::array<std::uint8_t, N> map_ref(const entry& e, const field_spec& f, const named_maps<N>& maps) const;
    void load_port_qos_map(const entry& t);
    void load_queues(const entry& t);  // queue.cpp
    void load_cable_length(const entry& t);
    void load_default_lossless(const entry& t);
    // buffer_pool.cpp
    void load_buffer_pool(const entry& t);
    void apply_over_subscription();
    void check_pool_fit() const;
    void resolve_default_buffers();
    // buffer_profile.cpp
    const sonic_pool_cfg& profile_pool(const entry& e, const field_spec& f);
    void load_buffer_profiles(const entry& t);
    // buffer_pg.cpp
    pg_buffer_cfg resolve_profile(const buffer_profile& b, const std::string& name, const port_cfg& p,
                                  const entry& at, const std::string& path) const;
    buffer_profile computed_lossless_profile() const;
    void load_buffer_pg(const entry& t);
    void add_dynamic_lossless_pgs();
    // buffer_queue.cpp
    void load_buffer_queue(const entry& t);
    void apply_egress_buffers();
    void load_wred_profiles(const entry* t);  // wred_profile.cpp
    void load_pfc_wd(const entry& t);         // pfc_wd.cpp
    void load_interfaces(const entry& t);     // interface.cpp
    void load_routes(const entry& t);         // route.cpp
    void load_neighbors(const entry& t);      // neigh.cpp

    // ------------------------------------------- shared by several tables (loader.cpp)

    sonic_pool_cfg* find_pool(std::string_view name);
    std::vector<std::string> pool_names() const;
    // The port-keyed buffer tables: "<ports>|<numbers>" -> (ports, bit mask).
    std::pair<std::vector<std::size_t>, std::uint8_t> buffer_key(const entry& k, const std::string& path,
                                                                 const char* what, const char* example) const;
    // A BUFFER_PG / BUFFER_QUEUE entry's profile (t.fields[0]): nullptr for
    // "NULL" (or, `absent_ok`, no profile field).
    const std::pair<const std::string, buffer_profile>* profile_ref(const entry& k, const table_spec& t,
                                                                    bool absent_ok) const;
    // BUFFER_PG / BUFFER_QUEUE: what the table binds profiles to.
    struct buffer_binding {
        const table_spec& table;
        const char* what;     // "priority groups", "queues" (in the key)
        const char* one;      // "priority group", "queue"
        const char* example;  // example keys
        int count;            // num_pgs, num_queues
        bool ingress;         // the profiles it takes: in an ingress pool, or an egress pool
        bool absent_ok;       // profile_ref: an entry may leave out its profile
    };
    using profile_entry = std::pair<const std::string, buffer_profile>;
    // Walks a BUFFER_PG / BUFFER_QUEUE table: each key ("<ports>|<numbers>",
    // global keys first) with its profile (nullptr: NULL or none), checked to
    // be in the right kind of pool; then bind(key, profile, port or
    // all_ports, number) for each number of each port, a (port, number)
    // being given by at most one key.
    void bind_buffer_profiles(
        const entry& t, const buffer_binding& b,
        const std::function<void(const entry&, const profile_entry*, std::size_t, int)>& bind);
    // Port whose INTERFACE subnet holds `addr`, or all_ports if none.
    std::size_t on_link_port(const ip_prefix& addr) const;
    std::string subnets_of(const port_cfg& p) const;

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
    bool _file_buffers = false;                     // the file gives BUFFER_* tables: no built-in buffers
    std::string _pool_name;                         // the BUFFER_POOL key
    YAML::Mark _pool_size_mark;                     // where its size is, for the pool-fit error
    std::string _pool_size_text;                    // its size as written
    std::map<std::string, YAML::Mark> _pool_marks;  // BUFFER_POOL keys (and "<key>|size")
    std::map<std::string, std::string> _pool_size_texts;  // sizes as written
    std::set<std::pair<std::size_t, int>> _pg_given;      // (port, PG) with a BUFFER_PG entry
    std::set<std::pair<std::size_t, int>>
        _queue_bytes_set;  // (port or all_ports, queue) with QUEUE max_bytes
};

}  // namespace rocelab::detail
