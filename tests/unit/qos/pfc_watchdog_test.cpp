// Unit tests for qos/pfc_watchdog.hpp: storm detection just below / at /
// above detection_time, the rx-counter rule, restoration timing, actions.
#include "qos/pfc_watchdog.hpp"

#include <gtest/gtest.h>

namespace rocelab {
namespace {

using namespace rocelab::literals;

pfc_wd_cfg wd_cfg(pfc_wd_action a = pfc_wd_action::drop) {
    pfc_wd_cfg c;
    c.enabled = true;
    c.detection_time = 200_ms;
    c.restoration_time = 200_ms;
    c.poll_interval = 10_ms;
    c.action = a;
    return c;
}

// Drives one watchdog with a storm in [start, end): paused and rx counter
// +1 per poll inside, idle outside. Returns the first event of `kind`.
struct driver {
    pfc_watchdog wd;
    std::uint64_t rx = 0;
    pfc_wd_event run(nanos from, nanos to, nanos storm_start, nanos storm_end, pfc_wd_event_kind kind) {
        for (nanos t = from; t < to; t += wd.cfg().poll_interval) {
            const bool storm = t >= storm_start && t < storm_end;
            if (storm) {
                ++rx;
            }
            const pfc_wd_event e = wd.poll(t, storm, rx);
            if (e.kind == kind) {
                return e;
            }
        }
        return {};
    }
};

TEST(pfc_watchdog, storm_just_below_detection_time_does_not_trip) {
    // paused samples at 0, 10, ..., 190 ms: 190 ms of agreeing intervals
    driver d{pfc_watchdog{wd_cfg(), 2, 3}};
    const pfc_wd_event e = d.run(nanos{0}, 2000_ms, nanos{0}, 195_ms, pfc_wd_event_kind::storm_detected);
    EXPECT_FALSE(e);
    EXPECT_EQ(d.wd.stats().storms_detected, 0u);
    EXPECT_FALSE(d.wd.drop_active());
}

TEST(pfc_watchdog, storm_of_detection_time_trips_exactly_then) {
    driver d{pfc_watchdog{wd_cfg(), 2, 3}};
    const pfc_wd_event e = d.run(nanos{0}, 2000_ms, nanos{0}, 205_ms, pfc_wd_event_kind::storm_detected);
    ASSERT_TRUE(e);
    EXPECT_EQ(e.at, 200_ms);
    EXPECT_EQ(e.port, 2);
    EXPECT_EQ(e.queue, 3);
    EXPECT_TRUE(d.wd.stormed());
    EXPECT_TRUE(d.wd.drop_active());
    EXPECT_TRUE(d.wd.ignore_pause());
    EXPECT_EQ(d.wd.stats().storms_detected, 1u);
}

TEST(pfc_watchdog, storm_starting_between_polls) {
    driver d{pfc_watchdog{wd_cfg(), 0, 4}};
    // starts at 3 ms: first paused sample 10 ms, detected at 210 ms
    const pfc_wd_event e = d.run(nanos{0}, 2000_ms, 3_ms, 1000_ms, pfc_wd_event_kind::storm_detected);
    ASSERT_TRUE(e);
    EXPECT_EQ(e.at, 210_ms);
}

TEST(pfc_watchdog, interrupted_storm_restarts_detection) {
    pfc_watchdog wd{wd_cfg(), 0, 3};
    std::uint64_t rx = 0;
    nanos t{0};
    for (; t < 150_ms; t += 10_ms) {
        EXPECT_FALSE(wd.poll(t, true, ++rx));
    }
    EXPECT_FALSE(wd.poll(t, false, rx));  // one clear sample
    t += 10_ms;
    nanos detected{-1};
    for (; t < 1000_ms; t += 10_ms) {
        if (wd.poll(t, true, ++rx)) {
            detected = t;
            break;
        }
    }
    EXPECT_EQ(detected, 160_ms + 200_ms);
}

TEST(pfc_watchdog, rx_counter_must_move_unless_disabled) {
    pfc_watchdog strict{wd_cfg(), 0, 3};
    pfc_watchdog loose{wd_cfg(), 0, 3, false};
    for (nanos t{0}; t <= 1000_ms; t += 10_ms) {
        EXPECT_FALSE(strict.poll(t, true, 7));  // paused, but no new frames
        loose.poll(t, true, 7);
    }
    EXPECT_EQ(strict.stats().storms_detected, 0u);
    EXPECT_EQ(loose.stats().storms_detected, 1u);
}

TEST(pfc_watchdog, coarse_polls_need_two_agreeing_samples) {
    pfc_wd_cfg c = wd_cfg();
    c.poll_interval = 500_ms;  // slower than detection (caller misconfigured)
    pfc_watchdog wd{c, 0, 3};
    EXPECT_FALSE(wd.poll(nanos{0}, true, 1));
    EXPECT_FALSE(wd.poll(500_ms, true, 2));  // capped at detection - 1
    EXPECT_TRUE(wd.poll(1000_ms, true, 3));
}

TEST(pfc_watchdog, restoration_after_quiet_restoration_time) {
    driver d{pfc_watchdog{wd_cfg(), 1, 3}};
    ASSERT_TRUE(d.run(nanos{0}, 1000_ms, nanos{0}, 500_ms, pfc_wd_event_kind::storm_detected));
    // storm continues to 500 ms: the last sample with new frames is 490 ms;
    // 20 quiet intervals later (200 ms) -> restored at 690 ms
    const pfc_wd_event e = d.run(210_ms, 5000_ms, nanos{0}, 500_ms, pfc_wd_event_kind::storm_restored);
    ASSERT_TRUE(e);
    EXPECT_EQ(e.at, 690_ms);
    EXPECT_FALSE(d.wd.stormed());
    EXPECT_FALSE(d.wd.drop_active());
    EXPECT_EQ(d.wd.stats().storms_restored, 1u);
    EXPECT_EQ(d.wd.stats().stormed_ns, (690_ms - 200_ms).v);
}

TEST(pfc_watchdog, restoration_timer_resets_when_frames_resume) {
    pfc_watchdog wd{wd_cfg(), 0, 3};
    std::uint64_t rx = 0;
    nanos t{0};
    for (; !wd.stormed(); t += 10_ms) {
        wd.poll(t, true, ++rx);
    }
    // quiet for 190 ms, then one more frame, then quiet again
    const nanos quiet_from = t;
    for (; t < quiet_from + 190_ms; t += 10_ms) {
        EXPECT_FALSE(wd.poll(t, false, rx));
    }
    EXPECT_FALSE(wd.poll(t, true, ++rx));
    const nanos resumed = t;
    t += 10_ms;
    nanos restored{-1};
    for (; t < 2000_ms; t += 10_ms) {
        if (wd.poll(t, false, rx).kind == pfc_wd_event_kind::storm_restored) {
            restored = t;
            break;
        }
    }
    EXPECT_EQ(restored, resumed + 200_ms);
}

TEST(pfc_watchdog, actions) {
    for (auto a : {pfc_wd_action::drop, pfc_wd_action::forward, pfc_wd_action::alert}) {
        pfc_watchdog wd{wd_cfg(a), 0, 3};
        std::uint64_t rx = 0;
        for (nanos t{0}; t <= 300_ms; t += 10_ms) {
            wd.poll(t, true, ++rx);
        }
        ASSERT_TRUE(wd.stormed());
        EXPECT_EQ(wd.drop_active(), a == pfc_wd_action::drop);
        EXPECT_EQ(wd.ignore_pause(), a != pfc_wd_action::alert);
    }
}

TEST(pfc_watchdog, disabled_and_deadline) {
    pfc_wd_cfg c = wd_cfg();
    c.enabled = false;
    pfc_watchdog off{c, 0, 3, false};
    for (nanos t{0}; t <= 1000_ms; t += 10_ms) {
        EXPECT_FALSE(off.poll(t, true, 0));
    }
    EXPECT_EQ(off.next_deadline(), nanos::max());
    pfc_watchdog on{wd_cfg(), 0, 3};
    on.poll(5_ms, false, 0);
    EXPECT_EQ(on.next_deadline(), 15_ms);
    on.count_tx_drop(3);
    on.count_rx_drop();
    EXPECT_EQ(on.stats().tx_dropped, 3u);
    EXPECT_EQ(on.stats().rx_dropped, 1u);
}

}  // namespace
}  // namespace rocelab
