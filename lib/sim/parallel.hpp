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
// the transfer step.
//
// Over ranks (the distributed mode: the constructor with a partition ->
// rank map and a sync_transport, sim/sync_transport.hpp): every rank
// builds the same partitions' cross links in the same order (their index
// names them in messages; the nodes of another rank's partitions may be
// left out) and runs only its own partitions, on its own threads. The
// window loop is the same one (run_windows); only its two steps differ:
//   T = transport.min_next(earliest pending event of the local partitions)
//   at the window's end: each cross link from a local partition to another
//   rank's gives its outbox (sim_link::take_outbox) as one record in the
//   buffer for that rank; transport.exchange(...); then, in cross-link index
//   order, each cross link into a local partition either transfers (sender
//   local) or takes its record from its sender rank's buffer (push_wire,
//   push_credit), and its receiver's arrival event is set (sync_in): the
//   same calls in the same order as on one process, so the runs are equal.
// A buffer is a sequence of records in increasing cross-link index, host
// byte order (the ranks share one architecture):
//   u32 cross-link index, u32 frames, u32 credit updates, then
//   each credit update: i64 arrive, u64 fccl, u8 vl, then
//   each frame:         i64 depart, i64 arrive, u32 len, u32 n, n bytes (Traits::serialize)
// in the link's order (as transfer() would move them).
// Only links that carried something are written. A cross link between
// ranks with no propagation delay is refused (add_cross_link): it would
// leave windows one minimum frame's wire time long, a collective each.
// The buffers are kept and reused across windows.
//
// Counters (parallel_counters): windows, transfers, and `late`: frames
// that reached their link after their arrival time (a lookahead longer
// than the link takes); it must stay 0, and the fabric fails a run where it
// does not.
//
// Where the threads' wall time goes (thread_times(), one entry per thread,
// thread 0 the caller's), from a steady clock read at the barrier's edges
// only (two or three reads per window per thread, nothing per event):
//   busy_ns: running its partitions' events (run_share);
//   wait_ns: waiting at the barrier. Thread 0: from the end of its share
//     to the last worker's done. A worker: from its done to the next
//     window's go, so it also holds thread 0's serial work (the window's
//     transfers, the next window's start, and the caller's own work between
//     two run_until calls); the wait after the last window is not counted.
// With one thread nobody waits: wait_ns stays 0, busy_ns is still taken.
// The figures change nothing the partitions do.
//
// Example:
//   parallel_engine<frame> pe(2);
//   auto a = pe.part(0).add_node(src); auto b = pe.part(1).add_node(sink);
//   pe.add_cross_link(0, a, 1, b, link_cfg{...});
//   pe.set_lookahead(nanos{...});
//   pe.run_until(1_ms, 2);
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cstring>
#include <string>

#include "core/units.hpp"
#include "sim/engine.hpp"
#include "sim/sync_transport.hpp"

namespace rocelab::sim {

// A Traits that can carry items between ranks (link.hpp, item_traits).
template <typename Item, typename Traits>
concept rank_serialisable = requires(const Traits& t, const Item& it, std::vector<std::byte>& out,
                                     const std::byte* p, std::size_t n) {
    t.serialize(it, out);
    { t.deserialize(p, n) } -> std::convertible_to<Item>;
};

struct thread_time {
    std::int64_t busy_ns = 0;  // running its partitions
    std::int64_t wait_ns = 0;  // waiting at the window barrier (above)
};

struct parallel_counters {
    std::uint64_t windows = 0;    // synchronisation windows run
    std::uint64_t transfers = 0;  // split links that carried frames at a window's end
    std::uint64_t late = 0;       // frames transferred after their arrival time had passed: a lookahead
                                  // longer than a cross link takes; over ranks also a window end after
                                  // which a rank had an event before the agreed next start (must stay 0)
};

template <typename Item, typename Traits = item_traits<Item>>
class parallel_engine {
public:
    using engine_type = engine<Item, Traits>;
    using link_type = sim_link<Item, Traits>;

    explicit parallel_engine(std::size_t partitions) {
        if (partitions == 0) { throw std::invalid_argument("parallel engine: no partition"); }
        for (std::size_t i = 0; i < partitions; ++i) { _parts.push_back(std::make_unique<engine_type>()); }
        for (auto& p : _parts) { _run.push_back(p.get()); }
    }
    // Over ranks: partition p runs on rank part_rank[p]; this process is
    // rank t.rank() of t.ranks() and runs only its partitions. `t` must
    // outlive the engine. Every rank's run_until is collective.
    parallel_engine(const std::vector<unsigned>& part_rank, sync_transport& t) : _tr(&t), _part_rank(part_rank) {
        static_assert(rank_serialisable<Item, Traits>,
                      "parallel engine over ranks: Traits needs serialize(const Item&, std::vector<std::byte>&) and "
                      "deserialize(const std::byte*, std::size_t) (sim/link.hpp, item_traits)");
        if (part_rank.empty()) { throw std::invalid_argument("parallel engine: no partition"); }
        for (const unsigned r : part_rank) {
            if (r >= t.ranks()) {
                throw std::invalid_argument("parallel engine: a partition is mapped to rank " + std::to_string(r) +
                                            " of " + std::to_string(t.ranks()));
            }
        }
        for (std::size_t i = 0; i < part_rank.size(); ++i) { _parts.push_back(std::make_unique<engine_type>()); }
        for (std::size_t i = 0; i < part_rank.size(); ++i) {
            if (part_rank[i] == t.rank()) { _run.push_back(_parts[i].get()); }
        }
        _send.resize(t.ranks());
        _recv.resize(t.ranks());
        _cursor.resize(t.ranks());
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
        if (_tr != nullptr && _part_rank[pa] != _part_rank[pb] && cfg.prop_delay.v <= 0) {
            throw std::invalid_argument(
                "parallel engine: cross link " + std::to_string(_cross.size()) + " (partition " + std::to_string(pa) +
                " on rank " + std::to_string(_part_rank[pa]) + " -> partition " + std::to_string(pb) + " on rank " +
                std::to_string(_part_rank[pb]) +
                ") has no propagation delay: a link between ranks needs one (the lookahead); "
                "give it a delay or put both partitions on one rank");
        }
        auto l = std::make_unique<link_type>(cfg, traits);
        l->set_split();
        // Over ranks, the receiving half lives on the receiver's rank only.
        const std::uint32_t in = is_local(pb) ? _parts[pb]->add_link_in(to, *l) : UINT32_MAX;
        _cross.push_back(cross{std::move(l), static_cast<std::uint32_t>(pa), static_cast<std::uint32_t>(pb), in});
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
    // every (local) partition's clock is at `end`. Over ranks: collective,
    // `threads` per rank; throws std::runtime_error on a malformed message.
    void run_until(nanos end, unsigned threads) {
        if (_tr == nullptr) {
            run_windows(end, threads, in_process{this});
        } else {
            run_windows(end, threads, over_ranks{this});
        }
    }

    const parallel_counters& counters() const noexcept { return _c; }
    // Per thread of the last run_until's thread count (see the header).
    // Read it between runs (the workers write theirs before they report a
    // window done, so what the caller reads is complete to the last window).
    std::vector<thread_time> thread_times() const {
        std::vector<thread_time> v;
        for (const auto& t : _times) {
            v.push_back(t.t);
        }
        return v;
    }
    nanos now() const noexcept { return _tr == nullptr ? _parts.front()->now() : _now; }

    // Over ranks: this process's rank, and the rank of partition p (one
    // process: 0).
    unsigned rank() const noexcept { return _tr == nullptr ? 0 : _tr->rank(); }
    unsigned rank_of(std::size_t p) const noexcept { return _tr == nullptr ? 0 : _part_rank[p]; }
    bool is_local(std::size_t p) const noexcept { return _tr == nullptr || _part_rank[p] == _tr->rank(); }

private:
    struct cross {
        std::unique_ptr<link_type> l;
        std::uint32_t from_part = 0;
        std::uint32_t to_part = 0;
        std::uint32_t in = 0;  // its index in the receiving partition's engine (UINT32_MAX: on another rank)
    };

    // The window loop, one for both modes; Sync gives its two steps:
    // min_next(local earliest event), for the first window, and
    // end_window(w), which moves the frames and returns the next window's
    // start (the earliest pending event over every rank).
    template <typename Sync>
    void run_windows(nanos end, unsigned threads, Sync sync) {
        if (threads == 0) { threads = 1; }
        if (threads > _run.size()) { threads = std::max<unsigned>(1, static_cast<unsigned>(_run.size())); }
        start_threads(threads);
        for (nanos t = sync.min_next(local_next()); t <= end;) {
            const nanos w = end - t < _lookahead ? end : nanos{t.v + _lookahead.v - 1};
            run_window(w);
            ++_c.windows;
            t = sync.end_window(w);
        }
        for (engine_type* p : _run) { p->run_until(end); }  // nothing left <= end: moves the clocks
        _now = std::max(_now, end);
    }
    // The earliest pending event of this rank's partitions.
    nanos local_next() const noexcept {
        nanos t = nanos::max();
        for (const engine_type* p : _run) { t = std::min(t, p->next_event_time()); }
        return t;
    }

    // One process: every cross link's outbox onto its wire.
    struct in_process {
        parallel_engine* e;
        nanos min_next(nanos t) const noexcept { return t; }
        nanos end_window(nanos w) const noexcept {
            for (auto& c : e->_cross) {
                if (c.l->transfer()) { e->arrived(c, w); }
            }
            return e->local_next();
        }
    };
    // A cross link moved frames into its receiving partition's wire.
    void arrived(cross& c, nanos w) noexcept {
        // Causality: every frame must arrive after the window it was sent in.
        if (c.l->next_wire_arrival() <= w) { ++_c.late; }
        _parts[c.to_part]->sync_in(c.in);
        ++_c.transfers;
    }

    // Over ranks ("Over ranks" above).
    struct over_ranks {
        parallel_engine* e;
        nanos min_next(nanos t) const { return e->_tr->min_next(t); }
        nanos end_window(nanos w) const { return e->exchange_window(w); }
    };

    template <typename T>
    static void put(std::vector<std::byte>& b, T v) {
        const std::size_t at = b.size();
        b.resize(at + sizeof v);
        std::memcpy(b.data() + at, &v, sizeof v);
    }
    template <typename T>
    static T get(const std::vector<std::byte>& b, std::size_t& at) {
        if (b.size() - at < sizeof(T)) { throw std::runtime_error("parallel engine over ranks: truncated message"); }
        T v;
        std::memcpy(&v, b.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }

    // Returns the next window's start: the minimum over the ranks of each
    // one's earliest event once the frames are in. Each rank gives its
    // partitions' pending events and the arrival of the first frame or
    // credit in each outbox it sends from (to any partition), since what a
    // rank receives is what the others send; the minimum travels with the
    // frames (sync_transport::exchange_min), and each rank checks after the
    // exchange that it has no event before it (else `late`).
    nanos exchange_window(nanos w) {
        if constexpr (rank_serialisable<Item, Traits>) {
            const unsigned me = _tr->rank();
            for (auto& b : _send) { b.clear(); }
            nanos next = local_next();
            // 1. outboxes of the links leaving this rank, in index order
            for (std::size_t i = 0; i < _cross.size(); ++i) {
                cross& c = _cross[i];
                const unsigned to = _part_rank[c.to_part];
                if (_part_rank[c.from_part] != me) { continue; }
                next = std::min(next, c.l->outbox_first_arrival());
                if (to == me) { continue; }
                std::vector<std::byte>& b = _send[to];
                const std::size_t head = b.size();
                put<std::uint32_t>(b, static_cast<std::uint32_t>(i));
                put<std::uint32_t>(b, 0);
                put<std::uint32_t>(b, 0);
                std::uint32_t frames = 0, credits = 0;
                const Traits& tr = c.l->traits();
                const bool moved = c.l->take_outbox(
                    [&](const Item& it, std::int64_t depart, std::int64_t arrive, std::uint32_t len) {
                        put<std::int64_t>(b, depart);
                        put<std::int64_t>(b, arrive);
                        put<std::uint32_t>(b, len);
                        const std::size_t nat = b.size();
                        put<std::uint32_t>(b, 0);
                        tr.serialize(it, b);
                        const auto n = static_cast<std::uint32_t>(b.size() - nat - sizeof(std::uint32_t));
                        std::memcpy(b.data() + nat, &n, sizeof n);
                        ++frames;
                    },
                    [&](const credit_update& u) {
                        put<std::int64_t>(b, u.arrive);
                        put<std::uint64_t>(b, u.fccl);
                        put<std::uint8_t>(b, u.vl);
                        ++credits;
                    });
                if (!moved) {
                    b.resize(head);
                    continue;
                }
                // The counts, now known (take_outbox gave the credits first, then the frames).
                std::memcpy(b.data() + head + 4, &frames, sizeof frames);
                std::memcpy(b.data() + head + 8, &credits, sizeof credits);
            }
            // 2. the exchange, and the next window's start
            const nanos t = _tr->exchange_min(_send, _recv, next);
            // 3. every cross link into a local partition, in index order
            for (auto& k : _cursor) { k = 0; }
            for (std::size_t i = 0; i < _cross.size(); ++i) {
                cross& c = _cross[i];
                if (_part_rank[c.to_part] != me) { continue; }
                const unsigned from = _part_rank[c.from_part];
                bool moved = false;
                if (from == me) {
                    moved = c.l->transfer();
                } else {
                    const std::vector<std::byte>& b = _recv[from];
                    std::size_t& at = _cursor[from];
                    if (at < b.size()) {
                        std::size_t peek = at;
                        if (get<std::uint32_t>(b, peek) == i) {
                            at = peek;
                            unpack(c, b, at);
                            moved = true;
                        }
                    }
                }
                if (moved) { arrived(c, w); }
            }
            for (unsigned r = 0; r < _recv.size(); ++r) {
                if (_cursor[r] != _recv[r].size()) {
                    throw std::runtime_error("parallel engine over ranks: rank " + std::to_string(r) +
                                             " sent a record for a cross link not into this rank, or out of order");
                }
            }
            if (local_next() < t) { ++_c.late; }  // an event before the window every rank agreed on
            return t;
        } else {
            (void)w;
            return _tr->min_next(local_next());
        }
    }
    void unpack(cross& c, const std::vector<std::byte>& b, std::size_t& at) {
        const auto frames = get<std::uint32_t>(b, at);
        const auto credits = get<std::uint32_t>(b, at);
        for (std::uint32_t k = 0; k < credits; ++k) {
            credit_update u;
            u.arrive = get<std::int64_t>(b, at);
            u.fccl = get<std::uint64_t>(b, at);
            u.vl = get<std::uint8_t>(b, at);
            if (!c.l->push_credit(u)) { throw std::runtime_error("parallel engine over ranks: credit channel full"); }
        }
        const Traits& tr = c.l->traits();
        for (std::uint32_t k = 0; k < frames; ++k) {
            const auto depart = get<std::int64_t>(b, at);
            const auto arrive = get<std::int64_t>(b, at);
            const auto len = get<std::uint32_t>(b, at);
            const auto n = get<std::uint32_t>(b, at);
            if (b.size() - at < n) { throw std::runtime_error("parallel engine over ranks: truncated message"); }
            if (!c.l->push_wire(tr.deserialize(b.data() + at, n), depart, arrive, len)) {
                throw std::runtime_error("parallel engine over ranks: a link's wire storage is full");
            }
            at += n;
        }
    }

    // Every partition runs up to w; thread k takes partitions k, k + n, ...
    void run_window(nanos w) {
        const unsigned n = _nthreads;
        if (n <= 1) {
            const std::int64_t t0 = clock_ns();
            for (engine_type* p : _run) { p->run_until(w); }
            _times[0].t.busy_ns += clock_ns() - t0;
            return;
        }
        _window_end.store(w.v, std::memory_order_relaxed);
        _done.store(0, std::memory_order_relaxed);
        _generation.fetch_add(1, std::memory_order_release);  // go
        const std::int64_t t0 = clock_ns();
        run_share(0, w);
        const std::int64_t t1 = clock_ns();
        _times[0].t.busy_ns += t1 - t0;
        unsigned spins = 0;
        while (_done.load(std::memory_order_acquire) != n - 1) {
            if (++spins > 4096) {
                std::this_thread::yield();
                spins = 0;
            } else {
                spin_pause();
            }
        }
        _times[0].t.wait_ns += clock_ns() - t1;
    }
    void run_share(unsigned k, nanos w) {
        for (std::size_t p = k; p < _run.size(); p += _nthreads) { _run[p]->run_until(w); }
    }
    static std::int64_t clock_ns() noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
    static void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }

    void start_threads(unsigned n) {
        if (n == _nthreads && _times.size() == n) {
            return;
        }
        stop_threads();
        _nthreads = n;
        _times = std::vector<thread_slot>(n);
        _quit.store(false);
        const std::uint64_t gen0 = _generation.load();
        for (unsigned k = 1; k < n; ++k) {
            _threads.emplace_back([this, k, gen0] {
                if (_thread_init) { _thread_init(k); }
                std::uint64_t seen = gen0;
                thread_time& tt = _times[k].t;  // this thread's own slot
                std::int64_t idle_from = clock_ns();
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
                    const std::int64_t go = clock_ns();
                    tt.wait_ns += go - idle_from;
                    run_share(k, nanos{_window_end.load(std::memory_order_relaxed)});
                    idle_from = clock_ns();
                    tt.busy_ns += idle_from - go;
                    _done.fetch_add(1, std::memory_order_acq_rel);  // publishes tt too
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
    std::vector<engine_type*> _run;  // the partitions this process runs (one process: all)
    std::vector<cross> _cross;
    nanos _now{0};
    // over ranks
    sync_transport* _tr = nullptr;
    std::vector<unsigned> _part_rank;
    std::vector<std::vector<std::byte>> _send, _recv;  // per rank, reused across windows
    std::vector<std::size_t> _cursor;                  // per sender rank: read position in _recv
    nanos _lookahead{1};
    parallel_counters _c;
    std::function<void(unsigned)> _thread_init;
    // threads
    unsigned _nthreads = 1;
    std::vector<std::thread> _threads;
    struct alignas(64) thread_slot {  // one per thread, written by it alone
        thread_time t;
    };
    std::vector<thread_slot> _times = std::vector<thread_slot>(1);
    alignas(64) std::atomic<std::uint64_t> _generation{0};
    alignas(64) std::atomic<std::int64_t> _window_end{0};
    alignas(64) std::atomic<unsigned> _done{0};
    std::atomic<bool> _quit{false};
};

}  // namespace rocelab::sim
