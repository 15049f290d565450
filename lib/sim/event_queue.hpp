// event_queue.hpp - deterministic (time, sequence) priority queue, no
// allocation after set-up.
//
// What: the simulator's pending events. Each event belongs to a *slot*: the
// engine gives every node one slot (its wake-up) and every link one slot
// (its next arrival), so a slot has at most one pending event and the queue
// never holds more than slots() entries. schedule(slot, t) inserts the
// slot's event or moves it (an earlier or later wake-up replaces the old
// one), cancel(slot) removes it. That bounds the storage exactly, so it is
// allocated once (reserve) and never again: no stale entries pile up as
// they do with lazy deletion.
//
// Order: by time, then by sequence number. Every schedule() that inserts
// or moves an event takes the next number from a 64-bit counter, so events
// at the same time pop in the order they were (last) scheduled. Scheduling
// a slot again for the time it already has is a no-op and keeps its place.
// Nothing depends on pointer values or addresses.
//
// Algorithm: a binary min-heap of {time, seq, slot} entries with a
// slot -> heap position index (an "indexed heap"): schedule, cancel and pop
// are O(log n), top/next_time O(1).
//
// Counters: none (the engine counts events).
//
// Example:
//   event_queue q{3};
//   q.schedule(0, nanos{100}); q.schedule(2, nanos{50}); q.schedule(1, nanos{100});
//   q.pop().slot == 2; q.pop().slot == 0; q.pop().slot == 1;
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace rocelab::sim {

struct event {
    nanos time;
    std::uint64_t seq = 0;
    std::uint32_t slot = 0;
};

class event_queue {
public:
    event_queue() = default;
    explicit event_queue(std::size_t slots) { reserve(slots); }

    // Set-up: room for `slots` slots (0 .. slots-1). Allocates; existing
    // events are kept.
    void reserve(std::size_t slots) {
        // Doubling: the engine reserves one slot more per node and link it
        // adds, and an exact reserve() reallocated and copied the heap each
        // time (quadratic: a 96-switch fabric's 4700 links spent ~10 % of
        // its set-up here).
        if (slots > _heap.capacity()) { _heap.reserve(std::max(slots, 2 * _heap.capacity())); }
        _pos.resize(slots, npos);
        _time.resize(slots, nanos::max());
    }
    std::size_t slots() const noexcept { return _pos.size(); }

    bool empty() const noexcept { return _heap.empty(); }
    std::size_t size() const noexcept { return _heap.size(); }
    // Time of the earliest event; nanos::max() when empty.
    nanos next_time() const noexcept { return _heap.empty() ? nanos::max() : _heap.front().time; }
    // Precondition: !empty().
    const event& top() const noexcept { return _heap.front(); }

    bool scheduled(std::uint32_t slot) const noexcept { return _pos[slot] != npos; }
    // The slot's pending time; nanos::max() when it has none.
    nanos time_of(std::uint32_t slot) const noexcept { return _time[slot]; }

    // Inserts or moves the slot's event to time t. Precondition: slot < slots().
    void schedule(std::uint32_t slot, nanos t) noexcept {
        const std::uint32_t p = _pos[slot];
        if (p == npos) {
            // push_back cannot allocate: capacity >= slots() and each slot
            // is in the heap at most once.
            _heap.emplace_back();
            _time[slot] = t;
            sift_up(static_cast<std::uint32_t>(_heap.size() - 1), event{t, _seq++, slot});
            return;
        }
        if (_heap[p].time == t) {
            return;
        }
        _time[slot] = t;
        // The new key (t, fresh seq) may be smaller or larger than before.
        fix(p, event{t, _seq++, slot});
    }

    // Removes the slot's pending event, if any.
    void cancel(std::uint32_t slot) noexcept {
        const std::uint32_t p = _pos[slot];
        if (p == npos) {
            return;
        }
        remove_at(p);
    }

    // Removes and returns the earliest event. Precondition: !empty().
    event pop() noexcept {
        const event e = _heap.front();
        remove_at(0);
        return e;
    }

private:
    static constexpr std::uint32_t npos = UINT32_MAX;

    // (time, seq) as one 128-bit key (the time's sign bit flipped so that
    // signed order is unsigned order): one compare and no data-dependent
    // branch, where the two-field test mispredicted in every sift.
    static unsigned __int128 key(const event& e) noexcept {
        const auto t = static_cast<std::uint64_t>(e.time.v) ^ (std::uint64_t{1} << 63);
        return (static_cast<unsigned __int128>(t) << 64) | e.seq;
    }
    static bool less(const event& a, const event& b) noexcept { return key(a) < key(b); }

    void place(std::uint32_t i, const event& e) noexcept {
        _heap[i] = e;
        _pos[e.slot] = i;
    }

    void remove_at(std::uint32_t p) noexcept {
        const std::uint32_t slot = _heap[p].slot;
        _pos[slot] = npos;
        _time[slot] = nanos::max();
        const event last = _heap.back();
        _heap.pop_back();
        if (p < _heap.size()) {
            fix(p, last);
        }
    }

    // The sifts carry the event being placed in registers and write it
    // once, where it ends: reading back an entry just written (as a sift
    // from _heap[i] did) stalled on store forwarding (the 20-byte write
    // and the 24-byte read), a measured 4-5 % of a fabric run.
    //
    // Puts e, whose key changed or which is new, at or from hole i.
    void fix(std::uint32_t i, const event& e) noexcept {
        if (i > 0 && less(e, _heap[(i - 1) / 2])) {
            sift_up(i, e);
        } else {
            sift_down(i, e);
        }
    }

    void sift_up(std::uint32_t i, const event& e) noexcept {
        while (i > 0) {
            const std::uint32_t parent = (i - 1) / 2;
            if (!less(e, _heap[parent])) {
                break;
            }
            place(i, _heap[parent]);
            i = parent;
        }
        place(i, e);
    }

    void sift_down(std::uint32_t i, const event& e) noexcept {
        const auto n = static_cast<std::uint32_t>(_heap.size());
        for (;;) {
            std::uint32_t c = 2 * i + 1;
            if (c >= n) {
                break;
            }
            if (c + 1 < n && less(_heap[c + 1], _heap[c])) {
                ++c;
            }
            if (!less(_heap[c], e)) {
                break;
            }
            place(i, _heap[c]);
            i = c;
        }
        place(i, e);
    }

    std::vector<event> _heap;         // capacity reserved for slots()
    std::vector<std::uint32_t> _pos;  // slot -> index in _heap, npos when idle
    std::vector<nanos> _time;         // slot -> pending time (max when idle)
    std::uint64_t _seq = 0;
};

}  // namespace rocelab::sim
