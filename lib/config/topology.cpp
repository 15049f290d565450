// topology.cpp - see topology.hpp.
#include "config/topology.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "config/switch_config.hpp"
#include "config/units_parse.hpp"

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
// port_id = their index (a port is its cable; the id is not used).
std::string switch_yaml_for_vt(const YAML::Node& root, const std::string& text) {
    if (!root.IsMap() || !root["PORT"] || !root["PORT"].IsMap()) { return text; }
    bool missing = false;
    for (const auto& kv : root["PORT"]) {
        if (kv.second.IsMap() && !kv.second["port_id"] && !kv.second["device"]) { missing = true; }
    }
    if (!missing) { return text; }  // keep the file's own line numbers in messages
    YAML::Node copy = YAML::Clone(root);
    int i = 0;
    for (auto kv : copy["PORT"]) {
        if (kv.second.IsMap() && !kv.second["port_id"] && !kv.second["device"]) { kv.second["port_id"] = i; }
        ++i;
    }
    YAML::Emitter e;
    e << copy;
    return e.c_str();
}

class loader {
public:
    loader(std::string source, std::string base) : _src(std::move(source)), _base(std::move(base)) {}

    topology_cfg load(const std::string& yaml) {
        topology_cfg t;
        t.source = _src;
        const YAML::Node root = YAML::Load(yaml);
        if (!root.IsMap()) { fail(root, "", "expected a map with nodes, links and optionally duration and link"); }
        topo_cable defaults;
        for (const auto& kv : root) {
            const std::string k = kv.first.as<std::string>();
            if (k != "duration" && k != "link" && k != "nodes" && k != "links") {
                fail(kv.first, k, "unknown key; accepted: duration, link, nodes, links");
            }
        }
        if (root["duration"]) {
            auto d = parse_time(root["duration"].as<std::string>());
            if (!d || d->v <= 0) { fail(root["duration"], "duration", "a fabric time > 0 with units, e.g. 10ms"); }
            t.duration = *d;
        }
        if (root["link"]) { defaults = cable(root["link"], "link", defaults); }
        const YAML::Node nodes = root["nodes"];
        if (!nodes || !nodes.IsSequence() || nodes.size() == 0) {
            fail(nodes ? nodes : root, "nodes", "a list of {name, switch: FILE|{...}} or {name, gen: FILE|{...}}");
        }
        std::map<std::string, std::size_t> by_name;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            t.nodes.push_back(node(nodes[i], "nodes[" + std::to_string(i) + "]"));
            if (!by_name.emplace(t.nodes.back().name, i).second) {
                fail(nodes[i], "nodes[" + std::to_string(i) + "].name", "'" + t.nodes.back().name + "' is used twice");
            }
        }
        const YAML::Node links = root["links"];
        if (!links || !links.IsSequence()) { fail(links ? links : root, "links", "a list of {a: NODE:PORT, b: NODE:PORT, ...}"); }
        for (std::size_t i = 0; i < links.size(); ++i) {
            const std::string where = "links[" + std::to_string(i) + "]";
            const YAML::Node l = links[i];
            if (!l.IsMap() || !l["a"] || !l["b"]) { fail(l, where, "a map with a: NODE:PORT and b: NODE:PORT"); }
            const topo_cable c = cable(l, where, defaults);
            const auto ea = ends(l["a"], where + ".a", t, by_name);
            const auto eb = ends(l["b"], where + ".b", t, by_name);
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
        if (!m.IsMap()) { fail(m, where, "a map of rate, delay, loss, loss_seed, tx_ring_size, rx_ring_size"); }
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
                if (!p || *p < 0 || *p > 1) { fail(kv.second, f, "'" + v + "': a loss rate 0%..100%, e.g. 0.1%"); }
                c.loss = *p;
            } else if (k == "loss_seed") {
                c.loss_seed = number(kv.second, f, 0, UINT64_MAX / 2);
            } else if (k == "tx_ring_size") {
                c.tx_ring_size = static_cast<std::uint32_t>(number(kv.second, f, 1, 65536));
            } else if (k == "rx_ring_size") {
                c.rx_ring_size = static_cast<std::uint32_t>(number(kv.second, f, 1, 65536));
            } else {
                fail(kv.first, f, "unknown key; accepted: a, b, rate, delay, loss, loss_seed, tx_ring_size, rx_ring_size");
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

    topo_node node(const YAML::Node& n, const std::string& where) const {
        if (!n.IsMap() || !n["name"]) { fail(n, where, "a map {name: NODE, switch: FILE|{...}} or {name, gen: ...}"); }
        topo_node out;
        out.name = n["name"].as<std::string>();
        if (out.name.empty() || out.name.find_first_of(":/ ") != std::string::npos) {
            fail(n["name"], where + ".name", "'" + out.name + "': a name without ':', '/' or spaces");
        }
        const bool is_sw = static_cast<bool>(n["switch"]);
        const bool is_gen = static_cast<bool>(n["gen"]);
        if (is_sw == is_gen) { fail(n, where, "give exactly one of switch: CONFIG or gen: CONFIG"); }
        for (const auto& kv : n) {
            const std::string k = kv.first.as<std::string>();
            if (k != "name" && k != "switch" && k != "gen") {
                fail(kv.first, where + "." + k, "unknown key; accepted: name, switch, gen");
            }
        }
        const YAML::Node c = is_sw ? n["switch"] : n["gen"];
        std::string text;
        YAML::Node doc;
        if (c.IsScalar()) {
            out.config_source = join_path(_base, c.as<std::string>());
            text = read_file(out.config_source);
            doc = YAML::Load(text);
        } else if (c.IsMap()) {
            out.config_source = _src + ":" + where + (is_sw ? ".switch" : ".gen");
            doc = c;
            YAML::Emitter e;
            e << c;
            text = e.c_str();
        } else {
            fail(c, where + (is_sw ? ".switch" : ".gen"), "a config file path or an inline map");
        }
        if (is_sw) {
            out.kind = topo_node::kind_t::switch_node;
            auto r = load_switch_cfg_from_string(switch_yaml_for_vt(doc, text), out.config_source);
            if (!r) { throw topo_error{r.error().message}; }
            out.sw = std::move(*r);
        } else {
            out.kind = topo_node::kind_t::gen_node;
            auto r = load_gen_cfg_from_string(text, out.config_source);
            if (!r) { throw topo_error{r.error().message}; }
            out.gen = std::move(*r);
        }
        return out;
    }

    // "node:3", "node:Ethernet3", "node:0..8", "node:Ethernet0..Ethernet8"
    std::pair<std::size_t, std::vector<int>> ends(const YAML::Node& n, const std::string& f, const topology_cfg& t,
                                                  const std::map<std::string, std::size_t>& by_name) const {
        const std::string v = n.IsScalar() ? n.as<std::string>() : std::string();
        const auto colon = v.find(':');
        if (colon == std::string::npos) { fail(n, f, "'" + v + "': NODE:PORT, e.g. leaf0:Ethernet4, hosts:0 or hosts:0..7"); }
        const std::string name = v.substr(0, colon);
        const auto it = by_name.find(name);
        if (it == by_name.end()) { fail(n, f, "'" + name + "': no node of that name"); }
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
