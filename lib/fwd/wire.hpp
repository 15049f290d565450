// wire.hpp - the field offsets and ND constants lib/fwd reads and writes
// frames with, beside lib/proto's facts.
//
// The facts lib/proto defines are taken from it, not repeated here: the MAC
// address type, load_mac/store_mac, EtherTypes and header lengths
// (proto/eth.hpp), ARP's layout, length and opcodes (proto/arp.hpp: view,
// arp_is_eth_ipv4, write_arp, build_arp), IP protocol numbers
// (proto/ipv4.hpp; ICMPv6's in proto/ipv6.hpp), the IPv6 header length
// (proto/ipv6.hpp) and the Internet checksum (proto/csum.hpp,
// ipv6_l4_checksum in proto/ipv6.hpp). What lib/proto lacks stays here, in
// namespace wire: the offsets of the Ethernet, IPv4 and IPv6 fields lib/fwd's
// responders and hashes read and rewrite in place (lib/proto's views spell
// them as accessors), and ICMPv6 neighbour discovery. Everything here is
// constexpr, allocation free and safe on the data path.
//
// Offsets are relative to the start of the header they name; a caller that
// has a VLAN tag passes l3_off = 18 instead of 14 to the handlers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proto/arp.hpp"
#include "proto/eth.hpp"
#include "proto/ipv4.hpp"
#include "proto/ipv6.hpp"

namespace rocelab::wire {

// Ethernet II
inline constexpr std::size_t eth_dst = 0;
inline constexpr std::size_t eth_src = 6;
inline constexpr std::size_t eth_type = 12;

// IPv4 (RFC 791)
inline constexpr std::size_t ip4_ver_ihl = 0;
inline constexpr std::size_t ip4_total_len = 2;
inline constexpr std::size_t ip4_frag = 6;
inline constexpr std::size_t ip4_ttl = 8;
inline constexpr std::size_t ip4_proto = 9;
inline constexpr std::size_t ip4_csum = 10;
inline constexpr std::size_t ip4_src = 12;
inline constexpr std::size_t ip4_dst = 16;

// IPv6 (RFC 8200)
inline constexpr std::size_t ip6_payload_len = 4;
inline constexpr std::size_t ip6_next = 6;
inline constexpr std::size_t ip6_hop_limit = 7;
inline constexpr std::size_t ip6_src = 8;
inline constexpr std::size_t ip6_dst = 24;

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

}  // namespace rocelab::wire
