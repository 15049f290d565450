// Unit tests for qos/pfc_tx.hpp: XOFF on assert, refresh at half the pause
// time, XON once on release, combined frames, PAUSE mode, counters.
#include "qos/pfc_tx.hpp"

#include <gtest/gtest.h>

namespace rocelab {
namespace {

using namespace rocelab::literals;

TEST(pfc_tx, refresh_period_is_half_the_pause_time) {
    pfc_tx tx{flow_ctrl_mode::pfc, 100_Gbps};
    // 0xFFFF x 512 / 100e9 = 335539.2 ns -> 335540 (rounded up) / 2
    EXPECT_EQ(tx.refresh_period(), nanos{167770});
    EXPECT_EQ(pfc_tx(flow_ctrl_mode::pfc, 10_Gbps).refresh_period(), nanos{3355392 / 2});
    EXPECT_EQ(pfc_tx(flow_ctrl_mode::pfc, 400_Gbps, 1000).refresh_period(), nanos{640});
    // unknown rate: assume 800G (shortest pause)
    EXPECT_EQ(pfc_tx(flow_ctrl_mode::pfc, bits_per_sec{0}).refresh_period(),
              nanos{pause_quanta_time(0xFFFF, 800_Gbps).v / 2});
}

TEST(pfc_tx, xoff_refresh_xon_sequence) {
    pfc_tx tx{flow_ctrl_mode::pfc, 100_Gbps};
    pfc_frame f;
    const nanos t0{1'000'000};
    EXPECT_FALSE(tx.poll(t0, 0, f));
    EXPECT_EQ(tx.next_deadline(), nanos::max());

    ASSERT_TRUE(tx.poll(t0, 0b0000'1000, f));
    EXPECT_EQ(f.mode, flow_ctrl_mode::pfc);
    EXPECT_EQ(f.class_enable, 0b0000'1000);
    EXPECT_EQ(f.time[3], 0xFFFF);
    EXPECT_EQ(f.time[4], 0);
    EXPECT_EQ(tx.asserted(), 0b0000'1000);
    EXPECT_EQ(tx.next_deadline(), t0 + nanos{167770});

    // nothing until the refresh deadline
    EXPECT_FALSE(tx.poll(t0 + nanos{1}, 0b0000'1000, f));
    EXPECT_FALSE(tx.poll(t0 + nanos{167769}, 0b0000'1000, f));
    ASSERT_TRUE(tx.poll(t0 + nanos{167770}, 0b0000'1000, f));
    EXPECT_EQ(f.class_enable, 0b0000'1000);
    EXPECT_EQ(f.time[3], 0xFFFF);
    EXPECT_EQ(tx.stats().refreshes, 1u);
    EXPECT_EQ(tx.next_deadline(), t0 + nanos{2 * 167770});

    // a late poll refreshes from the poll time
    const nanos late = t0 + nanos{2 * 167770 + 500};
    ASSERT_TRUE(tx.poll(late, 0b0000'1000, f));
    EXPECT_EQ(tx.next_deadline(), late + nanos{167770});

    // release: XON once, time 0
    const nanos t1 = late + 10_us;
    ASSERT_TRUE(tx.poll(t1, 0, f));
    EXPECT_EQ(f.class_enable, 0b0000'1000);
    EXPECT_EQ(f.time[3], 0);
    EXPECT_EQ(tx.asserted(), 0);
    EXPECT_EQ(tx.next_deadline(), nanos::max());
    EXPECT_FALSE(tx.poll(t1 + 1_ms, 0, f));

    const pfc_tx_stats& s = tx.stats();
    EXPECT_EQ(s.xoff_sent[3], 3u);
    EXPECT_EQ(s.xon_sent[3], 1u);
    EXPECT_EQ(s.frames_sent, 4u);
    EXPECT_EQ(s.asserted_ns[3], (t1 - t0).v);
    EXPECT_EQ(tx.asserted_time(3, t1 + 1_ms), t1 - t0);
}

TEST(pfc_tx, never_lets_the_peer_timer_expire) {
    // Poll every 1 us for 10 ms with the PG asserted: the gap between two
    // XOFF frames never exceeds the pause time, and is ~half of it.
    for (auto rate : {10_Gbps, 25_Gbps, 100_Gbps, 400_Gbps}) {
        for (std::uint16_t quanta : {0xFFFF, 1000, 100}) {
            pfc_tx tx{flow_ctrl_mode::pfc, rate, quanta};
            const nanos pause = pause_quanta_time(quanta, rate);
            pfc_frame f;
            nanos last{-1};
            nanos max_gap{0};
            for (nanos t{0}; t < 10_ms; t += 1_us) {
                if (tx.poll(t, 0b0001'1000, f)) {
                    if (last.v >= 0 && t - last > max_gap) {
                        max_gap = t - last;
                    }
                    last = t;
                }
            }
            if (pause > 2_us) {  // polled every 1 us: finer pauses cannot be met
                EXPECT_LT(max_gap, pause) << rate.v << " " << quanta;
                EXPECT_LE(max_gap.v, pause.v / 2 + 1000) << rate.v << " " << quanta;
            }
        }
    }
}

TEST(pfc_tx, added_priority_refreshes_all_and_xon_alone_does_not) {
    pfc_tx tx{flow_ctrl_mode::pfc, 100_Gbps};
    pfc_frame f;
    ASSERT_TRUE(tx.poll(nanos{0}, 0b0000'1000, f));
    // prio 4 joins at 50 us: frame carries 3 and 4, deadline restarts
    ASSERT_TRUE(tx.poll(50_us, 0b0001'1000, f));
    EXPECT_EQ(f.class_enable, 0b0001'1000);
    EXPECT_EQ(f.time[3], 0xFFFF);
    EXPECT_EQ(f.time[4], 0xFFFF);
    EXPECT_EQ(tx.next_deadline(), 50_us + nanos{167770});
    // prio 3 leaves at 60 us: XON for 3 only, deadline unchanged
    ASSERT_TRUE(tx.poll(60_us, 0b0001'0000, f));
    EXPECT_EQ(f.class_enable, 0b0000'1000);
    EXPECT_EQ(f.time[3], 0);
    EXPECT_EQ(f.time[4], 0);
    EXPECT_EQ(tx.next_deadline(), 50_us + nanos{167770});
    // swap at once: XON 4 + XOFF 3 in one frame
    ASSERT_TRUE(tx.poll(70_us, 0b0000'1000, f));
    EXPECT_EQ(f.class_enable, 0b0001'1000);
    EXPECT_EQ(f.time[3], 0xFFFF);
    EXPECT_EQ(f.time[4], 0);
    EXPECT_EQ(tx.stats().xon_sent[4], 1u);
    EXPECT_EQ(tx.stats().xon_sent[3], 1u);
    EXPECT_EQ(tx.stats().xoff_sent[3], 3u);
    EXPECT_EQ(tx.asserted_time(3, 100_us), 60_us + 30_us);
    EXPECT_EQ(tx.asserted_time(4, 100_us), 20_us);
}

TEST(pfc_tx, pause_mode) {
    pfc_tx tx{flow_ctrl_mode::pause, 100_Gbps, 0x1000};
    pfc_frame f;
    ASSERT_TRUE(tx.poll(nanos{0}, 0b0000'1000, f));
    EXPECT_EQ(f.mode, flow_ctrl_mode::pause);
    EXPECT_EQ(f.pause_time, 0x1000);
    EXPECT_EQ(tx.asserted(), 0xFF);
    // a different want set is still "some": no new frame
    EXPECT_FALSE(tx.poll(1_us, 0b0001'0000, f));
    const nanos refresh = tx.refresh_period();
    EXPECT_EQ(refresh, nanos{pause_quanta_time(0x1000, 100_Gbps).v / 2});
    ASSERT_TRUE(tx.poll(refresh, 0b0001'0000, f));
    EXPECT_EQ(f.pause_time, 0x1000);
    ASSERT_TRUE(tx.poll(refresh + 1_us, 0, f));
    EXPECT_EQ(f.pause_time, 0);
    EXPECT_EQ(tx.asserted(), 0);
    EXPECT_EQ(tx.stats().frames_sent, 3u);
    EXPECT_EQ(tx.stats().xon_sent[0], 1u);
    EXPECT_EQ(tx.stats().xoff_sent[7], 2u);
}

TEST(pfc_tx, rate_change_takes_effect_at_next_refresh) {
    pfc_tx tx{flow_ctrl_mode::pfc, 100_Gbps};
    pfc_frame f;
    ASSERT_TRUE(tx.poll(nanos{0}, 1, f));
    tx.set_rate(400_Gbps);
    EXPECT_EQ(tx.next_deadline(), nanos{167770});
    ASSERT_TRUE(tx.poll(nanos{167770}, 1, f));
    EXPECT_EQ(tx.next_deadline(), nanos{167770} + nanos{pause_quanta_time(0xFFFF, 400_Gbps).v / 2});
}

}  // namespace
}  // namespace rocelab
