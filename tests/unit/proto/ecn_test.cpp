// ecn_test.cpp - mark_ce / frame_ecn on real RoCEv2 frames, checked with an
// independent IPv4 checksum and a zlib ICRC (icrc_zlib.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "icrc_zlib.hpp"
#include "proto/build.hpp"
#include "proto/ecn.hpp"
#include "test_vectors.hpp"

namespace rocelab {
namespace {

using frame = std::vector<std::byte>;

constexpr mac_addr ecn_mac1{0x02, 0, 0, 0, 0, 1};
constexpr mac_addr ecn_mac2{0x02, 0, 0, 0, 0, 2};

frame v4(std::uint8_t ecn, std::int16_t vlan = -1, std::size_t payload = 256, std::uint8_t dscp = 26) {
    const auto pl = test::seq_payload(payload);
    roce_v4_params p{};
    p.dst_mac = ecn_mac2;
    p.src_mac = ecn_mac1;
    p.vlan_id = vlan;
    p.pcp = 3;
    p.src_ip = ipv4_addr(10, 0, 0, 1);
    p.dst_ip = ipv4_addr(10, 0, 1, 2);
    p.dscp = dscp;
    p.ecn = ecn;
    p.ttl = 63;
    p.ip_id = 0xBEEF;
    p.bth.opcode = roce_op::rc_write_only;
    p.bth.dest_qpn = 0x1234;
    p.bth.psn = 77;
    p.ext.reth = reth_fields{0x1000, 0x55, static_cast<std::uint32_t>(payload)};
    p.payload = pl;
    frame f(roce_v4_frame_len(p));
    EXPECT_EQ(build_roce_v4(std::span<std::byte>(f), p), f.size());
    return f;
}

frame v6(std::uint8_t ecn, std::int16_t vlan = -1, std::size_t payload = 100) {
    const auto pl = test::seq_payload(payload);
    roce_v6_params p{};
    p.dst_mac = ecn_mac2;
    p.src_mac = ecn_mac1;
    p.vlan_id = vlan;
    p.src_ip = ipv6_addr{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    p.dst_ip = ipv6_addr{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    p.dscp = 26;
    p.ecn = ecn;
    p.flow_label = 0xABCDE;
    p.bth.opcode = roce_op::rc_send_only;
    p.bth.dest_qpn = 0x99;
    p.payload = pl;
    frame f(roce_v6_frame_len(p));
    EXPECT_EQ(build_roce_v6(std::span<std::byte>(f), p), f.size());
    return f;
}

std::uint32_t len32(const frame& f) { return static_cast<std::uint32_t>(f.size()); }

std::size_t ip_off(const frame& f) { return test::ref_find_l3(f.data(), f.size()).ip; }

// Inserts an extra 4-byte tag (TPID tpid) right after the MAC addresses.
frame push_tag(const frame& f, std::uint16_t tpid, std::uint16_t tci) {
    frame g(f.begin(), f.begin() + 12);
    g.push_back(std::byte(tpid >> 8));
    g.push_back(std::byte(tpid & 0xFF));
    g.push_back(std::byte(tci >> 8));
    g.push_back(std::byte(tci & 0xFF));
    g.insert(g.end(), f.begin() + 12, f.end());
    return g;
}

TEST(ecn_mark, ipv4_ect_becomes_ce_with_valid_checksum_and_icrc) {
    for (const std::uint8_t ecn : {ecn_ect0, ecn_ect1}) {
        for (const std::int16_t vlan : {std::int16_t{-1}, std::int16_t{100}}) {
            for (const std::uint8_t dscp : {std::uint8_t{0}, std::uint8_t{26}, std::uint8_t{63}}) {
                frame f = v4(ecn, vlan, 256, dscp);
                const frame before = f;
                const std::size_t ip = ip_off(f);
                ASSERT_EQ(ip, vlan < 0 ? 14u : 18u);
                ASSERT_TRUE(test::ref_ipv4_checksum_ok(f.data() + ip));
                ASSERT_TRUE(test::ref_icrc_ok(f.data(), f.size()));
                EXPECT_EQ(frame_ecn(f.data(), len32(f)), ecn);

                EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::marked);
                EXPECT_EQ(std::to_integer<unsigned>(f[ip + 1]), (dscp << 2) | 3u) << "DSCP kept, ECN = CE";
                EXPECT_EQ(frame_ecn(f.data(), len32(f)), ecn_ce);
                EXPECT_TRUE(test::ref_ipv4_checksum_ok(f.data() + ip)) << "ecn " << int(ecn) << " vlan " << vlan;
                EXPECT_TRUE(test::ref_icrc_ok(f.data(), f.size())) << "ICRC must not change";
                for (std::size_t i = 0; i < f.size(); ++i) {  // only TOS and the checksum change
                    if (i == ip + 1 || i == ip + 10 || i == ip + 11) {
                        continue;
                    }
                    ASSERT_EQ(f[i], before[i]) << "byte " << i;
                }
                EXPECT_NE(f[ip + 1], before[ip + 1]);
            }
        }
    }
}

TEST(ecn_mark, ipv4_checksum_matches_a_full_recompute_over_many_headers) {
    // Every TOS (DSCP x ECT) and several ids: incremental == from scratch.
    for (unsigned id = 0; id < 0x10000; id += 0x1111) {
        for (unsigned dscp = 0; dscp < 64; ++dscp) {
            frame f = v4(ecn_ect0, -1, 16, static_cast<std::uint8_t>(dscp));
            f[14 + 4] = std::byte(id >> 8);  // new id, checksum fixed by hand below
            f[14 + 5] = std::byte(id & 0xFF);
            f[14 + 10] = f[14 + 11] = std::byte{0};
            std::uint32_t s = 0;
            for (int i = 0; i < 20; i += 2) {
                s += test::ref_be16(f.data() + 14 + i);
            }
            while (s > 0xFFFF) {
                s = (s & 0xFFFF) + (s >> 16);
            }
            f[14 + 10] = std::byte((~s >> 8) & 0xFF);
            f[14 + 11] = std::byte(~s & 0xFF);
            ASSERT_TRUE(test::ref_ipv4_checksum_ok(f.data() + 14));
            ASSERT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::marked);
            ASSERT_TRUE(test::ref_ipv4_checksum_ok(f.data() + 14)) << "id " << id << " dscp " << dscp;
        }
    }
}

TEST(ecn_mark, ipv6_ect_becomes_ce_and_icrc_still_valid) {
    for (const std::uint8_t ecn : {ecn_ect0, ecn_ect1}) {
        for (const std::int16_t vlan : {std::int16_t{-1}, std::int16_t{7}}) {
            frame f = v6(ecn, vlan);
            const frame before = f;
            const std::size_t ip = ip_off(f);
            ASSERT_TRUE(test::ref_icrc_ok(f.data(), f.size()));
            EXPECT_EQ(frame_ecn(f.data(), len32(f)), ecn);
            EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::marked);
            EXPECT_EQ(frame_ecn(f.data(), len32(f)), ecn_ce);
            // Traffic class 26 << 2 | 3 = 0x6B: byte 0 = 0x66, byte 1 = 0xB0 | flow label bits.
            EXPECT_EQ(std::to_integer<unsigned>(f[ip]), 0x66u);
            EXPECT_EQ(std::to_integer<unsigned>(f[ip + 1]), 0xBAu);
            EXPECT_TRUE(test::ref_icrc_ok(f.data(), f.size()));
            for (std::size_t i = 0; i < f.size(); ++i) {
                if (i != ip + 1) {
                    ASSERT_EQ(f[i], before[i]) << "byte " << i;
                }
            }
        }
    }
}

TEST(ecn_mark, not_ect_is_never_touched) {
    for (const std::int16_t vlan : {std::int16_t{-1}, std::int16_t{100}}) {
        frame f = v4(ecn_not_ect, vlan);
        const frame before = f;
        EXPECT_EQ(frame_ecn(f.data(), len32(f)), ecn_not_ect);
        EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::not_ect);
        EXPECT_EQ(f, before);
        frame g = v6(ecn_not_ect, vlan);
        const frame gb = g;
        EXPECT_EQ(mark_ce(g.data(), len32(g)), ce_mark_result::not_ect);
        EXPECT_EQ(g, gb);
    }
}

TEST(ecn_mark, ce_stays_ce_untouched) {
    frame f = v4(ecn_ce, 100);
    const frame before = f;
    EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::already_ce);
    EXPECT_EQ(f, before);
    frame g = v6(ecn_ce);
    const frame gb = g;
    EXPECT_EQ(mark_ce(g.data(), len32(g)), ce_mark_result::already_ce);
    EXPECT_EQ(g, gb);
    // Marking twice: the second call sees CE.
    frame h = v4(ecn_ect0);
    EXPECT_EQ(mark_ce(h.data(), len32(h)), ce_mark_result::marked);
    const frame once = h;
    EXPECT_EQ(mark_ce(h.data(), len32(h)), ce_mark_result::already_ce);
    EXPECT_EQ(h, once);
}

TEST(ecn_mark, stacked_tags_up_to_three) {
    const frame base = v4(ecn_ect0, 100);                     // one C-tag
    const frame two = push_tag(base, 0x88A8, 200);            // S-tag + C-tag
    const frame three = push_tag(two, 0x8100, 300);           // three tags
    const frame four = push_tag(three, 0x8100, 400);          // four: not walked
    for (const frame* src : {&two, &three}) {
        frame f = *src;
        const std::size_t ip = ip_off(f);
        EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::marked);
        EXPECT_EQ(std::to_integer<unsigned>(f[ip + 1]) & 3u, 3u);
        EXPECT_TRUE(test::ref_ipv4_checksum_ok(f.data() + ip));
        EXPECT_TRUE(test::ref_icrc_ok(f.data(), f.size()));
    }
    frame f = four;
    EXPECT_EQ(frame_ecn(f.data(), len32(f)), 0xFF);
    EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::not_ip);
    EXPECT_EQ(f, four);
}

TEST(ecn_mark, not_ip_frames_are_untouched) {
    frame arp(60, std::byte{0});
    arp[12] = std::byte{0x08};
    arp[13] = std::byte{0x06};
    const frame before = arp;
    EXPECT_EQ(mark_ce(arp.data(), len32(arp)), ce_mark_result::not_ip);
    EXPECT_EQ(frame_ecn(arp.data(), len32(arp)), 0xFF);
    EXPECT_EQ(arp, before);
    // EtherType IPv4 but version 6 in the header, and an IHL below 5.
    frame bad = v4(ecn_ect0);
    bad[14] = std::byte{0x65};
    const frame bad_before = bad;
    EXPECT_EQ(mark_ce(bad.data(), len32(bad)), ce_mark_result::not_ip);
    EXPECT_EQ(bad, bad_before);
    bad[14] = std::byte{0x44};
    EXPECT_EQ(mark_ce(bad.data(), len32(bad)), ce_mark_result::not_ip);
    // EtherType IPv6 with version 4.
    frame b6 = v6(ecn_ect0);
    b6[14] = std::byte{0x46};
    EXPECT_EQ(mark_ce(b6.data(), len32(b6)), ce_mark_result::not_ip);
}

TEST(ecn_mark, truncated_frames_are_refused_without_reading_past_len) {
    // Every prefix of a tagged IPv4 frame shorter than the IP header, copied to
    // an exact-size heap buffer (ASan/valgrind would flag a read past it).
    const frame f4 = v4(ecn_ect0, 100);
    for (std::uint32_t n = 0; n < 18 + 20; ++n) {
        std::vector<std::byte> cut(f4.begin(), f4.begin() + n);
        const std::vector<std::byte> before = cut;
        EXPECT_EQ(mark_ce(cut.data(), n), ce_mark_result::truncated) << "len " << n;
        EXPECT_EQ(frame_ecn(cut.data(), n), 0xFF);
        EXPECT_EQ(cut, before);
    }
    EXPECT_EQ(mark_ce(frame(f4).data(), 18 + 20), ce_mark_result::marked);
    // IPv4 with options: the IHL's bytes must be there too.
    frame opt = v4(ecn_ect0);
    opt[14] = std::byte{0x46};  // IHL 6 (24 bytes); the checksum does not matter here
    EXPECT_EQ(mark_ce(opt.data(), 14 + 23), ce_mark_result::truncated);
    EXPECT_EQ(mark_ce(opt.data(), 14 + 24), ce_mark_result::marked);
    const frame f6 = v6(ecn_ect1);
    for (std::uint32_t n = 0; n < 14 + 40; ++n) {
        std::vector<std::byte> cut(f6.begin(), f6.begin() + n);
        EXPECT_EQ(mark_ce(cut.data(), n), ce_mark_result::truncated) << "len " << n;
    }
    EXPECT_EQ(mark_ce(frame(f6).data(), 14 + 40), ce_mark_result::marked);
}

TEST(ecn_mark, reference_vector_a_marked_keeps_its_icrc) {
    // Vector A (reference 1.6): TOS 0x02 (ECT(0)), ICRC aeb3d1bf on the wire.
    frame f = test::from_hex(test::vec_a.hex);
    ASSERT_TRUE(test::ref_icrc_ok(f.data(), f.size()));
    EXPECT_EQ(mark_ce(f.data(), len32(f)), ce_mark_result::marked);
    EXPECT_EQ(std::to_integer<unsigned>(f[15]), 0x03u);
    // Old checksum 0xa527 (word 0x4502 -> 0x4503): RFC 1624 gives 0xa526.
    EXPECT_EQ(test::ref_be16(f.data() + 24), 0xa526u);
    EXPECT_TRUE(test::ref_ipv4_checksum_ok(f.data() + 14));
    EXPECT_TRUE(test::ref_icrc_ok(f.data(), f.size()));
}

// The oracles themselves can fail: a TOS change without the checksum fix, or
// a change to a covered byte, is caught.
TEST(ecn_mark, oracles_detect_damage) {
    frame f = v4(ecn_ect0, 100);
    f[18 + 1] |= std::byte{3};
    EXPECT_FALSE(test::ref_ipv4_checksum_ok(f.data() + 18));
    EXPECT_TRUE(test::ref_icrc_ok(f.data(), f.size()));  // TOS is masked
    f[f.size() - 10] ^= std::byte{1};                    // payload byte
    EXPECT_FALSE(test::ref_icrc_ok(f.data(), f.size()));
    frame g = v6(ecn_ect0);
    g[14 + 8] ^= std::byte{1};  // source address is covered
    EXPECT_FALSE(test::ref_icrc_ok(g.data(), g.size()));
}

TEST(ecn_mark, names) {
    EXPECT_EQ(ce_mark_result_name(ce_mark_result::marked), "marked");
    EXPECT_EQ(ce_mark_result_name(ce_mark_result::already_ce), "already_ce");
    EXPECT_EQ(ce_mark_result_name(ce_mark_result::truncated), "truncated");
}

}  // namespace
}  // namespace rocelab
