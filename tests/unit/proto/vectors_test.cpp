// vectors_test.cpp - builders and ICRC/FCS against the reference vectors
// (reference/ROCE_REFERENCE.md sec. 1.6 and 2.1, reference/vectors.json).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "proto/build.hpp"
#include "proto/crc32.hpp"
#include "proto/icrc.hpp"
#include "proto/mac_control.hpp"
#include "proto/parse.hpp"
#include "core/rng.hpp"
#include "icrc_zlib.hpp"
#include "test_vectors.hpp"

namespace rocelab {
namespace {

using test::from_hex;
using test::ref_vector;

std::string to_hex(const std::byte* p, std::size_t n) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = std::to_integer<unsigned>(p[i]);
        s += d[b >> 4];
        s += d[b & 15u];
    }
    return s;
}

constexpr mac_addr mac1{0x02, 0, 0, 0, 0, 0x01};
constexpr mac_addr mac2{0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint32_t ip1 = ipv4_addr(192, 168, 1, 1);
constexpr std::uint32_t ip2 = ipv4_addr(192, 168, 1, 2);

const std::vector<std::byte> payload16 = test::seq_payload(16);

roce_v4_params params_a() {
    roce_v4_params p{};
    p.dst_mac = mac2;
    p.src_mac = mac1;
    p.src_ip = ip1;
    p.dst_ip = ip2;
    p.dscp = 0;
    p.ecn = ecn_ect0;
    p.ttl = 64;
    p.ip_id = 0x1234;
    p.sport = 49152;
    p.bth.opcode = roce_op::rc_send_only;
    p.bth.dest_qpn = 0x11;
    p.bth.ack_req = true;
    p.bth.psn = 0;
    p.payload = payload16;
    return p;
}

roce_v4_params params_b() {
    roce_v4_params p = params_a();
    p.ip_id = 0x1235;
    p.sport = 49153;
    p.bth.opcode = roce_op::rc_write_only;
    p.bth.psn = 1;
    p.ext.reth = reth_fields{0x00007f0000001000ull, 0x1234, 16};
    return p;
}

roce_v4_params params_ack(std::uint16_t id, std::uint32_t psn, std::uint8_t syndrome) {
    roce_v4_params p{};
    p.dst_mac = mac2;
    p.src_mac = mac1;
    p.src_ip = ip2;
    p.dst_ip = ip1;
    p.ip_id = id;
    p.sport = 49154;
    p.bth.opcode = roce_op::rc_ack;
    p.bth.dest_qpn = 0x22;
    p.bth.psn = psn;
    p.ext.aeth = aeth_fields{syndrome, 1};
    return p;
}

roce_v4_params params_e() {
    roce_v4_params p = make_cnp_v4(mac1, mac2, ip2, ip1, 0x22, 48);
    p.ip_id = 3;
    p.sport = 49155;
    return p;
}

roce_v6_params params_f() {
    roce_v6_params p{};
    p.dst_mac = mac2;
    p.src_mac = mac1;
    p.src_ip = ipv6_addr{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    p.dst_ip = ipv6_addr{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    p.dscp = 0;
    p.ecn = ecn_ect0;
    p.flow_label = 0x12345;
    p.hop_limit = 64;
    p.sport = 49152;
    p.bth.opcode = roce_op::rc_send_only;
    p.bth.dest_qpn = 0x11;
    p.bth.ack_req = true;
    p.payload = payload16;
    p.udp_checksum = false;  // vector F carries a zero UDP checksum
    return p;
}

void expect_built(const roce_v4_params& p, const ref_vector& v) {
    std::array<std::byte, 256> buf{};
    const std::uint32_t n = build_roce_v4(std::span<std::byte>(buf), p);
    const auto want = from_hex(v.hex);
    ASSERT_EQ(n, want.size()) << v.name;
    EXPECT_EQ(n, roce_v4_frame_len(p));
    EXPECT_EQ(to_hex(buf.data(), n), std::string(v.hex)) << v.name;
}

TEST(ProtoVectors, BuildA) { expect_built(params_a(), test::vec_a); }
TEST(ProtoVectors, BuildB) { expect_built(params_b(), test::vec_b); }
TEST(ProtoVectors, BuildC) { expect_built(params_ack(1, 1, aeth_syndrome_ack()), test::vec_c); }
TEST(ProtoVectors, BuildD) {
    expect_built(params_ack(2, 5, aeth_syndrome_nak(nak_code::psn_seq_error)), test::vec_d);
}
TEST(ProtoVectors, BuildE) { expect_built(params_e(), test::vec_e); }

TEST(ProtoVectors, BuildF_Unconfirmed) {
    // Vector F is verified only against a reading of rxe's IPv6 masking.
    std::array<std::byte, 256> buf{};
    const std::uint32_t n = build_roce_v6(std::span<std::byte>(buf), params_f());
    ASSERT_EQ(n, 94u);
    EXPECT_EQ(to_hex(buf.data(), n), std::string(test::vec_f.hex));
}

// The IPv6 UDP checksum (RFC 8200 8.1) checked by a plain big-endian
// word sum written here, and the ICRC unchanged by it (it is masked).
TEST(ProtoVectors, Ipv6UdpChecksumVerifiesAndIcrcIsUnchanged) {
    std::array<std::byte, 256> with{};
    roce_v6_params p = params_f();
    p.udp_checksum = true;
    const std::uint32_t n = build_roce_v6(std::span<std::byte>(with), p);
    ASSERT_EQ(n, 94u);
    const auto f = from_hex(test::vec_f.hex);
    const std::uint32_t udp = 14 + 40;
    const std::uint32_t plen = load_be16(with.data() + 14 + 4);
    std::uint32_t sum = 0;
    for (std::uint32_t i = 14 + 8; i < 14 + 40; i += 2) { sum += load_be16(with.data() + i); }  // addresses
    sum += plen + 17;
    for (std::uint32_t i = 0; i < plen; i += 2) { sum += load_be16(with.data() + udp + i); }
    while (sum > 0xFFFF) { sum = (sum & 0xFFFF) + (sum >> 16); }
    EXPECT_EQ(sum, 0xFFFFu);
    EXPECT_NE(load_be16(with.data() + udp + 6), 0);
    // Everything but the checksum field is vector F, ICRC included.
    for (std::uint32_t i = 0; i < n; ++i) {
        if (i == udp + 6 || i == udp + 7) { continue; }
        EXPECT_EQ(with[i], f[i]) << "byte " << i;
    }
}

TEST(ProtoVectors, BuilderRejectsSmallBuffer) {
    std::array<std::byte, 73> buf{};
    EXPECT_EQ(build_roce_v4(std::span<std::byte>(buf), params_a()), 0u);
}

TEST(ProtoVectors, BuilderPadsPayloadAndShortFrame) {
    roce_v4_params p = params_a();
    const auto pl = test::seq_payload(5);
    p.payload = pl;
    std::array<std::byte, 256> buf{};
    const std::uint32_t n = build_roce_v4(std::span<std::byte>(buf), p);
    ASSERT_EQ(n, 14u + 20 + 8 + 12 + 8 + 4);
    const parsed_frame f = parse_frame(buf.data(), n);
    ASSERT_TRUE(f.ok()) << parse_status_name(f.status);
    EXPECT_EQ(f.pad_count, 3);
    EXPECT_EQ(f.roce_payload_len, 5);
    EXPECT_TRUE(roce_frame_icrc_ok(buf.data(), f));

    // Zero payload: 58-byte frame padded to 60 with Ethernet padding.
    p.payload = {};
    const std::uint32_t m = build_roce_v4(std::span<std::byte>(buf), p);
    ASSERT_EQ(m, 60u);
    const parsed_frame g = parse_frame(buf.data(), m);
    ASSERT_TRUE(g.ok()) << parse_status_name(g.status);
    EXPECT_EQ(g.roce_payload_len, 0);
    EXPECT_TRUE(roce_frame_icrc_ok(buf.data(), g));
}

TEST(ProtoVectors, BuilderVlan) {
    roce_v4_params p = params_a();
    p.vlan_id = 100;
    p.pcp = 3;
    std::array<std::byte, 256> buf{};
    const std::uint32_t n = build_roce_v4(std::span<std::byte>(buf), p);
    ASSERT_EQ(n, 78u);
    const parsed_frame f = parse_frame(buf.data(), n);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f.vlan_count, 1);
    EXPECT_EQ(f.outer_pcp, 3);
    EXPECT_EQ(f.outer_vid, 100);
    // Same L3 bytes as vector A.
    const auto a = from_hex(test::vec_a.hex);
    EXPECT_EQ(to_hex(buf.data() + 18, n - 18), to_hex(a.data() + 14, a.size() - 14));
}

TEST(ProtoVectors, BuilderAllKnownOpcodesParseBack) {
    std::array<std::byte, 512> buf{};
    const auto pl = test::seq_payload(37);
    int count = 0;
    for (unsigned op = 0; op < 256; ++op) {
        if (!roce_opcode_known(static_cast<std::uint8_t>(op))) {
            continue;
        }
        ++count;
        roce_v4_params p = params_a();
        p.bth.opcode = static_cast<std::uint8_t>(op);
        p.payload = pl;
        const std::uint32_t n = build_roce_v4(std::span<std::byte>(buf), p);
        ASSERT_GT(n, 0u);
        const parsed_frame f = parse_frame(buf.data(), n);
        ASSERT_TRUE(f.ok()) << roce_opcode_name(static_cast<std::uint8_t>(op)) << " " << parse_status_name(f.status);
        EXPECT_EQ(f.opcode, op);
        EXPECT_EQ(f.roce_payload_len, 37);
        EXPECT_EQ(f.roce_payload_off, f.bth_off + 12 + roce_opcode_lookup(static_cast<std::uint8_t>(op)).ext_len);
        EXPECT_TRUE(roce_frame_icrc_ok(buf.data(), f));
    }
    EXPECT_EQ(count, 40);  // RC 25 + UC 12 + UD 2 + CNP
}

TEST(ProtoIcrc, MatchesEveryVector) {
    for (const ref_vector& v : test::roce_vectors) {
        const auto f = from_hex(v.hex);
        const std::uint32_t l3 = 14;
        const auto len = static_cast<std::uint32_t>(f.size() - l3 - 4);
        const std::uint32_t icrc = roce_icrc(f.data() + l3, len, v.ipv6);
        std::array<std::byte, 4> wire{};
        icrc_store(wire.data(), icrc);
        EXPECT_EQ(to_hex(wire.data(), 4), std::string(v.tail)) << v.name << (v.confirmed ? "" : " (unconfirmed)");
        EXPECT_TRUE(roce_icrc_verify(f.data() + l3, len + 4, v.ipv6)) << v.name;
        const parsed_frame pf = parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
        ASSERT_TRUE(pf.ok()) << v.name << " " << parse_status_name(pf.status);
        EXPECT_TRUE(roce_frame_icrc_ok(f.data(), pf)) << v.name;
    }
}

TEST(ProtoIcrc, KnownValueA) {
    const auto f = from_hex(test::vec_a.hex);
    EXPECT_EQ(roce_icrc(f.data() + 14, static_cast<std::uint32_t>(f.size() - 18), false), 0xBFD1B3AEu);
}

// roce_icrc over random datagrams of every length from the smallest RoCE
// headers to past the short-string path (128 bytes: zeros in front and a
// seed that they turn into the ICRC's) and the 512-bit engine's start,
// IPv4 (options too) and IPv6, against the zlib oracle (icrc_zlib.hpp).
TEST(ProtoIcrc, EveryLengthMatchesTheZlibOracle) {
    rng r(41);
    int checked = 0;
    for (int v6 = 0; v6 < 2; ++v6) {
        for (std::uint32_t ihl = 5; ihl <= (v6 ? 5u : 7u); ++ihl) {
            const std::uint32_t hdr = (v6 ? 40 : ihl * 4) + 8 + 12;
            for (std::uint32_t len = hdr; len <= 400; ++len) {  // datagram bytes before the ICRC
                std::vector<std::byte> f(14 + len + 4);
                for (auto& b : f) { b = std::byte(r.next_u32()); }
                f[12] = std::byte(v6 ? 0x86 : 0x08);
                f[13] = std::byte(v6 ? 0xDD : 0x00);
                std::byte* ip = f.data() + 14;
                if (v6) {
                    ip[0] = std::byte(0x60 | (std::to_integer<unsigned>(ip[0]) & 0x0F));
                    ip[4] = std::byte((len + 4 - 40) >> 8);
                    ip[5] = std::byte(len + 4 - 40);
                } else {
                    ip[0] = std::byte(0x40 | ihl);
                    ip[2] = std::byte((len + 4) >> 8);
                    ip[3] = std::byte(len + 4);
                }
                const test::ref_l3 l3 = test::ref_find_l3(f.data(), f.size());
                ASSERT_TRUE(l3.ok);
                ASSERT_EQ(roce_icrc(ip, len, v6 != 0), test::ref_icrc(f.data(), l3))
                    << (v6 ? "IPv6" : "IPv4") << " ihl " << ihl << " length " << len;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 1000);
}

TEST(ProtoIcrc, MaskedFieldsDoNotChangeIt) {
    for (const ref_vector& v : test::roce_vectors) {
        auto f = from_hex(v.hex);
        const auto len = static_cast<std::uint32_t>(f.size() - 14);
        std::byte* l3 = f.data() + 14;
        const std::uint32_t ip_hlen = v.ipv6 ? 40 : 20;
        if (v.ipv6) {
            ipv6_view ip(l3);
            ip.set_traffic_class(0xC3);
            store_be32(l3, (load_be32(l3) & 0xFFF00000u) | 0xABCDEu);  // flow label
            ip.set_hop_limit(7);
        } else {
            EXPECT_EQ(ipv4_mark_ce(l3), std::string(v.name) != "E_cnp") << v.name;
            ipv4_set_ecn(l3, ecn_ce);
            ipv4_set_dscp(l3, 26);
            ipv4_dec_ttl(l3);
            l3[8] = std::byte{7};  // TTL 7, checksum left stale: it is masked too
            ipv4_view(l3).update_checksum();
        }
        store_be16(l3 + ip_hlen + 6, 0xBEEF);  // UDP checksum
        bth_view bth(l3 + ip_hlen + 8);
        bth.set_fecn(true);
        bth.set_becn(true);
        EXPECT_TRUE(roce_icrc_verify(l3, len, v.ipv6)) << v.name;
        // An unmasked change breaks it.
        l3[v.ipv6 ? 8 : 4] ^= std::byte{1};
        EXPECT_FALSE(roce_icrc_verify(l3, len, v.ipv6)) << v.name;
    }
}

TEST(ProtoIcrc, PayloadCrcCombine) {
    const auto f = from_hex(test::vec_b.hex);
    const std::byte* l3 = f.data() + 14;
    const std::uint32_t hdr = 20 + 8 + 12 + 16;
    const std::uint32_t pl = 16;
    const std::uint32_t pcrc = crc32(0, l3 + hdr, pl);
    EXPECT_EQ(roce_icrc_with_payload_crc(l3, hdr, false, pcrc, pl), 0x7AFE1F53u);
    EXPECT_EQ(roce_icrc_with_payload_crc_op(l3, hdr, false, pcrc, crc32_combine_gen(pl)), 0x7AFE1F53u);
}

TEST(ProtoMacControl, PfcXoffXonPauseByteExact) {
    constexpr mac_addr src{0x02, 0, 0, 0, 0, 0xaa};
    std::array<std::byte, 64> buf{};
    std::array<std::uint16_t, 8> q{};
    q[3] = 0xFFFF;
    ASSERT_EQ(build_pfc(buf.data(), src, 0x08, q), 60u);
    EXPECT_EQ(to_hex(buf.data(), 60), std::string(test::vec_pfc_xoff.hex));
    crc_store_le(buf.data() + 60, eth_fcs(buf.data(), 60));
    EXPECT_EQ(to_hex(buf.data() + 60, 4), "0fe081dc");

    q[3] = 0;
    ASSERT_EQ(build_pfc(buf.data(), src, 0x08, q), 60u);
    crc_store_le(buf.data() + 60, eth_fcs(buf.data(), 60));
    EXPECT_EQ(to_hex(buf.data() + 60, 4), "6e63d0b3");
    // Ethernet residue: CRC over frame + FCS is the magic constant.
    EXPECT_EQ(crc32(0, buf.data(), 64), crc32_residue);

    ASSERT_EQ(build_pause(buf.data(), src, 0xFFFF), 60u);
    EXPECT_EQ(to_hex(buf.data(), 60), std::string(test::vec_pause.hex));
    crc_store_le(buf.data() + 60, eth_fcs(buf.data(), 60));
    EXPECT_EQ(to_hex(buf.data() + 60, 4), "622e1ae0");
}

TEST(ProtoMacControl, ParseAndView) {
    const auto f = from_hex(test::vec_pfc_xoff.hex);
    const parsed_frame pf = parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
    ASSERT_TRUE(pf.ok());
    EXPECT_EQ(pf.kind, frame_kind::mac_control);
    EXPECT_EQ(pf.mac_control_opcode, mac_control_op_pfc);
    mac_control_cview mc(f.data() + pf.l3_off);
    EXPECT_EQ(mc.class_enable(), 0x08);
    EXPECT_EQ(mc.pfc_time(3), 0xFFFF);
    EXPECT_EQ(mc.pfc_time(2), 0);
    const auto g = from_hex(test::vec_pause.hex);
    const parsed_frame pg = parse_frame(g.data(), static_cast<std::uint32_t>(g.size()));
    ASSERT_TRUE(pg.ok());
    EXPECT_EQ(pg.mac_control_opcode, mac_control_op_pause);
    EXPECT_EQ(mac_control_cview(g.data() + 14).pause_time(), 0xFFFF);
}

TEST(ProtoVectors, ParseFieldsOfA) {
    const auto f = from_hex(test::vec_a.hex);
    const parsed_frame p = parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.kind, frame_kind::ipv4);
    EXPECT_EQ(p.vlan_count, 0);
    EXPECT_EQ(p.outer_pcp, -1);
    EXPECT_EQ(p.outer_vid, -1);
    EXPECT_EQ(p.ethertype, ethertype_ipv4);
    EXPECT_EQ(p.l3_off, 14);
    EXPECT_EQ(p.l3_len, 60);
    EXPECT_EQ(p.dscp, 0);
    EXPECT_EQ(p.ecn, ecn_ect0);
    EXPECT_EQ(p.ttl, 64);
    EXPECT_EQ(p.ip4_src, ip1);
    EXPECT_EQ(p.ip4_dst, ip2);
    EXPECT_EQ(p.l4_proto, ip_proto_udp);
    EXPECT_EQ(p.l4_off, 34);
    EXPECT_EQ(p.l4_len, 40);
    EXPECT_EQ(p.sport, 49152);
    EXPECT_EQ(p.dport, 4791);
    EXPECT_TRUE(p.is_roce);
    EXPECT_EQ(p.bth_off, 42);
    EXPECT_EQ(p.opcode, roce_op::rc_send_only);
    EXPECT_EQ(p.dest_qpn, 0x11u);
    EXPECT_EQ(p.psn, 0u);
    EXPECT_TRUE(p.ack_req);
    EXPECT_FALSE(p.fecn);
    EXPECT_FALSE(p.becn);
    EXPECT_EQ(p.roce_payload_off, 54);
    EXPECT_EQ(p.roce_payload_len, 16);
}

TEST(ProtoVectors, ParseFieldsOfOthers) {
    const auto b = from_hex(test::vec_b.hex);
    const parsed_frame pb = parse_frame(b.data(), static_cast<std::uint32_t>(b.size()));
    ASSERT_TRUE(pb.ok());
    EXPECT_EQ(pb.opcode, roce_op::rc_write_only);
    const reth_fields r = read_reth(b.data() + pb.bth_off + bth_len);
    EXPECT_EQ(r.va, 0x00007f0000001000ull);
    EXPECT_EQ(r.rkey, 0x1234u);
    EXPECT_EQ(r.dma_len, 16u);
    EXPECT_EQ(pb.psn, 1u);

    const auto d = from_hex(test::vec_d.hex);
    const parsed_frame pd = parse_frame(d.data(), static_cast<std::uint32_t>(d.size()));
    ASSERT_TRUE(pd.ok());
    const aeth_fields a = read_aeth(d.data() + pd.bth_off + bth_len);
    EXPECT_TRUE(aeth_is_nak(a.syndrome));
    EXPECT_EQ(aeth_value_of(a.syndrome), static_cast<std::uint8_t>(nak_code::psn_seq_error));
    EXPECT_EQ(a.msn, 1u);
    EXPECT_EQ(pd.psn, 5u);

    const auto e = from_hex(test::vec_e.hex);
    const parsed_frame pe = parse_frame(e.data(), static_cast<std::uint32_t>(e.size()));
    ASSERT_TRUE(pe.ok());
    EXPECT_EQ(pe.opcode, roce_op::cnp);
    EXPECT_TRUE(pe.becn);
    EXPECT_EQ(pe.dscp, 48);
    EXPECT_EQ(pe.dest_qpn, 0x22u);
    EXPECT_EQ(pe.roce_payload_len, 0);

    const auto f = from_hex(test::vec_f.hex);
    const parsed_frame pf = parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
    ASSERT_TRUE(pf.ok());
    EXPECT_EQ(pf.kind, frame_kind::ipv6);
    EXPECT_EQ(pf.ip6_src_off, 22);
    EXPECT_EQ(pf.ip6_dst_off, 38);
    EXPECT_EQ(pf.ttl, 64);
    EXPECT_EQ(pf.ecn, ecn_ect0);
    EXPECT_EQ(pf.l3_len, 80);
    EXPECT_EQ(pf.roce_payload_len, 16);
    EXPECT_EQ(ipv6_cview(f.data() + 14).flow_label(), 0x12345u);
}

TEST(ProtoAeth, Syndromes) {
    EXPECT_EQ(aeth_syndrome_ack(), 0x1F);
    EXPECT_TRUE(aeth_is_ack(0x1F));
    EXPECT_EQ(aeth_syndrome_rnr_nak(1), 0x21);
    EXPECT_TRUE(aeth_is_rnr_nak(0x21));
    EXPECT_EQ(aeth_syndrome_nak(nak_code::invalid_request), 0x61);
    EXPECT_EQ(aeth_syndrome_nak(nak_code::remote_access_error), 0x62);
    EXPECT_EQ(aeth_syndrome_nak(nak_code::invalid_rd_request), 0x64);
    EXPECT_EQ(aeth_type_of(0x40), aeth_type::reserved);
}

}  // namespace
}  // namespace rocelab
