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

struct expect_result {
    bool passed = false;
    double lhs = 0, rhs = 0;  // evaluated sides (rhs = 1 for "within" without "of")
    std::string detail;       // e.g. "0.93 within 15% of 1: yes"; or what could not be evaluated
};

// resolver: the value of a metric, or nullopt with `err` set.
using expect_resolver = std::function<std::optional<double>(const expect_metric&, std::string& err)>;
expect_result evaluate(const expectation& e, const expect_resolver& resolve);

}  // namespace rocelab
