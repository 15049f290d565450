// expect.hpp - a scenario's expectations: small comparisons checked at the
// end of a run (rocelab-fabric; docs/scenarios.md).
//
//   lossless_drops == 0
//   goodput(f1) / goodput(f2) within 15%        ratio within 15 % of 1
//   goodput(f1) within 5% of 50Gbps             |a - b| <= 5 % of |b|
//   pfc_rx(h3) > 0
//   fct_p99(f1) < 2ms
//   busy(leaf0:Ethernet8) >= 99%
//
// Grammar: EXPR OP EXPR | EXPR within PERCENT [of EXPR], OP one of
// < <= == != >= >; EXPR is + - * / over numbers, quantities with units
// (rates -> bit/s, times -> ns, sizes -> bytes, percent -> fraction) and
// metrics: NAME or NAME(ARG, ...), ARG a name such as f1, h3, leaf0:Ethernet8
// or leaf0:Ethernet8:3. Which metrics exist and what their arguments name is
// the caller's (a validator at load time, a resolver at the end); this file
// only parses and evaluates.
//
// Errors (parse, validation) are one line quoting the expectation and saying
// what is wrong and what is accepted.
//
// The result's detail writes both sides with a unit chosen by magnitude, as
// the expectation would write them: "34.61ms < 36.22ms: yes",
// "8.826Gbps < 20Gbps: yes", "99.41% >= 99%: yes", "0 == 0: yes". A side's
// unit is its quantity's (2ms is a time) or its metric's (the caller's
// unit_of), carried through + - and through * / by a plain number; a ratio
// of two quantities is a plain number.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/result.hpp"

namespace rocelab {

struct expect_node;  // the parsed expression (expect.cpp)

struct expectation {
    std::string text;
    std::shared_ptr<const expect_node> lhs, rhs;  // rhs: null for "within X%" without "of"
    enum class op_t : std::uint8_t { lt, le, eq, ne, ge, gt, within } op{};
    double tolerance = 0;  // within: fraction
};

struct expect_metric {
    std::string name;
    std::vector<std::string> args;
};

// Parses one expectation. Errors quote it.
result<expectation> parse_expectation(const std::string& text);

// Every metric the expectation uses (validation before a run).
std::vector<expect_metric> metrics_of(const expectation& e);

// What a value measures, for writing it (expect_result::detail).
enum class expect_unit : std::uint8_t { number, time_ns, rate_bps, bytes, fraction };

// The value written with a unit chosen by its magnitude, `digits` significant
// digits: 34.61ms, 950ns, 8.826Gbps, 1.5MiB, 99.41%; a whole plain number in
// full (229100), another one as %g.
std::string format_expect_value(double v, expect_unit u, int digits = 4);

struct expect_result {
    bool passed = false;
    double lhs = 0, rhs = 0;  // evaluated sides (rhs = 1 for "within" without "of")
    expect_unit unit = expect_unit::number;  // of both sides, as detail writes them
    std::string detail;       // e.g. "0.93 within 15% of 1: yes", "34.61ms < 36.22ms: yes";
                              // or what could not be evaluated
};

// resolver: the value of a metric, or nullopt with `err` set.
using expect_resolver = std::function<std::optional<double>(const expect_metric&, std::string& err)>;
// unit_of: what a metric measures (empty: every metric a plain number).
using expect_unit_of = std::function<expect_unit(const expect_metric&)>;
expect_result evaluate(const expectation& e, const expect_resolver& resolve,
                       const expect_unit_of& unit_of = {});

}  // namespace rocelab
