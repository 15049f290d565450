// dcqcn.hpp - DCQCN reaction point (per-QP rate controller) and notification
// point (CE -> CNP), as pure state machines with the clock injected.
//
// What (reference sec. 4): the RP keeps a current rate R_C, a target rate R_T
// and alpha per QP. CNPs cut R_C (R_C x (1 - alpha x 2^(10 - rpg_gd)), i.e.
// alpha/2 for rpg_gd 11), increase events (a timer every rpg_time_reset and a
// byte counter every rpg_byte_reset bytes sent) bring it back: fast recovery
// R_C = (R_T + R_C)/2, then additive (R_T += rpg_ai_rate) and hyper
// (R_T += rpg_hai_rate, or i x rpg_hai_rate) increase. The NP turns
// ECN-CE-marked arrivals into CNPs at a bounded rate.
// One dcqcn_cfg expresses the variants of reference 4.6; dcqcn_defaults()
// fills it for a profile:
//   dcqcn_paper  4.2: cut on every CNP (old alpha, then alpha = (1-g)a + g),
//                R_T = R_C on every cut, alpha decays every K = 55us without
//                a CNP, timer 55us + byte counter 10MB, F = 5, R_AI 40Mbps,
//                R_HAI 200Mbps x i (i = min(T, BC) - F), floor 100Mbps.
//   nvidia_cx    4.3: CNPs set flags; alpha runs on a 1us timer
//                (g = 5/1024, alpha = 1023/1024 on the first CNP); at most one
//                cut per 4us window; timer 300us + byte counter 32767B,
//                F = rpg_threshold 1, R_AI 5Mbps, R_HAI 50Mbps (x i, as
//                802.1Qau), floor 1Mbps and 50 % per cut, R_T = R_C at a cut
//                only after an increase event (clamp_tgt_rate_after_time_inc).
//   hpcc_ns3     4.4 (run.py `dcqcn`): like nvidia_cx but g = 1/256, alpha 1
//                on the first CNP, the decrease check 4us + 1ns after the
//                first CNP and every 4us, timer 300us only, F = 1, stage rule
//                stage<F FR / ==F AI once / >F HAI, constant R_HAI,
//                R_AI = line/5000, R_HAI = line/500, floor 1000Mbps. Its NP
//                (dcqcn_np_defaults) answers every CE-marked packet: ns-3
//                ACKs every packet (L2_ACK_INTERVAL 1) and flags the ACK of a
//                CE-marked one as a CNP (docs/dcqcn.md, "hpcc_ns3 and ns-3").
//   off          rate() is the line rate; CNPs are only counted.
//
// Timers are deadlines, never callbacks: every entry point takes `now`, first
// runs the timers due at or before `now` in time order (ties: alpha tick,
// then rate-increase timer, then decrease check - the order of the HPCC ns-3
// event queue), then handles its own event. advance() returns the next time
// the rate can change (nanos::max() when none); alpha ticks are applied
// lazily (exactly, k ticks as (1-g)^k) whenever time is passed in, so they are
// never deadlines: a QP at line rate costs nothing. All timers start at the
// first CNP; the increase timer stops once R_C and R_T are both at the cap
// (nothing an increase could change). The first CNP is the QP's first ever.
//
// Stage rules (where FR/AI/HAI boundaries fall; T timer events, BC byte
// events since the last cut, counted including the current event):
//   qcn          FR while max(T, BC) <= F; HAI when min(T, BC) > F with
//                i = min(T, BC) - F; AI otherwise. With the byte counter off
//                BC stays 0, so there is no HAI (reference 4.7 oracle).
//   timer_stage  s = increase events before this one: s < F FR, s == F AI
//                (once), s > F HAI with i = s - F (HPCC ns-3).
//
// Params (dcqcn_cfg; NVIDIA's names where one exists): see the struct.
// Counters (dcqcn_rp_counters): cnps_rx, cuts, cuts_at_min_rate, cnps_merged
//   (CNPs folded into a window's single cut), timer_events, byte_events,
//   fast_recovery, additive_increase, hyper_increase, min_rate_seen_bps.
// NP counters (dcqcn_np_counters): ce_rx, cnp_tx, cnp_deferred,
//   cnp_suppressed; always ce_rx == cnp_tx + cnp_suppressed + pending().
//
// Config example (rocelab-gen, docs/generator.md "DCQCN"):
//   dcqcn: nvidia_cx
//   rpg_time_reset: 300us
//   rpg_ai_rate: 5Mbps
//   rate_reduce_monitor_period: 4us
//   cnp_mode: per_qp
//   cnp_interval: 50us
//
// Use:
//   dcqcn_rp rp{dcqcn_defaults(dcqcn_profile::nvidia_cx, bits_per_sec{100'000'000'000})};
//   rp.on_cnp(now);                          // a CNP for this QP arrived
//   rp.on_sent(now, bytes{len});             // after each data packet
//   deadline = rp.advance(now);              // when now >= deadline
//   if (rp.take_rate_changed()) { shaper.set_rate(rp.rate()); }
//
// Nothing here allocates, throws, locks or logs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/units.hpp"

namespace rocelab {

enum class dcqcn_profile : std::uint8_t { off, dcqcn_paper, nvidia_cx, hpcc_ns3 };
// By enum value: the names printed and parsed.
inline constexpr const char* dcqcn_profile_names[] = {"off", "dcqcn_paper", "nvidia_cx", "hpcc_ns3"};

constexpr const char* dcqcn_profile_name(dcqcn_profile p) noexcept {
    const auto i = static_cast<std::size_t>(p);
    return i < std::size(dcqcn_profile_names) ? dcqcn_profile_names[i] : "?";
}

// "off", "dcqcn_paper", "nvidia_cx", "hpcc_ns3" (dashes accepted for
// underscores); false for anything else.
constexpr bool dcqcn_profile_parse(std::string_view s, dcqcn_profile& out) noexcept {
    auto eq = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) { return false; }
        for (std::size_t i = 0; i < a.size(); ++i) {
            const char c = a[i] == '-' ? '_' : a[i];
            if (c != b[i]) { return false; }
        }
        return true;
    };
    for (std::size_t i = 0; i < std::size(dcqcn_profile_names); ++i) {
        if (eq(s, dcqcn_profile_names[i])) {
            out = static_cast<dcqcn_profile>(i);
            return true;
        }
    }
    return false;
}

// When alpha is updated.
enum class dcqcn_alpha_mode : std::uint8_t {
    cut_then_update,  // paper: at each cut, cut with the old alpha, then EWMA; decay every
                      // dce_tcp_rtt (K) after the last cut
    update_then_cut,  // ns3-rdma: EWMA first, then cut; decay as above
    periodic,         // NVIDIA / HPCC: every dce_tcp_rtt from the first CNP, EWMA with +g if a
                      // CNP arrived in the period, else decay
};

enum class dcqcn_stage_rule : std::uint8_t { qcn, timer_stage };  // see the doc block
enum class dcqcn_hai_step : std::uint8_t { multiplied, constant };  // i x R_HAI or R_HAI

struct dcqcn_cfg {
    dcqcn_profile profile = dcqcn_profile::nvidia_cx;
    bool enabled = true;                          // false: rate() is always line_rate
    bits_per_sec line_rate{0};                    // start rate and cap
    // Increase.
    nanos rpg_time_reset{300'000};                // rate-increase timer period
    bytes rpg_byte_reset{32767};                  // byte counter period; 0 = byte counter off
    std::uint32_t rpg_threshold = 1;              // F, fast-recovery stages
    bits_per_sec rpg_ai_rate{5'000'000};          // R_AI
    bits_per_sec rpg_hai_rate{50'000'000};        // R_HAI
    bits_per_sec rpg_max_rate{0};                 // cap; 0 = line rate
    // Decrease.
    bits_per_sec rpg_min_rate{1'000'000};         // floor
    std::uint32_t rpg_gd = 11;                    // cut = alpha x 2^(10 - rpg_gd); 11 -> alpha/2
    std::uint32_t rpg_min_dec_fac = 50;           // percent: a cut keeps >= this % of the rate
    nanos rate_reduce_monitor_period{4000};       // one cut per period with >= 1 CNP; 0 = every CNP
    nanos rate_reduce_offset{0};                  // first decrease check: first CNP + period + this
    bits_per_sec rate_to_set_on_first_cnp{0};     // R_C = R_T = this on the first CNP; 0 = off
    bool clamp_tgt_rate = false;                  // R_T = R_C at every cut
    bool clamp_tgt_rate_after_time_inc = true;    // R_T = R_C at a cut after an increase event
    // Alpha.
    double dce_tcp_g = 5.0 / 1024.0;              // EWMA gain g
    nanos dce_tcp_rtt{1000};                      // alpha period (paper: K)
    double initial_alpha_value = 1023.0 / 1024.0; // before / at the first CNP
    // Variant switches.
    dcqcn_alpha_mode alpha_mode = dcqcn_alpha_mode::periodic;
    dcqcn_stage_rule stage_rule = dcqcn_stage_rule::qcn;
    dcqcn_hai_step hai_step = dcqcn_hai_step::multiplied;
};

// A profile's parameters at a line rate (doc block; docs/generator.md): one
// row per parameter, its dcqcn_paper and hpcc_ns3 values side by side;
// nvidia_cx (and off, which uses none of them) keeps the struct's defaults.
inline dcqcn_cfg dcqcn_defaults(dcqcn_profile p, bits_per_sec line_rate) noexcept {
    dcqcn_cfg c{};  // the struct defaults are nvidia_cx
    c.profile = p;
    c.enabled = p != dcqcn_profile::off;
    c.line_rate = line_rate;
    const auto set = [p](auto& field, auto paper, auto ns3) {
        if (p == dcqcn_profile::dcqcn_paper) {
            field = paper;
        } else if (p == dcqcn_profile::hpcc_ns3) {
            field = ns3;
        }
    };
    // clang-format off
    // hpcc_ns3: R_AI = 5Mbps x bw/25Gbps, R_HAI = 50Mbps x bw/25Gbps.
    //  parameter                        dcqcn_paper                        hpcc_ns3
    set(c.rpg_time_reset,                nanos{55'000},                     nanos{300'000});
    set(c.rpg_byte_reset,                bytes{10'000'000},                 bytes{0});
    set(c.rpg_threshold,                 5u,                                1u);
    set(c.rpg_ai_rate,                   bits_per_sec{40'000'000},          bits_per_sec{line_rate.v / 5000});
    set(c.rpg_hai_rate,                  bits_per_sec{200'000'000},         bits_per_sec{line_rate.v / 500});
    set(c.rpg_min_rate,                  bits_per_sec{100'000'000},         bits_per_sec{1'000'000'000});
    set(c.rpg_min_dec_fac,               0u,                                0u);
    set(c.rate_reduce_monitor_period,    nanos{0},                          nanos{4000});
    set(c.rate_reduce_offset,            nanos{0},                          nanos{1});
    set(c.clamp_tgt_rate,                true,                              false);
    set(c.clamp_tgt_rate_after_time_inc, false,                             true);
    set(c.dce_tcp_g,                     1.0 / 256.0,                       1.0 / 256.0);
    set(c.dce_tcp_rtt,                   nanos{55'000},                     nanos{1000});
    set(c.initial_alpha_value,           1.0,                               1.0);
    set(c.alpha_mode,                    dcqcn_alpha_mode::cut_then_update, dcqcn_alpha_mode::periodic);
    set(c.stage_rule,                    dcqcn_stage_rule::qcn,             dcqcn_stage_rule::timer_stage);
    set(c.hai_step,                      dcqcn_hai_step::multiplied,        dcqcn_hai_step::constant);
    // clang-format on
    return c;
}

enum class dcqcn_event : std::uint8_t { cnp, cut, alpha, fast_recovery, additive, hyper };

constexpr const char* dcqcn_event_name(dcqcn_event e) noexcept {
    switch (e) {
        case dcqcn_event::cnp: return "cnp";
        case dcqcn_event::cut: return "cut";
        case dcqcn_event::alpha: return "alpha";
        case dcqcn_event::fast_recovery: return "fast_recovery";
        case dcqcn_event::additive: return "additive";
        default: return "hyper";
    }
}

// One trace record: the state right after the event at time t. `alpha`
// records are written for EWMA updates with a CNP (periodic mode) and for the
// K-timer decays of the paper modes, not for the periodic decays.
struct dcqcn_trace_rec {
    nanos t{};
    double rc_bps = 0;  // R_C, bits/s
    double rt_bps = 0;  // R_T, bits/s
    double alpha = 0;
    dcqcn_event ev = dcqcn_event::cnp;
};

// Caller-owned, fixed-capacity trace buffer over caller storage. Records that
// find it full are counted in `dropped`; the caller drains with records() and
// clear().
class dcqcn_trace_buf {
public:
    explicit dcqcn_trace_buf(std::span<dcqcn_trace_rec> storage) noexcept : _s(storage) {}
    void push(const dcqcn_trace_rec& r) noexcept {
        if (_n < _s.size()) {
            _s[_n++] = r;
        } else {
            ++_dropped;
        }
    }
    std::span<const dcqcn_trace_rec> records() const noexcept { return _s.first(_n); }
    void clear() noexcept { _n = 0; }
    std::uint64_t dropped() const noexcept { return _dropped; }

private:
    std::span<dcqcn_trace_rec> _s;
    std::size_t _n = 0;
    std::uint64_t _dropped = 0;
};

struct dcqcn_rp_counters {
    std::uint64_t cnps_rx = 0;
    std::uint64_t cuts = 0;              // rate decreases applied (first-CNP rate set included)
    std::uint64_t cuts_at_min_rate = 0;  // cuts that ended on rpg_min_rate
    std::uint64_t cnps_merged = 0;       // CNPs that found a decrease already pending
    std::uint64_t timer_events = 0;
    std::uint64_t byte_events = 0;
    std::uint64_t fast_recovery = 0;
    std::uint64_t additive_increase = 0;
    std::uint64_t hyper_increase = 0;
    double min_rate_seen_bps = 0;        // lowest R_C so far (the start rate until the first cut)
};

// Reaction point of one QP.
class dcqcn_rp {
public:
    explicit dcqcn_rp(const dcqcn_cfg& cfg) noexcept : _c(cfg) {
        // Periods must be positive (config validation guarantees it; a zero
        // period here would spin).
        _c.rpg_time_reset = std::max(_c.rpg_time_reset, nanos{1});
        _c.dce_tcp_rtt = std::max(_c.dce_tcp_rtt, nanos{1});
        _c.rate_reduce_monitor_period = std::max(_c.rate_reduce_monitor_period, nanos{0});
        _line = static_cast<double>(cfg.line_rate.v);
        _cap = cfg.rpg_max_rate.v != 0 ? std::min(_line, static_cast<double>(cfg.rpg_max_rate.v)) : _line;
        _floor = std::min(static_cast<double>(cfg.rpg_min_rate.v), _cap);
        _rc = _rt = _last_rc = _cap;  // a flow starts at line rate (rpg_max_rate if lower)
        _alpha = cfg.initial_alpha_value;
        _k.min_rate_seen_bps = _cap;
    }

    void set_trace(dcqcn_trace_buf* t) noexcept { _trace = t; }

    // A CNP (or an ACK's CNP flag) for this QP arrived at `now`.
    void on_cnp(nanos now) noexcept {
        ++_k.cnps_rx;
        if (!_c.enabled) {
            return;
        }
        run_timers(now);
        record(now, dcqcn_event::cnp);
        const bool periodic = _c.alpha_mode == dcqcn_alpha_mode::periodic;
        if (!_seen_cnp) {
            _seen_cnp = true;
            _alpha = _c.initial_alpha_value;
            if (periodic) {
                _next_alpha = now + _c.dce_tcp_rtt;
                _alpha_flag = false;
            }
            _next_dec = now + _c.rate_reduce_monitor_period + _c.rate_reduce_offset;
            if (_c.rate_to_set_on_first_cnp.v != 0) {
                // The forced rate is the reaction to the first CNP (no cut on top).
                _rc = _rt = std::clamp(static_cast<double>(_c.rate_to_set_on_first_cnp.v), _floor, _cap);
                ++_k.cuts;
                restart_increase(now);
                note_rate(now, dcqcn_event::cut);
                return;
            }
        } else if (periodic) {
            _alpha_flag = true;
        }
        if (_c.rate_reduce_monitor_period.v == 0) {
            cut(now);
            return;
        }
        if (_dec_pending) {
            ++_k.cnps_merged;
            return;
        }
        // The first check strictly after now (a check at now already ran).
        if (_next_dec <= now) {
            const std::int64_t p = _c.rate_reduce_monitor_period.v;
            _next_dec += nanos{((now - _next_dec).v / p + 1) * p};
        }
        _dec_pending = true;
    }

    // n bytes of this QP were sent at `now` (drives the byte counter).
    void on_sent(nanos now, bytes n) noexcept {
        if (!_c.enabled || !_seen_cnp) {
            return;
        }
        run_timers(now);
        if (_c.rpg_byte_reset.v == 0 || !_inc_active) {
            return;
        }
        _bytes += n.v;
        while (_bytes >= _c.rpg_byte_reset.v && _inc_active) {
            _bytes -= _c.rpg_byte_reset.v;
            ++_bc;
            ++_k.byte_events;
            increase(now);
        }
        if (!_inc_active) {
            _bytes = 0;
        }
    }

    // Runs every timer due at or before now; returns the next deadline.
    nanos advance(nanos now) noexcept {
        run_timers(now);
        return next_deadline();
    }

    nanos next_deadline() const noexcept {
        nanos d = nanos::max();
        if (_inc_active) {
            d = std::min(d, _next_inc);
        }
        if (_dec_pending) {
            d = std::min(d, _next_dec);
        }
        return d;
    }

    bits_per_sec rate() const noexcept { return bits_per_sec{static_cast<std::uint64_t>(std::llround(_rc))}; }
    bits_per_sec target() const noexcept { return bits_per_sec{static_cast<std::uint64_t>(std::llround(_rt))}; }
    double rate_bps() const noexcept { return _rc; }
    double target_bps() const noexcept { return _rt; }
    // As of the last call that took a time.
    double alpha() const noexcept { return _alpha; }

    // on_sent does something: the RP is on and has seen a CNP (before
    // that, no byte counter runs and no timer is armed).
    bool counts_bytes() const noexcept { return _c.enabled && _seen_cnp; }
    // rate() changed since take_rate_changed was last called.
    bool rate_changed() const noexcept { return _rate_changed; }
    // True once after every change of rate() (re-set the pacer then).
    bool take_rate_changed() noexcept {
        const bool r = _rate_changed;
        _rate_changed = false;
        return r;
    }
    std::uint64_t rate_generation() const noexcept { return _generation; }

    const dcqcn_rp_counters& counters() const noexcept { return _k; }
    const dcqcn_cfg& cfg() const noexcept { return _c; }

private:
    void record(nanos t, dcqcn_event ev) noexcept {
        if (_trace != nullptr) {
            _trace->push(dcqcn_trace_rec{t, _rc, _rt, _alpha, ev});
        }
    }

    void note_rate(nanos t, dcqcn_event ev) noexcept {
        if (_rc != _last_rc) {
            _last_rc = _rc;
            _rate_changed = true;
            ++_generation;
        }
        _k.min_rate_seen_bps = std::min(_k.min_rate_seen_bps, _rc);
        record(t, ev);
    }

    // Alpha ticks at or before t (ties: before the other timers).
    void fold_alpha(nanos t) noexcept {
        if (!_seen_cnp || _next_alpha > t) {
            return;
        }
        const std::int64_t p = _c.dce_tcp_rtt.v;
        const double keep = 1.0 - _c.dce_tcp_g;
        if (_alpha_flag) {
            _alpha = keep * _alpha + _c.dce_tcp_g;
            _alpha_flag = false;
            record(_next_alpha, dcqcn_event::alpha);
            _next_alpha += nanos{p};
            if (_next_alpha > t) {
                return;
            }
        }
        const std::int64_t k = (t - _next_alpha).v / p + 1;
        _alpha *= k == 1 ? keep : std::pow(keep, static_cast<double>(k));
        _next_alpha += nanos{k * p};
        if (_c.alpha_mode != dcqcn_alpha_mode::periodic) {
            record(_next_alpha - nanos{p}, dcqcn_event::alpha);
        }
    }

    void run_timers(nanos now) noexcept {
        while (true) {
            const nanos ti = _inc_active ? _next_inc : nanos::max();
            const nanos td = _dec_pending ? _next_dec : nanos::max();
            const nanos t = std::min(ti, td);
            if (t > now) {
                break;
            }
            fold_alpha(t);
            if (ti <= td) {
                _next_inc += _c.rpg_time_reset;
                ++_t;
                ++_k.timer_events;
                increase(t);
            } else {
                _dec_pending = false;
                _next_dec += _c.rate_reduce_monitor_period;
                cut(t);
            }
        }
        fold_alpha(now);
    }

    void restart_increase(nanos t) noexcept {
        _t = _bc = 0;
        _bytes = 0;
        _increased = false;
        _next_inc = t + _c.rpg_time_reset;
        _inc_active = _rc < _cap || _rt < _cap;
    }

    void cut(nanos t) noexcept {
        if (_c.clamp_tgt_rate || (_c.clamp_tgt_rate_after_time_inc && _increased)) {
            _rt = _rc;
        }
        const bool ewma = _c.alpha_mode != dcqcn_alpha_mode::periodic;
        if (_c.alpha_mode == dcqcn_alpha_mode::update_then_cut) {
            _alpha = (1.0 - _c.dce_tcp_g) * _alpha + _c.dce_tcp_g;
        }
        const double frac = _alpha * std::ldexp(1.0, 10 - static_cast<int>(_c.rpg_gd));
        double r = _rc * (1.0 - frac);
        r = std::max(r, _rc * static_cast<double>(_c.rpg_min_dec_fac) / 100.0);
        if (r <= _floor) {
            r = _floor;
            ++_k.cuts_at_min_rate;
        }
        _rc = std::min(r, _rc);  // a cut never raises the rate (e.g. R_C below a raised floor)
        if (_c.alpha_mode == dcqcn_alpha_mode::cut_then_update) {
            _alpha = (1.0 - _c.dce_tcp_g) * _alpha + _c.dce_tcp_g;
        }
        if (ewma) {
            _next_alpha = t + _c.dce_tcp_rtt;  // the K timer restarts at every cut
        }
        ++_k.cuts;
        restart_increase(t);
        note_rate(t, dcqcn_event::cut);
    }

    void increase(nanos t) noexcept {
        const std::uint32_t f = _c.rpg_threshold;
        dcqcn_event ev = dcqcn_event::additive;
        std::uint64_t i = 0;
        if (_c.stage_rule == dcqcn_stage_rule::qcn) {
            const std::uint64_t hi = std::max(_t, _bc);
            const std::uint64_t lo = std::min(_t, _bc);
            if (hi <= f) {
                ev = dcqcn_event::fast_recovery;
            } else if (lo > f) {
                ev = dcqcn_event::hyper;
                i = lo - f;
            }
        } else {
            const std::uint64_t s = _t + _bc - 1;  // events before this one
            if (s < f) {
                ev = dcqcn_event::fast_recovery;
            } else if (s > f) {
                ev = dcqcn_event::hyper;
                i = s - f;
            }
        }
        if (ev == dcqcn_event::additive) {
            _rt = std::min(_cap, _rt + static_cast<double>(_c.rpg_ai_rate.v));
            ++_k.additive_increase;
        } else if (ev == dcqcn_event::hyper) {
            const double step = static_cast<double>(_c.rpg_hai_rate.v) *
                                (_c.hai_step == dcqcn_hai_step::multiplied ? static_cast<double>(i) : 1.0);
            _rt = std::min(_cap, _rt + step);
            ++_k.hyper_increase;
        } else {
            ++_k.fast_recovery;
        }
        _rc = std::min(_cap, (_rt + _rc) / 2.0);
        if (_rt - _rc < 1.0) {
            _rc = _rt;  // within 1 bit/s: done (halving would creep for ~50 more events)
        }
        _increased = true;
        if (_rc >= _cap && _rt >= _cap) {
            _inc_active = false;
        }
        note_rate(t, ev);
    }

    dcqcn_cfg _c;
    double _line = 0;
    double _cap = 0;
    double _floor = 0;
    double _rc = 0;
    double _rt = 0;
    double _alpha = 1;
    double _last_rc = 0;
    bool _seen_cnp = false;
    bool _alpha_flag = false;
    bool _dec_pending = false;
    bool _inc_active = false;
    bool _increased = false;  // an increase event since the last cut
    bool _rate_changed = false;
    std::uint64_t _generation = 0;
    std::uint64_t _t = 0;   // timer events since the last cut
    std::uint64_t _bc = 0;  // byte events since the last cut
    std::uint64_t _bytes = 0;
    nanos _next_alpha{};
    nanos _next_inc{};
    nanos _next_dec{};
    dcqcn_rp_counters _k{};
    dcqcn_trace_buf* _trace = nullptr;
};

// ---------------------------------------------------------------------------
// Notification point.
//
//   per_qp    paper rule (4.1): a CE with no CNP for this QP in the last
//             cnp_interval N sends a CNP at once; otherwise one deferred CNP is
//             due at last CNP + N (poll() sends it), and only if a CE arrived
//             in that window. CNPs of a QP are never closer than N.
//   per_port  NVIDIA min_time_between_cnps: a CE sends a CNP if the port's
//             last CNP is at least that old (0 = a CNP per CE packet);
//             otherwise it is not answered (no deferral). The spacing belongs
//             to the port: every QP of a port shares one dcqcn_cnp_limiter.
// Tie rule: a CE at exactly last + N sends at once.
//
// A profile's NP (dcqcn_np_defaults; the config's cnp_mode overrides it):
//   hpcc_ns3     per_port, min_time_between_cnps 0: a CNP for every CE-marked
//                packet, as HPCC's ns-3 (rdma-hw.cc ReceiveUdp: the ACK of a
//                packet that arrived with ECN bits carries the CNP flag, and
//                with L2_ACK_INTERVAL 1 every packet is ACKed; ReceiveAck
//                hands each flagged ACK to the RP). The RP's
//                rate_reduce_monitor_period (4us) then folds them into at
//                most one cut per period.
//   the others   per_qp, cnp_interval 50us (the paper).

enum class dcqcn_np_mode : std::uint8_t { per_qp, per_port };

struct dcqcn_np_cfg {
    dcqcn_np_mode mode = dcqcn_np_mode::per_qp;
    nanos cnp_interval{50'000};          // per_qp N
    nanos min_time_between_cnps{0};      // per_port spacing
    std::uint8_t cnp_dscp = 48;
    std::uint8_t cnp_802p_prio = 6;
    bool enabled = true;                 // false: CE packets are counted, no CNPs
};

// The notification point of a profile (the block above). The
// cnp_interval / min_time_between_cnps / DSCP / PCP defaults are the same for
// every profile; only the mode differs.
constexpr dcqcn_np_cfg dcqcn_np_defaults(dcqcn_profile p) noexcept {
    dcqcn_np_cfg n{};
    n.enabled = p != dcqcn_profile::off;
    if (p == dcqcn_profile::hpcc_ns3) {
        n.mode = dcqcn_np_mode::per_port;
        n.min_time_between_cnps = nanos{0};
    }
    return n;
}

// Per-port CNP spacing, shared (by pointer) by the port's per-QP NPs; used
// by one lcore only.
class dcqcn_cnp_limiter {
public:
    explicit dcqcn_cnp_limiter(nanos min_gap = nanos{0}) noexcept : _gap(min_gap) {}
    // True (and the CNP is counted as sent at now) if the spacing allows one.
    bool try_send(nanos now) noexcept {
        if (_sent && now - _last < _gap) {
            return false;
        }
        _sent = true;
        _last = now;
        return true;
    }

private:
    nanos _gap;
    nanos _last{};
    bool _sent = false;
};

struct dcqcn_np_counters {
    std::uint64_t ce_rx = 0;           // CE-marked packets seen
    std::uint64_t cnp_tx = 0;          // CNPs to send (immediate + deferred)
    std::uint64_t cnp_deferred = 0;    // of which sent by poll() at a window end
    std::uint64_t cnp_suppressed = 0;  // CE packets that caused no CNP of their own
};

// Notification point of one QP.
class dcqcn_np {
public:
    // `port`: the port's limiter for per_port mode (nullptr: a private one).
    explicit dcqcn_np(const dcqcn_np_cfg& cfg, dcqcn_cnp_limiter* port = nullptr) noexcept
        : _c(cfg), _own(cfg.min_time_between_cnps), _port(port) {}

    // A CE-marked packet of this QP arrived; true = send a CNP now.
    bool on_ce(nanos now) noexcept {
        ++_k.ce_rx;
        if (!_c.enabled) {
            ++_k.cnp_suppressed;
            return false;
        }
        if (_c.mode == dcqcn_np_mode::per_port) {
            if ((_port != nullptr ? *_port : _own).try_send(now)) {
                ++_k.cnp_tx;
                return true;
            }
            ++_k.cnp_suppressed;
            return false;
        }
        if (_pending) {
            ++_k.cnp_suppressed;  // folded into the pending CNP
            if (now >= _last + _c.cnp_interval) {
                _pending = false;  // overdue: it goes now
                send(now);
                ++_k.cnp_deferred;
                return true;
            }
            return false;
        }
        if (!_sent || now - _last >= _c.cnp_interval) {
            send(now);
            return true;
        }
        _pending = true;
        return false;
    }

    // When the deferred CNP is due (nanos::max() when none).
    nanos next_due() const noexcept { return _pending ? _last + _c.cnp_interval : nanos::max(); }
    bool pending() const noexcept { return _pending; }

    // True = the deferred CNP is due: send it now.
    bool poll(nanos now) noexcept {
        if (!_pending || now < _last + _c.cnp_interval) {
            return false;
        }
        _pending = false;
        send(now);
        ++_k.cnp_deferred;
        return true;
    }

    const dcqcn_np_counters& counters() const noexcept { return _k; }
    const dcqcn_np_cfg& cfg() const noexcept { return _c; }

private:
    void send(nanos now) noexcept {
        _sent = true;
        _last = now;
        ++_k.cnp_tx;
    }

    dcqcn_np_cfg _c;
    dcqcn_cnp_limiter _own;
    dcqcn_cnp_limiter* _port;  // nullptr: _own
    nanos _last{};
    bool _sent = false;
    bool _pending = false;
    dcqcn_np_counters _k{};
};

}  // namespace rocelab
