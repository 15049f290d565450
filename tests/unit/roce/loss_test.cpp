// Unit tests for roce/loss.hpp: Bernoulli and Gilbert-Elliott loss rates
// within statistical bounds, burst lengths, determinism.
#include "roce/loss.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace rocelab {
namespace {

TEST(loss, threshold_endpoints) {
    EXPECT_EQ(loss_threshold(0.0), 0u);
    EXPECT_EQ(loss_threshold(-1.0), 0u);
    EXPECT_EQ(loss_threshold(1.0), 1ull << 32);
    EXPECT_EQ(loss_threshold(0.5), 1ull << 31);
    rng r{7};
    bernoulli_loss never{0.0};
    bernoulli_loss always{1.0};
    for (int i = 0; i < 10000; ++i) {
        EXPECT_FALSE(never.drop(r));
        EXPECT_TRUE(always.drop(r));
    }
}

TEST(loss, bernoulli_rate_within_5_sigma) {
    constexpr int n = 2'000'000;
    for (double p : {1e-4, 1e-3, 1e-2, 0.1, 0.5}) {
        rng r{12345};
        bernoulli_loss b{p};
        int drops = 0;
        for (int i = 0; i < n; ++i) {
            drops += b.drop(r) ? 1 : 0;
        }
        const double sigma = std::sqrt(n * p * (1 - p));
        EXPECT_NEAR(drops, n * p, 5 * sigma) << "p=" << p;
    }
}

TEST(loss, injector_is_deterministic_and_counts) {
    loss_cfg c;
    c.p = 0.02;
    loss_injector a{c};
    loss_injector b{c};
    rng ra{99};
    rng rb{99};
    for (int i = 0; i < 100000; ++i) {
        ASSERT_EQ(a.drop(ra), b.drop(rb));
    }
    EXPECT_EQ(a.counters().offered, 100000u);
    EXPECT_EQ(a.counters().dropped, b.counters().dropped);
    EXPECT_NEAR(a.counters().dropped, 2000, 5 * std::sqrt(2000.0));
    EXPECT_NEAR(a.mean_loss(), 0.02, 1e-9);
}

TEST(loss, gilbert_elliott_mean_loss) {
    loss_cfg c;
    c.gilbert = true;
    c.p_good_to_bad = 0.01;
    c.p_bad_to_good = 0.2;
    c.loss_good = 0.001;
    c.loss_bad = 0.5;
    loss_injector inj{c};
    const double expect = (0.2 / 0.21) * 0.001 + (0.01 / 0.21) * 0.5;
    EXPECT_NEAR(inj.mean_loss(), expect, 1e-12);
    rng r{2024};
    constexpr int n = 4'000'000;
    for (int i = 0; i < n; ++i) {
        inj.drop(r);
    }
    const double got = static_cast<double>(inj.counters().dropped) / n;
    EXPECT_NEAR(got, expect, 0.03 * expect);  // correlated draws: looser than i.i.d.
}

TEST(loss, gilbert_bursts_have_mean_length_1_over_p_bg) {
    gilbert_elliott_loss g{0.001, 0.25};  // classic: lose everything in bad
    rng r{5};
    long bursts = 0;
    long lost = 0;
    bool prev = false;
    for (int i = 0; i < 4'000'000; ++i) {
        const bool d = g.drop(r);
        lost += d ? 1 : 0;
        bursts += (d && !prev) ? 1 : 0;
        prev = d;
    }
    ASSERT_GT(bursts, 1000);
    EXPECT_NEAR(static_cast<double>(lost) / bursts, 4.0, 0.2);
    EXPECT_NEAR(static_cast<double>(lost) / 4e6, g.mean_loss(), 0.1 * g.mean_loss());
}

TEST(loss, cfg_check) {
    loss_cfg c;
    EXPECT_EQ(loss_cfg_check(c), "");
    c.p = 1.5;
    EXPECT_NE(loss_cfg_check(c).find("loss.p"), std::string::npos);
    c = loss_cfg{};
    c.p_bad_to_good = -0.1;
    EXPECT_NE(loss_cfg_check(c).find("p_bad_to_good"), std::string::npos);
}

}  // namespace
}  // namespace rocelab
