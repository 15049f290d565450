// run_control() (app/runtime/control_loop.hpp) with scripted clock
// strategies: every advance is followed by one tick at the time it reached,
// a status line comes each status interval of wall time (not run time) with
// the interval's length, the loop stops at the duration, on finished(), and
// on the stop flag, and a zero duration runs nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/control_loop.hpp"

namespace rocelab::runtime {
namespace {

// Run time moves `run_step` per advance, wall time `wall_step` (s).
struct scripted_clock {
    nanos run_step{1000};
    double wall_step = 0.125;  // exact in binary
    nanos t{0};
    double wall = 0;
    int advances = 0;
    nanos advance() {
        ++advances;
        t += run_step;
        wall += wall_step;
        return t;
    }
    double wall_s() const { return wall; }
};

struct recorder {
    std::vector<nanos> ticks;
    std::vector<double> status_dt, status_wall;
    std::vector<nanos> status_t;
    int finish_after = -1;  // ticks; -1 never
    bool stop_at_tick_3 = false;
    void tick(nanos t) {
        ticks.push_back(t);
        if (stop_at_tick_3 && ticks.size() == 3) { stop_requested().store(true); }
    }
    void status(double dt, nanos t, double w) {
        status_dt.push_back(dt);
        status_t.push_back(t);
        status_wall.push_back(w);
    }
    bool finished() const { return finish_after >= 0 && static_cast<int>(ticks.size()) >= finish_after; }
};

TEST(control_loop, ticks_every_advance_and_stops_at_the_duration) {
    scripted_clock c;
    recorder r;
    const nanos end = run_control(c, r, nanos{10'000}, nanos{1'000'000'000});
    EXPECT_EQ(end, nanos{10'000});
    EXPECT_EQ(c.advances, 10);
    ASSERT_EQ(r.ticks.size(), 10u);
    for (std::size_t i = 0; i < r.ticks.size(); ++i) { EXPECT_EQ(r.ticks[i], nanos{1000 * std::int64_t(i + 1)}); }
}

TEST(control_loop, status_follows_wall_time_not_run_time) {
    scripted_clock c;  // 0.125 s of wall time per 1 us of run time
    recorder r;
    run_control(c, r, nanos{25'000}, nanos{1'000'000'000});  // 25 advances, 3.125 s of wall time
    ASSERT_EQ(r.status_t.size(), 3u);  // at 1, 2 and 3 s of wall time
    EXPECT_EQ(r.status_t[0], nanos{8'000});
    EXPECT_EQ(r.status_t[1], nanos{16'000});
    EXPECT_EQ(r.status_t[2], nanos{24'000});
    EXPECT_DOUBLE_EQ(r.status_wall[0], 1.0);
    EXPECT_DOUBLE_EQ(r.status_dt[1], 1.0);
    // A 2 s interval: one line, at 2 s.
    scripted_clock c3;
    recorder r3;
    run_control(c3, r3, nanos{25'000}, nanos{2'000'000'000});
    ASSERT_EQ(r3.status_t.size(), 1u);
    EXPECT_EQ(r3.status_t[0], nanos{16'000});
    EXPECT_DOUBLE_EQ(r3.status_dt[0], 2.0);
    // No status interval: no lines.
    scripted_clock c2;
    recorder r2;
    run_control(c2, r2, nanos{25'000}, nanos{0});
    EXPECT_TRUE(r2.status_t.empty());
}

TEST(control_loop, zero_duration_runs_nothing) {
    scripted_clock c;
    recorder r;
    EXPECT_EQ(run_control(c, r, nanos{0}, nanos{1'000'000'000}), nanos{0});
    EXPECT_EQ(c.advances, 0);
    EXPECT_TRUE(r.ticks.empty());
}

TEST(control_loop, finished_or_the_stop_flag_ends_an_open_run) {
    scripted_clock c;
    recorder r;
    r.finish_after = 4;
    EXPECT_EQ(run_control(c, r, std::nullopt, nanos{1'000'000'000}), nanos{4000});
    EXPECT_EQ(c.advances, 4);

    scripted_clock c2;
    recorder r2;
    r2.stop_at_tick_3 = true;
    stop_requested().store(false);
    EXPECT_EQ(run_control(c2, r2, std::nullopt, nanos{1'000'000'000}), nanos{3000});
    EXPECT_EQ(c2.advances, 3);
    stop_requested().store(false);
}

}  // namespace
}  // namespace rocelab::runtime
