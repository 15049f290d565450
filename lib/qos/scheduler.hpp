// scheduler.hpp - per-port egress scheduler: strict priority + DWRR (SONiC SCHEDULER).
//
// What: chooses which of the 8 egress queues sends the next frame.
//   * Strict queues are always served before any DWRR queue; among strict
//     queues the higher queue index wins (queue 7 > queue 6 > ...).
//   * DWRR queues share what strict queues leave, in proportion to weight,
//     measured in bytes: deficit round robin (Shreedhar & Varghese) with
//     quantum[q] = weight[q] x cfg.quantum bytes.
//
// Interface (no virtual calls, no allocation):
//   int q = s.pick(eligible, head_len);   // -1: nothing eligible
//   ... dequeue one frame of `len` bytes from q ...
//   s.charge(q, len);
// `eligible` = nonempty & ~paused. `head_len(int q) -> uint32` gives the
// length of the head frame of q (same unit as charge(), normally the mbuf
// frame length). Prefer pick(nonempty, paused, head_len): it also applies
// the classic-DRR rule that a queue found empty loses its deficit (a queue
// emptied by flush() etc. is noticed there too). With the 2-argument pick,
// call on_empty(q) when a queue empties.
//
// DRR state and the meaning of pause:
//   _cur is the DWRR queue whose turn it is; it was credited one quantum
//   when the turn began and keeps the turn while its deficit covers its head
//   frame. Otherwise the turn passes to the next eligible DWRR queue in index
//   order (round robin), which is credited its quantum.
//   A paused (or otherwise ineligible) DWRR queue is skipped: it receives no
//   quantum while skipped and KEEPS its deficit. The kept deficit is at most
//   quantum + max_frame (what was left of an interrupted turn), so a pause
//   neither loses the queue's share nor lets it hoard credit: after unpause
//   shares converge back to the weights within one round.
//   A queue that becomes empty has its deficit reset to 0 (classic DRR).
//
// Cost: pick is O(1) for strict queues (one countl_zero). For DWRR it is
// O(1) amortised: if a whole round passes with no queue able to send (tiny
// quanta vs. jumbo frames), the number of further useless rounds is computed
// in closed form and added at once, so a pick never loops more than ~2
// rounds of 8 queues.
//   fast-forward derivation: after a fruitless round every eligible queue has
//   d_q < h_q. It can send after r_q = ceil((h_q - d_q) / Q_q) more credits.
//   Adding m = min_q(r_q) - 1 quanta to every eligible queue is exactly what
//   m further fruitless rounds would do, and the next round then serves the
//   first queue (in round order) with r_q = min.
//
// Counters: none here (egress_queues counts per-queue bytes/packets).
//
// Config example (SONiC SCHEDULER, AZURE + RoCE):
//   scheduler.0 { type: DWRR, weight: 14 }  queues 0,1,2,5,7
//   scheduler.1 { type: DWRR, weight: 15 }  queues 3,4
//   scheduler.cnp { type: STRICT }          queue 6
//   quantum: 1152B   (weight 14 -> 16128 B of credit per round)
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "core/bitops.hpp"
#include "qos/scheduler_cfg.hpp"

namespace rocelab {

class scheduler {
public:
    explicit scheduler(const scheduler_cfg& cfg) noexcept { reconfigure(cfg); }

    // Control path: apply a new configuration (between bursts). Resets all
    // DRR state. Weight 0 is treated as 1, quantum 0 as 1 byte.
    void reconfigure(const scheduler_cfg& cfg) noexcept {
        _strict_mask = 0;
        _dwrr_mask = 0;
        const std::uint64_t base = cfg.quantum.v != 0 ? cfg.quantum.v : 1;
        for (int q = 0; q < 8; ++q) {
            const auto& qs = cfg.queues[q];
            if (qs.type == sched_type::strict) {
                _strict_mask |= static_cast<std::uint8_t>(1u << q);
                _quantum[q] = 0;
            } else {
                _dwrr_mask |= static_cast<std::uint8_t>(1u << q);
                _quantum[q] = static_cast<std::int64_t>(base * (qs.weight != 0 ? qs.weight : 1));
            }
            _deficit[q] = 0;
        }
        _cur = 7;
        _in_turn = false;
    }

    // Choose the next queue among `eligible` (bit q = may send). head_len(q)
    // is only called for eligible DWRR queues. Returns -1 if none.
    template <typename HeadLen>
    int pick(std::uint8_t eligible, HeadLen&& head_len) noexcept {
        const std::uint8_t strict = eligible & _strict_mask;
        if (strict != 0) {
            return highest_bit(strict);
        }
        const std::uint8_t dw = eligible & _dwrr_mask;
        if (dw == 0) {
            return -1;
        }
        if (_in_turn && (dw >> _cur & 1u) != 0 &&
            _deficit[_cur] >= static_cast<std::int64_t>(head_len(_cur))) {
            return _cur;
        }
        return next_turn(dw, head_len);
    }

    // Same, from the raw bitmaps; also resets the deficit of every DWRR queue
    // that is empty (classic DRR: an idle queue keeps no credit). A paused
    // non-empty queue keeps its deficit.
    template <typename HeadLen>
    int pick(std::uint8_t nonempty, std::uint8_t paused, HeadLen&& head_len) noexcept {
        std::uint8_t stale = _credited & ~nonempty;
        if (stale != 0) {
            for_each_bit(stale, [this](int q) noexcept { _deficit[q] = 0; });
            _credited &= nonempty;
        }
        return pick(static_cast<std::uint8_t>(nonempty & ~paused), head_len);
    }

    // Account a frame of `len` bytes just dequeued from q.
    void charge(int q, std::uint32_t len) noexcept {
        if (_quantum[q] != 0) {
            _deficit[q] -= len;
        }
    }

    // Queue q became empty (dequeue or flush): forget its deficit.
    void on_empty(int q) noexcept {
        _deficit[q] = 0;
        _credited &= static_cast<std::uint8_t>(~(1u << q));
    }

    // Introspection for tests and telemetry.
    std::int64_t deficit(int q) const noexcept { return _deficit[q]; }
    std::int64_t quantum(int q) const noexcept { return _quantum[q]; }
    std::uint8_t strict_mask() const noexcept { return _strict_mask; }
    std::uint8_t dwrr_mask() const noexcept { return _dwrr_mask; }

private:
    template <typename HeadLen>
    int next_turn(std::uint8_t dw, HeadLen& head_len) noexcept {
        const int n = std::popcount(static_cast<unsigned>(dw));
        int q = _cur;
        for (int pass = 0; pass < 2; ++pass) {
            for (int i = 0; i < n; ++i) {
                q = next_bit_after(q, dw);
                _deficit[q] += _quantum[q];
                _credited |= static_cast<std::uint8_t>(1u << q);
                if (_deficit[q] >= static_cast<std::int64_t>(head_len(q))) {
                    _cur = q;
                    _in_turn = true;
                    return q;
                }
            }
            // A whole fruitless round: skip the further fruitless rounds at once.
            std::int64_t m = INT64_MAX;
            for_each_bit(dw, [&](int j) {
                const std::int64_t need = static_cast<std::int64_t>(head_len(j)) - _deficit[j];
                const std::int64_t r = (need + _quantum[j] - 1) / _quantum[j];
                m = r < m ? r : m;
            });
            if (m > 1) {
                for_each_bit(dw, [&](int j) { _deficit[j] += (m - 1) * _quantum[j]; });
            }
        }
        // Unreachable: the second pass always finds a queue.
        _cur = q;
        _in_turn = true;
        return q;
    }

    std::array<std::int64_t, 8> _deficit{};
    std::array<std::int64_t, 8> _quantum{};
    std::uint8_t _strict_mask = 0;
    std::uint8_t _dwrr_mask = 0;
    std::uint8_t _credited = 0;  // DWRR queues that may hold a non-zero deficit
    std::uint8_t _cur = 7;       // queue whose DRR turn it is
    bool _in_turn = false;       // _cur has been credited for its current turn
};

}  // namespace rocelab
