// expect_test.cpp - scenario expectations: parsing, units, evaluation, errors.
#include <gtest/gtest.h>

#include <map>

#include "fabric/expect.hpp"

using namespace rocelab;

namespace {

std::map<std::string, double> vals = {{"goodput(f1)", 45e9}, {"goodput(f2)", 50e9}, {"lossless_drops", 0},
                                      {"pfc_rx(h3)", 12},     {"fct_p99(f1)", 1.5e6}, {"busy(leaf0:Ethernet8)", 0.995}};

expect_result run(const std::string& t) {
    auto e = parse_expectation(t);
    EXPECT_TRUE(e) << (e ? "" : e.error().message);
    if (!e) { return {}; }
    return evaluate(*e, [](const expect_metric& m, std::string& err) -> std::optional<double> {
        std::string key = m.name;
        if (!m.args.empty()) {
            key += "(";
            for (std::size_t i = 0; i < m.args.size(); ++i) { key += (i ? "," : "") + m.args[i]; }
            key += ")";
        }
        auto it = vals.find(key);
        if (it == vals.end()) {
            err = "no value for " + key;
            return std::nullopt;
        }
        return it->second;
    });
}

TEST(expect, the_issue_examples) {
    EXPECT_TRUE(run("lossless_drops == 0").passed);
    EXPECT_TRUE(run("goodput(f1) / goodput(f2) within 15%").passed);  // 0.9
    EXPECT_FALSE(run("goodput(f1) / goodput(f2) within 5%").passed);
    EXPECT_TRUE(run("pfc_rx(h3) > 0").passed);
    EXPECT_TRUE(run("fct_p99(f1) < 2ms").passed);
    EXPECT_FALSE(run("fct_p99(f1) < 1ms").passed);
    EXPECT_TRUE(run("busy(leaf0:Ethernet8) >= 99%").passed);
}

TEST(expect, units_arithmetic_and_within_of) {
    EXPECT_TRUE(run("goodput(f1) within 10% of 50Gbps").passed);
    EXPECT_FALSE(run("goodput(f1) within 9% of 50Gbps").passed);
    EXPECT_TRUE(run("goodput(f1) + goodput(f2) >= 95Gbps").passed);
    EXPECT_TRUE(run("(goodput(f1) + goodput(f2)) / 2 == 47.5Gbps").passed);
    EXPECT_TRUE(run("fct_p99(f1) == 1500us").passed);
    EXPECT_TRUE(run("2 * 3 - 1 == 5").passed);
    const auto r = run("goodput(f1) / goodput(f2) within 15%");
    EXPECT_DOUBLE_EQ(r.lhs, 0.9);
    EXPECT_DOUBLE_EQ(r.rhs, 1.0);
    EXPECT_EQ(r.detail, "0.9 within 15% of 1: yes");
}

// The detail writes both sides with a unit by magnitude (issue 24 item 6:
// "3.46142e+07 < 3.63e+07" became "34.61ms < 36.22ms").
TEST(expect, detail_writes_units_by_magnitude) {
    auto unit_of = [](const expect_metric& m) {
        if (m.name == "fct_p99" || m.name == "fct_max") { return expect_unit::time_ns; }
        if (m.name == "goodput") { return expect_unit::rate_bps; }
        if (m.name == "busy") { return expect_unit::fraction; }
        if (m.name == "queue_peak") { return expect_unit::bytes; }
        return expect_unit::number;
    };
    std::map<std::string, double> v = {{"fct_max", 34'614'200}, {"fct_p99", 950}, {"goodput", 8.826e9},
                                       {"busy", 0.99412},       {"queue_peak", 833'100}, {"pfc_rx", 229'100}};
    auto eval = [&](const std::string& t) {
        auto e = parse_expectation(t);
        EXPECT_TRUE(e) << t;
        auto resolve = [&](const expect_metric& m, std::string&) -> std::optional<double> {
            return v.at(m.name);
        };
        return evaluate(*e, resolve, unit_of);
    };
    EXPECT_EQ(eval("fct_max(a) < 1.05 * 34.493ms").detail, "34.61ms < 36.22ms: yes");
    EXPECT_EQ(eval("fct_max(a) < 1.05 * 34.493ms").unit, expect_unit::time_ns);
    EXPECT_EQ(eval("fct_p99(a) < 2ms").detail, "950ns < 2ms: yes");
    EXPECT_EQ(eval("fct_p99(a) > 999us").detail, "950ns > 999us: no");
    EXPECT_EQ(eval("goodput(far) < 20Gbps").detail, "8.826Gbps < 20Gbps: yes");
    EXPECT_EQ(eval("goodput(far) within 5% of 10Gbps").detail, "8.826Gbps within 5% of 10Gbps: no");
    EXPECT_EQ(eval("busy(x:y) >= 99%").detail, "99.41% >= 99%: yes");
    EXPECT_EQ(eval("queue_peak(s:p:3) within 30% of 754KB").detail, "833.1KB within 30% of 754KB: yes");
    EXPECT_EQ(eval("pfc_rx(h3) > 1000").detail, "229100 > 1000: yes");
    // A ratio of two rates is a plain number; a percent on the other side makes it a share.
    EXPECT_EQ(eval("goodput(a) / goodput(b) within 15%").detail, "1 within 15% of 1: yes");
    EXPECT_EQ(eval("goodput(a) / 10Gbps >= 80%").detail, "88.26% >= 80%: yes");
    // Sides that differ are never written alike: more digits until they differ.
    v["fct_max"] = 2'000'001;
    EXPECT_EQ(eval("fct_max(a) <= 2ms").detail, "2.000001ms <= 2ms: no");
    // Without unit_of, a quantity still gives the unit to the other side.
    EXPECT_EQ(run("fct_p99(f1) < 2ms").detail, "1.5ms < 2ms: yes");
    EXPECT_EQ(run("lossless_drops == 0").detail, "0 == 0: yes");
}

TEST(expect, format_expect_value_picks_the_unit_and_rolls_over) {
    EXPECT_EQ(format_expect_value(999'960, expect_unit::time_ns), "1ms");
    EXPECT_EQ(format_expect_value(0, expect_unit::time_ns), "0ns");
    EXPECT_EQ(format_expect_value(12.5, expect_unit::time_ns), "12.5ns");
    EXPECT_EQ(format_expect_value(2.5e12, expect_unit::time_ns), "2500s");
    EXPECT_EQ(format_expect_value(-3'000, expect_unit::time_ns), "-3us");
    EXPECT_EQ(format_expect_value(224e6, expect_unit::rate_bps), "224Mbps");
    EXPECT_EQ(format_expect_value(1.5e6, expect_unit::bytes), "1.5MB");
    EXPECT_EQ(format_expect_value(0.5, expect_unit::fraction), "50%");
    EXPECT_EQ(format_expect_value(0.123456, expect_unit::number), "0.1235");
    EXPECT_EQ(format_expect_value(46220, expect_unit::number), "46220");
}

TEST(expect, metrics_are_listed_for_validation) {
    auto e = parse_expectation("goodput(f1) / goodput(f2) within 15% of busy(leaf0:Ethernet8)");
    ASSERT_TRUE(e);
    const auto m = metrics_of(*e);
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[0].name, "goodput");
    EXPECT_EQ(m[0].args, std::vector<std::string>{"f1"});
    EXPECT_EQ(m[2].args, std::vector<std::string>{"leaf0:Ethernet8"});
}

TEST(expect, unresolvable_metric_fails_with_the_reason) {
    const auto r = run("goodput(f9) > 0");
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.detail, "cannot evaluate: no value for goodput(f9)");
    EXPECT_FALSE(run("goodput(f1) / lossless_drops > 0").passed);  // division by zero
}

TEST(expect, parse_errors_quote_the_text_and_say_what_is_accepted) {
    auto bad = [](const std::string& t) {
        auto e = parse_expectation(t);
        EXPECT_FALSE(e) << t;
        return e ? std::string() : e.error().message;
    };
    EXPECT_EQ(bad("goodput(f1) ~ 3"),
              "expectation 'goodput(f1) ~ 3', at column 13: expected a comparison (< <= == != >= >) or 'within N%'");
    EXPECT_NE(bad("fct_p99(f1) < 2parsecs").find("'2parsecs': a number, or a quantity with a unit"), std::string::npos);
    EXPECT_NE(bad("goodput(f1 > 3").find("expected ',' or ')'"), std::string::npos);
    EXPECT_NE(bad("x within lots").find("'lots': a tolerance in percent"), std::string::npos);
    EXPECT_NE(bad("x > 3 junk").find("unexpected 'junk'"), std::string::npos);
    EXPECT_NE(bad("> 3").find("expected a number, a quantity or a metric"), std::string::npos);
}

}  // namespace
