// metrics.cpp - see metrics.hpp.
#include "vt/metrics.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace rocelab::vt {

namespace {

enum class arg_kind : std::uint8_t { none, flow, any_port, sw_opt, sw_port_q, sw_port_pg, sw_opt_q };

struct metric_def {
    const char* name;
    arg_kind args;
    expect_unit unit;  // how a detail writes its value
};

constexpr auto u_count = expect_unit::number;
constexpr auto u_time = expect_unit::time_ns;
constexpr auto u_rate = expect_unit::rate_bps;
constexpr auto u_bytes = expect_unit::bytes;
constexpr auto u_share = expect_unit::fraction;

constexpr metric_def defs[] = {
    {"drops", arg_kind::sw_opt, u_count},         {"lossless_drops", arg_kind::none, u_count},
    {"link_drops", arg_kind::none, u_count},      {"goodput", arg_kind::flow, u_rate},
    {"goodput_fct", arg_kind::flow, u_rate},      {"flow_fct", arg_kind::flow, u_time},
    {"fct_p50", arg_kind::flow, u_time},          {"fct_p99", arg_kind::flow, u_time},
    {"fct_max", arg_kind::flow, u_time},          {"fct_mean", arg_kind::flow, u_time},
    {"messages", arg_kind::flow, u_count},        {"naks", arg_kind::flow, u_count},
    {"retx", arg_kind::flow, u_count},            {"timeouts", arg_kind::flow, u_count},
    {"cnp_rx", arg_kind::flow, u_count},          {"cnp_tx", arg_kind::flow, u_count},
    {"rate_min", arg_kind::flow, u_rate},         {"rate_mean", arg_kind::flow, u_rate},
    {"pfc_rx", arg_kind::any_port, u_count},      {"pfc_tx", arg_kind::any_port, u_count},
    {"ecn_marked", arg_kind::sw_opt_q, u_count},  {"busy", arg_kind::any_port, u_share},
    {"queue_peak", arg_kind::sw_port_q, u_bytes}, {"pg_peak", arg_kind::sw_port_pg, u_bytes},
    {"pfcwd_storms", arg_kind::sw_opt, u_count},  {"collectives", arg_kind::none, u_count},
    {"collective_mean", arg_kind::none, u_time},  {"algbw", arg_kind::none, u_rate},
    {"busbw", arg_kind::none, u_rate},           {"deadlocks", arg_kind::none, u_count},
    {"deadlocked", arg_kind::none, u_count},     {"deadlock_max", arg_kind::none, u_time},
    {"credit_waits", arg_kind::none, u_count},   {"credit_overruns", arg_kind::none, u_count},
};

const metric_def* find_def(const std::string& n) {
    for (const auto& d : defs) {
        if (n == d.name) { return &d; }
    }
    return nullptr;
}

std::string all_names() {
    std::string s;
    for (const auto& d : defs) { s += (s.empty() ? "" : ", ") + std::string(d.name); }
    return s;
}

std::vector<std::string> split(const std::string& x) {
    std::vector<std::string> out;
    std::size_t a = 0;
    for (;;) {
        const auto c = x.find(':', a);
        out.push_back(x.substr(a, c == std::string::npos ? std::string::npos : c - a));
        if (c == std::string::npos) { return out; }
        a = c + 1;
    }
}

double percentile(std::vector<std::uint64_t> v, double q) {
    if (v.empty()) { return 0; }
    std::sort(v.begin(), v.end());
    const std::size_t i = static_cast<std::size_t>(q * double(v.size() - 1) + 0.5);
    return double(v[std::min(i, v.size() - 1)]);
}

std::uint64_t sw_port_drops(sw::switch_pipeline& s, std::size_t p) {
    std::uint64_t n = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(sw::drop_reason::count); ++r) { n += s.counters(p).drops[r]; }
    return n;
}

}  // namespace

expect_unit metrics::unit(const expect_metric& m) noexcept {
    const metric_def* d = find_def(m.name);
    return d != nullptr ? d->unit : expect_unit::number;
}

bool metrics::of_flow(const std::string& name) noexcept {
    const metric_def* d = find_def(name);
    return d != nullptr && d->args == arg_kind::flow;
}

std::size_t metrics::node(const std::string& name) const {
    for (std::size_t i = 0; i < _f.node_count(); ++i) {
        if (_f.node_name(i) == name) { return i; }
    }
    return SIZE_MAX;
}

std::pair<std::size_t, std::size_t> metrics::flow(const std::string& name) const {
    if (!_indexed) {
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) != node_kind::gen_node) { continue; }
            auto& g = _f.gen_at(n);
            for (std::size_t i = 0; i < g.flow_count(); ++i) { _flow_index.emplace(g.flow(i).cfg.name, std::pair{n, i}); }
        }
        _indexed = true;
    }
    const auto it = _flow_index.find(name);
    return it == _flow_index.end() ? std::pair<std::size_t, std::size_t>{SIZE_MAX, 0} : it->second;
}

std::pair<std::size_t, int> metrics::port_of(const std::string& x) const {
    for (std::size_t h = 0; h < _t.hosts.size(); ++h) {
        if (_t.hosts[h] == x) { return {_t.hosts_node, static_cast<int>(h)}; }
    }
    const auto parts = split(x);
    if (parts.size() != 2) { return {SIZE_MAX, -1}; }
    const std::size_t n = node(parts[0]);
    if (n == SIZE_MAX) { return {SIZE_MAX, -1}; }
    for (std::size_t p = 0; p < _f.port_count(n); ++p) {
        if (_f.port_name(n, static_cast<int>(p)) == parts[1] || std::to_string(p) == parts[1]) {
            return {n, static_cast<int>(p)};
        }
    }
    return {SIZE_MAX, -1};
}

std::string metrics::check_args(const expect_metric& m) const {
    const metric_def* d = find_def(m.name);
    if (d == nullptr) { return "unknown metric '" + m.name + "'; accepted: " + all_names(); }
    auto flows = [&] {
        std::string s;
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) != node_kind::gen_node) { continue; }
            for (std::size_t i = 0; i < _f.gen_at(n).flow_count() && i < 6; ++i) {
                s += (s.empty() ? "" : ", ") + _f.gen_at(n).flow(i).cfg.name;
            }
        }
        return s.empty() ? std::string("none") : s + ", ...";
    };
    auto is_switch = [&](const std::string& s) {
        const std::size_t n = node(s);
        return n != SIZE_MAX && _f.kind(n) == node_kind::switch_node;
    };
    const std::size_t na = m.args.size();
    const std::string a0 = na > 0 ? m.args[0] : std::string();
    switch (d->args) {
        case arg_kind::none:
            if (na != 0) { return m.name + " takes no argument"; }
            return {};
        case arg_kind::flow:
            if (na != 1) { return m.name + "(FLOW): one flow name"; }
            if (flow(a0).first == SIZE_MAX) { return m.name + "(" + a0 + "): no flow of that name (flows: " + flows() + ")"; }
            return {};
        case arg_kind::any_port: {
            if (na != 1) { return m.name + "(X): a host, SWITCH or NODE:PORT"; }
            if (m.name != "busy" && is_switch(a0)) { return {}; }
            if (port_of(a0).first == SIZE_MAX) {
                return m.name + "(" + a0 + "): no host or NODE:PORT of that name";
            }
            return {};
        }
        case arg_kind::sw_opt:
        case arg_kind::sw_opt_q: {
            if (na == 0) { return {}; }
            if (na != 1) { return m.name + ": at most one argument (SWITCH, SWITCH:PORT)"; }
            const auto parts = split(a0);
            if (!is_switch(parts[0])) { return m.name + "(" + a0 + "): '" + parts[0] + "' is not a switch"; }
            if (parts.size() >= 2 && port_of(parts[0] + ":" + parts[1]).first == SIZE_MAX) {
                return m.name + "(" + a0 + "): no port '" + parts[1] + "' on " + parts[0];
            }
            if (parts.size() == 3 && (d->args != arg_kind::sw_opt_q || parts[2].size() != 1 || parts[2][0] < '0' || parts[2][0] > '7')) {
                return m.name + "(" + a0 + "): a queue 0..7 after SWITCH:PORT";
            }
            if (parts.size() > 3) { return m.name + "(" + a0 + "): SWITCH, SWITCH:PORT or SWITCH:PORT:QUEUE"; }
            return {};
        }
        case arg_kind::sw_port_q:
        case arg_kind::sw_port_pg: {
            const auto parts = na == 1 ? split(a0) : std::vector<std::string>{};
            if (parts.size() != 3 || !is_switch(parts[0]) || port_of(parts[0] + ":" + parts[1]).first == SIZE_MAX ||
                parts[2].size() != 1 || parts[2][0] < '0' || parts[2][0] > '7') {
                return m.name + "(" + a0 + "): SWITCH:PORT:" + (d->args == arg_kind::sw_port_q ? "QUEUE" : "PG") +
                       " with an existing switch port and 0..7";
            }
            return {};
        }
    }
    return {};
}

std::string metrics::validate(const expect_metric& m) const { return check_args(m); }

std::optional<double> metrics::value(const expect_metric& m, std::string& err) const {
    if (std::string e = check_args(m); !e.empty()) {
        err = e;
        return std::nullopt;
    }
    const std::string a0 = m.args.empty() ? std::string() : m.args[0];
    const double end_ns = double(_f.now().v);
    // Switch scope: all switches, one, or one port.
    auto for_ports = [&](const std::string& scope, auto&& fn) {
        const auto parts = scope.empty() ? std::vector<std::string>{} : split(scope);
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) != node_kind::switch_node) { continue; }
            if (!parts.empty() && _f.node_name(n) != parts[0]) { continue; }
            for (std::size_t p = 0; p < _f.port_count(n); ++p) {
                if (parts.size() >= 2 && port_of(parts[0] + ":" + parts[1]).second != static_cast<int>(p)) { continue; }
                fn(n, p, parts.size() == 3 ? parts[2][0] - '0' : -1);
            }
        }
    };
    const std::string& k = m.name;
    if (k == "drops" || k == "pfcwd_storms") {
        double v = 0;
        for_ports(a0, [&](std::size_t n, std::size_t p, int) {
            auto& s = _f.switch_at(n);
            if (k == "drops") {
                v += double(sw_port_drops(s, p));
            } else {
                const auto st = s.pfc(p, _f.now());
                for (int q = 0; q < 8; ++q) { v += double(st.wd_storms[q]); }
            }
        });
        return v;
    }
    if (k == "deadlocks") { return _dl != nullptr ? double(_dl->found().size()) : 0.0; }
    if (k == "deadlocked") { return _dl != nullptr ? double(_dl->open()) : 0.0; }
    if (k == "deadlock_max") {
        std::int64_t v = 0;
        for (const dl_deadlock& d : _dl != nullptr ? _dl->found() : std::vector<dl_deadlock>{}) {
            v = std::max(v, (d.cleared.v >= 0 ? d.cleared.v : _f.now().v) - d.detected.v);
        }
        return double(v);
    }
    if (k == "credit_waits" || k == "credit_overruns") {
        // Credit mode: times a sender ran out of credits in the middle of a burst; and
        // times a receiver's class held more than its buffer (never, if the
        // credits are right).
        double v = 0;
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            for (std::size_t p = 0; p < _f.port_count(n); ++p) {
                if (k == "credit_waits") {
                    if (const auto* t = _f.credit_sender(n, static_cast<int>(p))) { v += double(t->waits); }
                } else if (const auto* r = _f.credit_receiver(n, static_cast<int>(p))) {
                    v += double(r->overruns);
                }
            }
        }
        return v;
    }
    if (k == "lossless_drops" || k == "link_drops") {
        double v = 0;
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            for (std::size_t p = 0; p < _f.port_count(n); ++p) {
                if (const auto* l = _f.tx_link(n, static_cast<int>(p))) {
                    v += double(l->counters().rx_ring_full) + (k == "link_drops" ? double(l->counters().lost) : 0.0);
                }
            }
        }
        if (k == "lossless_drops") {
            for_ports("", [&](std::size_t n, std::size_t p, int) {
                auto& s = _f.switch_at(n);
                const auto& pc = _f.switch_config(n).ports[p];
                v += double(s.counters(p).drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)]);
                for (int pr = 0; pr < 8; ++pr) {
                    if ((pc.pfc_enable >> pr & 1u) == 0) { continue; }
                    const auto q = s.queue(p, pc.maps.pfc_prio_to_queue[pr]);
                    v += double(q.drop_packets + q.wred_dropped);
                }
            });
        }
        return v;
    }
    if (k == "collectives" || k == "collective_mean" || k == "algbw" || k == "busbw") {
        // Collectives, over every generator running one: completed count,
        // mean time, and nccl-tests' algbw = S / mean time and busbw (bit/s).
        double done = 0, sum = 0, samples = 0, algbw_sum = 0, busbw_sum = 0, gens = 0;
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) != node_kind::gen_node || !_f.gen_at(n).ring()) { continue; }
            const auto c = _coll != nullptr ? (*_coll)[n] : _f.gen_at(n).collectives();
            done += double(c.done);
            double gsum = 0;
            for (const std::uint64_t t : c.ns) { gsum += double(t); }
            sum += gsum;
            samples += double(c.ns.size());
            if (!c.ns.empty() && gsum > 0) {
                const gen_cfg& g = _f.gen_config(n);
                const collective_bw bw =
                    collective_bandwidth(g.pattern, g.ring_hosts, g.sizes.fixed, gsum / double(c.ns.size()));
                algbw_sum += bw.algbw_gbps * 1e9;  // bit/s
                busbw_sum += bw.busbw_gbps * 1e9;
                gens += 1;
            }
        }
        if (k == "collectives") { return done; }
        if (samples == 0) {
            err = k + ": no collective completed";
            return std::nullopt;
        }
        if (k == "algbw") { return algbw_sum / gens; }
        if (k == "busbw") { return busbw_sum / gens; }
        return sum / samples;
    }
    if (k == "ecn_marked") {
        double v = 0;
        for_ports(a0, [&](std::size_t n, std::size_t p, int q) {
            for (int i = 0; i < 8; ++i) {
                if (q < 0 || q == i) { v += double(_f.switch_at(n).queue(p, i).ecn_marked); }
            }
        });
        return v;
    }
    if (k == "queue_peak" || k == "pg_peak") {
        double v = 0;
        for_ports(a0, [&](std::size_t n, std::size_t p, int q) {
            v = k == "queue_peak" ? double(_f.switch_at(n).queue(p, q).max_depth_bytes)
                                  : double(_f.switch_at(n).pg(p, q).peak_use);
        });
        return v;
    }
    if (k == "pfc_rx" || k == "pfc_tx") {
        const std::size_t sn = node(a0);
        if (sn != SIZE_MAX && _f.kind(sn) == node_kind::switch_node) {
            double v = 0;
            for_ports(a0, [&](std::size_t n, std::size_t p, int) {
                const auto st = _f.switch_at(n).pfc(p, _f.now());
                if (k == "pfc_tx") {
                    v += double(st.frames_sent);
                } else {
                    for (int i = 0; i < 8; ++i) { v += double(st.rx_frames[i]); }
                }
            });
            return v;
        }
        const auto [n, p] = port_of(a0);
        if (_f.kind(n) == node_kind::gen_node) {
            const auto& c = _f.gen_at(n).counters(static_cast<std::size_t>(p));
            return double(k == "pfc_tx" ? c.tx_pfc : c.rx_pfc + c.rx_pause);
        }
        const auto st = _f.switch_at(n).pfc(static_cast<std::size_t>(p), _f.now());
        if (k == "pfc_tx") { return double(st.frames_sent); }
        double v = 0;
        for (int i = 0; i < 8; ++i) { v += double(st.rx_frames[i]); }
        return v;
    }
    if (k == "busy") {
        const auto [n, p] = port_of(a0);
        const auto* l = _f.tx_link(n, p);
        if (l == nullptr) {
            err = "busy(" + a0 + "): that port has no cable";
            return std::nullopt;
        }
        // What the line carried: frames that left the wire by the end, over
        // the time they could have departed in (the run less the delay).
        const double span = end_ns - double(l->cfg().prop_delay.v);
        if (span <= 0) { return 0.0; }
        const auto& c = l->counters();
        return double(c.arrived_bytes + 24 * c.arrived) * 8 / (double(l->cfg().rate.v) * span / 1e9);
    }
    // Flow metrics.
    const auto [gn, fi] = flow(a0);
    const auto& fl = _f.gen_at(gn).flow(fi);
    const auto& rq = fl.rq.counters();
    if (k == "goodput") {
        const double span = end_ns - double(fl.cfg.start.v);
        return span > 0 ? double(fl.rs.counters().rx_bytes) * 8 / (span / 1e9) : 0.0;
    }
    if (k == "flow_fct") { return double(gen::flow_fct(fl).v); }
    if (k == "goodput_fct") { return gen::goodput_over_fct(fl); }
    if (k == "fct_p50") { return percentile(fl.fct_ns, 0.50); }
    if (k == "fct_p99") { return percentile(fl.fct_ns, 0.99); }
    if (k == "fct_max") { return fl.fct_ns.empty() ? 0.0 : double(*std::max_element(fl.fct_ns.begin(), fl.fct_ns.end())); }
    if (k == "fct_mean") {
        return fl.fct_ns.empty() ? 0.0
                                 : double(std::accumulate(fl.fct_ns.begin(), fl.fct_ns.end(), std::uint64_t{0})) /
                                       double(fl.fct_ns.size());
    }
    if (k == "messages") { return double(rq.messages_completed); }
    if (k == "naks") { return double(rq.naks_rx); }
    if (k == "retx") { return double(rq.retx_packets); }
    if (k == "timeouts") { return double(rq.timeouts); }
    if (k == "cnp_rx") { return double(fl.cnp_rx); }
    if (k == "cnp_tx") { return double(fl.cnp_tx); }
    if (k == "rate_min") { return fl.dcqcn ? fl.rp.counters().min_rate_seen_bps : double(fl.pacer.rate().v); }
    if (k == "rate_mean") { return gen::mean_pacing_rate(fl, _f.gen_config(gn), _f.now()); }
    err = "metric '" + k + "' has no reader";  // cannot happen: every def is handled above
    return std::nullopt;
}

}  // namespace rocelab::vt
