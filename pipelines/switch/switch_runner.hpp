// switch_runner.hpp - the poll loop around a switch_pipeline on one lcore.
//
// run_switch_worker() reads the TSC clock once per loop, calls poll(now),
// accounts busy cycles (loops that moved at least one frame), and every
// `sample_interval` pushes one queue-depth sample per port into an SPSC ring
// that the control thread turns into the CSV time series. It returns when
// `stop` becomes true. It never allocates, locks or logs.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/spsc_ring.hpp"
#include "core/units.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::sw {

struct depth_sample {
    std::int64_t ns = 0;
    std::uint16_t port = 0;
    std::uint8_t paused = 0;  // queue mask paused by PFC at sample time
    std::array<std::uint32_t, 8> depth_bytes{};
};

using depth_ring = spsc_ring<depth_sample, 16384>;

struct worker_ctl {
    switch_pipeline* pipe = nullptr;
    std::atomic<bool> stop{false};
    depth_ring* samples = nullptr;  // optional
    nanos sample_interval{1000000};
    std::atomic<std::uint64_t> samples_dropped{0};
    std::atomic<bool> running{false};
};

template <typename Clock>
void run_switch_worker(worker_ctl& ctl, Clock& clock) noexcept {
    switch_pipeline& pipe = *ctl.pipe;
    nanos next_sample = clock.now();
    ctl.running.store(true, std::memory_order_release);
    std::uint64_t busy = 0;
    std::uint64_t loops = 0;
    nanos prev = clock.now();
    while (!ctl.stop.load(std::memory_order_relaxed)) {
        const std::uint64_t t0 = __builtin_ia32_rdtsc();
        const nanos now = clock.now();
        // The longest time between two polls: while the lcore does not poll,
        // frames wait in RX rings unaccounted, so lossless headroom must
        // cover this too (dedicated, isolated cores keep it at microseconds).
        if (now - prev > nanos{pipe.max_poll_gap_ns}) { __atomic_store_n(&pipe.max_poll_gap_ns, (now - prev).v, __ATOMIC_RELAXED); }
        prev = now;
        const std::uint32_t w = pipe.poll(now);
        ++loops;
        if (w != 0) {
            busy += __builtin_ia32_rdtsc() - t0;
        }
        if ((loops & 63u) == 0) {
            __atomic_store_n(&pipe.busy_cycles, busy, __ATOMIC_RELAXED);
            __atomic_store_n(&pipe.loops, loops, __ATOMIC_RELAXED);
        }
        if (ctl.samples != nullptr && now >= next_sample) {
            for (std::size_t p = 0; p < pipe.port_count(); ++p) {
                depth_sample s;
                s.ns = now.v;
                s.port = static_cast<std::uint16_t>(p);
                s.paused = pipe.paused_queues(p, now);
                for (int q = 0; q < 8; ++q) {
                    s.depth_bytes[q] = static_cast<std::uint32_t>(pipe.queued_bytes(p, q));
                }
                if (!ctl.samples->push(s)) { ctl.samples_dropped.fetch_add(1, std::memory_order_relaxed); }
            }
            next_sample += ctl.sample_interval;
            if (next_sample < now) { next_sample = now + ctl.sample_interval; }
        }
    }
    __atomic_store_n(&pipe.busy_cycles, busy, __ATOMIC_RELAXED);
    __atomic_store_n(&pipe.loops, loops, __ATOMIC_RELAXED);
    ctl.running.store(false, std::memory_order_release);
}

}  // namespace rocelab::sw
