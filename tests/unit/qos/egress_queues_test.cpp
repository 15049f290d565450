// Unit tests for qos/egress_queues.hpp: limits, tail drop, counters, flush.
#include "qos/egress_queues.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

namespace rocelab {
namespace {

// A queued item: a value and the node the queues link it by.
struct item {
    int v = 0;
    queue_link<item*> link{};
};
using queues = egress_queues<item*, member_link>;

// Items 0..n-1 with v = i (stable addresses).
std::deque<item> items(int n) {
    std::deque<item> d(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) { d[static_cast<std::size_t>(i)].v = i; }
    return d;
}

std::array<queue_limits, 8> limits_all(std::uint64_t max_bytes, std::uint32_t max_packets) {
    std::array<queue_limits, 8> l{};
    for (auto& x : l) {
        x.max_bytes = bytes{max_bytes};
        x.max_packets = max_packets;
    }
    return l;
}

TEST(egress_queues, fifo_per_queue_and_nonempty_mask) {
    auto it = items(100);
    queues eq{limits_all(1 << 20, 16)};
    EXPECT_EQ(eq.nonempty_mask(), 0);
    EXPECT_TRUE(eq.enqueue(3, &it[30], 100));
    EXPECT_TRUE(eq.enqueue(3, &it[31], 200));
    EXPECT_TRUE(eq.enqueue(6, &it[60], 64));
    EXPECT_EQ(eq.nonempty_mask(), 0b0100'1000);
    EXPECT_EQ(eq.head_len(3), 100u);
    EXPECT_EQ(eq.head(3)->v, 30);
    EXPECT_EQ(eq.head_len(0), 0u);
    EXPECT_EQ(eq.depth_bytes(3), bytes{300});
    EXPECT_EQ(eq.depth_packets(3), 2u);
    auto e = eq.dequeue(3);
    EXPECT_EQ(e.item->v, 30);
    EXPECT_EQ(e.len, 100u);
    EXPECT_EQ(eq.depth_bytes(3), bytes{200});
    auto [x, len, tag] = eq.dequeue(3);
    EXPECT_EQ(x->v, 31);
    EXPECT_EQ(len, 200u);
    EXPECT_EQ(tag, 0u);
    EXPECT_EQ(eq.nonempty_mask(), 0b0100'0000);
    EXPECT_TRUE(eq.empty(3));
    const auto& st = eq.stats(3);
    EXPECT_EQ(st.enq_packets, 2u);
    EXPECT_EQ(st.enq_bytes, 300u);
    EXPECT_EQ(st.deq_packets, 2u);
    EXPECT_EQ(st.deq_bytes, 300u);
    EXPECT_EQ(st.depth_max_bytes, 300u);
    EXPECT_EQ(st.depth_max_packets, 2u);
}

TEST(egress_queues, tail_drop_on_byte_limit) {
    auto it = items(10);
    queues eq{limits_all(3000, 64)};
    EXPECT_TRUE(eq.enqueue(1, &it[0], 1500));
    EXPECT_TRUE(eq.enqueue(1, &it[1], 1500));  // exactly at the limit is allowed
    EXPECT_FALSE(eq.enqueue(1, &it[2], 1));    // would exceed
    EXPECT_FALSE(eq.enqueue(1, &it[3], 9000));
    EXPECT_EQ(eq.depth_bytes(1), bytes{3000});
    EXPECT_EQ(eq.stats(1).drop_tail_packets, 2u);
    EXPECT_EQ(eq.stats(1).drop_tail_bytes, 9001u);
    eq.dequeue(1);
    EXPECT_TRUE(eq.enqueue(1, &it[4], 1000));  // room again
    EXPECT_EQ(eq.stats(1).enq_packets, 3u);
    // other queues unaffected
    EXPECT_TRUE(eq.enqueue(2, &it[5], 3000));
    EXPECT_EQ(eq.stats(2).drop_tail_packets, 0u);
}

TEST(egress_queues, tail_drop_on_packet_limit) {
    auto it = items(32);
    std::array<queue_limits, 8> l = limits_all(1 << 20, 4);
    l[5].max_packets = 8;
    queues eq{l};
    for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(eq.enqueue(0, &it[static_cast<std::size_t>(i)], 64));
    }
    EXPECT_FALSE(eq.enqueue(0, &it[4], 64));
    EXPECT_EQ(eq.stats(0).drop_tail_packets, 1u);
    EXPECT_EQ(eq.stats(0).drop_tail_bytes, 64u);
    for (int i = 0; i < 8; ++i) {
        EXPECT_TRUE(eq.enqueue(5, &it[static_cast<std::size_t>(10 + i)], 64));
    }
    EXPECT_FALSE(eq.enqueue(5, &it[20], 64));
    EXPECT_EQ(eq.stats(5).drop_tail_packets, 1u);
    EXPECT_EQ(eq.stats(5).depth_max_packets, 8u);
    // lowering a limit at run time affects new arrivals only
    eq.set_limits(5, queue_limits{bytes{100}, 8});
    EXPECT_EQ(eq.depth_packets(5), 8u);
    eq.dequeue(5);
    EXPECT_FALSE(eq.enqueue(5, &it[21], 64));  // 7*64 + 64 > 100
}

// There is no ring of slots: with its limits lifted (as the switch lifts a
// lossless queue's) a queue holds every item it is given, a million here,
// and gives them back in order, interleaved with the other queues.
TEST(egress_queues, lifted_limits_hold_any_number_in_order) {
    constexpr int n = 1'000'000;
    auto it = items(n);
    queues eq{limits_all(~0ULL >> 1, ~0u)};
    for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(eq.enqueue(i % 3, &it[static_cast<std::size_t>(i)], 64 + static_cast<std::uint32_t>(i % 7),
                               static_cast<std::uint32_t>(i)));
    }
    EXPECT_EQ(eq.depth_packets(0) + eq.depth_packets(1) + eq.depth_packets(2), static_cast<std::uint32_t>(n));
    EXPECT_EQ(eq.stats(0).drop_tail_packets + eq.stats(1).drop_tail_packets + eq.stats(2).drop_tail_packets, 0u);
    std::array<int, 3> next{0, 1, 2};
    for (int k = 0; k < n; ++k) {
        const int q = k % 3 == 0 ? 2 : k % 3 == 1 ? 0 : 1;  // another order than the enqueues'
        if (eq.empty(q)) { continue; }
        const auto e = eq.dequeue(q);
        ASSERT_EQ(e.item->v, next[static_cast<std::size_t>(q)]);
        ASSERT_EQ(e.tag, static_cast<std::uint32_t>(e.item->v));
        ASSERT_EQ(e.len, 64u + static_cast<std::uint32_t>(e.item->v % 7));
        next[static_cast<std::size_t>(q)] += 3;
    }
    for (int q = 0; q < 3; ++q) {
        while (!eq.empty(q)) {
            ASSERT_EQ(eq.dequeue(q).item->v, next[static_cast<std::size_t>(q)]);
            next[static_cast<std::size_t>(q)] += 3;
        }
    }
    EXPECT_EQ(eq.nonempty_mask(), 0);
    EXPECT_EQ(eq.depth_bytes(0).v + eq.depth_bytes(1).v + eq.depth_bytes(2).v, 0u);
}

// An item dequeued can be queued again at once (its node is rewritten), and
// a queue that empties and refills keeps FIFO order.
TEST(egress_queues, requeue_after_dequeue_and_refill) {
    auto it = items(4);
    queues eq{limits_all(1 << 20, 16)};
    EXPECT_TRUE(eq.enqueue(2, &it[0], 100));
    EXPECT_TRUE(eq.enqueue(2, &it[1], 100));
    auto a = eq.dequeue(2);
    EXPECT_TRUE(eq.enqueue(2, a.item, 100));  // behind it[1]
    EXPECT_EQ(eq.dequeue(2).item->v, 1);
    EXPECT_EQ(eq.dequeue(2).item->v, 0);
    EXPECT_TRUE(eq.empty(2));
    EXPECT_TRUE(eq.enqueue(2, &it[3], 60));
    EXPECT_EQ(eq.head(2)->v, 3);
    EXPECT_EQ(eq.head_len(2), 60u);
    EXPECT_EQ(eq.dequeue(2).item->v, 3);
}

TEST(egress_queues, flush_drops_everything_and_counts) {
    auto it = items(64);
    queues eq{limits_all(1 << 20, 16)};
    for (int i = 0; i < 5; ++i) {
        eq.enqueue(4, &it[static_cast<std::size_t>(40 + i)], 100 + static_cast<std::uint32_t>(i),
                   0x500u + static_cast<std::uint32_t>(i));
    }
    eq.enqueue(3, &it[7], 64);
    std::vector<int> freed;
    std::vector<std::uint32_t> tags;
    std::uint64_t freed_bytes = 0;
    EXPECT_EQ(eq.flush(4,
                       [&](const auto& e) {
                           freed.push_back(e.item->v);
                           e.item->link = {};  // the caller may reuse the item at once
                           tags.push_back(e.tag);
                           freed_bytes += e.len;
                       }),
              5u);
    EXPECT_EQ(freed, (std::vector<int>{40, 41, 42, 43, 44}));
    EXPECT_EQ(tags, (std::vector<std::uint32_t>{0x500, 0x501, 0x502, 0x503, 0x504}));  // tags travel with items
    EXPECT_EQ(eq.dequeue(3).tag, 0u);
    EXPECT_EQ(freed_bytes, 510u);
    EXPECT_EQ(eq.depth_bytes(4), bytes{0});
    EXPECT_EQ(eq.nonempty_mask(), 0);
    EXPECT_EQ(eq.stats(4).drop_flush_packets, 5u);
    EXPECT_EQ(eq.stats(4).drop_flush_bytes, 510u);
    EXPECT_EQ(eq.stats(4).deq_packets, 0u);
    eq.reset_stats();
    EXPECT_EQ(eq.stats(4).enq_packets, 0u);
}

// observed_depth(), what other threads read (from the counters), equals the
// owner's depth after every operation: admits, tail drops, dequeues, a flush
// and a counter reset with frames still queued; a model deque is the oracle.
TEST(egress_queues, observed_depth_follows_every_operation) {
    auto it = items(400);
    queues eq{limits_all(20000, 40)};
    std::array<std::deque<std::uint32_t>, 8> model;
    auto check = [&](const char* what) {
        for (int q = 0; q < 8; ++q) {
            std::uint64_t b = 0;
            for (const std::uint32_t l : model[static_cast<std::size_t>(q)]) { b += l; }
            const auto d = eq.observed_depth(q);
            ASSERT_EQ(d.b.v, b) << what << " queue " << q;
            ASSERT_EQ(d.packets, model[static_cast<std::size_t>(q)].size()) << what << " queue " << q;
            ASSERT_EQ(eq.depth_bytes(q).v, b) << what << " queue " << q;
        }
    };
    std::uint32_t seed = 12345;
    auto rnd = [&] { return seed = seed * 1103515245u + 12345u, seed >> 8; };
    std::deque<item*> free_items;  // items not queued (at most 8 x 40 are)
    for (auto& x : it) { free_items.push_back(&x); }
    std::uint64_t tail_drops = 0;
    for (int step = 0; step < 3000; ++step) {
        const int q = static_cast<int>(rnd() % 8);
        auto& m = model[static_cast<std::size_t>(q)];
        if (rnd() % 3 != 0) {
            const std::uint32_t len = 64 + rnd() % 1500;
            item* x = free_items.front();
            free_items.pop_front();
            if (eq.enqueue(q, x, len)) {
                m.push_back(len);
            } else {
                ++tail_drops;
                free_items.push_back(x);
            }
        } else if (!m.empty()) {
            const auto e = eq.dequeue(q);
            EXPECT_EQ(e.len, m.front());
            m.pop_front();
            e.item->link = {};
            free_items.push_back(e.item);
        }
        if (step == 1500) {
            eq.reset_stats();
            check("after reset_stats");
        }
        if (step % 700 == 699) {
            eq.flush(q, [&](const auto& e) {
                e.item->link = {};
                free_items.push_back(e.item);
            });
            m.clear();
        }
        check("step");
    }
    EXPECT_GT(tail_drops, 0u);  // the limits were reached
}

// dequeue_run() is the loop of dequeue() calls it documents: two queues fed
// the same items, one drained by runs and one item by item, with random
// run lengths, stop conditions on the next head's length, and items the
// caller keeps or not (WRED drops in the switch), give the same items in the
// same order with the same lengths, tags and depths after each, and the same
// queue state and statistics after every run.
TEST(egress_queues, dequeue_run_is_the_loop_of_dequeues) {
    constexpr int n = 40'000;
    auto a_items = items(n);
    auto b_items = items(n);
    queues a{limits_all(1 << 20, 200)};
    queues b{limits_all(1 << 20, 200)};
    std::mt19937_64 rng(20261206);
    int next_in = 0;
    std::uint64_t runs = 0;
    std::uint64_t cut_by_more = 0;
    std::uint64_t not_kept = 0;
    struct got {
        int v;
        std::uint32_t len, tag;
        std::uint64_t depth;
        bool operator==(const got&) const = default;
    };
    std::vector<got> ga;
    std::vector<got> gb;
    for (int step = 0; step < 20'000; ++step) {
        // Enqueue a few (the same to both; tail drops alike).
        for (int k = static_cast<int>(rng() % 6); k > 0 && next_in < n; --k, ++next_in) {
            const int q = static_cast<int>(rng() % 8);
            const auto len = static_cast<std::uint32_t>(60 + rng() % 9000);
            const auto tag = static_cast<std::uint32_t>(rng());
            const auto i = static_cast<std::size_t>(next_in);
            ASSERT_EQ(a.enqueue(q, &a_items[i], len, tag), b.enqueue(q, &b_items[i], len, tag));
        }
        const int q = static_cast<int>(rng() % 8);
        if (a.empty(q)) {
            ASSERT_TRUE(b.empty(q));
            continue;
        }
        const auto max = static_cast<std::uint32_t>(1 + rng() % 40);
        const auto limit = static_cast<std::int64_t>(rng() % 40000);  // a DWRR deficit, say
        const std::uint64_t keep_seed = rng();
        // By runs.
        ga.clear();
        std::int64_t spent = 0;
        std::uint64_t kseed = keep_seed;
        const auto more_a = [&](std::uint32_t head_len) noexcept {
            const bool m = spent + static_cast<std::int64_t>(head_len) <= limit;
            cut_by_more += m ? 0 : 1;
            return m;
        };
        const auto r = a.dequeue_run(q, max, more_a,
                                     [&](item* x, std::uint32_t len, std::uint32_t tag, std::uint64_t depth) noexcept {
                                         ga.push_back({x->v, len, tag, depth});
                                         spent += len;
                                         kseed = kseed * 6364136223846793005ULL + 1;
                                         return (kseed >> 60) != 0;  // 1 in 16 not kept
                                     });
        // Item by item.
        gb.clear();
        spent = 0;
        kseed = keep_seed;
        std::uint32_t kept = 0;
        std::uint64_t bytes_out = 0;
        do {
            const auto e = b.dequeue(q);
            gb.push_back({e.item->v, e.len, e.tag, b.depth_bytes(q).v});
            spent += e.len;
            bytes_out += e.len;
            kseed = kseed * 6364136223846793005ULL + 1;
            if ((kseed >> 60) != 0) {
                ++kept;
            } else {
                ++not_kept;
            }
        } while (kept < max && !b.empty(q) && spent + static_cast<std::int64_t>(b.head_len(q)) <= limit);
        ASSERT_EQ(ga, gb) << "step " << step;
        ASSERT_EQ(r.items, gb.size());
        ASSERT_EQ(r.bytes, bytes_out);
        ++runs;
        ASSERT_EQ(a.nonempty_mask(), b.nonempty_mask());
        for (int j = 0; j < 8; ++j) {
            ASSERT_EQ(a.depth_bytes(j).v, b.depth_bytes(j).v);
            ASSERT_EQ(a.depth_packets(j), b.depth_packets(j));
            ASSERT_EQ(a.head_len(j), b.head_len(j));
            ASSERT_EQ(a.head(j) == nullptr ? -1 : a.head(j)->v, b.head(j) == nullptr ? -1 : b.head(j)->v);
            ASSERT_EQ(a.stats(j).deq_packets.load(), b.stats(j).deq_packets.load());
            ASSERT_EQ(a.stats(j).deq_bytes.load(), b.stats(j).deq_bytes.load());
        }
        // Both still append to the same tails (an emptied queue restarts).
        if (next_in < n && step % 7 == 0) {
            const auto i = static_cast<std::size_t>(next_in++);
            ASSERT_TRUE(a.enqueue(q, &a_items[i], 100, 1));
            ASSERT_TRUE(b.enqueue(q, &b_items[i], 100, 1));
        }
    }
    // Every way a run ends was taken.
    EXPECT_GT(runs, 5000u);
    EXPECT_GT(cut_by_more, 500u);
    EXPECT_GT(not_kept, 500u);
    for (int j = 0; j < 8; ++j) {  // drained to the end alike
        while (!a.empty(j)) {
            ASSERT_FALSE(b.empty(j));
            ASSERT_EQ(a.dequeue(j).item->v, b.dequeue(j).item->v);
        }
        ASSERT_TRUE(b.empty(j));
    }
}

}  // namespace
}  // namespace rocelab
