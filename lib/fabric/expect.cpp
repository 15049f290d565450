// expect.cpp - see expect.hpp.
#include "fabric/expect.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "config/units_parse.hpp"

namespace rocelab {

struct expect_node {
    enum class kind_t : std::uint8_t { number, metric, add, sub, mul, div } kind{};
    double value = 0;
    expect_unit unit = expect_unit::number;  // number: the quantity's unit
    expect_metric metric;
    std::shared_ptr<const expect_node> a, b;
};

namespace {

struct parse_error {
    std::string msg;
};

class parser {
public:
    explicit parser(const std::string& t) : _t(t) {}

    expectation parse() {
        expectation e;
        e.text = _t;
        e.lhs = expr();
        skip();
        if (word("within")) {
            e.op = expectation::op_t::within;
            skip();
            const std::size_t at = _i;
            while (_i < _t.size() && !std::isspace(static_cast<unsigned char>(_t[_i]))) { ++_i; }
            const std::string pct = _t.substr(at, _i - at);
            auto p = parse_percent(pct);
            if (!p || *p < 0) { fail(at, "'" + pct + "': a tolerance in percent, e.g. 15%"); }
            e.tolerance = *p / 100.0;
            skip();
            if (word("of")) {
                e.rhs = expr();
            }
        } else {
            static const std::pair<const char*, expectation::op_t> ops[] = {
                {"<=", expectation::op_t::le}, {">=", expectation::op_t::ge}, {"==", expectation::op_t::eq},
                {"!=", expectation::op_t::ne}, {"<", expectation::op_t::lt},  {">", expectation::op_t::gt}};
            bool found = false;
            for (const auto& [s, o] : ops) {
                const std::string op = s;
                if (_t.compare(_i, op.size(), op) == 0) {
                    e.op = o;
                    _i += op.size();
                    found = true;
                    break;
                }
            }
            if (!found) { fail(_i, "expected a comparison (< <= == != >= >) or 'within N%'"); }
            e.rhs = expr();
        }
        skip();
        if (_i != _t.size()) { fail(_i, "unexpected '" + _t.substr(_i) + "'"); }
        return e;
    }

private:
    using node_p = std::shared_ptr<const expect_node>;

    [[noreturn]] void fail(std::size_t at, const std::string& what) const {
        throw parse_error{"expectation '" + _t + "', at column " + std::to_string(at + 1) + ": " + what};
    }
    void skip() {
        while (_i < _t.size() && std::isspace(static_cast<unsigned char>(_t[_i]))) { ++_i; }
    }
    bool word(const char* w) {
        const std::string s = w;
        if (_t.compare(_i, s.size(), s) == 0 &&
            (_i + s.size() == _t.size() || std::isspace(static_cast<unsigned char>(_t[_i + s.size()])))) {
            _i += s.size();
            return true;
        }
        return false;
    }
    static node_p bin(expect_node::kind_t k, node_p a, node_p b) {
        auto n = std::make_shared<expect_node>();
        n->kind = k;
        n->a = std::move(a);
        n->b = std::move(b);
        return n;
    }
    // operand (op operand)*, left to right, where op is `op0` (kind k0) or
    // `op1` (kind k1): a sum of terms, a term of factors.
    node_p chain(node_p (parser::*operand)(), char op0, expect_node::kind_t k0, char op1,
                 expect_node::kind_t k1) {
        node_p n = (this->*operand)();
        for (;;) {
            skip();
            if (_i < _t.size() && (_t[_i] == op0 || _t[_i] == op1)) {
                const char c = _t[_i++];
                n = bin(c == op0 ? k0 : k1, n, (this->*operand)());
            } else {
                return n;
            }
        }
    }
    node_p expr() { return chain(&parser::term, '+', expect_node::kind_t::add, '-', expect_node::kind_t::sub); }
    node_p term() { return chain(&parser::factor, '*', expect_node::kind_t::mul, '/', expect_node::kind_t::div); }
    static bool name_char(char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.' || c == '-' ||
               c == '|' || c == '>' || c == '#';
    }
    node_p factor() {
        skip();
        if (_i >= _t.size()) { fail(_i, "expected a number, a quantity or a metric"); }
        if (_t[_i] == '(') {
            ++_i;
            node_p n = expr();
            skip();
            if (_i >= _t.size() || _t[_i] != ')') { fail(_i, "expected ')'"); }
            ++_i;
            return n;
        }
        auto n = std::make_shared<expect_node>();
        if (std::isdigit(static_cast<unsigned char>(_t[_i])) || _t[_i] == '.') {
            const std::size_t at = _i;
            while (_i < _t.size() && (std::isalnum(static_cast<unsigned char>(_t[_i])) || _t[_i] == '.' || _t[_i] == '%')) {
                ++_i;
            }
            const std::string q = _t.substr(at, _i - at);
            n->kind = expect_node::kind_t::number;
            n->value = quantity(q, at, n->unit);
            return n;
        }
        if (!std::isalpha(static_cast<unsigned char>(_t[_i])) && _t[_i] != '_') {
            fail(_i, "expected a number, a quantity or a metric");
        }
        const std::size_t at = _i;
        while (_i < _t.size() && (std::isalnum(static_cast<unsigned char>(_t[_i])) || _t[_i] == '_')) { ++_i; }
        n->kind = expect_node::kind_t::metric;
        n->metric.name = _t.substr(at, _i - at);
        skip();
        if (_i < _t.size() && _t[_i] == '(') {
            ++_i;
            for (;;) {
                skip();
                const std::size_t a0 = _i;
                while (_i < _t.size() && name_char(_t[_i])) { ++_i; }
                if (_i == a0) { fail(_i, "expected an argument (a flow, host, node or node:port name)"); }
                n->metric.args.push_back(_t.substr(a0, _i - a0));
                skip();
                if (_i < _t.size() && _t[_i] == ',') {
                    ++_i;
                    continue;
                }
                if (_i < _t.size() && _t[_i] == ')') {
                    ++_i;
                    break;
                }
                fail(_i, "expected ',' or ')'");
            }
        }
        return n;
    }
    double quantity(const std::string& q, std::size_t at, expect_unit& unit) const {
        std::size_t k = 0;
        while (k < q.size() && (std::isdigit(static_cast<unsigned char>(q[k])) || q[k] == '.')) { ++k; }
        if (k == q.size()) {
            char* end = nullptr;
            const double v = std::strtod(q.c_str(), &end);
            if (end == q.c_str() || *end != '\0') { fail(at, "'" + q + "': not a number"); }
            return v;
        }
        if (auto r = parse_rate(q)) {
            unit = expect_unit::rate_bps;
            return double(r->v);
        }
        if (auto t = parse_time(q)) {
            unit = expect_unit::time_ns;
            return double(t->v);
        }
        if (auto b = parse_bytes(q)) {
            unit = expect_unit::bytes;
            return double(b->v);
        }
        if (auto p = parse_percent(q)) {
            unit = expect_unit::fraction;
            return *p / 100.0;
        }
        fail(at, "'" + q + "': a number, or a quantity with a unit (10Gbps, 2ms, 96KiB, 15%)");
    }

    const std::string& _t;
    std::size_t _i = 0;
};

void collect(const expect_node* n, std::vector<expect_metric>& out) {
    if (n == nullptr) { return; }
    if (n->kind == expect_node::kind_t::metric) {
        out.push_back(n->metric);
        return;
    }
    collect(n->a.get(), out);
    collect(n->b.get(), out);
}

std::optional<double> eval(const expect_node* n, const expect_resolver& r, std::string& err) {
    switch (n->kind) {
        case expect_node::kind_t::number: return n->value;
        case expect_node::kind_t::metric: return r(n->metric, err);
        default: break;
    }
    const auto a = eval(n->a.get(), r, err);
    if (!a) { return std::nullopt; }
    const auto b = eval(n->b.get(), r, err);
    if (!b) { return std::nullopt; }
    switch (n->kind) {
        case expect_node::kind_t::add: return *a + *b;
        case expect_node::kind_t::sub: return *a - *b;
        case expect_node::kind_t::mul: return *a * *b;
        case expect_node::kind_t::div:
            if (*b == 0) {
                err = "division by zero";
                return std::nullopt;
            }
            return *a / *b;
        default: return std::nullopt;
    }
}

// The unit of a subexpression: a quantity's or a metric's, kept through + -
// and through * / by a plain number; a product or ratio of two quantities is
// written as a plain number.
expect_unit unit_of_node(const expect_node* n, const expect_unit_of& unit_of) {
    using k = expect_node::kind_t;
    switch (n->kind) {
        case k::number: return n->unit;
        case k::metric: return unit_of ? unit_of(n->metric) : expect_unit::number;
        default: break;
    }
    const expect_unit a = unit_of_node(n->a.get(), unit_of);
    const expect_unit b = unit_of_node(n->b.get(), unit_of);
    switch (n->kind) {
        case k::add:
        case k::sub: return a != expect_unit::number ? a : b;
        case k::mul: return a == expect_unit::number ? b : b == expect_unit::number ? a : expect_unit::number;
        case k::div: return b == expect_unit::number ? a : expect_unit::number;
        default: return expect_unit::number;
    }
}

std::string sig(double v, int digits) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    return b;
}

struct unit_step {
    double scale;
    const char* name;
};

// v in the largest unit of `steps` (largest first) it reaches once rounded to
// `digits`; past the largest, whole numbers rather than an exponent.
std::string scaled(double v, const unit_step* steps, std::size_t n, int digits) {
    const double mag = std::fabs(v);
    for (std::size_t i = 0; i < n; ++i) {
        const double x = mag / steps[i].scale;
        if (i + 1 == n || std::strtod(sig(x, digits).c_str(), nullptr) >= 1.0) {
            std::string s = (v < 0 ? "-" : "");
            s += (i == 0 && x >= std::pow(10.0, digits)) ? sig(std::round(x), 20) : sig(x, digits);
            return s + steps[i].name;
        }
    }
    return sig(v, digits);
}

// The two sides written alike, with more digits while they differ in value
// but not in writing (a failed "a < b" must not read "34.61ms < 34.61ms").
std::pair<std::string, std::string> both(double a, double b, expect_unit u) {
    int d = 4;
    std::string sa = format_expect_value(a, u, d), sb = format_expect_value(b, u, d);
    while (a != b && sa == sb && d < 17) {
        ++d;
        sa = format_expect_value(a, u, d);
        sb = format_expect_value(b, u, d);
    }
    return {sa, sb};
}

}  // namespace

std::string format_expect_value(double v, expect_unit u, int digits) {
    static constexpr unit_step times[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    static constexpr unit_step rates[] = {
        {1e12, "Tbps"}, {1e9, "Gbps"}, {1e6, "Mbps"}, {1e3, "Kbps"}, {1, "bps"}};
    static constexpr unit_step sizes[] = {{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1, "B"}};
    if (!std::isfinite(v)) { return sig(v, digits); }
    switch (u) {
        case expect_unit::time_ns: return v == 0 ? "0ns" : scaled(v, times, std::size(times), digits);
        case expect_unit::rate_bps: return v == 0 ? "0bps" : scaled(v, rates, std::size(rates), digits);
        case expect_unit::bytes: return v == 0 ? "0B" : scaled(v, sizes, std::size(sizes), digits);
        case expect_unit::fraction: return sig(v * 100, digits) + "%";
        case expect_unit::number: break;
    }
    if (v == std::floor(v) && std::fabs(v) < 1e15) { return sig(v, 20); }
    return sig(v, digits);
}

result<expectation> parse_expectation(const std::string& text) {
    try {
        return parser(text).parse();
    } catch (const parse_error& e) {
        return config_error{e.msg};
    }
}

std::vector<expect_metric> metrics_of(const expectation& e) {
    std::vector<expect_metric> out;
    collect(e.lhs.get(), out);
    collect(e.rhs.get(), out);
    return out;
}

expect_result evaluate(const expectation& e, const expect_resolver& resolve, const expect_unit_of& unit_of) {
    expect_result r;
    std::string err;
    const auto a = eval(e.lhs.get(), resolve, err);
    std::optional<double> b = 1.0;
    if (a && e.rhs) { b = eval(e.rhs.get(), resolve, err); }
    if (!a || !b) {
        r.detail = "cannot evaluate: " + err;
        return r;
    }
    r.lhs = *a;
    r.rhs = *b;
    const expect_unit ul = unit_of_node(e.lhs.get(), unit_of);
    r.unit = ul != expect_unit::number || !e.rhs ? ul : unit_of_node(e.rhs.get(), unit_of);
    const auto [sa, sb] = both(*a, *b, r.unit);
    using op = expectation::op_t;
    const char* sym = "";
    switch (e.op) {
        case op::lt: r.passed = *a < *b; sym = "<"; break;
        case op::le: r.passed = *a <= *b; sym = "<="; break;
        case op::eq: r.passed = *a == *b; sym = "=="; break;
        case op::ne: r.passed = *a != *b; sym = "!="; break;
        case op::ge: r.passed = *a >= *b; sym = ">="; break;
        case op::gt: r.passed = *a > *b; sym = ">"; break;
        case op::within:
            r.passed = std::fabs(*a - *b) <= e.tolerance * std::fabs(*b);
            r.detail =
                sa + " within " + sig(e.tolerance * 100, 6) + "% of " + sb + ": " + (r.passed ? "yes" : "no");
            return r;
    }
    r.detail = sa + " " + sym + " " + sb + ": " + (r.passed ? "yes" : "no");
    return r;
}

}  // namespace rocelab
