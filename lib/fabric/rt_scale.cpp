// rt_scale.cpp - see rt_scale.hpp.
#include "fabric/rt_scale.hpp"

#include <algorithm>
#include <cmath>

#include "config/switch_config.hpp"

namespace rocelab {

nanos rt_scale_time(nanos t, double k) noexcept {
    if (t == nanos::max() || k == 1.0) { return t; }
    return nanos{static_cast<std::int64_t>(std::llround(static_cast<double>(t.v) / k))};
}

bits_per_sec rt_scale_rate(bits_per_sec r, double k) noexcept {
    if (k == 1.0) { return r; }
    return bits_per_sec{static_cast<std::uint64_t>(std::llround(static_cast<double>(r.v) * k))};
}

double rt_factor(const topology_cfg& t, bits_per_sec target) noexcept {
    std::uint64_t fastest = 0;
    for (const auto& l : t.links) { fastest = std::max(fastest, l.cable.rate.v); }
    if (fastest == 0 || target.v == 0 || fastest <= target.v) { return 1.0; }
    return static_cast<double>(target.v) / static_cast<double>(fastest);
}

namespace {
void scale_port(port_cfg& p, double k) noexcept {
    if (p.speed) { p.speed = rt_scale_rate(*p.speed, k); }
    p.cable_length_m /= k;
    p.wd.detection_time = rt_scale_time(p.wd.detection_time, k);
    p.wd.restoration_time = rt_scale_time(p.wd.restoration_time, k);
    p.wd.poll_interval = rt_scale_time(p.wd.poll_interval, k);
}
template <typename T>
void scale_opt_time(std::optional<T>& v, double k) noexcept {
    if (v) { v = rt_scale_time(*v, k); }
}
template <typename T>
void scale_opt_rate(std::optional<T>& v, double k) noexcept {
    if (v) { v = rt_scale_rate(*v, k); }
}
}  // namespace

void rt_scale_switch(switch_cfg& c, double k) noexcept {
    if (k == 1.0) { return; }
    for (auto& p : c.ports) { scale_port(p, k); }
    scale_port(c.port_defaults, k);
    c.queue_sample_interval = rt_scale_time(c.queue_sample_interval, k);
}

void rt_scale_gen(gen_cfg& c, double k, bits_per_sec line) noexcept {
    if (k == 1.0) { return; }
    // The reaction point at the scenario's line rate, then scaled: the
    // profiles mix absolute rates (nvidia_cx: R_AI 40 Mb/s) and rates
    // proportional to the line (hpcc_ns3), so resolve before scaling.
    const dcqcn_cfg rp = resolve_dcqcn(c, line);
    dcqcn_overrides& o = c.rp_overrides;
    o.rpg_time_reset = rt_scale_time(rp.rpg_time_reset, k);
    o.dce_tcp_rtt = rt_scale_time(rp.dce_tcp_rtt, k);
    o.rate_reduce_monitor_period = rt_scale_time(rp.rate_reduce_monitor_period, k);
    o.rpg_ai_rate = rt_scale_rate(rp.rpg_ai_rate, k);
    o.rpg_hai_rate = rt_scale_rate(rp.rpg_hai_rate, k);
    o.rpg_min_rate = rt_scale_rate(rp.rpg_min_rate, k);
    if (rp.rpg_max_rate.v != 0) { o.rpg_max_rate = rt_scale_rate(rp.rpg_max_rate, k); }
    if (rp.rate_to_set_on_first_cnp.v != 0) { o.rate_to_set_on_first_cnp = rt_scale_rate(rp.rate_to_set_on_first_cnp, k); }
    c.cnp.cnp_interval = rt_scale_time(c.cnp.cnp_interval, k);
    c.cnp.min_time_between_cnps = rt_scale_time(c.cnp.min_time_between_cnps, k);

    c.rate = rt_scale_rate(c.rate, k);
    c.flow_rate = rt_scale_rate(c.flow_rate, k);
    c.link_delay = rt_scale_time(c.link_delay, k);
    scale_opt_time(c.duration, k);
    for (auto& s : c.pfc_sources) {
        s.interval = rt_scale_time(s.interval, k);
        s.start = rt_scale_time(s.start, k);
    }
    // 4.096 us x 2^code: add the smallest n with 2^n >= 1/k.
    const auto more = static_cast<int>(std::ceil(std::log2(1.0 / k) - 1e-9));
    for (auto& f : c.flows) {
        f.rate = rt_scale_rate(f.rate, k);
        f.start = rt_scale_time(f.start, k);
        f.arrivals.interval = rt_scale_time(f.arrivals.interval, k);
        f.arrivals.start = rt_scale_time(f.arrivals.start, k);
        f.qp.ack_timeout = static_cast<std::uint8_t>(std::min(31, f.qp.ack_timeout + more));
    }
}

std::string rt_scale_topology(topology_cfg& t, double k) {
    if (k == 1.0) { return {}; }
    // Headroom first, at the scenario's speeds: its peer-response term is a
    // per-speed table (802.3 31B), not rate x time, so computing it at the
    // scaled speed would change the bytes. Resolved here and frozen.
    for (std::size_t ni = 0; ni < t.nodes.size(); ++ni) {
        auto& n = t.nodes[ni];
        if (n.kind != topo_node::kind_t::switch_node) { continue; }
        std::vector<std::pair<int, bits_per_sec>> speeds;
        for (const auto& l : t.links) {
            if (l.a == ni) { speeds.emplace_back(l.pa, l.cable.rate); }
            if (l.b == ni) { speeds.emplace_back(l.pb, l.cable.rate); }
        }
        if (const std::string e = resolve_port_speeds(n.sw, speeds); !e.empty()) { return n.name + ": " + e; }
        for (auto& p : n.sw.ports) {
            for (auto& pg : p.pgs) {
                pg.xoff_auto = false;
                pg.reserved_auto = false;
            }
        }
    }
    for (auto& l : t.links) {
        l.cable.rate = rt_scale_rate(l.cable.rate, k);
        l.cable.delay = rt_scale_time(l.cable.delay, k);
    }
    t.duration = rt_scale_time(t.duration, k);
    t.sample_interval = rt_scale_time(t.sample_interval, k);
    for (auto& n : t.nodes) {
        if (n.kind == topo_node::kind_t::switch_node) { rt_scale_switch(n.sw, k); }
    }
    return {};
}

double rt_metric_scale(const std::string& m, double k) noexcept {
    if (m == "fct_p50" || m == "fct_p99" || m == "fct_max" || m == "fct_mean" || m == "collective_mean" ||
        m == "flow_fct") {
        return k;
    }
    if (m == "goodput" || m == "goodput_fct" || m == "rate_min" || m == "rate_mean" || m == "algbw" ||
        m == "busbw") {
        return 1.0 / k;
    }
    return 1.0;
}

}  // namespace rocelab
