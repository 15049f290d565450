// control_loop.hpp - the control loop every rocelab runner shares, with the
// run's clock as a strategy.
//
// run_control(clock, hooks, duration, status_interval) repeats:
//   t = clock.advance()    the strategy moves the run on and returns the run
//                          time reached:
//       lcore_clock (below)         rocelab-switch and rocelab-gen: the
//                                   pipelines run on worker lcores, the
//                                   control thread sleeps 500 us; run time
//                                   is the TSC run clock (= wall time)
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

// Pipelines on worker lcores: the control thread wakes every 500 us; run
// time and wall time are both the run clock's (TSC) since `start`.
template <typename RunClock>
struct lcore_clock {
    const RunClock& clock;
    nanos start;
    nanos last{0};
    nanos advance() {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        last = clock.now() - start;
        return last;
    }
    double wall_s() const { return double(last.v) / 1e9; }
};

}  // namespace rocelab::runtime
