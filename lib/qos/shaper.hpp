// shaper.hpp - exact virtual-finish-time shaper / pacer with a bounded burst.
//
// What: limits a stream of frames to `rate` bits per second of *wire* time.
// Each frame costs frame_len + overhead bytes, where overhead defaults to the
// 24 bytes a DPDK mbuf does not hold: preamble+SFD+IFG (20) and FCS (4).
// Used as the egress port shaper in the switch and as the per-QP pacer in the
// traffic generator (set_rate() on every DCQCN rate change).
//
// Algorithm: GCRA / virtual scheduling. The shaper keeps a theoretical
// finish time TAT (when the line would be free if every frame had been sent
// at exactly `rate`). A frame may be sent at `now` iff now >= TAT - tau, where
// tau = burst x 8 / rate is the burst tolerance. Sending sets
//   TAT = max(TAT, now) + (frame_len + overhead) x 8 / rate.
// Because TAT restarts from `now` after idle, idle time never banks more than
// tau of credit: right after a long idle at most `burst` bytes plus one frame
// can go back to back.
//
// Exact arithmetic (no drift): TAT is held as an integer nanosecond part and
// a remainder in units of 1/rate ns:
//   TAT = _tat_ns + _tat_rem / R,  0 <= _tat_rem < R  (R = rate in bit/s)
// A frame of w wire bytes adds w*8*1e9 / R ns = q + r/R with
//   q = (w*8e9) / R, r = (w*8e9) % R (integer division);
// the remainder is carried, so after any number of frames TAT equals the
// exact rational sum. conforms() compares `now` with
//   ceil(TAT - tau) = _tat_ns - tau_ns + (_tat_rem != 0),
// precomputed in _next so the hot check is one compare. A sender that is at
// most one ns late (because it can only act on integer ns) does not restart
// TAT, so the fraction is never lost: a saturating sender gets exactly R.
// tau_ns is floor(burst*8e9/R) (burst tolerance need not be exact), or the
// shaper's minimum tolerance when that is longer (min_tolerance: frames may
// go up to that much time ahead of their paced times, whatever the rate; a
// poll loop that sends a burst of frames at one `now` needs it to reach a
// high rate, see rocelab-gen's pacing).
//
// The quotient and remainder of the last wire size are kept for the current
// rate: a stream of equal frames divides once per rate change, not per frame
// (the same q and r, so the same times).
//
// Parameters: rate (0 = unshaped: always conforms), burst (bytes of credit a
// conforming sender may use at once beyond the current frame; a few frames
// is a good choice so that polling jitter does not cost rate), overhead.
// Range: rate <= 2^57 bit/s; frame_len any uint32.
//
// Counters: none (the port/QP counts what it sends).
//
// Config example:
//   port: { shaper: { rate: 25Gbps, burst: 18KiB } }
//   shaper s{25_Gbps, 18_KiB};
//   if (s.conforms(now)) { send(m); s.on_send(now, m->pkt_len); }
//   else { deadline = s.next_send_time(); }
//   k = s.frames_at(now, 1100, 32);  // frames of <= 1100 B that conform one after another
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/units.hpp"
#include "core/wire_time.hpp"

namespace rocelab {

class shaper {
public:
    static constexpr bytes default_overhead{24};  // eth_wire_overhead + eth_fcs

    shaper() noexcept = default;
    shaper(bits_per_sec rate, bytes burst, bytes overhead = default_overhead, nanos min_tolerance = nanos{0}) noexcept
        : _burst(burst.v), _overhead(overhead.v), _min_tau(min_tolerance.v) {
        set_rate(rate);
    }

    // May a frame start at `now`?
    bool conforms(nanos now) const noexcept { return now.v >= _next; }

    // Account a frame of frame_len bytes (as in the mbuf) sent at `now`.
    void on_send(nanos now, std::uint32_t frame_len) noexcept {
        if (_rate == 0) {
            _tat_ns = now.v;
            return;
        }
        if (now.v > _tat_ns + (_tat_rem != 0 ? 1 : 0)) {  // idle (or late by > 1 ns): restart
            _tat_ns = now.v;
            _tat_rem = 0;
        }
        add_bytes(static_cast<std::uint64_t>(frame_len) + _overhead);
        _next = _tat_ns - _tau_ns + (_tat_rem != 0 ? 1 : 0);
    }

    // How many frames of at most max_len bytes may start at `now` one after
    // another, conforms() before each and on_send(now, len) after each: at
    // most cap (>= 1), 0 when conforms(now) is false; exact for frames of
    // max_len bytes, a lower bound for shorter ones (ask again after them).
    // Frame j conforms when ceil(TAT_j - tau) <= now, i.e. TAT_j - tau <= now,
    // with TAT_j = TAT + j * W / rate (W = wire bits x 1e9; TAT = now after
    // an idle restart): j * W <= (now + tau - tat_ns) * rate - tat_rem.
    std::uint32_t frames_at(nanos now, std::uint32_t max_len, std::uint32_t cap) const noexcept {
        if (now.v < _next) {
            return 0;
        }
        if (_rate == 0) {
            return cap;
        }
        const bool restart = now.v > _tat_ns + (_tat_rem != 0 ? 1 : 0);
        const std::int64_t t = restart ? now.v : _tat_ns;
        const std::uint64_t rem = restart ? 0 : _tat_rem;
        const auto room = static_cast<unsigned __int128>(now.v + _tau_ns - t) * _rate;  // >= rem: conforms
        const auto w = (static_cast<unsigned __int128>(max_len) + _overhead) * 8u * ns_per_s;
        const auto k = (room - rem) / w + 1;
        return k < cap ? static_cast<std::uint32_t>(k) : cap;
    }

    // Earliest time conforms() becomes true (<= now when it already is).
    nanos next_send_time() const noexcept { return nanos{_rate == 0 ? _tat_ns : _next}; }

    // Theoretical time at which the line frees up (exact part, floor).
    nanos finish_time() const noexcept { return nanos{_tat_ns}; }

    bits_per_sec rate() const noexcept { return bits_per_sec{_rate}; }
    // The rate as another thread reads it (telemetry, time series): a relaxed load.
    bits_per_sec rate_relaxed() const noexcept { return bits_per_sec{__atomic_load_n(&_rate, __ATOMIC_RELAXED)}; }
    bytes burst() const noexcept { return bytes{_burst}; }

    // Change the rate (control path or DCQCN). The backlog already committed
    // (TAT) is kept; the fractional part is rescaled to the new rate, and the
    // next frames are charged at the new rate.
    void set_rate(bits_per_sec r) noexcept {
        if (r.v == 0) {
            _rate = 0;
            _tat_rem = 0;
            _tau_ns = 0;
            _next = INT64_MIN / 4;
            forget_memo();
            return;
        }
        if (_rate != 0) {
            _tat_rem = static_cast<std::uint64_t>(static_cast<unsigned __int128>(_tat_rem) * r.v / _rate);
        } else {
            _tat_rem = 0;
        }
        _rate = r.v;
        _tau_ns = tau_of(_rate);
        _next = _tat_ns - _tau_ns + (_tat_rem != 0 ? 1 : 0);
        forget_memo();
    }

    // Change the rate at `now` (DCQCN's reaction point, per rate change): as
    // set_rate(r), and what is left at `now` of the wait already committed at
    // the old rate (TAT - now) is re-timed at the new rate, as a NIC's rate
    // limiter re-schedules its queue: after a cut to 1 Mb/s a 1 KB frame
    // commits 8.8 ms; a recovery to 50 Gb/s 1 ms later leaves 7.8 ms x 1/50000
    // = 156 ns of it, not 7.8 ms.
    void set_rate(bits_per_sec r, nanos now) noexcept {
        if (r.v != 0 && _rate != 0 && r.v != _rate && _tat_ns >= now.v) {
            // TAT - now = (tat_ns - now) + tat_rem / R_old; scaled by R_old / R_new:
            // ((tat_ns - now) R_old + tat_rem) / R_new, split into ns + remainder.
            const unsigned __int128 x =
                static_cast<unsigned __int128>(_tat_ns - now.v) * _rate + _tat_rem;
            _tat_ns = now.v + static_cast<std::int64_t>(x / r.v);
            _tat_rem = static_cast<std::uint64_t>(x % r.v);
            _rate = r.v;
            _tau_ns = tau_of(_rate);
            _next = _tat_ns - _tau_ns + (_tat_rem != 0 ? 1 : 0);
            forget_memo();
            return;
        }
        set_rate(r);
    }

    void set_burst(bytes b) noexcept {
        _burst = b.v;
        set_rate(bits_per_sec{_rate});
    }

    // Forget history: next frame conforms immediately.
    void reset() noexcept {
        _tat_ns = INT64_MIN / 4;
        _tat_rem = 0;
        _next = _rate == 0 ? INT64_MIN / 4 : _tat_ns - _tau_ns;
    }

private:
    static constexpr std::uint64_t ns_per_s = 1'000'000'000ULL;

    void forget_memo() noexcept {
        _memo_wire = 0;
        _memo = {};
    }

    std::int64_t tau_of(std::uint64_t rate) const noexcept {
        const auto t = static_cast<std::int64_t>(static_cast<unsigned __int128>(_burst) * 8u * ns_per_s / rate);
        return t > _min_tau ? t : _min_tau;
    }

    // add_wire_time(), with the cost of the last wire size kept.
    void add_bytes(std::uint64_t wire) noexcept {
        if (wire != _memo_wire) [[unlikely]] {
            _memo = wire_cost_of(wire, _rate);
            _memo_wire = wire;
        }
        add_wire_cost(_tat_ns, _tat_rem, _memo, _rate);
    }

    std::int64_t _next = INT64_MIN / 4;  // ceil(TAT - tau): hot, read by conforms()
    std::int64_t _tat_ns = INT64_MIN / 4;
    std::uint64_t _tat_rem = 0;
    std::uint64_t _rate = 0;
    std::int64_t _tau_ns = 0;
    std::uint64_t _burst = 0;
    std::uint64_t _overhead = default_overhead.v;
    std::int64_t _min_tau = 0;
    std::uint64_t _memo_wire = 0;  // the wire size _memo is the cost of (0 costs 0 at any rate)
    wire_cost _memo{};
};

}  // namespace rocelab
