// wred.hpp - WRED / ECN marking decision for one egress queue (reference 3.2-3.4).
//
// What: given the queue's instantaneous depth q in bytes and whether the
// packet is ECN-capable (ECT(0), ECT(1) or CE), decide pass / mark / drop:
//
//   p(q) = 0                                   q <= Kmin
//   p(q) = Pmax x (q - Kmin) / (Kmax - Kmin)   Kmin < q <= Kmax
//   p(q) = 1                                   q > Kmax
//
//   ECN-capable packet, mark_ect          -> mark with probability p
//   ECN-capable packet, !mark_ect, drop   -> drop with probability p
//   Not-ECT packet, drop_enable           -> drop with probability p
//   anything else                         -> pass
//
// Kmin == Kmax is DCTCP-style step marking: every packet above K is hit
// (Pmax is not used). No averaging (SAI's WRED weight): DCQCN switches and
// both reference simulators use the instantaneous depth. Where the depth is
// sampled (enqueue or dequeue, switch_cfg::wred_at_enqueue) is the caller's
// choice; dequeue is the default (HPCC ns-3, ns3-rdma).
//
// Parameters: a SONiC WRED_PROFILE (wred_profile_cfg, fields as SONiC writes
// them: thresholds in bytes, probabilities in percent) resolved for green
// traffic - RoCE is all green - into wred_cfg by wred_cfg::from_profile:
//   enabled      marking or dropping configured (else decide() is one compare)
//   mark_ect     `ecn` includes green (ecn_green, ecn_green_yellow,
//                ecn_green_red, ecn_all)
//   drop_enable  wred_green_enable
//   kmin, kmax   green_min_threshold, green_max_threshold (bytes)
//   pmax         green_drop_probability / 100
// Yellow and red are parsed and validated but not used by the data path.
//
// Counters: none here; the pipeline counts per queue (wred_counters below:
// ecn_marked, wred_dropped). Randomness comes from a caller-owned rng, so a
// run replays exactly from its seed.
//
// Config example (SONiC names; AZURE_LOSSLESS is SONiC's default profile and
// rocelab's built-in default on queues 3 and 4):
//   WRED_PROFILE:
//     AZURE_LOSSLESS: {wred_green_enable: "true", green_min_threshold: "1048576",
//                      green_max_threshold: "2097152", green_drop_probability: "5",
//                      ecn: ecn_all}
//   QUEUE:
//     "global|3-4": {wred_profile: AZURE_LOSSLESS}
//
//   const wred_cfg w = wred_cfg::from_profile(profile);   // control path
//   switch (w.decide(queue_bytes, ect, rng)) { ... }      // data path
//
// Fixed point (computed once by wred_cfg::make, no division on the data path):
//   Let d = q - Kmin and R = Kmax - Kmin > 0. The draw compares a uniform
//   32-bit u with P = p x 2^32: mark iff u < P, so Pr = P / 2^32 = p.
//     P = Pmax x 2^32 x d / R = (d x S) >> 32   with   S = ceil(Pmax x 2^64 / R)
//   S is a 64-bit fraction (2^-64 units of probability per byte); d x S is a
//   128-bit product, one `mul` on x86-64. Error: S exceeds the exact value by
//   < 1, so P is at most d / 2^32 <= R / 2^32 units of 2^-32 too high, i.e.
//   the probability is off by < R / 2^64 (< 1e-9 for any R below 16 GiB), and
//   rounding S up makes P reach 2^32 (certain hit) at q = Kmax when Pmax = 1.
//   Because d <= R, d x S <= 2^64 + R and P fits in 64 bits. When
//   Pmax x 2^64 / R does not fit in 64 bits (only R = 1 byte with Pmax = 1)
//   p = 1 for every q > Kmin, which is step mode (hi = lo). P == 0 -> pass and P >= 2^32 -> hit need no random draw, so a
//   draw happens only when 0 < p < 1.
//   A disabled profile stores lo = UINT64_MAX, so `q <= lo` passes every
//   packet with the same single compare as q <= Kmin.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "core/rng.hpp"
#include "core/units.hpp"

namespace rocelab {

// SONiC WRED_PROFILE `ecn`: which colours are ECN-marked instead of dropped.
enum class ecn_mode : std::uint8_t {
    ecn_none,
    ecn_green,
    ecn_yellow,
    ecn_red,
    ecn_green_yellow,
    ecn_green_red,
    ecn_yellow_red,
    ecn_all,
};

inline constexpr std::string_view ecn_mode_names[] = {
    "ecn_none",         "ecn_green",     "ecn_yellow",     "ecn_red",
    "ecn_green_yellow", "ecn_green_red", "ecn_yellow_red", "ecn_all",
};

constexpr std::string_view ecn_mode_name(ecn_mode m) noexcept {
    const auto i = static_cast<std::size_t>(m);
    return i < std::size(ecn_mode_names) ? ecn_mode_names[i] : std::string_view{"?"};
}

// Exact SONiC spelling (case-sensitive, as SONiC's YANG model).
constexpr std::optional<ecn_mode> parse_ecn_mode(std::string_view s) noexcept {
    for (std::size_t i = 0; i < std::size(ecn_mode_names); ++i) {
        if (ecn_mode_names[i] == s) {
            return static_cast<ecn_mode>(i);
        }
    }
    return std::nullopt;
}

constexpr bool ecn_marks_green(ecn_mode m) noexcept {
    return m == ecn_mode::ecn_green || m == ecn_mode::ecn_green_yellow || m == ecn_mode::ecn_green_red ||
           m == ecn_mode::ecn_all;
}
constexpr bool ecn_marks_yellow(ecn_mode m) noexcept {
    return m == ecn_mode::ecn_yellow || m == ecn_mode::ecn_green_yellow || m == ecn_mode::ecn_yellow_red ||
           m == ecn_mode::ecn_all;
}
constexpr bool ecn_marks_red(ecn_mode m) noexcept {
    return m == ecn_mode::ecn_red || m == ecn_mode::ecn_green_red || m == ecn_mode::ecn_yellow_red ||
           m == ecn_mode::ecn_all;
}

// True for ECT(1), ECT(0) and CE (the two low bits of TOS / Traffic Class).
// 0xFF (frame_ecn's "not IP") is not ECN-capable.
constexpr bool ecn_capable(std::uint8_t ecn_bits) noexcept {
    return ecn_bits != 0xFF && (ecn_bits & 3u) != 0;
}

// One SONiC WRED_PROFILE entry as written. Thresholds in bytes, drop
// probabilities in percent (0..100; SONiC's default 100).
struct wred_profile_cfg {
    std::string name;
    bool wred_green_enable = false;
    bool wred_yellow_enable = false;
    bool wred_red_enable = false;
    bytes green_min_threshold{0};
    bytes green_max_threshold{0};
    bytes yellow_min_threshold{0};
    bytes yellow_max_threshold{0};
    bytes red_min_threshold{0};
    bytes red_max_threshold{0};
    std::uint8_t green_drop_probability = 100;   // percent
    std::uint8_t yellow_drop_probability = 100;  // percent
    std::uint8_t red_drop_probability = 100;     // percent
    ecn_mode ecn = ecn_mode::ecn_none;
};

enum class wred_verdict : std::uint8_t { pass, mark, drop };

constexpr std::string_view wred_verdict_name(wred_verdict v) noexcept {
    return v == wred_verdict::pass ? "pass" : v == wred_verdict::mark ? "mark" : "drop";
}

// Per-queue counters, owned by the caller (one per lcore, never shared).
struct wred_counters {
    std::uint64_t ecn_marked = 0;
    std::uint64_t wred_dropped = 0;
};

// What one egress queue uses, resolved for green traffic. A value-initialised
// wred_cfg{} is disabled (passes everything).
struct wred_cfg {
    bool enabled = false;      // any marking or dropping configured
    bool mark_ect = false;     // ECN-mark ECN-capable packets (ecn includes green)
    bool drop_enable = false;  // wred_green_enable: drop (Not-ECT, or ECT when not marking)
    bytes kmin{0};             // green_min_threshold
    bytes kmax{0};             // green_max_threshold (>= kmin)
    double pmax = 0.0;         // 0..1, green_drop_probability / 100

    // Fixed point for the data path (see the header comment); filled by make().
    std::uint64_t lo = UINT64_MAX;  // q <= lo passes: kmin, or UINT64_MAX when disabled
    std::uint64_t hi = UINT64_MAX;  // q > hi is always hit: kmax (lo in step mode)
    std::uint64_t slope = 0;        // S = ceil(pmax x 2^64 / (kmax - kmin)); 0 in step mode
    wred_verdict on_ect = wred_verdict::pass;      // verdict on a hit for an ECN-capable packet
    wred_verdict on_not_ect = wred_verdict::pass;  // ... for a Not-ECT packet

    // Control path. kmax below kmin is taken as kmin (step mode); pmax is
    // clamped to 0..1 (NaN -> 0). Nothing enabled -> disabled.
    static wred_cfg make(bytes kmin, bytes kmax, double pmax, bool mark_ect, bool drop_enable) noexcept {
        wred_cfg c;
        c.mark_ect = mark_ect;
        c.drop_enable = drop_enable;
        c.enabled = mark_ect || drop_enable;
        c.kmin = kmin;
        c.kmax = kmax < kmin ? kmin : kmax;
        c.pmax = pmax > 0.0 ? (pmax < 1.0 ? pmax : 1.0) : 0.0;  // also maps NaN to 0
        if (!c.enabled) {
            return c;
        }
        c.lo = c.kmin.v;
        c.hi = c.kmax.v;
        c.on_ect = mark_ect ? wred_verdict::mark : (drop_enable ? wred_verdict::drop : wred_verdict::pass);
        c.on_not_ect = drop_enable ? wred_verdict::drop : wred_verdict::pass;
        const std::uint64_t range = c.hi - c.lo;
        if (range > 0) {
            const long double s = std::ceil(static_cast<long double>(c.pmax) * 18446744073709551616.0L /
                                            static_cast<long double>(range));
            if (s >= 18446744073709551616.0L) {
                c.hi = c.lo;  // only R = 1 byte with Pmax = 1: p = 1 above Kmin, i.e. step mode
            } else {
                c.slope = static_cast<std::uint64_t>(s);
            }
        }
        return c;
    }

    // Green view of a SONiC profile.
    static wred_cfg from_profile(const wred_profile_cfg& p) noexcept {
        return make(p.green_min_threshold, p.green_max_threshold, p.green_drop_probability / 100.0,
                    ecn_marks_green(p.ecn), p.wred_green_enable);
    }

    // Data path: the verdict for one packet at queue depth q (bytes).
    // Draws from r only when 0 < p(q) < 1 and the packet would be hit.
    [[gnu::always_inline]] wred_verdict decide(std::uint64_t q, bool ect, rng& r) const noexcept {
        if (q <= lo) [[likely]] {
            return wred_verdict::pass;
        }
        const wred_verdict hit = ect ? on_ect : on_not_ect;
        if (hit == wred_verdict::pass || q > hi) {
            return hit;
        }
        const auto p32 = static_cast<std::uint64_t>((static_cast<unsigned __int128>(q - lo) * slope) >> 32);
        if (p32 == 0) {
            return wred_verdict::pass;
        }
        if (p32 >= (std::uint64_t{1} << 32)) {
            return hit;
        }
        return r.next_u32() < p32 ? hit : wred_verdict::pass;
    }
    [[gnu::always_inline]] wred_verdict decide(bytes q, bool ect, rng& r) const noexcept {
        return decide(q.v, ect, r);
    }

    // p(q) as the fixed-point path uses it, in units of 2^-32 (2^32 = 1).
    // 0 when disabled. For tests and telemetry.
    std::uint64_t probability_fixed(std::uint64_t q) const noexcept {
        if (q <= lo) {
            return 0;
        }
        if (q > hi) {
            return std::uint64_t{1} << 32;
        }
        const auto p32 = static_cast<std::uint64_t>((static_cast<unsigned __int128>(q - lo) * slope) >> 32);
        return p32 < (std::uint64_t{1} << 32) ? p32 : std::uint64_t{1} << 32;
    }

    // p(q) in double precision straight from the formula (the reference the
    // fixed point is checked against). 0 when disabled.
    double probability(std::uint64_t q) const noexcept {
        if (!enabled || q <= kmin.v) {
            return 0.0;
        }
        if (q > kmax.v) {
            return 1.0;
        }
        return pmax * static_cast<double>(q - kmin.v) / static_cast<double>(kmax.v - kmin.v);
    }
};

// Free-function spelling of wred_cfg::decide.
[[gnu::always_inline]] inline wred_verdict wred_decide(const wred_cfg& c, bytes q, bool ect, rng& r) noexcept {
    return c.decide(q.v, ect, r);
}

}  // namespace rocelab
