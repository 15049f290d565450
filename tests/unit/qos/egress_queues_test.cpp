// Unit tests for qos/egress_queues.hpp: limits, tail drop, counters, flush.
#include "qos/egress_queues.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rocelab {
namespace {

std::array<queue_limits, 8> limits_all(std::uint64_t max_bytes, std::uint32_t max_packets) {
    std::array<queue_limits, 8> l{};
    for (auto& x : l) {
        x.max_bytes = bytes{max_bytes};
        x.max_packets = max_packets;
    }
    return l;
}

TEST(egress_queues, fifo_per_queue_and_nonempty_mask) {
    egress_queues<int, 16> eq{limits_all(1 << 20, 16)};
    EXPECT_EQ(eq.nonempty_mask(), 0);
    EXPECT_TRUE(eq.enqueue(3, 30, 100));
    EXPECT_TRUE(eq.enqueue(3, 31, 200));
    EXPECT_TRUE(eq.enqueue(6, 60, 64));
    EXPECT_EQ(eq.nonempty_mask(), 0b0100'1000);
    EXPECT_EQ(eq.head_len(3), 100u);
    EXPECT_EQ(eq.head(3), 30);
    EXPECT_EQ(eq.head_len(0), 0u);
    EXPECT_EQ(eq.depth_bytes(3), bytes{300});
    EXPECT_EQ(eq.depth_packets(3), 2u);
    auto e = eq.dequeue(3);
    EXPECT_EQ(e.item, 30);
    EXPECT_EQ(e.len, 100u);
    EXPECT_EQ(eq.depth_bytes(3), bytes{200});
    auto [item, len, tag] = eq.dequeue(3);
    EXPECT_EQ(item, 31);
    EXPECT_EQ(len, 200u);
    EXPECT_EQ(tag, 0u);
    EXPECT_EQ(eq.nonempty_mask(), 0b0100'0000);
    EXPECT_TRUE(eq.empty(3));
    const auto& st = eq.stats(3);
    EXPECT_EQ(st.enq_packets, 2u);
    EXPECT_EQ(st.enq_bytes, 300u);
    EXPECT_EQ(st.deq_packets, 2u);
    EXPECT_EQ(st.deq_bytes, 300u);
    EXPECT_EQ(st.depth_max_bytes, 300u);
    EXPECT_EQ(st.depth_max_packets, 2u);
}

TEST(egress_queues, tail_drop_on_byte_limit) {
    egress_queues<int, 64> eq{limits_all(3000, 64)};
    EXPECT_TRUE(eq.enqueue(1, 0, 1500));
    EXPECT_TRUE(eq.enqueue(1, 1, 1500));  // exactly at the limit is allowed
    EXPECT_FALSE(eq.enqueue(1, 2, 1));    // would exceed
    EXPECT_FALSE(eq.enqueue(1, 3, 9000));
    EXPECT_EQ(eq.depth_bytes(1), bytes{3000});
    EXPECT_EQ(eq.stats(1).drop_tail_packets, 2u);
    EXPECT_EQ(eq.stats(1).drop_tail_bytes, 9001u);
    eq.dequeue(1);
    EXPECT_TRUE(eq.enqueue(1, 4, 1000));  // room again
    EXPECT_EQ(eq.stats(1).enq_packets, 3u);
    // other queues unaffected
    EXPECT_TRUE(eq.enqueue(2, 5, 3000));
    EXPECT_EQ(eq.stats(2).drop_tail_packets, 0u);
}

TEST(egress_queues, tail_drop_on_packet_limit_and_ring_depth) {
    std::array<queue_limits, 8> l = limits_all(1 << 20, 4);
    l[5].max_packets = 1000;  // more than the ring: clamped to Depth 8
    egress_queues<int, 8> eq{l};
    for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(eq.enqueue(0, i, 64));
    }
    EXPECT_FALSE(eq.enqueue(0, 4, 64));
    EXPECT_EQ(eq.stats(0).drop_tail_packets, 1u);
    EXPECT_EQ(eq.stats(0).drop_tail_bytes, 64u);
    for (int i = 0; i < 8; ++i) {
        EXPECT_TRUE(eq.enqueue(5, i, 64));
    }
    EXPECT_FALSE(eq.enqueue(5, 8, 64));
    EXPECT_EQ(eq.stats(5).drop_tail_packets, 1u);
    EXPECT_EQ(eq.stats(5).depth_max_packets, 8u);
    // lowering a limit at run time affects new arrivals only
    eq.set_limits(5, queue_limits{bytes{100}, 8});
    EXPECT_EQ(eq.depth_packets(5), 8u);
    eq.dequeue(5);
    EXPECT_FALSE(eq.enqueue(5, 9, 64));  // 7*64 + 64 > 100
}

TEST(egress_queues, flush_drops_everything_and_counts) {
    egress_queues<int, 16> eq{limits_all(1 << 20, 16)};
    for (int i = 0; i < 5; ++i) {
        eq.enqueue(4, 40 + i, 100 + i, 0x500u + static_cast<std::uint32_t>(i));
    }
    eq.enqueue(3, 7, 64);
    std::vector<int> freed;
    std::vector<std::uint32_t> tags;
    std::uint64_t freed_bytes = 0;
    EXPECT_EQ(eq.flush(4,
                       [&](const auto& e) {
                           freed.push_back(e.item);
                           tags.push_back(e.tag);
                           freed_bytes += e.len;
                       }),
              5u);
    EXPECT_EQ(freed, (std::vector<int>{40, 41, 42, 43, 44}));
    EXPECT_EQ(tags, (std::vector<std::uint32_t>{0x500, 0x501, 0x502, 0x503, 0x504}));  // tags travel with items
    EXPECT_EQ(eq.dequeue(3).tag, 0u);
    EXPECT_EQ(freed_bytes, 510u);
    EXPECT_EQ(eq.depth_bytes(4), bytes{0});
    EXPECT_EQ(eq.nonempty_mask(), 0);
    EXPECT_EQ(eq.stats(4).drop_flush_packets, 5u);
    EXPECT_EQ(eq.stats(4).drop_flush_bytes, 510u);
    EXPECT_EQ(eq.stats(4).deq_packets, 0u);
    eq.reset_stats();
    EXPECT_EQ(eq.stats(4).enq_packets, 0u);
}

}  // namespace
}  // namespace rocelab
