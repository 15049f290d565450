// fdb_test.cpp - learning FDB: learn/lookup/move/aging/flush/full table,
// driven by a manual clock.
#include "fwd/fdb.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <tuple>

#include "core/clock.hpp"
#include "core/rng.hpp"

using namespace rocelab;
using namespace rocelab::literals;

namespace {

std::array<std::uint8_t, 6> mac_n(std::uint32_t n) {
    return {0x02,
            0x00,
            static_cast<std::uint8_t>(n >> 24),
            static_cast<std::uint8_t>(n >> 16),
            static_cast<std::uint8_t>(n >> 8),
            static_cast<std::uint8_t>(n)};
}

}  // namespace

TEST(fdb, mac_classification) {
    const std::uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const std::uint8_t mc[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    const std::uint8_t uc[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    const std::uint8_t pause[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    const std::uint8_t lldp[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};
    const std::uint8_t not_reserved[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x10};
    EXPECT_TRUE(is_broadcast(bc));
    EXPECT_TRUE(is_multicast(bc));
    EXPECT_TRUE(is_multicast(mc));
    EXPECT_FALSE(is_broadcast(mc));
    EXPECT_FALSE(is_multicast(uc));
    EXPECT_TRUE(is_link_local_reserved(pause));
    EXPECT_TRUE(is_link_local_reserved(lldp));
    EXPECT_FALSE(is_link_local_reserved(not_reserved));
    EXPECT_FALSE(is_link_local_reserved(uc));
}

TEST(fdb, learn_and_lookup) {
    manual_clock clk;
    fdb t(1024, 300_s);
    const auto a = mac_n(1);
    const auto b = mac_n(2);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 0), -1);
    t.learn(clk.now(), a.data(), 0, 3);
    t.learn(clk.now(), b.data(), 0, 5);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 0), 3);
    EXPECT_EQ(t.lookup(clk.now(), b.data(), 0), 5);
    // Same MAC in another VLAN is a different station.
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 100), -1);
    t.learn(clk.now(), a.data(), 100, 7);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 100), 7);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 0), 3);
    EXPECT_EQ(t.size(), 3u);
    EXPECT_EQ(t.counters().learned, 3u);
    EXPECT_EQ(t.counters().hits, 4u);
    EXPECT_EQ(t.counters().misses, 2u);
    // Re-learning on the same port is neither a new entry nor a move.
    t.learn(clk.now(), a.data(), 0, 3);
    EXPECT_EQ(t.size(), 3u);
    EXPECT_EQ(t.counters().learned, 3u);
    EXPECT_EQ(t.counters().moved, 0u);
}

TEST(fdb, rejects_invalid_sources) {
    manual_clock clk;
    fdb t(16, 300_s);
    const std::uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const std::uint8_t mc[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
    const std::uint8_t zero[6] = {};
    t.learn(clk.now(), bc, 0, 1);
    t.learn(clk.now(), mc, 0, 1);
    t.learn(clk.now(), zero, 0, 1);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.counters().invalid_src, 3u);
}

TEST(fdb, station_move) {
    manual_clock clk;
    fdb t(64, 300_s);
    const auto a = mac_n(42);
    t.learn(clk.now(), a.data(), 10, 1);
    clk.advance(1_ms);
    t.learn(clk.now(), a.data(), 10, 2);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 10), 2);
    EXPECT_EQ(t.counters().moved, 1u);
    EXPECT_EQ(t.size(), 1u);
}

TEST(fdb, aging_on_lookup_and_refresh_threshold) {
    manual_clock clk;
    fdb t(64, 8_s);
    const auto a = mac_n(7);
    t.learn(clk.now(), a.data(), 0, 4);
    clk.set(8_s);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 0), 4) << "age == aging is not yet expired";
    clk.set(8_s + 2_us);
    EXPECT_EQ(t.lookup(clk.now(), a.data(), 0), -1) << "now - last_seen > aging";

    // A refresh inside aging/8 does not move last_seen; after it, it does.
    fdb u(64, 8_s);
    u.learn(nanos{0}, a.data(), 0, 4);
    u.learn(nanos{0} + 500_ms, a.data(), 0, 4);  // < 1 s: no write
    u.learn(nanos{0} + 2_s, a.data(), 0, 4);     // > 1 s: last_seen = 2 s
    EXPECT_EQ(u.lookup(nanos{0} + 10_s, a.data(), 0), 4);
    EXPECT_EQ(u.lookup(nanos{0} + 10_s + 2_us, a.data(), 0), -1);
    int seen = 0;
    u.for_each([&](const fdb_entry& e) {
        ++seen;
        EXPECT_EQ(e.mac, a);
        EXPECT_EQ(e.port, 4);
        EXPECT_LE(e.last_seen, 2_s);
        EXPECT_GT(e.last_seen, 2_s - 2_us);
    });
    EXPECT_EQ(seen, 1);
}

TEST(fdb, incremental_age_sweep) {
    manual_clock clk;
    fdb t(1000, 10_s);
    for (std::uint32_t i = 0; i < 500; ++i) {
        t.learn(clk.now(), mac_n(i).data(), 1, static_cast<std::uint16_t>(i % 8));
    }
    clk.set(5_s);
    for (std::uint32_t i = 500; i < 600; ++i) {
        t.learn(clk.now(), mac_n(i).data(), 1, 0);
    }
    EXPECT_EQ(t.size(), 600u);
    clk.set(12_s);  // the first 500 are expired, the last 100 are not
    std::size_t removed = 0;
    std::size_t calls = 0;
    while (calls * 4 < t.buckets()) {
        const std::size_t r = t.age(clk.now(), 4);
        removed += r;
        ++calls;
    }
    EXPECT_EQ(removed, 500u);
    EXPECT_EQ(t.size(), 100u);
    EXPECT_EQ(t.counters().aged, 500u);
    for (std::uint32_t i = 500; i < 600; ++i) {
        EXPECT_EQ(t.lookup(clk.now(), mac_n(i).data(), 1), 0);
    }
    EXPECT_EQ(t.age(clk.now(), t.buckets()), 0u);
}

TEST(fdb, flush_port) {
    manual_clock clk;
    fdb t(256, 300_s);
    for (std::uint32_t i = 0; i < 100; ++i) {
        t.learn(clk.now(), mac_n(i).data(), 0, static_cast<std::uint16_t>(i % 4));
    }
    EXPECT_EQ(t.flush_port(2), 25u);
    EXPECT_EQ(t.size(), 75u);
    for (std::uint32_t i = 0; i < 100; ++i) {
        EXPECT_EQ(t.lookup(clk.now(), mac_n(i).data(), 0), (i % 4 == 2) ? -1 : static_cast<int>(i % 4));
    }
    EXPECT_TRUE(t.remove(mac_n(0).data(), 0));
    EXPECT_FALSE(t.remove(mac_n(0).data(), 0));
    EXPECT_EQ(t.flush(), 74u);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.counters().flushed, 100u);
}

TEST(fdb, full_table_refuses_and_keeps_existing) {
    manual_clock clk;
    const std::size_t cap = 1000;
    fdb t(cap, 300_s);
    for (std::uint32_t i = 0; i < cap; ++i) {
        t.learn(clk.now(), mac_n(i).data(), 0, static_cast<std::uint16_t>(i & 0xff));
    }
    // Load up to capacity (~87% of slots) always fits with the cuckoo path search.
    EXPECT_EQ(t.size(), cap);
    EXPECT_EQ(t.counters().table_full, 0u);
    t.learn(clk.now(), mac_n(5000).data(), 0, 1);
    EXPECT_EQ(t.counters().table_full, 1u);
    EXPECT_EQ(t.lookup(clk.now(), mac_n(5000).data(), 0), -1);
    EXPECT_EQ(t.size(), cap);
    for (std::uint32_t i = 0; i < cap; ++i) {
        ASSERT_EQ(t.lookup(clk.now(), mac_n(i).data(), 0), static_cast<int>(i & 0xff)) << i;
    }
    // Once entries expire, learn reuses their slots.
    clk.set(301_s);
    t.learn(clk.now(), mac_n(5000).data(), 0, 1);
    EXPECT_EQ(t.lookup(clk.now(), mac_n(5000).data(), 0), 1);
}

TEST(fdb, cuckoo_high_load_randomised) {
    // Fill a table to its full capacity with random keys and check that no
    // entry is ever lost by cuckoo moves (model: std::set).
    manual_clock clk;
    rng r(99);
    const std::size_t cap = 3686;  // 1024 buckets x 4 ways: 90% of the slots
    fdb t(cap, 0_s);               // aging 0 = never expire
    ASSERT_EQ(t.buckets(), 1024u);
    std::set<std::tuple<std::uint64_t, std::uint16_t>> model;
    std::size_t refused = 0;
    while (model.size() + refused < cap) {
        const std::uint64_t x = r.next() & 0x0000fefffffffffeULL;  // unicast
        std::array<std::uint8_t, 6> m;
        for (int i = 0; i < 6; ++i) {
            m[i] = static_cast<std::uint8_t>(x >> (8 * (5 - i)));
        }
        if (is_zero_mac(m.data())) {
            continue;
        }
        const auto vid = static_cast<std::uint16_t>(r.next() & 0xfff);
        if (model.count({x, vid}) != 0) {
            continue;
        }
        const auto before = t.counters().table_full;
        t.learn(clk.now(), m.data(), vid, static_cast<std::uint16_t>(x & 0x3f));
        if (t.counters().table_full != before) {
            ++refused;
        } else {
            model.insert({x, vid});
        }
    }
    EXPECT_EQ(refused, 0u) << "4-way 2-choice cuckoo at <= 90% load should not refuse";
    EXPECT_EQ(t.size(), model.size());
    for (const auto& [x, vid] : model) {
        std::array<std::uint8_t, 6> m;
        for (int i = 0; i < 6; ++i) {
            m[i] = static_cast<std::uint8_t>(x >> (8 * (5 - i)));
        }
        ASSERT_EQ(t.lookup(clk.now(), m.data(), vid), static_cast<int>(x & 0x3f));
    }
    std::size_t n = 0;
    t.for_each([&](const fdb_entry&) { ++n; });
    EXPECT_EQ(n, model.size());
}
