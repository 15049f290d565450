// Unit tests for roce/arrivals.hpp: fixed/Poisson/closed-loop arrivals,
// uniform sizes, empirical CDF parsing and sampling.
#include "roce/arrivals.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace rocelab {
namespace {

using namespace rocelab::literals;

// A made-up heavy-tailed CDF in the HPCC percent format (not a real trace).
constexpr const char* web_like_pct = R"(# size  cumulative percent
0 0
6000 20
12000 35
30000 50
80000 62
250000 72
1000000 82
3000000 91
10000000 97
20000000 100
)";

TEST(arrivals, fixed_rate_is_exact) {
    message_source s{arrival_cfg{arrival_kind::fixed_rate, nanos{1500}, 1, 0, nanos{100}},
                     size_dist::fixed(bytes{4096})};
    rng r{1};
    arrival a;
    EXPECT_EQ(s.next_deadline().v, 100);
    EXPECT_FALSE(s.poll(nanos{99}, r, a));
    ASSERT_TRUE(s.poll(nanos{100}, r, a));
    EXPECT_EQ(a.at.v, 100);
    EXPECT_EQ(a.size.v, 4096u);
    EXPECT_FALSE(s.poll(nanos{1599}, r, a));
    // Late poll: both due arrivals come out, with their own times.
    ASSERT_TRUE(s.poll(nanos{3200}, r, a));
    EXPECT_EQ(a.at.v, 1600);
    ASSERT_TRUE(s.poll(nanos{3200}, r, a));
    EXPECT_EQ(a.at.v, 3100);
    EXPECT_FALSE(s.poll(nanos{3200}, r, a));
    EXPECT_EQ(s.next_deadline().v, 4600);
}

TEST(arrivals, poisson_mean_and_cv) {
    message_source s{arrival_cfg{arrival_kind::poisson, nanos{10'000}}, size_dist::fixed(bytes{1})};
    rng r{42};
    arrival a;
    constexpr int n = 200'000;
    double prev = 0;
    double sum = 0;
    double sum2 = 0;
    int got = 0;
    nanos now{0};
    while (got < n) {
        now = s.next_deadline();
        while (s.poll(now, r, a)) {
            const double gap = static_cast<double>(a.at.v) - prev;
            prev = static_cast<double>(a.at.v);
            if (got > 0) {
                sum += gap;
                sum2 += gap * gap;
            }
            ++got;
        }
    }
    const double mean = sum / (n - 1);
    const double var = sum2 / (n - 1) - mean * mean;
    EXPECT_NEAR(mean, 10'000, 10'000 * 0.01);
    EXPECT_NEAR(std::sqrt(var) / mean, 1.0, 0.02);  // exponential: CV = 1
}

TEST(arrivals, closed_loop_keeps_n_outstanding) {
    message_source s{arrival_cfg{arrival_kind::closed_loop, nanos{0}, 3, 5}, size_dist::fixed(bytes{10})};
    rng r{1};
    arrival a;
    int n = 0;
    while (s.poll(nanos{7}, r, a)) {
        EXPECT_EQ(a.at.v, 7);
        ++n;
    }
    EXPECT_EQ(n, 3);
    EXPECT_EQ(s.next_deadline(), nanos::max());
    s.on_complete();
    EXPECT_TRUE(s.poll(nanos{8}, r, a));
    EXPECT_FALSE(s.poll(nanos{8}, r, a));
    s.on_complete();
    s.on_complete();
    EXPECT_TRUE(s.poll(nanos{9}, r, a));
    EXPECT_FALSE(s.poll(nanos{9}, r, a));  // count 5 reached
    EXPECT_EQ(s.released(), 5u);
}

TEST(arrivals, uniform_sizes) {
    const size_dist d = size_dist::uniform(bytes{100}, bytes{300});
    rng r{3};
    double sum = 0;
    for (int i = 0; i < 100'000; ++i) {
        const auto b = d.sample(r).v;
        ASSERT_GE(b, 100u);
        ASSERT_LE(b, 300u);
        sum += static_cast<double>(b);
    }
    EXPECT_NEAR(sum / 100'000, d.mean(), 1.0);
}

TEST(arrivals, empirical_cdf_percent_file_mean) {
    std::string err;
    const auto c = empirical_cdf::parse(web_like_pct, err);
    ASSERT_TRUE(c) << err;
    ASSERT_EQ(c->points().size(), 10u);
    EXPECT_DOUBLE_EQ(c->points().back().prob, 1.0);
    EXPECT_DOUBLE_EQ(c->points()[1].prob, 0.2);
    // Inverse CDF interpolates linearly.
    EXPECT_EQ(c->at(0.1).v, 3000u);
    EXPECT_EQ(c->at(0.5).v, 30000u);
    EXPECT_EQ(c->at(1.0).v, 20'000'000u);
    const size_dist d = size_dist::empirical(*c);
    rng r{11};
    constexpr int n = 1'000'000;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        sum += static_cast<double>(d.sample(r).v);
    }
    EXPECT_NEAR(sum / n, c->mean(), 0.02 * c->mean());
}

TEST(arrivals, empirical_cdf_fraction_format_and_point_mass) {
    std::string err;
    const auto c = empirical_cdf::parse("1000 0.5\n2000 1.0\n", err);
    ASSERT_TRUE(c) << err;
    EXPECT_EQ(c->at(0.3).v, 1000u);
    EXPECT_EQ(c->at(0.75).v, 1500u);
    EXPECT_DOUBLE_EQ(c->mean(), 0.5 * 1000 + 0.5 * 1500);
}

TEST(arrivals, empirical_cdf_errors_name_line) {
    std::string err;
    EXPECT_FALSE(empirical_cdf::parse("100 0.1\n50 0.5\n", err, "x.cdf"));
    EXPECT_NE(err.find("x.cdf:2:"), std::string::npos) << err;
    EXPECT_FALSE(empirical_cdf::parse("100 0.1\nabc 0.5\n", err, "x.cdf"));
    EXPECT_NE(err.find("x.cdf:2:"), std::string::npos) << err;
    EXPECT_FALSE(empirical_cdf::parse("100 0.1\n200 0.9\n", err, "x.cdf"));
    EXPECT_NE(err.find("last cumulative"), std::string::npos) << err;
    EXPECT_FALSE(empirical_cdf::parse("100\n", err, "x.cdf"));
    EXPECT_NE(err.find("x.cdf:1:"), std::string::npos) << err;
    EXPECT_FALSE(empirical_cdf::parse("# nothing\n\n", err, "x.cdf"));
    EXPECT_FALSE(empirical_cdf::load("/nonexistent/file.cdf", err));
    EXPECT_NE(err.find("cannot open"), std::string::npos);
}

TEST(arrivals, interval_for_load) {
    using namespace rocelab::literals;
    EXPECT_EQ(mean_interval_for_load(100_Gbps, 0.5, 1e6).v, 160'000);
}

}  // namespace
}  // namespace rocelab
