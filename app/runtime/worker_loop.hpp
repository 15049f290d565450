// worker_loop.hpp - the poll loop around a pipeline on one lcore, for every app.
//
// run_worker() reads the clock once per loop, calls pipe.poll(now), accounts
// busy cycles (loops that moved at least one frame) and loops, and - for a
// pipeline with `max_poll_gap_ns`, `stalls` and `stalled_ns` members (the
// switch and the generator) - records the longest time between two polls and
// the lcore's stalls.
//
// A stall is a loop whose poll found nothing to do (an idle poll takes well
// under a microsecond) and yet the next loop started more than
// stall_threshold (5 us) later: the CPU was taken from the lcore - a timer
// tick or interrupt handled for tens of microseconds (common in VMs), a
// preemption, a page fault. stalls counts them and stalled_ns sums their
// length. Stalls during a poll that did work are not separable from the work
// and are not counted, unless the next loop started more than
// busy_stall_threshold (10 ms) later: a poll moves a few bursts in
// microseconds, so such a gap is the CPU taken too, whole (a vCPU the
// hypervisor descheduled for 100 ms, seen in a CI run: neither the guest's
// run_delay nor an idle poll showed it). So stalled_ns is a lower bound of
// the time the lcore lost, short of the ticks inside busy polls. A software
// pacer cannot win that time back beyond its burst tolerance: rates and
// FCTs of a run with a large stalled_ns are the host's, not the fabric's
// (docs/generator.md, "Worker stalls"). After each poll it calls an optional per-loop hook
// `hook(pipe, now)` (the switch's queue-depth sampler, queue_sampler.hpp);
// the default no_hook compiles away. It returns when `ctl.stop` becomes true.
// It never allocates, locks, throws or logs. Between two polls it reports a
// quiescent state (quiescence.hpp): a control thread unmapping memory that a
// PMD's burst may read waits for it.
//
// The pipeline publishes busy_cycles and loops (relaxed stores every 64
// loops and at exit) for telemetry, the status line and the report.
//
// Clock: any clock_source. The apps pass a copy of main's run clock (same
// epoch as capture, telemetry and report); the unit test a manual clock.
// Pure: no DPDK (worker.hpp launches it on an lcore).
#pragma once

#include <atomic>
#include <concepts>
#include <thread>
#include <cstdint>

#include "core/clock.hpp"
#include "core/units.hpp"
#include "runtime/quiescence.hpp"

namespace rocelab::runtime {

template <typename Pipeline>
struct worker_ctl {
    Pipeline* pipe = nullptr;
    std::atomic<bool> stop{false};
    std::atomic<bool> running{false};  // set while run_worker() loops
    // Yield the CPU after a poll that found nothing to do, or that could not
    // hand all its frames to another worker (a full handoff queue: a
    // pipeline with waits_on_peer()): for several workers sharing one CPU
    // (correctness tests on a small machine), so an idle worker hands the
    // CPU to a busy one, and a producer to its consumer, at once instead of
    // at the end of its time slice. Never on dedicated lcores.
    bool yield_when_idle = false;
    // The kernel's run_delay of the worker's thread over its run (ns it was
    // runnable but not running: another thread had its CPU), or -1 when it
    // could not be read. Written by the worker's thread as it returns
    // (worker.hpp); read after the join.
    std::int64_t run_delay_ns = -1;
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
    { p.stalls } -> std::convertible_to<std::uint64_t>;
    { p.stalled_ns } -> std::convertible_to<std::int64_t>;
};

// Pipelines (worker views) whose poll can end waiting on another worker.
template <typename Pipeline>
concept waits_on_peers = requires(const Pipeline& p) {
    { p.waits_on_peer() } -> std::convertible_to<bool>;
};

// An idle poll followed by a gap longer than stall_threshold is a stall,
// and so is a busy poll followed by one longer than busy_stall_threshold
// (above).
inline constexpr nanos stall_threshold{5000};
inline constexpr nanos busy_stall_threshold{10'000'000};

// Whether run_worker yields the CPU after a poll that returned `work`
// (worker_ctl::yield_when_idle).
template <typename Pipeline>
bool yields_after(const worker_ctl<Pipeline>& ctl, const Pipeline& pipe, std::uint32_t work) noexcept {
    if (!ctl.yield_when_idle) { return false; }
    if (work == 0) { return true; }
    if constexpr (waits_on_peers<Pipeline>) { return pipe.waits_on_peer(); }
    return false;
}

template <typename Pipeline, clock_source Clock, typename Hook = no_hook>
void run_worker(worker_ctl<Pipeline>& ctl, Clock& clock, Hook&& hook = {}) noexcept {
    Pipeline& pipe = *ctl.pipe;
    // A quiescent state between polls: a control thread that unmaps memory
    // a port may be reading (a memif peer leaving) waits for one
    // (quiescence.hpp, unmap_guard.cpp).
    quiescence::reader qs;
    ctl.running.store(true, std::memory_order_release);
    std::uint64_t busy = 0;
    std::uint64_t loops = 0;
    [[maybe_unused]] nanos prev = clock.now();
    [[maybe_unused]] bool prev_idle = false;
    [[maybe_unused]] std::uint64_t stalls = 0;
    [[maybe_unused]] std::int64_t stalled = 0;
    while (!ctl.stop.load(std::memory_order_relaxed)) {
        qs.quiescent();
        const std::uint64_t t0 = __builtin_ia32_rdtsc();
        const nanos now = clock.now();
        if constexpr (tracks_poll_gap<Pipeline>) {
            // While the lcore does not poll, frames wait in RX rings
            // unaccounted (dedicated, isolated cores keep this at microseconds).
            const nanos gap = now - prev;
            if (gap > nanos{pipe.max_poll_gap_ns}) {
                __atomic_store_n(&pipe.max_poll_gap_ns, gap.v, __ATOMIC_RELAXED);
            }
            if (gap > (prev_idle ? stall_threshold : busy_stall_threshold)) {
                ++stalls;
                stalled += gap.v;
                __atomic_store_n(&pipe.stalls, stalls, __ATOMIC_RELAXED);
                __atomic_store_n(&pipe.stalled_ns, stalled, __ATOMIC_RELAXED);
            }
            prev = now;
        }
        const std::uint32_t w = pipe.poll(now);
        if constexpr (tracks_poll_gap<Pipeline>) { prev_idle = w == 0; }
        ++loops;
        if (w != 0) { busy += __builtin_ia32_rdtsc() - t0; }
        if ((loops & 63u) == 0) {
            __atomic_store_n(&pipe.busy_cycles, busy, __ATOMIC_RELAXED);
            __atomic_store_n(&pipe.loops, loops, __ATOMIC_RELAXED);
        }
        hook(pipe, now);
        if (yields_after(ctl, pipe, w)) { std::this_thread::yield(); }
    }
    __atomic_store_n(&pipe.busy_cycles, busy, __ATOMIC_RELAXED);
    __atomic_store_n(&pipe.loops, loops, __ATOMIC_RELAXED);
    ctl.running.store(false, std::memory_order_release);
}

}  // namespace rocelab::runtime
