// parse.hpp - single-pass frame parser for the switch and the generator.
//
// parse_frame(p, len) walks Ethernet -> up to two VLAN tags -> IPv4/IPv6/ARP/
// MAC Control -> UDP -> RoCEv2 BTH (+ extended headers) once, with a length
// check before every read: it never reads p[len] or beyond. It returns a small
// POD (parsed_frame, 60 bytes) with offsets and the fields the data path needs.
//
// Status: parse_status::ok, or exactly one named malformed case (the first
// problem found, outermost layer first). Frames that are simply not IP / not
// UDP / not RoCE are NOT malformed: status ok with kind other, or the l4 /
// is_roce fields telling what was found. Every value has a stable snake_case
// name (parse_status_name) for counters and telemetry; parse_counters counts
// them (one per lcore, by value, never shared).
//
// Decisions (documented because they change what is counted as malformed):
//   * IPv4 total length larger than the frame is reported as
//     truncated_ipv4_payload (the frame was cut), smaller than the header as
//     bad_ipv4_total_length. Bytes after the IP datagram (Ethernet padding of
//     short frames) are ignored: UDP/RoCE lengths come from the IP header.
//   * IPv4 fragments (MF set or offset != 0) are not malformed: status ok,
//     kind ipv4, ipv4_fragment = true, l4_off = 0 and no L4 parsed (a non-first
//     fragment has no L4 header; a first fragment's UDP length would not match
//     the datagram). RoCEv2 always sets DF, so fragments never carry RoCE.
//   * The IPv4 header checksum is verified (bad_ipv4_checksum); IPv6 has none.
//   * IPv6 extension headers are not walked; l4_proto is the next header of
//     the fixed header and only UDP is parsed further. Payload length 0 with a
//     next header other than 59 (a jumbogram, unsupported) is
//     bad_ipv6_payload_length.
//   * A third stacked VLAN tag is too_many_vlan_tags.
//   * RoCE: UDP destination port 4791. The UDP payload must hold BTH +
//     extended headers (per opcode) + 4-byte ICRC; the RoCE payload is what is
//     left minus PadCnt bytes. The ICRC itself is not checked here (see
//     roce_frame_icrc_ok, ~20 ns for a small packet).
//   * ARP with a hardware/protocol other than Ethernet/IPv4 is kind other.
// Counters: parse_counters::by_status[], indexed by parse_status.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "core/endian.hpp"
#include "proto/arp.hpp"
#include "proto/bth.hpp"
#include "proto/eth.hpp"
#include "proto/icrc.hpp"
#include "proto/ipv4.hpp"
#include "proto/ipv6.hpp"
#include "proto/mac_control.hpp"
#include "proto/udp.hpp"

namespace rocelab {

enum class parse_status : std::uint8_t {
    ok = 0,
    truncated_eth,               // fewer than 14 bytes
    truncated_vlan,              // VLAN TPID without its 4-byte tag
    too_many_vlan_tags,          // more than 2 stacked tags
    truncated_ipv4,              // fewer than 20 / IHL*4 header bytes
    bad_ipv4_version,            // version nibble != 4
    bad_ipv4_ihl,                // IHL < 5
    bad_ipv4_total_length,       // total length < header length
    truncated_ipv4_payload,      // total length > bytes in frame
    bad_ipv4_checksum,           // header checksum does not verify
    truncated_ipv6,              // fewer than 40 bytes
    bad_ipv6_version,            // version nibble != 6
    bad_ipv6_payload_length,     // 0 (jumbogram) with a next header
    truncated_ipv6_payload,      // 40 + payload length > bytes in frame
    truncated_udp,               // IP payload shorter than 8
    bad_udp_length,              // UDP length < 8 or > IP payload
    truncated_bth,               // dport 4791 but UDP payload < 12
    roce_bad_tver,               // BTH TVer != 0
    roce_unknown_opcode,         // opcode not in the table (bth.hpp)
    truncated_roce_ext_header,   // RETH/AETH/DETH/... missing
    truncated_icrc,              // no room for the 4-byte ICRC
    roce_bad_pad_count,          // PadCnt larger than the payload
    truncated_mac_control,       // EtherType 0x8808 without opcode / body
    mac_control_unknown_opcode,  // opcode other than PAUSE / PFC
    truncated_arp,               // EtherType 0x0806 with fewer than 28 bytes
};
inline constexpr std::size_t parse_status_count = static_cast<std::size_t>(parse_status::truncated_arp) + 1;

namespace detail {
inline constexpr std::array<const char*, parse_status_count> parse_status_names{
    "ok",
    "truncated_eth",
    "truncated_vlan",
    "too_many_vlan_tags",
    "truncated_ipv4",
    "bad_ipv4_version",
    "bad_ipv4_ihl",
    "bad_ipv4_total_length",
    "truncated_ipv4_payload",
    "bad_ipv4_checksum",
    "truncated_ipv6",
    "bad_ipv6_version",
    "bad_ipv6_payload_length",
    "truncated_ipv6_payload",
    "truncated_udp",
    "bad_udp_length",
    "truncated_bth",
    "roce_bad_tver",
    "roce_unknown_opcode",
    "truncated_roce_ext_header",
    "truncated_icrc",
    "roce_bad_pad_count",
    "truncated_mac_control",
    "mac_control_unknown_opcode",
    "truncated_arp",
};
}  // namespace detail

constexpr const char* parse_status_name(parse_status s) noexcept {
    const auto i = static_cast<std::size_t>(s);
    return i < parse_status_count ? detail::parse_status_names[i] : "invalid";
}

enum class frame_kind : std::uint8_t { other = 0, ipv4, ipv6, arp, mac_control };
constexpr const char* frame_kind_name(frame_kind k) noexcept {
    switch (k) {
        case frame_kind::ipv4: return "ipv4";
        case frame_kind::ipv6: return "ipv6";
        case frame_kind::arp: return "arp";
        case frame_kind::mac_control: return "mac_control";
        default: return "other";
    }
}

// Result of parse_frame. Offsets are from the start of the frame; 0 means
// "not present". Fields of layers that were not reached are 0 (or -1 for the
// VLAN fields).
struct parsed_frame {
    parse_status status = parse_status::ok;
    frame_kind kind = frame_kind::other;
    std::uint8_t vlan_count = 0;
    std::int8_t outer_pcp = -1;          // -1 untagged
    std::int16_t outer_vid = -1;         // -1 untagged
    std::uint16_t ethertype = 0;         // after the VLAN tags
    std::uint16_t l3_off = 0;            // = 14 + 4 * vlan_count
    std::uint16_t l3_len = 0;            // IP datagram length (IPv4 total length / 40 + payload length)
    std::uint8_t dscp = 0;
    std::uint8_t ecn = 0;
    std::uint8_t ttl = 0;                // TTL or hop limit
    std::uint8_t l4_proto = 0;           // IP protocol / IPv6 next header
    std::uint32_t ip4_src = 0;           // host order
    std::uint32_t ip4_dst = 0;
    std::uint16_t ip6_src_off = 0;
    std::uint16_t ip6_dst_off = 0;
    std::uint16_t l4_off = 0;            // 0 for fragments
    std::uint16_t l4_len = 0;            // UDP length field
    std::uint16_t sport = 0;
    std::uint16_t dport = 0;
    std::uint16_t bth_off = 0;
    std::uint16_t roce_payload_off = 0;  // after BTH and extended headers
    std::uint16_t roce_payload_len = 0;  // excluding pad and ICRC
    std::uint16_t mac_control_opcode = 0;
    // -- BTH flag group, written as one 64-bit word --
    std::uint8_t opcode = 0;             // BTH opcode
    std::uint8_t pad_count = 0;
    bool is_roce = false;                // UDP dport 4791
    bool ack_req = false;
    bool fecn = false;
    bool becn = false;
    bool ipv4_fragment = false;
    std::uint8_t reserved_ = 0;
    std::uint32_t dest_qpn = 0;
    std::uint32_t psn = 0;

    bool ok() const noexcept { return status == parse_status::ok; }
    bool is_ip() const noexcept { return kind == frame_kind::ipv4 || kind == frame_kind::ipv6; }
};
static_assert(sizeof(parsed_frame) <= 64, "parsed_frame must fit one cache line");
static_assert(std::is_trivially_copyable_v<parsed_frame>);
// The BTH flags are written as one 64-bit word (fewer stores per RoCE
// packet). The IP and port fields are written one by one: grouped stores
// keep the struct out of registers where parse_frame is inlined.
static_assert(offsetof(parsed_frame, reserved_) == offsetof(parsed_frame, opcode) + 7);

// Per-lcore counters of parse results.
struct parse_counters {
    std::uint64_t by_status[parse_status_count]{};

    void account(parse_status s) noexcept { ++by_status[static_cast<std::size_t>(s)]; }
    std::uint64_t malformed() const noexcept {
        std::uint64_t n = 0;
        for (std::size_t i = 1; i < parse_status_count; ++i) {
            n += by_status[i];
        }
        return n;
    }
};

namespace detail {

// Writes v over sizeof(T) bytes of consecutive fields starting at `first`
// (little-endian host: the low byte lands in the first field).
template <typename T>
[[gnu::always_inline]] inline void put_group(void* first, T v) noexcept {
    std::memcpy(first, &v, sizeof v);
}

// RoCE part: u points at the UDP header, udp_len is the validated UDP length.
[[gnu::always_inline]] inline void parse_roce(const std::byte* frame, std::uint32_t bth_off,
                                              std::uint32_t udp_payload, parsed_frame& r) noexcept {
    if (udp_payload < bth_len) {
        r.is_roce = true;
        r.status = parse_status::truncated_bth;
        return;
    }
    const std::byte* b = frame + bth_off;
    r.bth_off = static_cast<std::uint16_t>(bth_off);
    const std::uint8_t op = load_u8(b);
    const std::uint8_t b1 = load_u8(b + 1);
    const std::uint32_t w1 = load_be32(b + 4);
    const std::uint32_t w2 = load_be32(b + 8);
    // opcode | pad_count | is_roce | ack_req | fecn | becn | 0 | 0
    put_group<std::uint64_t>(&r.opcode, std::uint64_t(op) | (std::uint64_t((b1 >> 4) & 3u) << 8) |
                                            (std::uint64_t(1) << 16) | (std::uint64_t(w2 >> 31) << 24) |
                                            (std::uint64_t(w1 >> 31) << 32) |
                                            (std::uint64_t((w1 >> 30) & 1u) << 40));
    r.dest_qpn = w1 & psn_mask;
    r.psn = w2 & psn_mask;
    if ((b1 & 0x0Fu) != 0) {
        r.status = parse_status::roce_bad_tver;
        return;
    }
    const roce_opcode_info& info = roce_opcode_lookup(op);
    if (!info.known) {
        r.status = parse_status::roce_unknown_opcode;
        return;
    }
    const std::uint32_t hdrs = bth_len + info.ext_len;
    if (udp_payload < hdrs) {
        r.status = parse_status::truncated_roce_ext_header;
        return;
    }
    if (udp_payload < hdrs + icrc_len) {
        r.status = parse_status::truncated_icrc;
        return;
    }
    const std::uint32_t data = udp_payload - hdrs - icrc_len;
    if (r.pad_count > data) {
        r.status = parse_status::roce_bad_pad_count;
        return;
    }
    r.roce_payload_off = static_cast<std::uint16_t>(bth_off + hdrs);
    r.roce_payload_len = static_cast<std::uint16_t>(data - r.pad_count);
}

// UDP part: l4 is the offset of the UDP header, ip_end the end of the datagram.
template <bool Roce>
[[gnu::always_inline]] inline void parse_udp(const std::byte* frame, std::uint32_t l4, std::uint32_t ip_end,
                                             parsed_frame& r) noexcept {
    r.l4_off = static_cast<std::uint16_t>(l4);
    if (ip_end - l4 < udp_hdr_len) {
        r.status = parse_status::truncated_udp;
        return;
    }
    const std::byte* u = frame + l4;
    const std::uint32_t ports = load_be32(u);  // sport << 16 | dport
    r.sport = static_cast<std::uint16_t>(ports >> 16);
    r.dport = static_cast<std::uint16_t>(ports);
    const std::uint16_t ulen = load_be16(u + 4);
    r.l4_len = ulen;
    if (ulen < udp_hdr_len || ulen > ip_end - l4) {
        r.status = parse_status::bad_udp_length;
        return;
    }
    if (Roce && r.dport == udp_port_roce_v2) {
        parse_roce(frame, l4 + udp_hdr_len, ulen - udp_hdr_len, r);
    }
}

}  // namespace detail

// How deep parse_frame goes. A switch parses what it forwards on, as an
// ASIC's parser does, and passes the rest through untouched:
//   l3    Ethernet, VLAN tags, the IPv4/IPv6 header (version, IHL, lengths),
//         MAC Control and ARP; no IPv4 checksum, no L4. An L2 bridge
//         classifying by DSCP needs no more.
//   l4    l3 + the IPv4 header checksum (RFC 1812 5.2.2: a router verifies
//         it) + the UDP header and ports (ECMP's 5-tuple). What L3 mode uses.
//   full  l4 + RoCEv2 BTH and extended headers. The generator and tests.
// Malformed cases beyond the depth are not looked for (status ok).
enum class parse_depth : std::uint8_t { l3, l4, full };

namespace detail {

// The checks an IP header starts with, the same for both versions (each
// opens with its version in the high nibble of byte 0): sets r.kind, then
// requires the fixed header within the frame and the version V. False, with
// r.status set, when the frame fails one.
template <unsigned V>
[[gnu::always_inline]] inline bool ip_header_starts_ok(const std::byte* l3, std::uint32_t rest,
                                                       parsed_frame& r) noexcept {
    static_assert(V == 4 || V == 6);
    constexpr bool v4 = V == 4;
    r.kind = v4 ? frame_kind::ipv4 : frame_kind::ipv6;
    if (rest < (v4 ? ipv4_min_hdr_len : ipv6_hdr_len)) {
        r.status = v4 ? parse_status::truncated_ipv4 : parse_status::truncated_ipv6;
        return false;
    }
    if ((static_cast<unsigned>(load_u8(l3)) >> 4) != V) {
        r.status = v4 ? parse_status::bad_ipv4_version : parse_status::bad_ipv6_version;
        return false;
    }
    return true;
}

// After either IP header: l4 is where the datagram's payload starts, ip_end
// where it ends. UDP is parsed from depth l4 on (RoCE at full); otherwise
// only the L4 offset is recorded.
template <parse_depth Depth>
[[gnu::always_inline]] inline void parse_ip_payload(const std::byte* frame, std::uint8_t proto,
                                                    std::uint32_t l4, std::uint32_t ip_end,
                                                    parsed_frame& r) noexcept {
    if constexpr (Depth != parse_depth::l3) {
        if (proto == ip_proto_udp) {
            parse_udp<Depth == parse_depth::full>(frame, l4, ip_end, r);
            return;
        }
    }
    r.l4_off = static_cast<std::uint16_t>(l4);
}

}  // namespace detail

// Parses one frame (without FCS) into r, in place, r as constructed
// (parsed_frame{}: the fields of layers not reached keep their defaults).
// Never reads beyond p[len - 1]. For a parse stored in memory anyway (an array of a burst's
// frames): assigning parse_frame()'s result there makes GCC assemble some
// fields in registers from narrower stack stores, a store-forwarding stall
// (the L3 router's burst, perf annotate).
template <parse_depth Depth = parse_depth::full>
[[gnu::always_inline]] inline void parse_frame_into(parsed_frame& r, const std::byte* p, std::uint32_t len) noexcept {
    if (len < eth_hdr_len) [[unlikely]] {
        r.status = parse_status::truncated_eth;
        return;
    }
    std::uint32_t off = 12;
    std::uint16_t type = load_be16(p + 12);
    if (is_vlan_tpid(type)) {
        if (len < off + 2 + vlan_tag_len) {
            r.status = parse_status::truncated_vlan;
            return;
        }
        const std::uint16_t tci = load_be16(p + off + 2);
        r.outer_pcp = static_cast<std::int8_t>(tci >> 13);
        r.outer_vid = static_cast<std::int16_t>(tci & 0x0FFFu);
        r.vlan_count = 1;
        off += vlan_tag_len;
        type = load_be16(p + off);
        if (is_vlan_tpid(type)) {
            if (len < off + 2 + vlan_tag_len) {
                r.status = parse_status::truncated_vlan;
                return;
            }
            r.vlan_count = 2;
            off += vlan_tag_len;
            type = load_be16(p + off);
            if (is_vlan_tpid(type)) {
                r.status = parse_status::too_many_vlan_tags;
                return;
            }
        }
    }
    off += 2;
    r.ethertype = type;
    r.l3_off = static_cast<std::uint16_t>(off);
    const std::uint32_t rest = len - off;
    const std::byte* l3 = p + off;

    if (type == ethertype_ipv4) [[likely]] {
        if (!detail::ip_header_starts_ok<4>(l3, rest, r)) {
            return;
        }
        const std::uint8_t vihl = load_u8(l3);
        const std::uint32_t hlen = (vihl & 0x0Fu) * 4u;
        if (hlen < ipv4_min_hdr_len) {
            r.status = parse_status::bad_ipv4_ihl;
            return;
        }
        if (rest < hlen) {
            r.status = parse_status::truncated_ipv4;
            return;
        }
        const std::uint8_t tos = load_u8(l3 + 1);
        const std::uint16_t tot = load_be16(l3 + 2);
        const std::uint16_t frag = load_be16(l3 + 6);
        const std::uint8_t proto = load_u8(l3 + 9);
        // Field by field: the struct stays in registers when inlined (a
        // grouped memcpy store forced it to the stack, and a narrow spill
        // reloaded wide stalled store forwarding in the switch's loop).
        r.dscp = tos >> 2;
        r.ecn = tos & 3u;
        r.ttl = load_u8(l3 + 8);
        r.l4_proto = proto;
        r.ip4_src = load_be32(l3 + 12);
        r.ip4_dst = load_be32(l3 + 16);
        r.l3_len = tot;
        if (tot < hlen) {
            r.status = parse_status::bad_ipv4_total_length;
            return;
        }
        if (tot > rest) {
            r.status = parse_status::truncated_ipv4_payload;
            return;
        }
        if constexpr (Depth != parse_depth::l3) {
            if (!ipv4_checksum_ok(l3, hlen)) {
                r.status = parse_status::bad_ipv4_checksum;
                return;
            }
        }
        if ((frag & (ipv4_flag_mf | ipv4_frag_offset_mask)) != 0) {
            r.ipv4_fragment = true;
            return;
        }
        detail::parse_ip_payload<Depth>(p, proto, off + hlen, off + tot, r);
        return;
    }
    if (type == ethertype_ipv6) {
        if (!detail::ip_header_starts_ok<6>(l3, rest, r)) {
            return;
        }
        const std::uint32_t w0 = load_be32(l3);
        const std::uint8_t tc = static_cast<std::uint8_t>(w0 >> 20);
        const std::uint16_t plen = load_be16(l3 + 4);
        r.dscp = tc >> 2;
        r.ecn = tc & 3u;
        r.l4_proto = load_u8(l3 + 6);
        r.ttl = load_u8(l3 + 7);
        r.ip6_src_off = static_cast<std::uint16_t>(off + 8);
        r.ip6_dst_off = static_cast<std::uint16_t>(off + 24);
        r.l3_len = static_cast<std::uint16_t>(ipv6_hdr_len + plen);
        if (plen == 0 && r.l4_proto != ipv6_next_none) {
            r.status = parse_status::bad_ipv6_payload_length;
            return;
        }
        if (ipv6_hdr_len + plen > rest) {
            r.status = parse_status::truncated_ipv6_payload;
            return;
        }
        detail::parse_ip_payload<Depth>(p, r.l4_proto, off + ipv6_hdr_len, off + ipv6_hdr_len + plen, r);
        return;
    }
    if (type == ethertype_mac_control) {
        r.kind = frame_kind::mac_control;
        if (rest < 2) {
            r.status = parse_status::truncated_mac_control;
            return;
        }
        const std::uint16_t op = load_be16(l3);
        r.mac_control_opcode = op;
        if (op == mac_control_op_pfc) {
            if (rest < pfc_body_len) {
                r.status = parse_status::truncated_mac_control;
            }
        } else if (op == mac_control_op_pause) {
            if (rest < pause_body_len) {
                r.status = parse_status::truncated_mac_control;
            }
        } else {
            r.status = parse_status::mac_control_unknown_opcode;
        }
        return;
    }
    if (type == ethertype_arp) {
        if (rest < arp_len) {
            r.kind = frame_kind::arp;
            r.status = parse_status::truncated_arp;
            return;
        }
        r.kind = arp_is_eth_ipv4(l3) ? frame_kind::arp : frame_kind::other;
        return;
    }
    return;
}

// Parses one frame (without FCS) into a new parsed_frame.
template <parse_depth Depth = parse_depth::full>
[[gnu::always_inline]] inline parsed_frame parse_frame(const std::byte* p, std::uint32_t len) noexcept {
    parsed_frame r{};
    parse_frame_into<Depth>(r, p, len);
    return r;
}

inline parsed_frame parse_frame(std::span<const std::byte> f) noexcept {
    return parse_frame(f.data(), static_cast<std::uint32_t>(f.size()));
}

// ICRC check of a frame that parse_frame reported as ok RoCE.
inline bool roce_frame_icrc_ok(const std::byte* frame, const parsed_frame& pf) noexcept {
    if (!pf.is_roce || !pf.ok()) {
        return false;
    }
    return roce_icrc_verify(frame + pf.l3_off, static_cast<std::uint32_t>(pf.l4_off + pf.l4_len - pf.l3_off),
                            pf.kind == frame_kind::ipv6);
}

// A RoCEv2 frame whose payload is pattern[0..payload) followed by zero pad
// bytes and then the ICRC (the last 4 bytes of the UDP payload): true when
// it is so. Then its ICRC can be checked from its headers and the pattern's
// precomputed CRC (CRC is linear), as the generator builds it.
inline bool roce_payload_is(const std::byte* frame, const parsed_frame& pf, std::span<const std::byte> pattern) noexcept {
    const std::uint32_t len = pf.roce_payload_len;
    if (!pf.ok() || !pf.is_roce || len > pattern.size() ||
        static_cast<std::uint32_t>(pf.roce_payload_off) + len + pf.pad_count + 4u !=
            static_cast<std::uint32_t>(pf.l4_off) + pf.l4_len) {
        return false;
    }
    if (std::memcmp(frame + pf.roce_payload_off, pattern.data(), len) != 0) {
        return false;
    }
    for (std::uint32_t i = 0; i < pf.pad_count; ++i) {
        if (frame[pf.roce_payload_off + len + i] != std::byte{0}) {
            return false;
        }
    }
    return true;
}

}  // namespace rocelab
