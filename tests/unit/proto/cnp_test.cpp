// cnp_test.cpp - CNP frames (reference 1.4): make_cnp_v4 + build_roce_v4
// against vector E, and make_cnp_v6 + build_roce_v6 checked field by field
// with an ICRC computed here independently: a bit-at-a-time CRC-32 (zlib's
// crc32: reflected 0xEDB88320, init and final XOR 0xFFFFFFFF) over
// 8 x 0xFF || the IPv6/UDP/BTH headers masked as reference 1.5 says ||
// payload, sent least-significant byte first.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/build.hpp"
#include "test_vectors.hpp"

namespace rocelab {
namespace {

std::uint32_t crc32_bitwise(const std::vector<std::uint8_t>& d) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::uint8_t b : d) {
        c ^= b;
        for (int k = 0; k < 8; ++k) {
            c = (c >> 1) ^ ((c & 1u) != 0 ? 0xEDB88320u : 0u);
        }
    }
    return c ^ 0xFFFFFFFFu;
}

std::uint8_t u8(std::byte b) { return std::to_integer<std::uint8_t>(b); }

// ICRC of a RoCEv2 frame without VLAN tag whose last 4 bytes are the ICRC.
std::uint32_t independent_icrc(const std::byte* f, std::size_t n, bool v6) {
    std::vector<std::uint8_t> d(8, 0xFF);
    for (std::size_t i = 14; i + 4 < n; ++i) {
        d.push_back(u8(f[i]));
    }
    const std::size_t ip = 8;  // offset of the IP header in d
    std::size_t udp = 0;
    if (v6) {
        d[ip + 0] = 0x6F;  // version kept; traffic class and flow label masked
        d[ip + 1] = d[ip + 2] = d[ip + 3] = 0xFF;
        d[ip + 7] = 0xFF;  // hop limit
        udp = ip + 40;
    } else {
        d[ip + 1] = 0xFF;                  // TOS
        d[ip + 8] = 0xFF;                  // TTL
        d[ip + 10] = d[ip + 11] = 0xFF;    // header checksum
        udp = ip + 20;
    }
    d[udp + 6] = d[udp + 7] = 0xFF;  // UDP checksum
    d[udp + 8 + 4] = 0xFF;           // BTH byte 4: FECN, BECN, reserved
    return crc32_bitwise(d);
}

std::uint32_t wire_icrc(const std::byte* f, std::size_t n) {
    return static_cast<std::uint32_t>(u8(f[n - 4])) | static_cast<std::uint32_t>(u8(f[n - 3])) << 8 |
           static_cast<std::uint32_t>(u8(f[n - 2])) << 16 | static_cast<std::uint32_t>(u8(f[n - 1])) << 24;
}

constexpr mac_addr mac1{0x02, 0, 0, 0, 0, 0x01};
constexpr mac_addr mac2{0x02, 0, 0, 0, 0, 0x02};

TEST(ProtoCnp, V4MatchesVectorEAndTheIndependentIcrc) {
    roce_v4_params p = make_cnp_v4(mac1, mac2, ipv4_addr(192, 168, 1, 2), ipv4_addr(192, 168, 1, 1), 0x22, 48);
    p.ip_id = 3;
    p.sport = 49155;
    std::array<std::byte, 128> buf{};
    const std::uint32_t n = build_roce_v4(std::span<std::byte>(buf), p);
    const auto want = test::from_hex(test::vec_e.hex);
    ASSERT_EQ(n, want.size());
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(buf[i], want[i]) << "byte " << i;
    }
    // The test's own CRC reproduces vector E's ICRC (0x62D42B02), so it can
    // be trusted for the IPv6 frame below.
    EXPECT_EQ(independent_icrc(want.data(), want.size(), false), 0x62D42B02u);
    EXPECT_EQ(wire_icrc(want.data(), want.size()), 0x62D42B02u);
}

TEST(ProtoCnp, V6FieldsAndIcrc) {
    const ipv6_addr a{0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    const ipv6_addr b{0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1};
    roce_v6_params p = make_cnp_v6(mac1, mac2, b, a, 0x123456, 48);
    p.sport = 0xC123;
    std::array<std::byte, 128> buf{};
    const std::uint32_t n = build_roce_v6(std::span<std::byte>(buf), p);
    ASSERT_EQ(n, 14u + 40 + 8 + 12 + 16 + 4);
    const std::byte* f = buf.data();
    EXPECT_EQ(u8(f[12]), 0x86);
    EXPECT_EQ(u8(f[13]), 0xDD);
    // IPv6: version 6, traffic class 0xC0 (DSCP 48, not-ECT), flow label 0.
    EXPECT_EQ(u8(f[14]), 0x6C);
    EXPECT_EQ(u8(f[15]), 0x00);
    EXPECT_EQ(u8(f[16]), 0x00);
    EXPECT_EQ(u8(f[17]), 0x00);
    EXPECT_EQ((u8(f[18]) << 8) | u8(f[19]), 8 + 12 + 16 + 4);  // payload length
    EXPECT_EQ(u8(f[20]), 17);                                  // next header UDP
    for (int i = 0; i < 16; ++i) {
        EXPECT_EQ(u8(f[22 + i]), b[i]);
        EXPECT_EQ(u8(f[38 + i]), a[i]);
    }
    const std::byte* udp = f + 54;
    EXPECT_EQ((u8(udp[2]) << 8) | u8(udp[3]), 4791);
    EXPECT_EQ((u8(udp[4]) << 8) | u8(udp[5]), 8 + 12 + 16 + 4);
    const std::byte* bth = udp + 8;
    EXPECT_EQ(u8(bth[0]), 0x81);  // CNP opcode
    EXPECT_EQ(u8(bth[1]), 0x00);  // SE, M, PadCnt, TVer
    EXPECT_EQ(u8(bth[2]), 0xFF);  // P_Key 0xFFFF
    EXPECT_EQ(u8(bth[3]), 0xFF);
    EXPECT_EQ(u8(bth[4]), 0x40);  // BECN = 1, FECN = 0
    EXPECT_EQ(u8(bth[5]), 0x12);  // DestQP
    EXPECT_EQ(u8(bth[6]), 0x34);
    EXPECT_EQ(u8(bth[7]), 0x56);
    for (int i = 8; i < 12; ++i) {
        EXPECT_EQ(u8(bth[i]), 0) << "A bit / PSN byte " << i;
    }
    for (int i = 0; i < 16; ++i) {
        EXPECT_EQ(u8(bth[12 + i]), 0) << "reserved byte " << i;
    }
    const std::uint32_t icrc = independent_icrc(f, n, true);
    EXPECT_EQ(wire_icrc(f, n), icrc);

    // Masked fields do not change it; a covered one does.
    roce_v6_params q = p;
    q.dscp = 26;
    q.ecn = 3;
    q.hop_limit = 7;
    q.flow_label = 0xABCDE;
    std::array<std::byte, 128> buf2{};
    ASSERT_EQ(build_roce_v6(std::span<std::byte>(buf2), q), n);
    EXPECT_EQ(wire_icrc(buf2.data(), n), icrc);
    q.bth.dest_qpn = 0x123457;
    ASSERT_EQ(build_roce_v6(std::span<std::byte>(buf2), q), n);
    EXPECT_NE(wire_icrc(buf2.data(), n), icrc);
    EXPECT_EQ(wire_icrc(buf2.data(), n), independent_icrc(buf2.data(), n, true));
}

}  // namespace
}  // namespace rocelab
