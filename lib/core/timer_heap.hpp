// timer_heap.hpp - an indexed min-heap of deadlines, one per id.
//
// What: ids 0..n-1 (a node's flows, say) each have at most one deadline;
// set(id, t) inserts or moves it, clear(id) removes it, top() is the
// earliest (ties: the smaller id), pop_due(now, f) calls f(id) for every
// deadline <= now and removes them. So the owner of many timers pays for
// the ones that are due, not for all of them: an idle id costs nothing.
//
// Storage is allocated by reserve() (control path) and never again.
// O(log n) per set/clear/pop, O(1) top. Deterministic: nothing depends on
// addresses.
//
// Example:
//   timer_heap h; h.reserve(3);
//   h.set(2, nanos{50}); h.set(0, nanos{100});
//   h.top_time() == nanos{50};
//   h.pop_due(nanos{60}, [](std::uint32_t id) { /* 2 */ });
#pragma once

#include <cstdint>
#include <vector>

#include "core/line_vector.hpp"
#include "core/units.hpp"

namespace rocelab {

class timer_heap {
public:
    void reserve(std::size_t ids) {
        _heap.reserve(ids);
        _pos.assign(ids, npos);
    }
    bool empty() const noexcept { return _heap.empty(); }
    std::size_t size() const noexcept { return _heap.size(); }
    nanos top_time() const noexcept { return _heap.empty() ? nanos::max() : _heap.front().time(); }
    // The id with the earliest deadline (ties: the smaller id); call only when !empty().
    std::uint32_t top_id() const noexcept { return _heap.front().id; }
    nanos time_of(std::uint32_t id) const noexcept {
        const std::uint32_t i = _pos[id];
        return i == npos ? nanos::max() : _heap[i].time();
    }

    // Insert or move id's deadline; nanos::max() removes it.
    void set(std::uint32_t id, nanos t) noexcept {
        if (t == nanos::max()) {
            clear(id);
            return;
        }
        const std::uint32_t i = _pos[id];
        if (i == npos) {
            const auto at = static_cast<std::uint32_t>(_heap.size());
            _heap.push_back(entry{flip(t), id});  // capacity reserved: no allocation
            up(at, _heap[at]);
            return;
        }
        const std::uint64_t old = _heap[i].t;
        const std::uint64_t now = flip(t);
        if (now == old) { return; }
        const entry e{now, id};
        if (now < old) {
            up(i, e);
        } else {
            down(i, e);
        }
    }
    void clear(std::uint32_t id) noexcept {
        const std::uint32_t i = _pos[id];
        if (i == npos) { return; }
        _pos[id] = npos;
        const entry last = _heap.back();
        _heap.pop_back();
        if (last.id == id) { return; }
        // The last entry fills the hole: it moves up or down, not both.
        if (i > 0 && less(last, _heap[(i - 1) / 2])) {
            up(i, last);
        } else {
            down(i, last);
        }
    }
    // Removes every deadline (keeps the storage).
    void clear_all() noexcept {
        for (const entry& e : _heap) { _pos[e.id] = npos; }
        _heap.clear();
    }
    // f(id) for every deadline <= now, earliest first; each is removed first.
    template <typename F>
    void pop_due(nanos now, F&& f) noexcept(noexcept(f(std::uint32_t{}))) {
        const std::uint64_t until = flip(now);
        while (!_heap.empty() && _heap.front().t <= until) {
            const std::uint32_t id = _heap.front().id;
            clear(id);
            f(id);
        }
    }

private:
    static constexpr std::uint32_t npos = UINT32_MAX;
    // A deadline and its id side by side, so a sift reads one array: the
    // time with its sign bit flipped (signed order becomes unsigned order)
    // and (time, id) compared as one 96-bit key in a 128-bit integer, with
    // no data-dependent branch. Ties go to the smaller id, as before.
    struct entry {
        std::uint64_t t;
        std::uint32_t id;
        nanos time() const noexcept { return nanos{static_cast<std::int64_t>(t ^ sign)}; }
    };
    static constexpr std::uint64_t sign = std::uint64_t{1} << 63;
    static std::uint64_t flip(nanos t) noexcept { return static_cast<std::uint64_t>(t.v) ^ sign; }
    static bool less(const entry& a, const entry& b) noexcept {
        return ((static_cast<unsigned __int128>(a.t) << 32) | a.id) < ((static_cast<unsigned __int128>(b.t) << 32) | b.id);
    }
    // Puts e at i, or above it while it is earlier than its parent.
    void up(std::uint32_t i, const entry e) noexcept {
        while (i > 0) {
            const std::uint32_t p = (i - 1) / 2;
            if (!less(e, _heap[p])) { break; }
            _heap[i] = _heap[p];
            _pos[_heap[i].id] = i;
            i = p;
        }
        _heap[i] = e;
        _pos[e.id] = i;
    }
    // Puts e at i, or below it while a child is earlier.
    void down(std::uint32_t i, const entry e) noexcept {
        const auto n = static_cast<std::uint32_t>(_heap.size());
        for (;;) {
            std::uint32_t c = 2 * i + 1;
            if (c >= n) { break; }
            if (c + 1 < n && less(_heap[c + 1], _heap[c])) { ++c; }
            if (!less(_heap[c], e)) { break; }
            _heap[i] = _heap[c];
            _pos[_heap[i].id] = i;
            i = c;
        }
        _heap[i] = e;
        _pos[e.id] = i;
    }

    // On cache lines of their own (line_vector.hpp): one worker's heap is
    // written at every poll, and small heaps of two workers shared lines.
    line_vector<entry> _heap;         // (deadline, id), a min-heap on (deadline, id)
    line_vector<std::uint32_t> _pos;  // id -> heap index, npos when absent
};

}  // namespace rocelab
