// route_table_test.cpp - the route table (fwd/route_table.hpp) on the
// reference LPM, without EAL: the shared cases of route_table_cases.hpp
// (tests/dpdk runs them again on rte_lpm), the plan's rules, and lpm_ref.
#include "fwd/route_table.hpp"

#include <gtest/gtest.h>

#include "fwd/lpm_ref.hpp"
#include "route_table_cases.hpp"

using namespace rocelab;
using namespace rocelab::route_test;

INSTANTIATE_TYPED_TEST_SUITE_P(ref, route_table_logic, ::testing::Types<lpm_ref>);

TEST(lpm_ref, longest_prefix_and_later_rule_of_a_prefix_wins) {
    const std::vector<lpm_rule> r4 = {{pfx("10.0.0.0", 8), 1}, {pfx("10.1.0.0", 16), 2}, {pfx("10.0.0.0", 8), 3}};
    const std::vector<lpm_rule> r6 = {{pfx("fc00::", 7), 4}, {pfx("fc00::1", 128), 5}};
    const lpm_ref t = built(lpm_ref::build(r4, r6));
    EXPECT_EQ(t.rules_v4(), 2u) << "the second 10/8 replaced the first";
    std::uint32_t v = 0;
    ASSERT_TRUE(t.lookup_v4(v4("10.2.3.4"), &v));
    EXPECT_EQ(v, 3u);
    ASSERT_TRUE(t.lookup_v4(v4("10.1.3.4"), &v));
    EXPECT_EQ(v, 2u);
    EXPECT_FALSE(t.lookup_v4(v4("11.0.0.1"), &v));
    ASSERT_TRUE(t.lookup_v6(v6("fd00::9").data(), &v));
    EXPECT_EQ(v, 4u);
    ASSERT_TRUE(t.lookup_v6(v6("fc00::1").data(), &v));
    EXPECT_EQ(v, 5u);
    EXPECT_FALSE(t.lookup_v6(v6("fe80::1").data(), &v));
    const std::uint32_t dst[3] = {v4("10.1.0.0"), v4("1.1.1.1"), v4("10.255.255.255")};
    std::uint32_t out[3];
    t.lookup_v4_bulk(dst, out, 3);
    EXPECT_EQ(out[0], 2u);
    EXPECT_EQ(out[1], lpm_miss);
    EXPECT_EQ(out[2], 3u);
}

TEST(lpm_ref, refuses_depth_zero_and_values_out_of_range) {
    const std::vector<lpm_rule> zero = {{pfx("0.0.0.0", 0), 1}};
    EXPECT_TRUE(std::holds_alternative<std::string>(lpm_ref::build(zero, {})));
    const std::vector<lpm_rule> big = {{pfx("fc00::", 7), lpm_value_limit}};
    EXPECT_TRUE(std::holds_alternative<std::string>(lpm_ref::build({}, big)));
}

TEST(route_plan, rules_in_priority_order_per_family) {
    auto p = route_plan::make(lab_cfg().sources());
    ASSERT_TRUE(std::holds_alternative<route_plan>(p)) << std::get<std::string>(p);
    const route_plan& plan = std::get<route_plan>(p);
    // v4: 3 connected, 3 local, 3 neighbour host routes, 3 routes (0/0 apart).
    EXPECT_EQ(plan.rules_v4.size(), 3u + 3u + 3u + 3u);
    // v6: 1 connected, 1 local, 1 neighbour, 1 route.
    EXPECT_EQ(plan.rules_v6.size(), 4u);
    EXPECT_EQ(plan.conn.size(), 3u);
    EXPECT_EQ(plan.routes.size(), 13u + 4u) << "every prefix once (0/0 too), v4 and v6";
    // The local /32 comes after the connected /31 and the neighbour /32s: it wins at equal prefix.
    EXPECT_EQ(plan.rules_v4.back().prefix.len, 32);
    EXPECT_EQ(plan.rules_v4.back().value, route_value::local);
    for (const lpm_rule& r : plan.rules_v4) {
        EXPECT_EQ(network_of(r.prefix).addr, r.prefix.addr) << "host bits zero";
        EXPECT_GE(r.prefix.len, 1) << "a default route stays out of the LPM";
    }
}

TEST(route_plan, default_route_stays_out_of_the_lpm) {
    lab c = lab_cfg();
    auto p = route_plan::make(c.sources());
    ASSERT_TRUE(std::holds_alternative<route_plan>(p));
    const std::uint32_t def4 = std::get<route_plan>(p).default_v4;
    EXPECT_LT(def4, route_value::special_base) << "0.0.0.0/0's next-hop group";
    EXPECT_EQ(std::get<route_plan>(p).nht.group_at(def4).n, 2) << "over two next hops";
    EXPECT_EQ(std::get<route_plan>(p).default_v6, route_value::no_route) << "no ::/0";
    c.routes.push_back({pfx("::", 0), {nh("fc00::", "Ethernet0")}});
    p = route_plan::make(c.sources());
    ASSERT_TRUE(std::holds_alternative<route_plan>(p));
    EXPECT_LT(std::get<route_plan>(p).default_v6, route_value::special_base);
    for (const lpm_rule& r : std::get<route_plan>(p).rules_v6) { EXPECT_GE(r.prefix.len, 1); }
    // A connected 0.0.0.0/0 (an address with a /0) yields to a static default route, as at any prefix.
    c.ports[1].addresses.push_back(pfx("172.20.0.1", 0));
    p = route_plan::make(c.sources());
    ASSERT_TRUE(std::holds_alternative<route_plan>(p));
    EXPECT_EQ(std::get<route_plan>(p).default_v4, def4);
    c.routes.erase(c.routes.begin());
    p = route_plan::make(c.sources());
    ASSERT_TRUE(std::holds_alternative<route_plan>(p));
    EXPECT_EQ(std::get<route_plan>(p).default_v4, route_value::connected + 1);
}
