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

#include "core/units.hpp"

namespace rocelab {

class timer_heap {
public:
    void reserve(std::size_t ids) {
        _heap.reserve(ids);
        _pos.assign(ids, npos);
        _time.assign(ids, nanos::max());
    }
    bool empty() const noexcept { return _heap.empty(); }
    std::size_t size() const noexcept { return _heap.size(); }
    nanos top_time() const noexcept { return _heap.empty() ? nanos::max() : _time[_heap.front()]; }
    // The id with the earliest deadline (ties: the smaller id); call only when !empty().
    std::uint32_t top_id() const noexcept { return _heap.front(); }
    nanos time_of(std::uint32_t id) const noexcept { return _time[id]; }

    // Insert or move id's deadline; nanos::max() removes it.
    void set(std::uint32_t id, nanos t) noexcept {
        if (t == nanos::max()) {
            clear(id);
            return;
        }
        if (_pos[id] == npos) {
            _time[id] = t;
            _pos[id] = static_cast<std::uint32_t>(_heap.size());
            _heap.push_back(id);
            up(_pos[id]);
            return;
        }
        const nanos old = _time[id];
        if (t == old) { return; }
        _time[id] = t;
        if (t < old) {
            up(_pos[id]);
        } else {
            down(_pos[id]);
        }
    }
    void clear(std::uint32_t id) noexcept {
        const std::uint32_t i = _pos[id];
        if (i == npos) { return; }
        _time[id] = nanos::max();
        _pos[id] = npos;
        const std::uint32_t last = _heap.back();
        _heap.pop_back();
        if (last == id) { return; }
        _heap[i] = last;
        _pos[last] = i;
        up(i);
        down(_pos[last]);
    }
    // f(id) for every deadline <= now, earliest first; each is removed first.
    template <typename F>
    void pop_due(nanos now, F&& f) noexcept(noexcept(f(std::uint32_t{}))) {
        while (!_heap.empty() && _time[_heap.front()] <= now) {
            const std::uint32_t id = _heap.front();
            clear(id);
            f(id);
        }
    }

private:
    static constexpr std::uint32_t npos = UINT32_MAX;
    bool less(std::uint32_t a, std::uint32_t b) const noexcept {
        return _time[a] < _time[b] || (_time[a] == _time[b] && a < b);
    }
    void up(std::uint32_t i) noexcept {
        const std::uint32_t id = _heap[i];
        while (i > 0) {
            const std::uint32_t p = (i - 1) / 2;
            if (!less(id, _heap[p])) { break; }
            _heap[i] = _heap[p];
            _pos[_heap[i]] = i;
            i = p;
        }
        _heap[i] = id;
        _pos[id] = i;
    }
    void down(std::uint32_t i) noexcept {
        const auto n = static_cast<std::uint32_t>(_heap.size());
        const std::uint32_t id = _heap[i];
        for (;;) {
            std::uint32_t c = 2 * i + 1;
            if (c >= n) { break; }
            if (c + 1 < n && less(_heap[c + 1], _heap[c])) { ++c; }
            if (!less(_heap[c], id)) { break; }
            _heap[i] = _heap[c];
            _pos[_heap[i]] = i;
            i = c;
        }
        _heap[i] = id;
        _pos[id] = i;
    }

    std::vector<std::uint32_t> _heap;  // ids
    std::vector<std::uint32_t> _pos;   // id -> heap index, npos when absent
    std::vector<nanos> _time;          // id -> deadline
};

}  // namespace rocelab
