// pfc_watchdog.hpp - SONiC-style PFC watchdog for one lossless (port, queue)
// (ROCE_REFERENCE.md 2.4; SONiC PFC_WD table: detection_time,
// restoration_time, action, POLL_INTERVAL).
//
// What: detects a PFC storm - a peer that keeps an egress queue paused far
// longer than any congestion should - and tells the caller to mitigate it,
// then detects its end. Driven by polling: the caller calls
//   poll(now, queue_paused_by_pfc, pfc_rx_frames_for_prio)
// every poll_interval (the caller owns that timer; next_deadline() helps),
// with the queue's current pause state (pause_timer) and the port's
// cumulative count of received PFC frames for the matching priority.
//
// Detection (as SONiC's Broadcom detect script): between two consecutive
// polls the condition holds when the queue was paused at BOTH samples AND
// the PFC rx counter moved (!=, so wrap-around counts as movement). The
// elapsed time of each agreeing interval, capped at detection_time - 1 (so
// at least two agreeing intervals are needed), is added to a running total;
// one disagreeing interval resets it. When the total reaches detection_time
// the queue is "stormed": storms_detected++, a storm_detected event.
// Set require_rx_increase = false (constructor) to detect on the pause
// state alone (a single huge pause with no repeat frames); restoration then
// also needs the queue unpaused at both samples of each quiet interval.
// Granularity: with poll interval P, a storm is detected between
// detection_time and detection_time + 2P after it starts; a storm whose
// paused samples span less than detection_time never trips.
//
// Mitigation while stormed:
//   drop    (default) drop_active() and ignore_pause(): discard what is
//           queued and arriving for the queue, and received PFC for it.
//   forward ignore_pause(): keep transmitting despite PFC.
//   alert   neither: counters and events only.
// Restoration: while stormed, intervals in which the PFC rx counter did not
// move are summed; one that moved resets the sum (pass the raw rx counter,
// counting PFC frames even while drop_active() discards them). When it reaches
// restoration_time: restored, storms_restored++, storm_restored event. The
// same rule applies to every action (SONiC's alert mode instead restores as
// soon as the detection condition clears; here alert behaves like the
// other actions so the event pairs are comparable).
//
// Counters (pfc_wd_stats): storms_detected, storms_restored, stormed_ns
// (time spent mitigating, settled at restore), tx_dropped / rx_dropped
// (packets the caller discarded while drop_active(); the caller reports
// them with count_tx_drop / count_rx_drop).
//
// Config example (SONiC names):
//   PFC_WD: { Ethernet0: { detection_time: 200ms, restoration_time: 200ms,
//             action: drop }, GLOBAL: { POLL_INTERVAL: 10ms } }
//   pfc_watchdog wd{cfg.pfc_wd, port, 3};
//   auto ev = wd.poll(now, pt.paused_mask(now) & 0x08, pt.stats().xoff_frames[3]);
#pragma once

#include <cstdint>

#include "qos/buffer_cfg.hpp"
#include "core/counter.hpp"
#include "core/units.hpp"

namespace rocelab {

enum class pfc_wd_event_kind : std::uint8_t { none, storm_detected, storm_restored };

struct pfc_wd_event {
    pfc_wd_event_kind kind = pfc_wd_event_kind::none;
    nanos at{0};
    std::uint16_t port = 0;
    std::uint8_t queue = 0;
    explicit operator bool() const noexcept { return kind != pfc_wd_event_kind::none; }
};

// Written by the port's worker, read from other threads (telemetry, reports):
// relaxed atomics (core/counter.hpp), as is the stormed state.
struct pfc_wd_stats {
    counter64 storms_detected = 0;
    counter64 storms_restored = 0;
    std::int64_t stormed_ns = 0;  // relaxed atomic (ld/st)
    counter64 tx_dropped = 0;
    counter64 rx_dropped = 0;
};

class pfc_watchdog {
public:
    pfc_watchdog(const pfc_wd_cfg& cfg, std::uint16_t port, std::uint8_t queue,
                 bool require_rx_increase = true) noexcept
        : _cfg(cfg), _port(port), _queue(queue), _require_rx(require_rx_increase) {}

    // One sample. Returns the event this sample produced, if any.
    pfc_wd_event poll(nanos now, bool queue_paused_by_pfc, std::uint64_t pfc_rx_frames_for_prio) noexcept {
        pfc_wd_event ev;
        if (!_cfg.enabled) {
            return ev;
        }
        if (!_have_sample) {
            take(now, queue_paused_by_pfc, pfc_rx_frames_for_prio);
            _next_poll = now + _cfg.poll_interval;
            return ev;
        }
        const std::int64_t elapsed = now.v - _last.v;
        const bool rx_moved = pfc_rx_frames_for_prio != _last_rx;
        if (!_stormed) {
            const bool storm = _last_paused && queue_paused_by_pfc && (rx_moved || !_require_rx);
            if (storm) {
                const std::int64_t cap = _cfg.detection_time.v - 1;
                _acc += elapsed < cap ? elapsed : cap;
                if (_acc >= _cfg.detection_time.v) {
                    __atomic_store_n(&_storm_start, now.v, __ATOMIC_RELAXED);
                    set_stormed(true);
                    _acc = 0;
                    ++_stats.storms_detected;
                    ev = make(pfc_wd_event_kind::storm_detected, now);
                }
            } else {
                _acc = 0;
            }
        } else {
            // Without the rx rule the pause state must clear too, or a
            // silent but still paused queue would flap stormed/restored.
            const bool quiet = !rx_moved && (_require_rx || (!_last_paused && !queue_paused_by_pfc));
            if (quiet) {
                _acc += elapsed;
                if (_acc >= _cfg.restoration_time.v) {
                    set_stormed(false);
                    _acc = 0;
                    __atomic_store_n(&_stats.stormed_ns, _stats.stormed_ns + (now.v - _storm_start), __ATOMIC_RELAXED);
                    ++_stats.storms_restored;
                    ev = make(pfc_wd_event_kind::storm_restored, now);
                }
            } else {
                _acc = 0;
            }
        }
        take(now, queue_paused_by_pfc, pfc_rx_frames_for_prio);
        _next_poll = now + _cfg.poll_interval;
        return ev;
    }

    bool stormed() const noexcept { return __atomic_load_n(&_stormed, __ATOMIC_RELAXED); }
    // Discard queued and arriving packets for the queue and received PFC.
    bool drop_active() const noexcept { return stormed() && _cfg.action == pfc_wd_action::drop; }
    // Transmit despite PFC (drop and forward).
    bool ignore_pause() const noexcept { return stormed() && _cfg.action != pfc_wd_action::alert; }

    // When the next poll is due (nanos::max() when disabled).
    nanos next_deadline() const noexcept { return _cfg.enabled ? _next_poll : nanos::max(); }

    // Time spent stormed, including a running storm.
    nanos stormed_time(nanos now) const noexcept {
        const std::int64_t settled = __atomic_load_n(&_stats.stormed_ns, __ATOMIC_RELAXED);
        return nanos{settled + (stormed() ? now.v - __atomic_load_n(&_storm_start, __ATOMIC_RELAXED) : 0)};
    }

    void count_tx_drop(std::uint64_t n = 1) noexcept { _stats.tx_dropped += n; }
    void count_rx_drop(std::uint64_t n = 1) noexcept { _stats.rx_dropped += n; }
    const pfc_wd_stats& stats() const noexcept { return _stats; }
    const pfc_wd_cfg& cfg() const noexcept { return _cfg; }

private:
    void set_stormed(bool s) noexcept { __atomic_store_n(&_stormed, s, __ATOMIC_RELAXED); }
    void take(nanos now, bool paused, std::uint64_t rx) noexcept {
        _have_sample = true;
        _last = now;
        _last_paused = paused;
        _last_rx = rx;
    }
    pfc_wd_event make(pfc_wd_event_kind k, nanos now) const noexcept {
        pfc_wd_event e;
        e.kind = k;
        e.at = now;
        e.port = _port;
        e.queue = _queue;
        return e;
    }

    pfc_wd_cfg _cfg;
    std::uint16_t _port;
    std::uint8_t _queue;
    bool _require_rx;
    bool _have_sample = false;
    bool _last_paused = false;
    bool _stormed = false;
    std::uint64_t _last_rx = 0;
    nanos _last{0};
    nanos _next_poll{0};
    std::int64_t _acc = 0;  // detection or restoration time accumulated, ns
    std::int64_t _storm_start = 0;
    pfc_wd_stats _stats{};
};

}  // namespace rocelab
