// arrivals.hpp - message arrival processes and message size distributions.
//
// What: the workload that feeds a requester's post_message().
//   Sizes (size_dist):
//     * fixed      every message is `fixed` bytes;
//     * uniform    integer uniform in [lo, hi];
//     * empirical  from a CDF file, as the HPCC / pFabric workloads
//                  (WebSearch, Hadoop/FB) are distributed: one "size
//                  cumulative_prob" pair per line, sizes and probabilities
//                  non-decreasing, the last probability 1 (or 100: when the
//                  largest probability is > 1 the column is read as percent).
//                  '#' starts a comment; blank lines are ignored. Sampling
//                  draws u in [0,1) and interpolates linearly between the two
//                  points around u (as HPCC's traffic generator does); u at
//                  or below the first probability gives the first size.
//                  Mean (exact for that interpolation):
//                    p0 s0 + sum_i (p_i - p_{i-1}) (s_i + s_{i-1}) / 2.
//   Arrivals (message_source):
//     * fixed_rate  one message every `interval`;
//     * poisson     exponential gaps with mean `interval`
//                   (gap = -interval x ln(1 - u)), kept in double ns so no
//                   rounding bias accumulates;
//     * closed_loop keep `outstanding` messages in flight: a new one is
//                   released whenever on_complete() frees a slot.
//   `count` (0 = unlimited) caps the number of messages released.
//   mean_interval_for_load() turns a load fraction of a link rate into an
//   interval: interval = mean_size x 8 / (load x rate).
//
// Parsing a CDF is control path (allocates, returns an error naming the line);
// sampling and poll() never allocate. Randomness comes from the caller's rng.
//
// Example:
//   std::string err;
//   auto cdf = empirical_cdf::load("conf/websearch.cdf", err);   // control path
//   message_source src{arrival_cfg{arrival_kind::poisson, 10_us}, size_dist::empirical(*cdf)};
//   arrival a;
//   while (src.poll(now, r, a)) { rq.post_message(a.at, a.size); }
//   deadline = src.next_deadline();
// Counters: released (message_source::released()).
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.hpp"
#include "core/units.hpp"

namespace rocelab {

class empirical_cdf {
public:
    struct point {
        double size = 0.0;
        double prob = 0.0;
    };

    empirical_cdf() = default;

    // Control path. On error returns nullopt and sets `error` to
    // "<name>:<line>: what is wrong".
    static std::optional<empirical_cdf> parse(std::string_view text, std::string& error,
                                              std::string_view name = "cdf") {
        empirical_cdf c;
        std::istringstream in{std::string(text)};
        std::string line;
        int lineno = 0;
        auto fail = [&](int ln, const std::string& what) {
            error = std::string(name) + ":" + std::to_string(ln) + ": " + what;
            return std::nullopt;
        };
        double maxp = 0.0;
        while (std::getline(in, line)) {
            ++lineno;
            const auto hash = line.find('#');
            if (hash != std::string::npos) {
                line.resize(hash);
            }
            if (line.find_first_not_of(" \t\r") == std::string::npos) {
                continue;  // blank or comment only
            }
            std::istringstream ls(line);
            point p;
            if (!(ls >> p.size)) {
                return fail(lineno, "expected \"size cumulative_prob\", got \"" + line + "\"");
            }
            if (!(ls >> p.prob)) {
                return fail(lineno, "missing cumulative probability after the size");
            }
            std::string extra;
            if (ls >> extra) {
                return fail(lineno, "unexpected text \"" + extra + "\" after size and probability");
            }
            if (!(p.size >= 0.0) || !std::isfinite(p.size)) {
                return fail(lineno, "size must be a finite number >= 0");
            }
            if (!(p.prob >= 0.0) || !std::isfinite(p.prob)) {
                return fail(lineno, "cumulative probability must be >= 0");
            }
            if (!c._pts.empty() && (p.size < c._pts.back().size || p.prob < c._pts.back().prob)) {
                return fail(lineno, "sizes and cumulative probabilities must not decrease");
            }
            maxp = p.prob > maxp ? p.prob : maxp;
            c._pts.push_back(p);
        }
        if (c._pts.empty()) {
            return fail(lineno, "no \"size cumulative_prob\" lines");
        }
        const double scale = maxp > 1.0 + 1e-9 ? 100.0 : 1.0;  // percent column
        for (auto& p : c._pts) {
            p.prob /= scale;
        }
        if (std::fabs(c._pts.back().prob - 1.0) > 1e-6) {
            return fail(lineno, "the last cumulative probability must be 1 (or 100 percent), got " +
                                    std::to_string(c._pts.back().prob * scale));
        }
        c._pts.back().prob = 1.0;
        return c;
    }

    static std::optional<empirical_cdf> load(const std::string& path, std::string& error) {
        std::ifstream f(path);
        if (!f) {
            error = path + ": cannot open";
            return std::nullopt;
        }
        std::stringstream ss;
        ss << f.rdbuf();
        return parse(ss.str(), error, path);
    }

    // Allocation-free sample.
    bytes sample(rng& r) const noexcept { return at(r.uniform()); }

    // Inverse CDF with linear interpolation, u in [0, 1].
    bytes at(double u) const noexcept {
        const std::size_t n = _pts.size();
        if (n == 0) {
            return bytes{0};
        }
        if (u <= _pts[0].prob) {
            return round_size(_pts[0].size);
        }
        std::size_t lo = 1;
        std::size_t hi = n - 1;
        while (lo < hi) {  // first i >= 1 with prob[i] >= u
            const std::size_t mid = (lo + hi) / 2;
            if (_pts[mid].prob >= u) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        const point& a = _pts[lo - 1];
        const point& b = _pts[lo];
        const double dp = b.prob - a.prob;
        const double s = dp > 0.0 ? a.size + (u - a.prob) / dp * (b.size - a.size) : b.size;
        return round_size(s);
    }

    double mean() const noexcept {
        if (_pts.empty()) {
            return 0.0;
        }
        double m = _pts[0].prob * _pts[0].size;
        for (std::size_t i = 1; i < _pts.size(); ++i) {
            m += (_pts[i].prob - _pts[i - 1].prob) * (_pts[i].size + _pts[i - 1].size) / 2.0;
        }
        return m;
    }

    const std::vector<point>& points() const noexcept { return _pts; }

private:
    static bytes round_size(double s) noexcept { return bytes{static_cast<std::uint64_t>(s + 0.5)}; }
    std::vector<point> _pts;
};

enum class size_kind : std::uint8_t { fixed = 0, uniform = 1, empirical = 2 };

// Message size distribution. The empirical form refers to a CDF the caller
// keeps alive.
class size_dist {
public:
    static size_dist fixed(bytes b) noexcept {
        size_dist d;
        d._kind = size_kind::fixed;
        d._lo = b.v;
        d._hi = b.v;
        return d;
    }
    static size_dist uniform(bytes lo, bytes hi) noexcept {
        size_dist d;
        d._kind = size_kind::uniform;
        d._lo = lo.v < hi.v ? lo.v : hi.v;
        d._hi = lo.v < hi.v ? hi.v : lo.v;
        return d;
    }
    static size_dist empirical(const empirical_cdf& c) noexcept {
        size_dist d;
        d._kind = size_kind::empirical;
        d._cdf = &c;
        return d;
    }

    bytes sample(rng& r) const noexcept {
        switch (_kind) {
            case size_kind::fixed:
                return bytes{_lo};
            case size_kind::uniform:
                return bytes{_lo + r.next() % (_hi - _lo + 1)};
            case size_kind::empirical:
                return _cdf->sample(r);
        }
        return bytes{_lo};
    }
    double mean() const noexcept {
        switch (_kind) {
            case size_kind::fixed:
                return static_cast<double>(_lo);
            case size_kind::uniform:
                return (static_cast<double>(_lo) + static_cast<double>(_hi)) / 2.0;
            case size_kind::empirical:
                return _cdf->mean();
        }
        return 0.0;
    }
    size_kind kind() const noexcept { return _kind; }

private:
    size_kind _kind = size_kind::fixed;
    std::uint64_t _lo = 0;
    std::uint64_t _hi = 0;
    const empirical_cdf* _cdf = nullptr;
};

enum class arrival_kind : std::uint8_t { fixed_rate = 0, poisson = 1, closed_loop = 2 };

struct arrival_cfg {
    arrival_kind kind = arrival_kind::closed_loop;
    nanos interval{0};              // fixed_rate: the gap; poisson: the mean gap
    std::uint32_t outstanding = 1;  // closed_loop: messages kept in flight
    std::uint64_t count = 0;        // messages to release in total, 0 = unlimited
    nanos start{0};                 // first open-loop arrival
};

// interval = mean_size x 8 / (load x rate), e.g. 50% of 100 Gb/s with 1 MB
// messages -> 160 us.
inline nanos mean_interval_for_load(bits_per_sec rate, double load, double mean_size_bytes) noexcept {
    if (rate.v == 0 || !(load > 0.0)) {
        return nanos::max();
    }
    return nanos{static_cast<std::int64_t>(
        std::llround(mean_size_bytes * 8e9 / (load * static_cast<double>(rate.v))))};
}

struct arrival {
    nanos at{};  // when the message arrived (post it with this time)
    bytes size{};
};

class message_source {
public:
    message_source(const arrival_cfg& cfg, size_dist sizes) noexcept
        : _cfg(cfg), _sizes(sizes), _next_ns(static_cast<double>(cfg.start.v)) {}

    // Releases at most one message due at or before `now`; call in a loop.
    bool poll(nanos now, rng& r, arrival& out) noexcept {
        if (_cfg.count != 0 && _released >= _cfg.count) {
            return false;
        }
        if (_cfg.kind == arrival_kind::closed_loop) {
            if (_in_flight >= _cfg.outstanding) {
                return false;
            }
            ++_in_flight;
            out.at = now;
        } else {
            const nanos due{static_cast<std::int64_t>(std::ceil(_next_ns))};
            if (now < due) {
                return false;
            }
            out.at = due;
            const double mean = static_cast<double>(_cfg.interval.v);
            _next_ns += _cfg.kind == arrival_kind::poisson ? -mean * std::log1p(-r.uniform()) : mean;
        }
        out.size = _sizes.sample(r);
        ++_released;
        return true;
    }

    // Closed loop: a message completed, so one more may be released.
    void on_complete() noexcept {
        if (_in_flight > 0) {
            --_in_flight;
        }
    }

    // Next open-loop arrival (nanos::max() for closed loop or when done).
    nanos next_deadline() const noexcept {
        if (_cfg.kind == arrival_kind::closed_loop || (_cfg.count != 0 && _released >= _cfg.count)) {
            return nanos::max();
        }
        return nanos{static_cast<std::int64_t>(std::ceil(_next_ns))};
    }

    std::uint64_t released() const noexcept { return _released; }
    std::uint32_t in_flight() const noexcept { return _in_flight; }
    const size_dist& sizes() const noexcept { return _sizes; }

private:
    arrival_cfg _cfg;
    size_dist _sizes;
    double _next_ns;
    std::uint64_t _released = 0;
    std::uint32_t _in_flight = 0;
};

}  // namespace rocelab
