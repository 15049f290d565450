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
