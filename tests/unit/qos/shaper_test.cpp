// Unit tests for qos/shaper.hpp: long-run accuracy, burst bound, rate change.
#include "qos/shaper.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "core/clock.hpp"
#include "core/rng.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

struct run_result {
    double rel_err;
    std::uint64_t frames;
};

// A saturating sender: sends whenever conforms(), otherwise the manual clock
// jumps to the next send time (rounded up to the polling granularity).
// Measured rate = wire bits / (time the line frees after the last frame).
run_result saturate(bits_per_sec rate, bytes burst, std::uint32_t lo, std::uint32_t hi, std::uint64_t frames,
                    std::int64_t poll_ns = 1, std::uint64_t seed = 1) {
    shaper s{rate, burst};
    manual_clock clk;
    clk.set(nanos{1'000'000});
    rng r{seed};
    const nanos t0 = clk.now();
    std::uint64_t wire_bytes = 0;
    for (std::uint64_t i = 0; i < frames;) {
        if (s.conforms(clk.now())) {
            const std::uint32_t len = lo + static_cast<std::uint32_t>(r.next() % (hi - lo + 1));
            s.on_send(clk.now(), len);
            wire_bytes += len + 24;
            ++i;
        } else {
            std::int64_t t = s.next_send_time().v;
            t = ((t + poll_ns - 1) / poll_ns) * poll_ns;  // poller only wakes on its grid
            clk.set(nanos{t});
        }
    }
    const double elapsed_s = static_cast<double>((s.finish_time() - t0).v) * 1e-9;
    const double measured = static_cast<double>(wire_bytes) * 8.0 / elapsed_s;
    return {std::abs(measured / static_cast<double>(rate.v) - 1.0), frames};
}

TEST(shaper, saturating_sender_gets_exact_rate_mixed_sizes) {
    for (auto rate : {1_Gbps, 10_Gbps, 25_Gbps, 100_Gbps, 400_Gbps}) {
        const auto r = saturate(rate, bytes{0}, 64, 9216, 200000);
        EXPECT_LT(r.rel_err, 1e-6) << rate.v;
        const auto rb = saturate(rate, 18_KiB, 64, 9216, 200000);
        EXPECT_LT(rb.rel_err, 1e-6) << rate.v;
    }
}

TEST(shaper, saturating_sender_fixed_sizes) {
    for (auto rate : {1_Gbps, 10_Gbps, 100_Gbps}) {
        for (std::uint32_t len : {60u, 64u, 1500u, 4096u, 9216u}) {
            const auto r = saturate(rate, bytes{0}, len, len, 100000);
            EXPECT_LT(r.rel_err, 1e-6) << rate.v << " " << len;
        }
    }
}

TEST(shaper, odd_rate_keeps_fraction) {
    // 7 bit/s-odd rate: per-frame cost is never an integer number of ns.
    const auto r = saturate(bits_per_sec{3'333'333'333}, bytes{0}, 64, 64, 500000);
    EXPECT_LT(r.rel_err, 1e-7);
}

TEST(shaper, coarse_polling_within_one_percent_with_burst) {
    // A poller waking only every 200 ns still gets the rate when the burst
    // allowance covers the polling jitter.
    for (auto rate : {10_Gbps, 100_Gbps}) {
        const auto r = saturate(rate, 16_KiB, 64, 9216, 100000, 200);
        EXPECT_LT(r.rel_err, 1e-4) << rate.v;
    }
}

TEST(shaper, finish_time_is_exact_sum) {
    const bits_per_sec rate = 25_Gbps;
    shaper s{rate, bytes{0}};
    rng r{5};
    std::int64_t now = 0;
    unsigned __int128 total_bits_ns = 0;  // sum of wire bytes * 8e9
    for (int i = 0; i < 100000; ++i) {
        const std::uint32_t len = 64 + static_cast<std::uint32_t>(r.next() % 9153);
        now = s.next_send_time().v;
        if (i == 0) {
            now = 0;
        }
        s.on_send(nanos{now}, len);
        total_bits_ns += static_cast<unsigned __int128>(len + 24) * 8 * 1'000'000'000ULL;
    }
    EXPECT_EQ(s.finish_time().v, static_cast<std::int64_t>(total_bits_ns / rate.v));
}

TEST(shaper, burst_is_bounded_after_idle) {
    const bits_per_sec rate = 10_Gbps;
    const bytes burst = 9216_B;
    shaper s{rate, burst};
    manual_clock clk;
    // Busy for a while, then idle for one second.
    for (int i = 0; i < 1000; ++i) {
        clk.set(std::max(clk.now(), s.next_send_time()));
        s.on_send(clk.now(), 1500);
    }
    clk.advance(1_s);
    std::uint64_t sent = 0;
    int n = 0;
    while (s.conforms(clk.now())) {
        s.on_send(clk.now(), 1000);
        sent += 1024;
        ++n;
    }
    // At most burst + one frame back to back, and at least the burst.
    EXPECT_LE(sent, burst.v + 1024);
    EXPECT_GE(sent, burst.v);
    EXPECT_GE(n, 9);  // tau is floor(7372.8 ns): 9 or 10 frames of 1024 B
    // Afterwards the sender is paced again: next slot one frame-time later.
    const nanos t = s.next_send_time();
    EXPECT_GT(t, clk.now());
    EXPECT_LE((t - clk.now()).v, wire_time(bytes{1024}, rate).v + 1);
}

TEST(shaper, zero_rate_is_unshaped) {
    shaper s{bits_per_sec{0}, bytes{0}};
    for (int i = 0; i < 100; ++i) {
        EXPECT_TRUE(s.conforms(nanos{0}));
        s.on_send(nanos{0}, 9216);
    }
    EXPECT_LE(s.next_send_time(), nanos{0});
    shaper d;
    EXPECT_TRUE(d.conforms(nanos{0}));
}

TEST(shaper, first_frame_conforms_and_spacing_is_wire_time) {
    shaper s{10_Gbps, bytes{0}};
    EXPECT_TRUE(s.conforms(nanos{0}));
    s.on_send(nanos{0}, 1500);             // 1524 B on the wire = 1219.2 ns
    EXPECT_FALSE(s.conforms(nanos{1219}));
    EXPECT_TRUE(s.conforms(nanos{1220}));
    EXPECT_EQ(s.next_send_time(), nanos{1220});
}

TEST(shaper, set_rate_applies_to_next_frames) {
    shaper s{10_Gbps, bytes{0}};
    s.on_send(nanos{0}, 1226);  // 1250 B = 1000 ns at 10G
    EXPECT_EQ(s.next_send_time(), nanos{1000});
    s.set_rate(100_Gbps);       // committed backlog kept
    EXPECT_EQ(s.next_send_time(), nanos{1000});
    s.on_send(nanos{1000}, 1226);  // 100 ns at 100G
    EXPECT_EQ(s.next_send_time(), nanos{1100});
    EXPECT_EQ(s.rate(), 100_Gbps);
    s.set_burst(bytes{1250});      // tau = 100 ns at 100G
    EXPECT_EQ(s.next_send_time(), nanos{1000});
    s.reset();
    EXPECT_TRUE(s.conforms(nanos{0}));
}

TEST(shaper, set_rate_at_now_retimes_the_committed_wait) {
    // DCQCN: a cut to 1 Mb/s, then a recovery 1 ms later. 1250 B on the wire
    // = 10 ms at 1 Mb/s; 9 ms of it are left at 1 ms, and at 50 Gb/s those
    // 9 ms x 1e6 bit/s = 9000 bits take 180 ns.
    shaper s{1_Mbps, bytes{0}};
    s.on_send(nanos{0}, 1226);
    EXPECT_EQ(s.next_send_time(), nanos{10'000'000});
    s.set_rate(bits_per_sec{50'000'000'000ULL}, nanos{1'000'000});
    EXPECT_EQ(s.next_send_time(), nanos{1'000'180});
    EXPECT_EQ(s.rate(), bits_per_sec{50'000'000'000ULL});
    // A cut stretches what is left: 100 ns at 10G left at t = 0 becomes 1000 ns at 1G.
    shaper c{10_Gbps, bytes{0}};
    c.on_send(nanos{0}, 226);  // 250 B = 200 ns at 10G
    c.set_rate(1_Gbps, nanos{100});
    EXPECT_EQ(c.next_send_time(), nanos{1100});
    // Fractions carry exactly: 1 ns left at 3 Gb/s -> 3 ns at 1 Gb/s.
    shaper f{3_Gbps, bytes{0}};
    f.on_send(nanos{0}, 351);  // 375 B = 1000 ns at 3G
    f.set_rate(1_Gbps, nanos{999});
    EXPECT_EQ(f.next_send_time(), nanos{1002});
    // Idle (nothing committed past now): only the rate changes.
    shaper i{10_Gbps, bytes{0}};
    i.on_send(nanos{0}, 1226);
    i.set_rate(1_Gbps, nanos{5000});
    EXPECT_TRUE(i.conforms(nanos{5000}));
}

// Frames of `len` that conform one after another at a single `now` (a poll
// that sends a burst), after idle.
int burst_at_one_now(shaper& s, nanos now, std::uint32_t len) {
    int n = 0;
    while (s.conforms(now) && n < 1000) {
        s.on_send(now, len);
        ++n;
    }
    return n;
}

TEST(shaper, min_tolerance_lets_a_poll_send_a_burst_at_high_rates_only) {
    // 1082 B frames, 1106 B on the wire: 22.12 ns at 400 Gb/s, 88.48 ns at
    // 100 Gb/s, 884.8 ns at 10 Gb/s. Frame k (from 0) conforms at one `now`
    // while k x wire time <= tau.
    const nanos t0{1'000'000};
    shaper plain{400_Gbps, bytes{2200}};  // tau = 2200 B = 44 ns: k <= 1.99
    EXPECT_EQ(burst_at_one_now(plain, t0, 1082), 2);
    shaper ahead{400_Gbps, bytes{2200}, shaper::default_overhead, 1_us};  // tau = 1000 ns: k <= 45.2
    EXPECT_EQ(burst_at_one_now(ahead, t0, 1082), 46);
    // 100 Gb/s: tau = 1000 ns, k <= 11.3.
    shaper at100{100_Gbps, bytes{2200}, shaper::default_overhead, 1_us};
    EXPECT_EQ(burst_at_one_now(at100, t0, 1082), 12);
    // 10 Gb/s: the 2200 B (1760 ns) are longer than 1 us: as without it.
    shaper at10{10_Gbps, bytes{2200}, shaper::default_overhead, 1_us};
    EXPECT_EQ(burst_at_one_now(at10, t0, 1082), 2);
    // It holds over rate changes (DCQCN), both ways of changing the rate.
    ahead.set_rate(100_Gbps, t0 + 1_s);
    EXPECT_EQ(burst_at_one_now(ahead, t0 + 2_s, 1082), 12);
    ahead.set_rate(400_Gbps);
    EXPECT_EQ(burst_at_one_now(ahead, t0 + 3_s, 1082), 46);
    // The long-run rate is still exact with a poller that wakes every 0.9 us
    // (within the tolerance: a later poll finds the line idle and restarts).
    shaper sat{100_Gbps, bytes{2200}, shaper::default_overhead, 1_us};
    std::int64_t now = 0;
    std::uint64_t frames = 0;
    for (; frames < 200000;) {
        while (sat.conforms(nanos{now})) {
            sat.on_send(nanos{now}, 1082);
            ++frames;
        }
        now = std::max<std::int64_t>(now + 900, sat.next_send_time().v);
    }
    const unsigned __int128 bits_ns = static_cast<unsigned __int128>(frames) * 1106 * 8 * 1'000'000'000ULL;
    EXPECT_EQ(sat.finish_time().v, static_cast<std::int64_t>(bits_ns / 100'000'000'000ULL));
}


// frames_at(now, L, cap) is a lower bound: that many frames of at most L
// bytes, each checked by conforms(now) and charged by on_send(now, len), all
// conform; it is 0 exactly when conforms(now) is false, else >= 1; and for
// frames of exactly L bytes it is what conforms() and on_send() give one
// frame at a time. Random rates (1 Mbps .. 1 Tbps, odd ones too), bursts,
// tolerances and histories.
TEST(shaper, frames_at_counts_what_conforms_frame_by_frame) {
    rng r(11);
    std::uint64_t total = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        const std::uint64_t rate = 1'000'000ull + (r.next() % 1'000'000'000'000ull);
        const std::uint64_t burst = 64 + r.next_u32() % 20000;
        const nanos tol{static_cast<std::int64_t>(r.next_u32() % 3) * 500};
        shaper s(bits_per_sec{rate}, bytes{burst}, shaper::default_overhead, tol);
        std::int64_t now = 1'000'000 + static_cast<std::int64_t>(r.next_u32() % 1000);
        const int history = static_cast<int>(r.next_u32() % 40);
        for (int i = 0; i < history; ++i) {  // a random past
            now += static_cast<std::int64_t>(r.next_u32() % 200);
            if (s.conforms(nanos{now})) { s.on_send(nanos{now}, 60 + r.next_u32() % 1500); }
        }
        const std::uint32_t max_len = 60 + r.next_u32() % 4200;
        const std::uint32_t cap = 1 + r.next_u32() % 64;
        const std::uint32_t k = s.frames_at(nanos{now}, max_len, cap);
        ASSERT_EQ(k == 0, !s.conforms(nanos{now})) << trial;
        ASSERT_LE(k, cap);
        shaper t = s;
        for (std::uint32_t j = 0; j < k; ++j) {
            ASSERT_TRUE(t.conforms(nanos{now})) << "trial " << trial << " frame " << j << " of " << k;
            t.on_send(nanos{now}, max_len - (r.next_u32() % 2 == 0 ? 0 : r.next_u32() % max_len / 2));
        }
        // Tight for frames of max_len: how many more would conform.
        shaper u = s;
        std::uint32_t truth = 0;
        while (truth < cap && u.conforms(nanos{now})) {
            u.on_send(nanos{now}, max_len);
            ++truth;
        }
        ASSERT_EQ(k, truth) << "trial " << trial;
        total += k;
    }
    EXPECT_GT(total, 20000u);
}

}  // namespace
}  // namespace rocelab
