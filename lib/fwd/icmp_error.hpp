// icmp_error.hpp - (lib/fwd, beside arp_nd.hpp: replies a router builds in place) ICMP and ICMPv6 error messages a router sends (time
// exceeded, destination unreachable), built in place over the datagram
// that caused them.
//
// What: the switch in L3 mode drops a datagram whose TTL / hop limit
// expires or that has no route; a router answers those with an ICMP error
// to the datagram's source (RFC 792, RFC 1812 4.3.2 / 5.2.7; RFC 4443), so
// that traceroute shows the hop and senders learn of the missing route.
// make_icmp4_error / make_icmp6_error rewrite the received frame into that
// error, in the same buffer:
//   Ethernet: destination = the frame's source MAC (the previous hop),
//             source = the port's MAC; any VLAN tag and the EtherType stay.
//   IPv4: version 4, IHL 5, TOS 0xC0 (CS6, network control, as Linux),
//         TTL 64, protocol 1, source = `src`, destination = the datagram's
//         source, header checksum.
//   ICMP: type 11 code 0 (TTL exceeded in transit), type 3 code 0
//         (network unreachable) or type 3 code 1 (host unreachable: the
//         neighbour never answered ARP, RFC 1812 4.3.3.1); 4 unused bytes; then as much of the
//         datagram as fits with the whole error in 576 bytes (RFC 1812
//         4.3.2.3: at least its header and 8 bytes); checksum.
//   IPv6: version 6, traffic class 0xC0, flow label 0, next header 58,
//         hop limit 64, source = `src6`, destination = the datagram's source.
//   ICMPv6: type 3 code 0 (hop limit exceeded), type 1 code 0 (no route
//         to destination) or type 1 code 3 (address unreachable: neighbour
//         discovery failed, RFC 4443 3.1); 4 unused bytes; as much of the datagram as fits
//         in 1280 bytes (the minimum IPv6 MTU, RFC 4443 2.4(c)); checksum
//         over the pseudo-header.
// No error is made (return 0) where RFC 1812 4.3.2.7 / RFC 4443 2.4(e)
// forbid one: about an ICMP error (IPv4 types 3, 4, 5, 11, 12; ICMPv6
// types < 128), a non-first fragment, a multicast or broadcast
// destination, or an unspecified, loopback, multicast or broadcast source.
//
// Input: frame (Ethernet at 0), len (bytes of the frame present), cap
// (bytes writable from frame[0]; >= len), l3_off (IP header offset). The
// datagram's length is taken from its header, bounded by len. Returns the
// error frame's length (<= cap), or 0 (frame untouched).
// Pure: no DPDK, no allocation.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.hpp"
#include "proto/ipv4.hpp"
#include "proto/ipv6.hpp"

namespace rocelab {

enum class icmp_error_kind : std::uint8_t { time_exceeded, unreachable, host_unreachable };

inline constexpr std::uint32_t icmp4_error_max = 576;   // RFC 1812 4.3.2.3
inline constexpr std::uint32_t icmp6_error_max = 1280;  // RFC 4443 2.4(c)
inline constexpr std::uint8_t icmp_error_ttl = 64;
inline constexpr std::uint8_t icmp_error_tos = 0xC0;    // CS6

namespace detail {
inline void swap_macs(std::byte* frame, const std::uint8_t* port_mac) noexcept {
    std::memcpy(frame, frame + 6, 6);  // destination = the frame's source
    std::memcpy(frame + 6, port_mac, 6);
}
}  // namespace detail

inline std::uint32_t make_icmp4_error(std::byte* frame, std::uint32_t len, std::uint32_t cap, std::uint32_t l3_off,
                                      icmp_error_kind k, const std::uint8_t* port_mac, std::uint32_t src) noexcept {
    if (len < l3_off + 20 || cap < len) { return 0; }
    std::byte* ip = frame + l3_off;
    const std::uint32_t ihl = (static_cast<std::uint8_t>(ip[0]) & 0x0Fu) * 4u;
    if ((static_cast<std::uint8_t>(ip[0]) >> 4) != 4 || ihl < 20 || len < l3_off + ihl) { return 0; }
    const std::uint32_t dst = load_be32(ip + 16);
    const std::uint32_t osrc = load_be32(ip + 12);
    const auto multicast = [](std::uint32_t a) noexcept { return (a >> 28) == 0xE; };
    if (multicast(dst) || dst == 0xFFFFFFFFu) { return 0; }
    if (osrc == 0 || (osrc >> 24) == 127 || multicast(osrc) || osrc == 0xFFFFFFFFu) { return 0; }
    if ((load_be16(ip + 6) & ipv4_frag_offset_mask) != 0) { return 0; }  // not the first fragment
    const std::uint32_t dgram = std::min<std::uint32_t>(load_be16(ip + 2), len - l3_off);
    if (static_cast<std::uint8_t>(ip[9]) == ip_proto_icmp) {
        if (dgram < ihl + 1) { return 0; }
        const auto t = static_cast<std::uint8_t>(ip[ihl]);
        if (t == 3 || t == 4 || t == 5 || t == 11 || t == 12) { return 0; }  // an ICMP error: never answered
    }
    constexpr std::uint32_t hdr = 20 + 8;
    std::uint32_t quote = std::min(dgram, icmp4_error_max - hdr);
    if (l3_off + hdr + quote > cap) {
        if (cap < l3_off + hdr + ihl + 8) { return 0; }
        quote = cap - l3_off - hdr;
    }
    std::memmove(ip + hdr, ip, quote);
    detail::swap_macs(frame, port_mac);
    const std::uint32_t total = hdr + quote;
    ip[0] = std::byte{0x45};
    ip[1] = std::byte{icmp_error_tos};
    store_be16(ip + 2, static_cast<std::uint16_t>(total));
    store_be16(ip + 4, 0);
    store_be16(ip + 6, 0);
    ip[8] = std::byte{icmp_error_ttl};
    ip[9] = std::byte{ip_proto_icmp};
    store_be16(ip + 10, 0);
    store_be32(ip + 12, src);
    store_be32(ip + 16, osrc);
    store_be16(ip + 10, ipv4_header_checksum(ip, 20));
    std::byte* icmp = ip + 20;
    icmp[0] = std::byte{static_cast<std::uint8_t>(k == icmp_error_kind::time_exceeded ? 11 : 3)};
    icmp[1] = std::byte{static_cast<std::uint8_t>(k == icmp_error_kind::host_unreachable ? 1 : 0)};
    store_be16(icmp + 2, 0);
    store_be32(icmp + 4, 0);
    store_be16(icmp + 2, inet_checksum(icmp, 8 + quote));
    return l3_off + total;
}

inline std::uint32_t make_icmp6_error(std::byte* frame, std::uint32_t len, std::uint32_t cap, std::uint32_t l3_off,
                                      icmp_error_kind k, const std::uint8_t* port_mac,
                                      const std::uint8_t* src6) noexcept {
    if (len < l3_off + 40 || cap < len) { return 0; }
    std::byte* ip = frame + l3_off;
    if ((static_cast<std::uint8_t>(ip[0]) >> 4) != 6) { return 0; }
    const auto* osrc = reinterpret_cast<const std::uint8_t*>(ip + 8);
    const auto* odst = reinterpret_cast<const std::uint8_t*>(ip + 24);
    if (odst[0] == 0xFF || osrc[0] == 0xFF) { return 0; }  // multicast
    static constexpr std::array<std::uint8_t, 16> unspecified{};
    if (std::memcmp(osrc, unspecified.data(), 16) == 0) { return 0; }
    const std::uint32_t dgram = std::min<std::uint32_t>(40u + load_be16(ip + 4), len - l3_off);
    if (static_cast<std::uint8_t>(ip[6]) == ip_proto_icmpv6) {  // ICMPv6 right after the header
        if (dgram < 41) { return 0; }
        if (static_cast<std::uint8_t>(ip[40]) < 128) { return 0; }  // an error message: never answered
    }
    constexpr std::uint32_t hdr = 40 + 8;
    std::uint32_t quote = std::min(dgram, icmp6_error_max - hdr);
    if (l3_off + hdr + quote > cap) {
        if (cap < l3_off + hdr + 48) { return 0; }
        quote = cap - l3_off - hdr;
    }
    std::array<std::uint8_t, 16> dst{};
    std::memcpy(dst.data(), osrc, 16);
    std::memmove(ip + hdr, ip, quote);
    detail::swap_macs(frame, port_mac);
    const std::uint32_t plen = 8 + quote;
    store_be32(ip, 0x60000000u | (std::uint32_t{icmp_error_tos} << 20));
    store_be16(ip + 4, static_cast<std::uint16_t>(plen));
    ip[6] = std::byte{ip_proto_icmpv6};
    ip[7] = std::byte{icmp_error_ttl};
    std::memcpy(ip + 8, src6, 16);
    std::memcpy(ip + 24, dst.data(), 16);
    std::byte* icmp = ip + 40;
    icmp[0] = std::byte{static_cast<std::uint8_t>(k == icmp_error_kind::time_exceeded ? 3 : 1)};
    icmp[1] = std::byte{static_cast<std::uint8_t>(k == icmp_error_kind::host_unreachable ? 3 : 0)};
    store_be16(icmp + 2, 0);
    store_be32(icmp + 4, 0);
    store_be16(icmp + 2, ipv6_l4_checksum(ip, icmp, plen, ip_proto_icmpv6));
    return l3_off + hdr + quote;
}

}  // namespace rocelab
