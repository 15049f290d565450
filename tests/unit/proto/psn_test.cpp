// psn_test.cpp - 24-bit PSN arithmetic.
#include <gtest/gtest.h>

#include "core/rng.hpp"
#include "proto/psn.hpp"

namespace rocelab {
namespace {

TEST(ProtoPsn, WrapAround) {
    EXPECT_EQ(psn_add(0xFFFFFE, 1), 0xFFFFFFu);
    EXPECT_EQ(psn_add(0xFFFFFF, 1), 0u);
    EXPECT_EQ(psn_add(0xFFFFF0, 0x20), 0x10u);
    EXPECT_EQ(psn_sub(0, 1), 0xFFFFFFu);
    EXPECT_EQ(psn_diff(0, 0xFFFFFF), 1);
    EXPECT_EQ(psn_diff(0xFFFFFF, 0), -1);
    EXPECT_EQ(psn_diff(5, 5), 0);
    EXPECT_EQ(psn_diff(0x7FFFFF, 0), 0x7FFFFF);
    EXPECT_EQ(psn_diff(0x800000, 0), -0x800000);
    EXPECT_TRUE(psn_lt(0xFFFFF0, 3));
    EXPECT_TRUE(psn_gt(3, 0xFFFFF0));
    EXPECT_TRUE(psn_le(7, 7));
    EXPECT_TRUE(psn_ge(7, 7));
    EXPECT_FALSE(psn_lt(7, 7));
}

TEST(ProtoPsn, RandomAgainstReference) {
    rng r(24);
    for (int i = 0; i < 100000; ++i) {
        const std::uint32_t a = r.next_u32() & psn_mask;
        const std::int32_t d = static_cast<std::int32_t>(r.next_u32() % 0x1000000u) - 0x800000;
        const std::uint32_t b = psn_add(a, static_cast<std::uint32_t>(d));
        ASSERT_LE(b, psn_mask);
        ASSERT_EQ(psn_diff(b, a), d);
        ASSERT_EQ(psn_sub(b, static_cast<std::uint32_t>(d)), a);
    }
}

}  // namespace
}  // namespace rocelab
