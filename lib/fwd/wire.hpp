// wire.hpp - the few wire-format constants and helpers lib/fwd needs.
//
// lib/fwd deliberately does not depend on the contents of lib/proto: it only
// needs Ethernet/ARP/IPv4/IPv6/ICMPv6 field offsets and the MAC address type
// (the Internet checksum is lib/proto's, proto/csum.hpp). Everything here is
// constexpr or inline, allocation free and safe on the data path.
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
