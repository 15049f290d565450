// parallel.hpp - the virtual-time engine over several threads, conservatively
// synchronised, with the same result as one thread.
//
// What: the nodes are split into partitions; each partition is an engine
// (sim/engine.hpp) of its own: its nodes, the links between them, and the
// links *into* them from other partitions (split links, sim/link.hpp). A
// link between partitions carries frames stamped with their arrival time.
//
// Algorithm (conservative, synchronous windows, as YAWNS and ns-3's
// distributed simulator): the lookahead L is the smallest time any frame
// takes on a link between partitions (its propagation delay plus the wire
// time of the smallest frame: nothing crosses faster). Repeat:
//   T = the earliest pending event of any partition;   stop when T > end
//   every partition runs its events up to W = T + L - 1, in parallel
//     (a frame sent at s >= T reaches another partition at >= s + L > W:
//     no partition can receive, within the window, anything another sends
//     in it);
//   then, with every partition stopped, each split link's outbox moves onto
//   its wire (transfer) and its receiver's arrival event is set.
// Within a partition events run exactly as with one engine: at each instant
// the links deliver, then the due nodes are polled in index order; nodes in
// different partitions never act on each other at the same instant. So the
// nodes see the same frames at the same times whatever the number of
// threads, and reports and captures are byte for byte the same.
//
// Threads: `threads` workers (the caller's thread is one of them) take the
// partitions round-robin (partition p runs on thread p mod threads). They
// meet twice per window on a spinning barrier. Windows are skipped over
// idle time (T jumps). The transport of the frames between partitions is
// the transfer step; a distributed version would carry the same (frame,
// arrival time) records as messages (MPI), with the same windows.
//
// Counters (parallel_counters): windows, transfers, and `late`: frames
// that reached their link after their arrival time (a lookahead longer
// than the link takes); it must stay 0, and the fabric fails a run where it
// does not.
//
// Example:
//   parallel_engine<frame> pe(2);
//   auto a = pe.part(0).add_node(src); auto b = pe.part(1).add_node(sink);
//   pe.add_cross_link(0, a, 1, b, link_cfg{...});
//   pe.set_lookahead(nanos{...});
//   pe.run_until(1_ms, 2);
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/units.hpp"
#include "sim/engine.hpp"

namespace rocelab::sim {

struct parallel_counters {
    std::uint64_t windows = 0;    // synchronisation windows run
    std::uint64_t transfers = 0;  // split links that carried frames at a window's end
    std::uint64_t late = 0;       // frames transferred after their arrival time had passed: a lookahead
                                  // longer than a cross link takes (must stay 0)
};

template <typename Item, typename Traits = item_traits<Item>>
class parallel_engine {
public:
    using engine_type = engine<Item, Traits>;
    using link_type = sim_link<Item, Traits>;

    explicit parallel_engine(std::size_t partitions) {
        if (partitions == 0) { throw std::invalid_argument("parallel engine: no partition"); }
        for (std::size_t i = 0; i < partitions; ++i) { _parts.push_back(std::make_unique<engine_type>()); }
    }
    ~parallel_engine() { stop_threads(); }
    parallel_engine(const parallel_engine&) = delete;
    parallel_engine& operator=(const parallel_engine&) = delete;

    std::size_t partitions() const noexcept { return _parts.size(); }
    engine_type& part(std::size_t p) noexcept { return *_parts[p]; }
    const engine_type& part(std::size_t p) const noexcept { return *_parts[p]; }

    // A link from node `from` of partition pa to node `to` of partition pb
    // (pa != pb). Returns its index among the cross links.
    std::uint32_t add_cross_link(std::size_t pa, std::uint32_t from, std::size_t pb, std::uint32_t to,
                                 const link_cfg& cfg, Traits traits = {}) {
        if (pa == pb || pa >= _parts.size() || pb >= _parts.size()) {
            throw std::invalid_argument("parallel engine: a cross link joins two different partitions");
        }
        (void)from;
        auto l = std::make_unique<link_type>(cfg, traits);
        l->set_split();
        const std::uint32_t in = _parts[pb]->add_link_in(to, *l);
        _cross.push_back(cross{std::move(l), static_cast<std::uint32_t>(pb), in});
        return static_cast<std::uint32_t>(_cross.size() - 1);
    }
    link_type& cross_link(std::uint32_t i) noexcept { return *_cross[i].l; }
    std::size_t cross_links() const noexcept { return _cross.size(); }
    // The partition link i arrives in, and its index there.
    std::uint32_t cross_receiver(std::uint32_t i) const noexcept { return _cross[i].to_part; }
    std::uint32_t cross_in_index(std::uint32_t i) const noexcept { return _cross[i].in; }

    // The smallest time a frame takes between partitions (> 0).
    void set_lookahead(nanos l) {
        if (l.v <= 0) { throw std::invalid_argument("parallel engine: lookahead must be > 0"); }
        _lookahead = l;
    }
    nanos lookahead() const noexcept { return _lookahead; }
    // Called once on each worker thread before it runs any partition
    // (e.g. to register it with DPDK); not on the caller's thread.
    void on_thread_start(std::function<void(unsigned)> f) { _thread_init = std::move(f); }

    // Runs every event up to `end` (inclusive) on `threads` threads; then
    // every partition's clock is at `end`.
    void run_until(nanos end, unsigned threads) {
        if (threads == 0) { threads = 1; }
        if (threads > _parts.size()) { threads = static_cast<unsigned>(_parts.size()); }
        start_threads(threads);
        for (;;) {
            nanos t = nanos::max();
            for (auto& p : _parts) { t = std::min(t, p->next_event_time()); }
            if (t > end) { break; }
            const nanos w = end - t < _lookahead ? end : nanos{t.v + _lookahead.v - 1};
            run_window(w);
            ++_c.windows;
            for (auto& c : _cross) {
                if (c.l->transfer()) {
                    // Causality: every frame must arrive after the window it was sent in.
                    if (c.l->next_wire_arrival() <= w) { ++_c.late; }
                    _parts[c.to_part]->sync_in(c.in);
                    ++_c.transfers;
                }
            }
        }
        for (auto& p : _parts) { p->run_until(end); }  // nothing left <= end: moves the clocks
    }

    const parallel_counters& counters() const noexcept { return _c; }
    nanos now() const noexcept { return _parts.front()->now(); }

private:
    struct cross {
        std::unique_ptr<link_type> l;
        std::uint32_t to_part = 0;
        std::uint32_t in = 0;  // its index in the receiving partition's engine
    };

    // Every partition runs up to w; thread k takes partitions k, k + n, ...
    void run_window(nanos w) {
        const unsigned n = _nthreads;
        if (n <= 1) {
            for (auto& p : _parts) { p->run_until(w); }
            return;
        }
        _window_end.store(w.v, std::memory_order_relaxed);
        _done.store(0, std::memory_order_relaxed);
        _generation.fetch_add(1, std::memory_order_release);  // go
        run_share(0, w);
        unsigned spins = 0;
        while (_done.load(std::memory_order_acquire) != n - 1) {
            if (++spins > 4096) {
                std::this_thread::yield();
                spins = 0;
            } else {
                spin_pause();
            }
        }
    }
    void run_share(unsigned k, nanos w) {
        for (std::size_t p = k; p < _parts.size(); p += _nthreads) { _parts[p]->run_until(w); }
    }
    static void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }

    void start_threads(unsigned n) {
        if (n == _nthreads) { return; }
        stop_threads();
        _nthreads = n;
        _quit.store(false);
        const std::uint64_t gen0 = _generation.load();
        for (unsigned k = 1; k < n; ++k) {
            _threads.emplace_back([this, k, gen0] {
                if (_thread_init) { _thread_init(k); }
                std::uint64_t seen = gen0;
                for (;;) {
                    std::uint64_t g;
                    unsigned spins = 0;
                    while ((g = _generation.load(std::memory_order_acquire)) == seen) {
                        if (_quit.load(std::memory_order_relaxed)) { return; }
                        if (++spins > 4096) {
                            std::this_thread::yield();  // sharing a CPU: let the other side run
                            spins = 0;
                        } else {
                            spin_pause();
                        }
                    }
                    seen = g;
                    run_share(k, nanos{_window_end.load(std::memory_order_relaxed)});
                    _done.fetch_add(1, std::memory_order_acq_rel);
                }
            });
        }
    }
    void stop_threads() {
        _quit.store(true);
        for (auto& t : _threads) { t.join(); }
        _threads.clear();
        _nthreads = 1;
    }

    std::vector<std::unique_ptr<engine_type>> _parts;
    std::vector<cross> _cross;
    nanos _lookahead{1};
    parallel_counters _c;
    std::function<void(unsigned)> _thread_init;
    // threads
    unsigned _nthreads = 1;
    std::vector<std::thread> _threads;
    alignas(64) std::atomic<std::uint64_t> _generation{0};
    alignas(64) std::atomic<std::int64_t> _window_end{0};
    alignas(64) std::atomic<unsigned> _done{0};
    std::atomic<bool> _quit{false};
};

}  // namespace rocelab::sim
