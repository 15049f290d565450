// Unit tests for qos/pause_timer.hpp: quanta to time, restart, XON, PAUSE,
// accounting, and the priority-to-queue mapping.
#include "qos/pause_timer.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace rocelab {
namespace {

using namespace rocelab::literals;

std::array<std::uint16_t, 8> q_at(int prio, std::uint16_t quanta) {
    std::array<std::uint16_t, 8> q{};
    q[prio] = quanta;
    return q;
}

TEST(pause_timer, duration_matches_quanta_x_512_over_rate_within_1ns) {
    for (auto rate : {10_Gbps, 25_Gbps, 40_Gbps, 100_Gbps, 400_Gbps}) {
        for (std::uint16_t quanta : {1, 2, 3, 7, 100, 394, 905, 3333, 0x7fff, 0xffff}) {
            pause_timer pt;
            const nanos now{123456};
            pt.on_pfc(now, 0b0000'1000, q_at(3, quanta), rate);
            const double exact_ns = quanta * 512.0 * 1e9 / static_cast<double>(rate.v);
            const double got = static_cast<double>((pt.paused_until(3) - now).v);
            EXPECT_GE(got, exact_ns - 1e-6) << rate.v << " " << quanta;  // never short
            EXPECT_LT(got - exact_ns, 1.0) << rate.v << " " << quanta;
            EXPECT_EQ(pt.paused_mask(pt.paused_until(3) - nanos{1}), 0b0000'1000);
            EXPECT_EQ(pt.paused_mask(pt.paused_until(3)), 0);
        }
    }
    // Table values from ROCE_REFERENCE 2.2.
    EXPECT_EQ(pause_quanta_time(0xffff, 10_Gbps), nanos{3355392});
    EXPECT_EQ(pause_quanta_time(0xffff, 100_Gbps), nanos{335540});  // 335539.2 rounded up
    EXPECT_EQ(pause_quanta_time(1, 400_Gbps), nanos{2});             // 1.28 ns
    EXPECT_EQ(pause_quanta_time(25, 400_Gbps), nanos{32});           // exact
    EXPECT_EQ(pause_quanta_time(0, 10_Gbps), nanos{0});
}

TEST(pause_timer, only_enabled_classes_and_mask_deadline) {
    pause_timer pt;
    std::array<std::uint16_t, 8> q{};
    q.fill(1000);  // 51.2 us at 10G
    q[4] = 500;    // 25.6 us
    pt.on_pfc(nanos{0}, 0b0001'1000, q, 10_Gbps);
    EXPECT_EQ(pt.paused_mask(nanos{0}), 0b0001'1000);
    EXPECT_EQ(pt.next_deadline(nanos{0}), nanos{25600});
    EXPECT_EQ(pt.paused_mask(nanos{25599}), 0b0001'1000);
    EXPECT_EQ(pt.paused_mask(nanos{25600}), 0b0000'1000);
    EXPECT_EQ(pt.next_deadline(nanos{25600}), nanos{51200});
    EXPECT_EQ(pt.paused_mask(nanos{51200}), 0);
    EXPECT_EQ(pt.next_deadline(nanos{51200}), nanos::max());
}

TEST(pause_timer, new_frame_restarts_timer_longer_or_shorter) {
    pause_timer pt;
    pt.on_pfc(nanos{0}, 0b1000, q_at(3, 0xffff), 100_Gbps);
    EXPECT_EQ(pt.paused_until(3), nanos{335540});
    pt.on_pfc(nanos{1000}, 0b1000, q_at(3, 100), 100_Gbps);  // 512 ns
    EXPECT_EQ(pt.paused_until(3), nanos{1512});
    EXPECT_EQ(pt.paused_mask(nanos{1511}), 0b1000);
    EXPECT_EQ(pt.paused_mask(nanos{1512}), 0);
    pt.on_pfc(nanos{1400}, 0b1000, q_at(3, 1000), 100_Gbps);  // refresh before expiry
    EXPECT_EQ(pt.paused_until(3), nanos{6520});
    EXPECT_EQ(pt.stats().xoff_frames[3], 3u);
}

TEST(pause_timer, xon_resumes_at_once) {
    pause_timer pt;
    pt.on_pfc(nanos{0}, 0b1001'1000, {0, 0, 0, 0xffff, 0xffff, 0, 0, 0xffff}, 25_Gbps);
    EXPECT_EQ(pt.paused_mask(nanos{10}), 0b1001'1000);
    pt.on_pfc(nanos{100}, 0b0000'1000, {}, 25_Gbps);  // XON prio 3 only
    EXPECT_EQ(pt.paused_mask(nanos{100}), 0b1001'0000);
    EXPECT_EQ(pt.stats().xon_frames[3], 1u);
    EXPECT_EQ(pt.stats().xon_frames[4], 0u);
    EXPECT_EQ(pt.stats().pfc_frames, 2u);
}

TEST(pause_timer, pause_8023x_affects_all_priorities) {
    pause_timer pt{0b0000'1000};  // PFC only on 3; PAUSE ignores that
    pt.on_pause(nanos{0}, 200, 10_Gbps);  // 10.24 us
    EXPECT_EQ(pt.paused_mask(nanos{0}), 0xff);
    EXPECT_EQ(pt.next_deadline(nanos{0}), nanos{10240});
    EXPECT_EQ(pt.paused_mask(nanos{10240}), 0);
    pt.on_pause(nanos{20000}, 0xffff, 10_Gbps);
    pt.on_pause(nanos{20100}, 0, 10_Gbps);  // PAUSE with time 0 resumes all
    EXPECT_EQ(pt.paused_mask(nanos{20100}), 0);
    EXPECT_EQ(pt.stats().pause_frames, 3u);
}

TEST(pause_timer, pfc_for_disabled_priority_is_ignored) {
    pause_timer pt{0b0001'1000};
    pt.on_pfc(nanos{0}, 0b0000'0001, q_at(0, 0xffff), 100_Gbps);
    EXPECT_EQ(pt.paused_mask(nanos{0}), 0);
    EXPECT_EQ(pt.stats().pfc_ignored, 1u);
    EXPECT_EQ(pt.stats().xoff_frames[0], 0u);
}

TEST(pause_timer, paused_time_is_union_of_intervals) {
    pause_timer pt;
    // [0, 5120) at 100G (1000 quanta), refreshed at 2000 -> [0, 7120),
    // XON at 6000 -> paused 6000 ns. Then [10000, 10512) runs out: +512.
    pt.on_pfc(nanos{0}, 0b1000, q_at(3, 1000), 100_Gbps);
    EXPECT_EQ(pt.paused_time(3, nanos{1000}), nanos{1000});
    pt.on_pfc(nanos{2000}, 0b1000, q_at(3, 1000), 100_Gbps);
    EXPECT_EQ(pt.paused_time(3, nanos{3000}), nanos{3000});
    pt.on_pfc(nanos{6000}, 0b1000, q_at(3, 0), 100_Gbps);
    EXPECT_EQ(pt.paused_time(3, nanos{9000}), nanos{6000});
    pt.on_pfc(nanos{10000}, 0b1000, q_at(3, 100), 100_Gbps);
    EXPECT_EQ(pt.paused_time(3, nanos{50000}), nanos{6512});
    EXPECT_EQ(pt.paused_time(4, nanos{50000}), nanos{0});
    pt.on_pfc(nanos{60000}, 0b1000, q_at(3, 0), 100_Gbps);  // settle
    EXPECT_EQ(pt.stats().paused_ns[3], 6512);
}

TEST(pause_timer, paused_priorities_map_to_queues) {
    std::array<std::uint8_t, 8> m{0, 1, 2, 3, 4, 5, 6, 7};
    EXPECT_EQ(pfc_paused_queues(0b0001'1000, m), 0b0001'1000);
    m[3] = 6;
    m[4] = 6;
    EXPECT_EQ(pfc_paused_queues(0b0001'1000, m), 0b0100'0000);
    EXPECT_EQ(pfc_paused_queues(0, m), 0);
    EXPECT_EQ(pfc_paused_queues(0b1000, azure_roce_maps()), 0b1000);
}

}  // namespace
}  // namespace rocelab
