// gen_config.cpp - see gen_config.hpp.
#include "config/gen_config.hpp"
#include "config/text.hpp"
#include "config/yaml_load.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <charconv>
#include <cmath>
#include <numeric>
#include <sstream>

#include "config/units_parse.hpp"
#include "core/rng.hpp"

namespace rocelab {

namespace {

std::string norm_key(std::string k) {
    std::replace(k.begin(), k.end(), '-', '_');
    return k;
}

std::string bad(const std::string& key, const std::string& v, const std::string& accepted) {
    return key + ": \"" + v + "\" is not accepted; expected " + accepted;
}

// Whole numbers here also take hex ("0x1F": QPNs, PSNs).
std::optional<std::uint64_t> parse_uint(const std::string& s, std::uint64_t lo, std::uint64_t hi) {
    return detail::parse_uint(s, lo, hi, true);
}

// k's value v, a whole number lo..hi, into `out`; or bad(k, v, accepted).
template <class T>
std::string read_uint(T& out, const std::string& k, const std::string& v, std::uint64_t lo, std::uint64_t hi,
                      const std::string& accepted) {
    const auto n = parse_uint(v, lo, hi);
    if (!n) {
        return bad(k, v, accepted);
    }
    out = static_cast<T>(*n);
    return {};
}

std::optional<bool> parse_bool(const std::string& s) {
    if (s == "true" || s == "yes" || s == "on" || s == "1") {
        return true;
    }
    if (s == "false" || s == "no" || s == "off" || s == "0") {
        return false;
    }
    return std::nullopt;
}

std::optional<std::array<std::uint8_t, 6>> parse_mac(const std::string& s) { return detail::parse_mac(detail::trim(s)); }

// Keys that can be set per flow as well as globally.
std::string set_flow_key(qp_cfg& qp, bits_per_sec& rate, std::uint8_t& prio, nanos* start, arrival_cfg& arr,
                         gen_size_cfg& sizes, const std::string& k, const std::string& v, bool& handled) {
    handled = true;
    if (k == "pmtu") {
        auto n = parse_uint(v, 0, 1u << 20);
        if (!n || !pmtu_valid(static_cast<std::uint32_t>(*n))) {
            return bad(k, v, "256, 512, 1024, 2048 or 4096 (bytes of payload)");
        }
        qp.pmtu = static_cast<std::uint32_t>(*n);
    } else if (k == "window") {
        return read_uint(qp.window, k, v, 1, 8388607, "1..8388607 packets");
    } else if (k == "ack_timeout") {
        if (auto n = parse_uint(v, 0, 31)) {
            qp.ack_timeout = static_cast<std::uint8_t>(*n);
        } else {
            auto t = parse_time(v);
            if (!t || t->v <= 0 || t->v > ack_timeout_of(31).v) {
                return bad(k, v, "a code 0..31 (4.096us x 2^code, 0 = infinite) or a time 1ns..2.4h");
            }
            qp.ack_timeout = ack_timeout_code_for(*t);
        }
    } else if (k == "retry_cnt") {
        return read_uint(qp.retry_cnt, k, v, 0, 7, "0..7");
    } else if (k == "start_psn") {
        // The QP's first PSN: the requester's first packet and the
        // responder's expected PSN (both ends of a flow read qp.start_psn).
        auto n = parse_uint(v, 0, psn_mask);
        if (!n) {
            return bad(k, v, "0..16777215 (a 24-bit PSN; 0x prefix for hex)");
        }
        qp.start_psn = static_cast<std::uint32_t>(*n);
    } else if (k == "retry_infinite") {
        auto b = parse_bool(v);
        if (!b) {
            return bad(k, v, "true or false");
        }
        qp.retry_infinite = *b;
    } else if (k == "op") {
        if (v == "write") {
            qp.family = op_family::rdma_write;
        } else if (v == "send") {
            qp.family = op_family::send;
        } else {
            return bad(k, v, "write or send");
        }
    } else if (k == "dscp") {
        return read_uint(qp.dscp, k, v, 0, 63, "0..63");
    } else if (k == "priority") {
        return read_uint(prio, k, v, 0, 7, "0..7 (PFC priority)");
    } else if (k == "ack_every") {
        return read_uint(qp.ack_req_every, k, v, 0, 1u << 24,
                         "0..16777216 packets (0 = last packet of a message only)");
    } else if (k == "ack_coalesce") {
        return read_uint(qp.ack_coalesce, k, v, 1, 1u << 24, "1..16777216 packets");
    } else if (k == "rate" || k == "flow_rate") {
        auto r = parse_rate(v);
        if (!r || r->v == 0) {
            return bad(k, v, "a rate with units, e.g. 10Gbps or 500Mbps");
        }
        rate = *r;
    } else if (k == "start" && start != nullptr) {
        auto t = parse_time(v);
        if (!t || t->v < 0) {
            return bad(k, v, "a time >= 0 with units, e.g. 10ms");
        }
        *start = *t;
    } else if (k == "msg_size") {
        auto b = parse_bytes(v);
        if (!b || b->v > max_message_size) {
            return bad(k, v, "a size 0B..2GiB with units, e.g. 64KiB, 1MiB");
        }
        sizes.kind = size_kind::fixed;
        sizes.fixed = *b;
        qp.msg_size = *b;
    } else if (k == "size_dist") {
        if (v == "fixed") {
            sizes.kind = size_kind::fixed;
        } else if (v.rfind("uniform:", 0) == 0) {
            const auto dash = v.find('-', 8);
            if (dash == std::string::npos) {
                return bad(k, v, "uniform:LO-HI, e.g. uniform:4KiB-1MiB");
            }
            auto lo = parse_bytes(v.substr(8, dash - 8));
            auto hi = parse_bytes(v.substr(dash + 1));
            if (!lo || !hi || lo->v > hi->v || hi->v > max_message_size) {
                return bad(k, v, "uniform:LO-HI with LO <= HI <= 2GiB, e.g. uniform:4KiB-1MiB");
            }
            sizes.kind = size_kind::uniform;
            sizes.lo = *lo;
            sizes.hi = *hi;
        } else if (v.rfind("cdf:", 0) == 0) {
            std::string err;
            if (!empirical_cdf::load(v.substr(4), err)) {
                return k + ": " + err;
            }
            sizes.kind = size_kind::empirical;
            sizes.cdf_file = v.substr(4);
        } else {
            return bad(k, v, "fixed, uniform:LO-HI or cdf:FILE");
        }
    } else if (k == "arrivals") {
        if (v == "closed-loop" || v == "closed_loop") {
            arr.kind = arrival_kind::closed_loop;
        } else if (v.rfind("fixed:", 0) == 0 || v.rfind("poisson:", 0) == 0) {
            const bool pois = v[0] == 'p';
            auto t = parse_time(v.substr(pois ? 8 : 6));
            if (!t || t->v <= 0) {
                return bad(k, v, "fixed:INTERVAL or poisson:MEAN_INTERVAL with a time > 0, e.g. poisson:100us");
            }
            arr.kind = pois ? arrival_kind::poisson : arrival_kind::fixed_rate;
            arr.interval = *t;
        } else {
            return bad(k, v, "closed-loop, fixed:INTERVAL or poisson:MEAN_INTERVAL");
        }
    } else if (k == "outstanding") {
        return read_uint(arr.outstanding, k, v, 1, 512, "1..512 messages in flight");
    } else if (k == "messages") {
        return read_uint(arr.count, k, v, 0, UINT64_MAX, "a message count >= 0 (0 = unlimited)");
    } else {
        handled = false;
    }
    return {};
}

std::string parse_percent_prob(const std::string& k, const std::string& v, double& out) {
    auto p = parse_percent(v);
    if (!p || *p < 0.0 || *p > 100.0) {
        return bad(k, v, "a percentage 0%..100%, e.g. 1% or 0.1%");
    }
    out = *p / 100.0;
    return {};
}

std::string parse_pfc_tx(const std::string& v, pfc_source_cfg& s) {
    std::stringstream ss(v);
    std::string item;
    bool have_port = false;
    while (std::getline(ss, item, ',')) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) {
            return bad("pfc_tx", v, "port=P,prio=N[,prio=M],quanta=Q,interval=T,count=N,start=T");
        }
        const std::string k = item.substr(0, eq);
        const std::string x = item.substr(eq + 1);
        if (k == "port") {
            auto n = parse_uint(x, 0, 1023);
            if (!n) {
                return bad("pfc_tx.port", x, "a port index 0..1023");
            }
            s.port = static_cast<int>(*n);
            have_port = true;
        } else if (k == "prio") {
            auto n = parse_uint(x, 0, 7);
            if (!n) {
                return bad("pfc_tx.prio", x, "0..7");
            }
            s.class_enable |= static_cast<std::uint8_t>(1u << *n);
        } else if (k == "quanta") {
            auto n = parse_uint(x, 0, 65535);
            if (!n) {
                return bad("pfc_tx.quanta", x, "0..65535 (512 bit times each; 0 = XON)");
            }
            s.quanta = static_cast<std::uint16_t>(*n);
        } else if (k == "interval" || k == "start") {
            auto t = parse_time(x);
            if (!t || t->v < 0) {
                return bad("pfc_tx." + k, x, "a time >= 0 with units, e.g. 100us");
            }
            (k == "interval" ? s.interval : s.start) = *t;
        } else if (k == "count") {
            auto n = parse_uint(x, 0, UINT64_MAX);
            if (!n) {
                return bad("pfc_tx.count", x, "frames >= 0 (0 = unlimited)");
            }
            s.count = *n;
        } else {
            return bad("pfc_tx", k, "one of port, prio, quanta, interval, count, start");
        }
    }
    if (!have_port || s.class_enable == 0) {
        return bad("pfc_tx", v, "at least port=P and one prio=N");
    }
    if (s.count != 1 && s.interval.v == 0) {
        return bad("pfc_tx.interval", "0s", "an interval > 0 when count is not 1");
    }
    return {};
}

constexpr std::uint64_t max_dcqcn_rate = 1'000'000'000'000ULL;  // 1Tbps
constexpr std::int64_t max_dcqcn_time = 1'000'000'000;           // 1s

// DCQCN keys (reaction-point overrides, notification point, trace).
std::string set_dcqcn_key(gen_cfg& c, const std::string& k, const std::string& v, bool& handled) {
    handled = true;
    dcqcn_overrides& o = c.rp_overrides;
    // The value, parsed (a time or a rate), into `out` when it is lo..hi; else bad().
    auto bounded = [&](const auto& parsed, auto& out, auto lo, auto hi, const char* accepted) -> std::string {
        if (!parsed || parsed->v < lo || parsed->v > hi) {
            return bad(k, v, accepted);
        }
        out = *parsed;
        return {};
    };
    auto time_key = [&](std::optional<nanos>& out, std::int64_t lo, const char* accepted) {
        return bounded(parse_time(v), out, lo, max_dcqcn_time, accepted);
    };
    auto rate_key = [&](std::optional<bits_per_sec>& out, std::uint64_t lo, const char* accepted) {
        return bounded(parse_rate(v), out, lo, max_dcqcn_rate, accepted);
    };
    auto int_key = [&](std::optional<std::uint32_t>& out, std::uint64_t lo, std::uint64_t hi,
                       const char* accepted) -> std::string {
        std::uint32_t n = 0;
        std::string err = read_uint(n, k, v, lo, hi, accepted);
        if (err.empty()) {
            out = n;
        }
        return err;
    };
    auto bool_key = [&](std::optional<bool>& out) -> std::string {
        auto b = parse_bool(v);
        if (!b) {
            return bad(k, v, "true or false");
        }
        out = *b;
        return {};
    };
    if (k == "dcqcn") {
        if (!dcqcn_profile_parse(v, c.dcqcn)) {
            return bad(k, v, "off, dcqcn_paper, nvidia_cx or hpcc_ns3");
        }
        return {};
    }
    if (k == "rpg_time_reset") {
        return time_key(o.rpg_time_reset, 1, "a time 1ns..1s with units, e.g. 300us");
    }
    if (k == "rpg_byte_reset") {
        auto b = parse_bytes(v);
        if (!b || b->v > (1ULL << 30)) {
            return bad(k, v, "a size 0B..1GiB with units, e.g. 32767B or 32KiB (0B = byte counter off)");
        }
        o.rpg_byte_reset = *b;
        return {};
    }
    if (k == "rpg_threshold") {
        return int_key(o.rpg_threshold, 1, 31, "1..31 (increase events per stage)");
    }
    if (k == "rpg_ai_rate") {
        return rate_key(o.rpg_ai_rate, 0, "a rate 0bps..1Tbps with units, e.g. 5Mbps");
    }
    if (k == "rpg_hai_rate") {
        return rate_key(o.rpg_hai_rate, 0, "a rate 0bps..1Tbps with units, e.g. 50Mbps");
    }
    if (k == "rpg_min_rate") {
        return rate_key(o.rpg_min_rate, 1, "a rate 1bps..1Tbps with units, e.g. 1Mbps");
    }
    if (k == "rpg_max_rate") {
        return rate_key(o.rpg_max_rate, 0, "a rate 0bps..1Tbps with units (0bps = line rate), e.g. 40Gbps");
    }
    if (k == "rate_to_set_on_first_cnp") {
        return rate_key(o.rate_to_set_on_first_cnp, 0, "a rate 0bps..1Tbps with units (0bps = off), e.g. 10Gbps");
    }
    if (k == "rpg_gd") {
        return int_key(o.rpg_gd, 10, 15, "10..15 (cut = alpha x 2^(10 - rpg_gd); 11 = alpha/2)");
    }
    if (k == "rpg_min_dec_fac") {
        auto p = parse_percent(v, bare_number::accepted);
        if (!p || *p < 0.0 || *p > 100.0 || *p != std::floor(*p)) {
            return bad(k, v, "a whole percentage 0%..100%, e.g. 50%");
        }
        o.rpg_min_dec_fac = static_cast<std::uint32_t>(*p);
        return {};
    }
    if (k == "dce_tcp_g") {
        return int_key(o.dce_tcp_g, 0, 1023,
                       "0..1023 (NVIDIA fixed point: g = (1024 - value)/1024; 1019 = 5/1024, 1020 = 1/256)");
    }
    if (k == "dce_tcp_rtt") {
        return time_key(o.dce_tcp_rtt, 1, "a time 1ns..1s with units, e.g. 1us");
    }
    if (k == "initial_alpha_value") {
        return int_key(o.initial_alpha_value, 0, 1023, "0..1023 (alpha = value/1024)");
    }
    if (k == "rate_reduce_monitor_period") {
        return time_key(o.rate_reduce_monitor_period, 0, "a time 0s..1s with units (0s = cut on every CNP), e.g. 4us");
    }
    if (k == "clamp_tgt_rate") {
        return bool_key(o.clamp_tgt_rate);
    }
    if (k == "clamp_tgt_rate_after_time_inc") {
        return bool_key(o.clamp_tgt_rate_after_time_inc);
    }
    if (k == "cnp_mode") {
        if (v == "per_qp" || v == "per-qp") {
            c.cnp.mode = dcqcn_np_mode::per_qp;
        } else if (v == "per_port" || v == "per-port") {
            c.cnp.mode = dcqcn_np_mode::per_port;
        } else {
            return bad(k, v, "per_qp or per_port");
        }
        c.cnp_mode_set = true;
        return {};
    }
    if (k == "cnp_interval" || k == "min_time_between_cnps") {
        std::optional<nanos> t;
        if (auto e = time_key(t, 0, "a time 0s..1s with units, e.g. 50us"); !e.empty()) {
            return e;
        }
        (k == "cnp_interval" ? c.cnp.cnp_interval : c.cnp.min_time_between_cnps) = *t;
        return {};
    }
    if (k == "cnp_dscp" || k == "cnp_802p_prio") {
        const bool dscp = k == "cnp_dscp";
        std::optional<std::uint32_t> n;
        if (auto e = int_key(n, 0, dscp ? 63 : 7, dscp ? "0..63" : "0..7 (802.1p priority)"); !e.empty()) {
            return e;
        }
        (dscp ? c.cnp.cnp_dscp : c.cnp.cnp_802p_prio) = static_cast<std::uint8_t>(*n);
        return {};
    }
    if (k == "dcqcn_trace") {
        c.dcqcn_trace = v;
        return {};
    }
    handled = false;
    return {};
}

}  // namespace

dcqcn_cfg resolve_dcqcn(const gen_cfg& c, bits_per_sec line_rate) noexcept {
    dcqcn_cfg d = dcqcn_defaults(c.dcqcn, line_rate);
    const dcqcn_overrides& o = c.rp_overrides;
    if (o.rpg_time_reset) { d.rpg_time_reset = *o.rpg_time_reset; }
    if (o.rpg_byte_reset) { d.rpg_byte_reset = *o.rpg_byte_reset; }
    if (o.rpg_threshold) { d.rpg_threshold = *o.rpg_threshold; }
    if (o.rpg_ai_rate) { d.rpg_ai_rate = *o.rpg_ai_rate; }
    if (o.rpg_hai_rate) { d.rpg_hai_rate = *o.rpg_hai_rate; }
    if (o.rpg_min_rate) { d.rpg_min_rate = *o.rpg_min_rate; }
    if (o.rpg_max_rate) { d.rpg_max_rate = *o.rpg_max_rate; }
    if (o.rpg_gd) { d.rpg_gd = *o.rpg_gd; }
    if (o.rpg_min_dec_fac) { d.rpg_min_dec_fac = *o.rpg_min_dec_fac; }
    if (o.dce_tcp_g) { d.dce_tcp_g = (1024.0 - static_cast<double>(*o.dce_tcp_g)) / 1024.0; }
    if (o.dce_tcp_rtt) { d.dce_tcp_rtt = *o.dce_tcp_rtt; }
    if (o.initial_alpha_value) { d.initial_alpha_value = static_cast<double>(*o.initial_alpha_value) / 1024.0; }
    if (o.rate_reduce_monitor_period) { d.rate_reduce_monitor_period = *o.rate_reduce_monitor_period; }
    if (o.rate_to_set_on_first_cnp) { d.rate_to_set_on_first_cnp = *o.rate_to_set_on_first_cnp; }
    if (o.clamp_tgt_rate) { d.clamp_tgt_rate = *o.clamp_tgt_rate; }
    if (o.clamp_tgt_rate_after_time_inc) { d.clamp_tgt_rate_after_time_inc = *o.clamp_tgt_rate_after_time_inc; }
    return d;
}

dcqcn_np_cfg resolve_dcqcn_np(const gen_cfg& c) noexcept {
    dcqcn_np_cfg n = c.cnp;
    if (!c.cnp_mode_set) {
        n.mode = dcqcn_np_defaults(c.dcqcn).mode;
    }
    n.enabled = c.dcqcn != dcqcn_profile::off;
    return n;
}

const char* gen_pattern_name(gen_pattern p) noexcept {
    switch (p) {
        case gen_pattern::incast: return "incast";
        case gen_pattern::permutation: return "permutation";
        case gen_pattern::all_to_all: return "all-to-all";
        case gen_pattern::ring_allreduce: return "ring-allreduce";
        case gen_pattern::all_gather: return "all-gather";
        case gen_pattern::reduce_scatter: return "reduce-scatter";
        case gen_pattern::alltoall: return "alltoall";
        default: return "one-to-one";
    }
}

std::uint8_t ack_timeout_code_for(nanos t) noexcept {
    for (std::uint8_t c = 1; c < 31; ++c) {
        if (ack_timeout_of(c) >= t) {
            return c;
        }
    }
    return 31;
}

std::string gen_flow_set(gen_flow& f, const std::string& key, const std::string& value) {
    const std::string k = norm_key(key);
    bool handled = false;
    auto e = set_flow_key(f.qp, f.rate, f.priority, &f.start, f.arrivals, f.sizes, k, value, handled);
    if (!handled) {
        return k + ": not a per-flow key (accepted: src, dst, rate, start, msg_size, size_dist, arrivals, "
                   "outstanding, messages, pmtu, window, ack_timeout, retry_cnt, retry_infinite, start_psn, op, dscp, "
                   "priority, ack_every, ack_coalesce)";
    }
    return e;
}

std::string gen_cfg_set(gen_cfg& c, const std::string& key, const std::string& value) {
    const std::string k = norm_key(key);
    bool handled = false;
    if (k == "rate") {
        auto r = parse_rate(value);
        if (!r || r->v == 0) {
            return bad(k, value, "a rate with units, e.g. 10Gbps or 500Mbps");
        }
        c.rate = *r;
        return {};
    }
    auto e = set_flow_key(c.qp, c.flow_rate, c.priority, nullptr, c.arrivals, c.sizes, k, value, handled);
    if (handled) {
        return e;
    }
    e = set_dcqcn_key(c, k, value, handled);
    if (handled) {
        return e;
    }
    if (k == "gateway_mac") {
        auto m = parse_mac(value);
        if (!m) {
            return bad(k, value, "a MAC address xx:xx:xx:xx:xx:xx (the L3 switch's router MAC)");
        }
        c.gateway_mac = *m;
    } else if (k == "ip_version") {
        if (value != "4" && value != "6") {
            return bad(k, value, "4 or 6");
        }
        c.ip_version = value == "4" ? 4 : 6;
    } else if (k == "seed") {
        return read_uint(c.seed, k, value, 0, UINT64_MAX, "an unsigned 64-bit integer");
    } else if (k == "start") {
        auto t = parse_time(value);
        if (!t || t->v < 0) {
            return bad(k, value, "a time >= 0 with units, e.g. 10ms");
        }
        c.arrivals.start = *t;
    } else if (k == "start_stagger") {
        auto t = parse_time(value);
        if (!t || t->v < 0) {
            return bad(k, value, "a time >= 0 with units, e.g. 1ms");
        }
        c.start_stagger = *t;
    } else if (k == "pattern") {
        if (value == "one-to-one" || value == "one_to_one") {
            c.pattern = gen_pattern::one_to_one;
        } else if (value == "incast") {
            c.pattern = gen_pattern::incast;
        } else if (value == "permutation") {
            c.pattern = gen_pattern::permutation;
        } else if (value == "all-to-all" || value == "all_to_all") {
            c.pattern = gen_pattern::all_to_all;
        } else if (value == "ring-allreduce" || value == "ring_allreduce" || value == "all-reduce" ||
                   value == "all_reduce" || value == "allreduce") {
            c.pattern = gen_pattern::ring_allreduce;
        } else if (value == "all-gather" || value == "all_gather" || value == "allgather") {
            c.pattern = gen_pattern::all_gather;
        } else if (value == "reduce-scatter" || value == "reduce_scatter" || value == "reducescatter") {
            c.pattern = gen_pattern::reduce_scatter;
        } else if (value == "alltoall") {
            c.pattern = gen_pattern::alltoall;
        } else {
            return bad(k, value,
                       "one-to-one, incast, permutation, all-to-all (traffic); ring-allreduce (all-reduce), "
                       "all-gather, reduce-scatter or alltoall (collectives)");
        }
    } else if (k == "senders") {
        return read_uint(c.senders, k, value, 1, 4096, "1..4096");
    } else if (k == "planes") {
        return read_uint(c.planes, k, value, 1, 64, "1..64 (NIC ports per server, each in its own plane)");
    } else if (k == "striping") {
        if (value != "static" && value != "weighted") {
            return bad(k, value, "static (the buffer split evenly over the planes) or weighted (by each plane's throughput)");
        }
        c.striping_weighted = value == "weighted";
    } else if (k == "loss") {
        return parse_percent_prob(k, value, c.data_loss.p);
    } else if (k == "ack_loss") {
        return parse_percent_prob(k, value, c.ack_loss.p);
    } else if (k == "link_delay") {
        auto t = parse_time(value);
        if (!t || t->v < 0 || t->v > 1'000'000'000) {
            return bad(k, value, "a time 0s..1s with units, e.g. 100us");
        }
        c.link_delay = *t;
    } else if (k == "duration") {
        auto t = parse_time(value);
        if (!t || t->v <= 0) {
            return bad(k, value, "a time > 0 with units, e.g. 2s or 500ms");
        }
        c.duration = *t;
    } else if (k == "mbufs") {
        return read_uint(c.mbufs, k, value, 1024, 1u << 22, "1024..4194304");
    } else if (k == "pfc_tx") {
        pfc_source_cfg s;
        if (auto err = parse_pfc_tx(value, s); !err.empty()) {
            return err;
        }
        c.pfc_sources.push_back(s);
    } else {
        return "unknown option or key '" + key + "' (see --help or docs/generator.md)";
    }
    return {};
}

std::string expand_gen_cfg(gen_cfg& c, int nports) {
    if (nports < 1) {
        return "no ports";
    }
    for (const auto& s : c.pfc_sources) {
        if (s.port >= nports) {
            return "pfc_tx.port: " + std::to_string(s.port) + " is out of range; accepted: 0.." +
                   std::to_string(nports - 1);
        }
    }
    const bool v6 = c.ip_version == 6;
    auto mk_host = [v6, &c](int port, int idx) {
        gen_host h;
        h.port = port;
        if (static_cast<std::size_t>(port) < c.port_host_names.size()) {
            h.name = c.port_host_names[static_cast<std::size_t>(port)];
        } else {
            h.name = "h";
            h.name += std::to_string(port);
        }
        if (idx != 0) {
            h.name += '_';
            h.name += std::to_string(idx);
        }
        h.mac = {0x02, 0x00, 0x00, static_cast<std::uint8_t>(port >> 8), static_cast<std::uint8_t>(port),
                 static_cast<std::uint8_t>(idx + 1)};
        h.ip = (10u << 24) | (static_cast<std::uint32_t>(port & 0xFF) << 16) |
               (static_cast<std::uint32_t>(idx >> 8) << 8) | static_cast<std::uint32_t>((idx & 0xFF) + 1);
        if (v6) {  // fc00::<port>:<idx + 1>
            h.v6 = true;
            h.ip = 0;
            h.ip6 = {0xfc, 0x00};
            h.ip6[12] = static_cast<std::uint8_t>(port >> 8);
            h.ip6[13] = static_cast<std::uint8_t>(port);
            h.ip6[14] = static_cast<std::uint8_t>((idx + 1) >> 8);
            h.ip6[15] = static_cast<std::uint8_t>(idx + 1);
        }
        return h;
    };
    auto base_flow = [&](int s, int d, int i) {
        gen_flow f;
        f.src_host = s;
        f.dst_host = d;
        f.qp = c.qp;
        f.rate = c.flow_rate;
        f.priority = c.priority;
        f.arrivals = c.arrivals;
        f.sizes = c.sizes;
        f.qp.msg_size = c.sizes.fixed;
        f.start = nanos{c.arrivals.start.v + i * c.start_stagger.v};
        return f;
    };
    c.flows.clear();
    if (c.hosts_generated) {  // a second expansion starts from the explicit hosts again
        c.hosts.clear();
        c.hosts_generated = false;
    }
    c.ring_hosts = c.ring_steps = 0;
    c.ring_chunk = c.ring_collectives = 0;
    std::vector<std::pair<int, int>> pairs;
    const bool collective = is_collective(c.pattern);
    const std::string pname = gen_pattern_name(c.pattern);
    if (c.planes > 1 && (!collective || c.pattern == gen_pattern::alltoall)) {
        return "planes " + std::to_string(c.planes) + ": planes stripe a ring collective (ring-allreduce, all-gather, "
               "reduce-scatter), not pattern " + pname;
    }
    if (c.striping_weighted && c.planes < 2) {
        return "striping weighted: needs planes >= 2 (a server's NIC ports, each in its own plane)";
    }
    if (collective) {
        // A collective builds its own flows and gates its own messages.
        if (!c.flow_specs.empty()) {
            return "pattern " + pname + " builds its flows (one host per port); remove flows:";
        }
        if (c.sizes.kind != size_kind::fixed || c.sizes.fixed.v == 0) {
            return "pattern " + pname + ": msg_size must be a fixed size > 0 (the collective's buffer; every "
                   "message is one chunk of msg_size / hosts)";
        }
        if (c.arrivals.kind != arrival_kind::closed_loop) {
            return "pattern " + pname + ": arrivals must be closed-loop (each step waits for the previous one)";
        }
    }
    for (const auto& h : c.hosts) {
        if (h.port >= nports) {
            return "hosts." + h.name + ".port: " + std::to_string(h.port) + " is out of range; accepted: 0.." +
                   std::to_string(nports - 1);
        }
    }
    if (!c.flow_specs.empty()) {
        if (c.hosts.empty()) {
            for (int p = 0; p < nports; ++p) {
                c.hosts.push_back(mk_host(p, 0));
            }
            c.hosts_generated = true;
        }
        auto find = [&](const std::string& n) -> int {
            for (std::size_t i = 0; i < c.hosts.size(); ++i) {
                if (c.hosts[i].name == n) {
                    return static_cast<int>(i);
                }
            }
            return -1;
        };
        int i = 0;
        for (const auto& fs : c.flow_specs) {
            const int s = find(fs.src);
            const int d = find(fs.dst);
            const std::string where = c.source + ":" + std::to_string(fs.line) + ": flows[" + std::to_string(i) + "]";
            if (s < 0 || d < 0) {
                return where + ": unknown host '" + (s < 0 ? fs.src : fs.dst) + "' (hosts are named in hosts:)";
            }
            gen_flow f = base_flow(s, d, i);
            f.name = fs.name;
            for (const auto& [k, v] : fs.overrides) {
                if (auto e = gen_flow_set(f, k, v); !e.empty()) {
                    return where + "." + e;
                }
            }
            c.flows.push_back(std::move(f));
            ++i;
        }
    } else {
        // The pattern's places: the explicit hosts when given (host i in the
        // place of port i; their own addresses), else one host per port.
        const bool given = !c.hosts.empty();
        c.hosts_generated = !given;
        const int places = given ? static_cast<int>(c.hosts.size()) : nports;
        const int last = places - 1;
        if (c.planes > 1 && (places % static_cast<int>(c.planes) != 0 || places / static_cast<int>(c.planes) < 2)) {
            return "planes " + std::to_string(c.planes) + ": " + std::to_string(places) +
                   " hosts are not whole servers of one host per plane (host i is server i / planes in plane "
                   "i % planes; at least 2 servers)";
        }
        if (places < 2) {
            return "pattern " + pname +
                   (given ? " needs at least 2 hosts" :
                            " needs at least 2 ports (sender and receiver on different ports); add a --vdev or "
                            "--loopback-pairs 1");
        }
        // Without explicit hosts, one-to-one has a host on the first and the
        // last port, incast the receiver on the last port and a host per
        // sender spread over the others; the other patterns one per port.
        if (!given && (c.pattern == gen_pattern::one_to_one || c.pattern == gen_pattern::incast)) {
            c.hosts.push_back(mk_host(c.pattern == gen_pattern::incast ? last : 0, 0));
            if (c.pattern == gen_pattern::one_to_one) {
                c.hosts.push_back(mk_host(last, 0));
            }
        } else if (!given) {
            for (int p = 0; p < nports; ++p) {
                c.hosts.push_back(mk_host(p, 0));
            }
        }
        switch (c.pattern) {
            case gen_pattern::one_to_one:
                for (std::uint32_t i = 0; i < c.senders; ++i) {
                    pairs.emplace_back(0, given ? last : 1);
                }
                break;
            case gen_pattern::incast: {
                // The senders, spread over the other places (explicit hosts
                // send several QPs each).
                std::vector<int> per_port(static_cast<std::size_t>(last), 0);
                for (std::uint32_t i = 0; i < c.senders; ++i) {
                    const int p = static_cast<int>(i % static_cast<std::uint32_t>(last));
                    if (given) {
                        pairs.emplace_back(p, last);
                    } else {
                        c.hosts.push_back(mk_host(p, per_port[p]++));
                        pairs.emplace_back(static_cast<int>(c.hosts.size() - 1), 0);
                    }
                }
                break;
            }
            case gen_pattern::all_to_all:
            case gen_pattern::alltoall:
                for (int s = 0; s < places; ++s) {
                    for (int d = 0; d < places; ++d) {
                        if (s != d) {
                            pairs.emplace_back(s, d);
                        }
                    }
                }
                break;
            case gen_pattern::permutation: {
                // Seeded derangement (Sattolo's algorithm gives one cycle: nobody sends to itself).
                std::vector<int> perm(static_cast<std::size_t>(places));
                std::iota(perm.begin(), perm.end(), 0);
                rng r{c.seed};
                for (int i = places - 1; i > 0; --i) {
                    const int j = static_cast<int>(r.next() % static_cast<std::uint64_t>(i));
                    std::swap(perm[i], perm[j]);
                }
                for (int s = 0; s < places; ++s) {
                    pairs.emplace_back(s, perm[s]);
                }
                break;
            }
            case gen_pattern::ring_allreduce:
            case gen_pattern::all_gather:
            case gen_pattern::reduce_scatter: {
                // One ring per plane over the servers (planes = 1: one ring over the hosts).
                const int np = static_cast<int>(c.planes);
                const int servers = places / np;
                for (int k = 0; k < np; ++k) {
                    for (int s = 0; s < servers; ++s) {
                        pairs.emplace_back(s * np + k, ((s + 1) % servers) * np + k);
                    }
                }
                break;
            }
        }
        if (collective) {
            std::vector<bool> used(static_cast<std::size_t>(nports), false);
            for (int h = 0; h < places; ++h) {
                const int port = c.hosts[static_cast<std::size_t>(h)].port;
                if (used[static_cast<std::size_t>(port)]) {
                    return "pattern " + pname + ": hosts " + c.hosts[static_cast<std::size_t>(h)].name +
                           " and another host share port " + std::to_string(port) + "; a collective needs one host per port";
                }
                used[static_cast<std::size_t>(port)] = true;
            }
            const int ranks = places / static_cast<int>(c.planes);  // servers
            const auto h = static_cast<std::uint64_t>(ranks) * c.planes;  // a chunk per rank, striped over the planes
            c.ring_hosts = static_cast<std::uint32_t>(ranks);
            c.ring_steps = c.pattern == gen_pattern::ring_allreduce ? static_cast<std::uint32_t>(2 * (ranks - 1))
                           : c.pattern == gen_pattern::alltoall     ? 1u
                                                                    : static_cast<std::uint32_t>(ranks - 1);
            c.ring_chunk = ((c.sizes.fixed.v + h - 1) / h + 3) & ~std::uint64_t{3};
            c.ring_collectives = c.arrivals.count;
        }
        int i = 0;
        for (auto [s, d] : pairs) {
            c.flows.push_back(base_flow(s, d, i++));
            c.flows.back().plane = static_cast<std::uint32_t>(s) % c.planes;
            c.flows.back().server = static_cast<std::uint32_t>(s) / c.planes;
            if (collective) {
                // One chunk per step, one step in flight; messages = collectives x steps.
                gen_flow& f = c.flows.back();
                f.sizes.fixed = bytes{c.ring_chunk};
                f.arrivals.outstanding = 1;
                f.arrivals.count = c.ring_collectives * c.ring_steps;
                f.start = c.arrivals.start;  // a collective starts everywhere at once
            }
        }
    }
    if (c.gateway_mac) {
        for (auto& h : c.hosts) {
            if (!h.gateway) { h.gateway = c.gateway_mac; }
        }
    }
    // QPNs: requester 0x100 + 2i, responder 0x101 + 2i; names.
    for (std::size_t i = 0; i < c.flows.size(); ++i) {
        auto& f = c.flows[i];
        if (c.hosts[f.src_host].port == c.hosts[f.dst_host].port) {
            return "flow " + std::to_string(i) + ": source and destination hosts are on the same port " +
                   std::to_string(c.hosts[f.src_host].port) + " (frames leave one port and arrive on another)";
        }
        if (c.hosts[f.src_host].v6 != c.hosts[f.dst_host].v6) {
            return "flow " + std::to_string(i) + ": hosts " + c.hosts[f.src_host].name + " and " +
                   c.hosts[f.dst_host].name + " have addresses of different families (IPv4 and IPv6)";
        }
        f.qp.src_qpn = static_cast<std::uint32_t>(0x100 + 2 * i);
        f.qp.dst_qpn = static_cast<std::uint32_t>(0x101 + 2 * i);
        f.qp.msg_size = f.sizes.fixed;
        if (f.name.empty()) {
            f.name = c.hosts[f.src_host].name + "->" + c.hosts[f.dst_host].name + "#" + std::to_string(i);
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (c.flows[j].name == f.name) {
                return "flows: the name '" + f.name + "' is used twice";
            }
        }
        if (auto e = qp_cfg_check(f.qp); !e.empty()) {
            return "flow " + f.name + ": " + e;
        }
    }
    if (c.flows.empty()) {
        return "no flows";
    }
    return {};
}

result<gen_cfg> load_gen_cfg_from_string(const std::string& yaml, const std::string& source) noexcept {
    try {
        return detail::gen_cfg_from_yaml(YAML::Load(yaml), source);
    } catch (const YAML::Exception& e) {
        return config_error{source + ":" + std::to_string(e.mark.line + 1) + ": YAML: " + e.msg};
    } catch (const std::exception& e) {
        return config_error{source + ": " + e.what()};
    }
}

result<gen_cfg> detail::gen_cfg_from_yaml(const YAML::Node& root, const std::string& source) noexcept {
    auto where = [&](const YAML::Mark& m) {
        return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
    };
    try {
        gen_cfg c;
        c.source = source;
        if (!root.IsMap()) {
            return config_error{source + ": expected a map of keys (seed, rate, pattern, flows, ...)"};
        }
        for (const auto& kv : root) {
            const std::string k = norm_key(kv.first.as<std::string>());
            const YAML::Node& v = kv.second;
            if (k == "hosts") {
                if (!v.IsSequence()) {
                    return config_error{where(v.Mark()) + "hosts: expected a list of {name, port, mac, ip}"};
                }
                for (const auto& h : v) {
                    gen_host g;
                    if (!h["name"] || !h["port"]) {
                        return config_error{where(h.Mark()) + "hosts[]: name and port are required"};
                    }
                    g.name = h["name"].as<std::string>();
                    // Up to 65535: a scenario's hosts are one generator's
                    // ports (2048 in a 256 x 8 multi-plane fabric).
                    auto p = detail::parse_uint(h["port"].as<std::string>(), 0, 65535, true);
                    if (!p) {
                        return config_error{where(h["port"].Mark()) + "hosts." + g.name +
                                            ".port: expected 0..65535"};
                    }
                    g.port = static_cast<int>(*p);
                    const int idx = static_cast<int>(c.hosts.size());
                    g.mac = {0x02,
                             0x00,
                             0x00,
                             static_cast<std::uint8_t>(g.port >> 8),
                             static_cast<std::uint8_t>(g.port),
                             static_cast<std::uint8_t>(idx + 1)};
                    g.ip = (10u << 24) | (static_cast<std::uint32_t>(g.port & 0xFF) << 16) |
                           static_cast<std::uint32_t>(idx + 1);
                    // hosts.<name>.<key>, a MAC address, into `out` when given; else its error.
                    const auto host_mac = [&](const char* key, const char* expected,
                                              auto& out) -> std::optional<config_error> {
                        if (h[key]) {
                            auto m = detail::parse_mac(detail::trim(h[key].as<std::string>()));
                            if (!m) {
                                return config_error{where(h[key].Mark()) + "hosts." + g.name + "." + key +
                                                    ": expected " + expected};
                            }
                            out = *m;
                        }
                        return std::nullopt;
                    };
                    if (auto e = host_mac("mac", "xx:xx:xx:xx:xx:xx", g.mac)) {
                        return *e;
                    }
                    if (auto e = host_mac("gateway", "the router's MAC xx:xx:xx:xx:xx:xx", g.gateway)) {
                        return *e;
                    }
                    if (h["ip"]) {
                        const std::string t = h["ip"].as<std::string>();
                        const auto a = detail::parse_ip_address(t);  // the switch's parser (INTERFACE, NEIGH)
                        if (!a) {
                            return config_error{where(h["ip"].Mark()) + "hosts." + g.name + ".ip: '" + t +
                                                "' is not an address; expected IPv4 a.b.c.d or IPv6 (fc00::1)"};
                        }
                        g.v6 = a->v6;
                        if (a->v6) {
                            g.ip = 0;
                            g.ip6 = a->bytes;
                        } else {
                            g.ip = (std::uint32_t{a->bytes[0]} << 24) | (std::uint32_t{a->bytes[1]} << 16) |
                                   (std::uint32_t{a->bytes[2]} << 8) | a->bytes[3];
                        }
                    }
                    c.hosts.push_back(std::move(g));
                }
            } else if (k == "flows") {
                if (!v.IsSequence()) {
                    return config_error{where(v.Mark()) + "flows: expected a list of {src, dst, ...}"};
                }
                for (const auto& f : v) {
                    gen_flow_spec s;
                    s.line = f.Mark().line + 1;
                    if (!f.IsMap() || !f["src"] || !f["dst"]) {
                        return config_error{where(f.Mark()) + "flows[]: src and dst (host names) are required"};
                    }
                    for (const auto& fkv : f) {
                        const std::string fk = norm_key(fkv.first.as<std::string>());
                        const std::string fv = fkv.second.as<std::string>();
                        if (fk == "name") {
                            s.name = fv;
                        } else if (fk == "src") {
                            s.src = fv;
                        } else if (fk == "dst") {
                            s.dst = fv;
                        } else {
                            gen_flow probe;
                            if (auto e = gen_flow_set(probe, fk, fv); !e.empty()) {
                                return config_error{where(fkv.first.Mark()) + "flows[]." + e};
                            }
                            s.overrides.emplace_back(fk, fv);
                        }
                    }
                    c.flow_specs.push_back(std::move(s));
                }
            } else if (k == "pfc_tx" && v.IsSequence()) {
                for (const auto& x : v) {
                    if (auto e = gen_cfg_set(c, k, x.as<std::string>()); !e.empty()) {
                        return config_error{where(x.Mark()) + e};
                    }
                }
            } else if (v.IsScalar()) {
                if (auto e = gen_cfg_set(c, k, v.as<std::string>()); !e.empty()) {
                    return config_error{where(kv.first.Mark()) + e};
                }
            } else {
                return config_error{where(kv.first.Mark()) + k + ": expected a value (a scalar with units)"};
            }
        }
        return c;
    } catch (const YAML::Exception& e) {
        return config_error{source + ":" + std::to_string(e.mark.line + 1) + ": YAML: " + e.msg};
    } catch (const std::exception& e) {
        return config_error{source + ": " + e.what()};
    }
}

result<gen_cfg> load_gen_cfg(const std::string& path) noexcept {
    try {
        std::ifstream f(path);
        if (!f) {
            return config_error{path + ": cannot open"};
        }
        std::stringstream ss;
        ss << f.rdbuf();
        return load_gen_cfg_from_string(ss.str(), path);
    } catch (const std::exception& e) {
        return config_error{path + ": " + e.what()};
    }
}

}  // namespace rocelab
