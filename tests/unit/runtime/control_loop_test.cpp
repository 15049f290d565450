// run_control() (app/runtime/control_loop.hpp) with scripted clock
// strategies: every advance is followed by one tick at the time it reached,
// a status line comes each status interval of wall time (not run time) with
// the interval's length, the loop stops at the duration, on finished(), and
// on the stop flag, and a zero duration runs nothing. lcore_clock (the
// apps' strategy) with a manual clock and sleeper: it sleeps its period, and
// never past the duration's end.
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

// A run clock moved only by the sleeper below, which records each sleep and
// wakes `late` after it (as a real sleep_for does).
struct manual_clock {
    nanos t{0};
    nanos now() const noexcept { return t; }
};
struct recording_sleep {
    manual_clock* c = nullptr;
    std::vector<nanos>* slept = nullptr;
    nanos late{37'000};
    void operator()(nanos d) const {
        slept->push_back(d);
        c->t += d + late;
    }
};

TEST(control_loop, lcore_clock_sleeps_its_period_and_never_past_the_duration) {
    manual_clock mc{nanos{1'000'000'000}};  // the run starts at 1 s of the clock
    std::vector<nanos> slept;
    lcore_clock<manual_clock, recording_sleep> lc{mc, mc.t, control_period_quiet, nanos{12'000'000}, nanos{0},
                                                  recording_sleep{&mc, &slept}};
    recorder r;
    // 5 ms to 5.037, 5 ms to 10.074, then only the 1.926 ms left: stops at 12.037 ms.
    EXPECT_EQ(run_control(lc, r, nanos{12'000'000}, nanos{1'000'000'000}), nanos{12'037'000});
    EXPECT_EQ(slept, (std::vector<nanos>{nanos{5'000'000}, nanos{5'000'000}, nanos{1'926'000}}));
    EXPECT_EQ(r.ticks, (std::vector<nanos>{nanos{5'037'000}, nanos{10'074'000}, nanos{12'037'000}}));

    // The busy period, an open run (no duration): every sleep is 500 us.
    manual_clock mc2;
    std::vector<nanos> slept2;
    lcore_clock<manual_clock, recording_sleep> lc2{mc2, mc2.t, control_period_busy, std::nullopt, nanos{0},
                                                   recording_sleep{&mc2, &slept2, nanos{0}}};
    recorder r2;
    r2.finish_after = 5;
    EXPECT_EQ(run_control(lc2, r2, std::nullopt, nanos{1'000'000'000}), nanos{2'500'000});
    EXPECT_EQ(slept2, std::vector<nanos>(5, nanos{500'000}));
    // Wall time is run time.
    EXPECT_DOUBLE_EQ(lc2.wall_s(), 0.0025);
}

}  // namespace
}  // namespace rocelab::runtime
