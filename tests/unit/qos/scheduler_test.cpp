// Unit tests for qos/scheduler.hpp: strict priority, DWRR shares, pause, empty.
#include "qos/scheduler.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "core/bitops.hpp"
#include "core/rng.hpp"

namespace rocelab {
namespace {

scheduler_cfg all_dwrr(std::array<std::uint32_t, 8> w, std::uint64_t quantum = 1152) {
    scheduler_cfg c{};
    for (int q = 0; q < 8; ++q) {
        c.queues[q] = {sched_type::dwrr, w[q]};
    }
    c.quantum = bytes{quantum};
    return c;
}

// Always-backlogged queues whose head frame size is drawn from a seeded rng.
struct backlog {
    explicit backlog(std::uint64_t seed, std::uint32_t lo = 64, std::uint32_t hi = 9000) : r(seed), lo(lo), hi(hi) {
        for (auto& h : head) {
            h = draw();
        }
    }
    std::uint32_t draw() { return lo + static_cast<std::uint32_t>(r.next() % (hi - lo + 1)); }
    std::uint32_t pop(int q) {
        const std::uint32_t len = head[q];
        head[q] = draw();
        return len;
    }
    rng r;
    std::uint32_t lo;
    std::uint32_t hi;
    std::array<std::uint32_t, 8> head{};
};

TEST(scheduler, strict_higher_index_first_and_before_dwrr) {
    scheduler_cfg c = all_dwrr({1, 1, 1, 1, 1, 1, 1, 1});
    c.queues[5].type = sched_type::strict;
    c.queues[6].type = sched_type::strict;
    c.queues[2].type = sched_type::strict;
    scheduler s{c};
    auto hl = [](int) { return 1500u; };
    EXPECT_EQ(s.pick(0xff, hl), 6);
    EXPECT_EQ(s.pick(0b1011'1111, hl), 5);
    EXPECT_EQ(s.pick(0b1001'1111, hl), 2);
    EXPECT_EQ(s.pick(0b0000'0100, hl), 2);
    const int d = s.pick(0b1001'1011, hl);  // no strict eligible: a DWRR queue
    EXPECT_NE(d, 2);
    EXPECT_NE(d, 5);
    EXPECT_NE(d, 6);
    EXPECT_EQ(s.pick(0, hl), -1);
    // Serving strict queues repeatedly never lets DWRR in.
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(s.pick(0xff, hl), 6);
        s.charge(6, 9000);
    }
    EXPECT_EQ(s.strict_mask(), 0b0110'0100);
    EXPECT_EQ(s.dwrr_mask(), 0b1001'1011);
}

TEST(scheduler, azure_roce_defaults) {
    scheduler s{azure_roce_scheduler()};
    EXPECT_EQ(s.strict_mask(), 0b0100'0000);
    EXPECT_EQ(s.quantum(3), 15 * 1152);
    EXPECT_EQ(s.quantum(0), 14 * 1152);
    EXPECT_EQ(s.pick(0xff, [](int) { return 64u; }), 6);  // CNP queue first
}

// Measure byte shares of backlogged DWRR queues over n dequeues.
std::array<double, 8> measure_shares(scheduler& s, backlog& b, std::uint8_t eligible, int n) {
    std::array<std::uint64_t, 8> sent{};
    std::uint64_t total = 0;
    for (int i = 0; i < n; ++i) {
        const int q = s.pick(eligible, [&](int j) { return b.head[j]; });
        EXPECT_GE(q, 0);
        EXPECT_TRUE((eligible >> q) & 1u);
        const std::uint32_t len = b.pop(q);
        s.charge(q, len);
        sent[q] += len;
        total += len;
    }
    std::array<double, 8> share{};
    for (int q = 0; q < 8; ++q) {
        share[q] = static_cast<double>(sent[q]) / static_cast<double>(total);
    }
    return share;
}

TEST(scheduler, dwrr_byte_shares_follow_weights_1_2_5) {
    for (std::uint64_t quantum : {64u, 1152u, 9216u}) {
        scheduler s{all_dwrr({1, 2, 5, 1, 1, 1, 1, 1}, quantum)};
        backlog b{42 + quantum};
        const auto share = measure_shares(s, b, 0b0000'0111, 100000);
        EXPECT_NEAR(share[0] / (1.0 / 8), 1.0, 0.02) << "quantum " << quantum;
        EXPECT_NEAR(share[1] / (2.0 / 8), 1.0, 0.02) << "quantum " << quantum;
        EXPECT_NEAR(share[2] / (5.0 / 8), 1.0, 0.02) << "quantum " << quantum;
    }
}

TEST(scheduler, dwrr_shares_beside_a_strict_queue) {
    scheduler s{azure_roce_scheduler()};
    backlog b{7};
    // queues 1 (w14), 3 (w15), 4 (w15) backlogged; strict 6 idle.
    const auto share = measure_shares(s, b, 0b0001'1010, 100000);
    EXPECT_NEAR(share[1] / (14.0 / 44), 1.0, 0.02);
    EXPECT_NEAR(share[3] / (15.0 / 44), 1.0, 0.02);
    EXPECT_NEAR(share[4] / (15.0 / 44), 1.0, 0.02);
}

TEST(scheduler, paused_queue_is_skipped_and_share_recovers) {
    scheduler s{all_dwrr({1, 1, 3, 1, 1, 1, 1, 1})};
    backlog b{99};
    const std::uint64_t max_frame = 9000;
    std::array<std::uint64_t, 8> sent{};
    std::uint64_t total = 0;
    for (int phase = 0; phase < 200; ++phase) {
        // Alternate: queue 2 paused for 37 picks, then free for 500 picks.
        const bool paused = phase % 2 == 0;
        const int picks = paused ? 37 : 500;
        const std::uint8_t nonempty = 0b0000'0111;
        const std::uint8_t pmask = paused ? 0b0000'0100 : 0;
        for (int i = 0; i < picks; ++i) {
            const int q = s.pick(nonempty, pmask, [&](int j) { return b.head[j]; });
            ASSERT_GE(q, 0);
            if (paused) {
                ASSERT_NE(q, 2);
            }
            const std::uint32_t len = b.pop(q);
            s.charge(q, len);
            // deficit of a skipped queue stays bounded: no hoarding
            ASSERT_LE(s.deficit(2), s.quantum(2) + static_cast<std::int64_t>(max_frame));
            ASSERT_GE(s.deficit(2), 0);
            if (!paused) {
                sent[q] += len;
                total += len;
            }
        }
    }
    // Over the unpaused phases the shares are the weights again (1:1:3).
    EXPECT_NEAR(static_cast<double>(sent[0]) / total / 0.2, 1.0, 0.03);
    EXPECT_NEAR(static_cast<double>(sent[1]) / total / 0.2, 1.0, 0.03);
    EXPECT_NEAR(static_cast<double>(sent[2]) / total / 0.6, 1.0, 0.03);
}

TEST(scheduler, empty_queue_loses_its_deficit) {
    scheduler s{all_dwrr({10, 1, 1, 1, 1, 1, 1, 1})};  // quantum(0) = 11520
    std::array<std::uint32_t, 8> head{};
    head.fill(1000);
    auto hl = [&](int q) { return head[q]; };
    // Queue 0 alone, one 64 B frame, then empty.
    head[0] = 64;
    EXPECT_EQ(s.pick(0b01, 0, hl), 0);
    s.charge(0, 64);
    EXPECT_EQ(s.deficit(0), 11520 - 64);
    // Queue 0 now empty, queue 1 backlogged: the 3-argument pick resets q0.
    EXPECT_EQ(s.pick(0b10, 0, hl), 1);
    EXPECT_EQ(s.deficit(0), 0);
    s.charge(1, 1000);
    // A paused (non-empty) queue keeps its deficit.
    head[0] = 9000;
    EXPECT_EQ(s.pick(0b11, 0, hl), 0);
    s.charge(0, 9000);
    const std::int64_t kept = s.deficit(0);
    EXPECT_EQ(kept, 11520 - 9000);
    EXPECT_EQ(s.pick(0b11, 0b01, hl), 1);
    EXPECT_EQ(s.deficit(0), kept);
    // on_empty() does the same explicitly (for the 2-argument pick).
    s.on_empty(0);
    EXPECT_EQ(s.deficit(0), 0);
}

// Reference DRR without the closed-form fast-forward: one quantum per visit.
struct naive_drr {
    explicit naive_drr(const scheduler_cfg& c) {
        for (int q = 0; q < 8; ++q) {
            if (c.queues[q].type == sched_type::strict) {
                strict |= static_cast<std::uint8_t>(1u << q);
            } else {
                dwrr |= static_cast<std::uint8_t>(1u << q);
                quantum[q] = static_cast<std::int64_t>(c.quantum.v * c.queues[q].weight);
            }
        }
    }
    template <typename H>
    int pick(std::uint8_t nonempty, std::uint8_t paused, H&& h) {
        for (int q = 0; q < 8; ++q) {
            if (((nonempty >> q) & 1u) == 0) {
                deficit[q] = 0;
            }
        }
        const std::uint8_t el = nonempty & ~paused;
        if ((el & strict) != 0) {
            return highest_bit(el & strict);
        }
        const std::uint8_t dw = el & dwrr;
        if (dw == 0) {
            return -1;
        }
        if (in_turn && ((dw >> cur) & 1u) && deficit[cur] >= h(cur)) {
            return cur;
        }
        int q = cur;
        for (;;) {
            q = next_bit_after(q, dw);
            deficit[q] += quantum[q];
            if (deficit[q] >= h(q)) {
                cur = q;
                in_turn = true;
                return q;
            }
        }
    }
    void charge(int q, std::uint32_t len) {
        if (quantum[q] != 0) {
            deficit[q] -= len;
        }
    }
    std::array<std::int64_t, 8> deficit{};
    std::array<std::int64_t, 8> quantum{};
    std::uint8_t strict = 0;
    std::uint8_t dwrr = 0;
    int cur = 7;
    bool in_turn = false;
};

TEST(scheduler, matches_reference_drr_with_random_pause_and_empty) {
    scheduler_cfg c = all_dwrr({1, 3, 2, 7, 1, 5, 1, 2}, 16);  // tiny quantum: many fruitless rounds
    c.queues[7].type = sched_type::strict;
    scheduler s{c};
    naive_drr ref{c};
    rng r{2024};
    std::array<std::uint32_t, 8> head{};
    std::array<int, 8> backlog_pkts{};
    for (int step = 0; step < 200000; ++step) {
        for (int q = 0; q < 8; ++q) {
            if (backlog_pkts[q] == 0 && r.next() % 16 == 0) {
                backlog_pkts[q] = 1 + static_cast<int>(r.next() % 50);
                head[q] = 64 + static_cast<std::uint32_t>(r.next() % 9153);
            }
        }
        std::uint8_t nonempty = 0;
        for (int q = 0; q < 8; ++q) {
            if (backlog_pkts[q] > 0) {
                nonempty |= static_cast<std::uint8_t>(1u << q);
            }
        }
        const std::uint8_t paused = static_cast<std::uint8_t>(r.next() % 4 == 0 ? r.next() : 0);
        auto hl = [&](int q) { return head[q]; };
        const int a = s.pick(nonempty, paused, hl);
        const int b = ref.pick(nonempty, paused, hl);
        ASSERT_EQ(a, b) << "step " << step;
        if (a < 0) {
            continue;
        }
        s.charge(a, head[a]);
        ref.charge(a, head[a]);
        --backlog_pkts[a];
        head[a] = 64 + static_cast<std::uint32_t>(r.next() % 9153);
        for (int q = 0; q < 8; ++q) {
            ASSERT_EQ(s.deficit(q), ref.deficit[q]) << "step " << step << " q " << q;
        }
    }
}

TEST(scheduler, reconfigure_changes_types_and_weights) {
    scheduler s{all_dwrr({1, 1, 1, 1, 1, 1, 1, 1})};
    scheduler_cfg c = all_dwrr({1, 1, 1, 1, 1, 1, 1, 1});
    c.queues[0].type = sched_type::strict;
    s.reconfigure(c);
    EXPECT_EQ(s.pick(0xff, [](int) { return 64u; }), 0);
    c.queues[0] = {sched_type::dwrr, 0};  // weight 0 treated as 1
    s.reconfigure(c);
    EXPECT_EQ(s.quantum(0), 1152);
}

}  // namespace
}  // namespace rocelab
