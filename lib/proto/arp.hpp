// arp.hpp - ARP (RFC 826) for Ethernet/IPv4: view, body writer and frame builder.
//
// Layout (28 bytes): htype (2) = 1, ptype (2) = 0x0800, hlen (1) = 6,
// plen (1) = 4, oper (2: 1 request, 2 reply), sha (6), spa (4), tha (6),
// tpa (4). Only this Ethernet/IPv4 form is recognised (arp_is_eth_ipv4).
// Counters: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.hpp"
#include "proto/eth.hpp"
#include "proto/header_view.hpp"

namespace rocelab {

inline constexpr std::uint32_t arp_len = 28;
inline constexpr std::uint16_t arp_op_request = 1;
inline constexpr std::uint16_t arp_op_reply = 2;

// True for htype 1 / ptype 0x0800 / hlen 6 / plen 4 (p has arp_len bytes).
inline bool arp_is_eth_ipv4(const std::byte* p) noexcept {
    return load_be32(p) == 0x00010800u && load_be16(p + 4) == 0x0604u;
}

class arp_cview : public header_view<const std::byte> {
public:
    using header_view::header_view;
    std::uint16_t htype() const noexcept { return load_be16(_p); }
    std::uint16_t ptype() const noexcept { return load_be16(_p + 2); }
    std::uint8_t hlen() const noexcept { return load_u8(_p + 4); }
    std::uint8_t plen() const noexcept { return load_u8(_p + 5); }
    std::uint16_t oper() const noexcept { return load_be16(_p + 6); }
    mac_addr sha() const noexcept { return load_mac(_p + 8); }
    std::uint32_t spa() const noexcept { return load_be32(_p + 14); }
    mac_addr tha() const noexcept { return load_mac(_p + 18); }
    std::uint32_t tpa() const noexcept { return load_be32(_p + 24); }
};

// Writes the arp_len-byte Ethernet/IPv4 ARP body at p (htype 1, ptype
// 0x0800, hlen 6, plen 4, then the given fields); returns arp_len.
inline std::uint32_t write_arp(std::byte* p, std::uint16_t oper, const mac_addr& sha, std::uint32_t spa,
                               const mac_addr& tha, std::uint32_t tpa) noexcept {
    store_be32(p, 0x00010800u);
    store_be16(p + 4, 0x0604u);
    store_be16(p + 6, oper);
    store_mac(p + 8, sha);
    store_be32(p + 14, spa);
    store_mac(p + 18, tha);
    store_be32(p + 24, tpa);
    return arp_len;
}

// Writes an Ethernet + ARP frame (padded to 60 bytes); returns 60.
inline std::uint32_t build_arp(std::byte* out, std::uint16_t oper, const mac_addr& eth_dst,
                               const mac_addr& sha, std::uint32_t spa, const mac_addr& tha,
                               std::uint32_t tpa) noexcept {
    std::memset(out, 0, eth_min_frame_len);
    write_arp(out + write_eth(out, eth_dst, sha, ethertype_arp), oper, sha, spa, tha, tpa);
    return eth_min_frame_len;
}

}  // namespace rocelab
