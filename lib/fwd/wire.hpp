// wire.hpp - the few wire-format constants and helpers lib/fwd needs.
//
// lib/fwd deliberately does not depend on the contents of lib/proto: it only
// needs Ethernet/ARP/IPv4/IPv6/ICMPv6 field offsets, the MAC address type and
// the Internet checksum. Everything here is constexpr or inline, allocation
// free and safe on the data path.
//
// Offsets are relative to the start of the header they name; a caller that
// has a VLAN tag passes l3_off = 18 instead of 14 to the handlers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.hpp"

namespace rocelab {

// Same alias as proto/eth.hpp (a redeclaration of an alias to the same type
// is legal), so lib/fwd does not need lib/proto's headers for it; the config
// (config/switch_cfg.hpp) takes it from here through fwd/route_cfg.hpp.
using mac_addr = std::array<std::uint8_t, 6>;

namespace wire {

// Ethernet II
inline constexpr std::size_t eth_dst = 0;
inline constexpr std::size_t eth_src = 6;
inline constexpr std::size_t eth_type = 12;
inline constexpr std::size_t eth_hdr_len = 14;
inline constexpr std::size_t vlan_hdr_len = 4;
inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_arp = 0x0806;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;
inline constexpr std::uint16_t ethertype_ipv6 = 0x86DD;

// ARP for IPv4 over Ethernet (RFC 826), 28 bytes.
inline constexpr std::size_t arp_htype = 0;
inline constexpr std::size_t arp_ptype = 2;
inline constexpr std::size_t arp_hlen = 4;
inline constexpr std::size_t arp_plen = 5;
inline constexpr std::size_t arp_oper = 6;
inline constexpr std::size_t arp_sha = 8;
inline constexpr std::size_t arp_spa = 14;
inline constexpr std::size_t arp_tha = 18;
inline constexpr std::size_t arp_tpa = 24;
inline constexpr std::size_t arp_len = 28;
inline constexpr std::uint16_t arp_op_request = 1;
inline constexpr std::uint16_t arp_op_reply = 2;

// IPv4 (RFC 791)
inline constexpr std::size_t ip4_ver_ihl = 0;
inline constexpr std::size_t ip4_total_len = 2;
inline constexpr std::size_t ip4_frag = 6;
inline constexpr std::size_t ip4_ttl = 8;
inline constexpr std::size_t ip4_proto = 9;
inline constexpr std::size_t ip4_csum = 10;
inline constexpr std::size_t ip4_src = 12;
inline constexpr std::size_t ip4_dst = 16;
inline constexpr std::size_t ip4_min_len = 20;

// IPv6 (RFC 8200)
inline constexpr std::size_t ip6_payload_len = 4;
inline constexpr std::size_t ip6_next = 6;
inline constexpr std::size_t ip6_hop_limit = 7;
inline constexpr std::size_t ip6_src = 8;
inline constexpr std::size_t ip6_dst = 24;
inline constexpr std::size_t ip6_hdr_len = 40;

inline constexpr std::uint8_t proto_icmp = 1;
inline constexpr std::uint8_t proto_tcp = 6;
inline constexpr std::uint8_t proto_udp = 17;
inline constexpr std::uint8_t proto_icmpv6 = 58;

// ICMPv6 neighbour discovery (RFC 4861)
inline constexpr std::uint8_t icmp6_echo_request = 128;
inline constexpr std::uint8_t icmp6_echo_reply = 129;
inline constexpr std::uint8_t icmp6_ns = 135;
inline constexpr std::uint8_t icmp6_na = 136;
inline constexpr std::size_t nd_target = 8;  // after type, code, csum, reserved/flags
inline constexpr std::size_t nd_options = 24;
inline constexpr std::uint8_t nd_opt_sll = 1;  // source link-layer address
inline constexpr std::uint8_t nd_opt_tll = 2;  // target link-layer address
inline constexpr std::uint8_t na_flag_router = 0x80;
inline constexpr std::uint8_t na_flag_solicited = 0x40;
inline constexpr std::uint8_t na_flag_override = 0x20;

// ---- Internet checksum (RFC 1071) ----

// Adds `len` bytes at p (big-endian 16-bit words, odd tail padded with zero)
// to a 32-bit partial sum. Fold with csum_fold().
inline std::uint32_t csum_add(std::uint32_t sum, const std::byte* p, std::size_t len) noexcept {
    std::uint64_t s = sum;
    while (len >= 4) {
        s += load_be32(p);
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        s += load_be16(p);
        p += 2;
        len -= 2;
    }
    if (len == 1) {
        s += static_cast<std::uint32_t>(load_u8(p)) << 8;
    }
    while (s >> 32) {
        s = (s & 0xffffffffu) + (s >> 32);
    }
    return static_cast<std::uint32_t>(s);
}

// Folds a partial sum to 16 bits and complements it (the value to store).
constexpr std::uint16_t csum_fold(std::uint32_t sum) noexcept {
    while (sum >> 16) {
        sum = (sum & 0xffffu) + (sum >> 16);
    }
    return static_cast<std::uint16_t>(~sum & 0xffffu);
}

// IPv6 upper-layer checksum (RFC 8200 section 8.1): pseudo-header of source,
// destination, 32-bit upper-layer length and next header, then the payload.
// The checksum field inside `l4` must be zero when computing, or left in place
// when verifying (a valid packet then yields 0).
inline std::uint16_t ipv6_l4_csum(const std::byte* ip6, const std::byte* l4, std::size_t l4_len,
                                  std::uint8_t next_header) noexcept {
    std::uint32_t s = csum_add(0, ip6 + ip6_src, 32);
    std::uint64_t t = s;
    t += static_cast<std::uint32_t>(l4_len >> 16) + static_cast<std::uint32_t>(l4_len & 0xffff);
    t += next_header;
    while (t >> 32) {
        t = (t & 0xffffffffu) + (t >> 32);
    }
    return csum_fold(csum_add(static_cast<std::uint32_t>(t), l4, l4_len));
}

inline mac_addr load_mac(const std::byte* p) noexcept {
    mac_addr m;
    std::memcpy(m.data(), p, 6);
    return m;
}
inline void store_mac(std::byte* p, const mac_addr& m) noexcept {
    std::memcpy(p, m.data(), 6);
}

}  // namespace wire
}  // namespace rocelab
