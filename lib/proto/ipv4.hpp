// ipv4.hpp - IPv4 header view, header checksum and in-place rewrites.
//
// What it does:
//   * basic_ipv4_view: field access over a 20..60 byte IPv4 header.
//   * ipv4_header_checksum / ipv4_checksum_ok: full RFC 791 header checksum
//     (the Internet checksum and its RFC 1624 incremental update, with their
//     derivations: csum.hpp).
//   * ipv4_set_tos / ipv4_set_ecn / ipv4_mark_ce / ipv4_dec_ttl: rewrite a
//     field and patch the checksum incrementally (what a switch does per packet).
// Counters: none; callers count what the return values tell them.
//
// Derivations:
//   * The TOS byte shares the 16-bit word at offset 0 with version/IHL and TTL
//     shares the word at offset 8 with the protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/endian.hpp"
#include "proto/csum.hpp"
#include "proto/header_view.hpp"

namespace rocelab {

inline constexpr std::uint32_t ipv4_min_hdr_len = 20;
inline constexpr std::uint32_t ipv4_max_hdr_len = 60;
inline constexpr std::uint8_t ip_proto_tcp = 6;
inline constexpr std::uint8_t ip_proto_udp = 17;
inline constexpr std::uint8_t ip_proto_icmp = 1;

// ECN codepoints (RFC 3168), the two low bits of TOS / Traffic Class.
inline constexpr std::uint8_t ecn_not_ect = 0;
inline constexpr std::uint8_t ecn_ect1 = 1;
inline constexpr std::uint8_t ecn_ect0 = 2;
inline constexpr std::uint8_t ecn_ce = 3;

inline constexpr std::uint16_t ipv4_flag_df = 0x4000;
inline constexpr std::uint16_t ipv4_flag_mf = 0x2000;
inline constexpr std::uint16_t ipv4_frag_offset_mask = 0x1FFF;

// Checksum to store for a header of hlen bytes (the stored checksum field is
// ignored). Host order; write it with store_be16(ip + 10, ...).
inline std::uint16_t ipv4_header_checksum(const std::byte* ip, std::uint32_t hlen = 20) noexcept {
    std::uint64_t s = csum_add_native(ip, hlen, 0);
    std::uint16_t stored;
    std::memcpy(&stored, ip + 10, 2);
    s += static_cast<std::uint16_t>(~stored);  // subtracting in ones' complement = adding the complement
    return bswap16(static_cast<std::uint16_t>(~csum_fold(s)));
}

// True when the header's word sum (checksum included) is 0xFFFF. A header
// without options (hlen 20, nearly every one) is summed as two 64-bit words
// and a 32-bit one, with end-around carries (csum_add64): the same class
// modulo 0xFFFF as the 32-bit sum, in three adds instead of a loop.
inline bool ipv4_checksum_ok(const std::byte* ip, std::uint32_t hlen = 20) noexcept {
    if (hlen == ipv4_min_hdr_len) [[likely]] {
        std::uint64_t a = 0;
        std::uint64_t b = 0;
        std::uint32_t c = 0;
        std::memcpy(&a, ip, 8);
        std::memcpy(&b, ip + 8, 8);
        std::memcpy(&c, ip + 16, 4);
        return csum_fold(csum_add64(csum_add64(a, b), c)) == 0xFFFF;
    }
    return csum_fold(csum_add_native(ip, hlen, 0)) == 0xFFFF;
}

template <typename B>
class basic_ipv4_view : public header_view<B> {
public:
    using header_view<B>::header_view;
    std::uint8_t version() const noexcept { return load_u8(_p) >> 4; }
    std::uint32_t ihl_bytes() const noexcept { return (load_u8(_p) & 0x0Fu) * 4u; }
    std::uint8_t tos() const noexcept { return load_u8(_p + 1); }
    std::uint8_t dscp() const noexcept { return tos() >> 2; }
    std::uint8_t ecn() const noexcept { return tos() & 3u; }
    std::uint16_t total_length() const noexcept { return load_be16(_p + 2); }
    std::uint16_t id() const noexcept { return load_be16(_p + 4); }
    std::uint16_t flags_frag() const noexcept { return load_be16(_p + 6); }
    bool df() const noexcept { return (flags_frag() & ipv4_flag_df) != 0; }
    bool mf() const noexcept { return (flags_frag() & ipv4_flag_mf) != 0; }
    std::uint16_t frag_offset() const noexcept { return flags_frag() & ipv4_frag_offset_mask; }
    std::uint8_t ttl() const noexcept { return load_u8(_p + 8); }
    std::uint8_t protocol() const noexcept { return load_u8(_p + 9); }
    std::uint16_t checksum() const noexcept { return load_be16(_p + 10); }
    std::uint32_t src() const noexcept { return load_be32(_p + 12); }
    std::uint32_t dst() const noexcept { return load_be32(_p + 16); }
    bool checksum_ok() const noexcept { return ipv4_checksum_ok(_p, ihl_bytes()); }

    // Raw setters: they do not touch the checksum (call update_checksum()).
    void set_total_length(std::uint16_t v) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 2, v); }
    void set_id(std::uint16_t v) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 4, v); }
    void set_src(std::uint32_t v) const noexcept requires(!std::is_const_v<B>) { store_be32(_p + 12, v); }
    void set_dst(std::uint32_t v) const noexcept requires(!std::is_const_v<B>) { store_be32(_p + 16, v); }
    void update_checksum() const noexcept requires(!std::is_const_v<B>) {
        store_be16(_p + 10, ipv4_header_checksum(_p, ihl_bytes()));
    }

private:
    using header_view<B>::_p;
};
using ipv4_view = basic_ipv4_view<std::byte>;
using ipv4_cview = basic_ipv4_view<const std::byte>;

// Sets the whole TOS byte and patches the checksum (RFC 1624).
inline void ipv4_set_tos(std::byte* ip, std::uint8_t tos) noexcept {
    const std::uint16_t old_word = load_be16(ip);
    const std::uint16_t new_word = static_cast<std::uint16_t>((old_word & 0xFF00u) | tos);
    if (old_word == new_word) {
        return;
    }
    store_be16(ip, new_word);
    store_be16(ip + 10, csum_update16(load_be16(ip + 10), old_word, new_word));
}

inline void ipv4_set_dscp(std::byte* ip, std::uint8_t dscp) noexcept {
    ipv4_set_tos(ip, static_cast<std::uint8_t>(((dscp & 0x3Fu) << 2) | (load_u8(ip + 1) & 3u)));
}

inline void ipv4_set_ecn(std::byte* ip, std::uint8_t ecn) noexcept {
    ipv4_set_tos(ip, static_cast<std::uint8_t>((load_u8(ip + 1) & 0xFCu) | (ecn & 3u)));
}

// ECN marking as a switch does it: ECT(0)/ECT(1) -> CE. Returns false for a
// Not-ECT packet (left untouched; the caller may drop it instead), true when
// the packet carries CE afterwards.
inline bool ipv4_mark_ce(std::byte* ip) noexcept {
    const std::uint8_t ecn = load_u8(ip + 1) & 3u;
    if (ecn == ecn_not_ect) {
        return false;
    }
    if (ecn != ecn_ce) {
        ipv4_set_ecn(ip, ecn_ce);
    }
    return true;
}

// Decrements TTL with an incremental checksum update and returns the new TTL.
// A TTL already 0 is left unchanged and 0 is returned. The caller drops when
// the result is 0.
//
// The word at offset 8 (TTL, protocol) goes from m to m' = m - 0x0100, so
// RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), has ~m + m' = 0xFEFF whatever m
// is: HC' = ~(~HC + 0xFEFF) = HC + 0x0100 in ones' complement, i.e. 0x0100
// added with its end-around carry, where a sum of exactly 0xFFFF also
// becomes 0x0000 (eqn. 3 never gives 0xFFFF: its ~ is of a non-zero
// folded sum). The router's per-frame path: no read of the old word and
// no fold (checksum_test.cpp compares it with eqn. 3 for every checksum).
inline std::uint8_t ipv4_dec_ttl(std::byte* ip) noexcept {
    const std::uint8_t ttl = load_u8(ip + 8);
    if (ttl == 0) {
        return 0;
    }
    ip[8] = std::byte(ttl - 1);
    const std::uint32_t c = std::uint32_t{load_be16(ip + 10)} + 0x0100u;
    store_be16(ip + 10, static_cast<std::uint16_t>(c + (c >= 0xFFFFu ? 1u : 0u)));
    return static_cast<std::uint8_t>(ttl - 1);
}

// Longer spelling of ipv4_dec_ttl (used by pipelines/switch).
inline std::uint8_t ipv4_decrement_ttl(std::byte* ip) noexcept { return ipv4_dec_ttl(ip); }

// Parameters for write_ipv4().
struct ipv4_hdr_params {
    std::uint32_t src = 0;  // host order
    std::uint32_t dst = 0;
    std::uint8_t tos = 0;
    std::uint8_t ttl = 64;
    std::uint8_t protocol = ip_proto_udp;
    std::uint16_t id = 0;
    bool df = true;
};

// Writes a 20-byte IPv4 header (no options) with the given total length and a
// correct checksum; returns 20.
inline std::uint32_t write_ipv4(std::byte* ip, const ipv4_hdr_params& h, std::uint16_t total_length) noexcept {
    ip[0] = std::byte{0x45};
    ip[1] = std::byte{h.tos};
    store_be16(ip + 2, total_length);
    store_be16(ip + 4, h.id);
    store_be16(ip + 6, h.df ? ipv4_flag_df : 0);
    ip[8] = std::byte{h.ttl};
    ip[9] = std::byte{h.protocol};
    store_be16(ip + 10, 0);
    store_be32(ip + 12, h.src);
    store_be32(ip + 16, h.dst);
    store_be16(ip + 10, ipv4_header_checksum(ip, 20));
    return ipv4_min_hdr_len;
}

constexpr std::uint32_t ipv4_addr(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) noexcept {
    return (std::uint32_t(a) << 24) | (std::uint32_t(b) << 16) | (std::uint32_t(c) << 8) | d;
}

}  // namespace rocelab
