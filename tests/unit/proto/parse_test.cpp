// parse_test.cpp - parse_frame: field extraction, one malformed case per
// parse_status, truncation at every byte of every vector, random mutations.
// Each frame is copied into a buffer of exactly `len` bytes, so running this
// binary under valgrind or -fsanitize=address catches any read past the end.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "proto/arp.hpp"
#include "proto/build.hpp"
#include "proto/mac_control.hpp"
#include "proto/parse.hpp"
#include "test_vectors.hpp"

namespace rocelab {
namespace {

using bytes_t = std::vector<std::byte>;
using test::from_hex;

// Parses from an exactly-sized heap copy.
parsed_frame parse_exact(const bytes_t& f, std::size_t len) {
    std::unique_ptr<std::byte[]> p(new std::byte[len == 0 ? 1 : len]);
    if (len != 0) {
        std::memcpy(p.get(), f.data(), len);
    }
    return parse_frame(p.get(), static_cast<std::uint32_t>(len));
}
parsed_frame parse_exact(const bytes_t& f) { return parse_exact(f, f.size()); }

// Inserts a VLAN tag after the MAC addresses.
bytes_t add_tag(bytes_t f, std::uint16_t tpid, vlan_tci tci) {
    std::byte tag[4];
    write_vlan_tag(tag, tpid, tci);
    f.insert(f.begin() + 12, tag, tag + 4);
    return f;
}

// Sets IPv4 total length (and optionally UDP length) of an untagged frame and
// fixes the header checksum; the frame keeps its size (extra bytes become L2
// padding).
bytes_t set_lengths(bytes_t f, std::uint16_t ip_tot, int udp_len = -1) {
    store_be16(f.data() + 14 + 2, ip_tot);
    if (udp_len >= 0) {
        store_be16(f.data() + 34 + 4, static_cast<std::uint16_t>(udp_len));
    }
    ipv4_view(f.data() + 14).update_checksum();
    return f;
}
bytes_t fix_csum(bytes_t f) {
    ipv4_view(f.data() + 14).update_checksum();
    return f;
}

bytes_t arp_frame() {
    bytes_t f(60);
    build_arp(f.data(), arp_op_request, mac_broadcast, mac_addr{2, 0, 0, 0, 0, 1}, ipv4_addr(10, 0, 0, 1),
              mac_addr{}, ipv4_addr(10, 0, 0, 2));
    return f;
}

bytes_t empty_send_only() {
    roce_v4_params p{};
    p.bth.opcode = roce_op::rc_send_only;
    p.pad_to_min_frame = false;
    bytes_t f(roce_v4_frame_len(p));
    build_roce_v4(std::span<std::byte>(f), p);
    return f;
}

struct corpus_case {
    parse_status want;
    std::function<bytes_t()> make;
};

std::vector<corpus_case> corpus() {
    const bytes_t a = from_hex(test::vec_a.hex);
    const bytes_t b = from_hex(test::vec_b.hex);
    const bytes_t c = from_hex(test::vec_c.hex);
    const bytes_t v6 = from_hex(test::vec_f.hex);
    const bytes_t pfc = from_hex(test::vec_pfc_xoff.hex);
    using ps = parse_status;
    std::vector<corpus_case> v;
    v.push_back({ps::ok, [=] { return a; }});
    v.push_back({ps::truncated_eth, [=] { return bytes_t(a.begin(), a.begin() + 13); }});
    v.push_back({ps::truncated_vlan, [=] {
                     bytes_t t = add_tag(a, ethertype_vlan, vlan_tci{3, false, 100});
                     t.resize(17);
                     return t;
                 }});
    v.push_back({ps::too_many_vlan_tags, [=] {
                     return add_tag(add_tag(add_tag(a, ethertype_vlan, {}), ethertype_vlan, {}), ethertype_qinq, {});
                 }});
    v.push_back({ps::truncated_ipv4, [=] { return bytes_t(a.begin(), a.begin() + 14 + 19); }});
    v.push_back({ps::bad_ipv4_version, [=] {
                     bytes_t t = a;
                     t[14] = std::byte{0x55};
                     return fix_csum(t);
                 }});
    v.push_back({ps::bad_ipv4_ihl, [=] {
                     bytes_t t = a;
                     t[14] = std::byte{0x44};
                     return t;
                 }});
    v.push_back({ps::bad_ipv4_total_length, [=] { return set_lengths(a, 19); }});
    v.push_back({ps::truncated_ipv4_payload, [=] { return bytes_t(a.begin(), a.end() - 1); }});
    v.push_back({ps::bad_ipv4_checksum, [=] {
                     bytes_t t = a;
                     t[14 + 4] ^= std::byte{1};
                     return t;
                 }});
    v.push_back({ps::truncated_ipv6, [=] { return bytes_t(v6.begin(), v6.begin() + 14 + 39); }});
    v.push_back({ps::bad_ipv6_version, [=] {
                     bytes_t t = v6;
                     t[14] = std::byte{0x40};
                     return t;
                 }});
    v.push_back({ps::bad_ipv6_payload_length, [=] {
                     bytes_t t = v6;
                     store_be16(t.data() + 18, 0);
                     return t;
                 }});
    v.push_back({ps::truncated_ipv6_payload, [=] { return bytes_t(v6.begin(), v6.end() - 1); }});
    v.push_back({ps::truncated_udp, [=] { return set_lengths(a, 20 + 7); }});
    v.push_back({ps::bad_udp_length, [=] { return set_lengths(a, 60, 41); }});
    v.push_back({ps::truncated_bth, [=] { return set_lengths(a, 20 + 8 + 11, 8 + 11); }});
    v.push_back({ps::roce_bad_tver, [=] {
                     bytes_t t = a;
                     t[42 + 1] = std::byte{0x01};
                     return t;
                 }});
    v.push_back({ps::roce_unknown_opcode, [=] {
                     bytes_t t = a;
                     t[42] = std::byte{0x15};
                     return t;
                 }});
    v.push_back({ps::truncated_roce_ext_header, [=] { return set_lengths(b, 20 + 8 + 12 + 10, 8 + 12 + 10); }});
    v.push_back({ps::truncated_icrc, [=] { return set_lengths(c, 20 + 8 + 12 + 4 + 2, 8 + 12 + 4 + 2); }});
    v.push_back({ps::roce_bad_pad_count, [] {
                     bytes_t t = empty_send_only();
                     t[42 + 1] |= std::byte{0x10};
                     return t;
                 }});
    v.push_back({ps::truncated_mac_control, [=] { return bytes_t(pfc.begin(), pfc.begin() + 14 + 19); }});
    v.push_back({ps::mac_control_unknown_opcode, [=] {
                     bytes_t t = pfc;
                     store_be16(t.data() + 14, 0x0002);
                     return t;
                 }});
    v.push_back({ps::truncated_arp, [] {
                     bytes_t t = arp_frame();
                     t.resize(14 + 27);
                     return t;
                 }});
    return v;
}

TEST(ProtoParse, MalformedCorpusOnePerStatus) {
    std::set<parse_status> covered;
    parse_counters counters{};
    for (const corpus_case& cc : corpus()) {
        const bytes_t f = cc.make();
        const parsed_frame r = parse_exact(f);
        EXPECT_EQ(r.status, cc.want) << "want " << parse_status_name(cc.want) << " got "
                                     << parse_status_name(r.status);
        covered.insert(cc.want);
        counters.account(r.status);
    }
    EXPECT_EQ(covered.size(), parse_status_count) << "every parse_status needs a corpus case";
    for (std::size_t i = 0; i < parse_status_count; ++i) {
        EXPECT_EQ(counters.by_status[i], 1u) << parse_status_name(static_cast<parse_status>(i));
    }
    EXPECT_EQ(counters.malformed(), parse_status_count - 1);
}

// The switch's parse depths: l3 (L2 bridge) stops at the IP header without
// the IPv4 checksum; l4 (router) adds the checksum and UDP; full adds RoCE.
// Each corpus case is found exactly at the depths that reach its layer, and
// the shallower parses agree with the full one on every field they fill.
TEST(ProtoParse, DepthsFindOnlyTheirLayers) {
    using ps = parse_status;
    const std::set<ps> beyond_l3 = {ps::bad_ipv4_checksum, ps::truncated_udp, ps::bad_udp_length};
    const std::set<ps> beyond_l4 = {ps::truncated_bth, ps::roce_bad_tver, ps::roce_unknown_opcode,
                                    ps::truncated_roce_ext_header, ps::truncated_icrc, ps::roce_bad_pad_count};
    for (const corpus_case& cc : corpus()) {
        const bytes_t f = cc.make();
        std::unique_ptr<std::byte[]> p(new std::byte[f.size() == 0 ? 1 : f.size()]);
        if (!f.empty()) { std::memcpy(p.get(), f.data(), f.size()); }
        const auto n = static_cast<std::uint32_t>(f.size());
        const parsed_frame l3 = parse_frame<parse_depth::l3>(p.get(), n);
        const parsed_frame l4 = parse_frame<parse_depth::l4>(p.get(), n);
        const bool past3 = beyond_l3.count(cc.want) + beyond_l4.count(cc.want) != 0;
        const bool past4 = beyond_l4.count(cc.want) != 0;
        EXPECT_EQ(l3.status, past3 ? ps::ok : cc.want) << parse_status_name(cc.want);
        EXPECT_EQ(l4.status, past4 ? ps::ok : cc.want) << parse_status_name(cc.want);
        EXPECT_FALSE(l3.is_roce || l4.is_roce) << parse_status_name(cc.want);
    }
    // A good RoCE frame: the same L2/L3 fields at every depth, ports from l4.
    const bytes_t a = from_hex(test::vec_a.hex);
    const parsed_frame full = parse_exact(a);
    const parsed_frame l3 = parse_frame<parse_depth::l3>(a.data(), static_cast<std::uint32_t>(a.size()));
    const parsed_frame l4 = parse_frame<parse_depth::l4>(a.data(), static_cast<std::uint32_t>(a.size()));
    ASSERT_TRUE(full.ok() && full.is_roce);
    for (const parsed_frame* x : {&l3, &l4}) {
        EXPECT_TRUE(x->ok());
        EXPECT_EQ(x->kind, full.kind);
        EXPECT_EQ(x->dscp, full.dscp);
        EXPECT_EQ(x->ecn, full.ecn);
        EXPECT_EQ(x->ttl, full.ttl);
        EXPECT_EQ(x->l4_proto, full.l4_proto);
        EXPECT_EQ(x->ip4_src, full.ip4_src);
        EXPECT_EQ(x->ip4_dst, full.ip4_dst);
        EXPECT_EQ(x->l4_off, full.l4_off);
    }
    EXPECT_EQ(l4.sport, full.sport);
    EXPECT_EQ(l4.dport, 4791);
    EXPECT_EQ(l3.sport, 0);
}

TEST(ProtoParse, StatusNamesStableAndSnakeCase) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < parse_status_count; ++i) {
        const std::string n = parse_status_name(static_cast<parse_status>(i));
        ASSERT_FALSE(n.empty());
        for (char ch : n) {
            EXPECT_TRUE(std::islower(static_cast<unsigned char>(ch)) || ch == '_' || std::isdigit(ch)) << n;
        }
        names.insert(n);
    }
    EXPECT_EQ(names.size(), parse_status_count);
    EXPECT_STREQ(parse_status_name(parse_status::ok), "ok");
    EXPECT_STREQ(parse_status_name(parse_status::truncated_arp), "truncated_arp");
    EXPECT_STREQ(parse_status_name(static_cast<parse_status>(200)), "invalid");
}

std::vector<bytes_t> all_frames() {
    std::vector<bytes_t> v;
    for (const auto& rv : test::roce_vectors) {
        const bytes_t f = from_hex(rv.hex);
        v.push_back(f);
        v.push_back(add_tag(f, ethertype_vlan, vlan_tci{3, false, 100}));
        v.push_back(add_tag(add_tag(f, ethertype_vlan, vlan_tci{5, true, 7}), ethertype_qinq, vlan_tci{1, false, 4000}));
    }
    v.push_back(from_hex(test::vec_pfc_xoff.hex));
    v.push_back(from_hex(test::vec_pause.hex));
    v.push_back(arp_frame());
    v.push_back(empty_send_only());
    return v;
}

TEST(ProtoParse, TruncationAtEveryOffset) {
    for (const bytes_t& f : all_frames()) {
        ASSERT_TRUE(parse_exact(f).ok()) << parse_status_name(parse_exact(f).status);
        for (std::size_t len = 0; len < f.size(); ++len) {
            const parsed_frame r = parse_exact(f, len);
            const std::string n = parse_status_name(r.status);
            EXPECT_TRUE(r.ok() || n.rfind("truncated_", 0) == 0) << "len " << len << " -> " << n;
        }
    }
}

TEST(ProtoParse, RandomMutationsNeverCrash) {
    rng r(2024);
    const auto frames = all_frames();
    std::uint64_t seen_ok = 0;
    for (int i = 0; i < 200000; ++i) {
        bytes_t f = frames[r.next_u32() % frames.size()];
        const unsigned flips = 1 + r.next_u32() % 4;
        for (unsigned k = 0; k < flips; ++k) {
            f[r.next_u32() % f.size()] = std::byte(r.next_u32());
        }
        const std::size_t len = r.next_u32() % (f.size() + 1);
        const parsed_frame p = parse_exact(f, len);
        ASSERT_LT(static_cast<std::size_t>(p.status), parse_status_count);
        if (p.ok()) {
            ++seen_ok;
            // Whatever was reported as present lies inside the frame.
            ASSERT_LE(p.l3_off, len);
            if (p.is_roce) {
                ASSERT_LE(std::size_t(p.roce_payload_off) + p.roce_payload_len + 4, len);
            }
        }
    }
    EXPECT_GT(seen_ok, 0u);
}

TEST(ProtoParse, VlanTags) {
    const bytes_t a = from_hex(test::vec_a.hex);
    const parsed_frame one = parse_exact(add_tag(a, ethertype_vlan, vlan_tci{6, true, 0xABC}));
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(one.vlan_count, 1);
    EXPECT_EQ(one.outer_pcp, 6);
    EXPECT_EQ(one.outer_vid, 0xABC);
    EXPECT_EQ(one.l3_off, 18);
    EXPECT_EQ(one.bth_off, 46);
    EXPECT_TRUE(one.is_roce);

    // 802.1ad S-tag outside, C-tag inside: the outer tag is reported.
    const bytes_t qq = add_tag(add_tag(a, ethertype_vlan, vlan_tci{1, false, 20}), ethertype_qinq,
                               vlan_tci{7, false, 300});
    const parsed_frame two = parse_exact(qq);
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(two.vlan_count, 2);
    EXPECT_EQ(two.outer_pcp, 7);
    EXPECT_EQ(two.outer_vid, 300);
    EXPECT_EQ(two.l3_off, 22);
    EXPECT_EQ(two.ethertype, ethertype_ipv4);
    vlan_cview inner(qq.data() + 16);
    EXPECT_EQ(inner.tpid(), ethertype_vlan);
    EXPECT_EQ(inner.pcp(), 1);
    EXPECT_EQ(inner.vid(), 20);
}

TEST(ProtoParse, NonRoceIsNotMalformed) {
    const bytes_t a = from_hex(test::vec_a.hex);
    // UDP to another port.
    bytes_t u = a;
    store_be16(u.data() + 36, 53);
    parsed_frame r = parse_exact(u);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r.is_roce);
    EXPECT_EQ(r.dport, 53);
    EXPECT_EQ(r.bth_off, 0);
    // TCP.
    bytes_t t = a;
    t[14 + 9] = std::byte{ip_proto_tcp};
    r = parse_exact(fix_csum(t));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.l4_proto, ip_proto_tcp);
    EXPECT_EQ(r.l4_off, 34);
    EXPECT_EQ(r.sport, 0);
    // Unknown EtherType.
    bytes_t o = a;
    store_be16(o.data() + 12, 0x88CC);
    r = parse_exact(o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.kind, frame_kind::other);
    EXPECT_EQ(r.ethertype, 0x88CC);
    // ARP.
    r = parse_exact(arp_frame());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.kind, frame_kind::arp);
    const bytes_t af = arp_frame();
    arp_cview av(af.data() + 14);
    EXPECT_EQ(av.oper(), arp_op_request);
    EXPECT_EQ(av.spa(), ipv4_addr(10, 0, 0, 1));
    EXPECT_EQ(av.tpa(), ipv4_addr(10, 0, 0, 2));
    bytes_t weird = arp_frame();
    weird[14 + 1] = std::byte{6};  // htype 6 (IEEE 802)
    r = parse_exact(weird);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.kind, frame_kind::other);
    // IPv6 with a non-UDP next header.
    bytes_t v6 = from_hex(test::vec_f.hex);
    v6[14 + 6] = std::byte{ip_proto_tcp};
    r = parse_exact(v6);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.l4_proto, ip_proto_tcp);
    EXPECT_EQ(r.l4_off, 54);
}

TEST(ProtoParse, Ipv4FragmentsAreOkWithoutL4) {
    const bytes_t a = from_hex(test::vec_a.hex);
    for (std::uint16_t ff : {std::uint16_t{0x2000}, std::uint16_t{0x0010}, std::uint16_t{0x2010}}) {
        bytes_t t = a;
        store_be16(t.data() + 14 + 6, ff);
        const parsed_frame r = parse_exact(fix_csum(t));
        ASSERT_TRUE(r.ok()) << parse_status_name(r.status);
        EXPECT_TRUE(r.ipv4_fragment);
        EXPECT_EQ(r.l4_off, 0);
        EXPECT_FALSE(r.is_roce);
        EXPECT_EQ(r.l4_proto, ip_proto_udp);
        EXPECT_EQ(r.ip4_dst, ipv4_addr(192, 168, 1, 2));
    }
}

TEST(ProtoParse, EthernetPaddingAndIpv4Options) {
    // Trailing L2 padding after the datagram is ignored.
    bytes_t a = from_hex(test::vec_a.hex);
    a.resize(a.size() + 10);
    parsed_frame r = parse_exact(a);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.roce_payload_len, 16);
    EXPECT_TRUE(roce_frame_icrc_ok(a.data(), r));

    // IPv4 with 4 bytes of options: header 24, ICRC covers the options.
    bytes_t o = from_hex(test::vec_a.hex);
    const std::byte nop4[4] = {std::byte{1}, std::byte{1}, std::byte{1}, std::byte{0}};
    o.insert(o.begin() + 34, nop4, nop4 + 4);
    o[14] = std::byte{0x46};
    store_be16(o.data() + 16, 64);
    ipv4_view(o.data() + 14).update_checksum();
    const std::uint32_t l3len = 64 - 4;
    icrc_store(o.data() + 14 + l3len, roce_icrc(o.data() + 14, l3len, false));
    r = parse_exact(o);
    ASSERT_TRUE(r.ok()) << parse_status_name(r.status);
    EXPECT_EQ(r.l4_off, 38);
    EXPECT_EQ(r.bth_off, 46);
    EXPECT_TRUE(roce_frame_icrc_ok(o.data(), r));
}

TEST(ProtoParse, DscpEcnTtl) {
    bytes_t e = from_hex(test::vec_e.hex);
    ipv4_set_ecn(e.data() + 14, ecn_ect1);
    ipv4_dec_ttl(e.data() + 14);
    const parsed_frame r = parse_exact(e);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.dscp, 48);
    EXPECT_EQ(r.ecn, ecn_ect1);
    EXPECT_EQ(r.ttl, 63);
    EXPECT_TRUE(roce_frame_icrc_ok(e.data(), r));
}

// roce_payload_is: the pattern, its pad and its place before the ICRC,
// exactly; a frame with any other payload (or a non-zero pad byte, or
// bytes between the pad and the ICRC) is not it.
TEST(ProtoParse, RocePayloadIsThePatternExactly) {
    std::vector<std::byte> pattern(4096);
    for (std::size_t i = 0; i < pattern.size(); ++i) { pattern[i] = static_cast<std::byte>(i & 0xFF); }
    for (std::uint32_t len : {1u, 3u, 255u, 256u, 1021u, 1024u, 4096u}) {
        roce_v4_params p{};
        p.bth.opcode = roce_op::rc_write_only;
        p.payload = std::span<const std::byte>(pattern.data(), len);
        bytes_t f(roce_v4_frame_len(p));
        build_roce_v4(std::span<std::byte>(f), p);
        const parsed_frame pf = parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
        ASSERT_TRUE(pf.ok());
        ASSERT_EQ(pf.roce_payload_len, len);
        EXPECT_TRUE(roce_payload_is(f.data(), pf, pattern)) << len;
        EXPECT_FALSE(roce_payload_is(f.data(), pf, std::span<const std::byte>(pattern.data(), len - 1))) << len;
        bytes_t g = f;
        g[pf.roce_payload_off + len / 2] ^= std::byte{1};  // one payload bit
        EXPECT_FALSE(roce_payload_is(g.data(), pf, pattern)) << len;
        if (pf.pad_count != 0) {
            bytes_t h = f;
            h[pf.roce_payload_off + len] = std::byte{1};  // a pad byte
            EXPECT_FALSE(roce_payload_is(h.data(), pf, pattern)) << len;
        }
    }
    // A frame whose payload is another pattern.
    roce_v4_params p{};
    p.bth.opcode = roce_op::rc_write_only;
    std::vector<std::byte> other(512, std::byte{0x5a});
    p.payload = other;
    bytes_t f(roce_v4_frame_len(p));
    build_roce_v4(std::span<std::byte>(f), p);
    const parsed_frame pf = parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
    EXPECT_FALSE(roce_payload_is(f.data(), pf, pattern));
}

}  // namespace
}  // namespace rocelab
