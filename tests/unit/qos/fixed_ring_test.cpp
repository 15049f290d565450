// Unit tests for core/fixed_ring.hpp.
#include "core/fixed_ring.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace rocelab {
namespace {

TEST(fixed_ring, push_pop_fifo_order_and_full) {
    fixed_ring<int, 4> r;
    EXPECT_TRUE(r.empty());
    EXPECT_EQ(r.capacity(), 4u);
    for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(r.push(i));
    }
    EXPECT_TRUE(r.full());
    EXPECT_FALSE(r.push(99));
    EXPECT_EQ(r.size(), 4u);
    EXPECT_EQ(r.front(), 0);
    EXPECT_EQ(r.back(), 3);
    EXPECT_EQ(r[2], 2);
    int v = -1;
    EXPECT_TRUE(r.pop(v));
    EXPECT_EQ(v, 0);
    EXPECT_EQ(r.pop(), 1);
    EXPECT_EQ(r.size(), 2u);
    r.clear();
    EXPECT_TRUE(r.empty());
    EXPECT_FALSE(r.pop(v));
}

TEST(fixed_ring, wraps_many_times) {
    fixed_ring<std::uint32_t, 8> r;
    std::uint32_t next_in = 0;
    std::uint32_t next_out = 0;
    for (int round = 0; round < 10000; ++round) {
        const int n_in = round % 7;
        for (int i = 0; i < n_in && !r.full(); ++i) {
            r.push(next_in++);
        }
        const int n_out = (round * 5) % 6;
        for (int i = 0; i < n_out && !r.empty(); ++i) {
            ASSERT_EQ(r.pop(), next_out++);
        }
        ASSERT_EQ(r.size(), next_in - next_out);
    }
}

TEST(fixed_ring, bursts_accept_what_fits) {
    fixed_ring<int, 8> r;
    std::array<int, 6> in{1, 2, 3, 4, 5, 6};
    EXPECT_EQ(r.push_burst(in), 6u);
    EXPECT_EQ(r.push_burst(in), 2u);  // only two slots left
    EXPECT_TRUE(r.full());
    std::array<int, 5> out{};
    EXPECT_EQ(r.pop_burst(out), 5u);
    EXPECT_EQ(out, (std::array<int, 5>{1, 2, 3, 4, 5}));
    std::array<int, 10> rest{};
    EXPECT_EQ(r.pop_burst(rest), 3u);
    EXPECT_EQ(rest[0], 6);
    EXPECT_EQ(rest[1], 1);
    EXPECT_EQ(rest[2], 2);
    EXPECT_TRUE(r.empty());
    // burst across the wrap point
    EXPECT_EQ(r.push_burst(in), 6u);
    EXPECT_EQ(r.pop_burst(std::span<int>(out.data(), 4)), 4u);
    EXPECT_EQ(r.push_burst(in), 6u);
    EXPECT_EQ(r.size(), 8u);
    std::array<int, 8> all{};
    EXPECT_EQ(r.pop_burst(all), 8u);
    EXPECT_EQ(all, (std::array<int, 8>{5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST(fixed_ring, holds_pointers) {
    int a = 1;
    int b = 2;
    fixed_ring<int*, 2> r;
    r.push(&a);
    r.push(&b);
    EXPECT_EQ(*r.pop(), 1);
    EXPECT_EQ(*r.pop(), 2);
}

}  // namespace
}  // namespace rocelab
