// deadlock_detector (lib/fabric/deadlock.hpp) on hand-made fabric states:
// a ring of paused, non-empty queues that sent nothing between two samples,
// each held by the next switch, is one deadlock, listed in wait-for order;
// it is not one if a queue moved, was not paused at the previous sample, is
// empty, or its pause is not held by the switch it waits on; it clears when
// a queue on it sends again.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fabric/deadlock.hpp"

namespace rocelab {
namespace {

// Switch i's port 1 (queue 3) sends to switch (i+1) % n, which holds it.
std::vector<dl_queue_state> ring(std::uint32_t n, std::uint64_t sent = 100) {
    std::vector<dl_queue_state> v;
    for (std::uint32_t i = 0; i < n; ++i) {
        dl_queue_state s;
        s.q = {i, 1, 3};
        s.paused = true;
        s.depth_bytes = 150000;
        s.sent_packets = sent;
        s.peer = (i + 1) % n;
        s.peer_holds = true;
        v.push_back(s);
    }
    return v;
}

std::string text(const dl_deadlock& d) {
    return dl_cycle_text(d.cycle, [](std::uint32_t n, std::uint16_t p) {
        std::string s = "s";  // (not "s" + to_string(): GCC 12's -Wrestrict false positive)
        s += std::to_string(n);
        s += ":Ethernet";
        s += std::to_string(p);
        return s;
    });
}

TEST(Deadlock, RingOfStuckQueuesIsOne) {
    deadlock_detector d;
    auto st = ring(4);
    std::reverse(st.begin(), st.end());  // order of the input does not matter
    d.observe(nanos{1000}, st);
    EXPECT_TRUE(d.found().empty()) << "one sample cannot show that nothing moved";
    d.observe(nanos{2000}, st);
    ASSERT_EQ(d.found().size(), 1u);
    EXPECT_EQ(d.found()[0].detected, nanos{2000});
    EXPECT_EQ(d.found()[0].cleared, nanos{-1});
    EXPECT_EQ(text(d.found()[0]),
              "s0:Ethernet1 q3 -> s1:Ethernet1 q3 -> s2:Ethernet1 q3 -> s3:Ethernet1 q3 -> s0:Ethernet1 q3");
    EXPECT_EQ(d.open(), 1u);
    EXPECT_EQ(d.new_found(), std::vector<std::size_t>{0});
    d.observe(nanos{3000}, st);
    EXPECT_EQ(d.found().size(), 1u) << "reported once while it holds";
    EXPECT_TRUE(d.new_found().empty());
}

TEST(Deadlock, AQueueThatSentIsNotStuck) {
    deadlock_detector d;
    auto st = ring(4);
    d.observe(nanos{1000}, st);
    st[2].sent_packets += 1;
    d.observe(nanos{2000}, st);
    EXPECT_TRUE(d.found().empty());
}

TEST(Deadlock, PausedAtBothSamplesAndNotEmpty) {
    {
        deadlock_detector d;
        auto st = ring(3);
        st[1].paused = false;
        d.observe(nanos{1000}, st);
        st[1].paused = true;
        d.observe(nanos{2000}, st);
        EXPECT_TRUE(d.found().empty()) << "paused only since the last sample";
        d.observe(nanos{3000}, st);
        EXPECT_EQ(d.found().size(), 1u);
    }
    {
        deadlock_detector d;
        auto st = ring(3);
        st[0].depth_bytes = 0;
        d.observe(nanos{1000}, st);
        d.observe(nanos{2000}, st);
        EXPECT_TRUE(d.found().empty()) << "an empty queue waits for nothing";
    }
}

TEST(Deadlock, NeedsEveryPauseHeldAndACycle) {
    {
        deadlock_detector d;
        auto st = ring(4);
        st[3].peer_holds = false;  // s0 is not pausing s3
        d.observe(nanos{1000}, st);
        d.observe(nanos{2000}, st);
        EXPECT_TRUE(d.found().empty());
    }
    {
        deadlock_detector d;
        auto st = ring(4);
        st[3].peer = dl_no_node;  // s3 sends to a host: a chain, not a cycle
        d.observe(nanos{1000}, st);
        d.observe(nanos{2000}, st);
        EXPECT_TRUE(d.found().empty());
    }
}

TEST(Deadlock, ClearsWhenAQueueMovesAgain) {
    deadlock_detector d;
    auto st = ring(4);
    d.observe(nanos{1000}, st);
    d.observe(nanos{2000}, st);
    ASSERT_EQ(d.open(), 1u);
    st[1].sent_packets += 8;  // the watchdog dropped the pause and s1 sent
    st[1].paused = false;
    d.observe(nanos{3000}, st);
    EXPECT_EQ(d.open(), 0u);
    EXPECT_EQ(d.found()[0].cleared, nanos{3000});
    EXPECT_EQ(d.new_cleared(), std::vector<std::size_t>{0});
    // It can form again, and is then a second one.
    st[1].paused = true;
    d.observe(nanos{4000}, st);
    d.observe(nanos{5000}, st);
    EXPECT_EQ(d.found().size(), 2u);
    EXPECT_EQ(d.found()[1].detected, nanos{5000});
}

TEST(Deadlock, TwoDisjointCyclesAreTwo) {
    deadlock_detector d;
    auto a = ring(2);
    auto b = ring(3);
    for (auto& s : b) {  // nodes 10..12
        s.q.node += 10;
        s.peer += 10;
    }
    a.insert(a.end(), b.begin(), b.end());
    d.observe(nanos{1000}, a);
    d.observe(nanos{2000}, a);
    ASSERT_EQ(d.found().size(), 2u);
    EXPECT_EQ(d.found()[0].cycle.size(), 2u);
    EXPECT_EQ(d.found()[1].cycle.size(), 3u);
    EXPECT_EQ(d.found()[1].cycle[0].node, 10u);
}

}  // namespace
}  // namespace rocelab
