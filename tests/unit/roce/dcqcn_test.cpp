// Unit tests for roce/dcqcn.hpp: the reaction point against every rate-trace
// oracle of reference sec. 4.7 (manual clock, configs written out here from
// the reference text), the parameter variants, deadlines, the off profile,
// the notification point (per-QP window over a seeded CE stream, per-port
// spacing, counters), each profile's NP, and the hpcc_ns3 NP + RP against an
// event-queue model of HPCC's ns-3 over a long seeded CE stream.
#include "roce/dcqcn.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "core/rng.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

constexpr double gbps = 1e9;
nanos us(double x) { return nanos{static_cast<std::int64_t>(std::llround(x * 1000.0))}; }

// Relative 1e-6 against a value printed in Gb/s.
void expect_rate(double bps, double want_gbps, const char* what) {
    EXPECT_NEAR(bps / gbps, want_gbps, std::abs(want_gbps) * 1e-6) << what;
}
// Alpha is printed with 6 decimals: half a unit of the last digit.
void expect_alpha6(double a, double want, const char* what) { EXPECT_NEAR(a, want, 5e-7 + 1e-12) << what; }

// Reference 4.7, paper rules: C = 100Gbps, g = 1/256, T = K = 55us, F = 5,
// R_AI = 40Mbps, byte counter off, cut with the old alpha then update, R_T =
// R_C on every CNP, a cut on every CNP.
dcqcn_cfg paper_oracle_cfg() {
    dcqcn_cfg c{};
    c.profile = dcqcn_profile::dcqcn_paper;
    c.enabled = true;
    c.line_rate = 100_Gbps;
    c.rpg_time_reset = 55_us;
    c.rpg_byte_reset = bytes{0};
    c.rpg_threshold = 5;
    c.rpg_ai_rate = 40_Mbps;
    c.rpg_hai_rate = 200_Mbps;
    c.rpg_max_rate = bits_per_sec{0};
    c.rpg_min_rate = 1_Mbps;
    c.rpg_gd = 11;
    c.rpg_min_dec_fac = 0;
    c.rate_reduce_monitor_period = nanos{0};
    c.rate_reduce_offset = nanos{0};
    c.rate_to_set_on_first_cnp = bits_per_sec{0};
    c.clamp_tgt_rate = true;
    c.clamp_tgt_rate_after_time_inc = false;
    c.dce_tcp_g = 1.0 / 256.0;
    c.dce_tcp_rtt = 55_us;
    c.initial_alpha_value = 1.0;
    c.alpha_mode = dcqcn_alpha_mode::cut_then_update;
    c.stage_rule = dcqcn_stage_rule::qcn;
    c.hai_step = dcqcn_hai_step::multiplied;
    return c;
}

// Reference 4.4/4.7, HPCC ns-3 "mlx" with run.py `dcqcn` at 100G: g = 1/256
// every 1us, decrease check every 4us from first CNP + 4us + 1ns, RPTimer
// 300us, F = 1, R_AI 20Mbps, R_HAI 200Mbps (constant), MinRate 1000Mbps,
// ClampTargetRate off (target = rate at a cut only if rpTimeStage != 0).
dcqcn_cfg hpcc_oracle_cfg(bool clamp) {
    dcqcn_cfg c{};
    c.profile = dcqcn_profile::hpcc_ns3;
    c.enabled = true;
    c.line_rate = 100_Gbps;
    c.rpg_time_reset = 300_us;
    c.rpg_byte_reset = bytes{0};
    c.rpg_threshold = 1;
    c.rpg_ai_rate = 20_Mbps;
    c.rpg_hai_rate = 200_Mbps;
    c.rpg_max_rate = bits_per_sec{0};
    c.rpg_min_rate = 1000_Mbps;
    c.rpg_gd = 11;
    c.rpg_min_dec_fac = 0;
    c.rate_reduce_monitor_period = 4_us;
    c.rate_reduce_offset = 1_ns;
    c.rate_to_set_on_first_cnp = bits_per_sec{0};
    c.clamp_tgt_rate = clamp;
    c.clamp_tgt_rate_after_time_inc = true;
    c.dce_tcp_g = 1.0 / 256.0;
    c.dce_tcp_rtt = 1_us;
    c.initial_alpha_value = 1.0;
    c.alpha_mode = dcqcn_alpha_mode::periodic;
    c.stage_rule = dcqcn_stage_rule::timer_stage;
    c.hai_step = dcqcn_hai_step::constant;
    return c;
}

struct row {
    double t_us;
    double rc;
    double rt;
    double alpha;
};

void run_paper_single(const dcqcn_cfg& c) {
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    const row rows[] = {
        {0, 50.0, 100, 1.000000},        {55, 75.0, 100, 0.996094},       {110, 87.5, 100, 0.992203},
        {165, 93.75, 100, 0.988327},     {220, 96.875, 100, 0.984466},    {275, 98.4375, 100, 0.980621},
        {330, 99.21875, 100, 0.976790},
    };
    int k = 0;
    for (const auto& r : rows) {
        rp.advance(us(r.t_us));
        expect_rate(rp.rate_bps(), r.rc, "R_C");
        expect_rate(rp.target_bps(), r.rt, "R_T");
        expect_alpha6(rp.alpha(), r.alpha, "alpha");
        EXPECT_NEAR(rp.alpha(), std::pow(255.0 / 256.0, k), 1e-12);  // one decay per K
        ++k;
    }
    EXPECT_EQ(rp.counters().fast_recovery, 5u);
    EXPECT_EQ(rp.counters().additive_increase, 1u);
    EXPECT_EQ(rp.counters().hyper_increase, 0u);
    EXPECT_EQ(rp.counters().cuts, 1u);
}

TEST(dcqcn_rp, paper_single_cnp_oracle) { run_paper_single(paper_oracle_cfg()); }

TEST(dcqcn_rp, paper_profile_reproduces_single_cnp_oracle) {
    // The profile's byte counter (10MB) never fires without on_sent.
    run_paper_single(dcqcn_defaults(dcqcn_profile::dcqcn_paper, 100_Gbps));
}

void run_paper_three(const dcqcn_cfg& c) {
    dcqcn_rp rp{c};
    const double cuts[][2] = {{50, 100}, {25, 50}, {12.5, 25}};
    for (int i = 0; i < 3; ++i) {
        rp.on_cnp(us(20.0 * i));
        expect_rate(rp.rate_bps(), cuts[i][0], "cut R_C");
        expect_rate(rp.target_bps(), cuts[i][1], "cut R_T");
        EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);  // (1-g) x 1 + g
    }
    EXPECT_EQ(rp.advance(us(40)), us(95));
    const double fr[] = {18.75, 21.875, 23.4375, 24.21875, 24.609375};
    for (int i = 0; i < 5; ++i) {
        rp.advance(us(95 + 55.0 * i));
        expect_rate(rp.rate_bps(), fr[i], "FR R_C");
        expect_rate(rp.target_bps(), 25, "FR R_T");
    }
    rp.advance(us(370));
    expect_rate(rp.target_bps(), 25.04, "AI 370 R_T");
    expect_rate(rp.rate_bps(), 24.824688, "AI 370 R_C");
    rp.advance(us(425));
    expect_rate(rp.target_bps(), 25.08, "AI 425 R_T");
    expect_rate(rp.rate_bps(), 24.952344, "AI 425 R_C");
    EXPECT_EQ(rp.counters().additive_increase, 2u);
    EXPECT_EQ(rp.counters().cuts, 3u);
    EXPECT_EQ(rp.counters().cnps_rx, 3u);
}

TEST(dcqcn_rp, paper_three_cnps_oracle) { run_paper_three(paper_oracle_cfg()); }
TEST(dcqcn_rp, paper_profile_reproduces_three_cnps_oracle) {
    run_paper_three(dcqcn_defaults(dcqcn_profile::dcqcn_paper, 100_Gbps));
}

void run_hpcc_single(const dcqcn_cfg& c) {
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);
    expect_rate(rp.rate_bps(), 100, "no cut at the CNP");
    EXPECT_EQ(rp.advance(nanos{0}), us(4.001));
    const row rows[] = {
        {4.001, 50.776684, 100, 0.984466},    {304.001, 75.388342, 100, 0.304274},
        {604.001, 87.694171, 100, 0.094044},  {904.001, 93.847086, 100, 0.029067},
        {1204.001, 96.923543, 100, 0.008984},
    };
    // Alpha ticks at 1, 2, ... us, all decays after the first CNP.
    const int ticks[] = {4, 304, 604, 904, 1204};
    for (int i = 0; i < 5; ++i) {
        // Just before the event nothing has changed yet.
        const double before = rp.rate_bps();
        rp.advance(us(rows[i].t_us) - nanos{1});
        EXPECT_EQ(rp.rate_bps(), before);
        const nanos next = rp.advance(us(rows[i].t_us));
        expect_rate(rp.rate_bps(), rows[i].rc, "rate");
        expect_rate(rp.target_bps(), rows[i].rt, "target");
        expect_alpha6(rp.alpha(), rows[i].alpha, "alpha");
        EXPECT_NEAR(rp.alpha(), std::pow(255.0 / 256.0, ticks[i]), 1e-12);
        EXPECT_EQ(next, us(rows[i].t_us) + 300_us);
    }
    EXPECT_EQ(rp.counters().fast_recovery, 1u);
    EXPECT_EQ(rp.counters().additive_increase, 1u);
    EXPECT_EQ(rp.counters().hyper_increase, 2u);
}

TEST(dcqcn_rp, hpcc_single_cnp_oracle) { run_hpcc_single(hpcc_oracle_cfg(false)); }
TEST(dcqcn_rp, hpcc_profile_reproduces_single_cnp_oracle) {
    run_hpcc_single(dcqcn_defaults(dcqcn_profile::hpcc_ns3, 100_Gbps));
}

void run_hpcc_three(const dcqcn_cfg& c, bool clamp) {
    dcqcn_rp rp{c};
    rp.on_cnp(us(0.5));
    EXPECT_EQ(rp.advance(us(0.5)), us(4.501));
    rp.advance(us(4.501));
    expect_rate(rp.rate_bps(), 50.776684, "cut 4.501");
    expect_alpha6(rp.alpha(), 0.984466, "alpha 4.501");
    expect_rate(rp.target_bps(), 100, "target 4.501");
    rp.on_cnp(us(10.7));
    EXPECT_EQ(rp.advance(us(10.7)), us(12.501));
    rp.advance(us(12.501));
    expect_rate(rp.rate_bps(), 26.454397, "cut 12.501");
    expect_alpha6(rp.alpha(), 0.958010, "alpha 12.501");
    expect_rate(rp.target_bps(), clamp ? 50.776684 : 100, "target 12.501");
    rp.on_cnp(us(20.7));
    EXPECT_EQ(rp.advance(us(20.7)), us(24.501));
    rp.advance(us(24.501));
    expect_rate(rp.rate_bps(), 14.312935, "cut 24.501");
    expect_alpha6(rp.alpha(), 0.917916, "alpha 24.501");
    expect_rate(rp.target_bps(), clamp ? 26.454397 : 100, "target 24.501");
    EXPECT_EQ(rp.advance(us(24.501)), us(324.501));
    rp.advance(us(324.501));
    expect_rate(rp.rate_bps(), clamp ? 20.383666 : 57.156468, "first FR 324.501");
    EXPECT_EQ(rp.counters().cuts, 3u);
    EXPECT_EQ(rp.counters().fast_recovery, 1u);
}

TEST(dcqcn_rp, hpcc_three_cnp_flags_oracle_clamp_off) { run_hpcc_three(hpcc_oracle_cfg(false), false); }
TEST(dcqcn_rp, hpcc_three_cnp_flags_oracle_clamp_on) { run_hpcc_three(hpcc_oracle_cfg(true), true); }
TEST(dcqcn_rp, hpcc_profile_reproduces_three_cnp_flags_oracle) {
    run_hpcc_three(dcqcn_defaults(dcqcn_profile::hpcc_ns3, 100_Gbps), false);
}

// HPCC restarts RPTimer at a decrease check, so later increase events fall on
// the 4us check grid; ns-3 runs the increase first (scheduled earlier): the
// cut then sees an increase since the last cut and sets target = rate.
TEST(dcqcn_rp, hpcc_increase_runs_before_a_tied_decrease) {
    dcqcn_rp rp{hpcc_oracle_cfg(false)};
    rp.on_cnp(nanos{0});
    rp.advance(us(4.001));
    rp.on_cnp(us(303));
    EXPECT_EQ(rp.advance(us(303)), us(304.001));  // both timers
    rp.advance(us(304.001));
    const double fr = (50.776684 + 100) / 2;  // 75.388342
    const double a = std::pow(255.0 / 256.0, 304) + 1.0 / 256.0;  // EWMA at the 304us tick
    expect_rate(rp.target_bps(), fr, "target = rate after the FR");
    expect_rate(rp.rate_bps(), fr * (1 - a / 2), "cut after the FR");
    EXPECT_EQ(rp.counters().fast_recovery, 1u);
    EXPECT_EQ(rp.advance(us(304.001)), us(604.001));
}

TEST(dcqcn_rp, hpcc_profile_scales_with_line_rate) {
    const auto c = dcqcn_defaults(dcqcn_profile::hpcc_ns3, 25_Gbps);
    EXPECT_EQ(c.rpg_ai_rate, 5_Mbps);
    EXPECT_EQ(c.rpg_hai_rate, 50_Mbps);
    const auto d = dcqcn_defaults(dcqcn_profile::hpcc_ns3, 100_Gbps);
    EXPECT_EQ(d.rpg_ai_rate, 20_Mbps);
    EXPECT_EQ(d.rpg_hai_rate, 200_Mbps);
    EXPECT_EQ(d.rpg_min_rate, 1000_Mbps);
    EXPECT_EQ(d.rpg_time_reset, 300_us);
    EXPECT_EQ(d.rpg_threshold, 1u);
}

// Periodic alpha: decays (1-g) per period without CNPs; with a CNP in the
// period it becomes (1-g) a + g at the period's end.
TEST(dcqcn_rp, periodic_alpha_decay_and_ewma) {
    dcqcn_cfg c = hpcc_oracle_cfg(false);
    c.rate_reduce_monitor_period = 1_s;  // keep cuts out of the way
    const double g = 1.0 / 256.0;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    rp.advance(us(0.999));
    EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);
    rp.advance(us(10.5));  // ticks 1..10
    double a = std::pow(1 - g, 10);
    EXPECT_NEAR(rp.alpha(), a, 1e-12);
    rp.on_cnp(us(10.5));
    rp.on_cnp(us(10.6));  // two CNPs in one period count once
    EXPECT_NEAR(rp.alpha(), a, 1e-12);
    rp.advance(us(11));
    a = (1 - g) * a + g;
    EXPECT_NEAR(rp.alpha(), a, 1e-12);
    rp.advance(us(1011));  // 1000 decays, applied lazily
    a *= std::pow(1 - g, 1000);
    EXPECT_NEAR(rp.alpha(), a, 1e-12 * 1);
    EXPECT_NEAR(rp.alpha() / a, 1.0, 1e-12);
    // A CNP at exactly a tick counts in the next period.
    rp.on_cnp(us(1012));
    EXPECT_NEAR(rp.alpha() / (a * (1 - g)), 1.0, 1e-12);
    rp.advance(us(1013));
    EXPECT_NEAR(rp.alpha() / ((1 - g) * (1 - g) * a + g), 1.0, 1e-12);
}

// Paper alpha: EWMA at each CNP (after the cut), decay only after K with no
// CNP; the K timer restarts at every CNP.
TEST(dcqcn_rp, paper_alpha_timer_restarts_at_cnp) {
    dcqcn_cfg c = paper_oracle_cfg();
    c.initial_alpha_value = 0.5;
    const double g = 1.0 / 256.0;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    expect_rate(rp.rate_bps(), 75, "cut with the old alpha 0.5");
    double a = (1 - g) * 0.5 + g;
    EXPECT_DOUBLE_EQ(rp.alpha(), a);
    rp.advance(us(54));
    EXPECT_DOUBLE_EQ(rp.alpha(), a);
    rp.on_cnp(us(54));  // restarts K: no decay at 55
    const double rc = 75e9 * (1 - a / 2);
    EXPECT_NEAR(rp.rate_bps() / rc, 1.0, 1e-12);
    a = (1 - g) * a + g;
    rp.advance(us(108.999));
    EXPECT_DOUBLE_EQ(rp.alpha(), a);
    rp.advance(us(109));
    EXPECT_DOUBLE_EQ(rp.alpha(), a * (1 - g));
    rp.advance(us(54 + 55 * 5));
    EXPECT_NEAR(rp.alpha() / (a * std::pow(1 - g, 5)), 1.0, 1e-12);
}

TEST(dcqcn_rp, update_then_cut_uses_new_alpha) {
    dcqcn_cfg c = paper_oracle_cfg();
    c.alpha_mode = dcqcn_alpha_mode::update_then_cut;
    c.initial_alpha_value = 0.5;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    const double a = (255.0 / 256.0) * 0.5 + 1.0 / 256.0;
    EXPECT_DOUBLE_EQ(rp.alpha(), a);
    EXPECT_NEAR(rp.rate_bps() / (100e9 * (1 - a / 2)), 1.0, 1e-12);
}

TEST(dcqcn_rp, min_rate_floor) {
    dcqcn_cfg c = paper_oracle_cfg();
    c.rpg_min_rate = 1000_Mbps;
    dcqcn_rp rp{c};
    // alpha stays 1: every CNP halves: 50, 25, ..., 100/2^6 = 1.5625, then 1.
    for (int i = 0; i < 10; ++i) {
        rp.on_cnp(us(i));
    }
    EXPECT_EQ(rp.rate(), 1000_Mbps);
    EXPECT_EQ(rp.counters().cuts, 10u);
    EXPECT_EQ(rp.counters().cuts_at_min_rate, 4u);  // 0.78 -> 1, then 0.5 -> 1 three times
    EXPECT_DOUBLE_EQ(rp.counters().min_rate_seen_bps, 1e9);
}

TEST(dcqcn_rp, min_dec_fac_limits_a_single_cut) {
    dcqcn_cfg c = paper_oracle_cfg();
    c.rpg_gd = 10;  // cut by alpha (= 1): to zero without the limit
    c.rpg_min_dec_fac = 30;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    expect_rate(rp.rate_bps(), 30, "30 % of 100");
    rp.on_cnp(nanos{1});
    expect_rate(rp.rate_bps(), 9, "30 % of 30");

    c.rpg_min_dec_fac = 100;  // disables cuts
    dcqcn_rp none{c};
    none.on_cnp(nanos{0});
    EXPECT_EQ(none.rate(), 100_Gbps);
    EXPECT_FALSE(none.take_rate_changed());
    EXPECT_EQ(none.advance(nanos{0}), nanos::max());  // nothing to recover
}

TEST(dcqcn_rp, rpg_gd_scales_the_cut) {
    dcqcn_cfg c = paper_oracle_cfg();
    c.rpg_gd = 12;  // alpha / 4
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    expect_rate(rp.rate_bps(), 75, "gd 12");
}

TEST(dcqcn_rp, rate_to_set_on_first_cnp) {
    dcqcn_cfg c = hpcc_oracle_cfg(false);
    c.rate_to_set_on_first_cnp = 10_Gbps;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    EXPECT_EQ(rp.rate(), 10_Gbps);
    EXPECT_EQ(rp.target(), 10_Gbps);
    EXPECT_TRUE(rp.take_rate_changed());
    EXPECT_EQ(rp.advance(nanos{0}), 300_us);  // no decrease pending: the forced rate was the reaction
    rp.on_cnp(10_us);  // a later CNP cuts normally, at the next 4us check (12us + 1ns)
    EXPECT_EQ(rp.advance(10_us), 12_us + 1_ns);
    rp.advance(12_us + 1_ns);
    // Ticks 1..10 decay, 11 is the EWMA for the CNP in (10, 11], 12 decays.
    const double a = std::pow(255.0 / 256.0, 11) + 1.0 / 256.0;
    const double a12 = a * (255.0 / 256.0);
    EXPECT_NEAR(rp.rate_bps() / (10e9 * (1 - a12 / 2)), 1.0, 1e-12);
    EXPECT_EQ(rp.target(), 10_Gbps);
}

TEST(dcqcn_rp, clamp_target_after_increase_only) {
    // Periodic cuts on every CNP (monitor period 0) keep the test short.
    dcqcn_cfg c = hpcc_oracle_cfg(false);
    c.rate_reduce_monitor_period = nanos{0};
    c.initial_alpha_value = 1.0;
    c.dce_tcp_g = 0.0;  // alpha stays 1
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    expect_rate(rp.rate_bps(), 50, "first cut");
    rp.on_cnp(1_us);
    expect_rate(rp.rate_bps(), 25, "second cut");
    expect_rate(rp.target_bps(), 100, "no increase since the cut: target kept");
    rp.advance(301_us);  // FR: (100 + 25)/2
    expect_rate(rp.rate_bps(), 62.5, "FR");
    rp.on_cnp(302_us);
    expect_rate(rp.target_bps(), 62.5, "an increase happened: target = rate");
    expect_rate(rp.rate_bps(), 31.25, "cut");

    c.clamp_tgt_rate_after_time_inc = false;  // neither flag: target never follows
    dcqcn_rp keep{c};
    keep.on_cnp(nanos{0});
    keep.advance(300_us);
    keep.on_cnp(301_us);
    expect_rate(keep.target_bps(), 100, "no clamp");
    c.clamp_tgt_rate = true;
    dcqcn_rp always{c};
    always.on_cnp(nanos{0});
    expect_rate(always.target_bps(), 100, "clamp: R_T = R_C before the cut");
    always.on_cnp(1_us);
    expect_rate(always.target_bps(), 50, "clamp: every cut");
}

// QCN stage rule with the byte counter on (F = 1): byte and timer events mix;
// HAI needs both counters above F and steps i x R_HAI, i = min(T, BC) - F.
TEST(dcqcn_rp, byte_counter_increase_and_qcn_stages) {
    dcqcn_cfg c = paper_oracle_cfg();
    c.rpg_threshold = 1;
    c.rpg_byte_reset = bytes{1000};
    c.rpg_time_reset = 1_ms;
    c.dce_tcp_g = 0.0;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    rp.on_cnp(nanos{100});  // R_T 50, R_C 25
    double rt = 50e9, rc = 25e9;
    rp.on_sent(1_us, bytes{999});
    EXPECT_EQ(rp.counters().byte_events, 0u);
    rp.on_sent(1_us, bytes{1});  // BC 1, T 0: FR
    rc = (rt + rc) / 2;
    EXPECT_NEAR(rp.rate_bps() / rc, 1.0, 1e-12);
    rp.on_sent(2_us, bytes{1500});  // BC 2: AI (500 B carried over)
    rt += 40e6;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(rp.rate_bps() / rc, 1.0, 1e-12);
    EXPECT_NEAR(rp.target_bps() / rt, 1.0, 1e-12);
    rp.advance(nanos{100} + 1_ms);  // T 1, BC 2: AI
    rt += 40e6;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(rp.rate_bps() / rc, 1.0, 1e-12);
    rp.advance(nanos{100} + 2_ms);  // T 2, BC 2: HAI i = 1
    rt += 200e6;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(rp.target_bps() / rt, 1.0, 1e-12);
    rp.on_sent(nanos{100} + 2_ms + 1_us, bytes{500});  // BC 3 (500 + 500): HAI i = min(2, 3) - 1 = 1
    rt += 200e6;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(rp.target_bps() / rt, 1.0, 1e-12);
    rp.advance(nanos{100} + 3_ms);  // T 3, BC 3: HAI i = 2
    rt += 400e6;
    rc = (rt + rc) / 2;
    EXPECT_NEAR(rp.target_bps() / rt, 1.0, 1e-12);
    EXPECT_NEAR(rp.rate_bps() / rc, 1.0, 1e-12);
    EXPECT_EQ(rp.counters().byte_events, 3u);
    EXPECT_EQ(rp.counters().timer_events, 3u);
    EXPECT_EQ(rp.counters().fast_recovery, 1u);
    EXPECT_EQ(rp.counters().additive_increase, 2u);
    EXPECT_EQ(rp.counters().hyper_increase, 3u);
    // A cut resets the byte counter.
    rp.on_cnp(nanos{100} + 3_ms + 1_us);
    rp.on_sent(nanos{100} + 3_ms + 2_us, bytes{999});
    EXPECT_EQ(rp.counters().byte_events, 3u);
}

TEST(dcqcn_rp, increases_cap_at_max_rate_and_stop) {
    dcqcn_cfg c = hpcc_oracle_cfg(false);
    c.rpg_max_rate = 80_Gbps;
    c.rpg_hai_rate = 10_Gbps;
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    rp.advance(4_us + 1_ns);
    EXPECT_LT(rp.rate_bps(), 80e9 / 2 + 1e9);  // cut from the 80Gbps cap
    nanos t = rp.advance(4_us + 1_ns);
    int n = 0;
    while (t != nanos::max() && n < 200) {
        t = rp.advance(t);
        EXPECT_LE(rp.rate_bps(), 80e9);
        EXPECT_LE(rp.target_bps(), 80e9);
        ++n;
    }
    EXPECT_LT(n, 200);
    EXPECT_EQ(rp.rate(), 80_Gbps);
    EXPECT_EQ(rp.target(), 80_Gbps);
}

TEST(dcqcn_rp, nvidia_cx_defaults) {
    const auto c = dcqcn_defaults(dcqcn_profile::nvidia_cx, 100_Gbps);
    EXPECT_TRUE(c.enabled);
    EXPECT_EQ(c.rpg_time_reset, 300_us);
    EXPECT_EQ(c.rpg_byte_reset, bytes{32767});
    EXPECT_EQ(c.rpg_threshold, 1u);
    EXPECT_EQ(c.rpg_ai_rate, 5_Mbps);
    EXPECT_EQ(c.rpg_hai_rate, 50_Mbps);
    EXPECT_EQ(c.rpg_min_rate, 1_Mbps);
    EXPECT_EQ(c.rpg_max_rate, bits_per_sec{0});
    EXPECT_EQ(c.rpg_gd, 11u);
    EXPECT_EQ(c.rpg_min_dec_fac, 50u);
    EXPECT_DOUBLE_EQ(c.dce_tcp_g, 5.0 / 1024.0);
    EXPECT_EQ(c.dce_tcp_rtt, 1_us);
    EXPECT_DOUBLE_EQ(c.initial_alpha_value, 1023.0 / 1024.0);
    EXPECT_EQ(c.rate_reduce_monitor_period, 4_us);
    EXPECT_EQ(c.rate_to_set_on_first_cnp, bits_per_sec{0});
    EXPECT_FALSE(c.clamp_tgt_rate);
    EXPECT_TRUE(c.clamp_tgt_rate_after_time_inc);
    EXPECT_EQ(c.alpha_mode, dcqcn_alpha_mode::periodic);

    // Behaviour: the first cut comes at the first 4us check, with alpha
    // 1023/1024 decayed by (1019/1024)^4; recovery then climbs back.
    dcqcn_rp rp{c};
    rp.on_cnp(nanos{0});
    EXPECT_EQ(rp.rate(), 100_Gbps);
    EXPECT_EQ(rp.advance(nanos{0}), 4_us);
    rp.advance(4_us);
    const double a = 1023.0 / 1024.0 * std::pow(1019.0 / 1024.0, 4);
    EXPECT_NEAR(rp.rate_bps() / (100e9 * (1 - a / 2)), 1.0, 1e-12);
    const double cut = rp.rate_bps();
    // 1MB sent at the cut rate: ~32 byte events, rate climbs.
    for (int i = 1; i <= 1000; ++i) {
        rp.on_sent(4_us + nanos{i * 80}, bytes{1000});
    }
    EXPECT_EQ(rp.counters().byte_events, 1000u * 1000u / 32767u);
    EXPECT_GT(rp.rate_bps(), cut);
    EXPECT_LE(rp.rate_bps(), 100e9);
}

TEST(dcqcn_rp, profile_names_round_trip) {
    for (auto p : {dcqcn_profile::off, dcqcn_profile::dcqcn_paper, dcqcn_profile::nvidia_cx,
                   dcqcn_profile::hpcc_ns3}) {
        dcqcn_profile q = dcqcn_profile::off;
        ASSERT_TRUE(dcqcn_profile_parse(dcqcn_profile_name(p), q));
        EXPECT_EQ(q, p);
    }
    dcqcn_profile q{};
    EXPECT_TRUE(dcqcn_profile_parse("nvidia-cx", q));
    EXPECT_EQ(q, dcqcn_profile::nvidia_cx);
    EXPECT_FALSE(dcqcn_profile_parse("nvidia", q));
    EXPECT_FALSE(dcqcn_profile_parse("", q));
}

TEST(dcqcn_rp, off_profile_is_inert) {
    dcqcn_rp rp{dcqcn_defaults(dcqcn_profile::off, 100_Gbps)};
    for (int i = 0; i < 100; ++i) {
        rp.on_cnp(nanos{i * 1000});
        rp.on_sent(nanos{i * 1000}, bytes{1'000'000});
        EXPECT_EQ(rp.advance(nanos{i * 1000}), nanos::max());
    }
    EXPECT_EQ(rp.rate(), 100_Gbps);
    EXPECT_EQ(rp.target(), 100_Gbps);
    EXPECT_FALSE(rp.take_rate_changed());
    EXPECT_EQ(rp.counters().cnps_rx, 100u);
    EXPECT_EQ(rp.counters().cuts, 0u);
    EXPECT_EQ(rp.counters().byte_events, 0u);
}

TEST(dcqcn_rp, idle_before_first_cnp_and_deadlines) {
    dcqcn_rp rp{paper_oracle_cfg()};
    EXPECT_EQ(rp.advance(nanos{0}), nanos::max());
    rp.on_sent(1_us, bytes{1 << 30});
    EXPECT_EQ(rp.advance(1_ms), nanos::max());
    EXPECT_EQ(rp.rate(), 100_Gbps);
    rp.on_cnp(2_ms);
    EXPECT_EQ(rp.advance(2_ms), 2_ms + 55_us);
    EXPECT_EQ(rp.advance(2_ms + 54_us), 2_ms + 55_us);
    // Late polling runs every due timer, in order.
    EXPECT_EQ(rp.advance(2_ms + 200_us), 2_ms + 220_us);
    EXPECT_EQ(rp.counters().timer_events, 3u);
    expect_rate(rp.rate_bps(), 93.75, "3 FR");
}

TEST(dcqcn_rp, rate_change_notification) {
    dcqcn_rp rp{hpcc_oracle_cfg(false)};
    EXPECT_FALSE(rp.take_rate_changed());
    rp.on_cnp(nanos{0});
    EXPECT_FALSE(rp.take_rate_changed());  // HPCC: the cut waits for the check
    rp.advance(4_us);
    EXPECT_FALSE(rp.take_rate_changed());
    rp.advance(4_us + 1_ns);
    EXPECT_TRUE(rp.take_rate_changed());
    EXPECT_FALSE(rp.take_rate_changed());
    EXPECT_EQ(rp.rate_generation(), 1u);
    rp.advance(305_us);
    EXPECT_TRUE(rp.take_rate_changed());
    EXPECT_EQ(rp.rate_generation(), 2u);
}

TEST(dcqcn_rp, trace_records_in_time_order) {
    std::vector<dcqcn_trace_rec> store(64);
    dcqcn_trace_buf tb{store};
    dcqcn_rp rp{hpcc_oracle_cfg(false)};
    rp.set_trace(&tb);
    rp.on_cnp(us(0.5));
    rp.on_cnp(us(10.7));
    rp.advance(us(324.501));
    const auto r = tb.records();
    ASSERT_EQ(r.size(), 6u);
    const dcqcn_event want[] = {dcqcn_event::cnp, dcqcn_event::cut,   dcqcn_event::cnp,
                                dcqcn_event::alpha, dcqcn_event::cut, dcqcn_event::fast_recovery};
    for (std::size_t i = 0; i < r.size(); ++i) {
        EXPECT_EQ(r[i].ev, want[i]) << i << " " << dcqcn_event_name(r[i].ev);
        if (i > 0) {
            EXPECT_LE(r[i - 1].t, r[i].t);
        }
    }
    EXPECT_EQ(r[1].t, us(4.501));
    EXPECT_NEAR(r[1].rc_bps / 50.776684e9, 1.0, 1e-6);
    EXPECT_EQ(r[3].t, us(11.5));  // the EWMA tick after the CNP at 10.7
    EXPECT_EQ(r[5].t, us(312.501));  // RPTimer restarted at the 12.501 cut
    EXPECT_EQ(tb.dropped(), 0u);
    std::vector<dcqcn_trace_rec> tiny(2);
    dcqcn_trace_buf small{tiny};
    dcqcn_rp rp2{paper_oracle_cfg()};
    rp2.set_trace(&small);
    rp2.on_cnp(nanos{0});
    rp2.advance(us(110));
    EXPECT_EQ(small.records().size(), 2u);
    EXPECT_GT(small.dropped(), 0u);
}

// ---------------------------------------------------------------------------
// Notification point.

TEST(dcqcn_np, per_qp_window_basic) {
    dcqcn_np np{dcqcn_np_cfg{}};
    EXPECT_TRUE(np.on_ce(nanos{0}));
    EXPECT_EQ(np.next_due(), nanos::max());
    EXPECT_FALSE(np.on_ce(10_us));
    EXPECT_FALSE(np.on_ce(20_us));
    EXPECT_EQ(np.next_due(), 50_us);
    EXPECT_FALSE(np.poll(50_us - 1_ns));
    EXPECT_TRUE(np.poll(50_us));
    EXPECT_FALSE(np.poll(50_us));
    EXPECT_FALSE(np.on_ce(60_us));  // window [50, 100): deferred to 100
    EXPECT_EQ(np.next_due(), 100_us);
    EXPECT_TRUE(np.poll(100_us));
    EXPECT_EQ(np.next_due(), nanos::max());  // no CE in [100, 150): nothing due
    EXPECT_TRUE(np.on_ce(170_us));           // immediate again
    EXPECT_TRUE(np.on_ce(220_us));           // exactly N later: immediate
    const auto& k = np.counters();
    EXPECT_EQ(k.ce_rx, 6u);
    EXPECT_EQ(k.cnp_tx, 5u);
    EXPECT_EQ(k.cnp_deferred, 2u);
    EXPECT_EQ(k.cnp_suppressed, 1u);
}

TEST(dcqcn_np, per_qp_overdue_deferred_cnp_goes_with_the_next_ce) {
    dcqcn_np np{dcqcn_np_cfg{}};
    EXPECT_TRUE(np.on_ce(nanos{0}));
    EXPECT_FALSE(np.on_ce(1_us));
    EXPECT_TRUE(np.on_ce(70_us));  // the poll at 50us was missed
    EXPECT_EQ(np.next_due(), nanos::max());
    EXPECT_FALSE(np.on_ce(100_us));  // 30us after the last CNP
    EXPECT_EQ(np.next_due(), 120_us);
    const auto& k = np.counters();
    EXPECT_EQ(k.ce_rx, k.cnp_tx + k.cnp_suppressed + (np.pending() ? 1u : 0u));
}

// A long seeded CE stream, polled at every due time: CNPs are never closer
// than N; after each CNP at s, the next one is at exactly s + N if a CE
// arrived in (s, s + N), else at the first CE at or after s + N.
TEST(dcqcn_np, per_qp_interval_over_seeded_stream) {
    for (std::int64_t n_us : {50, 7}) {
        dcqcn_np_cfg cfg{};
        cfg.cnp_interval = nanos{n_us * 1000};
        const nanos n = cfg.cnp_interval;
        dcqcn_np np{cfg};
        rng r{0xdc9c11 + static_cast<std::uint64_t>(n_us)};
        std::vector<nanos> ce;
        nanos t{0};
        for (int i = 0; i < 200'000; ++i) {
            // Bursts of close marks, with idle gaps now and then.
            const std::uint64_t x = r.next();
            t += (x & 7) == 0 ? nanos{static_cast<std::int64_t>(r.next() % 300'000)}
                              : nanos{static_cast<std::int64_t>(r.next() % 8000)};
            ce.push_back(t);
        }
        // Each CNP with the index of the first CE that arrives after it
        // (CEs with equal timestamps are ordered by index).
        std::vector<std::pair<nanos, std::size_t>> cnp;
        for (std::size_t i = 0; i < ce.size(); ++i) {
            while (np.next_due() <= ce[i]) {
                const nanos due = np.next_due();
                ASSERT_TRUE(np.poll(due));
                cnp.emplace_back(due, i);
            }
            if (np.on_ce(ce[i])) {
                cnp.emplace_back(ce[i], i + 1);
            }
        }
        ASSERT_GT(cnp.size(), 1000u);
        ASSERT_EQ(cnp[0].first, ce[0]);
        std::size_t deferred = 0;
        for (std::size_t i = 0; i + 1 < cnp.size(); ++i) {
            const nanos s = cnp[i].first;
            const std::size_t j = cnp[i].second;
            EXPECT_GE(cnp[i + 1].first - s, n);
            ASSERT_LT(j, ce.size());
            const nanos want = ce[j] < s + n ? s + n : ce[j];
            ASSERT_EQ(cnp[i + 1].first, want) << i;
            deferred += want == s + n && ce[j] != s + n ? 1 : 0;
        }
        const auto& k = np.counters();
        EXPECT_EQ(k.ce_rx, ce.size());
        EXPECT_EQ(k.cnp_tx, cnp.size());
        EXPECT_LE(deferred, k.cnp_deferred);  // a CE exactly at s + N is sent at once (counted as immediate here)
        EXPECT_EQ(k.ce_rx, k.cnp_tx + k.cnp_suppressed + (np.pending() ? 1u : 0u));
        EXPECT_GT(k.cnp_deferred, 0u);
        EXPECT_LT(k.cnp_deferred, k.cnp_tx);
    }
}

TEST(dcqcn_np, per_port_spacing_shared_by_qps) {
    dcqcn_np_cfg cfg{};
    cfg.mode = dcqcn_np_mode::per_port;
    cfg.min_time_between_cnps = 4_us;
    dcqcn_cnp_limiter port{cfg.min_time_between_cnps};
    dcqcn_np a{cfg, &port};
    dcqcn_np b{cfg, &port};
    EXPECT_TRUE(a.on_ce(nanos{0}));
    EXPECT_FALSE(b.on_ce(2_us));
    EXPECT_FALSE(a.on_ce(3_us));
    EXPECT_TRUE(b.on_ce(4_us));
    EXPECT_FALSE(a.on_ce(5_us));
    EXPECT_EQ(a.next_due(), nanos::max());  // no deferral in per_port mode
    EXPECT_FALSE(a.poll(100_us));
    EXPECT_TRUE(a.on_ce(8_us));
    EXPECT_EQ(a.counters().ce_rx, 4u);
    EXPECT_EQ(a.counters().cnp_tx, 2u);
    EXPECT_EQ(a.counters().cnp_suppressed, 2u);
    EXPECT_EQ(b.counters().cnp_tx, 1u);
    EXPECT_EQ(b.counters().cnp_suppressed, 1u);

    // 0 = a CNP for every CE packet.
    cfg.min_time_between_cnps = nanos{0};
    dcqcn_cnp_limiter every{nanos{0}};
    dcqcn_np c{cfg, &every};
    for (int i = 0; i < 10; ++i) {
        EXPECT_TRUE(c.on_ce(nanos{0}));
    }
    EXPECT_EQ(c.counters().cnp_tx, 10u);
}

TEST(dcqcn_np, disabled_sends_nothing) {
    dcqcn_np_cfg cfg{};
    cfg.enabled = false;
    dcqcn_np np{cfg};
    for (int i = 0; i < 5; ++i) {
        EXPECT_FALSE(np.on_ce(nanos{i * 100'000}));
    }
    EXPECT_EQ(np.next_due(), nanos::max());
    EXPECT_EQ(np.counters().cnp_tx, 0u);
    EXPECT_EQ(np.counters().cnp_suppressed, 5u);
    EXPECT_EQ(cfg.cnp_dscp, 48);
    EXPECT_EQ(cfg.cnp_802p_prio, 6);
}

// ---------------------------------------------------------------------------
// hpcc_ns3 against HPCC's ns-3.

TEST(dcqcn_np, profile_defaults) {
    for (auto p : {dcqcn_profile::off, dcqcn_profile::dcqcn_paper, dcqcn_profile::nvidia_cx}) {
        const dcqcn_np_cfg n = dcqcn_np_defaults(p);
        EXPECT_EQ(n.mode, dcqcn_np_mode::per_qp) << dcqcn_profile_name(p);
        EXPECT_EQ(n.cnp_interval, 50_us);
        EXPECT_EQ(n.enabled, p != dcqcn_profile::off);
    }
    // ns-3 flags the ACK of every CE-marked packet: a CNP per CE, no spacing.
    const dcqcn_np_cfg h = dcqcn_np_defaults(dcqcn_profile::hpcc_ns3);
    EXPECT_TRUE(h.enabled);
    EXPECT_EQ(h.mode, dcqcn_np_mode::per_port);
    EXPECT_EQ(h.min_time_between_cnps, nanos{0});
    EXPECT_EQ(h.cnp_dscp, 48);
    EXPECT_EQ(h.cnp_802p_prio, 6);
    dcqcn_cnp_limiter port{h.min_time_between_cnps};
    dcqcn_np a{h, &port};
    dcqcn_np b{h, &port};
    for (int i = 0; i < 100; ++i) {
        EXPECT_TRUE((i % 3 == 0 ? b : a).on_ce(nanos{i * 7}));  // two QPs, 7ns apart
    }
    EXPECT_EQ(a.counters().cnp_tx + b.counters().cnp_tx, 100u);
    EXPECT_EQ(a.counters().cnp_suppressed + b.counters().cnp_suppressed, 0u);
}

// An independent model of HPCC ns-3's DCQCN ("mlx", CC_MODE 1, rdma-hw.cc)
// with run.py's `dcqcn` values at 100Gbps, in double precision (ns-3 keeps
// rates as integer bit/s, within a few bit/s of this). Written as ns-3 runs
// it: an event queue ordered by (time, order of scheduling), the QP's three
// self-rescheduling events, and the feedback path: with L2_ACK_INTERVAL 1
// the receiver ACKs every packet, the ACK of a CE-marked packet carries the
// CNP flag, and the sender's RP takes every flagged ACK as a CNP.
//   CNP:       alpha flag and decrease flag set; on the first one alpha = 1,
//              its flag cleared, the alpha event at +ALPHA_RESUME_INTERVAL,
//              the decrease check at +RATE_DECREASE_INTERVAL + 1ns, the rate
//              times RateOnFirstCnp (1.0, third.cc leaves the default).
//   alpha:     alpha = (1-g) alpha (+ g if the flag is set), flag cleared,
//              again in ALPHA_RESUME_INTERVAL.
//   decrease:  again in RATE_DECREASE_INTERVAL; if the flag is set: target =
//              rate unless the timer stage is 0 (CLAMP_TARGET_RATE 0), rate =
//              max(MIN_RATE, rate (1 - alpha/2)), stage 0, flag cleared, the
//              RP timer cancelled and started again (RP_TIMER).
//   RP timer:  again in RP_TIMER; stage < FAST_RECOVERY_TIMES: rate = (rate +
//              target)/2; == : target += RATE_AI (capped at the line), rate =
//              (rate + target)/2; > : the same with RATE_HAI; then stage++.
class ns3_mlx_model {
public:
    double rate = 100e9, target = 100e9, alpha = 1.0;
    std::uint64_t cnps = 0, cuts = 0, fr = 0, ai = 0, hai = 0;

    void run_until(std::int64_t t) {
        while (!_q.empty() && _q.begin()->first.first <= t) {
            const auto it = _q.begin();
            const std::int64_t now = it->first.first;
            const ev e = it->second;
            _q.erase(it);
            if (e == ev::alpha) {
                alpha = (1 - g) * alpha + (_alpha_flag ? g : 0.0);
                _alpha_flag = false;
                at(now + alpha_resume_ns, ev::alpha);
            } else if (e == ev::decrease) {
                at(now + decrease_ns, ev::decrease);
                if (_dec_flag) {
                    if (_stage != 0) {
                        target = rate;
                    }
                    rate = std::max(min_rate, rate * (1 - alpha / 2));
                    _stage = 0;
                    _dec_flag = false;
                    ++cuts;
                    if (_timer_at >= 0) {
                        _q.erase({_timer_at, _timer_seq});
                    }
                    _timer_seq = at(now + rp_timer_ns, ev::timer);
                    _timer_at = now + rp_timer_ns;
                }
            } else {
                _timer_seq = at(now + rp_timer_ns, ev::timer);
                _timer_at = now + rp_timer_ns;
                // Counted only while it can change something (dcqcn_rp stops
                // its timer there; rate within 1 bit/s of the line is there).
                const bool counts = target < line || line - rate >= 1.0;
                if (_stage < fast_recovery_times) {
                    fr += counts ? 1 : 0;
                } else {
                    target = std::min(line, target + (_stage == fast_recovery_times ? rate_ai : rate_hai));
                    (_stage == fast_recovery_times ? ai : hai) += counts ? 1 : 0;
                }
                rate = rate / 2 + target / 2;
                ++_stage;
            }
        }
    }
    // An ACK with the CNP flag reaches the sender at t.
    void flagged_ack(std::int64_t t) {
        run_until(t);
        ++cnps;
        _alpha_flag = _dec_flag = true;
        if (_first) {
            _first = false;
            alpha = 1.0;
            _alpha_flag = false;
            at(t + alpha_resume_ns, ev::alpha);
            at(t + decrease_ns + 1, ev::decrease);
        }
    }

private:
    // run.py `dcqcn` at bw = 100: ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL
    // 4, RP_TIMER 300 (us), EWMA_GAIN 0.00390625, FAST_RECOVERY_TIMES 1,
    // RATE_AI 5 x 100/25 = 20Mb/s, RATE_HAI 50 x 100/25 = 200Mb/s, MIN_RATE 1000Mb/s.
    static constexpr double line = 100e9, g = 0.00390625, rate_ai = 20e6, rate_hai = 200e6, min_rate = 1000e6;
    static constexpr std::int64_t alpha_resume_ns = 1000, decrease_ns = 4000, rp_timer_ns = 300'000;
    static constexpr std::uint32_t fast_recovery_times = 1;
    enum class ev : std::uint8_t { alpha, decrease, timer };
    std::uint64_t at(std::int64_t t, ev e) {
        _q.emplace(std::pair{t, _seq}, e);
        return _seq++;
    }
    std::map<std::pair<std::int64_t, std::uint64_t>, ev> _q;
    std::uint64_t _seq = 0;
    std::int64_t _timer_at = -1;
    std::uint64_t _timer_seq = 0;
    bool _first = true, _alpha_flag = false, _dec_flag = false;
    std::uint32_t _stage = 0;
};

// A seeded, bursty CE stream over 60 ms as the bottleneck's marks reach the
// receiver: bursts of marks a few hundred ns apart (some long enough to cut
// to MIN_RATE), quiet gaps up to 2.5 ms (fast recovery, additive and hyper
// increase between bursts); the test adds 300 ms without marks after it
// (the return to line rate). No CE falls on
// or 1ns after a whole microsecond since the first one: ns-3 would order
// such a tie by when the ACK's arrival was scheduled, which this model does
// not know (the timer-against-timer tie is tested above).
std::vector<nanos> ce_stream(std::uint64_t seed) {
    rng r{seed};
    std::vector<nanos> ce;
    std::int64_t t = 10'000;
    while (t < 60'000'000) {
        const std::uint64_t kind = r.next() % 8;
        const std::int64_t burst_ns = kind == 0 ? 250'000 : static_cast<std::int64_t>(r.next() % 40'000);
        const std::int64_t end = t + burst_ns;
        while (t < end) {
            std::int64_t x = t;
            if (!ce.empty()) {
                const std::int64_t off = (x - ce.front().v) % 1000;
                x += off <= 1 ? 2 - off : 0;
            }
            ce.push_back(nanos{x});
            t = x + 50 + static_cast<std::int64_t>(r.next() % 2000);
        }
        t += kind == 1 ? 2'500'000 : static_cast<std::int64_t>(r.next() % 600'000);
    }
    return ce;
}

// The hpcc_ns3 profile's NP and RP, fed each CE, follow the ns-3 model event
// for event: after every CE, at 7 instants between two CEs and every 1 ms of
// a quiet tail, R_C, R_T and alpha agree to 1e-9 (relative), and the counts
// of CNPs, cuts and of each increase stage are equal.
TEST(dcqcn_hpcc_ns3, np_and_rp_follow_the_ns3_model) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        const std::vector<nanos> ce = ce_stream(0x4cc0 + seed);
        ASSERT_GT(ce.size(), 2000u);
        dcqcn_rp rp{dcqcn_defaults(dcqcn_profile::hpcc_ns3, 100_Gbps)};
        const dcqcn_np_cfg npc = dcqcn_np_defaults(dcqcn_profile::hpcc_ns3);
        dcqcn_cnp_limiter port{npc.min_time_between_cnps};
        dcqcn_np np{npc, &port};
        ns3_mlx_model ref;
        double worst = 0;
        bool saw_floor = false, saw_line_again = false;
        auto check = [&](nanos t, const char* where) {
            const double e = std::max({std::abs(rp.rate_bps() / ref.rate - 1), std::abs(rp.target_bps() / ref.target - 1),
                                       std::abs(rp.alpha() - ref.alpha)});
            worst = std::max(worst, e);
            ASSERT_LT(e, 1e-9) << where << " t=" << t.v << " rc " << rp.rate_bps() << " vs " << ref.rate << " rt "
                               << rp.target_bps() << " vs " << ref.target << " alpha " << rp.alpha() << " vs "
                               << ref.alpha;
            saw_floor = saw_floor || ref.rate == 1e9;
            saw_line_again = saw_line_again || (ref.cuts > 0 && ref.rate > 99e9);
        };
        for (std::size_t i = 0; i < ce.size(); ++i) {
            if (i > 0) {
                for (int k = 1; k <= 7; ++k) {
                    const nanos m{ce[i - 1].v + (ce[i] - ce[i - 1]).v * k / 8};
                    rp.advance(m);
                    ref.run_until(m.v);
                    ASSERT_NO_FATAL_FAILURE(check(m, "between"));
                }
            }
            ASSERT_TRUE(np.on_ce(ce[i]));
            rp.on_cnp(ce[i]);
            ref.flagged_ack(ce[i].v);
            ASSERT_NO_FATAL_FAILURE(check(ce[i], "CE"));
        }
        // A quiet 300 ms after the last mark: increase events only, back to line rate.
        for (std::int64_t m = ce.back().v + 1'000'000; m <= ce.back().v + 300'000'000; m += 1'000'000) {
            rp.advance(nanos{m});
            ref.run_until(m);
            ASSERT_NO_FATAL_FAILURE(check(nanos{m}, "tail"));
        }
        const auto& k = rp.counters();
        EXPECT_EQ(np.counters().cnp_tx, ce.size());
        EXPECT_EQ(k.cnps_rx, ref.cnps);
        EXPECT_EQ(k.cuts, ref.cuts);
        EXPECT_EQ(k.fast_recovery, ref.fr);
        EXPECT_EQ(k.additive_increase, ref.ai);
        EXPECT_EQ(k.hyper_increase, ref.hai);
        // The stream exercises every stage: many CNPs per cut (at most one
        // cut per 4us), the floor, and whole recoveries.
        EXPECT_GT(k.cuts, 500u);
        EXPECT_GT(k.cnps_merged, k.cuts);
        EXPECT_GT(k.hyper_increase, 100u);
        EXPECT_TRUE(saw_floor);
        EXPECT_TRUE(saw_line_again);
        std::printf("seed %llu: %zu CE, %llu cuts, %llu FR, %llu AI, %llu HAI, worst relative difference %.2e\n",
                    static_cast<unsigned long long>(seed), ce.size(), static_cast<unsigned long long>(k.cuts),
                    static_cast<unsigned long long>(k.fast_recovery), static_cast<unsigned long long>(k.additive_increase),
                    static_cast<unsigned long long>(k.hyper_increase), worst);
    }
}

// The same stream through the paper's per-QP NP (one CNP per 50us, the
// profile's NP before it followed ns-3) gives the RP far fewer CNPs and
// another rate: the comparison above would catch an NP that spaces CNPs.
TEST(dcqcn_hpcc_ns3, a_spaced_np_departs_from_the_ns3_model) {
    const std::vector<nanos> ce = ce_stream(0x4cc0 + 1);
    dcqcn_rp rp{dcqcn_defaults(dcqcn_profile::hpcc_ns3, 100_Gbps)};
    dcqcn_np np{dcqcn_np_defaults(dcqcn_profile::nvidia_cx)};
    ns3_mlx_model ref;
    double worst = 0;
    for (const nanos t : ce) {
        while (np.next_due() <= t) {
            const nanos due = np.next_due();
            ASSERT_TRUE(np.poll(due));
            rp.on_cnp(due);
        }
        if (np.on_ce(t)) {
            rp.on_cnp(t);
        }
        ref.flagged_ack(t.v);
        rp.advance(t);
        worst = std::max(worst, std::abs(rp.rate_bps() / ref.rate - 1));
    }
    EXPECT_LT(np.counters().cnp_tx * 4, ce.size());
    EXPECT_GT(worst, 0.5);
}

}  // namespace
}  // namespace rocelab
