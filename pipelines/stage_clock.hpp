// stage_clock.hpp - frames and TSC cycles per pipeline stage, in a bench build.
//
// meson -Dstage_cycles=true defines ROCELAB_STAGE_CYCLES: each worker keeps a
// stage_count per stage (an enum of the pipeline's own, with a `count`
// member), and its poll laps a stage_clock between stages:
//
//   stage_clock t;                 // reads the TSC
//   ... the rx stage ...
//   t.lap(w, my_stage::rx, frames); // cycles since the last lap go to rx
//
// Otherwise stage_clock is empty and lap() compiles to nothing, so the
// production data path carries no rdtsc. The worker alone writes its
// counts; reports read them after the workers stop. Without the option this
// header needs no DPDK header (pipeline headers that apps include use it).
#pragma once

#ifdef ROCELAB_STAGE_CYCLES
#include <rte_cycles.h>
#endif

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocelab {

struct stage_count {
    std::uint64_t calls = 0, frames = 0, cycles = 0;
};

// One stage's figures for a report: how often it ran, the frames it
// handled and the TSC cycles it took.
struct stage_figures {
    const char* name = "";
    std::uint64_t calls = 0, frames = 0, cycles = 0;
};

// The figures of the stages that ran, named by `names` (indexed as
// `stages`).
template <class Stages, class Names>
std::vector<stage_figures> stage_list(const Stages& stages, const Names& names) {
    std::vector<stage_figures> out;
    for (std::size_t s = 0; s < std::size(stages); ++s) {
        const stage_count& c = stages[s];
        if (c.calls != 0) { out.push_back({names[s], c.calls, c.frames, c.cycles}); }
    }
    return out;
}

#ifdef ROCELAB_STAGE_CYCLES
inline constexpr bool stage_cycles_built = true;
struct stage_clock {
    std::uint64_t t = rte_rdtsc();
    // W has `stages`, an array indexed by Id.
    template <class W, class Id>
    void lap(W& w, Id s, std::uint64_t frames) noexcept {
        const std::uint64_t now = rte_rdtsc();
        stage_count& c = w.stages[static_cast<std::size_t>(s)];
        ++c.calls;
        c.frames += frames;
        c.cycles += now - t;
        t = now;
    }
};
#else
inline constexpr bool stage_cycles_built = false;
struct stage_clock {
    template <class W, class Id>
    void lap(W&, Id, std::uint64_t) noexcept {}
};
#endif

}  // namespace rocelab
