// Unit tests for sim/event_queue.hpp: (time, seq) order, tie-breaking,
// reschedule and cancel, against a brute-force reference model.
#include "sim/event_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/rng.hpp"

namespace rocelab::sim {
namespace {

TEST(event_queue, pops_in_time_order) {
    event_queue q{4};
    q.schedule(0, nanos{300});
    q.schedule(1, nanos{100});
    q.schedule(2, nanos{400});
    q.schedule(3, nanos{200});
    EXPECT_EQ(q.size(), 4u);
    EXPECT_EQ(q.next_time(), nanos{100});
    std::vector<std::uint32_t> order;
    while (!q.empty()) {
        order.push_back(q.pop().slot);
    }
    EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 0, 2}));
    EXPECT_EQ(q.next_time(), nanos::max());
}

TEST(event_queue, same_time_pops_in_insertion_order) {
    event_queue q{10};
    // Slot numbers deliberately not in insertion order.
    for (std::uint32_t s : {7u, 2u, 9u, 0u, 5u}) {
        q.schedule(s, nanos{50});
    }
    std::vector<std::uint32_t> order;
    while (!q.empty()) {
        order.push_back(q.pop().slot);
    }
    EXPECT_EQ(order, (std::vector<std::uint32_t>{7, 2, 9, 0, 5}));
}

TEST(event_queue, reschedule_takes_a_new_place_same_time_keeps_it) {
    event_queue q{3};
    q.schedule(0, nanos{10});
    q.schedule(1, nanos{10});
    q.schedule(2, nanos{10});
    q.schedule(0, nanos{10});  // same time: no-op, 0 stays first
    q.schedule(1, nanos{20});  // moved later ...
    q.schedule(1, nanos{10});  // ... and back: now the last one at 10
    EXPECT_EQ(q.pop().slot, 0u);
    EXPECT_EQ(q.pop().slot, 2u);
    EXPECT_EQ(q.pop().slot, 1u);
    EXPECT_TRUE(q.empty());
}

TEST(event_queue, cancel_and_time_of) {
    event_queue q{3};
    q.schedule(0, nanos{5});
    q.schedule(1, nanos{7});
    EXPECT_TRUE(q.scheduled(1));
    EXPECT_EQ(q.time_of(1), nanos{7});
    q.cancel(1);
    q.cancel(2);  // not scheduled: no-op
    EXPECT_FALSE(q.scheduled(1));
    EXPECT_EQ(q.time_of(1), nanos::max());
    EXPECT_EQ(q.size(), 1u);
    EXPECT_EQ(q.pop().slot, 0u);
    EXPECT_TRUE(q.empty());
}

// Random schedule/cancel/pop against a reference that scans every slot for
// the minimum (time, seq); the sequence numbers are the reference's own.
TEST(event_queue, matches_reference_model_random_ops) {
    constexpr std::uint32_t slots = 64;
    event_queue q{slots};
    struct ref_entry {
        bool on = false;
        std::int64_t t = 0;
        std::uint64_t seq = 0;
    };
    std::vector<ref_entry> ref(slots);
    std::uint64_t seq = 0;
    rng r{42};
    std::uint64_t pops = 0;
    for (int op = 0; op < 200000; ++op) {
        const std::uint64_t x = r.next();
        const auto slot = static_cast<std::uint32_t>(x % slots);
        const std::int64_t t = static_cast<std::int64_t>((x >> 8) % 50);  // many ties
        switch ((x >> 40) % 4) {
            case 0:
            case 1:
                q.schedule(slot, nanos{t});
                if (!ref[slot].on || ref[slot].t != t) {
                    ref[slot] = ref_entry{true, t, seq++};
                }
                break;
            case 2:
                q.cancel(slot);
                ref[slot].on = false;
                break;
            default: {
                int best = -1;
                for (std::uint32_t s = 0; s < slots; ++s) {
                    if (ref[s].on && (best < 0 || ref[s].t < ref[best].t ||
                                      (ref[s].t == ref[best].t && ref[s].seq < ref[best].seq))) {
                        best = static_cast<int>(s);
                    }
                }
                if (best < 0) {
                    ASSERT_TRUE(q.empty());
                    break;
                }
                ASSERT_FALSE(q.empty());
                const event e = q.pop();
                ASSERT_EQ(e.slot, static_cast<std::uint32_t>(best)) << "op " << op;
                ASSERT_EQ(e.time.v, ref[best].t);
                ref[best].on = false;
                ++pops;
            }
        }
        std::size_t on = 0;
        for (const auto& e : ref) {
            on += e.on ? 1 : 0;
        }
        ASSERT_EQ(q.size(), on);
    }
    EXPECT_GT(pops, 10000u);
}

}  // namespace
}  // namespace rocelab::sim
