// worker_view.hpp - one worker lcore of a pipeline that runs on several (the
// switch, the generator): what runtime::run_worker() drives on that lcore,
// with that worker's busy and stall figures, and the figures summed.
//
//   pipe.worker(k).poll(now) == pipe.poll_worker(k, now)
//
// A pipeline driven by poll() directly (virtual time, the in-process tests)
// keeps its own busy_cycles/loops/... members; poll_totals_of() adds those to
// every view's (only one of the two is ever used in a run).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/counter.hpp"
#include "core/units.hpp"

namespace rocelab {

// A cache line of its own: each worker writes its view at every poll, and
// views allocated one after the other shared lines between two workers.
template <typename Pipeline>
struct alignas(64) worker_view {
    Pipeline* pipe = nullptr;
    std::uint16_t id = 0;
    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    std::int64_t max_poll_gap_ns = 0;
    std::uint64_t stalls = 0;
    std::int64_t stalled_ns = 0;
    std::uint32_t poll(nanos now) noexcept { return pipe->poll_worker(id, now); }
    // The last poll could not hand all its frames to another worker (a
    // pipeline without worker_waits(): never).
    bool waits_on_peer() const noexcept {
        if constexpr (requires { pipe->worker_waits(id); }) {
            return pipe->worker_waits(id);
        } else {
            return false;
        }
    }
};

// The figures of the whole pipeline: its own plus every view's, summed (the
// longest poll gap: the largest), each read relaxed.
template <typename Pipeline>
worker_view<Pipeline> poll_totals_of(const Pipeline& p,
                                     const std::vector<std::unique_ptr<worker_view<Pipeline>>>& views) noexcept {
    worker_view<Pipeline> t;
    t.busy_cycles = read_counter(p.busy_cycles);
    t.loops = read_counter(p.loops);
    t.max_poll_gap_ns = read_counter(p.max_poll_gap_ns);
    t.stalls = read_counter(p.stalls);
    t.stalled_ns = read_counter(p.stalled_ns);
    for (const auto& v : views) {
        t.busy_cycles += read_counter(v->busy_cycles);
        t.loops += read_counter(v->loops);
        t.max_poll_gap_ns = std::max(t.max_poll_gap_ns, read_counter(v->max_poll_gap_ns));
        t.stalls += read_counter(v->stalls);
        t.stalled_ns += read_counter(v->stalled_ns);
    }
    return t;
}

}  // namespace rocelab
