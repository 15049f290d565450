// eth.hpp - Ethernet II header and 802.1Q / 802.1ad VLAN tags.
//
// What it does: constants (EtherTypes, header sizes), MAC address load/store,
// a view over the 14-byte Ethernet header, and encode/decode of the 16-bit
// Tag Control Information (TCI) of a VLAN tag.
//
// Layout (all big-endian):
//   0  dst MAC (6)   6  src MAC (6)   12 EtherType or TPID (2)
//   VLAN tag (4): TPID 0x8100 (C-tag) or 0x88A8 (S-tag), then TCI:
//     bits 15..13 PCP (802.1p priority), bit 12 DEI, bits 11..0 VID.
//
// mac_addr is the one MAC address type: lib/fwd (through fwd/wire.hpp or
// this header) and the configuration use it from here.
// Counters: none (pure wire-format helpers).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/endian.hpp"
#include "proto/header_view.hpp"

namespace rocelab {

using mac_addr = std::array<std::uint8_t, 6>;

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_arp = 0x0806;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;   // 802.1Q C-tag TPID
inline constexpr std::uint16_t ethertype_qinq = 0x88A8;   // 802.1ad S-tag TPID
inline constexpr std::uint16_t ethertype_ipv6 = 0x86DD;
inline constexpr std::uint16_t ethertype_mac_control = 0x8808;
inline constexpr std::uint16_t ethertype_roce_v1 = 0x8915;

inline constexpr std::uint32_t eth_hdr_len = 14;
inline constexpr std::uint32_t vlan_tag_len = 4;
inline constexpr std::uint32_t eth_max_vlan_tags = 2;
// Minimum Ethernet frame without FCS (64 bytes on the wire including FCS).
inline constexpr std::uint32_t eth_min_frame_len = 60;

inline constexpr mac_addr mac_broadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

inline mac_addr load_mac(const std::byte* p) noexcept {
    mac_addr m;
    std::memcpy(m.data(), p, 6);
    return m;
}
inline void store_mac(std::byte* p, const mac_addr& m) noexcept { std::memcpy(p, m.data(), 6); }
constexpr bool mac_is_multicast(const mac_addr& m) noexcept { return (m[0] & 1u) != 0; }

inline constexpr bool is_vlan_tpid(std::uint16_t t) noexcept {
    return t == ethertype_vlan || t == ethertype_qinq;
}

// Decoded VLAN Tag Control Information.
struct vlan_tci {
    std::uint8_t pcp = 0;   // 0..7
    bool dei = false;
    std::uint16_t vid = 0;  // 0..4095

    static constexpr vlan_tci decode(std::uint16_t tci) noexcept {
        return vlan_tci{static_cast<std::uint8_t>(tci >> 13), ((tci >> 12) & 1u) != 0,
                        static_cast<std::uint16_t>(tci & 0x0FFFu)};
    }
    constexpr std::uint16_t encode() const noexcept {
        return static_cast<std::uint16_t>((std::uint16_t(pcp & 7u) << 13) | (dei ? 0x1000u : 0u) |
                                          (vid & 0x0FFFu));
    }
    constexpr bool operator==(const vlan_tci&) const noexcept = default;
};

// View over an Ethernet header. B is std::byte (mutable) or const std::byte.
template <typename B>
class basic_eth_view : public header_view<B> {
public:
    using header_view<B>::header_view;
    mac_addr dst() const noexcept { return load_mac(_p); }
    mac_addr src() const noexcept { return load_mac(_p + 6); }
    // EtherType / TPID in the first type slot (offset 12).
    std::uint16_t type() const noexcept { return load_be16(_p + 12); }

    void set_dst(const mac_addr& m) const noexcept requires(!std::is_const_v<B>) { store_mac(_p, m); }
    void set_src(const mac_addr& m) const noexcept requires(!std::is_const_v<B>) { store_mac(_p + 6, m); }
    void set_type(std::uint16_t t) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 12, t); }

private:
    using header_view<B>::_p;
};
using eth_view = basic_eth_view<std::byte>;
using eth_cview = basic_eth_view<const std::byte>;

// View over one 4-byte VLAN tag (TPID + TCI).
template <typename B>
class basic_vlan_view : public header_view<B> {
public:
    using header_view<B>::header_view;
    std::uint16_t tpid() const noexcept { return load_be16(_p); }
    std::uint16_t tci_raw() const noexcept { return load_be16(_p + 2); }
    vlan_tci tci() const noexcept { return vlan_tci::decode(tci_raw()); }
    std::uint8_t pcp() const noexcept { return static_cast<std::uint8_t>(load_u8(_p + 2) >> 5); }
    bool dei() const noexcept { return (load_u8(_p + 2) & 0x10u) != 0; }
    std::uint16_t vid() const noexcept { return static_cast<std::uint16_t>(tci_raw() & 0x0FFFu); }

    void set_tci(vlan_tci t) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 2, t.encode()); }
    void set_pcp(std::uint8_t pcp) const noexcept requires(!std::is_const_v<B>) {
        _p[2] = std::byte((load_u8(_p + 2) & 0x1Fu) | ((pcp & 7u) << 5));
    }

private:
    using header_view<B>::_p;
};
using vlan_view = basic_vlan_view<std::byte>;
using vlan_cview = basic_vlan_view<const std::byte>;

// Writes dst, src and EtherType; returns 14.
inline std::uint32_t write_eth(std::byte* out, const mac_addr& dst, const mac_addr& src,
                               std::uint16_t ethertype) noexcept {
    store_mac(out, dst);
    store_mac(out + 6, src);
    store_be16(out + 12, ethertype);
    return eth_hdr_len;
}

// Writes a VLAN tag (TPID + TCI) at `out`; returns 4. The next EtherType
// follows the tag and is written by the caller.
inline std::uint32_t write_vlan_tag(std::byte* out, std::uint16_t tpid, vlan_tci tci) noexcept {
    store_be16(out, tpid);
    store_be16(out + 2, tci.encode());
    return vlan_tag_len;
}

}  // namespace rocelab
