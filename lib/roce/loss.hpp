// loss.hpp - packet loss injection for the generator and simulations.
//
// What: decides per packet whether to drop it, from a seeded rocelab::rng
// passed in by the caller (so runs replay exactly).
//   * bernoulli: i.i.d. drop with probability p. p is turned into a 33-bit
//     threshold t = round(p x 2^32) once (p = 1 gives 2^32, so it always
//     drops); a packet is dropped when a uniform 32-bit draw u < t. The
//     achieved probability is t / 2^32 (resolution 2.3e-10).
//   * gilbert_elliott: a two-state Markov chain (good, bad). For each
//     packet: drop with loss_good or loss_bad according to the current state,
//     then move good->bad with p_good_to_bad or bad->good with p_bad_to_good.
//     Stationary P(bad) = p_gb / (p_gb + p_bg); mean loss
//     = P(good) loss_good + P(bad) loss_bad; mean burst (bad sojourn) length
//     1 / p_bg packets. The classic Gilbert model is loss_good = 0,
//     loss_bad = 1.
// loss_injector combines them: Bernoulli when cfg.gilbert is false.
//
// Parameters (loss_cfg): p; gilbert, p_good_to_bad, p_bad_to_good,
// loss_good, loss_bad. All probabilities in [0, 1], checked by
// loss_cfg_check on the control path.
//
// Counters: offered, dropped (loss_injector).
//
// Config example:
//   loss: { p: 1% }                                   -> loss_cfg{.p = 0.01}
//   loss: { gilbert: { p_gb: 0.001, p_bg: 0.1, loss_bad: 1 } }
#pragma once

#include <cstdint>
#include <string>

#include "core/rng.hpp"

namespace rocelab {

// Probability to a threshold for a u32 comparison (control path).
constexpr std::uint64_t loss_threshold(double p) noexcept { return probability_threshold(p); }

class bernoulli_loss {
public:
    constexpr bernoulli_loss() noexcept = default;
    explicit constexpr bernoulli_loss(double p) noexcept : _t(loss_threshold(p)) {}
    bool drop(rng& r) const noexcept { return r.next_u32() < _t; }
    double p() const noexcept { return static_cast<double>(_t) / 4294967296.0; }

private:
    std::uint64_t _t = 0;
};

class gilbert_elliott_loss {
public:
    constexpr gilbert_elliott_loss() noexcept = default;
    constexpr gilbert_elliott_loss(double p_good_to_bad, double p_bad_to_good, double loss_good = 0.0,
                                   double loss_bad = 1.0) noexcept
        : _gb(loss_threshold(p_good_to_bad)),
          _bg(loss_threshold(p_bad_to_good)),
          _lg(loss_threshold(loss_good)),
          _lb(loss_threshold(loss_bad)),
          _p_gb(p_good_to_bad),
          _p_bg(p_bad_to_good),
          _loss_g(loss_good),
          _loss_b(loss_bad) {}

    bool drop(rng& r) noexcept {
        const bool d = r.next_u32() < (_bad ? _lb : _lg);
        _bad = _bad ? !(r.next_u32() < _bg) : (r.next_u32() < _gb);
        return d;
    }
    bool in_bad_state() const noexcept { return _bad; }
    // Long-run loss probability of the chain.
    double mean_loss() const noexcept {
        const double s = _p_gb + _p_bg;
        const double pb = s > 0.0 ? _p_gb / s : 0.0;
        return (1.0 - pb) * _loss_g + pb * _loss_b;
    }

private:
    std::uint64_t _gb = 0;
    std::uint64_t _bg = 0;
    std::uint64_t _lg = 0;
    std::uint64_t _lb = 0;
    double _p_gb = 0.0;
    double _p_bg = 0.0;
    double _loss_g = 0.0;
    double _loss_b = 0.0;
    bool _bad = false;
};

struct loss_cfg {
    double p = 0.0;
    bool gilbert = false;
    double p_good_to_bad = 0.0;
    double p_bad_to_good = 1.0;
    double loss_good = 0.0;
    double loss_bad = 1.0;
};

// "" when valid, else a message naming the field (control path).
inline std::string loss_cfg_check(const loss_cfg& c) {
    auto in01 = [](double x) { return x >= 0.0 && x <= 1.0; };
    const struct {
        const char* name;
        double v;
    } f[] = {{"p", c.p},
             {"p_good_to_bad", c.p_good_to_bad},
             {"p_bad_to_good", c.p_bad_to_good},
             {"loss_good", c.loss_good},
             {"loss_bad", c.loss_bad}};
    for (const auto& x : f) {
        if (!in01(x.v)) {
            return std::string("loss.") + x.name + ": " + std::to_string(x.v) +
                   " is not a probability in [0, 1]";
        }
    }
    return {};
}

struct loss_counters {
    std::uint64_t offered = 0;
    std::uint64_t dropped = 0;
};

class loss_injector {
public:
    loss_injector() noexcept = default;
    explicit loss_injector(const loss_cfg& c) noexcept
        : _gilbert(c.gilbert), _b(c.p), _ge(c.p_good_to_bad, c.p_bad_to_good, c.loss_good, c.loss_bad) {}

    bool drop(rng& r) noexcept {
        ++_c.offered;
        const bool d = _gilbert ? _ge.drop(r) : _b.drop(r);
        _c.dropped += d ? 1 : 0;
        return d;
    }
    double mean_loss() const noexcept { return _gilbert ? _ge.mean_loss() : _b.p(); }
    const loss_counters& counters() const noexcept { return _c; }

private:
    bool _gilbert = false;
    bernoulli_loss _b{};
    gilbert_elliott_loss _ge{};
    loss_counters _c{};
};

}  // namespace rocelab
