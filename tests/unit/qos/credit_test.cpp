// Unit tests for qos/credit.hpp: IBTA's FCTBS / ABR / FCCL arithmetic, the
// VL of a frame as the receiver classifies it, and the buffer bound the
// credits promise (a sender that always spends what it holds never makes
// the receiver hold more than its buffer).
#include "qos/credit.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>

namespace rocelab {
namespace {

TEST(credit, blocks_round_up_to_the_block) {
    credit_tx t;
    t.block = 64;
    EXPECT_EQ(t.blocks(1), 1u);
    EXPECT_EQ(t.blocks(64), 1u);
    EXPECT_EQ(t.blocks(65), 2u);
    EXPECT_EQ(t.blocks(1082), 17u);
    t.block = 96;
    EXPECT_EQ(t.blocks(1082), 12u);  // 12 cells of 96 B = 1152 B, what the MMU charges
}

TEST(credit, sender_spends_and_waits) {
    credit_tx t;
    t.block = 64;
    t.vl_of[3] = 3;
    EXPECT_TRUE(t.can_send(0, 9000));  // class 0 is not credited: never waits
    EXPECT_FALSE(t.can_send(3, 64));   // nothing given yet
    t.on_update(3, 20);
    EXPECT_TRUE(t.take_news());
    EXPECT_FALSE(t.take_news());
    EXPECT_TRUE(t.can_send(3, 1280));   // exactly 20 blocks
    EXPECT_FALSE(t.can_send(3, 1281));  // 21
    t.on_send(3, 1000);                 // 16 blocks
    EXPECT_EQ(t.fctbs[3], 16u);
    EXPECT_EQ(t.avail(3), 4u);
    EXPECT_EQ(t.blocked_mask(257), 1u << 3);  // 5 blocks > 4
    EXPECT_EQ(t.blocked_mask(256), 0u);
    t.on_update(3, 10);  // stale (lower): ignored
    EXPECT_EQ(t.fccl[3], 20u);
}

TEST(credit, receiver_fccl_is_abr_plus_free_blocks) {
    credit_rx r;
    r.block = 96;
    r.limit[3] = 96 * 100;
    r.credited = 1u << 3;
    EXPECT_EQ(r.fccl(3, 0), 100u);
    r.on_arrival(3, 1082);  // 12 blocks
    r.on_arrival(4, 1082);  // not credited: not counted
    r.on_arrival(-1, 64);   // MAC Control: no VL
    EXPECT_EQ(r.abr[3], 12u);
    EXPECT_EQ(r.abr[4], 0u);
    EXPECT_EQ(r.fccl(3, 1152), 100u);  // kept: the limit does not move
    EXPECT_EQ(r.fccl(3, 0), 112u);     // released: 12 more
    EXPECT_EQ(r.overruns, 0u);
    EXPECT_EQ(r.fccl(3, 96 * 101), 12u);  // held more than the buffer: counted
    EXPECT_EQ(r.overruns, 1u);
}

TEST(credit, vl_of_frame_follows_the_receivers_trust) {
    credit_rx r;
    r.maps = azure_roce_maps();
    std::array<std::uint8_t, 64> f{};
    f[12] = 0x08; f[13] = 0x00;  // IPv4
    f[15] = 26 << 2;             // DSCP 26 -> TC 3
    EXPECT_EQ(r.vl_of_frame(f.data(), 64), 3);
    f[15] = 48 << 2;             // CNP DSCP 48 -> TC 6
    EXPECT_EQ(r.vl_of_frame(f.data(), 64), 6);
    std::array<std::uint8_t, 64> v6{};
    v6[12] = 0x86; v6[13] = 0xDD;
    v6[14] = 0x60 | (26 >> 2);   // version 6, traffic class DSCP 26 (high 4 bits here)
    v6[15] = (26 & 3) << 6;
    EXPECT_EQ(r.vl_of_frame(v6.data(), 64), 3);
    std::array<std::uint8_t, 64> tagged{};
    tagged[12] = 0x81; tagged[13] = 0x00; tagged[14] = 4 << 5;  // PCP 4
    tagged[16] = 0x08; tagged[17] = 0x00; tagged[19] = 26 << 2;
    EXPECT_EQ(r.vl_of_frame(tagged.data(), 64), 3);  // DSCP trusted
    r.trust = trust_mode::pcp;
    EXPECT_EQ(r.vl_of_frame(tagged.data(), 64), 4);  // PCP trusted
    std::array<std::uint8_t, 64> pfc{};
    pfc[12] = 0x88; pfc[13] = 0x08;
    EXPECT_EQ(r.vl_of_frame(pfc.data(), 64), -1);
    EXPECT_EQ(r.vl_of_frame(pfc.data(), 10), -1);
}

// A sender that sends whenever it holds credits, a cable of `delay` steps
// each way, a receiver that frees one frame per `drain` steps: the receiver
// never holds more than its buffer, and the link never stops for good.
TEST(credit, buffer_never_overflows_under_a_greedy_sender) {
    for (int delay : {1, 5, 40}) {
        for (int drain : {1, 3, 7}) {
            credit_rx r;
            r.block = 96;
            r.limit[3] = 20000;
            r.credited = 1u << 3;
            credit_tx t;
            t.block = 96;
            t.vl_of[3] = 3;
            t.on_update(3, r.fccl(3, 0));
            r.advertised[3] = t.fccl[3];
            struct inflight { int at; std::uint32_t len; };
            std::deque<inflight> fwd;
            struct upd { int at; std::uint64_t fccl; };
            std::deque<upd> back;
            std::deque<std::uint32_t> held;
            std::uint64_t use = 0, peak = 0, sent = 0;
            for (int now = 0; now < 20000; ++now) {
                while (!back.empty() && back.front().at <= now) {
                    t.on_update(3, back.front().fccl);
                    back.pop_front();
                }
                const std::uint32_t len = 100 + static_cast<std::uint32_t>((now * 37) % 1000);
                if (t.can_send(3, len)) {
                    t.on_send(3, len);
                    fwd.push_back({now + delay, len});
                    ++sent;
                }
                while (!fwd.empty() && fwd.front().at <= now) {
                    const std::uint32_t l = fwd.front().len;
                    fwd.pop_front();
                    r.on_arrival(3, l);
                    const std::uint64_t charge = (l + 95) / 96 * 96;
                    use += charge;
                    held.push_back(charge);
                }
                peak = std::max(peak, use);
                if (now % drain == 0 && !held.empty()) {
                    use -= held.front();
                    held.pop_front();
                }
                const std::uint64_t f = r.fccl(3, use);
                if (f > r.advertised[3]) {
                    r.advertised[3] = f;
                    back.push_back({now + delay, f});
                }
            }
            EXPECT_LE(peak, r.limit[3]) << delay << " " << drain;
            EXPECT_EQ(r.overruns, 0u);
            EXPECT_GT(sent, 20000u / static_cast<unsigned>(drain) / 2) << delay << " " << drain;
        }
    }
}

}  // namespace
}  // namespace rocelab
