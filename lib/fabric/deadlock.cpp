#include "fabric/deadlock.hpp"

#include <algorithm>
#include <deque>
#include <set>

namespace rocelab {

namespace {

// The shortest cycle through `start` in the graph (BFS back to start), or
// empty. Neighbours are visited in sorted order, so the result depends on
// the state only.
std::vector<std::size_t> shortest_cycle(std::size_t start, const std::vector<std::vector<std::size_t>>& adj) {
    std::vector<std::size_t> parent(adj.size(), SIZE_MAX);
    std::deque<std::size_t> todo{start};
    std::vector<bool> seen(adj.size(), false);
    seen[start] = true;
    while (!todo.empty()) {
        const std::size_t u = todo.front();
        todo.pop_front();
        for (std::size_t v : adj[u]) {
            if (v == start) {
                std::vector<std::size_t> path{u};
                for (std::size_t w = u; w != start;) {
                    w = parent[w];
                    path.push_back(w);
                }
                std::reverse(path.begin(), path.end());  // start ... u
                return path;
            }
            if (!seen[v]) {
                seen[v] = true;
                parent[v] = u;
                todo.push_back(v);
            }
        }
    }
    return {};
}

}  // namespace

std::size_t deadlock_detector::open() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(_found.begin(), _found.end(), [](const dl_deadlock& d) { return d.cleared.v < 0; }));
}

void deadlock_detector::observe(nanos now, const std::vector<dl_queue_state>& queues) {
    _new_found.clear();
    _new_cleared.clear();
    // The stuck queues, in reference order.
    std::vector<const dl_queue_state*> stuck;
    for (const dl_queue_state& s : queues) {
        const auto it = _prev.find(s.q);
        if (it != _prev.end() && s.paused && it->second.paused && s.depth_bytes > 0 &&
            s.sent_packets == it->second.sent) {
            stuck.push_back(&s);
        }
    }
    std::sort(stuck.begin(), stuck.end(), [](const auto* a, const auto* b) { return a->q < b->q; });
    std::set<dl_queue_ref> stuck_set;
    for (const auto* s : stuck) { stuck_set.insert(s->q); }

    // Deadlocks that no longer hold.
    for (std::size_t i = 0; i < _found.size(); ++i) {
        dl_deadlock& d = _found[i];
        if (d.cleared.v >= 0) { continue; }
        const bool holds =
            std::all_of(d.cycle.begin(), d.cycle.end(), [&](const dl_queue_ref& r) { return stuck_set.count(r) != 0; });
        if (!holds) {
            d.cleared = now;
            _new_cleared.push_back(i);
        }
    }

    // The wait-for graph over the stuck queues.
    std::vector<std::vector<std::size_t>> adj(stuck.size());
    for (std::size_t u = 0; u < stuck.size(); ++u) {
        const dl_queue_state& s = *stuck[u];
        if (s.peer == dl_no_node || !s.peer_holds) { continue; }
        for (std::size_t v = 0; v < stuck.size(); ++v) {
            if (stuck[v]->q.node == s.peer) { adj[u].push_back(v); }
        }
    }
    // Queues already on an open deadlock are not reported again.
    std::set<dl_queue_ref> on_open;
    for (const dl_deadlock& d : _found) {
        if (d.cleared.v < 0) { on_open.insert(d.cycle.begin(), d.cycle.end()); }
    }
    for (std::size_t u = 0; u < stuck.size(); ++u) {
        if (on_open.count(stuck[u]->q) != 0) { continue; }
        const std::vector<std::size_t> c = shortest_cycle(u, adj);
        if (c.empty()) { continue; }
        dl_deadlock d;
        d.detected = now;
        for (std::size_t k : c) { d.cycle.push_back(stuck[k]->q); }
        if (std::any_of(d.cycle.begin(), d.cycle.end(), [&](const dl_queue_ref& r) { return on_open.count(r) != 0; })) {
            continue;  // shares queues with one reported already
        }
        on_open.insert(d.cycle.begin(), d.cycle.end());
        _new_found.push_back(_found.size());
        _found.push_back(std::move(d));
    }

    _prev.clear();
    for (const dl_queue_state& s : queues) { _prev[s.q] = {s.paused, s.sent_packets}; }
}

}  // namespace rocelab
