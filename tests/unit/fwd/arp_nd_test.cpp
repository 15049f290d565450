// arp_nd_test.cpp - ARP reply, IPv6 NS -> NA, ICMP echo bytes.
//
// Checksums are verified with an independent, straightforward RFC 1071
// implementation over a byte vector (ref_csum below), not with proto/csum.hpp.
#include "fwd/arp_nd.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/rng.hpp"

using namespace rocelab;

namespace {

using bytes_t = std::vector<std::byte>;

const mac_addr our_mac{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01};
const mac_addr peer_mac{0x52, 0x54, 0x00, 0x00, 0x00, 0x10};
constexpr std::uint32_t our_ip = 0x0a000001;   // 10.0.0.1
constexpr std::uint32_t peer_ip = 0x0a000000;  // 10.0.0.0
const std::uint8_t our_ip6[16] = {0xfc, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
const std::uint8_t peer_ip6[16] = {0xfc, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

void put(bytes_t& b, std::initializer_list<int> v) {
    for (int x : v) {
        b.push_back(std::byte(x));
    }
}
void put_mac(bytes_t& b, const mac_addr& m) {
    for (auto x : m) {
        b.push_back(std::byte(x));
    }
}
void put16(bytes_t& b, std::uint16_t v) {
    put(b, {v >> 8, v & 0xff});
}
void put32(bytes_t& b, std::uint32_t v) {
    put(b, {int(v >> 24), int((v >> 16) & 0xff), int((v >> 8) & 0xff), int(v & 0xff)});
}
void put_ip6(bytes_t& b, const std::uint8_t* a) {
    for (int i = 0; i < 16; ++i) {
        b.push_back(std::byte(a[i]));
    }
}
std::uint8_t u8(const bytes_t& b, std::size_t i) {
    return std::to_integer<std::uint8_t>(b[i]);
}
std::uint16_t u16(const bytes_t& b, std::size_t i) {
    return static_cast<std::uint16_t>(u8(b, i) << 8 | u8(b, i + 1));
}

// Independent RFC 1071 checksum; returns the folded one's-complement sum
// (0xffff for a valid packet including its checksum).
std::uint16_t ref_sum(const std::vector<std::uint8_t>& d) {
    std::uint32_t s = 0;
    for (std::size_t i = 0; i < d.size(); i += 2) {
        const std::uint32_t hi = d[i];
        const std::uint32_t lo = i + 1 < d.size() ? d[i + 1] : 0;
        s += (hi << 8) | lo;
        s = (s & 0xffff) + (s >> 16);
    }
    return static_cast<std::uint16_t>(s);
}
// Verifies the ICMPv6 checksum of the IPv6 packet at l3 in frame f.
bool icmp6_csum_ok(const bytes_t& f, std::size_t l3) {
    const std::size_t plen = u16(f, l3 + 4);
    std::vector<std::uint8_t> ph;
    for (std::size_t i = 0; i < 32; ++i) {
        ph.push_back(u8(f, l3 + 8 + i));
    }
    ph.push_back(0);
    ph.push_back(0);
    ph.push_back(static_cast<std::uint8_t>(plen >> 8));
    ph.push_back(static_cast<std::uint8_t>(plen));
    ph.push_back(0);
    ph.push_back(0);
    ph.push_back(0);
    ph.push_back(u8(f, l3 + 6));
    for (std::size_t i = 0; i < plen; ++i) {
        ph.push_back(u8(f, l3 + 40 + i));
    }
    return ref_sum(ph) == 0xffff;
}
bool range_ok(const bytes_t& f, std::size_t off, std::size_t len) {
    std::vector<std::uint8_t> d;
    for (std::size_t i = 0; i < len; ++i) {
        d.push_back(u8(f, off + i));
    }
    return ref_sum(d) == 0xffff;
}
// Writes a correct ICMPv6 checksum into a frame built by the tests.
void fix_icmp6_csum(bytes_t& f, std::size_t l3) {
    f[l3 + 42] = f[l3 + 43] = std::byte{0};
    std::span<const std::byte> s(f);
    const std::uint16_t c = ipv6_l4_checksum(s.data() + l3, s.data() + l3 + 40, u16(f, l3 + 4), 58);
    f[l3 + 42] = std::byte(c >> 8);
    f[l3 + 43] = std::byte(c & 0xff);
    ASSERT_TRUE(icmp6_csum_ok(f, l3));
}

local_addrs make_locals() {
    local_addrs me;
    me.add_v4(our_ip, 31, 0, our_mac);
    me.add_v6(our_ip6, 127, 0, our_mac);
    return me;
}

bytes_t eth(const mac_addr& dst, const mac_addr& src, std::uint16_t type, bool vlan = false) {
    bytes_t f;
    put_mac(f, dst);
    put_mac(f, src);
    if (vlan) {
        put16(f, 0x8100);
        put16(f, 0x6064);  // PCP 3, VID 100
    }
    put16(f, type);
    return f;
}

bytes_t arp_request(std::uint32_t spa, std::uint32_t tpa, bool vlan = false, std::uint16_t op = 1) {
    bytes_t f = eth({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, peer_mac, 0x0806, vlan);
    put16(f, 1);
    put16(f, 0x0800);
    put(f, {6, 4});
    put16(f, op);
    put_mac(f, peer_mac);
    put32(f, spa);
    put_mac(f, {});
    put32(f, tpa);
    return f;
}

bytes_t neighbor_solicit(const std::uint8_t* src, const std::uint8_t* dst, const std::uint8_t* target,
                         bool sll, std::uint8_t hop = 255) {
    bytes_t f = eth({0x33, 0x33, 0xff, 0, 0, 1}, peer_mac, 0x86DD);
    const std::size_t l3 = f.size();
    put32(f, 0x60000000);
    put16(f, sll ? 32 : 24);
    put(f, {58, hop});
    put_ip6(f, src);
    put_ip6(f, dst);
    put(f, {135, 0, 0, 0, 0, 0, 0, 0});
    put_ip6(f, target);
    if (sll) {
        put(f, {1, 1});
        put_mac(f, peer_mac);
    }
    fix_icmp6_csum(f, l3);
    return f;
}

}  // namespace

TEST(arp, reply_bytes_exact) {
    const local_addrs me = make_locals();
    const bytes_t req = arp_request(peer_ip, our_ip);
    bytes_t out(128, std::byte{0xee});
    const nd_result r = arp_reply(req, 14, me, 0, out);
    ASSERT_EQ(r.status, nd_status::reply);
    ASSERT_EQ(r.len, 60u);
    out.resize(r.len);

    bytes_t want = eth(peer_mac, our_mac, 0x0806);
    put16(want, 1);
    put16(want, 0x0800);
    put(want, {6, 4});
    put16(want, 2);
    put_mac(want, our_mac);
    put32(want, our_ip);
    put_mac(want, peer_mac);
    put32(want, peer_ip);
    want.resize(60, std::byte{0});
    EXPECT_EQ(out, want);
}

TEST(arp, reply_in_place_with_vlan_tag) {
    const local_addrs me = make_locals();
    bytes_t f = arp_request(peer_ip, our_ip, true);
    f.resize(64, std::byte{0x55});
    const nd_result r = arp_reply(f, 18, me, local_addrs::any_port, f);
    ASSERT_EQ(r.status, nd_status::reply);
    EXPECT_EQ(r.len, 60u);
    EXPECT_EQ(u16(f, 12), 0x8100);
    EXPECT_EQ(u16(f, 14), 0x6064);
    EXPECT_EQ(u16(f, 16), 0x0806);
    EXPECT_EQ(load_mac(f.data()), peer_mac);
    EXPECT_EQ(load_mac(f.data() + 6), our_mac);
    EXPECT_EQ(u16(f, 18 + 6), 2);
    EXPECT_EQ(load_mac(f.data() + 18 + 8), our_mac);
    EXPECT_EQ(load_be32(f.data() + 18 + 14), our_ip);
    EXPECT_EQ(load_mac(f.data() + 18 + 18), peer_mac);
    EXPECT_EQ(load_be32(f.data() + 18 + 24), peer_ip);
    EXPECT_EQ(u8(f, 59), 0);  // padding zeroed
}

TEST(arp, not_answered) {
    const local_addrs me = make_locals();
    bytes_t out(128);
    EXPECT_EQ(arp_reply(arp_request(peer_ip, 0x0a000009), 14, me, 0, out).status, nd_status::not_for_us);
    EXPECT_EQ(arp_reply(arp_request(peer_ip, our_ip), 14, me, 1, out).status, nd_status::not_for_us)
        << "address lives on port 0";
    EXPECT_EQ(arp_reply(arp_request(our_ip, our_ip), 14, me, 0, out).status, nd_status::ignored)
        << "gratuitous";
    EXPECT_EQ(arp_reply(arp_request(peer_ip, our_ip, false, 2), 14, me, 0, out).status, nd_status::ignored);
    bytes_t trunc = arp_request(peer_ip, our_ip);
    trunc.resize(30);
    EXPECT_EQ(arp_reply(trunc, 14, me, 0, out).status, nd_status::malformed);
    bytes_t small(40);
    EXPECT_EQ(arp_reply(arp_request(peer_ip, our_ip), 14, me, 0, small).status, nd_status::no_room);
}

TEST(nd, solicited_advertisement) {
    const local_addrs me = make_locals();
    std::uint8_t sn[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};
    const bytes_t ns = neighbor_solicit(peer_ip6, sn, our_ip6, true);
    bytes_t out(256);
    const nd_result r = nd_advertise(ns, 14, me, 0, out);
    ASSERT_EQ(r.status, nd_status::reply);
    ASSERT_EQ(r.len, 14u + 40 + 32);
    out.resize(r.len);

    // Expected frame, checksum taken from the output then verified independently.
    bytes_t want = eth(peer_mac, our_mac, 0x86DD);
    put32(want, 0x60000000);
    put16(want, 32);
    put(want, {58, 255});
    put_ip6(want, our_ip6);
    put_ip6(want, peer_ip6);
    put(want, {136, 0, u8(out, 14 + 42), u8(out, 14 + 43), 0xE0, 0, 0, 0});
    put_ip6(want, our_ip6);
    put(want, {2, 1});
    put_mac(want, our_mac);
    EXPECT_EQ(out, want);
    EXPECT_TRUE(icmp6_csum_ok(out, 14));
}

TEST(nd, advertisement_without_sll_uses_frame_source) {
    const local_addrs me = make_locals();
    bytes_t ns = neighbor_solicit(peer_ip6, our_ip6, our_ip6, false);  // unicast NS (NUD), 78 bytes
    ns.resize(128);  // room for the 86-byte NA, answered in place
    const nd_result r = nd_advertise(ns, 14, me, 0, ns);
    ASSERT_EQ(r.status, nd_status::reply);
    ns.resize(r.len);
    EXPECT_EQ(load_mac(ns.data()), peer_mac);
    EXPECT_EQ(u8(ns, 14 + 44), 0xE0);
    EXPECT_TRUE(icmp6_csum_ok(ns, 14));
}

TEST(nd, dad_probe_answered_to_all_nodes) {
    const local_addrs me = make_locals();
    const std::uint8_t unspec[16] = {};
    std::uint8_t sn[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};
    const bytes_t ns = neighbor_solicit(unspec, sn, our_ip6, false);
    bytes_t out(256);
    const nd_result r = nd_advertise(ns, 14, me, 0, out, true);
    ASSERT_EQ(r.status, nd_status::reply);
    out.resize(r.len);
    const mac_addr all_nodes_mac{0x33, 0x33, 0, 0, 0, 1};
    EXPECT_EQ(load_mac(out.data()), all_nodes_mac);
    EXPECT_EQ(u8(out, 14 + 24), 0xff);
    EXPECT_EQ(u8(out, 14 + 39), 0x01);
    EXPECT_EQ(u8(out, 14 + 44), 0xA0) << "router + override, not solicited";
    EXPECT_TRUE(icmp6_csum_ok(out, 14));
}

TEST(nd, rejected) {
    const local_addrs me = make_locals();
    bytes_t out(256);
    const std::uint8_t other[16] = {0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
    EXPECT_EQ(nd_advertise(neighbor_solicit(peer_ip6, other, other, true), 14, me, 0, out).status,
              nd_status::not_for_us);
    EXPECT_EQ(nd_advertise(neighbor_solicit(peer_ip6, our_ip6, our_ip6, true, 64), 14, me, 0, out).status,
              nd_status::malformed)
        << "hop limit must be 255";
    bytes_t bad = neighbor_solicit(peer_ip6, our_ip6, our_ip6, true);
    bad[14 + 43] ^= std::byte{1};
    EXPECT_EQ(nd_advertise(bad, 14, me, 0, out).status, nd_status::malformed) << "bad checksum";
    bytes_t zero_opt = neighbor_solicit(peer_ip6, our_ip6, our_ip6, true);
    zero_opt[14 + 40 + 25] = std::byte{0};
    fix_icmp6_csum(zero_opt, 14);
    EXPECT_EQ(nd_advertise(zero_opt, 14, me, 0, out).status, nd_status::malformed) << "option length 0";
    const std::uint8_t unspec[16] = {};
    EXPECT_EQ(nd_advertise(neighbor_solicit(unspec, our_ip6, our_ip6, true), 14, me, 0, out).status,
              nd_status::malformed)
        << "DAD with SLL option";
}

TEST(icmp, echo_v4_in_place) {
    const local_addrs me = make_locals();
    bytes_t f = eth(our_mac, peer_mac, 0x0800);
    put(f, {0x45, 0});
    put16(f, 20 + 8 + 4);
    put(f, {0x12, 0x34, 0x40, 0x00, 63, 1, 0, 0});
    put32(f, peer_ip);
    put32(f, our_ip);
    put(f, {8, 0, 0, 0, 0x00, 0x01, 0x00, 0x07, 'p', 'i', 'n', 'g'});
    {
        std::vector<std::uint8_t> h;
        for (int i = 0; i < 20; ++i) {
            h.push_back(u8(f, 14 + i));
        }
        const std::uint16_t c = static_cast<std::uint16_t>(~ref_sum(h));
        f[14 + 10] = std::byte(c >> 8);
        f[14 + 11] = std::byte(c & 0xff);
        std::vector<std::uint8_t> ic;
        for (int i = 0; i < 12; ++i) {
            ic.push_back(u8(f, 34 + i));
        }
        const std::uint16_t c2 = static_cast<std::uint16_t>(~ref_sum(ic));
        f[34 + 2] = std::byte(c2 >> 8);
        f[34 + 3] = std::byte(c2 & 0xff);
    }
    f.resize(60, std::byte{0});
    const nd_result r = icmp4_echo_reply(f, 14, me, 0, f);
    ASSERT_EQ(r.status, nd_status::reply);
    EXPECT_EQ(r.len, 60u);
    EXPECT_EQ(load_mac(f.data()), peer_mac);
    EXPECT_EQ(load_mac(f.data() + 6), our_mac);
    EXPECT_EQ(load_be32(f.data() + 14 + 12), our_ip);
    EXPECT_EQ(load_be32(f.data() + 14 + 16), peer_ip);
    EXPECT_EQ(u8(f, 34), 0);
    EXPECT_EQ(u8(f, 34 + 8), 'p');
    EXPECT_TRUE(range_ok(f, 14, 20));
    EXPECT_TRUE(range_ok(f, 34, 12));
}

TEST(icmp, echo_v6) {
    const local_addrs me = make_locals();
    bytes_t f = eth(our_mac, peer_mac, 0x86DD);
    put32(f, 0x60000000);
    put16(f, 12);
    put(f, {58, 64});
    put_ip6(f, peer_ip6);
    put_ip6(f, our_ip6);
    put(f, {128, 0, 0, 0, 0, 1, 0, 9, 'a', 'b', 'c', 'd'});
    fix_icmp6_csum(f, 14);
    bytes_t out(128);
    const nd_result r = icmp6_echo_reply(f, 14, me, 0, out);
    ASSERT_EQ(r.status, nd_status::reply);
    out.resize(r.len);
    EXPECT_EQ(u8(out, 54), 129);
    EXPECT_EQ(load_mac(out.data()), peer_mac);
    EXPECT_EQ(u8(out, 14 + 8 + 15), 1) << "src = our address";
    EXPECT_EQ(u8(out, 14 + 24 + 15), 2) << "dst = peer";
    EXPECT_TRUE(icmp6_csum_ok(out, 14));
}

TEST(local_addrs, lookup_and_solicited_node) {
    const local_addrs me = make_locals();
    EXPECT_TRUE(me.is_local_v4(our_ip));
    EXPECT_FALSE(me.is_local_v4(peer_ip));
    EXPECT_TRUE(me.is_local_v6(our_ip6));
    EXPECT_FALSE(me.is_local_v6(peer_ip6));
    std::uint8_t sn[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};
    EXPECT_NE(me.find_v6_solicited(sn), nullptr);
    sn[15] = 2;
    EXPECT_EQ(me.find_v6_solicited(sn), nullptr);
}

// is_local_v4/v6 ask a filter of the addresses' hashes before the scan:
// the answer must be the scan's for every address. A full table of 64
// random addresses of each family (the filter then has many bits set),
// each asked as added, and 200,000 random others (and near neighbours of
// the added ones) against find_v4/v6; and the filter answers most of the
// others alone (its slots spread: at most 64 of the 1024 set).
TEST(local_addrs, filtered_answer_is_the_scan) {
    local_addrs me;
    rng r{5};
    std::vector<std::uint32_t> v4;
    std::vector<std::array<std::uint8_t, 16>> v6;
    for (std::size_t i = 0; i < max_local_addrs; ++i) {
        const auto a = static_cast<std::uint32_t>(r.next());
        std::array<std::uint8_t, 16> b{};
        for (auto& x : b) { x = static_cast<std::uint8_t>(r.next()); }
        ASSERT_TRUE(me.add_v4(a, 24, static_cast<std::uint16_t>(i % 8), mac_addr{}));
        ASSERT_TRUE(me.add_v6(b.data(), 64, static_cast<std::uint16_t>(i % 8), mac_addr{}));
        v4.push_back(a);
        v6.push_back(b);
    }
    for (const auto a : v4) {
        EXPECT_TRUE(me.is_local_v4(a));
        EXPECT_EQ(me.is_local_v4(a + 1), me.find_v4(a + 1) != nullptr);
    }
    for (auto b : v6) {
        EXPECT_TRUE(me.is_local_v6(b.data()));
        b[15] ^= 1;
        EXPECT_EQ(me.is_local_v6(b.data()), me.find_v6(b.data()) != nullptr);
    }
    std::array<bool, 1024> s4{}, s6{};
    for (const auto a : v4) { s4[local_addrs::slot_v4(a)] = true; }
    for (const auto& b : v6) { s6[local_addrs::slot_v6(b.data())] = true; }
    std::size_t filtered4 = 0, filtered6 = 0;
    for (int i = 0; i < 200000; ++i) {
        const auto a = static_cast<std::uint32_t>(r.next());
        std::array<std::uint8_t, 16> b{};
        for (auto& x : b) { x = static_cast<std::uint8_t>(r.next()); }
        ASSERT_EQ(me.is_local_v4(a), me.find_v4(a) != nullptr) << a;
        ASSERT_EQ(me.is_local_v6(b.data()), me.find_v6(b.data()) != nullptr);
        filtered4 += s4[local_addrs::slot_v4(a)] ? 0 : 1;
        filtered6 += s6[local_addrs::slot_v6(b.data())] ? 0 : 1;
    }
    // 64 addresses set at most 64 slots: about 15/16 of other addresses skip the scan.
    EXPECT_GT(filtered4, 180000u);
    EXPECT_GT(filtered6, 180000u);
}

// ---- independent decoder cross-check (tshark is required: tools/setup.sh installs it) ----

namespace {

void write_pcap(const std::string& path, const std::vector<bytes_t>& frames) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::uint32_t gh[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1};  // v2.4, LINKTYPE_ETHERNET
    std::fwrite(gh, sizeof gh, 1, f);
    for (const auto& fr : frames) {
        const std::uint32_t rh[4] = {0, 0, static_cast<std::uint32_t>(fr.size()),
                                     static_cast<std::uint32_t>(fr.size())};
        std::fwrite(rh, sizeof rh, 1, f);
        std::fwrite(fr.data(), 1, fr.size(), f);
    }
    std::fclose(f);
}

std::vector<std::string> tshark_fields(const std::string& pcap, const std::string& fields) {
    const std::string cmd = "/usr/bin/tshark -n -r " + pcap +
                            " -o ip.check_checksum:TRUE"
                            " -T fields -E separator=, " +
                            fields + " 2>/dev/null";
    std::vector<std::string> lines;
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return lines;
    }
    char buf[1024];
    while (std::fgets(buf, sizeof buf, p) != nullptr) {
        std::string s(buf);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
            s.pop_back();
        }
        lines.push_back(s);
    }
    ::pclose(p);
    return lines;
}

}  // namespace

TEST(arp_nd, tshark_decodes_replies) {
    // A missing decoder is a failure, not a skip: tools/setup.sh installs tshark,
    // and a skipped cross-check would let meson report OK for a check never made.
    ASSERT_EQ(::access("/usr/bin/tshark", X_OK), 0) << "/usr/bin/tshark is missing: run tools/setup.sh";
    const local_addrs me = make_locals();
    std::vector<bytes_t> frames;
    {
        bytes_t out(128);
        const nd_result r = arp_reply(arp_request(peer_ip, our_ip), 14, me, 0, out);
        ASSERT_EQ(r.status, nd_status::reply);
        out.resize(r.len);
        frames.push_back(out);
    }
    {
        std::uint8_t sn[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};
        bytes_t out(256);
        const nd_result r = nd_advertise(neighbor_solicit(peer_ip6, sn, our_ip6, true), 14, me, 0, out);
        ASSERT_EQ(r.status, nd_status::reply);
        out.resize(r.len);
        frames.push_back(out);
    }
    const std::string path = ::testing::TempDir() + "fwd_arp_nd_" + std::to_string(::getpid()) + ".pcap";
    write_pcap(path, frames);
    const auto arp = tshark_fields(path,
                                   "-Y arp -e arp.opcode -e arp.src.hw_mac -e arp.src.proto_ipv4 "
                                   "-e arp.dst.hw_mac -e arp.dst.proto_ipv4");
    const auto na = tshark_fields(path,
                                  "-Y icmpv6 -e icmpv6.type -e icmpv6.checksum.status -e icmpv6.nd.na.flag.r "
                                  "-e icmpv6.nd.na.flag.s -e icmpv6.nd.na.flag.o "
                                  "-e icmpv6.nd.na.target_address -e icmpv6.opt.linkaddr -e ipv6.dst");
    std::remove(path.c_str());
    ASSERT_EQ(arp.size(), 1u);
    EXPECT_EQ(arp[0], "2,02:aa:bb:cc:dd:01,10.0.0.1,52:54:00:00:00:10,10.0.0.0");
    ASSERT_EQ(na.size(), 1u);
    // checksum.status 1 = Good; flags R, S, O set.
    EXPECT_EQ(na[0], "136,1,1,1,1,fc00::1,02:aa:bb:cc:dd:01,fc00::2");
}

TEST(arp_nd, in_place_shorthands) {
    // ARP: same bytes as arp_reply() for an address we own.
    const local_addrs me = make_locals();
    bytes_t a = arp_request(peer_ip, our_ip);
    a.resize(60, std::byte{0});
    bytes_t want(128);
    want.resize(arp_reply(a, 14, me, 0, want).len);
    EXPECT_EQ(arp_target_ip(a.data() + 14), our_ip);
    ASSERT_TRUE(arp_make_reply(a.data(), a.size(), 14, our_mac.data()));
    EXPECT_EQ(a, want);
    bytes_t not_req = arp_request(peer_ip, our_ip, false, 2);
    EXPECT_FALSE(arp_make_reply(not_req.data(), not_req.size(), 14, our_mac.data()));

    // ND: an NS with a source link-layer option is exactly NA-sized.
    std::uint8_t sn[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};
    bytes_t ns = neighbor_solicit(peer_ip6, sn, our_ip6, true);
    ASSERT_TRUE(nd_is_solicitation(ns.data(), 14, ns.size()));
    EXPECT_EQ(std::memcmp(nd_target(ns.data(), 14), our_ip6, 16), 0);
    bytes_t na(256);
    na.resize(nd_advertise(ns, 14, me, 0, na).len);
    ASSERT_EQ(ns.size(), nd_na_frame_len(14));
    ASSERT_TRUE(nd_make_advert(ns.data(), ns.size(), 14, our_mac.data()));
    EXPECT_EQ(ns, na);
    EXPECT_FALSE(nd_is_solicitation(ns.data(), 14, ns.size())) << "now an NA";
    bytes_t short_ns = neighbor_solicit(peer_ip6, sn, our_ip6, false);
    EXPECT_FALSE(nd_make_advert(short_ns.data(), short_ns.size(), 14, our_mac.data()))
        << "no room for the option";
}
