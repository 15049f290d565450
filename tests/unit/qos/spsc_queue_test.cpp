// Unit tests for core/spsc_queue.hpp: bursts that do not fit, wrap-around,
// and a producer and a consumer thread moving 2 million items in random
// bursts (order and completeness checked item by item).
#include "core/spsc_queue.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "core/rng.hpp"

namespace rocelab {
namespace {

struct item {
    std::uint64_t seq = 0;
    std::uint32_t check = 0;
    std::uint32_t pad = 0;
};

TEST(spsc_queue, partial_bursts_and_wrap) {
    auto q = std::make_unique<spsc_queue<item, 8>>();
    item in[16];
    for (std::uint64_t i = 0; i < 16; ++i) { in[i].seq = i; }
    EXPECT_EQ(q->push_burst(in, 5), 5u);
    EXPECT_EQ(q->push_burst(in + 5, 5), 3u) << "takes what fits";
    EXPECT_EQ(q->size(), 8u);
    EXPECT_FALSE(q->push(in[8]));
    item out[16];
    EXPECT_EQ(q->pop_burst(out, 6), 6u);
    for (std::uint64_t i = 0; i < 6; ++i) { EXPECT_EQ(out[i].seq, i); }
    EXPECT_EQ(q->push_burst(in + 8, 6), 6u);  // wraps
    EXPECT_EQ(q->pop_burst(out, 16), 8u);
    const std::uint64_t want[] = {6, 7, 8, 9, 10, 11, 12, 13};
    for (std::size_t i = 0; i < 8; ++i) { EXPECT_EQ(out[i].seq, want[i]); }
    EXPECT_TRUE(q->empty());
    EXPECT_EQ(q->pop_burst(out, 4), 0u);
}

TEST(spsc_queue, two_threads_keep_order_and_lose_nothing) {
    constexpr std::uint64_t total = 2'000'000;
    auto q = std::make_unique<spsc_queue<item, 1024>>();
    std::thread prod([&] {
        rng r(7);
        item b[64];
        std::uint64_t next = 0;
        while (next < total) {
            const std::size_t n = std::min<std::uint64_t>(1 + r.next_u32() % 64, total - next);
            for (std::size_t i = 0; i < n; ++i) {
                b[i].seq = next + i;
                b[i].check = static_cast<std::uint32_t>((next + i) * 2654435761u);
            }
            std::size_t done = 0;
            while (done < n) { done += q->push_burst(b + done, n - done); }
            next += n;
        }
    });
    rng r(9);
    item b[64];
    std::uint64_t expect = 0;
    bool ok = true;
    while (expect < total && ok) {
        const std::size_t n = q->pop_burst(b, 1 + r.next_u32() % 64);
        for (std::size_t i = 0; i < n; ++i) {
            ok = ok && b[i].seq == expect && b[i].check == static_cast<std::uint32_t>(expect * 2654435761u);
            ++expect;
        }
    }
    prod.join();
    EXPECT_TRUE(ok) << "out of order or torn at item " << expect;
    EXPECT_EQ(expect, total);
    EXPECT_TRUE(q->empty());
}

}  // namespace
}  // namespace rocelab
