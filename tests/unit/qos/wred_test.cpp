// wred_test.cpp - WRED/ECN decision: formula (reference 3.2), seeded marking
// frequencies, fixed point against a double-precision reference, step mode,
// Not-ECT handling, SONiC profile resolution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "core/rng.hpp"
#include "qos/wred.hpp"

namespace rocelab {
namespace {

constexpr std::uint64_t KB = 1000;  // HPCC's run.py writes KB = 1000 bytes

wred_cfg hpcc_100g() { return wred_cfg::make(bytes{400 * KB}, bytes{1600 * KB}, 0.20, true, false); }

wred_profile_cfg azure_lossless() {
    wred_profile_cfg p;
    p.name = "AZURE_LOSSLESS";
    p.wred_green_enable = true;
    p.green_min_threshold = bytes{1048576};
    p.green_max_threshold = bytes{2097152};
    p.green_drop_probability = 5;
    p.ecn = ecn_mode::ecn_all;
    return p;
}

struct tally {
    std::uint64_t pass = 0, mark = 0, drop = 0;
};

tally run(const wred_cfg& w, std::uint64_t q, bool ect, std::uint64_t n, std::uint64_t seed) {
    rng r{seed};
    tally t;
    for (std::uint64_t i = 0; i < n; ++i) {
        switch (w.decide(q, ect, r)) {
        case wred_verdict::pass: ++t.pass; break;
        case wred_verdict::mark: ++t.mark; break;
        case wred_verdict::drop: ++t.drop; break;
        }
    }
    return t;
}

// Draws so that +-1 % relative is at least 4 standard deviations of the
// binomial count (at least 1e6): sd/np = sqrt((1-p)/(np)) <= 0.0025.
std::uint64_t draws_for(double p) {
    const double n = 16.0 * (1.0 - p) / (p * 1e-4);
    return std::max<std::uint64_t>(1'000'000, static_cast<std::uint64_t>(std::ceil(n)));
}

void expect_frequency(const wred_cfg& w, std::uint64_t q, double p_expected, bool ect, wred_verdict what) {
    ASSERT_GT(p_expected, 0.0);
    ASSERT_LT(p_expected, 1.0);
    EXPECT_NEAR(w.probability(q), p_expected, 1e-12) << "formula at q=" << q;
    const std::uint64_t n = draws_for(p_expected);
    const tally t = run(w, q, ect, n, 0xC0FFEE + q);
    const std::uint64_t hits = what == wred_verdict::mark ? t.mark : t.drop;
    EXPECT_EQ(hits + t.pass, n) << "no other verdict";
    const double freq = static_cast<double>(hits) / static_cast<double>(n);
    EXPECT_NEAR(freq / p_expected, 1.0, 0.01) << "q=" << q << " p=" << p_expected << " freq=" << freq << " n=" << n;
}

TEST(wred, hpcc_100g_marking_frequency) {
    const wred_cfg w = hpcc_100g();
    EXPECT_TRUE(w.enabled);
    expect_frequency(w, 500 * KB, 0.2 * 100.0 / 1200.0, true, wred_verdict::mark);
    expect_frequency(w, 1000 * KB, 0.10, true, wred_verdict::mark);  // reference 3.3 example
    expect_frequency(w, 1500 * KB, 0.2 * 1100.0 / 1200.0, true, wred_verdict::mark);
    expect_frequency(w, 1600 * KB, 0.20, true, wred_verdict::mark);  // p(Kmax) = Pmax
}

TEST(wred, azure_lossless_marking_frequency) {
    const wred_cfg w = wred_cfg::from_profile(azure_lossless());
    EXPECT_TRUE(w.enabled);
    EXPECT_TRUE(w.mark_ect);
    EXPECT_TRUE(w.drop_enable);
    EXPECT_EQ(w.kmin, bytes{1048576});
    EXPECT_EQ(w.kmax, bytes{2097152});
    EXPECT_DOUBLE_EQ(w.pmax, 0.05);
    expect_frequency(w, 1048576 + 262144, 0.0125, true, wred_verdict::mark);
    expect_frequency(w, 1572864, 0.025, true, wred_verdict::mark);
    expect_frequency(w, 2097152 - 1, 0.05 * (1048575.0 / 1048576.0), true, wred_verdict::mark);
    // Not-ECT with wred_green_enable: dropped at the same probability.
    expect_frequency(w, 1572864, 0.025, false, wred_verdict::drop);
}

TEST(wred, zero_at_or_below_kmin_one_above_kmax_and_no_draw) {
    const wred_cfg w = hpcc_100g();
    for (const std::uint64_t q : {std::uint64_t{0}, std::uint64_t{1}, 400 * KB - 1, 400 * KB}) {
        rng r{7};
        rng copy = r;
        for (int i = 0; i < 1000; ++i) {
            ASSERT_EQ(w.decide(q, true, r), wred_verdict::pass) << q;
            ASSERT_EQ(w.decide(q, false, r), wred_verdict::pass) << q;
        }
        EXPECT_EQ(r.next(), copy.next()) << "no random number drawn at q=" << q;
        EXPECT_EQ(w.probability_fixed(q), 0u);
    }
    for (const std::uint64_t q : {1600 * KB + 1, 1700 * KB, std::uint64_t{1} << 40, UINT64_MAX}) {
        rng r{7};
        rng copy = r;
        for (int i = 0; i < 1000; ++i) {
            ASSERT_EQ(w.decide(q, true, r), wred_verdict::mark) << q;
        }
        EXPECT_EQ(r.next(), copy.next()) << "no random number drawn at q=" << q;
        EXPECT_EQ(w.probability_fixed(q), std::uint64_t{1} << 32);
        EXPECT_EQ(w.probability(q), 1.0);
    }
    // Between: the generator is used.
    rng r{7};
    rng copy = r;
    (void)w.decide(1000 * KB, true, r);
    EXPECT_NE(r.next(), copy.next());
}

TEST(wred, fixed_point_matches_double_reference) {
    struct c {
        std::uint64_t kmin, kmax;
        double pmax;
    };
    for (const c& k : {c{400 * KB, 1600 * KB, 0.2}, c{1048576, 2097152, 0.05}, c{5 * KB, 200 * KB, 0.01},
                       c{0, 1, 1.0}, c{0, 3, 1.0}, c{100, 101, 0.5}, c{0, std::uint64_t{1} << 34, 1.0},
                       c{1000, 1000 + 9216, 0.99}, c{0, 1000, 0.0}}) {
        const wred_cfg w = wred_cfg::make(bytes{k.kmin}, bytes{k.kmax}, k.pmax, true, true);
        const std::uint64_t range = k.kmax - k.kmin;
        const std::uint64_t step = std::max<std::uint64_t>(1, range / 997);
        for (std::uint64_t q = k.kmin; q <= k.kmax + 2; q += (q < k.kmin + 3 || q + 3 > k.kmax) ? 1 : step) {
            const double ref = w.probability(q);
            const double fixed = static_cast<double>(w.probability_fixed(q)) * 0x1p-32;
            ASSERT_NEAR(fixed, ref, 2.5e-10) << "kmin " << k.kmin << " kmax " << k.kmax << " q " << q;
        }
        EXPECT_EQ(w.probability_fixed(k.kmin), 0u);
        if (k.pmax == 1.0) {
            EXPECT_EQ(w.probability_fixed(k.kmax), std::uint64_t{1} << 32) << "p(Kmax) = 1 exactly";
        }
    }
}

TEST(wred, pmax_one_at_kmax_always_hits) {
    const wred_cfg w = wred_cfg::make(bytes{1000}, bytes{2000}, 1.0, true, false);
    const tally t = run(w, 2000, true, 100000, 3);
    EXPECT_EQ(t.mark, 100000u);
}

TEST(wred, step_mode_marks_every_ect_packet_above_k) {
    const wred_cfg w = wred_cfg::make(bytes{300 * KB}, bytes{300 * KB}, 1.0, true, false);
    rng r{1};
    EXPECT_EQ(w.decide(300 * KB, true, r), wred_verdict::pass);
    EXPECT_EQ(w.decide(300 * KB + 1, true, r), wred_verdict::mark);
    const tally t = run(w, 300 * KB + 1, true, 10000, 2);
    EXPECT_EQ(t.mark, 10000u);
    // Pmax does not matter in step mode.
    const wred_cfg w0 = wred_cfg::make(bytes{300 * KB}, bytes{300 * KB}, 0.0, true, false);
    EXPECT_EQ(w0.decide(300 * KB + 1, true, r), wred_verdict::mark);
    // Not-ECT is never dropped without drop_enable.
    EXPECT_EQ(w.decide(300 * KB + 1, false, r), wred_verdict::pass);
    EXPECT_EQ(w.decide(UINT64_MAX, false, r), wred_verdict::pass);
}

TEST(wred, not_ect_dropped_only_with_wred_green_enable) {
    wred_profile_cfg p = azure_lossless();
    const wred_cfg with = wred_cfg::from_profile(p);
    p.wred_green_enable = false;
    const wred_cfg without = wred_cfg::from_profile(p);
    EXPECT_TRUE(without.enabled);
    EXPECT_FALSE(without.drop_enable);
    const std::uint64_t above = 2097152 + 1;
    rng r{9};
    EXPECT_EQ(with.decide(above, false, r), wred_verdict::drop);
    EXPECT_EQ(with.decide(above, true, r), wred_verdict::mark);
    EXPECT_EQ(without.decide(above, false, r), wred_verdict::pass);
    EXPECT_EQ(without.decide(above, true, r), wred_verdict::mark);
    // Between the thresholds Not-ECT never draws without drop_enable.
    rng a{5};
    rng copy = a;
    const tally t = run(without, 1572864, false, 100000, 11);
    EXPECT_EQ(t.pass, 100000u);
    (void)without.decide(1572864, false, a);
    EXPECT_EQ(a.next(), copy.next());
}

TEST(wred, ect_without_marking_but_with_drop_is_dropped) {
    wred_profile_cfg p = azure_lossless();
    p.ecn = ecn_mode::ecn_yellow_red;  // green not marked
    const wred_cfg w = wred_cfg::from_profile(p);
    EXPECT_TRUE(w.enabled);
    EXPECT_FALSE(w.mark_ect);
    rng r{1};
    EXPECT_EQ(w.decide(2097152 + 1, true, r), wred_verdict::drop);
    expect_frequency(w, 1572864, 0.025, true, wred_verdict::drop);
}

TEST(wred, ecn_none_profile_never_marks) {
    wred_profile_cfg p = azure_lossless();
    p.ecn = ecn_mode::ecn_none;
    const wred_cfg w = wred_cfg::from_profile(p);
    EXPECT_FALSE(w.mark_ect);
    const tally t = run(w, 1800000, true, 200000, 4);
    EXPECT_EQ(t.mark, 0u);
    EXPECT_GT(t.drop, 0u);  // wred_green_enable still drops
    p.wred_green_enable = false;
    const wred_cfg off = wred_cfg::from_profile(p);
    EXPECT_FALSE(off.enabled);
    const tally u = run(off, UINT64_MAX, true, 1000, 4);
    EXPECT_EQ(u.pass, 1000u);
}

TEST(wred, disabled_default_passes_everything) {
    const wred_cfg w{};
    EXPECT_FALSE(w.enabled);
    rng r{1};
    rng copy = r;
    for (const std::uint64_t q : {std::uint64_t{0}, std::uint64_t{1} << 30, UINT64_MAX}) {
        EXPECT_EQ(w.decide(q, true, r), wred_verdict::pass);
        EXPECT_EQ(w.decide(q, false, r), wred_verdict::pass);
        EXPECT_EQ(w.probability(q), 0.0);
    }
    EXPECT_EQ(r.next(), copy.next());
}

TEST(wred, colours_of_ecn_modes) {
    EXPECT_TRUE(ecn_marks_green(ecn_mode::ecn_all));
    EXPECT_TRUE(ecn_marks_green(ecn_mode::ecn_green));
    EXPECT_TRUE(ecn_marks_green(ecn_mode::ecn_green_yellow));
    EXPECT_TRUE(ecn_marks_green(ecn_mode::ecn_green_red));
    EXPECT_FALSE(ecn_marks_green(ecn_mode::ecn_none));
    EXPECT_FALSE(ecn_marks_green(ecn_mode::ecn_yellow));
    EXPECT_FALSE(ecn_marks_green(ecn_mode::ecn_red));
    EXPECT_FALSE(ecn_marks_green(ecn_mode::ecn_yellow_red));
    EXPECT_TRUE(ecn_marks_yellow(ecn_mode::ecn_yellow_red));
    EXPECT_FALSE(ecn_marks_yellow(ecn_mode::ecn_green_red));
    EXPECT_TRUE(ecn_marks_red(ecn_mode::ecn_green_red));
    EXPECT_FALSE(ecn_marks_red(ecn_mode::ecn_green_yellow));
}

TEST(wred, ecn_mode_names_round_trip) {
    for (int i = 0; i < 8; ++i) {
        const auto m = static_cast<ecn_mode>(i);
        EXPECT_EQ(parse_ecn_mode(ecn_mode_name(m)), m);
    }
    EXPECT_EQ(parse_ecn_mode("ecn_all"), ecn_mode::ecn_all);
    EXPECT_FALSE(parse_ecn_mode("ecn_blue"));
    EXPECT_FALSE(parse_ecn_mode(""));
    EXPECT_TRUE(ecn_capable(1));
    EXPECT_TRUE(ecn_capable(2));
    EXPECT_TRUE(ecn_capable(3));
    EXPECT_FALSE(ecn_capable(0));
    EXPECT_FALSE(ecn_capable(0xFF));
}

TEST(wred, make_clamps_bad_input) {
    const wred_cfg a = wred_cfg::make(bytes{2000}, bytes{1000}, 2.0, true, false);  // kmax < kmin: step
    EXPECT_EQ(a.kmax, bytes{2000});
    EXPECT_EQ(a.pmax, 1.0);
    rng r{1};
    EXPECT_EQ(a.decide(2001, true, r), wred_verdict::mark);
    EXPECT_EQ(a.decide(2000, true, r), wred_verdict::pass);
    const wred_cfg b = wred_cfg::make(bytes{0}, bytes{1000}, std::nan(""), true, false);
    EXPECT_EQ(b.pmax, 0.0);
    EXPECT_EQ(b.decide(500, true, r), wred_verdict::pass);
}

}  // namespace
}  // namespace rocelab
