// checksum_test.cpp - the Internet checksum (proto/csum.hpp) against the
// textbook big-endian computation, the IPv6 upper-layer checksum against it
// over a hand-built pseudo-header; IPv4 header checksum: RFC 1624
// incremental updates against full recomputation, TTL decrement and ECN
// marking.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "core/rng.hpp"
#include "proto/ipv4.hpp"
#include "proto/ipv6.hpp"

namespace rocelab {
namespace {

using hdr_t = std::array<std::byte, 20>;

hdr_t random_header(rng& r) {
    hdr_t h{};
    for (auto& b : h) {
        b = std::byte(r.next_u32());
    }
    h[0] = std::byte{0x45};
    store_be16(h.data() + 10, ipv4_header_checksum(h.data()));
    return h;
}

// Adjusts the identification field so that the checksum becomes `target`.
// Sum S (ones' complement, non-zero) maps to checksum ~S; pick the id that
// makes S hit ~target. Works for any target except 0xFFFF (S would be 0).
void force_checksum(hdr_t& h, std::uint16_t target) {
    store_be16(h.data() + 4, 0);
    store_be16(h.data() + 10, 0);
    const std::uint16_t s0 = static_cast<std::uint16_t>(~ipv4_header_checksum(h.data()));  // sum without id
    const std::uint16_t want = static_cast<std::uint16_t>(~target);
    // want = s0 +' id  =>  id = want -' s0 = want +' ~s0
    const std::uint16_t id = csum_fold(std::uint32_t(want) + static_cast<std::uint16_t>(~s0));
    store_be16(h.data() + 4, id);
    store_be16(h.data() + 10, ipv4_header_checksum(h.data()));
}

// RFC 1071 as written: big-endian 16-bit words, an odd last byte padded
// with a zero byte, end-around carry, complemented.
std::uint16_t textbook_csum(const std::vector<std::uint8_t>& d) {
    std::uint32_t s = 0;
    for (std::size_t i = 0; i < d.size(); i += 2) {
        s += (std::uint32_t{d[i]} << 8) | (i + 1 < d.size() ? d[i + 1] : 0u);
        s = (s & 0xFFFFu) + (s >> 16);
    }
    return static_cast<std::uint16_t>(~s);
}

TEST(ProtoChecksum, InternetChecksumMatchesTextbook) {
    // RFC 1071 sec. 3's example: the words 0001 f203 f4f5 f6f7 sum to ddf2.
    const std::vector<std::uint8_t> rfc{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(inet_checksum(reinterpret_cast<const std::byte*>(rfc.data()), 8), 0x220d);
    EXPECT_EQ(textbook_csum(rfc), 0x220d);
    rng r(1071);
    for (int iter = 0; iter < 20000; ++iter) {
        std::vector<std::uint8_t> d(r.next_u32() % 1600);
        const int fill = iter % 4;  // random, all zero, all ones, a 0x00/0xff mix
        for (auto& b : d) {
            b = fill == 0 ? static_cast<std::uint8_t>(r.next_u32()) : fill == 1 ? 0 : fill == 2 ? 0xff
                : (r.next_u32() & 1u) != 0 ? 0xff : 0;
        }
        const auto* p = reinterpret_cast<const std::byte*>(d.data());
        const auto n = static_cast<std::uint32_t>(d.size());
        const std::uint16_t want = textbook_csum(d);
        ASSERT_EQ(inet_checksum(p, n), want) << "iter " << iter << " len " << n;
        // Split in two at an even offset: a partial sum carried over.
        const std::uint32_t cut = n == 0 ? 0 : (r.next_u32() % n) & ~1u;
        ASSERT_EQ(inet_checksum(p + cut, n - cut, csum_add_native(p, cut, 0)), want) << "iter " << iter;
        // Stored in place, the data then checks to 0.
        if (n >= 2 && n % 2 == 0) {
            std::vector<std::uint8_t> e = d;
            e.push_back(static_cast<std::uint8_t>(want >> 8));
            e.push_back(static_cast<std::uint8_t>(want));
            ASSERT_EQ(inet_checksum(reinterpret_cast<const std::byte*>(e.data()), n + 2), 0) << "iter " << iter;
        }
    }
}

TEST(ProtoChecksum, Ipv6UpperLayerChecksumMatchesTextbook) {
    rng r(8200);
    for (int iter = 0; iter < 5000; ++iter) {
        std::vector<std::uint8_t> ip(40);
        for (auto& b : ip) { b = static_cast<std::uint8_t>(r.next_u32()); }
        std::vector<std::uint8_t> l4(r.next_u32() % 1300);
        for (auto& b : l4) { b = static_cast<std::uint8_t>(r.next_u32()); }
        const auto nh = static_cast<std::uint8_t>(r.next_u32());
        const auto len = static_cast<std::uint32_t>(l4.size());
        // RFC 8200 8.1: source, destination, 32-bit length, 3 zero bytes, next header; then the data.
        std::vector<std::uint8_t> pseudo(ip.begin() + 8, ip.end());
        for (int sh = 24; sh >= 0; sh -= 8) { pseudo.push_back(static_cast<std::uint8_t>(len >> sh)); }
        pseudo.insert(pseudo.end(), {0, 0, 0, nh});
        pseudo.insert(pseudo.end(), l4.begin(), l4.end());
        ASSERT_EQ(ipv6_l4_checksum(reinterpret_cast<const std::byte*>(ip.data()),
                                   reinterpret_cast<const std::byte*>(l4.data()), len, nh),
                  textbook_csum(pseudo))
            << "iter " << iter << " len " << len;
    }
}

TEST(ProtoChecksum, FullComputeKnownHeader) {
    // Vector A IPv4 header, checksum 0xa527.
    const std::array<std::uint8_t, 20> a{0x45, 0x02, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
                                         0xa5, 0x27, 0xc0, 0xa8, 0x01, 0x01, 0xc0, 0xa8, 0x01, 0x02};
    hdr_t h{};
    for (std::size_t i = 0; i < 20; ++i) {
        h[i] = std::byte{a[i]};
    }
    EXPECT_EQ(ipv4_header_checksum(h.data()), 0xa527);
    EXPECT_TRUE(ipv4_checksum_ok(h.data()));
    h[15] = std::byte{2};
    EXPECT_FALSE(ipv4_checksum_ok(h.data()));
}

// The fold as RFC 1071 sec. 2(C) describes it, 16 bits at a time with the
// carries added back until none is left: the reference for csum_fold's
// add-with-carry steps.
std::uint16_t fold_step_by_step(std::uint64_t s) {
    while ((s >> 16) != 0) { s = (s & 0xFFFFu) + (s >> 16); }
    return static_cast<std::uint16_t>(s);
}

TEST(ProtoChecksum, FoldIsTheStepByStepFold) {
    rng r(0xF01D);
    const std::uint64_t edges[] = {0, 1, 0xFFFF, 0x10000, 0x1FFFE, 0xFFFFFFFF, 0x100000000ull, 0xFFFFFFFFFFFFFFFFull,
                                   0xFFFFFFFF00000000ull, 0x00000000FFFF0000ull, 0x8000000080000000ull,
                                   0xFFFF0000FFFF0000ull, 0xFFFEFFFFFFFFFFFFull};
    for (const std::uint64_t e : edges) { ASSERT_EQ(csum_fold(e), fold_step_by_step(e)) << std::hex << e; }
    for (int i = 0; i < 200000; ++i) {
        // Random words, and words made of 0x0000 / 0xFFFF halves (long carry chains).
        std::uint64_t v = (static_cast<std::uint64_t>(r.next_u32()) << 32) | r.next_u32();
        if (i % 3 == 1) {
            v = 0;
            for (int k = 0; k < 4; ++k) { v |= static_cast<std::uint64_t>((r.next_u32() & 1u) != 0 ? 0xFFFF : 0) << (16 * k); }
        }
        ASSERT_EQ(csum_fold(v), fold_step_by_step(v)) << std::hex << v;
        // csum_add64: the same class as the exact sum, never 0 unless both are.
        const std::uint64_t w = (static_cast<std::uint64_t>(r.next_u32()) << 32) | r.next_u32();
        const unsigned __int128 exact = static_cast<unsigned __int128>(v) + w;
        const auto cls = static_cast<std::uint16_t>(exact % 0xFFFFu);
        const std::uint16_t want = exact == 0 ? 0 : cls == 0 ? 0xFFFF : cls;  // the non-zero representative
        ASSERT_EQ(csum_fold(csum_add64(v, w)), want) << std::hex << v << " + " << w;
    }
}

// ipv4_checksum_ok against the textbook sum for every header length (IHL
// 5..15): correct headers, headers with one byte changed, and headers of
// 0x00 / 0xFF bytes, whose sums lie on the ones' complement edge (0xFFFF
// against 0x0000).
TEST(ProtoChecksum, HeaderCheckMatchesTextbookForEveryLength) {
    rng r(791);
    int ok = 0;
    int bad = 0;
    for (int iter = 0; iter < 60000; ++iter) {
        const std::uint32_t ihl = 5 + static_cast<std::uint32_t>(iter % 11);
        std::vector<std::uint8_t> h(4 * ihl);
        const int fill = (iter / 11) % 3;  // random, a 0x00/0xff mix, all 0xff
        for (auto& b : h) {
            b = fill == 0 ? static_cast<std::uint8_t>(r.next_u32()) : fill == 2 ? 0xff
                : (r.next_u32() & 1u) != 0 ? 0xff : 0;
        }
        h[0] = static_cast<std::uint8_t>(0x40 | ihl);
        auto* p = reinterpret_cast<std::byte*>(h.data());
        if ((iter / 33) % 2 == 0) {  // a correct checksum, then perhaps one byte changed
            store_be16(p + 10, ipv4_header_checksum(p, 4 * ihl));
            if ((iter / 66) % 2 == 1) { h[2 + r.next_u32() % (4 * ihl - 2)] ^= static_cast<std::uint8_t>(1u + r.next_u32() % 255); }
        }
        const bool want = textbook_csum(h) == 0;
        ASSERT_EQ(ipv4_checksum_ok(p, 4 * ihl), want) << "iter " << iter << " ihl " << ihl;
        (want ? ok : bad) += 1;
    }
    // Both verdicts were exercised.
    EXPECT_GT(ok, 10000);
    EXPECT_GT(bad, 10000);
}

TEST(ProtoChecksum, Rfc1624MatchesFullRecompute) {
    rng r(0x1624);
    for (int iter = 0; iter < 200000; ++iter) {
        hdr_t h = random_header(r);
        if (iter % 7 == 0) {
            force_checksum(h, 0x0000);
        } else if (iter % 7 == 1) {
            force_checksum(h, static_cast<std::uint16_t>(r.next_u32() % 3));
        }
        ASSERT_TRUE(ipv4_checksum_ok(h.data()));
        // Change one 16-bit word other than the checksum itself.
        unsigned w = r.next_u32() % 10;
        if (w == 5) {
            w = 4;
        }
        const std::uint16_t old_word = load_be16(h.data() + 2 * w);
        std::uint16_t new_word = static_cast<std::uint16_t>(r.next_u32());
        switch (iter % 5) {
            case 0: new_word = 0x0000; break;
            case 1: new_word = 0xFFFF; break;
            default: break;
        }
        if (w == 0) {
            new_word = static_cast<std::uint16_t>(0x4500 | (new_word & 0xFF));
        }
        const std::uint16_t old_csum = load_be16(h.data() + 10);
        store_be16(h.data() + 2 * w, new_word);
        const std::uint16_t inc = csum_update16(old_csum, old_word, new_word);
        const std::uint16_t full = ipv4_header_checksum(h.data());
        ASSERT_EQ(inc, full) << "iter " << iter << " word " << w << " old " << old_word << " new " << new_word;
        EXPECT_NE(inc, 0xFFFF);
    }
}

TEST(ProtoChecksum, EdgeCasesZeroChecksum) {
    // A header whose checksum is 0x0000, then one whose update lands on 0x0000.
    rng r(7);
    for (int i = 0; i < 1000; ++i) {
        hdr_t h = random_header(r);
        force_checksum(h, 0x0000);
        ASSERT_EQ(load_be16(h.data() + 10), 0x0000);
        ASSERT_TRUE(ipv4_checksum_ok(h.data()));
        ipv4_set_tos(h.data(), static_cast<std::uint8_t>(r.next_u32()));
        ASSERT_TRUE(ipv4_checksum_ok(h.data()));
        ASSERT_EQ(load_be16(h.data() + 10), ipv4_header_checksum(h.data()));
    }
    // Direct: old checksum 0x0000 (sum 0xFFFF), word 0x0000 -> 0xFFFF keeps sum 0xFFFF
    // (ones' complement: +0 and -0 are the same class), so the checksum stays 0x0000.
    EXPECT_EQ(csum_update16(0x0000, 0x0000, 0xFFFF), 0x0000);
    EXPECT_EQ(csum_update16(0x0000, 0xFFFF, 0x0000), 0x0000);
    EXPECT_EQ(csum_update16(0x1234, 0x5555, 0x5555), 0x1234);
}

TEST(ProtoChecksum, TtlDecrementAndEcnMarking) {
    rng r(42);
    for (int i = 0; i < 20000; ++i) {
        hdr_t h = random_header(r);
        const std::uint8_t ttl = load_u8(h.data() + 8);
        const std::uint8_t got = ipv4_dec_ttl(h.data());
        if (ttl == 0) {
            EXPECT_EQ(got, 0);
            EXPECT_EQ(load_u8(h.data() + 8), 0);
        } else {
            EXPECT_EQ(got, ttl - 1);
            EXPECT_EQ(load_u8(h.data() + 8), ttl - 1);
        }
        ASSERT_TRUE(ipv4_checksum_ok(h.data()));
        ASSERT_EQ(load_be16(h.data() + 10), ipv4_header_checksum(h.data()));

        const std::uint8_t tos = load_u8(h.data() + 1);
        const bool marked = ipv4_mark_ce(h.data());
        EXPECT_EQ(marked, (tos & 3u) != 0);
        EXPECT_EQ(load_u8(h.data() + 1), marked ? (tos | 3u) : tos);
        ASSERT_TRUE(ipv4_checksum_ok(h.data()));
        ASSERT_EQ(load_be16(h.data() + 10), ipv4_header_checksum(h.data()));

        ipv4_set_dscp(h.data(), 46);
        EXPECT_EQ(ipv4_cview(h.data()).dscp(), 46);
        ASSERT_TRUE(ipv4_checksum_ok(h.data()));
    }
}

// ipv4_dec_ttl's shortcut (HC + 0x0100 with end-around carry) against
// RFC 1624 eqn. 3 (csum_update16) and a full recompute, for every checksum
// value a header can carry and TTLs at the edges.
TEST(ProtoChecksum, TtlDecrementEveryChecksum) {
    rng r(7);
    hdr_t h = random_header(r);
    for (std::uint32_t target = 0; target < 0xFFFF; ++target) {  // 0xFFFF: no header has it (force_checksum)
        for (const std::uint8_t ttl : {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{64}, std::uint8_t{255}}) {
            h[8] = std::byte{ttl};
            force_checksum(h, static_cast<std::uint16_t>(target));
            ASSERT_EQ(load_be16(h.data() + 10), target);
            const std::uint16_t old_word = load_be16(h.data() + 8);
            const std::uint16_t want = csum_update16(static_cast<std::uint16_t>(target), old_word,
                                                     static_cast<std::uint16_t>(old_word - 0x0100u));
            ASSERT_EQ(ipv4_dec_ttl(h.data()), ttl - 1);
            ASSERT_EQ(load_be16(h.data() + 10), want) << "checksum " << target << " ttl " << int{ttl};
            ASSERT_EQ(load_be16(h.data() + 10), ipv4_header_checksum(h.data())) << "checksum " << target;
        }
    }
}

TEST(ProtoChecksum, Ipv6Rewrites) {
    std::array<std::byte, 40> h{};
    ipv6_hdr_params p{};
    p.traffic_class = 0x02;
    p.flow_label = 0x12345;
    p.hop_limit = 2;
    write_ipv6(h.data(), p, 100);
    ipv6_view v(h.data());
    EXPECT_EQ(v.version(), 6);
    EXPECT_EQ(v.ecn(), ecn_ect0);
    EXPECT_TRUE(ipv6_mark_ce(h.data()));
    EXPECT_EQ(v.ecn(), ecn_ce);
    EXPECT_EQ(v.dscp(), 0);
    EXPECT_EQ(v.flow_label(), 0x12345u);
    EXPECT_EQ(ipv6_dec_hop_limit(h.data()), 1);
    EXPECT_EQ(ipv6_dec_hop_limit(h.data()), 0);
    EXPECT_EQ(ipv6_dec_hop_limit(h.data()), 0);
    v.set_traffic_class(0xB8);
    EXPECT_EQ(v.dscp(), 46);
    EXPECT_EQ(v.flow_label(), 0x12345u);
    v.set_ecn(0);
    EXPECT_FALSE(ipv6_mark_ce(h.data()));
}

}  // namespace
}  // namespace rocelab
