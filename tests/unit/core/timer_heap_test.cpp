// Unit tests for core/timer_heap.hpp against a reference model (a map of
// deadlines scanned linearly), over a seeded random mix of operations.
#include "core/timer_heap.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "core/rng.hpp"

namespace rocelab {
namespace {

TEST(timer_heap, order_ties_and_moves) {
    timer_heap h;
    h.reserve(4);
    EXPECT_TRUE(h.empty());
    EXPECT_EQ(h.top_time(), nanos::max());
    h.set(3, nanos{100});
    h.set(1, nanos{100});
    h.set(2, nanos{50});
    EXPECT_EQ(h.top_time(), nanos{50});
    EXPECT_EQ(h.top_id(), 2u);
    h.set(2, nanos{200});  // moved later
    std::vector<std::uint32_t> got;
    h.pop_due(nanos{150}, [&](std::uint32_t id) { got.push_back(id); });
    EXPECT_EQ(got, (std::vector<std::uint32_t>{1, 3}));  // ties by id
    EXPECT_EQ(h.size(), 1u);
    h.set(2, nanos::max());  // removes
    EXPECT_TRUE(h.empty());
    h.set(0, nanos{5});
    h.clear(0);
    h.clear(0);
    EXPECT_TRUE(h.empty());
    h.set(1, nanos{7});
    h.set(3, nanos{9});
    h.clear_all();
    EXPECT_TRUE(h.empty());
    EXPECT_EQ(h.time_of(1), nanos::max());
    h.set(3, nanos{4});  // an id cleared by clear_all is inserted anew, not moved
    EXPECT_EQ(h.size(), 1u);
    EXPECT_EQ(h.top_id(), 3u);
}

TEST(timer_heap, matches_a_reference_over_random_operations) {
    constexpr std::uint32_t n = 257;
    timer_heap h;
    h.reserve(n);
    std::map<std::uint32_t, std::int64_t> ref;
    rng r(42);
    std::int64_t now = 0;
    for (int step = 0; step < 200000; ++step) {
        const std::uint32_t id = r.next_u32() % n;
        const std::uint32_t op = r.next_u32() % 10;
        if (op < 6) {
            const std::int64_t t = now + static_cast<std::int64_t>(r.next_u32() % 1000);
            h.set(id, nanos{t});
            ref[id] = t;
        } else if (op < 8) {
            h.clear(id);
            ref.erase(id);
        } else if (r.next_u32() % 500 == 0) {  // now and then everything goes
            h.clear_all();
            ref.clear();
            for (std::uint32_t k = 0; k < n; ++k) { ASSERT_EQ(h.time_of(k), nanos::max()); }
        } else {
            now += static_cast<std::int64_t>(r.next_u32() % 300);
            std::vector<std::pair<std::int64_t, std::uint32_t>> want;
            for (const auto& [k, t] : ref) {
                if (t <= now) { want.emplace_back(t, k); }
            }
            std::sort(want.begin(), want.end());
            std::vector<std::pair<std::int64_t, std::uint32_t>> got;
            h.pop_due(nanos{now}, [&](std::uint32_t k) { got.emplace_back(ref[k], k); });
            ASSERT_EQ(got, want);
            for (const auto& [t, k] : want) { ref.erase(k); }
        }
        std::int64_t m = INT64_MAX;
        std::uint32_t mid = 0;  // the earliest's id, ties to the smaller (ref is ordered by id)
        for (const auto& [k, t] : ref) {
            if (t < m) {
                m = t;
                mid = k;
            }
        }
        ASSERT_EQ(h.top_time().v, ref.empty() ? nanos::max().v : m);
        if (!ref.empty()) { ASSERT_EQ(h.top_id(), mid); }
        ASSERT_EQ(h.size(), ref.size());
    }
}

}  // namespace
}  // namespace rocelab
