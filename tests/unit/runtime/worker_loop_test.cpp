// run_worker() (app/runtime/worker_loop.hpp) against a fake pipeline and a
// manual clock: the clock is read once per loop and handed to poll() and the
// hook, loops and busy cycles are published, the longest poll gap is kept
// for pipelines that have max_poll_gap_ns, and the loop stops on ctl.stop.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/clock.hpp"
#include "runtime/worker_loop.hpp"

namespace rocelab::runtime {
namespace {

// Polls `work.size()` times; poll k returns work[k] and then advances the
// clock by step[k]; the last poll asks the loop to stop.
struct fake_pipe {
    manual_clock* clock = nullptr;
    worker_ctl<fake_pipe>* ctl = nullptr;
    std::vector<std::uint32_t> work;
    std::vector<nanos> step;
    std::vector<nanos> polled;  // `now` of every poll
    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    std::int64_t max_poll_gap_ns = 0;
    std::uint64_t stalls = 0;
    std::int64_t stalled_ns = 0;

    std::uint32_t poll(nanos now) {
        const std::size_t k = polled.size();
        polled.push_back(now);
        clock->advance(step[k]);
        if (k + 1 == work.size()) { ctl->stop.store(true); }
        return work[k];
    }
};

// A pipeline without max_poll_gap_ns (the generator's shape).
struct gapless_pipe {
    worker_ctl<gapless_pipe>* ctl = nullptr;
    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    std::uint32_t poll(nanos) {
        ctl->stop.store(true);
        return 1;
    }
};

static_assert(tracks_poll_gap<fake_pipe>);
static_assert(!tracks_poll_gap<gapless_pipe>);

// A worker view whose last poll may have left frames for another worker.
struct waiting_pipe {
    bool waits = false;
    std::uint32_t poll(nanos) { return 1; }
    bool waits_on_peer() const noexcept { return waits; }
};
static_assert(waits_on_peers<waiting_pipe>);
static_assert(!waits_on_peers<fake_pipe>);

struct recording_hook {
    std::vector<nanos>* seen;
    void operator()(const fake_pipe&, nanos now) { seen->push_back(now); }
};

TEST(worker_loop, polls_with_the_clock_until_stopped_and_publishes_loops) {
    manual_clock clock;
    clock.set(nanos{1000});
    worker_ctl<fake_pipe> ctl;
    fake_pipe pipe{&clock, &ctl, {0, 3, 0, 2, 0}, {nanos{10}, nanos{10}, nanos{500}, nanos{10}, nanos{10}}};
    ctl.pipe = &pipe;
    std::vector<nanos> hooked;
    run_worker(ctl, clock, recording_hook{&hooked});
    const std::vector<nanos> expect{nanos{1000}, nanos{1010}, nanos{1020}, nanos{1520}, nanos{1530}};
    EXPECT_EQ(pipe.polled, expect);
    EXPECT_EQ(hooked, expect) << "the hook sees the same now as poll(), once per loop";
    EXPECT_EQ(pipe.loops, 5u);
    EXPECT_GT(pipe.busy_cycles, 0u) << "two polls did work";
    EXPECT_EQ(pipe.max_poll_gap_ns, 500) << "the longest time between two polls";
    EXPECT_EQ(pipe.stalls, 0u) << "500 ns after an idle poll is not a stall";
    EXPECT_FALSE(ctl.running.load());
}

TEST(worker_loop, idle_polls_are_not_busy) {
    manual_clock clock;
    worker_ctl<fake_pipe> ctl;
    fake_pipe pipe{&clock, &ctl, {0, 0, 0}, {nanos{1}, nanos{1}, nanos{1}}};
    ctl.pipe = &pipe;
    run_worker(ctl, clock);
    EXPECT_EQ(pipe.loops, 3u);
    EXPECT_EQ(pipe.busy_cycles, 0u);
    EXPECT_EQ(pipe.max_poll_gap_ns, 1);
}

// A gap of more than 5 us after an idle poll is a stall (the CPU was taken
// away); after a poll that did work it is the work's and is not counted.
TEST(worker_loop, long_gaps_after_idle_polls_are_stalls) {
    manual_clock clock;
    worker_ctl<fake_pipe> ctl;
    fake_pipe pipe{&clock,
                   &ctl,
                   {0, 0, 7, 0, 0, 0},
                   {nanos{5000}, nanos{5001}, nanos{9000}, nanos{60000}, nanos{100}, nanos{1}}};
    ctl.pipe = &pipe;
    run_worker(ctl, clock);
    EXPECT_EQ(pipe.stalls, 2u) << "5001 ns and 60 us after idle polls; 5000 ns is not over, 9 us followed work";
    EXPECT_EQ(pipe.stalled_ns, 65001);
    EXPECT_EQ(pipe.max_poll_gap_ns, 60000);
}

// After a poll that did work, a gap of more than 10 ms is a stall too: no
// poll works that long (the CPU was taken away, e.g. the vCPU descheduled).
TEST(worker_loop, gaps_over_10ms_after_busy_polls_are_stalls) {
    manual_clock clock;
    worker_ctl<fake_pipe> ctl;
    fake_pipe pipe{&clock,
                   &ctl,
                   {4, 4, 0, 4},
                   {nanos{10'000'000}, nanos{101'616'000}, nanos{100}, nanos{1}}};
    ctl.pipe = &pipe;
    run_worker(ctl, clock);
    EXPECT_EQ(pipe.stalls, 1u) << "101.6 ms after a busy poll; 10 ms is not over";
    EXPECT_EQ(pipe.stalled_ns, 101'616'000);
    EXPECT_EQ(pipe.max_poll_gap_ns, 101'616'000);
}

TEST(worker_loop, pipeline_without_poll_gap_runs_the_same_loop) {
    manual_clock clock;
    worker_ctl<gapless_pipe> ctl;
    gapless_pipe pipe{&ctl};
    ctl.pipe = &pipe;
    run_worker(ctl, clock);
    EXPECT_EQ(pipe.loops, 1u);
}

// --idle-yield: an idle poll yields; so does a busy one that could not hand
// all its frames to another worker (that worker needs the CPU to take
// them); without --idle-yield nothing yields.
TEST(worker_loop, yields_when_idle_or_waiting_on_another_worker) {
    worker_ctl<waiting_pipe> ctl;
    waiting_pipe pipe;
    ctl.pipe = &pipe;
    ctl.yield_when_idle = true;
    EXPECT_TRUE(yields_after(ctl, pipe, 0));
    EXPECT_FALSE(yields_after(ctl, pipe, 5)) << "busy, nothing waiting";
    pipe.waits = true;
    EXPECT_TRUE(yields_after(ctl, pipe, 5)) << "busy, but its handoff queue was full";
    ctl.yield_when_idle = false;
    EXPECT_FALSE(yields_after(ctl, pipe, 0));
    EXPECT_FALSE(yields_after(ctl, pipe, 5));
    worker_ctl<fake_pipe> fctl;
    fake_pipe fpipe;
    fctl.yield_when_idle = true;
    EXPECT_TRUE(yields_after(fctl, fpipe, 0));
    EXPECT_FALSE(yields_after(fctl, fpipe, 3)) << "a pipeline that never waits on a peer";
}

TEST(worker_loop, a_stopped_ctl_never_polls) {
    manual_clock clock;
    worker_ctl<fake_pipe> ctl;
    fake_pipe pipe{&clock, &ctl, {}, {}};
    ctl.pipe = &pipe;
    ctl.stop.store(true);
    run_worker(ctl, clock);
    EXPECT_TRUE(pipe.polled.empty());
    EXPECT_EQ(pipe.loops, 0u);
}

}  // namespace
}  // namespace rocelab::runtime
