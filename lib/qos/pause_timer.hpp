// pause_timer.hpp - per-port receive-side PFC (802.1Qbb) / PAUSE (802.3x) state.
//
// What: remembers, per priority 0..7, until when the peer asked us to stop
// transmitting, and answers "which priorities are paused at `now`". The
// egress scheduler masks the queues mapped from paused priorities
// (MAP_PFC_PRIORITY_TO_QUEUE, see pfc_paused_queues()).
//
// Semantics (ROCE_REFERENCE.md 2.1-2.2):
//   * PFC frame: for each priority n whose class-enable bit is set (and for
//     which PFC is enabled on this port), stop for time[n] quanta, *restarting*
//     any running timer (a shorter value shortens the pause); time[n] = 0
//     resumes at once (XON). Priorities whose bit is clear are untouched.
//   * PAUSE frame: the same for all 8 priorities with one pause_time.
//   * A priority is paused at `now` iff now < until[n].
//
// Quanta to time: one quantum is 512 bit times, so
//   pause_ns = quanta x 512 x 1e9 / rate_bps,
// computed in 64-bit integers (65535 x 512 x 1e9 = 3.4e16 < 2^63) and
// rounded UP, so the pause is never shorter than requested and is within
// 1 ns of the exact value (e.g. 100 Gb/s: 1 quantum = 5.12 ns -> 6 ns,
// 0xFFFF -> 335539.2 ns -> 335540 ns).
//
// Counters (pause_stats, cold, per priority):
//   xoff_frames[n]  frames that paused n (enable bit set, quanta > 0)
//   xon_frames[n]   frames that resumed n (enable bit set, quanta 0)
//   paused_ns[n]    total time n was paused, as the union of pause
//                   intervals (restarts do not double count; XON cuts short);
//                   settled lazily, read with paused_time(n, now)
//   pfc_frames, pause_frames   frames received; pfc_ignored: enable bits for
//                   priorities with PFC disabled on this port
//
// Config example:
//   port: { pfc_enable: [3, 4] }          -> pause_timer pt{0b0001'1000};
//   pt.on_pfc(now, cev, quanta, port_rate);
//   std::uint8_t pq = pfc_paused_queues(pt.paused_mask(now), maps.pfc_prio_to_queue);
#pragma once

#include <array>
#include <cstdint>

#include "core/bitops.hpp"
#include "core/counter.hpp"
#include "core/units.hpp"
#include "qos/qos_maps.hpp"

namespace rocelab {

// Duration of `quanta` pause quanta (512 bit times each) at `rate`, rounded
// up to whole ns. rate 0 (unknown) gives 0.
constexpr nanos pause_quanta_time(std::uint16_t quanta, bits_per_sec rate) noexcept {
    if (rate.v == 0) {
        return nanos{0};
    }
    const std::uint64_t num = static_cast<std::uint64_t>(quanta) * 512u * 1'000'000'000ULL;
    return nanos{static_cast<std::int64_t>((num + rate.v - 1) / rate.v)};
}

// Map a mask of paused PFC priorities to the mask of egress queues to stop.
constexpr std::uint8_t pfc_paused_queues(std::uint8_t prio_mask,
                                         const std::array<std::uint8_t, 8>& pfc_prio_to_queue) noexcept {
    std::uint8_t q = 0;
    for_each_bit(prio_mask, [&](int p) { q |= static_cast<std::uint8_t>(1u << (pfc_prio_to_queue[p] & 7u)); });
    return q;
}
constexpr std::uint8_t pfc_paused_queues(std::uint8_t prio_mask, const qos_maps& m) noexcept {
    return pfc_paused_queues(prio_mask, m.pfc_prio_to_queue);
}

// The frame counters of pause_stats: one list for the struct and
// /rocelab_gen/port, which gives them all in this order (core/counter.hpp).
#define ROCELAB_PAUSE_FRAME_COUNTERS(X) X(pfc_frames) X(pause_frames) X(pfc_ignored)

// Written by the port's worker, read by telemetry while it runs: the
// arrays by relaxed atomic stores (account), the frame counters counter64.
struct alignas(64) pause_stats {
    std::array<std::uint64_t, 8> xoff_frames{};
    std::array<std::uint64_t, 8> xon_frames{};
    std::array<std::int64_t, 8> paused_ns{};
    ROCELAB_PAUSE_FRAME_COUNTERS(ROCELAB_COUNTER64)
};
// A snapshot of them in plain integers (reports, messages between ranks).
struct pause_counts {
    std::array<std::uint64_t, 8> xoff_frames{};
    std::array<std::uint64_t, 8> xon_frames{};
    std::array<std::int64_t, 8> paused_ns{};
    ROCELAB_PAUSE_FRAME_COUNTERS(ROCELAB_U64_COUNTER)
};
inline pause_counts snapshot(const pause_stats& s) noexcept {
    pause_counts o;
    for (std::size_t p = 0; p < 8; ++p) {
        o.xoff_frames[p] = read_counter(s.xoff_frames[p]);
        o.xon_frames[p] = read_counter(s.xon_frames[p]);
        o.paused_ns[p] = read_counter(s.paused_ns[p]);
    }
#define ROCELAB_PAUSE_SNAP(name) o.name = s.name.load();
    ROCELAB_PAUSE_FRAME_COUNTERS(ROCELAB_PAUSE_SNAP)
#undef ROCELAB_PAUSE_SNAP
    return o;
}

class pause_timer {
public:
    // pfc_enable: bit n = this port honours PFC for priority n. 802.3x PAUSE
    // is always honoured (it is a link-level request).
    explicit pause_timer(std::uint8_t pfc_enable = 0xff) noexcept : _pfc_enable(pfc_enable) {
        _until.fill(INT64_MIN / 4);
        _accounted.fill(INT64_MIN / 4);
    }

    void set_pfc_enable(std::uint8_t m) noexcept { _pfc_enable = m; }
    std::uint8_t pfc_enable() const noexcept { return _pfc_enable; }

    // A PFC frame arrived at `now` on a link running at `rate`.
    void on_pfc(nanos now, std::uint8_t class_enable, const std::array<std::uint16_t, 8>& quanta,
                bits_per_sec rate) noexcept {
        ++_stats.pfc_frames;
        const std::uint8_t use = class_enable & _pfc_enable;
        if (use != class_enable) {
            ++_stats.pfc_ignored;
        }
        for_each_bit(use, [&](int p) noexcept { set_pause(p, now, quanta[p], rate); });
        refresh(now);
    }

    // An 802.3x PAUSE frame: all priorities, one pause_time.
    void on_pause(nanos now, std::uint16_t quanta, bits_per_sec rate) noexcept {
        ++_stats.pause_frames;
        for (int p = 0; p < 8; ++p) {
            set_pause(p, now, quanta, rate);
        }
        refresh(now);
    }

    // Priorities paused at `now` (bit n = priority n). `now` must not go
    // backwards between calls. O(1) unless a timer expired since last call.
    std::uint8_t paused_mask(nanos now) noexcept {
        if (now.v >= _next_expiry) {
            refresh(now);
        }
        return _mask;
    }

    // Earliest time > now at which a paused priority resumes, nanos::max()
    // if none is paused.
    nanos next_deadline(nanos now) noexcept {
        paused_mask(now);
        return _mask != 0 ? nanos{_next_expiry} : nanos::max();
    }

    // End of the pause of priority p (<= now: not paused).
    // paused_until() and paused_time() may be called from another thread
    // (telemetry, status): the fields they read are written and read with
    // relaxed atomics. The three reads of paused_time() are not one snapshot:
    // racing a PFC frame, a read may miss or count twice that frame's open
    // interval once; it never tears a value.
    nanos paused_until(int p) const noexcept { return nanos{ld(_until[p])}; }

    // Total time priority p has been paused, up to `now`.
    nanos paused_time(int p, nanos now) const noexcept {
        std::int64_t t = ld(_stats.paused_ns[p]);
        const std::int64_t until = ld(_until[p]);
        const std::int64_t accounted = ld(_accounted[p]);
        const std::int64_t end = now.v < until ? now.v : until;
        if (end > accounted) {
            t += end - accounted;
        }
        return nanos{t};
    }

    const pause_stats& stats() const noexcept { return _stats; }

private:
    static std::int64_t ld(const std::int64_t& x) noexcept { return __atomic_load_n(&x, __ATOMIC_RELAXED); }
    static void st(std::int64_t& x, std::int64_t v) noexcept { __atomic_store_n(&x, v, __ATOMIC_RELAXED); }

    void settle(int p, std::int64_t now) noexcept {
        const std::int64_t end = now < _until[p] ? now : _until[p];
        if (end > _accounted[p]) {
            st(_stats.paused_ns[p], _stats.paused_ns[p] + (end - _accounted[p]));
        }
        st(_accounted[p], now);
    }

    void set_pause(int p, nanos now, std::uint16_t quanta, bits_per_sec rate) noexcept {
        settle(p, now.v);
        if (quanta == 0) {
            __atomic_store_n(&_stats.xon_frames[p], _stats.xon_frames[p] + 1, __ATOMIC_RELAXED);
            st(_until[p], now.v);
        } else {
            __atomic_store_n(&_stats.xoff_frames[p], _stats.xoff_frames[p] + 1, __ATOMIC_RELAXED);
            st(_until[p], now.v + pause_quanta_time(quanta, rate).v);
        }
    }

    void refresh(nanos now) noexcept {
        std::uint8_t m = 0;
        std::int64_t next = INT64_MAX;
        for (int p = 0; p < 8; ++p) {
            if (now.v < _until[p]) {
                m |= static_cast<std::uint8_t>(1u << p);
                next = _until[p] < next ? _until[p] : next;
            }
        }
        _mask = m;
        _next_expiry = next;
    }

    // hot
    std::uint8_t _mask = 0;
    std::uint8_t _pfc_enable = 0xff;
    std::int64_t _next_expiry = INT64_MAX;
    std::array<std::int64_t, 8> _until{};
    std::array<std::int64_t, 8> _accounted{};
    // cold
    pause_stats _stats{};
};

}  // namespace rocelab
