// route_table_cases.hpp - the route table's behaviour (fwd/route_table.hpp),
// as a typed test suite over the LPM it is built on. Instantiated twice:
// on the reference LPM in tests/unit/fwd/route_table_test.cpp (no EAL) and
// on rte_lpm / rte_lpm6 (dpdk::lpm) in tests/dpdk/route_table_test.cpp, so
// the same cases hold for the table the data path runs.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fwd/ecmp.hpp"
#include "fwd/route_table.hpp"

namespace rocelab::route_test {

inline ip_prefix pfx(const char* s, int len) {
    ip_prefix p;
    p.len = static_cast<std::uint8_t>(len);
    if (inet_pton(AF_INET, s, p.addr.data()) != 1) {
        p.v6 = true;
        EXPECT_EQ(inet_pton(AF_INET6, s, p.addr.data()), 1) << s;
    }
    return p;
}

inline std::uint32_t v4(const char* s) {
    std::uint8_t b[4];
    EXPECT_EQ(inet_pton(AF_INET, s, b), 1);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

inline std::array<std::uint8_t, 16> v6(const char* s) {
    std::array<std::uint8_t, 16> a{};
    EXPECT_EQ(inet_pton(AF_INET6, s, a.data()), 1);
    return a;
}

// The T of a build's std::variant<T, std::string>; a failed build fails the
// test and stops it.
template <typename T>
T built(std::variant<T, std::string>&& r) {
    if (auto* e = std::get_if<std::string>(&r)) {
        ADD_FAILURE() << *e;
        std::abort();
    }
    return std::move(std::get<T>(r));
}

inline const mac_addr mac_a{0x52, 0x54, 0, 0, 0, 0x0a};
inline const mac_addr mac_b{0x52, 0x54, 0, 0, 0, 0x0b};
inline const mac_addr mac_c{0x52, 0x54, 0, 0, 0, 0x0c};

inline nexthop_cfg nh(const char* a, const char* ifname) {
    nexthop_cfg h;
    h.addr = pfx(a, std::strchr(a, ':') ? 128 : 32);
    h.ifname = ifname;
    return h;
}

// What route_sources points at, owned.
struct lab {
    std::vector<route_port> ports;
    std::vector<neigh_cfg> neighbors;
    std::vector<route_cfg> routes;
    bool dynamic = true;

    route_sources sources() const { return route_sources{ports, neighbors, routes, dynamic}; }
};

// Three ports (DPDK ids 5, 6, 7), IPv4 and IPv6 neighbours, a default
// route over two next hops and nested static routes.
inline lab lab_cfg() {
    lab c;
    c.ports = {
        {"Ethernet0", {pfx("10.0.0.1", 31), pfx("fc00::1", 127)}, {0x02, 0, 0, 0, 0, 0x10}, 5},
        {"Ethernet4", {pfx("10.0.0.3", 31)}, {0x02, 0, 0, 0, 0, 0x14}, 6},
        {"Ethernet8", {pfx("10.0.1.1", 24)}, {0x02, 0, 0, 0, 0, 0x18}, 7},
    };
    c.neighbors = {
        {"Ethernet0", pfx("10.0.0.0", 32), mac_a},
        {"Ethernet4", pfx("10.0.0.2", 32), mac_b},
        {"Ethernet8", pfx("10.0.1.5", 32), mac_c},
        {"Ethernet0", pfx("fc00::", 128), mac_a},
    };
    c.routes = {
        {pfx("0.0.0.0", 0), {nh("10.0.0.0", "Ethernet0"), nh("10.0.0.2", "Ethernet4")}},
        {pfx("192.168.0.0", 16), {nh("10.0.0.0", "Ethernet0")}},
        {pfx("192.168.1.0", 24), {nh("10.0.0.2", "Ethernet4")}},
        {pfx("192.168.1.128", 25), {nh("10.0.1.5", "")}},
        {pfx("2001:db8::", 32), {nh("fc00::", "Ethernet0")}},
    };
    return c;
}

template <typename Lpm>
class route_table_logic : public ::testing::Test {
protected:
    using table = basic_route_table<Lpm>;

    static table must_build(const lab& c) { return built(table::build(c.sources())); }
    static std::string build_error(const lab& c) {
        auto r = table::build(c.sources());
        auto* e = std::get_if<std::string>(&r);
        return e ? *e : std::string("<built>");
    }
    // Egress port index on success, else the negative lookup result.
    static int fwd_v4(const table& t, std::uint32_t dst, std::uint32_t h, const nexthop** out) {
        const int rc = t.lookup_v4(dst, h, out);
        return rc == route_ok ? (*out)->port : rc;
    }
    static int fwd_v6(const table& t, const std::uint8_t* dst, std::uint32_t h, const nexthop** out) {
        const int rc = t.lookup_v6(dst, h, out);
        return rc == route_ok ? (*out)->port : rc;
    }
};

TYPED_TEST_SUITE_P(route_table_logic);

TYPED_TEST_P(route_table_logic, longest_prefix_wins) {
    const auto t = this->must_build(lab_cfg());
    const auto& ports = lab_cfg().ports;
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v4(t, v4("192.168.1.200"), 0, &out), 2);
    EXPECT_EQ(out->dst_mac, mac_c);
    EXPECT_EQ(out->port_id, 7);
    EXPECT_EQ(out->src_mac, ports[2].mac);
    EXPECT_EQ(this->fwd_v4(t, v4("192.168.1.5"), 0, &out), 1);
    EXPECT_EQ(out->dst_mac, mac_b);
    EXPECT_EQ(this->fwd_v4(t, v4("192.168.2.1"), 0, &out), 0);
    EXPECT_EQ(out->dst_mac, mac_a);
    EXPECT_EQ(out->port_id, 5);
}

TYPED_TEST_P(route_table_logic, default_route_ecmp_deterministic_per_flow) {
    const auto t = this->must_build(lab_cfg());
    int per_port[2] = {0, 0};
    for (std::uint32_t p = 0; p < 1000; ++p) {
        const std::uint32_t h =
            flow_hash_v4(v4("10.0.1.5"), v4("8.8.8.8"), 17, static_cast<std::uint16_t>(0xC000 + p), 4791, 1);
        const nexthop* a = nullptr;
        const nexthop* b = nullptr;
        const int pa = this->fwd_v4(t, v4("8.8.8.8"), h, &a);
        const int pb = this->fwd_v4(t, v4("8.8.8.8"), h, &b);
        ASSERT_TRUE(pa == 0 || pa == 1);
        EXPECT_EQ(pa, pb);
        EXPECT_EQ(a, b);
        EXPECT_EQ(a->dst_mac, pa == 0 ? mac_a : mac_b);
        ++per_port[pa];
    }
    EXPECT_GE(per_port[0], 450);
    EXPECT_LE(per_port[0], 550);
    // Both halves of the address space.
    const nexthop* out = nullptr;
    EXPECT_GE(this->fwd_v4(t, v4("200.1.2.3"), 123, &out), 0);
    EXPECT_GE(this->fwd_v4(t, v4("1.2.3.4"), 123, &out), 0);
}

TYPED_TEST_P(route_table_logic, no_default_route_misses) {
    lab c = lab_cfg();
    c.routes.erase(c.routes.begin());
    const auto t = this->must_build(c);
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v4(t, v4("8.8.8.8"), 0, &out), route_no_route);
    EXPECT_EQ(this->fwd_v6(t, v6("2001:db9::1").data(), 0, &out), route_no_route);
}

TYPED_TEST_P(route_table_logic, connected_local_and_neighbors) {
    const auto t = this->must_build(lab_cfg());
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v4(t, v4("10.0.0.1"), 0, &out), route_local);
    EXPECT_EQ(this->fwd_v4(t, v4("10.0.1.1"), 0, &out), route_local);
    EXPECT_EQ(this->fwd_v4(t, v4("10.0.0.0"), 0, &out), 0);
    EXPECT_EQ(out->dst_mac, mac_a);
    EXPECT_EQ(this->fwd_v4(t, v4("10.0.1.5"), 0, &out), 2);
    EXPECT_EQ(out->dst_mac, mac_c);
    EXPECT_EQ(this->fwd_v4(t, v4("10.0.1.6"), 0, &out), route_no_neighbor);
    EXPECT_TRUE(t.locals().is_local_v4(v4("10.0.0.3")));
    EXPECT_FALSE(t.locals().is_local_v4(v4("10.0.0.2")));
    EXPECT_EQ(this->fwd_v6(t, v6("fc00::1").data(), 0, &out), route_local);
    EXPECT_TRUE(t.locals().is_local_v6(v6("fc00::1").data()));

    route_stats st;
    st.count(t.lookup_v4(v4("10.0.1.6"), 0, &out));
    st.count(t.lookup_v4(v4("10.0.0.1"), 0, &out));
    EXPECT_EQ(t.lookup_v4(v4("10.0.0.0"), 0, &out), route_ok);
    st.count(route_ok);
    EXPECT_TRUE(t.is_local_v4(v4("10.0.0.1")));
    EXPECT_FALSE(t.is_local_v4(v4("10.0.0.0")));
    EXPECT_TRUE(t.is_local_v6(v6("fc00::1").data()));
    EXPECT_EQ(st.drop_no_neighbor, 1u);
    EXPECT_EQ(st.local, 1u);
    EXPECT_EQ(st.forwarded, 1u);
    EXPECT_EQ(st.drop_no_route, 0u);
}

// The L3 router tells frames for the switch's own addresses by the lookup
// alone (route_local), with no scan of the address table per frame: so the
// lookup must say local for exactly the addresses the table holds, whatever
// routes cover them (a static host route to a local address, a default
// route, a connected subnet), in both families and in the bulk lookup too.
TYPED_TEST_P(route_table_logic, lookup_says_local_exactly_for_the_address_table) {
    lab c = lab_cfg();
    c.routes.push_back({pfx("10.0.0.1", 32), {nh("10.0.0.2", "Ethernet4")}});  // a static route onto a local address
    c.routes.push_back({pfx("10.0.1.0", 24), {nh("10.0.0.0", "Ethernet0")}});   // over a connected subnet
    c.routes.push_back({pfx("fc00::1", 128), {nh("fc00::", "Ethernet0")}});
    c.ports[1].addresses.push_back(pfx("172.31.7.9", 20));                       // a second address on a port
    c.ports[2].addresses.push_back(pfx("fd12::7", 64));
    const auto t = this->must_build(c);
    const nexthop* out = nullptr;
    std::vector<std::uint32_t> a4;
    for (const local_v4& l : t.locals().v4()) {
        a4.push_back(l.addr);
        for (const std::uint32_t d : {l.addr - 1, l.addr + 1, l.addr ^ 0x10000u}) { a4.push_back(d); }
    }
    ASSERT_EQ(t.locals().v4().size(), 4u);
    std::uint32_t x = 0x9E3779B9u;
    for (int i = 0; i < 2000; ++i) {
        x = x * 1664525u + 1013904223u;
        a4.push_back(i % 2 == 0 ? x : (x & 0xFFFFFF00u) | 0x0A000000u);  // anywhere, and in 10/8
    }
    std::vector<std::uint32_t> bulk_v(a4.size());
    t.lpm().lookup_v4_bulk(a4.data(), bulk_v.data(), static_cast<unsigned>(a4.size()));
    int locals = 0;
    for (std::size_t i = 0; i < a4.size(); ++i) {
        const bool want = t.is_local_v4(a4[i]);
        ASSERT_EQ(t.lookup_v4(a4[i], 0, &out) == route_local, want) << std::hex << a4[i];
        ASSERT_EQ(t.resolve_v4(bulk_v[i], [] { return 0u; }, &out) == route_local, want) << std::hex << a4[i];
        locals += want ? 1 : 0;
    }
    EXPECT_EQ(locals, 4);
    std::vector<std::array<std::uint8_t, 16>> a6;
    for (const local_v6& l : t.locals().v6()) {
        a6.push_back(l.addr);
        for (const int k : {15, 14, 7, 0}) {
            auto n = l.addr;
            n[static_cast<std::size_t>(k)] ^= 1;
            a6.push_back(n);
        }
    }
    ASSERT_EQ(t.locals().v6().size(), 2u);
    for (const auto& a : a6) {
        ASSERT_EQ(t.lookup_v6(a.data(), 0, &out) == route_local, t.is_local_v6(a.data()));
    }
    EXPECT_EQ(this->fwd_v6(t, v6("fd12::7").data(), 0, &out), route_local);
    EXPECT_EQ(this->fwd_v4(t, v4("172.31.7.9"), 0, &out), route_local);
}

TYPED_TEST_P(route_table_logic, connected_without_neighbor_names_the_port) {
    const auto t = this->must_build(lab_cfg());
    const nexthop* out = nullptr;
    ASSERT_EQ(t.lookup_v4(v4("10.0.1.6"), 0, &out), route_no_neighbor);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->port, 2);
    EXPECT_EQ(out->port_id, 7);
    EXPECT_EQ(out->src_mac, lab_cfg().ports[2].mac);
    EXPECT_EQ(out->dst_mac, mac_addr{});
    EXPECT_FALSE(out->dynamic());
    // Learning eligibility: which port's connected subnet holds an address.
    const auto a = [](const char* s) { return pfx(s, 32).addr; };
    EXPECT_EQ(t.connected_port(a("10.0.1.6").data(), false), std::optional<std::uint16_t>(2));
    EXPECT_EQ(t.connected_port(a("10.0.1.5").data(), false), std::nullopt) << "static NEIGH: not learnt";
    EXPECT_EQ(t.connected_port(a("10.0.1.1").data(), false), std::nullopt) << "our own address";
    EXPECT_EQ(t.connected_port(a("8.8.8.8").data(), false), std::nullopt) << "routed, not connected";
    EXPECT_EQ(t.connected_port(v6("fc00::1").data(), true), std::nullopt);
}

TYPED_TEST_P(route_table_logic, route_next_hop_without_neigh_is_resolved_dynamically) {
    lab c = lab_cfg();
    c.routes.push_back({pfx("172.16.0.0", 12), {nh("10.0.1.9", "Ethernet8"), nh("10.0.0.2", "Ethernet4")}});
    c.routes.push_back({pfx("172.32.0.0", 12), {nh("10.0.1.9", "")}});
    const auto t = this->must_build(c);
    int dynamic = 0;
    int fixed = 0;
    for (std::uint32_t p = 0; p < 200; ++p) {
        const nexthop* out = nullptr;
        ASSERT_EQ(t.lookup_v4(v4("172.16.0.1"), flow_hash_v4(1, 2, 17, static_cast<std::uint16_t>(p), 4791, 1), &out),
                  route_ok);
        if (out->dynamic()) {
            ++dynamic;
            EXPECT_EQ(out->port, 2);
            EXPECT_EQ(out->src_mac, c.ports[2].mac);
            const ip_prefix& hop = t.dynamic_hop(out->dynamic_index());
            EXPECT_EQ(hop.addr, pfx("10.0.1.9", 32).addr);
            EXPECT_FALSE(hop.v6);
        } else {
            ++fixed;
            EXPECT_EQ(out->dst_mac, mac_b);
        }
    }
    EXPECT_GT(dynamic, 0);
    EXPECT_GT(fixed, 0);
    EXPECT_EQ(t.dynamic_hops(), 1u) << "one address, one dynamic hop";
    c.dynamic = false;
    const std::string e = this->build_error(c);
    EXPECT_NE(e.find("unresolved"), std::string::npos) << e;
    EXPECT_NE(e.find("neigh_dynamic is off"), std::string::npos) << e;
}

TYPED_TEST_P(route_table_logic, ipv6_routes) {
    lab c = lab_cfg();
    c.routes.push_back({pfx("::", 0), {nh("fc00::", "Ethernet0")}});
    const auto t = this->must_build(c);
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v6(t, v6("2001:db8:1::5").data(), 0, &out), 0);
    EXPECT_EQ(out->dst_mac, mac_a);
    EXPECT_EQ(this->fwd_v6(t, v6("fc00::").data(), 0, &out), 0);
    EXPECT_EQ(this->fwd_v6(t, v6("8000::1").data(), 0, &out), 0) << "upper half of ::/0";
    EXPECT_EQ(this->fwd_v6(t, v6("fd00::1").data(), 0, &out), 0);
}

TYPED_TEST_P(route_table_logic, ipv6_connected_without_neighbor) {
    lab c = lab_cfg();
    c.ports[2].addresses.push_back(pfx("fc00:8::1", 64));
    const auto t = this->must_build(c);
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v6(t, v6("fc00:8::77").data(), 0, &out), route_no_neighbor);
    EXPECT_EQ(this->fwd_v6(t, v6("fc00:8::1").data(), 0, &out), route_local);
    EXPECT_EQ(this->fwd_v6(t, v6("fc01::1").data(), 0, &out), route_no_route);
}

TYPED_TEST_P(route_table_logic, ipv4_only_table_misses_every_ipv6_address) {
    lab c = lab_cfg();
    c.ports[0].addresses.pop_back();
    c.neighbors.pop_back();
    c.routes.pop_back();
    const auto t = this->must_build(c);
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v6(t, v6("fc00::1").data(), 0, &out), route_no_route);
    EXPECT_EQ(t.connected_port(v6("fc00::").data(), true), std::nullopt);
    EXPECT_EQ(this->fwd_v4(t, v4("192.168.1.5"), 0, &out), 1);
}

TYPED_TEST_P(route_table_logic, bulk_matches_single) {
    const auto t = this->must_build(lab_cfg());
    std::vector<std::uint32_t> dst;
    std::vector<std::uint32_t> hash;
    const char* addrs[] = {"192.168.1.200", "192.168.1.5", "192.168.2.1", "8.8.8.8",
                           "10.0.0.1",      "10.0.1.6",    "10.0.1.5",    "1.1.1.1"};
    for (int i = 0; i < 100; ++i) {  // > max_bulk to cross a chunk boundary
        dst.push_back(v4(addrs[i % 8]));
        hash.push_back(flow_hash_v4(1, dst.back(), 17, static_cast<std::uint16_t>(i), 4791, 3));
    }
    std::vector<const nexthop*> out(dst.size());
    std::vector<int> rc(dst.size());
    t.lookup_v4_bulk(dst.data(), hash.data(), static_cast<unsigned>(dst.size()), out.data(), rc.data());
    for (std::size_t i = 0; i < dst.size(); ++i) {
        const nexthop* o = nullptr;
        EXPECT_EQ(rc[i], t.lookup_v4(dst[i], hash[i], &o)) << i;
        if (rc[i] == route_ok || rc[i] == route_no_neighbor) {
            EXPECT_EQ(out[i], o);
        } else {
            EXPECT_EQ(out[i], nullptr);
        }
    }
    // The switch's burst path: the LPM's own bulk lookup, then resolve_v4
    // per frame (hash computed only for an ECMP group), as lookup_v4 does.
    std::vector<std::uint32_t> val(dst.size());
    t.lpm().lookup_v4_bulk(dst.data(), val.data(), static_cast<unsigned>(dst.size()));
    for (std::size_t i = 0; i < dst.size(); ++i) {
        const nexthop* a = nullptr;
        const nexthop* b = nullptr;
        const std::uint32_t h = hash[i];
        EXPECT_EQ(t.resolve_v4(val[i], [h] { return h; }, &a), t.lookup_v4(dst[i], h, &b)) << i;
        EXPECT_EQ(a, b) << i;
    }
}

TYPED_TEST_P(route_table_logic, bulk_v6_matches_single) {
    // IPv6 as the switch's burst path does it: the LPM's bulk lookup, then resolve_v6, is
    // lookup_v6 for routed, connected, local, default-routed and (in a
    // table without ::/0) unrouted addresses.
    const char* addrs6[] = {"2001:db8:1::5", "fc00::", "fc00::1", "8000::1", "fd00::1", "2001:db9::1", "fc00:8::77"};
    for (const bool with_default : {true, false}) {
        lab c = lab_cfg();
        if (with_default) { c.routes.push_back({pfx("::", 0), {nh("fc00::", "Ethernet0")}}); }
        const auto t6 = this->must_build(c);
        constexpr std::size_t n6 = 70;  // > 64: the DPDK LPM's chunk
        const auto d6 = std::make_unique<ip6_addr[]>(n6);
        for (std::size_t i = 0; i < n6; ++i) { std::memcpy(d6[i], v6(addrs6[i % 7]).data(), 16); }
        std::vector<std::uint32_t> v6val(n6);
        t6.lpm().lookup_v6_bulk(d6.get(), v6val.data(), static_cast<unsigned>(n6));
        int hits = 0;
        for (std::size_t i = 0; i < n6; ++i) {
            const nexthop* a = nullptr;
            const nexthop* b = nullptr;
            const std::uint32_t h = static_cast<std::uint32_t>(i * 2654435761u);
            const int want = t6.lookup_v6(d6[i], h, &b);
            EXPECT_EQ(t6.resolve_v6(v6val[i], [h] { return h; }, &a), want) << i << " default " << with_default;
            EXPECT_EQ(a, b) << i;
            hits += v6val[i] != lpm_miss;
        }
        // With ::/0 the LPM holds no rule for it (the table's default is its
        // own), so both tables have misses: the default comes from resolve_v6.
        EXPECT_GT(hits, 0);
        EXPECT_LT(hits, 70);
    }
}

TYPED_TEST_P(route_table_logic, movable) {
    auto a = this->must_build(lab_cfg());
    auto b = std::move(a);
    const nexthop* out = nullptr;
    EXPECT_EQ(this->fwd_v4(b, v4("192.168.1.5"), 0, &out), 1);
    a = std::move(b);
    EXPECT_EQ(this->fwd_v4(a, v4("192.168.1.5"), 0, &out), 1);
    EXPECT_FALSE(a.routes().empty());
}

TYPED_TEST_P(route_table_logic, errors_name_the_culprit) {
    {
        lab c = lab_cfg();
        c.routes.push_back(
            {pfx("172.16.0.0", 12), {nh("10.0.0.2", "Ethernet4"), nh("10.0.0.9", "Ethernet4")}});
        const std::string e = this->build_error(c);
        EXPECT_NE(e.find("route 172.16.0.0/12"), std::string::npos) << e;
        EXPECT_NE(e.find("10.0.0.9"), std::string::npos) << e;
        EXPECT_NE(e.find("unresolved"), std::string::npos) << e;
    }
    {
        lab c = lab_cfg();
        c.routes.push_back(
            {pfx("172.16.0.0", 12), {nh("10.0.0.2", "Ethernet0")}});  // neighbour is on Ethernet4
        EXPECT_NE(this->build_error(c).find("unresolved"), std::string::npos);
    }
    {
        lab c = lab_cfg();
        c.neighbors.push_back({"Ethernet99", pfx("10.9.9.9", 32), mac_a});
        const std::string e = this->build_error(c);
        EXPECT_NE(e.find("neighbour Ethernet99|10.9.9.9"), std::string::npos) << e;
        EXPECT_NE(e.find("unknown port"), std::string::npos) << e;
    }
    {
        lab c = lab_cfg();
        c.routes.push_back({pfx("2001:db8:1::", 48), {nh("10.0.0.0", "Ethernet0")}});
        EXPECT_NE(this->build_error(c).find("address family"), std::string::npos);
    }
    {
        lab c = lab_cfg();
        c.routes.push_back({pfx("172.16.0.0", 12), {}});
        EXPECT_NE(this->build_error(c).find("no next hops"), std::string::npos);
    }
}

REGISTER_TYPED_TEST_SUITE_P(route_table_logic, longest_prefix_wins, default_route_ecmp_deterministic_per_flow,
                            no_default_route_misses, connected_local_and_neighbors,
                            lookup_says_local_exactly_for_the_address_table,
                            connected_without_neighbor_names_the_port,
                            route_next_hop_without_neigh_is_resolved_dynamically, ipv6_routes,
                            ipv6_connected_without_neighbor, ipv4_only_table_misses_every_ipv6_address, bulk_v6_matches_single,
                            bulk_matches_single, movable, errors_name_the_culprit);

}  // namespace rocelab::route_test
