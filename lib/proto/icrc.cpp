// icrc.cpp - RoCEv2 ICRC; see icrc.hpp.
#include "proto/icrc.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/endian.hpp"

namespace rocelab {

namespace {

// CRC register after eight 0xFF bytes from the 0xFFFFFFFF initial value.
constexpr std::uint32_t prefix_state() noexcept {
    std::uint32_t s = 0xFFFFFFFFu;
    for (int i = 0; i < 8; ++i) {
        s = crc32_byte_step(s, 0xFF);
    }
    return s;
}
constexpr std::uint32_t icrc_seed = prefix_state();
static_assert(icrc_seed == 0xDEBB20E3u, "reference sec. 1.5 step 2");

constexpr std::uint32_t max_masked = 60 + 8 + 12;

// The register before k zero bytes that leaves `after` behind them: one
// reflected byte step, s' = (s >> 8) ^ T[s & 0xFF] with a zero byte, undone
// k times (the table's top bytes are all different, so the top byte of s'
// names the index).
constexpr std::uint32_t before_zeros(std::uint32_t after, unsigned k) noexcept {
    std::uint32_t s = after;
    for (unsigned n = 0; n < k; ++n) {
        std::uint32_t b = 0;
        while ((crc32_table_entry(b) >> 24) != (s >> 24)) {
            ++b;
        }
        s = ((s ^ crc32_table_entry(b)) << 8) | b;
    }
    return s;
}
// seed_ahead[k]: the register that k zero bytes turn into icrc_seed. A short
// string is hashed with k = (16 - len % 16) % 16 zeros in front, so the
// folding engine sees whole 16-byte blocks and no tail is left to the table.
constexpr std::array<std::uint32_t, 16> make_seed_ahead() noexcept {
    std::array<std::uint32_t, 16> t{};
    for (unsigned k = 0; k < 16; ++k) {
        t[k] = before_zeros(icrc_seed, k);
    }
    return t;
}
constexpr std::array<std::uint32_t, 16> seed_ahead = make_seed_ahead();

inline void set_ff(std::byte* s, std::uint32_t off, std::uint32_t n) noexcept {
    if (off + 1 <= n) {
        s[off] = std::byte{0xFF};
    }
}

std::uint32_t ip_hlen_of(const std::byte* l3, std::uint32_t len, bool ipv6) noexcept {
    return ipv6 ? 40 : std::max<std::uint32_t>(20, (len > 0 ? (load_u8(l3) & 0x0Fu) : 5u) * 4u);
}

// Masks, in s (a copy of the datagram's first n bytes, n <= its headers),
// the fields the ICRC does not cover.
void mask_headers(std::byte* s, std::uint32_t n, bool ipv6, std::uint32_t ip_hlen) noexcept {
    if (ipv6) {
        if (n > 0) {
            s[0] = std::byte(load_u8(s) | 0x0Fu);
        }
        set_ff(s, 1, n);
        set_ff(s, 2, n);
        set_ff(s, 3, n);
        set_ff(s, 7, n);
    } else {
        set_ff(s, 1, n);
        set_ff(s, 8, n);
        set_ff(s, 10, n);
        set_ff(s, 11, n);
    }
    set_ff(s, ip_hlen + 6, n);
    set_ff(s, ip_hlen + 7, n);
    set_ff(s, ip_hlen + 8 + 4, n);
}

// Copies and masks the IP/UDP/BTH headers; returns the number of bytes in scratch.
std::uint32_t masked_headers(const std::byte* l3, std::uint32_t len, bool ipv6, std::byte* s) noexcept {
    const std::uint32_t ip_hlen = ip_hlen_of(l3, len, ipv6);
    const std::uint32_t n = std::min(len, ip_hlen + 8 + 12);
    std::memcpy(s, l3, n);
    mask_headers(s, n, ipv6, ip_hlen);
    return n;
}

}  // namespace

std::uint32_t roce_icrc(const std::byte* l3, std::uint32_t len, bool ipv6) noexcept {
    // Small packets (ACKs, CNPs, 64 B-class data) are copied whole so the CRC
    // runs once over one buffer; larger ones hash the masked headers from the
    // scratch buffer and the payload in place.
    // Zeros in front (seed_ahead) make the string whole 16-byte blocks.
    constexpr std::uint32_t small = 128;
    std::byte scratch[small + 16];
    static_assert(small >= max_masked);
    if (len <= small) {
        const std::uint32_t ahead = (16 - len % 16) % 16;
        std::memset(scratch, 0, 16);
        std::memcpy(scratch + ahead, l3, len);
        const std::uint32_t ip_hlen = ip_hlen_of(l3, len, ipv6);
        mask_headers(scratch + ahead, std::min(len, ip_hlen + 8 + 12), ipv6, ip_hlen);
        return ~crc32_raw(seed_ahead[ahead], scratch, ahead + len);
    }
    // The masked headers and the payload bytes up to the next multiple of
    // 16 (len > 128 >= that), so the CRC runs on from scratch into the
    // payload in place as one string (crc32_raw2: one final reduction).
    const std::uint32_t n = masked_headers(l3, len, ipv6, scratch);
    const std::uint32_t nh = (n + 15) & ~15u;
    std::memcpy(scratch + n, l3 + n, nh - n);
    return ~crc32_raw2(icrc_seed, scratch, nh, l3 + nh, len - nh);
}

bool roce_icrc_verify(const std::byte* l3, std::uint32_t len, bool ipv6) noexcept {
    if (len < 4) {
        return false;
    }
    return roce_icrc(l3, len - 4, ipv6) == icrc_load(l3 + len - 4);
}

std::uint32_t roce_icrc_with_payload_crc(const std::byte* l3, std::uint32_t hdr_len, bool ipv6,
                                         std::uint32_t payload_crc, std::uint32_t payload_len) noexcept {
    return crc32_combine(roce_icrc(l3, hdr_len, ipv6), payload_crc, payload_len);
}

std::uint32_t roce_icrc_with_payload_crc_op(const std::byte* l3, std::uint32_t hdr_len, bool ipv6,
                                            std::uint32_t payload_crc, std::uint32_t combine_op) noexcept {
    return crc32_combine_op(roce_icrc(l3, hdr_len, ipv6), payload_crc, combine_op);
}

}  // namespace rocelab
