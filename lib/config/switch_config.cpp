// switch_config.cpp - the public entry points of the switch configuration:
// load a file or text (the loader itself is config/loader.hpp, one file per
// table under tables/), the built-in defaults, resolve_port_speeds() and
// describe_switch_cfg(). A loader problem is thrown as load_failure; the
// public functions catch it (and YAML::Exception, and anything else) and
// turn it into a config_error, so nothing is half-applied and nothing escapes.
#include "config/switch_config.hpp"
#include "config/config_db.hpp"
#include "config/loader.hpp"
#include "config/text.hpp"
#include "config/yaml_load.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/units_parse.hpp"
#include "qos/headroom.hpp"

namespace rocelab {
namespace {

using detail::join;

// 2 -> "2", 1.5 -> "1.5".
std::string format_ratio(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

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

namespace detail {

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

}  // namespace detail

namespace {

using detail::apply_auto_headroom;
using detail::loader;
using detail::pool_fit_problem;
using detail::port_reservations;
using detail::size_shared_headroom;

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
    for (const auto& b : cfg.breakouts) {
        o << "  BREAKOUT_CFG " << b.port << ": " << b.mode << " over lanes " << b.lanes.front() << "-" << b.lanes.back()
          << " (" << format_rate(bits_per_sec{b.lane_speed.v * b.lanes.size()}) << "): ";
        for (std::size_t i = 0; i < b.ports.size(); ++i) { o << (i ? ", " : "") << b.ports[i]; }
        o << "\n";
    }
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


result<switch_cfg> load_switch_cfg_from_string(std::string_view yaml, std::string source_name) noexcept {
    return load_switch_cfg_from_string(yaml, std::move(source_name), load_options{});
}

namespace {

// `load()`'s configuration, or its failure as one message naming `source`.
template <class Load>
result<switch_cfg> loaded(const std::string& source, Load load) noexcept {
    try {
        return load();
    } catch (const detail::load_failure& f) {
        return config_error{f.message};
    } catch (const YAML::Exception& e) {
        return config_error{source + ": " + e.what()};
    } catch (const std::exception& e) {
        return config_error{source + ": cannot load the configuration: " + e.what()};
    } catch (...) {
        return config_error{source + ": cannot load the configuration"};
    }
}

}  // namespace

result<switch_cfg> load_switch_cfg_from_string(std::string_view yaml, std::string source_name,
                                               const load_options& opt) noexcept {
    return loaded(source_name, [&] { return load_text(yaml, source_name, opt); });
}

result<switch_cfg> detail::switch_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept {
    return loaded(source, [&] { return loader(source).load(root); });
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
