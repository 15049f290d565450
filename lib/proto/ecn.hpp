// ecn.hpp - find the IP header of an Ethernet frame and set ECN CE in place.
//
// What: mark_ce() is what a switch does to a packet WRED chose to mark
// (reference 3.1): it walks Ethernet and up to 3 VLAN tags (TPID 0x8100 or
// 0x88A8), then
//   * IPv4: ECT(0)/ECT(1) -> CE, with the RFC 1624 incremental update of the
//     header checksum (ipv4_mark_ce / csum_update16 in ipv4.hpp);
//   * IPv6: the ECN bits of the Traffic Class (no header checksum);
// and never touches a Not-ECT packet (WRED drops those instead, if told to)
// nor a packet that already carries CE. The RoCEv2 ICRC masks the TOS /
// Traffic Class byte and the IPv4 checksum (reference 1.5), and the UDP
// checksum does not cover them, so nothing else needs updating.
//
// Bounds: every read is checked against len; the whole IP fixed header (20
// bytes and the IHL's options for IPv4, 40 bytes for IPv6) must be inside the
// frame, else `truncated` and nothing is written. An IPv4 EtherType with a
// version other than 4 or an IHL below 5 (IPv6: version other than 6) is
// reported as not_ip: it is not a header this code may rewrite.
//
// frame_ecn() returns the ECN bits (0..3) of an IP frame, or 0xFF when the
// frame is not IP or is truncated (the same walk, read-only): the
// "is it ECN-capable" input of wred_cfg::decide (qos/wred.hpp, ecn_capable()).
//
// Counters: none; the caller counts by ce_mark_result (e.g. ecn_marked for
// `marked`). Data-path safe: no allocation, no exceptions.
//
// Example:
//   if (w.decide(q, ecn_capable(frame_ecn(p, len)), r) == wred_verdict::mark) {
//       if (mark_ce(p, len) == ce_mark_result::marked) { ++c.ecn_marked; }
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/endian.hpp"
#include "proto/eth.hpp"
#include "proto/ipv4.hpp"
#include "proto/ipv6.hpp"

namespace rocelab {

enum class ce_mark_result : std::uint8_t {
    not_ip,      // not IPv4/IPv6 (or more than 3 VLAN tags, or a bad IP version/IHL): untouched
    not_ect,     // Not-ECT: untouched (the sender is not ECN-capable)
    marked,      // ECT(0)/ECT(1) changed to CE (IPv4 checksum updated)
    already_ce,  // CE already set: untouched
    truncated,   // the frame ends inside the Ethernet/VLAN/IP header: untouched
};

constexpr std::string_view ce_mark_result_name(ce_mark_result r) noexcept {
    switch (r) {
    case ce_mark_result::not_ip: return "not_ip";
    case ce_mark_result::not_ect: return "not_ect";
    case ce_mark_result::marked: return "marked";
    case ce_mark_result::already_ce: return "already_ce";
    case ce_mark_result::truncated: return "truncated";
    }
    return "?";
}

inline constexpr std::uint32_t ecn_max_vlan_tags = 3;

namespace detail {

// Where the IP header starts and which version, after the L2 walk.
struct ecn_l3 {
    std::uint32_t off = 0;
    std::uint8_t version = 0;  // 4, 6, or 0 = not IP
    bool truncated = false;
};

[[gnu::always_inline]] inline ecn_l3 ecn_find_l3(const std::byte* p, std::uint32_t len) noexcept {
    ecn_l3 r;
    if (len < eth_hdr_len) [[unlikely]] {
        r.truncated = true;
        return r;
    }
    std::uint32_t off = 12;  // EtherType / TPID slot
    std::uint16_t type = load_be16(p + off);
    for (std::uint32_t tags = 0; is_vlan_tpid(type); ++tags) {
        if (tags == ecn_max_vlan_tags) {
            return r;  // a 4th tag: not walked
        }
        off += vlan_tag_len;
        if (len < off + 2) {
            r.truncated = true;
            return r;
        }
        type = load_be16(p + off);
    }
    off += 2;
    std::uint32_t need = 0;
    if (type == ethertype_ipv4) {
        need = ipv4_min_hdr_len;
        r.version = 4;
    } else if (type == ethertype_ipv6) {
        need = ipv6_hdr_len;
        r.version = 6;
    } else {
        return r;
    }
    if (len - off < need) {
        r.version = 0;
        r.truncated = true;
        return r;
    }
    const std::uint8_t b0 = load_u8(p + off);
    if ((b0 >> 4) != r.version) {
        r.version = 0;
        return r;
    }
    if (r.version == 4) {
        const std::uint32_t ihl = (b0 & 0x0Fu) * 4u;
        if (ihl < ipv4_min_hdr_len) {
            r.version = 0;
            return r;
        }
        if (len - off < ihl) {
            r.version = 0;
            r.truncated = true;
            return r;
        }
    }
    r.off = off;
    return r;
}

}  // namespace detail

// ECN bits (0..3) of the frame's IPv4/IPv6 header, or 0xFF when the frame is
// not IP or too short to hold the header. Never reads p[len] or beyond.
[[gnu::always_inline]] inline std::uint8_t frame_ecn(const std::byte* p, std::uint32_t len) noexcept {
    const detail::ecn_l3 l3 = detail::ecn_find_l3(p, len);
    if (l3.version == 4) {
        return load_u8(p + l3.off + 1) & 3u;
    }
    if (l3.version == 6) {
        return (load_u8(p + l3.off + 1) >> 4) & 3u;
    }
    return 0xFF;
}

// Sets CE on an ECN-capable IPv4/IPv6 frame in place (see the header comment).
// Never reads or writes p[len] or beyond.
[[gnu::always_inline]] inline ce_mark_result mark_ce(std::byte* p, std::uint32_t len) noexcept {
    const detail::ecn_l3 l3 = detail::ecn_find_l3(p, len);
    if (l3.version == 0) {
        return l3.truncated ? ce_mark_result::truncated : ce_mark_result::not_ip;
    }
    std::byte* ip = p + l3.off;
    const std::uint8_t ecn = l3.version == 4 ? (load_u8(ip + 1) & 3u) : ((load_u8(ip + 1) >> 4) & 3u);
    if (ecn == ecn_not_ect) {
        return ce_mark_result::not_ect;
    }
    if (ecn == ecn_ce) {
        return ce_mark_result::already_ce;
    }
    if (l3.version == 4) {
        ipv4_mark_ce(ip);
    } else {
        ipv6_mark_ce(ip);
    }
    return ce_mark_result::marked;
}

}  // namespace rocelab
