// worker.hpp - the poll loop around a pipeline on one lcore, for every app.
//
// run_worker() reads the clock once per loop, calls pipe.poll(now), accounts
// busy cycles (loops that moved at least one frame) and loops, and - for a
// pipeline with a `max_poll_gap_ns` member (the switch) - records the longest
// time between two polls. After each poll it calls an optional per-loop hook
// `hook(pipe, now)` (the switch's queue-depth sampler, queue_sampler.hpp);
// the default no_hook compiles away. It returns when `ctl.stop` becomes true.
// It never allocates, locks, throws or logs.
//
// The pipeline publishes busy_cycles and loops (relaxed stores every 64
// loops and at exit) for telemetry, the status line and the report.
//
// Clock: any clock_source. The apps pass a copy of main's run clock (same
// epoch as capture, telemetry and report); the tests a manual or TSC clock.
//
// worker launches run_worker() on the first worker lcore (or on a thread
// beside the control loop when EAL was given one lcore) and joins it.
//
//   runtime::worker_ctl<sw::switch_pipeline> ctl{pipe.get()};
//   runtime::worker w(ctl, clock.tsc, "rocelab-switch", sampler);
//   ...  ctl.stop.store(true); w.join();
#pragma once

#include <rte_launch.h>
#include <rte_lcore.h>

#include <atomic>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>

#include "core/clock.hpp"
#include "core/units.hpp"

namespace rocelab::runtime {

template <typename Pipeline>
struct worker_ctl {
    Pipeline* pipe = nullptr;
    std::atomic<bool> stop{false};
    std::atomic<bool> running{false};  // set while run_worker() loops
};

// The default per-loop hook: nothing.
struct no_hook {
    template <typename Pipeline>
    void operator()(Pipeline&, nanos) const noexcept {}
};

// Pipelines that record the longest gap between polls (lossless headroom
// must cover the time the lcore does not poll).
template <typename Pipeline>
concept tracks_poll_gap = requires(Pipeline& p) {
    { p.max_poll_gap_ns } -> std::convertible_to<std::int64_t>;
};

template <typename Pipeline, clock_source Clock, typename Hook = no_hook>
void run_worker(worker_ctl<Pipeline>& ctl, Clock& clock, Hook&& hook = {}) noexcept {
    Pipeline& pipe = *ctl.pipe;
    ctl.running.store(true, std::memory_order_release);
    std::uint64_t busy = 0;
    std::uint64_t loops = 0;
    [[maybe_unused]] nanos prev = clock.now();
    while (!ctl.stop.load(std::memory_order_relaxed)) {
        const std::uint64_t t0 = __builtin_ia32_rdtsc();
        const nanos now = clock.now();
        if constexpr (tracks_poll_gap<Pipeline>) {
            // While the lcore does not poll, frames wait in RX rings
            // unaccounted (dedicated, isolated cores keep this at microseconds).
            if (now - prev > nanos{pipe.max_poll_gap_ns}) {
                __atomic_store_n(&pipe.max_poll_gap_ns, (now - prev).v, __ATOMIC_RELAXED);
            }
            prev = now;
        }
        const std::uint32_t w = pipe.poll(now);
        ++loops;
        if (w != 0) { busy += __builtin_ia32_rdtsc() - t0; }
        if ((loops & 63u) == 0) {
            __atomic_store_n(&pipe.busy_cycles, busy, __ATOMIC_RELAXED);
            __atomic_store_n(&pipe.loops, loops, __ATOMIC_RELAXED);
        }
        hook(pipe, now);
    }
    __atomic_store_n(&pipe.busy_cycles, busy, __ATOMIC_RELAXED);
    __atomic_store_n(&pipe.loops, loops, __ATOMIC_RELAXED);
    ctl.running.store(false, std::memory_order_release);
}

// Runs fn(arg) on the first worker lcore, or - when EAL was given a single
// lcore - on a thread beside the control loop (with a warning).
class lcore_launch {
public:
    lcore_launch(int (*fn)(void*), void* arg, const char* prog) : _lcore(rte_get_next_lcore(-1, 1, 0)) {
        if (_lcore < RTE_MAX_LCORE) {
            rte_eal_remote_launch(fn, arg, _lcore);
        } else {
            std::fprintf(stderr, "%s: only one lcore given; the worker shares CPU with control "
                                 "(use -l 0-1 for a dedicated worker lcore)\n", prog);
            _thread = std::thread([fn, arg] { fn(arg); });
        }
    }
    lcore_launch(const lcore_launch&) = delete;
    lcore_launch& operator=(const lcore_launch&) = delete;
    ~lcore_launch() { join(); }
    // Wait for fn to return (the caller has asked it to stop).
    void join() {
        if (_lcore < RTE_MAX_LCORE) {
            if (!_joined) { rte_eal_wait_lcore(_lcore); }
        } else if (_thread.joinable()) {
            _thread.join();
        }
        _joined = true;
    }

private:
    unsigned _lcore;
    std::thread _thread;
    bool _joined = false;
};

// run_worker(ctl, <copy of clock>, <copy of hook>) on a worker lcore. The
// worker polls its own copies (kept on its stack): a copy of a clock has the
// same epoch as the original.
class worker {
public:
    template <typename Pipeline, clock_source Clock, typename Hook = no_hook>
    worker(worker_ctl<Pipeline>& ctl, const Clock& clock, const char* prog, Hook hook = {})
        : _job(std::make_unique<job<Pipeline, Clock, Hook>>(ctl, clock, hook)),
          _launch(&job<Pipeline, Clock, Hook>::entry, _job.get(), prog) {}
    void join() { _launch.join(); }

private:
    struct job_base {
        virtual ~job_base() = default;
    };
    template <typename Pipeline, typename Clock, typename Hook>
    struct job final : job_base {
        job(worker_ctl<Pipeline>& c, const Clock& k, const Hook& h) : ctl(c), clock(k), hook(h) {}
        static int entry(void* arg) {
            auto* j = static_cast<job*>(arg);
            Clock clock = j->clock;
            Hook hook = j->hook;
            run_worker(j->ctl, clock, hook);
            return 0;
        }
        worker_ctl<Pipeline>& ctl;
        Clock clock;
        Hook hook;
    };
    std::unique_ptr<job_base> _job;
    lcore_launch _launch;
};

}  // namespace rocelab::runtime
