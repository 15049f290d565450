// topology.cpp - see topology.hpp.
#include "fabric/topology.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "config/switch_config.hpp"
#include "config/units_parse.hpp"
#include "config/yaml_load.hpp"

namespace rocelab {

namespace {

struct topo_error {
    std::string msg;
};

std::string read_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) { throw topo_error{path + ": cannot open"}; }
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string join_path(const std::string& base, const std::string& p) {
    if (p.empty() || p[0] == '/' || base.empty()) { return p; }
    return base + "/" + p;
}

// A switch config in virtual time: PORT entries without port_id/device get
// port_id = their index (a port is its cable; the id is not used). Works on
// the loaded document in place (a clone would lose every node's line and
// column, and the switch loader's errors would point at 1:1).
YAML::Node switch_node_for_vt(YAML::Node root) {
    if (!root.IsMap() || !root["PORT"] || !root["PORT"].IsMap()) { return root; }
    YAML::Node ports = root["PORT"];
    int i = 0;
    for (auto kv : ports) {
        if (kv.second.IsMap() && !kv.second["port_id"] && !kv.second["device"]) { kv.second["port_id"] = i; }
        ++i;
    }
    return root;
}

// "h0..h7" -> h0, h1, ..., h7; anything else -> itself.
std::vector<std::string> name_range(const std::string& v) {
    const auto dots = v.find("..");
    if (dots == std::string::npos) { return {v}; }
    const std::string lo = v.substr(0, dots), hi = v.substr(dots + 2);
    auto split = [](const std::string& x) {
        std::size_t k = x.size();
        while (k > 0 && std::isdigit(static_cast<unsigned char>(x[k - 1]))) { --k; }
        return std::pair{x.substr(0, k), x.substr(k)};
    };
    const auto [p1, n1] = split(lo);
    const auto [p2, n2] = split(hi);
    if (n1.empty() || n2.empty() || p1 != p2 || p1.empty()) { return {}; }
    const int a = std::stoi(n1), b = std::stoi(n2);
    if (b < a || b - a >= 1024) { return {}; }  // a generator has at most 1024 ports
    std::vector<std::string> out;
    for (int i = a; i <= b; ++i) { out.push_back(p1 + std::to_string(i)); }
    return out;
}

class loader {
public:
    loader(std::string source, std::string base) : _src(std::move(source)), _base(std::move(base)) {}

    topology_cfg load(const std::string& yaml) {
        topology_cfg t;
        t.source = _src;
        {
            const auto slash = _src.rfind('/');
            std::string stem = slash == std::string::npos ? _src : _src.substr(slash + 1);
            if (const auto dot = stem.rfind('.'); dot != std::string::npos) { stem.resize(dot); }
            t.name = stem;
        }
        const YAML::Node root = YAML::Load(yaml);
        if (!root.IsMap()) { fail(root, "", "expected a map with nodes (or switches, hosts, traffic) and links"); }
        const bool scenario = root["switches"] || root["hosts"] || root["traffic"];
        for (const auto& kv : root) {
            const std::string k = kv.first.as<std::string>();
            static const char* common[] = {"name", "description", "duration", "link", "links", "expect",
                                           "sample_interval"};
            bool ok = false;
            for (const char* c : common) { ok = ok || k == c; }
            ok = ok || (scenario ? (k == "switches" || k == "hosts" || k == "traffic") : k == "nodes");
            if (!ok) {
                fail(kv.first, k,
                     scenario ? "unknown key; accepted: name, description, duration, sample_interval, link, switches, "
                                "hosts, traffic, links, expect"
                              : "unknown key; accepted: name, description, duration, sample_interval, link, nodes, "
                                "links, expect (or the scenario form: switches, hosts, traffic)");
            }
        }
        if (root["name"]) { t.name = root["name"].as<std::string>(); }
        if (root["description"]) { t.description = root["description"].as<std::string>(); }
        if (root["duration"]) {
            auto d = parse_time(root["duration"].as<std::string>());
            if (!d || d->v <= 0) { fail(root["duration"], "duration", "a fabric time > 0 with units, e.g. 10ms"); }
            t.duration = *d;
        }
        if (root["sample_interval"]) {
            auto d = parse_time(root["sample_interval"].as<std::string>());
            if (!d || d->v < 1000) {
                fail(root["sample_interval"], "sample_interval", "a time >= 1us with units, e.g. 10us");
            }
            t.sample_interval = *d;
        }
        topo_cable defaults;
        if (root["link"]) { defaults = cable(root["link"], "link", defaults); }
        std::map<std::string, std::size_t> by_name;
        std::map<std::string, int> host_port;  // scenario hosts -> port of the hosts node
        if (scenario) {
            load_scenario_nodes(root, t, by_name, host_port);
        } else {
            const YAML::Node nodes = root["nodes"];
            if (!nodes || !nodes.IsSequence() || nodes.size() == 0) {
                fail(nodes ? nodes : root, "nodes", "a list of {name, switch: FILE|{...}} or {name, gen: FILE|{...}}");
            }
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                t.nodes.push_back(node(nodes[i], "nodes[" + std::to_string(i) + "]"));
                add_name(by_name, t.nodes.back().name, i, nodes[i]["name"], "nodes[" + std::to_string(i) + "].name");
            }
        }
        const YAML::Node links = root["links"];
        if (!links || !links.IsSequence()) { fail(links ? links : root, "links", "a list of {a: NODE:PORT, b: NODE:PORT, ...}"); }
        for (std::size_t i = 0; i < links.size(); ++i) {
            const std::string where = "links[" + std::to_string(i) + "]";
            const YAML::Node l = links[i];
            if (!l.IsMap() || !l["a"] || !l["b"]) { fail(l, where, "a map with a: NODE:PORT and b: NODE:PORT"); }
            const topo_cable c = cable(l, where, defaults);
            const auto ea = ends(l["a"], where + ".a", t, by_name, host_port);
            const auto eb = ends(l["b"], where + ".b", t, by_name, host_port);
            if (ea.second.size() != eb.second.size()) {
                fail(l, where, "a names " + std::to_string(ea.second.size()) + " ports and b " +
                                   std::to_string(eb.second.size()) + "; ranges must pair up one by one");
            }
            for (std::size_t k = 0; k < ea.second.size(); ++k) {
                topo_link tl;
                tl.a = ea.first;
                tl.b = eb.first;
                tl.pa = ea.second[k];
                tl.pb = eb.second[k];
                tl.cable = c;
                tl.cable.loss_seed = c.loss_seed + 2 * k;  // each cable its own loss streams
                tl.where = where;
                t.links.push_back(tl);
            }
        }
        if (scenario && t.hosts_node != SIZE_MAX) {
            // Every host needs its cable (its port of the hosts node).
            std::vector<bool> cabled(t.hosts.size(), false);
            for (const auto& l : t.links) {
                if (l.a == t.hosts_node) { cabled[static_cast<std::size_t>(l.pa)] = true; }
                if (l.b == t.hosts_node) { cabled[static_cast<std::size_t>(l.pb)] = true; }
            }
            for (std::size_t h = 0; h < cabled.size(); ++h) {
                if (!cabled[h]) { fail(root["hosts"], "hosts", "host '" + t.hosts[h] + "' has no link (links: {a: " + t.hosts[h] + ", b: SWITCH:PORT})"); }
            }
        }
        if (const YAML::Node ex = root["expect"]) {
            if (!ex.IsSequence()) { fail(ex, "expect", "a list of expectations, e.g. - lossless_drops == 0"); }
            for (std::size_t i = 0; i < ex.size(); ++i) {
                auto e = parse_expectation(ex[i].as<std::string>());
                if (!e) { fail(ex[i], "expect[" + std::to_string(i) + "]", e.error().message); }
                t.expect.push_back(std::move(*e));
            }
        }
        return t;
    }

private:
    [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& what) const {
        std::string pos;
        if (n && n.Mark().line >= 0) {
            pos = ":" + std::to_string(n.Mark().line + 1) + ":" + std::to_string(n.Mark().column + 1);
        }
        throw topo_error{_src + pos + ": " + (field.empty() ? "" : field + ": ") + what};
    }

    topo_cable cable(const YAML::Node& m, const std::string& where, topo_cable c) const {
        if (!m.IsMap()) {
            fail(m, where, "a map of rate, delay, loss, loss_seed, tx_ring_size, rx_ring_size, flow_control, credits");
        }
        for (const auto& kv : m) {
            const std::string k = kv.first.as<std::string>();
            const std::string v = kv.second.IsScalar() ? kv.second.as<std::string>() : std::string();
            const std::string f = where + "." + k;
            if (k == "a" || k == "b") { continue; }
            if (k == "rate") {
                auto r = parse_rate(v);
                if (!r || r->v == 0) { fail(kv.second, f, "'" + v + "': a rate > 0 with units, e.g. 100Gbps"); }
                c.rate = *r;
            } else if (k == "delay") {
                auto d = parse_time(v);
                if (!d || d->v < 0) { fail(kv.second, f, "'" + v + "': a propagation delay >= 0 with units, e.g. 25ns, 1us"); }
                c.delay = *d;
            } else if (k == "loss") {
                auto p = parse_percent(v);
                // parse_percent gives percent ("0.1%" -> 0.1); the cable takes a probability
                if (!p || *p < 0 || *p > 100) { fail(kv.second, f, "'" + v + "': a loss rate 0%..100%, e.g. 0.1%"); }
                c.loss = *p / 100.0;
            } else if (k == "loss_seed") {
                c.loss_seed = number(kv.second, f, 0, UINT64_MAX / 2);
            } else if (k == "tx_ring_size") {
                c.tx_ring_size = static_cast<std::uint32_t>(number(kv.second, f, 1, 65536));
            } else if (k == "rx_ring_size") {
                c.rx_ring_size = static_cast<std::uint32_t>(number(kv.second, f, 1, 65536));
            } else if (k == "flow_control") {
                if (v != "pfc" && v != "credit") {
                    fail(kv.second, f, "'" + v + "': pfc (the ports' PFC, the default) or credit (InfiniBand-style credits)");
                }
                c.credit = v == "credit";
            } else if (k == "credits") {
                auto b = parse_bytes(v);
                if (!b || b->v == 0) { fail(kv.second, f, "'" + v + "': a buffer per lossless class > 0 with units, e.g. 64KiB"); }
                c.credit_bytes = b->v;
            } else {
                fail(kv.first, f,
                     "unknown key; accepted: a, b, rate, delay, loss, loss_seed, tx_ring_size, rx_ring_size, "
                     "flow_control, credits");
            }
        }
        return c;
    }

    std::uint64_t number(const YAML::Node& n, const std::string& f, std::uint64_t lo, std::uint64_t hi) const {
        const std::string v = n.IsScalar() ? n.as<std::string>() : std::string();
        std::uint64_t x = 0;
        const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
        if (v.empty() || r.ec != std::errc{} || r.ptr != v.data() + v.size() || x < lo || x > hi) {
            fail(n, f, "'" + v + "': an integer " + std::to_string(lo) + ".." + std::to_string(hi));
        }
        return x;
    }

    void add_name(std::map<std::string, std::size_t>& names, const std::string& name, std::size_t v,
                  const YAML::Node& at, const std::string& field) const {
        if (name.empty() || name.find_first_of(":/ .") != std::string::npos) {
            fail(at, field, "'" + name + "': a name without ':', '/', '.' or spaces");
        }
        if (!names.emplace(name, v).second) { fail(at, field, "'" + name + "' is used twice"); }
    }

    // A config given as a file name (relative to this file) or inline.
    std::pair<YAML::Node, std::string> config_node(const YAML::Node& c, const std::string& field) const {
        if (c.IsScalar()) {
            const std::string path = join_path(_base, c.as<std::string>());
            return {YAML::Load(read_file(path)), path};
        }
        if (c.IsMap()) { return {c, _src}; }
        fail(c, field, "a config file path or an inline map");
    }

    topo_node switch_of(const std::string& name, const YAML::Node& c, const std::string& field) const {
        topo_node out;
        out.kind = topo_node::kind_t::switch_node;
        out.name = name;
        auto [doc, source] = config_node(c, field);
        out.config_source = c.IsMap() ? _src + ":" + field : source;
        auto r = detail::switch_cfg_from_yaml(switch_node_for_vt(doc), source);
        if (!r) { throw topo_error{r.error().message}; }
        out.sw = std::move(*r);
        return out;
    }

    topo_node node(const YAML::Node& n, const std::string& where) const {
        if (!n.IsMap() || !n["name"]) { fail(n, where, "a map {name: NODE, switch: FILE|{...}} or {name, gen: ...}"); }
        const bool is_sw = static_cast<bool>(n["switch"]);
        const bool is_gen = static_cast<bool>(n["gen"]);
        if (is_sw == is_gen) { fail(n, where, "give exactly one of switch: CONFIG or gen: CONFIG"); }
        for (const auto& kv : n) {
            const std::string k = kv.first.as<std::string>();
            if (k != "name" && k != "switch" && k != "gen") {
                fail(kv.first, where + "." + k, "unknown key; accepted: name, switch, gen");
            }
        }
        const std::string name = n["name"].as<std::string>();
        if (is_sw) { return switch_of(name, n["switch"], where + ".switch"); }
        topo_node out;
        out.kind = topo_node::kind_t::gen_node;
        out.name = name;
        auto [doc, source] = config_node(n["gen"], where + ".gen");
        out.config_source = n["gen"].IsMap() ? _src + ":" + where + ".gen" : source;
        auto r = detail::gen_cfg_from_yaml(doc, source);
        if (!r) { throw topo_error{r.error().message}; }
        out.gen = std::move(*r);
        return out;
    }

    // Scenario form: switches, then one generator node "hosts" holding every host.
    void load_scenario_nodes(const YAML::Node& root, topology_cfg& t, std::map<std::string, std::size_t>& by_name,
                             std::map<std::string, int>& host_port) const {
        const YAML::Node sws = root["switches"];
        if (!sws || !sws.IsSequence() || sws.size() == 0) {
            fail(sws ? sws : root, "switches", "a list of {name: SWITCH, config: FILE|{...}}");
        }
        for (std::size_t i = 0; i < sws.size(); ++i) {
            const std::string where = "switches[" + std::to_string(i) + "]";
            const YAML::Node n = sws[i];
            if (!n.IsMap() || !n["name"] || !n["config"]) { fail(n, where, "a map {name: SWITCH, config: FILE|{...}}"); }
            for (const auto& kv : n) {
                const std::string k = kv.first.as<std::string>();
                if (k != "name" && k != "config") { fail(kv.first, where + "." + k, "unknown key; accepted: name, config"); }
            }
            t.nodes.push_back(switch_of(n["name"].as<std::string>(), n["config"], where + ".config"));
            add_name(by_name, t.nodes.back().name, t.nodes.size() - 1, n["name"], where + ".name");
        }
        const YAML::Node hs = root["hosts"];
        const YAML::Node tr = root["traffic"];
        if (!hs) { fail(root, "hosts", "a scenario needs hosts: \"h0..h8\" or a list of names or {name, mac, ip}"); }
        if (!tr || !tr.IsMap()) { fail(tr ? tr : root, "traffic", "a map of rocelab-gen keys (pattern, flows, msg_size, ...)"); }
        if (tr["hosts"]) { fail(tr["hosts"], "traffic.hosts", "hosts are declared at the top level of a scenario (hosts:)"); }
        YAML::Node host_list(YAML::NodeType::Sequence);
        std::optional<YAML::Node> addressed;  // the first host given a mac, ip or gateway
        auto add_host = [&](const std::string& name, const YAML::Node& at, const YAML::Node* details) {
            add_name(by_name, name, SIZE_MAX, at, "hosts");
            host_port[name] = static_cast<int>(t.hosts.size());
            // Into the list first, then filled: h then shares the list's
            // memory, and the first host whose mac/ip node comes from the
            // file merges the file's nodes into it once. (Filled first, each
            // host merged the whole file's nodes into its own memory, and the
            // list merged them again: quadratic, 83 s for 2048 hosts.)
            host_list.push_back(YAML::Node(YAML::NodeType::Map));
            YAML::Node h = host_list[host_list.size() - 1];
            h["name"] = name;
            h["port"] = static_cast<int>(t.hosts.size());
            if (details != nullptr) {
                for (const auto& kv : *details) {
                    const std::string k = kv.first.as<std::string>();
                    if (k == "mac" || k == "ip" || k == "gateway") {
                        h[k] = kv.second;
                        if (!addressed) {
                            addressed.emplace(kv.first);
                        }
                    } else if (k != "name") {
                        fail(kv.first, "hosts." + name + "." + k,
                             "unknown key; accepted: name, mac, ip, gateway");
                    }
                }
            }
            t.hosts.push_back(name);
        };
        if (hs.IsScalar()) {
            const auto names = name_range(hs.as<std::string>());
            if (names.empty()) { fail(hs, "hosts", "'" + hs.as<std::string>() + "': a range such as h0..h8, or a list"); }
            for (const auto& n : names) { add_host(n, hs, nullptr); }
        } else if (hs.IsSequence()) {
            for (const auto& h : hs) {
                if (h.IsScalar()) {
                    for (const auto& n : name_range(h.as<std::string>())) { add_host(n, h, nullptr); }
                } else if (h.IsMap() && h["name"]) {
                    add_host(h["name"].as<std::string>(), h, &h);
                } else {
                    fail(h, "hosts[]", "a host name, a range such as h0..h7, or {name, mac, ip}");
                }
            }
        } else {
            fail(hs, "hosts", "\"h0..h8\", or a list of names or {name, mac, ip}");
        }
        if (t.hosts.size() < 2) { fail(hs, "hosts", "at least 2 hosts (a sender and a receiver)"); }
        YAML::Node g = YAML::Clone(tr);
        if (g["flows"] || addressed) {
            // Explicit flows name the hosts; a pattern uses them (host i in
            // the place of port i) when any has its own address, else the
            // generator's default addresses (10.<port>.0.1, 02:00:00:00:<port>:01).
            g["hosts"] = host_list;
        }
        auto r = detail::gen_cfg_from_yaml(g, _src);
        if (!r) { throw topo_error{r.error().message}; }
        topo_node out;
        out.kind = topo_node::kind_t::gen_node;
        out.name = by_name.count("hosts") ? "hosts-gen" : "hosts";
        out.config_source = _src + ":traffic";
        out.gen = std::move(*r);
        out.gen.port_host_names = t.hosts;  // patterns name their hosts after the scenario's
        t.nodes.push_back(std::move(out));
        t.hosts_node = t.nodes.size() - 1;
        by_name[t.nodes.back().name] = t.hosts_node;
    }

    // "node:3", "node:Ethernet3", "node:0..8", "node:Ethernet0..Ethernet8"
    std::pair<std::size_t, std::vector<int>> ends(const YAML::Node& n, const std::string& f, const topology_cfg& t,
                                                  const std::map<std::string, std::size_t>& by_name,
                                                  const std::map<std::string, int>& host_port) const {
        const std::string v = n.IsScalar() ? n.as<std::string>() : std::string();
        const auto colon = v.find(':');
        if (colon == std::string::npos && t.hosts_node != SIZE_MAX) {  // a host or a range of hosts
            const auto names = name_range(v);
            std::vector<int> ports;
            for (const auto& h : names) {
                const auto it = host_port.find(h);
                if (it == host_port.end()) { fail(n, f, "'" + h + "': no host of that name (hosts: " + t.hosts.front() + " .. " + t.hosts.back() + ")"); }
                ports.push_back(it->second);
            }
            if (ports.empty()) { fail(n, f, "'" + v + "': a host, a range of hosts (h0..h7) or SWITCH:PORT"); }
            return {t.hosts_node, ports};
        }
        if (colon == std::string::npos) { fail(n, f, "'" + v + "': NODE:PORT, e.g. leaf0:Ethernet4, hosts:0 or hosts:0..7"); }
        const std::string name = v.substr(0, colon);
        const auto it = by_name.find(name);
        if (it == by_name.end() || it->second == SIZE_MAX) { fail(n, f, "'" + name + "': no node of that name"); }
        const topo_node& nd = t.nodes[it->second];
        auto port_of = [&](const std::string& p) -> int {
            if (nd.kind == topo_node::kind_t::switch_node) {
                for (std::size_t i = 0; i < nd.sw.ports.size(); ++i) {
                    if (nd.sw.ports[i].name == p) { return static_cast<int>(i); }
                }
            }
            int x = -1;
            const auto r = std::from_chars(p.data(), p.data() + p.size(), x);
            const int nports = nd.kind == topo_node::kind_t::switch_node ? static_cast<int>(nd.sw.ports.size()) : 1024;
            if (p.empty() || r.ec != std::errc{} || r.ptr != p.data() + p.size() || x < 0 || x >= nports) {
                fail(n, f, "'" + p + "': " +
                               (nd.kind == topo_node::kind_t::switch_node
                                    ? "a PORT name of " + name + " or an index 0.." + std::to_string(nports - 1)
                                    : std::string("a generator port index 0..1023")));
            }
            return x;
        };
        const std::string ports = v.substr(colon + 1);
        std::vector<int> out;
        const auto dots = ports.find("..");
        if (dots == std::string::npos) {
            out.push_back(port_of(ports));
        } else {
            const int lo = port_of(ports.substr(0, dots));
            const int hi = port_of(ports.substr(dots + 2));
            if (hi < lo) { fail(n, f, "'" + ports + "': a range low..high"); }
            for (int i = lo; i <= hi; ++i) { out.push_back(i); }
        }
        return {it->second, out};
    }

    std::string _src;
    std::string _base;
};

}  // namespace

result<topology_cfg> load_topology_from_string(const std::string& yaml, const std::string& source,
                                               const std::string& base_dir) noexcept {
    try {
        return loader(source, base_dir).load(yaml);
    } catch (const topo_error& e) {
        return config_error{e.msg};
    } catch (const YAML::Exception& e) {
        return config_error{source + ": " + e.what()};
    } catch (const std::exception& e) {
        return config_error{source + ": " + e.what()};
    }
}

result<topology_cfg> load_topology(const std::string& path) noexcept {
    try {
        const std::string text = read_file(path);
        const auto slash = path.rfind('/');
        return load_topology_from_string(text, path, slash == std::string::npos ? "." : path.substr(0, slash));
    } catch (const topo_error& e) {
        return config_error{e.msg};
    } catch (const std::exception& e) {
        return config_error{path + ": " + e.what()};
    }
}

}  // namespace rocelab
