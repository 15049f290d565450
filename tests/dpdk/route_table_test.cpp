// route_table_test.cpp - dpdk::route_table: fwd's route table on rte_lpm /
// rte_lpm6 (needs the EAL, see route_table_eal_env.cpp). The route table's
// cases (tests/unit/fwd/route_table_cases.hpp, run there on the reference
// LPM) again on dpdk::lpm; dpdk::lpm against the reference LPM on random
// rule sets; and its sizing rule against what rte_lpm really needs.
#include "route_lookup.hpp"

#include <gtest/gtest.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include <cstring>
#include <memory>
#include <vector>

#include "../unit/fwd/route_table_cases.hpp"
#include "core/rng.hpp"
#include "fwd/lpm_ref.hpp"

using namespace rocelab;
using namespace rocelab::route_test;

INSTANTIATE_TYPED_TEST_SUITE_P(rte, route_table_logic, ::testing::Types<dpdk::lpm>);

namespace {

// A random prefix of a random depth in [min_depth, max_depth], near `base`
// (its first byte) so that rules nest and share tbl8 groups.
ip_prefix random_prefix(rng& r, bool v6, unsigned min_depth, unsigned max_depth, std::uint8_t base) {
    ip_prefix p;
    p.v6 = v6;
    for (auto& b : p.addr) { b = static_cast<std::uint8_t>(r.next_u32()); }
    p.addr[0] = base;
    if (!v6) { std::fill(p.addr.begin() + 4, p.addr.end(), 0); }
    p.len = static_cast<std::uint8_t>(min_depth + r.next_u32() % (max_depth - min_depth + 1));
    return network_of(p);
}

std::vector<lpm_rule> random_rules(rng& r, bool v6, std::size_t n) {
    const unsigned full = v6 ? 128 : 32;
    std::vector<lpm_rule> rules;
    for (std::size_t i = 0; i < n; ++i) {
        rules.push_back({random_prefix(r, v6, 1, full, static_cast<std::uint8_t>(r.next_u32() % 4)),
                         r.next_u32() % lpm_value_limit});
    }
    // Some prefixes again with a new value: the later one must win.
    for (std::size_t i = 0; i < n / 8; ++i) {
        rules.push_back({rules[r.next_u32() % rules.size()].prefix, r.next_u32() % lpm_value_limit});
    }
    return rules;
}

// The rules into a new rte_lpm / rte_lpm6 of that many rules and tbl8
// groups: 0, or the first add's error.
int install_v4(std::span<const lpm_rule> rules, std::uint32_t max_rules, std::uint32_t tbl8s) {
    const rte_lpm_config c{max_rules, tbl8s, 0};
    rte_lpm* l = rte_lpm_create(("sz4_" + std::to_string(tbl8s)).c_str(), SOCKET_ID_ANY, &c);
    EXPECT_NE(l, nullptr) << rte_strerror(rte_errno);
    int rc = l == nullptr ? -rte_errno : 0;
    for (std::size_t i = 0; i < rules.size() && rc == 0; ++i) {
        const ip_prefix& p = rules[i].prefix;
        rc = rte_lpm_add(l, std::uint32_t{p.addr[0]} << 24 | std::uint32_t{p.addr[1]} << 16 |
                                std::uint32_t{p.addr[2]} << 8 | p.addr[3],
                         p.len, rules[i].value);
    }
    rte_lpm_free(l);
    return rc;
}

int install_v6(std::span<const lpm_rule> rules, std::uint32_t max_rules, std::uint32_t tbl8s) {
    const rte_lpm6_config c{max_rules, tbl8s, 0};
    rte_lpm6* l = rte_lpm6_create(("sz6_" + std::to_string(tbl8s)).c_str(), SOCKET_ID_ANY, &c);
    EXPECT_NE(l, nullptr) << rte_strerror(rte_errno);
    int rc = l == nullptr ? -rte_errno : 0;
    for (std::size_t i = 0; i < rules.size() && rc == 0; ++i) {
        rc = rte_lpm6_add(l, rules[i].prefix.addr.data(), rules[i].prefix.len, rules[i].value);
    }
    rte_lpm6_free(l);
    return rc;
}

}  // namespace

TEST(dpdk_lpm, agrees_with_the_reference_on_random_rules) {
    rng r(2024);
    const auto r4 = random_rules(r, false, 3000);
    const auto r6 = random_rules(r, true, 1000);
    const auto ref = built(lpm_ref::build(r4, r6));
    const auto rte = built(dpdk::lpm::build(r4, r6));
    std::vector<std::uint32_t> dst;
    for (int i = 0; i < 20000; ++i) {
        // Half inside a rule's prefix, half anywhere.
        std::uint32_t a = r.next_u32();
        if (i % 2 == 0) {
            const ip_prefix& p = r4[r.next_u32() % r4.size()].prefix;
            a = (std::uint32_t{p.addr[0]} << 24 | std::uint32_t{p.addr[1]} << 16 | std::uint32_t{p.addr[2]} << 8 |
                 p.addr[3]) ^ (r.next_u32() >> std::min<unsigned>(31, p.len));
        }
        dst.push_back(a);
        std::uint32_t want = 0;
        std::uint32_t got = 0;
        const bool hit = ref.lookup_v4(a, &want);
        ASSERT_EQ(rte.lookup_v4(a, &got), hit) << i;
        if (hit) { ASSERT_EQ(got, want) << i; }
    }
    std::vector<std::uint32_t> bulk(dst.size());
    for (std::size_t base = 0; base < dst.size(); base += 64) {
        rte.lookup_v4_bulk(dst.data() + base, bulk.data() + base,
                           static_cast<unsigned>(std::min<std::size_t>(64, dst.size() - base)));
    }
    for (std::size_t i = 0; i < dst.size(); ++i) {
        std::uint32_t want = lpm_miss;
        ref.lookup_v4(dst[i], &want);
        ASSERT_EQ(bulk[i], want) << i;
    }
    constexpr std::size_t n6 = 20000;
    const auto dst6 = std::make_unique<ip6_addr[]>(n6);
    for (int i = 0; i < 20000; ++i) {
        std::array<std::uint8_t, 16> a{};
        if (i % 2 == 0) {
            a = r6[r.next_u32() % r6.size()].prefix.addr;
            a[15 - r.next_u32() % 12] ^= static_cast<std::uint8_t>(1u << (r.next_u32() % 8));  // near it
        } else {
            a = random_prefix(r, true, 128, 128, static_cast<std::uint8_t>(r.next_u32() % 4)).addr;
        }
        std::uint32_t want = 0;
        std::uint32_t got = 0;
        const bool hit = ref.lookup_v6(a.data(), &want);
        ASSERT_EQ(rte.lookup_v6(a.data(), &got), hit) << i;
        if (hit) { ASSERT_EQ(got, want) << i; }
        std::memcpy(dst6[static_cast<std::size_t>(i)], a.data(), 16);
    }
    // The bulk lookup (rte_lpm6_lookup_bulk_func, in chunks of 64 inside)
    // gives the reference's value or lpm_miss for every address, whatever
    // the call's size.
    // Every 10th address moved out of every rule (the rules start with
    // bytes 0..3: no /1 covers 0xfe), so a burst mixes hits and misses.
    for (std::size_t i = 0; i < n6; i += 10) { dst6[i][0] = 0xfe; }
    std::vector<std::uint32_t> bulk6(n6, 0xdeadbeefu);
    std::size_t hits = 0;
    for (std::size_t base = 0; base < n6; base += 100) {
        rte.lookup_v6_bulk(dst6.get() + base, bulk6.data() + base, static_cast<unsigned>(std::min<std::size_t>(100, n6 - base)));
    }
    for (std::size_t i = 0; i < n6; ++i) {
        std::uint32_t want = lpm_miss;
        ref.lookup_v6(dst6[i], &want);
        ASSERT_EQ(bulk6[i], want) << i;
        hits += want != lpm_miss;
    }
    EXPECT_GT(hits, 5000u) << "half the addresses are near a rule";
    EXPECT_LE(hits, n6 - n6 / 10) << "every 10th address is in no rule";
    // No IPv6 rule at all: every address misses.
    const auto v4only = built(dpdk::lpm::build(r4, {}));
    std::vector<std::uint32_t> none(64, 0);
    v4only.lookup_v6_bulk(dst6.get(), none.data(), 64);
    for (const std::uint32_t v : none) { ASSERT_EQ(v, lpm_miss); }
}

// sizes_for's tbl8 count is exact: rte_lpm / rte_lpm6 take every rule with
// that many groups and refuse one of them with a group fewer.
TEST(dpdk_lpm, tbl8_groups_are_what_rte_lpm_needs) {
    rng r(7);
    const auto r4 = random_rules(r, false, 3000);
    const auto r6 = random_rules(r, true, 1000);
    const std::uint32_t g4 = dpdk::lpm::tbl8_groups(r4, 32);
    const std::uint32_t g6 = dpdk::lpm::tbl8_groups(r6, 128);
    ASSERT_GT(g4, dpdk::lpm::min_tbl8s);
    ASSERT_GT(g6, dpdk::lpm::min_tbl8s);
    const dpdk::lpm::sizes sz = dpdk::lpm::sizes_for(r4, r6);
    EXPECT_EQ(sz.v4_tbl8s, g4);
    EXPECT_EQ(sz.v6_tbl8s, g6);
    EXPECT_EQ(sz.v4_rules, r4.size());
    EXPECT_EQ(sz.v6_rules, r6.size());
    EXPECT_EQ(install_v4(r4, sz.v4_rules, g4), 0);
    EXPECT_LT(install_v4(r4, sz.v4_rules, g4 - 1), 0) << "one group fewer must not do";
    EXPECT_EQ(install_v6(r6, sz.v6_rules, g6), 0);
    EXPECT_LT(install_v6(r6, sz.v6_rules, g6 - 1), 0) << "one group fewer must not do";
    // Few rules: the minimums.
    const std::vector<lpm_rule> one = {{pfx("10.0.0.0", 8), 1}};
    const dpdk::lpm::sizes small = dpdk::lpm::sizes_for(one, {});
    EXPECT_EQ(small.v4_rules, dpdk::lpm::min_rules);
    EXPECT_EQ(small.v4_tbl8s, dpdk::lpm::min_tbl8s);
    EXPECT_EQ(small.v6_rules, 0u) << "no IPv6 table";
}
