// config_db.cpp - a SONiC config_db.json rewritten into the switch loader's
// tables (see config_db.hpp). Only encodings and tables are translated
// here; every value is still checked by the switch loader (loader.hpp).
#include "config/config_db.hpp"
#include "config/schema.hpp"
#include "config/text.hpp"
#include "config/yaml_load.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <yaml-cpp/yaml.h>

namespace rocelab {
namespace {

struct cdb_failure {
    std::string message;
};

using detail::trim;

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

using detail::quote;

std::vector<std::string> split(std::string_view s, char sep) { return detail::split_strings(s, sep); }

std::string lower(std::string s) {
    for (auto& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

using detail::join;

// A mapping's value at `key`, or an undefined node (never inserts).
YAML::Node get(const YAML::Node& map, const std::string& key) {
    if (!map.IsMap()) {
        return YAML::Node(YAML::NodeType::Undefined);
    }
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (it->first.IsScalar() && it->first.Scalar() == key) {
            return it->second;
        }
    }
    return YAML::Node(YAML::NodeType::Undefined);
}

std::vector<std::string> keys_of(const YAML::Node& map) {
    std::vector<std::string> out;
    if (map.IsMap()) {
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (it->first.IsScalar()) {
                out.push_back(it->first.Scalar());
            }
        }
    }
    return out;
}

YAML::Mark key_mark(const YAML::Node& map, const std::string& key) {
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (it->first.IsScalar() && it->first.Scalar() == key) {
            return it->first.Mark();
        }
    }
    return YAML::Mark::null_mark();
}

// The number at the end of a port name (Ethernet12 -> 12), or -1.
long name_number(std::string_view name) {
    std::size_t i = name.size();
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') {
        --i;
    }
    const std::string_view digits = name.substr(i);
    if (digits.empty() || digits.size() > 9) {
        return -1;
    }
    return std::stol(std::string(digits));
}

// The PORT fields SONiC writes that rocelab has no meaning for are the
// ones the schema refuses in YAML (config/schema.hpp, PORT): a
// config_db.json always has some of them, so they are dropped and listed.
std::span<const std::string_view> port_fields_ignored() { return find_table("PORT")->refused; }

// Tables the rewrite reads and removes (not passed to the loader).
const std::vector<std::string> rewritten_tables = {"VLAN", "VLAN_MEMBER", "LOSSLESS_TRAFFIC_PATTERN"};

class rewriter {
public:
    rewriter(YAML::Node& root, const std::string& source, const port_map& ports, detail::config_db_notes& notes)
        : _root(root), _source(source), _opt_map(ports), _notes(notes) {}

    void run() {
        _notes.ignored_tables = detail::config_db_ignored_tables(_root);
        for (const auto& t : _notes.ignored_tables) {
            _root.remove(t);
        }
        read_rocelab_port_map();
        device_metadata();
        ports();
        map_ports();
        traffic_pattern();
        vlans();
        port_qos_map();
        queues();
        buffers();
        pfc_wd();
        l3_mode();
        _notes.ignored_fields.assign(_ignored.begin(), _ignored.end());
    }

private:
    [[noreturn]] void fail(const YAML::Mark& m, const std::string& path, const std::string& what) const {
        std::string msg = _source;
        if (!m.is_null()) {
            msg += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
        }
        msg += ": " + path + ": " + what;
        throw cdb_failure{std::move(msg)};
    }

    YAML::Node table(const std::string& name) const { return get(_root, name); }

    void drop_field(YAML::Node& entry, const std::string& table_name, const std::string& field) {
        if (entry.IsMap() && entry.remove(field)) {
            _ignored.insert(table_name + "|" + field);
        }
    }

    // "[TABLE|name]" (older SONiC) or "name" (newer) -> "name".
    void deref(YAML::Node& entry, const std::string& path, const std::string& field, const std::string& want) {
        YAML::Node v = get(entry, field);
        if (!v.IsDefined() || !v.IsScalar()) {
            return;  // the loader reports a missing or non-scalar value
        }
        const std::string text(trim(v.Scalar()));
        if (text.empty() || text.front() != '[') {
            return;
        }
        const std::string fpath = path + "|" + field;
        const std::size_t bar = text.find('|');
        if (text.back() != ']' || bar == std::string::npos) {
            fail(v.Mark(), fpath, quote(text) + " is not a reference: expected \"[" + want + "|name]\" or a name");
        }
        const std::string tab(trim(std::string_view(text).substr(1, bar - 1)));
        const std::string name(trim(std::string_view(text).substr(bar + 1, text.size() - bar - 2)));
        if (tab != want) {
            fail(v.Mark(), fpath, quote(text) + " refers to table " + tab + ", expected a " + want + " entry");
        }
        if (name.empty()) {
            fail(v.Mark(), fpath, quote(text) + " names no entry: expected \"[" + want + "|name]\"");
        }
        // Buffer tables have no built-in entries once the file gives them.
        if ((want == "BUFFER_PROFILE" || want == "BUFFER_POOL")) {
            const YAML::Node t = table(want);
            if (!get(t, name).IsDefined()) {
                fail(v.Mark(), fpath, quote(text) + " names no " + want + " entry" +
                                          (t.IsMap() && t.size() != 0 ? "; the entries are " + join(keys_of(t), ", ")
                                                                      : ""));
            }
        }
        v = name;
    }

    void read_rocelab_port_map() {
        YAML::Node r = table("ROCELAB");
        YAML::Node pm = get(r, "port_map");
        if (!pm.IsDefined()) {
            return;
        }
        if (!pm.IsMap()) {
            fail(pm.Mark(), "ROCELAB|port_map", "expected a mapping of SONiC port names to DPDK devices or port ids");
        }
        for (auto it = pm.begin(); it != pm.end(); ++it) {
            if (!it->first.IsScalar() || !it->second.IsScalar() || trim(it->second.Scalar()).empty()) {
                fail(it->first.Mark(), "ROCELAB|port_map",
                     "expected entries such as Ethernet0: net_ring0 (a DPDK device name) or Ethernet0: 0 (a port id)");
            }
            _file_map.push_back({it->first.Scalar(), std::string(trim(it->second.Scalar()))});
            _file_map_marks.push_back(it->first.Mark());
        }
        r.remove("port_map");
    }

    void device_metadata() {
        YAML::Node t = table("DEVICE_METADATA");
        for (const auto& k : keys_of(t)) {
            YAML::Node e = get(t, k);
            if (k == "localhost") {
                const YAML::Node h = get(e, "hostname");
                const YAML::Node a = get(e, "asic_name");
                _hostname = h.IsDefined() && h.IsScalar() ? std::string(trim(h.Scalar())) : "";
                _asic_name = a.IsDefined() && a.IsScalar() ? std::string(trim(a.Scalar())) : "";
            }
            for (const auto& f : keys_of(e)) {
                if (f != "mac" && f != "buffer_model") {
                    drop_field(e, "DEVICE_METADATA", f);
                }
            }
        }
    }

    void ports() {
        YAML::Node t = table("PORT");
        for (const auto& name : keys_of(t)) {
            YAML::Node p = get(t, name);
            if (!p.IsMap()) {
                continue;  // the loader reports it
            }
            const YAML::Node index = get(p, "index");
            const bool has_index = index.IsDefined() && index.IsScalar() && all_digits(trim(index.Scalar())) &&
                                   trim(index.Scalar()).size() <= 9;
            _order.push_back({has_index ? 0 : 1, has_index ? std::stol(std::string(trim(index.Scalar()))) : 0,
                              name_number(name), name});
            for (const auto f : port_fields_ignored()) {
                drop_field(p, "PORT", std::string(f));
            }
            YAML::Node speed = get(p, "speed");
            if (speed.IsDefined() && speed.IsScalar()) {
                const std::string s(trim(speed.Scalar()));
                if (all_digits(s)) {
                    speed = s + "Mbps";  // SONiC: Mb/s
                } else if (s.size() < 4 || s.substr(s.size() - 3) != "bps") {
                    fail(speed.Mark(), "PORT|" + name + "|speed",
                         quote(s) + " is not a port speed: SONiC writes it in Mb/s as a number such as \"100000\" "
                                    "(100Gbps); rocelab units such as 100Gbps are also accepted");
                }
            }
            _port_names.insert(name);
        }
        std::sort(_order.begin(), _order.end());
    }

    // Port ids by order, or devices/ids from the explicit map.
    void map_ports() {
        YAML::Node t = table("PORT");
        const bool from_option = !_opt_map.empty();
        const port_map& m = from_option ? _opt_map : _file_map;
        if (m.empty()) {
            int id = 0;
            for (const auto& o : _order) {
                YAML::Node p = get(t, std::get<3>(o));
                if (!get(p, "device").IsDefined() && !get(p, "port_id").IsDefined()) {
                    p["port_id"] = id;
                }
                ++id;
            }
            return;
        }
        std::set<std::string> mapped;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const auto& e = m[i];
            const YAML::Mark at = from_option ? YAML::Mark::null_mark() : _file_map_marks[i];
            const std::string where = from_option ? "--port-map" : "ROCELAB|port_map";
            if (_port_names.count(e.name) == 0) {
                fail(at, where + "|" + e.name,
                     "names no PORT entry" + std::string(from_option ? " of this file" : ""));
            }
            if (!mapped.insert(e.name).second) {
                fail(at, where + "|" + e.name, "the port is mapped twice");
            }
            YAML::Node p = get(t, e.name);
            p.remove("device");
            p.remove("port_id");
            if (all_digits(e.target) && e.target.size() <= 9) {
                p["port_id"] = std::stoi(e.target);
            } else {
                p["device"] = e.target;
            }
        }
        // Ports the map does not name are left out, with their entries.
        std::set<std::string> dropped;
        for (const auto& name : _port_names) {
            if (mapped.count(name) == 0) {
                dropped.insert(name);
                t.remove(name);
                _ignored.insert("PORT|" + name + " (not in the port map)");
            }
        }
        if (dropped.empty()) {
            return;
        }
        for (const char* name : {"PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD", "INTERFACE", "NEIGH"}) {
            filter_keys(table(name), dropped);
        }
        YAML::Node cable = table("CABLE_LENGTH");
        for (const auto& k : keys_of(cable)) {
            filter_keys(get(cable, k), dropped);
        }
        YAML::Node members = table("VLAN_MEMBER");
        for (const auto& k : keys_of(members)) {
            const auto parts = split(k, '|');
            if (parts.size() == 2 && dropped.count(parts[1]) != 0) {
                members.remove(k);
            }
        }
        for (const auto& p : dropped) {
            _port_names.erase(p);
        }
    }

    // Removes `dropped` ports from keys "<ports>|rest" / "<ports>".
    static void filter_keys(YAML::Node t, const std::set<std::string>& dropped) {
        for (const auto& k : keys_of(t)) {
            const std::size_t bar = k.find('|');
            const std::string head = k.substr(0, bar);
            const std::string rest = bar == std::string::npos ? "" : k.substr(bar);
            std::vector<std::string> kept;
            bool changed = false;
            for (const auto& p : split(head, ',')) {
                if (dropped.count(p) != 0) {
                    changed = true;
                } else {
                    kept.push_back(p);
                }
            }
            if (!changed) {
                continue;
            }
            const YAML::Node value = get(t, k);
            t.remove(k);
            if (!kept.empty()) {
                t[join(kept, ",") + rest] = value;
            }
        }
    }

    void vlans() {
        YAML::Node vlan = table("VLAN");
        YAML::Node members = table("VLAN_MEMBER");
        std::map<std::string, int> ids;
        for (const auto& k : keys_of(vlan)) {
            const std::string path = "VLAN|" + k;
            YAML::Node e = get(vlan, k);
            const YAML::Node vid = get(e, "vlanid");
            std::string text;
            if (vid.IsDefined()) {
                text = vid.IsScalar() ? std::string(trim(vid.Scalar())) : "";
            } else if (k.size() > 4 && k.substr(0, 4) == "Vlan") {
                text = k.substr(4);
            }
            if (!all_digits(text) || text.size() > 4 || std::stoi(text) < 1 || std::stoi(text) > 4094) {
                fail(vid.IsDefined() ? vid.Mark() : key_mark(vlan, k), path + "|vlanid",
                     (vid.IsDefined() ? quote(text) : std::string("no vlanid and the name is not Vlan<id>")) +
                         ": expected a VLAN id 1..4094");
            }
            ids[k] = std::stoi(text);
            for (const auto& f : keys_of(e)) {
                if (f != "vlanid") {
                    drop_field(e, "VLAN", f);
                }
            }
        }
        std::map<std::string, std::pair<std::string, bool>> membership;  // port -> (vlan, tagged)
        YAML::Node port_table = table("PORT");
        for (const auto& k : keys_of(members)) {
            const std::string path = "VLAN_MEMBER|" + k;
            const YAML::Mark at = key_mark(members, k);
            const auto parts = split(k, '|');
            if (parts.size() != 2) {
                fail(at, path, "expected a key \"<vlan>|<port>\" such as \"Vlan1000|Ethernet4\"");
            }
            const auto vit = ids.find(parts[0]);
            if (vit == ids.end()) {
                fail(at, path, quote(parts[0]) + " names no VLAN entry");
            }
            if (_port_names.count(parts[1]) == 0) {
                fail(at, path, quote(parts[1]) + " names no PORT entry (PORTCHANNEL members are not modelled)");
            }
            YAML::Node e = get(members, k);
            bool tagged = false;
            for (const auto& f : keys_of(e)) {
                const YAML::Node v = get(e, f);
                if (f != "tagging_mode") {
                    fail(key_mark(e, f), path + "|" + f, "unknown field; the field read is tagging_mode");
                }
                const std::string mode = v.IsScalar() ? std::string(trim(v.Scalar())) : "";
                if (mode != "tagged" && mode != "untagged") {
                    fail(v.Mark(), path + "|tagging_mode", quote(mode) + ": expected tagged or untagged");
                }
                tagged = mode == "tagged";
            }
            const auto [it, inserted] = membership.emplace(parts[1], std::make_pair(parts[0], tagged));
            if (!inserted && (tagged || it->second.second)) {
                fail(at, path,
                     "port " + parts[1] + " is also a member of " + it->second.first +
                         "; rocelab ports carry one VLAN when tagged (PORT vlan_mode/vlan)");
            }
            if (tagged) {
                YAML::Node p = get(port_table, parts[1]);
                p["vlan_mode"] = "tagged";
                p["vlan"] = vit->second;
            }
        }
        for (const auto& t : rewritten_tables) {
            _root.remove(t);
        }
    }

    // LOSSLESS_TRAFFIC_PATTERN|AZURE {mtu, small_packet_percentage}: the
    // dynamic model's headroom inputs, rocelab's ROCELAB headroom
    // lossless_mtu / small_packet_percent (unless the file's ROCELAB gives
    // them). The traditional model does not read it (listed).
    void traffic_pattern() {
        YAML::Node t = table("LOSSLESS_TRAFFIC_PATTERN");
        if (!t.IsDefined()) {
            return;
        }
        const YAML::Node model = get(get(table("DEVICE_METADATA"), "localhost"), "buffer_model");
        const bool dynamic = model.IsDefined() && model.IsScalar() && trim(model.Scalar()) == "dynamic";
        for (const auto& k : keys_of(t)) {
            const YAML::Node e = get(t, k);
            for (const auto& f : keys_of(e)) {
                const std::string path = "LOSSLESS_TRAFFIC_PATTERN|" + k + "|" + f;
                const YAML::Node v = get(e, f);
                const std::string text = v.IsScalar() ? std::string(trim(v.Scalar())) : "";
                const char* target = f == "mtu" ? "lossless_mtu" : f == "small_packet_percentage" ? "small_packet_percent" : nullptr;
                if (target == nullptr) {
                    _ignored.insert("LOSSLESS_TRAFFIC_PATTERN|" + f);
                    continue;
                }
                const long lo = f == "mtu" ? 64 : 0;
                const long hi = f == "mtu" ? 16384 : 100;
                if (!all_digits(text) || text.size() > 5 || std::stol(text) < lo || std::stol(text) > hi) {
                    fail(v.Mark(), path,
                         quote(text) + ": expected " + (f == "mtu" ? "a packet size in bytes " : "a percentage ") +
                             std::to_string(lo) + ".." + std::to_string(hi));
                }
                if (!dynamic) {
                    _ignored.insert("LOSSLESS_TRAFFIC_PATTERN (buffer_model traditional)");
                    continue;
                }
                YAML::Node r = table("ROCELAB");
                if (r.IsDefined() && !r.IsNull() && !r.IsMap()) {
                    continue;  // the loader reports it
                }
                YAML::Node h = get(r, "headroom");
                if (h.IsDefined() && !h.IsMap()) {
                    continue;  // the loader reports it
                }
                if (!get(h, target).IsDefined()) {
                    _root["ROCELAB"]["headroom"][target] = text;
                }
            }
        }
        _root.remove("LOSSLESS_TRAFFIC_PATTERN");
    }

    // Every reference field the schema gives `table_name` (config/schema.hpp):
    // "[TABLE|name]" -> "name", the table checked.
    void deref_all(const std::string& table_name) {
        YAML::Node t = table(table_name);
        for (const auto& k : keys_of(t)) {
            YAML::Node e = get(t, k);
            for (const auto& f : find_table(table_name)->fields) {
                if (f.kind == field_kind::reference) {
                    deref(e, table_name + "|" + k, std::string(f.name), std::string(f.ref_table));
                }
            }
        }
    }

    void port_qos_map() {
        deref_all("PORT_QOS_MAP");
        YAML::Node t = table("PORT_QOS_MAP");
        for (const auto& k : keys_of(t)) {
            // Its table, PFC_PRIORITY_TO_PRIORITY_GROUP_MAP, is not modelled.
            YAML::Node e = get(t, k);
            drop_field(e, "PORT_QOS_MAP", "pfc_to_pg_map");
        }
    }

    void queues() {
        chassis_keys(table("QUEUE"), "QUEUE");
        deref_all("QUEUE");
    }

    // Multi-ASIC and VOQ chassis keys "<host>|<asic>|<ports>|<queues>": this
    // line card's own ("<hostname>|<asic_name>|", from DEVICE_METADATA) lose
    // the prefix; other line cards' and ASICs' system ports are left out
    // and listed once per host|asic.
    void chassis_keys(YAML::Node t, const std::string& table_name) {
        for (const auto& k : keys_of(t)) {
            const auto parts = split(k, '|');
            if (parts.size() != 4) {
                continue;  // "<ports>|<queues>" (the loader checks it)
            }
            // SONiC writes the ASIC as "asic0" or "Asic0".
            const bool local = (_hostname.empty() || parts[0] == _hostname) &&
                               (_asic_name.empty() || lower(parts[1]) == lower(_asic_name));
            const YAML::Node value = get(t, k);
            t.remove(k);
            if (!local) {
                _ignored.insert(table_name + "|" + parts[0] + "|" + parts[1] +
                                " (another line card's or ASIC's system ports)");
                continue;
            }
            bool known = true;
            for (const auto& p : split(parts[2], ',')) {
                known = known && _port_names.count(p) != 0;
            }
            if (!known) {
                _ignored.insert(table_name + "|" + parts[0] + "|" + parts[1] + "|" + parts[2] +
                                " (not a PORT of this file)");
                continue;
            }
            t[parts[2] + "|" + parts[3]] = value;
        }
    }

    void buffers() {
        deref_all("BUFFER_PROFILE");
        YAML::Node profiles = table("BUFFER_PROFILE");
        for (const auto& k : keys_of(profiles)) {
            YAML::Node e = get(profiles, k);
            // Broadcom profiles carry both; rocelab takes one XON rule (xon).
            if (get(e, "xon").IsDefined() && get(e, "xon_offset").IsDefined()) {
                e.remove("xon_offset");
                _ignored.insert("BUFFER_PROFILE|xon_offset (xon given)");
            }
        }
        YAML::Node queues = table("BUFFER_QUEUE");
        chassis_keys(queues, "BUFFER_QUEUE");
        // (SONiC's "NULL", no profile, is not a reference: the loader reads it.)
        deref_all("BUFFER_PG");
        deref_all("BUFFER_QUEUE");
    }

    // Newer SONiC writes these switches of the watchdog even when off; off
    // is what rocelab does, on is left to the loader (not supported).
    void pfc_wd() {
        YAML::Node t = table("PFC_WD");
        for (const auto& k : keys_of(t)) {
            YAML::Node e = get(t, k);
            for (const char* f : {"pfc_stat_history", "BIG_RED_SWITCH"}) {
                const YAML::Node v = get(e, f);
                if (v.IsDefined() && v.IsScalar() && trim(v.Scalar()) == "disable") {
                    drop_field(e, "PFC_WD", f);
                }
            }
        }
    }

    // A routed config_db (INTERFACE entries) runs as an L3 switch.
    void l3_mode() {
        const YAML::Node intf = table("INTERFACE");
        if (!intf.IsMap() || intf.size() == 0) {
            return;
        }
        YAML::Node r = table("ROCELAB");
        if (r.IsDefined() && !r.IsNull() && !r.IsMap()) {
            return;  // the loader reports it
        }
        if (get(r, "mode").IsDefined()) {
            return;
        }
        _root["ROCELAB"]["mode"] = "l3";
    }

    YAML::Node& _root;
    const std::string& _source;
    const port_map& _opt_map;
    detail::config_db_notes& _notes;
    port_map _file_map;
    std::vector<YAML::Mark> _file_map_marks;
    std::set<std::string> _port_names;
    std::vector<std::tuple<int, long, long, std::string>> _order;  // (no index, index, name number, name)
    std::set<std::string> _ignored;
    std::string _hostname;   // DEVICE_METADATA|localhost|hostname
    std::string _asic_name;  // DEVICE_METADATA|localhost|asic_name (multi-ASIC)
};

}  // namespace

bool starts_as_json_object(std::string_view text) noexcept {
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") {
        text.remove_prefix(3);
    }
    text = trim(text);
    return !text.empty() && text.front() == '{';
}

bool detail::is_config_db(std::string_view text, const YAML::Node& root) {
    return starts_as_json_object(text) && root.IsMap() &&
           (get(root, "DEVICE_METADATA").IsDefined() || get(root, "PORT").IsDefined());
}

std::vector<std::string> detail::config_db_ignored_tables(const YAML::Node& root) {
    std::vector<std::string> out;
    const auto& known = switch_tables();
    for (const auto& k : keys_of(root)) {
        if (std::find(known.begin(), known.end(), k) == known.end() &&
            std::find(rewritten_tables.begin(), rewritten_tables.end(), k) == rewritten_tables.end()) {
            out.push_back(k);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string detail::normalise_config_db(YAML::Node& root, const std::string& source, const port_map& ports,
                                        config_db_notes& notes) {
    try {
        rewriter(root, source, ports, notes).run();
        return {};
    } catch (const cdb_failure& f) {
        return f.message;
    } catch (const std::exception& e) {
        return source + ": cannot read the config_db.json: " + e.what();
    }
}

result<port_map> parse_port_map(std::string_view spec) noexcept {
    try {
        std::string text(spec);
        std::string where = "--port-map";
        if (text.find('=') == std::string::npos) {
            std::ifstream in(text);
            if (!in) {
                return config_error{"--port-map " + text + ": not a list such as Ethernet0=net_ring0,Ethernet4=1 "
                                    "and cannot open it as a file: " + std::strerror(errno)};
            }
            std::ostringstream s;
            s << in.rdbuf();
            where += " " + text;
            text.clear();
            std::istringstream lines(s.str());
            std::string line;
            while (std::getline(lines, line)) {
                text += line.substr(0, line.find('#')) + "\n";
            }
        }
        for (char& c : text) {
            if (c == ',' || c == '\n' || c == '\t' || c == '\r') {
                c = ' ';
            }
        }
        port_map out;
        std::istringstream words(text);
        std::string w;
        while (words >> w) {
            const std::size_t eq = w.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == w.size()) {
                return config_error{where + ": " + quote(w) +
                                    ": expected NAME=DEVICE or NAME=PORT_ID, such as Ethernet0=net_ring0 or Ethernet4=1"};
            }
            out.push_back({w.substr(0, eq), w.substr(eq + 1)});
        }
        if (out.empty()) {
            return config_error{where + ": no entries; expected Ethernet0=net_ring0,Ethernet4=1"};
        }
        return out;
    } catch (const std::exception& e) {
        return config_error{std::string("--port-map: ") + e.what()};
    }
}

}  // namespace rocelab
