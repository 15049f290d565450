// pfc_tx.hpp - per-port transmit side of PFC (802.1Qbb) / PAUSE (802.3x):
// decides when this switch sends XOFF, refresh and XON frames.
//
// What: the caller polls with the set of priorities that should be paused
// now (`want`, bit n = priority n; the caller maps XOFF PGs from
// mmu::xoff_pgs() to priorities through TC_TO_PRIORITY_GROUP_MAP and
// pfc_enable). poll() returns true when a frame must go out now and fills
// a pfc_frame that proto/ code turns into wire bytes.
//
// Rules (ROCE_REFERENCE.md 2.1):
//   * a priority newly in `want`   -> XOFF (time = quanta) for it;
//   * a priority that left `want`  -> XON (time 0) for it, sent once;
//   * while priorities stay in `want`, re-send XOFF before the peer's timer
//     runs out: every half pause time, refresh = pause_quanta_time(quanta,
//     rate) / 2 (100 Gb/s, 0xFFFF quanta: 335540 ns pause -> 167770 ns).
//   Every XOFF frame carries all wanted priorities (new and still paused)
//   and restarts the single refresh deadline, so one timer serves the port;
//   an XON-only frame leaves the refresh deadline alone. A frame may carry
//   XOFF and XON bits together.
//   * PAUSE mode: any want -> PAUSE(quanta), none -> PAUSE(0), same refresh.
//     Internally want becomes 0xFF/0, so the per-priority counters below
//     count a PAUSE frame on all 8 priorities.
//   * rate 0 (unknown) -> the refresh period assumes 800 Gb/s, the shortest
//     pause the quanta can mean, so the peer never resumes early.
//
// Parameters: mode (pfc | pause), port rate, quanta (default 0xFFFF, 0 is
// taken as 1). `now` must not go backwards.
//
// Counters (pfc_tx_stats, per priority unless noted):
//   xoff_sent[n]     frames carrying a non-zero time for n (incl. refresh)
//   xon_sent[n]      frames carrying time 0 for n
//   asserted_ns[n]   time n was asserted (first XOFF to XON), settled at
//                    XON; read the running value with asserted_time(n, now)
//   frames_sent      frames emitted (port); refreshes: of those, pure refresh
// The counters, the asserted set and the assertion start times are written
// by the port's worker and read from other threads (telemetry, the status
// line, reports: asserted(), asserted_time(), stats()), so both sides are
// relaxed atomics (core/counter.hpp). asserted_time()'s three loads are not
// one snapshot: racing an XON it may count that interval twice, once; no
// value tears.
//
// Config example:
//   PORT_QOS_MAP: { Ethernet0: { pfc_enable: "3,4" } }   speed 100Gbps
//   pfc_tx tx{flow_ctrl_mode::pfc, 100_Gbps};
//   if (tx.poll(now, want, frame)) { send(build_pfc(frame)); }
//   next = std::min(next, tx.next_deadline());
#pragma once

#include <array>
#include <cstdint>

#include "qos/buffer_cfg.hpp"
#include "core/bitops.hpp"
#include "core/counter.hpp"
#include "core/units.hpp"
#include "qos/pause_timer.hpp"

namespace rocelab {

struct pfc_frame {
    flow_ctrl_mode mode = flow_ctrl_mode::pfc;
    std::uint8_t class_enable = 0;        // PFC: bit n = time[n] is meaningful
    std::array<std::uint16_t, 8> time{};  // PFC: quanta per priority, 0 = XON
    std::uint16_t pause_time = 0;         // PAUSE: quanta, 0 = resume
};

struct alignas(64) pfc_tx_stats {
    std::array<counter64, 8> xoff_sent{};
    std::array<counter64, 8> xon_sent{};
    std::array<std::int64_t, 8> asserted_ns{};  // relaxed atomics (ld/st)
    counter64 frames_sent = 0;
    counter64 refreshes = 0;
};

class pfc_tx {
public:
    explicit pfc_tx(flow_ctrl_mode mode = flow_ctrl_mode::pfc, bits_per_sec rate = bits_per_sec{0},
                    std::uint16_t quanta = 0xFFFF) noexcept
        : _mode(mode), _quanta(quanta != 0 ? quanta : 1) {
        set_rate(rate);
    }

    // Link speed changed (autoneg). Takes effect at the next refresh.
    void set_rate(bits_per_sec rate) noexcept {
        constexpr bits_per_sec fastest{800'000'000'000ULL};
        _refresh = nanos{pause_quanta_time(_quanta, rate.v != 0 ? rate : fastest).v / 2};
        if (_refresh.v <= 0) {
            _refresh = nanos{1};
        }
    }

    // Returns true when `out` must be sent now.
    bool poll(nanos now, std::uint8_t want, pfc_frame& out) noexcept {
        if (_mode == flow_ctrl_mode::pause) {
            want = want != 0 ? 0xFF : 0;
        }
        const std::uint8_t added = want & static_cast<std::uint8_t>(~_asserted);
        const std::uint8_t removed = _asserted & static_cast<std::uint8_t>(~want);
        const bool refresh = (want & _asserted) != 0 && now >= _next_refresh;
        if ((added | removed) == 0 && !refresh) {
            return false;
        }
        const std::uint8_t xoff_bits = (added != 0 || refresh) ? want : 0;

        for_each_bit(added, [&](int p) noexcept { st(_since[p], now.v); });
        for_each_bit(removed, [&](int p) noexcept {
            st(_stats.asserted_ns[p], _stats.asserted_ns[p] + (now.v - _since[p]));
            ++_stats.xon_sent[p];
        });
        for_each_bit(xoff_bits, [&](int p) noexcept { ++_stats.xoff_sent[p]; });
        if (xoff_bits != 0) {
            _next_refresh = now + _refresh;
        }
        if (added == 0 && removed == 0) {
            ++_stats.refreshes;
        }
        ++_stats.frames_sent;
        __atomic_store_n(&_asserted, want, __ATOMIC_RELAXED);

        out.mode = _mode;
        out.time = {};
        if (_mode == flow_ctrl_mode::pause) {
            out.class_enable = 0;
            out.pause_time = xoff_bits != 0 ? _quanta : 0;
        } else {
            out.class_enable = xoff_bits | removed;
            out.pause_time = 0;
            for_each_bit(xoff_bits, [&](int p) noexcept { out.time[p] = _quanta; });
        }
        return true;
    }

    // When poll() must run next (a refresh is due); nanos::max() when nothing
    // is asserted. A change of `want` needs a poll whatever this says.
    nanos next_deadline() const noexcept { return _asserted != 0 ? _next_refresh : nanos::max(); }
    // When poll(now, want) would next send a frame: `now` if `want` differs
    // from what is asserted, else the refresh (nanos::max() when none).
    nanos due(nanos now, std::uint8_t want) const noexcept {
        if (_mode == flow_ctrl_mode::pause) {
            want = want != 0 ? 0xFF : 0;
        }
        return want != _asserted ? now : next_deadline();
    }

    // Priorities we currently hold in XOFF at the peer.
    std::uint8_t asserted() const noexcept { return __atomic_load_n(&_asserted, __ATOMIC_RELAXED); }
    nanos refresh_period() const noexcept { return _refresh; }
    std::uint16_t quanta() const noexcept { return _quanta; }
    flow_ctrl_mode mode() const noexcept { return _mode; }

    // Total time priority p has been asserted, including a running assertion.
    nanos asserted_time(int p, nanos now) const noexcept {
        std::int64_t t = ld(_stats.asserted_ns[p]);
        if ((asserted() >> p) & 1u) {
            t += now.v - ld(_since[p]);
        }
        return nanos{t};
    }

    const pfc_tx_stats& stats() const noexcept { return _stats; }

private:
    static std::int64_t ld(const std::int64_t& x) noexcept { return __atomic_load_n(&x, __ATOMIC_RELAXED); }
    static void st(std::int64_t& x, std::int64_t v) noexcept { __atomic_store_n(&x, v, __ATOMIC_RELAXED); }

    // hot
    std::uint8_t _asserted = 0;
    flow_ctrl_mode _mode;
    std::uint16_t _quanta;
    nanos _refresh{1};
    nanos _next_refresh{0};
    std::array<std::int64_t, 8> _since{};
    // cold
    pfc_tx_stats _stats{};
};

}  // namespace rocelab
