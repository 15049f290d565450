// control_loop.hpp - the control loop every rocelab runner shares, with the
// run's clock as a strategy.
//
// run_control(clock, hooks, duration, status_interval) repeats:
//   t = clock.advance()    the strategy moves the run on and returns the run
//                          time reached:
//       lcore_clock (below)         rocelab-switch and rocelab-gen: the
//                                   pipelines run on worker lcores, the
//                                   control thread sleeps its period (500 us
//                                   or 5 ms, below); run time is the TSC run
//                                   clock (= wall time)
//       virtual / real-time fabric  rocelab-fabric (app/rocelab_fabric.cpp):
//                                   the engine runs every event up to the
//                                   next sample step, or polls the fabric
//                                   in rounds against the TSC
//   hooks.tick(t)          per-run work: capture drain, time series, events
//   hooks.status(dt, t, w) each status interval of *wall* time: w is
//                          clock.wall_s(), dt the interval's length (s)
//   stop                   SIGINT/SIGTERM, t >= duration, hooks.finished()
// and returns the last t. A clock whose advance() reaches the duration
// returns it exactly; nothing runs when the duration is 0.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "core/units.hpp"
#include "runtime/app_common.hpp"

namespace rocelab::runtime {

template <typename C>
concept run_clock_strategy = requires(C& c) {
    { c.advance() } -> std::same_as<nanos>;
    { c.wall_s() } -> std::convertible_to<double>;
};

template <run_clock_strategy Clock, typename Hooks>
nanos run_control(Clock& clock, Hooks& hooks, std::optional<nanos> duration, nanos status_interval) {
    nanos t{0};
    double last_status = 0;
    if (duration && duration->v <= 0) { return t; }
    while (!stop_requested().load()) {
        t = clock.advance();
        hooks.tick(t);
        const double w = clock.wall_s();
        if (status_interval.v > 0 && (w - last_status) * 1e9 >= double(status_interval.v)) {
            hooks.status(w - last_status, t, w);
            last_status = w;
        }
        if (duration && t >= *duration) { break; }
        if (hooks.finished()) { break; }
    }
    return t;
}

// Pipelines on worker lcores: the control thread sleeps `period` between
// ticks, never past the run's end (`until`, the duration: a run stops on
// time whatever the period); run time and wall time are both the run
// clock's (TSC) since `start`.
//
// The period is control_period_busy (500 us) while a tick has work that
// often: a capture ring to drain, a queue-depth sampler's ring, an idle
// check, a time series, or flows that can all finish (the run's elapsed time,
// and so its goodput, is measured to the tick that sees them done). Else it
// is control_period_quiet (5 ms): each wake-up takes the CPU from whatever
// runs there, and where the main lcore shares a CPU with a worker lcore
// (two workers on a 2-CPU machine) a wake-up every 500 us cost that worker
// about 2 % of its time in stalls (the generator's 2-worker loss sweep:
// 60-84 ms stalled in 1.6 s against 31-52 ms at 5 ms; docs/architecture.md,
// "The control thread").
inline constexpr nanos control_period_busy{500'000};
inline constexpr nanos control_period_quiet{5'000'000};

struct thread_sleep {
    void operator()(nanos d) const { std::this_thread::sleep_for(std::chrono::nanoseconds(d.v)); }
};

template <typename RunClock, typename Sleep = thread_sleep>
struct lcore_clock {
    const RunClock& clock;
    nanos start;
    nanos period = control_period_busy;
    std::optional<nanos> until;
    nanos last{0};
    [[no_unique_address]] Sleep sleep{};
    nanos advance() {
        nanos s = period;
        if (until && *until - last < s) { s = std::max(*until - last, nanos{0}); }
        sleep(s);
        last = clock.now() - start;
        return last;
    }
    double wall_s() const { return double(last.v) / 1e9; }
};

}  // namespace rocelab::runtime
