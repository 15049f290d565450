// ecmp_test.cpp - flow hash spread, ecmp_select, nh_table.
//
// The hash is crc32c (SSE4.2) over the 5-tuple followed by the MurmurHash3
// fmix32 avalanche; ecmp_select takes the high bits via (hash * n) >> 32.
// Spread criterion from the design brief: 1000 RoCEv2 flows that differ only
// in the UDP source port land on each of 2 and of 4 next hops within +-10% of
// the fair share. For an ideal random hash the per-member count is binomial
// (n=1000, p=1/4: sigma = 13.7, so +-25 is +-1.8 sigma), so the fixed-seed
// cases below are complemented by a chi-square test over all 65536 source
// ports, which a structurally weak hash (e.g. crc32 without the avalanche)
// fails by orders of magnitude.
#include "fwd/ecmp.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"

using namespace rocelab;

namespace {

constexpr std::uint32_t src4 = 0x0a000001;  // 10.0.0.1
constexpr std::uint32_t dst4 = 0x0a010002;  // 10.1.0.2
constexpr std::uint16_t roce_port = 4791;
constexpr std::uint32_t seed = 1;

std::vector<int> spread(const std::vector<std::uint32_t>& hashes, std::uint32_t n) {
    std::vector<int> c(n, 0);
    for (auto h : hashes) {
        ++c[ecmp_select(h, n)];
    }
    return c;
}

void expect_within(const std::vector<int>& counts, int total, double tol, const char* what) {
    const double fair = static_cast<double>(total) / counts.size();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        EXPECT_GE(counts[i], fair * (1 - tol)) << what << " member " << i;
        EXPECT_LE(counts[i], fair * (1 + tol)) << what << " member " << i;
    }
}

double chi_square(const std::vector<int>& counts, int total) {
    const double e = static_cast<double>(total) / counts.size();
    double x = 0;
    for (int c : counts) {
        x += (c - e) * (c - e) / e;
    }
    return x;
}

}  // namespace

TEST(ecmp, select_range) {
    EXPECT_EQ(ecmp_select(0, 4), 0u);
    EXPECT_EQ(ecmp_select(0xffffffffu, 4), 3u);
    EXPECT_EQ(ecmp_select(0x80000000u, 2), 1u);
    EXPECT_EQ(ecmp_select(0x7fffffffu, 2), 0u);
    EXPECT_EQ(ecmp_select(0xdeadbeefu, 1), 0u);
    for (std::uint32_t n = 1; n <= 16; ++n) {
        EXPECT_LT(ecmp_select(0xffffffffu, n), n);
    }
}

TEST(ecmp, hash_is_deterministic_and_seeded) {
    const auto a = flow_hash_v4(src4, dst4, 17, 0xC000, roce_port, seed);
    EXPECT_EQ(a, flow_hash_v4(src4, dst4, 17, 0xC000, roce_port, seed));
    EXPECT_NE(a, flow_hash_v4(src4, dst4, 17, 0xC000, roce_port, seed + 1));
    EXPECT_NE(a, flow_hash_v4(src4, dst4, 17, 0xC001, roce_port, seed));
    EXPECT_NE(a, flow_hash_v4(dst4, src4, 17, 0xC000, roce_port, seed));
    EXPECT_NE(a, flow_hash_v4(src4, dst4, 6, 0xC000, roce_port, seed));
}

TEST(ecmp, spread_1000_contiguous_sports_v4) {
    std::vector<std::uint32_t> h;
    for (std::uint32_t i = 0; i < 1000; ++i) {
        h.push_back(flow_hash_v4(src4, dst4, 17, static_cast<std::uint16_t>(0xC000 + i), roce_port, seed));
    }
    expect_within(spread(h, 2), 1000, 0.10, "2-way");
    expect_within(spread(h, 4), 1000, 0.10, "4-way");
}

TEST(ecmp, spread_1000_random_sports_v4) {
    rng r(2024);
    std::vector<std::uint32_t> h;
    for (int i = 0; i < 1000; ++i) {
        const auto sport = static_cast<std::uint16_t>(0xC000 | (r.next_u32() & 0x3fff));
        h.push_back(flow_hash_v4(src4, dst4, 17, sport, roce_port, seed));
    }
    expect_within(spread(h, 2), 1000, 0.10, "2-way");
    expect_within(spread(h, 4), 1000, 0.10, "4-way");
}

TEST(ecmp, spread_1000_contiguous_sports_v6) {
    std::uint8_t s[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    std::uint8_t d[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    std::vector<std::uint32_t> h;
    for (std::uint32_t i = 0; i < 1000; ++i) {
        h.push_back(flow_hash_v6(s, d, 17, static_cast<std::uint16_t>(0xC000 + i), roce_port, seed));
    }
    expect_within(spread(h, 2), 1000, 0.10, "2-way");
    expect_within(spread(h, 4), 1000, 0.10, "4-way");
}

TEST(ecmp, chi_square_all_sports_many_widths) {
    // 65536 flows (every source port); chi-square with n-1 degrees of
    // freedom must stay below the 99.9% quantile (n=2: 10.8, 4: 16.3,
    // 8: 24.3, 16: 37.7, 3: 13.8).
    const std::array<std::pair<std::uint32_t, double>, 5> limits{
        {{2, 10.8}, {3, 13.8}, {4, 16.3}, {8, 24.3}, {16, 37.7}}};
    for (std::uint32_t sd : {1u, 7u, 0xdeadbeefu}) {
        std::vector<std::uint32_t> h;
        for (std::uint32_t p = 0; p < 65536; ++p) {
            h.push_back(flow_hash_v4(src4, dst4, 17, static_cast<std::uint16_t>(p), roce_port, sd));
        }
        for (auto [n, lim] : limits) {
            EXPECT_LT(chi_square(spread(h, n), 65536), lim) << "n=" << n << " seed=" << sd;
        }
    }
}

TEST(ecmp, hash_from_headers) {
    // 20-byte IPv4 header + UDP ports.
    std::array<std::byte, 28> ip{};
    ip[0] = std::byte{0x45};
    ip[9] = std::byte{17};
    store_be32(ip.data() + 12, src4);
    store_be32(ip.data() + 16, dst4);
    store_be16(ip.data() + 20, 0xC123);
    store_be16(ip.data() + 22, roce_port);
    EXPECT_EQ(flow_hash_ipv4_hdr(ip.data(), ip.size(), seed),
              flow_hash_v4(src4, dst4, 17, 0xC123, roce_port, seed));
    // A fragment hashes without ports.
    store_be16(ip.data() + 6, 0x2000);  // MF
    EXPECT_EQ(flow_hash_ipv4_hdr(ip.data(), ip.size(), seed), flow_hash_v4(src4, dst4, 17, 0, 0, seed));

    std::array<std::byte, 48> ip6{};
    ip6[0] = std::byte{0x60};
    ip6[6] = std::byte{17};
    for (int i = 0; i < 16; ++i) {
        ip6[8 + i] = std::byte(i);
        ip6[24 + i] = std::byte(0x80 + i);
    }
    store_be16(ip6.data() + 40, 0xC555);
    store_be16(ip6.data() + 42, roce_port);
    EXPECT_EQ(
        flow_hash_ipv6_hdr(ip6.data(), ip6.size(), seed),
        flow_hash_v6(reinterpret_cast<const std::uint8_t*>(ip6.data() + 8),
                     reinterpret_cast<const std::uint8_t*>(ip6.data() + 24), 17, 0xC555, roce_port, seed));
}

TEST(nh_table, dedup_groups_and_select) {
    nh_table t(8, 4);
    const nexthop a{0, 10, {2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 0xa}};
    const nexthop b{1, 11, {2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 0xb}};
    const auto ia = t.add_nexthop(a);
    const auto ib = t.add_nexthop(b);
    ASSERT_TRUE(ia && ib);
    EXPECT_EQ(*t.add_nexthop(a), *ia);
    EXPECT_EQ(t.nexthops(), 2u);

    const std::uint32_t ab[2] = {*ia, *ib};
    const std::uint32_t ba[2] = {*ib, *ia};
    const auto g1 = t.add_group(ab);
    const auto g2 = t.add_group(ba);
    ASSERT_TRUE(g1 && g2);
    EXPECT_EQ(*g1, *g2) << "same member set, same group";
    EXPECT_EQ(t.group_at(*g1).n, 2);

    const std::uint32_t bad[1] = {7};
    EXPECT_FALSE(t.add_group(bad)) << "member out of range";
    EXPECT_FALSE(t.add_group(std::span<const std::uint32_t>{})) << "empty";

    int to_a = 0;
    for (std::uint32_t p = 0; p < 1000; ++p) {
        const std::uint32_t h =
            flow_hash_v4(src4, dst4, 17, static_cast<std::uint16_t>(0xC000 + p), roce_port, seed);
        const nexthop& x = t.select(*g1, h);
        EXPECT_EQ(&x, &t.select(*g1, h)) << "same flow, same member";
        to_a += (x == a) ? 1 : 0;
    }
    EXPECT_GT(to_a, 450);
    EXPECT_LT(to_a, 550);

    // select_lazy: the same member as select(); the hash is computed only
    // for a group of more than one member.
    const std::uint32_t just_b[1] = {*ib};
    const auto g3 = t.add_group(just_b);
    ASSERT_TRUE(g3);
    int calls = 0;
    for (std::uint32_t p = 0; p < 100; ++p) {
        const std::uint32_t h = p * 2654435761u;
        auto fn = [&] {
            ++calls;
            return h;
        };
        EXPECT_EQ(&t.select_lazy(*g1, fn), &t.select(*g1, h));
        EXPECT_EQ(&t.select_lazy(*g3, fn), &t.select(*g3, h));
    }
    EXPECT_EQ(calls, 100) << "hashed for the 2-member group only";

    // Fixed capacity.
    for (std::uint8_t i = 2; i < 8; ++i) {
        ASSERT_TRUE(t.add_nexthop(nexthop{i, i, {2, 0, 0, 0, 0, i}, {}}));
    }
    EXPECT_FALSE(t.add_nexthop(nexthop{99, 99, {2, 0, 0, 0, 0, 99}, {}}));
}

// ECMP local bias: a worker that owns some of a group's ports chooses among
// those (each flow one member, spread over them); one that owns none, or a
// group without local members, chooses among all, as without bias.
TEST(nh_table, local_subgroups_bias_the_choice_to_own_ports) {
    nh_table t(8, 4);
    std::uint32_t idx[4];
    for (std::uint16_t i = 0; i < 4; ++i) {
        const auto k = t.add_nexthop(nexthop{i, i, {2, 0, 0, 0, 0, static_cast<std::uint8_t>(i + 1)}, {}});
        ASSERT_TRUE(k);
        idx[i] = *k;
    }
    const auto all4 = t.add_group(std::span<const std::uint32_t>(idx, 4));
    const auto ports23 = t.add_group(std::span<const std::uint32_t>(idx + 2, 2));
    ASSERT_TRUE(all4 && ports23);
    // Worker 0 owns ports 0 and 1, worker 1 ports 2 and 3.
    const auto w0 = t.local_subgroups([](std::uint16_t port) { return port < 2; });
    const auto w1 = t.local_subgroups([](std::uint16_t port) { return port >= 2; });
    ASSERT_EQ(w0.size(), t.groups());
    EXPECT_EQ(w0[*all4].n, 2);
    EXPECT_EQ(w0[*ports23].n, 0) << "worker 0 owns none of ports 2 and 3";
    EXPECT_EQ(w1[*ports23].n, 2);
    int per_port[4] = {};
    for (std::uint32_t p = 0; p < 1000; ++p) {
        const std::uint32_t h = flow_hash_v4(src4, dst4, 17, static_cast<std::uint16_t>(0xC000 + p), roce_port, seed);
        auto fn = [h] { return h; };
        const nexthop& a = t.select_lazy(*all4, fn, w0.data());
        EXPECT_LT(a.port, 2) << "worker 0's flows leave by its own ports";
        EXPECT_EQ(&a, &t.select_lazy(*all4, fn, w0.data())) << "same flow, same member";
        ++per_port[a.port];
        EXPECT_GE(t.select_lazy(*all4, fn, w1.data()).port, 2);
        EXPECT_EQ(&t.select_lazy(*ports23, fn, w0.data()), &t.select(*ports23, h))
            << "no local member: every member, as without bias";
        EXPECT_EQ(&t.select_lazy(*all4, fn, nullptr), &t.select(*all4, h));
    }
    EXPECT_GT(per_port[0], 400);
    EXPECT_GT(per_port[1], 400) << "spread over both local members";
}
