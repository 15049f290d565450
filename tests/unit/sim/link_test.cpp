// Unit tests for sim/link.hpp: exact serialisation (no drift over 1M
// frames), propagation delay, idle restart, TX/RX ring limits, seeded loss.
#include "sim/link.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "sim/sim_port.hpp"

namespace rocelab::sim {
namespace link_test {  // its own names: meson compiles the suite as unity blocks

using namespace rocelab::literals;

struct frame {
    std::uint64_t id = 0;
    std::uint32_t len = 0;
};

struct received {
    std::uint64_t id;
    std::int64_t arrive;
};

// Drives one link with a saturating sender (refills the TX ring whenever a
// slot frees) and a receiver that reads at every arrival, recording each
// frame's arrival time. Plays the engine's part by hand.
std::vector<received> pump(sim_link<frame>& l, const std::vector<frame>& in, nanos start = nanos{0}) {
    std::vector<received> out;
    out.reserve(in.size());
    nanos now = start;
    std::size_t sent = 0;
    for (;;) {
        sent += l.tx_burst(now, in.data() + sent, in.size() - sent);
        l.deliver(now);
        while (l.rx_ring_used() > 0) {
            const nanos a = l.next_arrival();
            frame f;
            if (l.rx_burst(now, &f, 1) != 1) {
                ADD_FAILURE() << "a delivered frame was not handed out at " << now.v;
                return out;
            }
            out.push_back(received{f.id, a.v});
        }
        const nanos next_tx = sent < in.size() ? l.tx_free_time(now) : nanos::max();
        const nanos next = std::min(l.next_wire_arrival(), next_tx);
        if (next == nanos::max()) {
            break;
        }
        if (next <= now) {
            ADD_FAILURE() << "no progress at " << now.v;
            return out;
        }
        now = next;
    }
    return out;
}

std::vector<frame> mixed_frames(std::size_t n, std::uint64_t seed, std::uint32_t lo = 60, std::uint32_t hi = 9216) {
    rng r{seed};
    std::vector<frame> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = frame{i, lo + static_cast<std::uint32_t>(r.next() % (hi - lo + 1))};
    }
    return v;
}

constexpr std::uint64_t ns_per_s = 1'000'000'000ULL;

// 1,000,000 frames of 60..9216 B back to back at 100 Gb/s: frame i arrives
// at ceil(sum_{j<=i} (len_j + 24) x 8 / rate) + prop, computed here
// independently from the cumulative byte count with __int128.
TEST(sim_link, million_mixed_frames_no_drift_at_100g) {
    const std::uint64_t rate = 100'000'000'000ULL;
    const std::int64_t prop = 1234;
    sim_link<frame> l{link_cfg{.rate = bits_per_sec{rate}, .prop_delay = nanos{prop}, .tx_ring_size = 256,
                               .rx_ring_size = 64}};
    const auto in = mixed_frames(1'000'000, 7);
    const auto out = pump(l, in);
    ASSERT_EQ(out.size(), in.size());
    unsigned __int128 wire_bytes = 0;
    std::uint64_t mismatches = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        ASSERT_EQ(out[i].id, i);
        wire_bytes += in[i].len + 24;
        const unsigned __int128 num = wire_bytes * 8u * ns_per_s;
        const auto depart = static_cast<std::int64_t>((num + rate - 1) / rate);  // ceil
        if (out[i].arrive != depart + prop) {
            ++mismatches;
            ADD_FAILURE() << "frame " << i << " arrived " << out[i].arrive << ", expected " << depart + prop;
            if (mismatches > 5) {
                break;
            }
        }
    }
    EXPECT_EQ(mismatches, 0u);
    // The line's exact free time is the rational sum: free_ns + rem / R.
    const unsigned __int128 exact = wire_bytes * 8u * ns_per_s;
    EXPECT_EQ(static_cast<unsigned __int128>(l.line_free_ns()) * rate + l.line_free_rem(), exact);
    EXPECT_LT(l.line_free_rem(), rate);
    EXPECT_EQ(l.counters().tx_accepted, in.size());
    EXPECT_EQ(l.counters().delivered, in.size());
    EXPECT_EQ(l.counters().rx_ring_full, 0u);
    EXPECT_EQ(l.counters().lost, 0u);
    EXPECT_EQ(l.counters().tx_refused_wire_full, 0u);
    EXPECT_GT(l.counters().tx_refused, 0u);  // the sender really was held by the TX ring
}

// Sizes whose wire time is a whole number of ns at 100 Gb/s ((len+24) a
// multiple of 25): consecutive arrivals are spaced exactly (len+24)*8/100 ns.
TEST(sim_link, integral_wire_times_are_spaced_exactly) {
    const std::uint32_t lens[] = {76, 476, 1001, 9176};  // 8, 40, 82, 736 ns
    rng r{3};
    std::vector<frame> in(200'000);
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = frame{i, lens[r.next() % 4]};
    }
    sim_link<frame> l{link_cfg{.rate = 100_Gbps, .prop_delay = 500_ns}};
    const auto out = pump(l, in, nanos{1'000'000});
    ASSERT_EQ(out.size(), in.size());
    EXPECT_EQ(out[0].arrive, 1'000'000 + (in[0].len + 24) * 8 / 100 + 500);
    for (std::size_t i = 1; i < in.size(); ++i) {
        ASSERT_EQ(out[i].arrive - out[i - 1].arrive, static_cast<std::int64_t>((in[i].len + 24) * 8 / 100))
            << "frame " << i;
    }
}

TEST(sim_link, propagation_delay_and_idle_restart) {
    // 1 Gb/s: a 1000-B frame (1024 B on the wire) takes 8192 ns.
    sim_link<frame> l{link_cfg{.rate = 1_Gbps, .prop_delay = 5_us}};
    const frame f{1, 1000};
    ASSERT_EQ(l.tx_burst(nanos{100}, &f, 1), 1u);
    EXPECT_EQ(l.next_wire_arrival(), nanos{100 + 8192 + 5000});
    frame got;
    EXPECT_EQ(l.rx_burst(nanos{100 + 8192 + 4999}, &got, 1), 0u);  // not yet
    EXPECT_EQ(l.rx_burst(nanos{100 + 8192 + 5000}, &got, 1), 1u);
    EXPECT_EQ(got.id, 1u);
    // After a long idle the next frame starts at `now`, not at the old free time.
    const frame g{2, 1000};
    ASSERT_EQ(l.tx_burst(nanos{1'000'000}, &g, 1), 1u);
    EXPECT_EQ(l.next_arrival(), nanos{1'000'000 + 8192 + 5000});
    // A frame accepted while the line is busy starts when it frees.
    const frame h{3, 1000};
    ASSERT_EQ(l.tx_burst(nanos{1'000'010}, &h, 1), 1u);
    EXPECT_EQ(l.line_free_ns(), 1'000'000 + 2 * 8192);
    // Fractional free time: 100 B + 24 at 1 Gb/s is 992 ns; at 3 Gb/s 330.67 ns.
    sim_link<frame> m{link_cfg{.rate = bits_per_sec{3'000'000'000ULL}, .prop_delay = 0_ns}};
    const frame a[3] = {{1, 100}, {2, 100}, {3, 100}};
    ASSERT_EQ(m.tx_burst(nanos{0}, a, 3), 3u);
    // exact departures 330.67, 661.33, 992 -> events at 331, 662, 992
    m.deliver(nanos{331});
    EXPECT_EQ(m.rx_ring_used(), 1u);
    m.deliver(nanos{661});
    EXPECT_EQ(m.rx_ring_used(), 1u);
    m.deliver(nanos{662});
    EXPECT_EQ(m.rx_ring_used(), 2u);
    EXPECT_EQ(m.next_wire_arrival(), nanos{992});
    EXPECT_EQ(m.line_free_ns(), 992);
    EXPECT_EQ(m.line_free_rem(), 0u);
}

TEST(sim_link, full_tx_ring_refuses_and_frees_at_departure) {
    // 10 Gb/s, 1226 B (+24 = 1250 B = 1000 ns on the wire), 4 TX descriptors.
    sim_link<frame> l{link_cfg{.rate = 10_Gbps, .prop_delay = 0_ns, .tx_ring_size = 4, .rx_ring_size = 64}};
    std::vector<frame> in(10);
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = frame{i, 1226};
    }
    EXPECT_EQ(l.tx_burst(nanos{0}, in.data(), 10), 4u);
    EXPECT_EQ(l.counters().tx_refused, 6u);
    EXPECT_EQ(l.tx_ring_used(nanos{0}), 4u);
    EXPECT_EQ(l.tx_free_time(nanos{0}), nanos{1000});
    EXPECT_EQ(l.tx_free_time(nanos{0}, 3), nanos{3000});
    EXPECT_EQ(l.tx_free_time(nanos{0}, 5), nanos::max());
    EXPECT_EQ(l.tx_burst(nanos{999}, in.data() + 4, 6), 0u);  // first still on its way out
    EXPECT_EQ(l.tx_burst(nanos{1000}, in.data() + 4, 6), 1u);  // one slot freed
    EXPECT_EQ(l.tx_burst(nanos{2500}, in.data() + 5, 5), 1u);
    EXPECT_EQ(l.tx_ring_used(nanos{2500}), 4u);
    EXPECT_EQ(l.counters().tx_accepted, 6u);
    // the refused ones are still ours; the accepted keep exact back-to-back timing
    EXPECT_EQ(l.line_free_ns(), 6000);
}

struct wire_rec {
    std::uint64_t id;
    std::int64_t depart, arrive;
    wire_fate fate;
};
struct counting_traits {
    std::uint64_t* dropped;
    std::vector<wire_rec>* seen = nullptr;
    std::uint32_t length(const frame& f) const noexcept { return f.len; }
    void drop(frame&) const noexcept { ++*dropped; }
    void on_wire(const frame& f, std::int64_t d, std::int64_t a, wire_fate w) const noexcept {
        if (seen != nullptr) { seen->push_back(wire_rec{f.id, d, a, w}); }
    }
};

TEST(sim_link, full_rx_ring_counts_drops_and_hands_them_back) {
    std::uint64_t dropped = 0;
    std::vector<wire_rec> seen;
    sim_link<frame, counting_traits> l{
        link_cfg{.rate = 10_Gbps, .prop_delay = 100_ns, .tx_ring_size = 16, .rx_ring_size = 4},
        counting_traits{&dropped, &seen}};
    std::vector<frame> in(10);
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = frame{i, 1226};
    }
    ASSERT_EQ(l.tx_burst(nanos{0}, in.data(), 10), 10u);
    // Nobody reads until every frame has arrived: 4 fit, 6 are dropped.
    EXPECT_EQ(l.deliver(nanos{20'000}), 4u);
    EXPECT_EQ(l.counters().rx_ring_full, 6u);
    EXPECT_EQ(dropped, 6u);
    // The capture hook saw every frame leave the wire, in order, with its
    // fate: 1250 B on the wire = 1000 ns each at 10 Gb/s, + 100 ns.
    ASSERT_EQ(seen.size(), 10u);
    for (std::uint64_t i = 0; i < 10; ++i) {
        EXPECT_EQ(seen[i].id, i);
        EXPECT_EQ(seen[i].depart, static_cast<std::int64_t>(1000 * (i + 1)));
        EXPECT_EQ(seen[i].arrive, seen[i].depart + 100);
        EXPECT_EQ(seen[i].fate, i < 4 ? wire_fate::delivered : wire_fate::rx_ring_full);
    }
    frame out[8];
    ASSERT_EQ(l.rx_burst(nanos{20'000}, out, 8), 4u);
    for (std::uint64_t i = 0; i < 4; ++i) {
        EXPECT_EQ(out[i].id, i);  // the first four, in arrival order
    }
    // Reading in between makes room: the RX ring is checked at each arrival.
    ASSERT_EQ(l.tx_burst(nanos{20'000}, in.data(), 6), 6u);  // arrive 21100, 22100, ... 26100
    EXPECT_EQ(l.deliver(nanos{23'100}), 3u);
    ASSERT_EQ(l.rx_burst(nanos{23'100}, out, 2), 2u);
    EXPECT_EQ(l.deliver(nanos{30'000}), 3u);  // 1 + 3 in a ring of 4
    EXPECT_EQ(l.counters().rx_ring_full, 6u);
    EXPECT_EQ(l.counters().delivered, 10u);
}

std::vector<std::uint64_t> lost_ids(double p, std::uint64_t seed, std::size_t n) {
    sim_link<frame> l{link_cfg{.rate = 100_Gbps, .prop_delay = 1_us, .loss = p, .loss_seed = seed}};
    const auto in = mixed_frames(n, 11, 64, 1500);
    const auto out = pump(l, in);
    std::vector<std::uint64_t> lost;
    std::size_t j = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (j < out.size() && out[j].id == i) {
            ++j;
        } else {
            lost.push_back(i);
        }
    }
    EXPECT_EQ(j, out.size());  // the delivered ones keep their order
    EXPECT_EQ(l.counters().lost, lost.size());
    EXPECT_EQ(l.counters().delivered + l.counters().lost, n);
    return lost;
}

TEST(sim_link, seeded_loss_replays_and_matches_p) {
    constexpr std::size_t n = 400'000;
    constexpr double p = 0.01;
    const auto a = lost_ids(p, 99, n);
    const auto b = lost_ids(p, 99, n);
    const auto c = lost_ids(p, 100, n);
    EXPECT_EQ(a, b);  // same seed, same dropped set
    EXPECT_NE(a, c);  // another seed, another set
    // Binomial(n, p): mean np = 4000, sd = sqrt(np(1-p)) = 62.9; allow 5 sd.
    const double sd = std::sqrt(n * p * (1 - p));
    for (const auto* v : {&a, &c}) {
        EXPECT_NEAR(static_cast<double>(v->size()), n * p, 5 * sd);
    }
    EXPECT_TRUE(lost_ids(0.0, 1, 10'000).empty());
    EXPECT_EQ(lost_ids(1.0, 1, 1'000).size(), 1'000u);
}

TEST(sim_link, port_wraps_both_directions) {
    sim_link<frame> ab{link_cfg{.rate = 10_Gbps, .prop_delay = 0_ns}};
    sim_link<frame> ba{link_cfg{.rate = 10_Gbps, .prop_delay = 0_ns}};
    sim_port<frame> a{&ab, &ba};
    sim_port<frame> b{&ba, &ab};
    sim_port<frame> none{};
    const frame f{5, 1226};
    EXPECT_EQ(a.tx_burst(nanos{0}, &f, 1), 1);
    EXPECT_EQ(b.next_arrival(), nanos{1000});
    EXPECT_EQ(a.next_arrival(), nanos::max());
    frame g;
    EXPECT_EQ(b.rx_burst(nanos{999}, &g, 1), 0);
    EXPECT_EQ(b.rx_burst(nanos{1000}, &g, 1), 1);
    EXPECT_EQ(g.id, 5u);
    EXPECT_EQ(none.tx_burst(nanos{0}, &f, 1), 0);
    EXPECT_EQ(none.rx_burst(nanos{0}, &g, 1), 0);
    EXPECT_EQ(none.tx_free_time(nanos{0}), nanos::max());
}

TEST(sim_link, bad_config_is_refused_with_a_reason) {
    EXPECT_EQ(link_cfg_error(link_cfg{.rate = 1_Gbps}), "");
    EXPECT_NE(link_cfg_error(link_cfg{}), "");
    EXPECT_NE(link_cfg_error(link_cfg{.rate = 1_Gbps, .loss = 1.5}), "");
    EXPECT_NE(link_cfg_error(link_cfg{.rate = 1_Gbps, .tx_ring_size = 0}), "");
    EXPECT_THROW(sim_link<frame>{link_cfg{}}, std::invalid_argument);
}

}  // namespace link_test
}  // namespace rocelab::sim
