// ipv6.hpp - IPv6 fixed header view and in-place rewrites.
//
// Layout of the first 32-bit word: version (4) | traffic class (8) | flow
// label (20). Traffic class = DSCP (6) | ECN (2), so TC straddles bytes 0 and
// 1: TC = (w >> 20) & 0xFF, ECN = (w >> 20) & 3 = bits 5..4 of byte 1.
// Then payload length (16, excludes the 40-byte header), next header (8), hop
// limit (8), source (16 B, offset 8), destination (16 B, offset 24).
// IPv6 has no header checksum, so rewrites are plain stores; an upper layer's
// checksum (ICMPv6, UDP) covers a pseudo-header of the addresses, its length
// and its next header (RFC 8200 8.1): ipv6_pseudo_sum, ipv6_l4_checksum.
// Extension headers are not walked: RoCEv2 never uses them; a frame whose
// next header is not UDP is reported with that next header as l4 proto.
// Counters: none.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/endian.hpp"
#include "proto/csum.hpp"
#include "proto/header_view.hpp"

namespace rocelab {

inline constexpr std::uint32_t ipv6_hdr_len = 40;
inline constexpr std::uint8_t ipv6_next_none = 59;
inline constexpr std::uint8_t ip_proto_icmpv6 = 58;  // next header (RFC 4443)

using ipv6_addr = std::array<std::uint8_t, 16>;

template <typename B>
class basic_ipv6_view : public header_view<B> {
public:
    using header_view<B>::header_view;
    std::uint8_t version() const noexcept { return load_u8(_p) >> 4; }
    std::uint8_t traffic_class() const noexcept { return static_cast<std::uint8_t>(load_be32(_p) >> 20); }
    std::uint8_t dscp() const noexcept { return traffic_class() >> 2; }
    std::uint8_t ecn() const noexcept { return traffic_class() & 3u; }
    std::uint32_t flow_label() const noexcept { return load_be32(_p) & 0xFFFFFu; }
    std::uint16_t payload_length() const noexcept { return load_be16(_p + 4); }
    std::uint8_t next_header() const noexcept { return load_u8(_p + 6); }
    std::uint8_t hop_limit() const noexcept { return load_u8(_p + 7); }
    ipv6_addr src() const noexcept { return load_addr(_p + 8); }
    ipv6_addr dst() const noexcept { return load_addr(_p + 24); }

    void set_traffic_class(std::uint8_t tc) const noexcept requires(!std::is_const_v<B>) {
        const std::uint32_t w = load_be32(_p);
        store_be32(_p, (w & 0xF00FFFFFu) | (std::uint32_t(tc) << 20));
    }
    void set_ecn(std::uint8_t ecn) const noexcept requires(!std::is_const_v<B>) {
        _p[1] = std::byte((load_u8(_p + 1) & 0xCFu) | ((ecn & 3u) << 4));
    }
    void set_hop_limit(std::uint8_t h) const noexcept requires(!std::is_const_v<B>) { _p[7] = std::byte{h}; }

private:
    static ipv6_addr load_addr(const std::byte* p) noexcept {
        ipv6_addr a;
        std::memcpy(a.data(), p, 16);
        return a;
    }
    using header_view<B>::_p;
};
using ipv6_view = basic_ipv6_view<std::byte>;
using ipv6_cview = basic_ipv6_view<const std::byte>;

// ECT -> CE; false for Not-ECT (untouched), true when CE afterwards.
inline bool ipv6_mark_ce(std::byte* ip6) noexcept {
    const std::uint8_t ecn = (load_u8(ip6 + 1) >> 4) & 3u;
    if (ecn == 0) {
        return false;
    }
    ip6[1] = std::byte(load_u8(ip6 + 1) | 0x30u);
    return true;
}

// Decrements the hop limit; returns the new value (0 stays 0).
inline std::uint8_t ipv6_dec_hop_limit(std::byte* ip6) noexcept {
    const std::uint8_t h = load_u8(ip6 + 7);
    if (h == 0) {
        return 0;
    }
    ip6[7] = std::byte(h - 1u);
    return static_cast<std::uint8_t>(h - 1u);
}

// The pseudo-header's partial sum (RFC 8200 8.1): source, destination,
// 32-bit upper-layer length, next header (csum.hpp's native order).
inline std::uint64_t ipv6_pseudo_sum(const std::byte* ip6, std::uint32_t l4_len, std::uint8_t next_header) noexcept {
    std::byte tail[8]{};
    store_be32(tail, l4_len);
    tail[7] = std::byte{next_header};
    return csum_add_native(tail, 8, csum_add_native(ip6 + 8, 32, 0));
}

// Upper-layer checksum of the l4_len bytes at l4 under the IPv6 header ip6:
// the value to store (host order) when the checksum field inside l4 is zero;
// 0 when it is in place and right.
inline std::uint16_t ipv6_l4_checksum(const std::byte* ip6, const std::byte* l4, std::uint32_t l4_len,
                                      std::uint8_t next_header) noexcept {
    return inet_checksum(l4, l4_len, ipv6_pseudo_sum(ip6, l4_len, next_header));
}

struct ipv6_hdr_params {
    ipv6_addr src{};
    ipv6_addr dst{};
    std::uint8_t traffic_class = 0;
    std::uint32_t flow_label = 0;  // 20 bits
    std::uint8_t hop_limit = 64;
    std::uint8_t next_header = 17;
};

// Writes the 40-byte header; returns 40.
inline std::uint32_t write_ipv6(std::byte* ip6, const ipv6_hdr_params& h, std::uint16_t payload_length) noexcept {
    store_be32(ip6, (6u << 28) | (std::uint32_t(h.traffic_class) << 20) | (h.flow_label & 0xFFFFFu));
    store_be16(ip6 + 4, payload_length);
    ip6[6] = std::byte{h.next_header};
    ip6[7] = std::byte{h.hop_limit};
    std::memcpy(ip6 + 8, h.src.data(), 16);
    std::memcpy(ip6 + 24, h.dst.data(), 16);
    return ipv6_hdr_len;
}

}  // namespace rocelab
