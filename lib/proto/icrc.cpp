// icrc.cpp - RoCEv2 ICRC; see icrc.hpp.
#include "proto/icrc.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#ifdef __SSSE3__
#include <immintrin.h>
#endif

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

#ifdef __SSSE3__
// The small path's blocks built in registers. Writing the headers into the
// scratch buffer byte by byte (memcpy at an offset, then mask_headers'
// single-byte stores) and reading them back as 16-byte blocks stalls each
// block's first load until those stores have left the store buffer (no
// store-to-load forwarding from several smaller stores): a third of the
// CRC engine's time on ACKs and header ICRCs. Here each block is one
// unaligned 16-byte load of the datagram, ORed with the ICRC's masks, and
// stored whole, so the engine's load is forwarded from one store.
//
// Masks (ones where the ICRC does not cover a field, as mask_headers) for a
// datagram starting `ahead` bytes into the first block: IPv4 with a 20-byte
// header (TOS, TTL, header checksum), or IPv6 (traffic class, flow label,
// hop limit); then the UDP checksum and BTH resv8a.
constexpr std::uint32_t small_len = 128;
struct small_masks {
    alignas(16) std::array<std::array<std::array<std::uint8_t, small_len>, 16>, 2> m{};  // [ipv6][ahead]
    alignas(16) std::array<std::array<std::uint8_t, 16>, 16> shuf{};  // [ahead]: byte j from j - ahead, 0 before
};
constexpr small_masks make_small_masks() noexcept {
    small_masks t{};
    for (unsigned v6 = 0; v6 < 2; ++v6) {
        const std::uint32_t ip_hlen = v6 != 0 ? 40 : 20;
        for (unsigned a = 0; a < 16; ++a) {
            auto& m = t.m[v6][a];
            const auto put = [&](std::uint32_t pos, std::uint8_t v) {
                if (a + pos < small_len) { m[a + pos] = static_cast<std::uint8_t>(m[a + pos] | v); }
            };
            if (v6 != 0) {
                put(0, 0x0F);
                put(1, 0xFF);
                put(2, 0xFF);
                put(3, 0xFF);
                put(7, 0xFF);
            } else {
                put(1, 0xFF);
                put(8, 0xFF);
                put(10, 0xFF);
                put(11, 0xFF);
            }
            put(ip_hlen + 6, 0xFF);
            put(ip_hlen + 7, 0xFF);
            put(ip_hlen + 8 + 4, 0xFF);
        }
    }
    for (unsigned a = 0; a < 16; ++a) {
        for (unsigned j = 0; j < 16; ++j) { t.shuf[a][j] = static_cast<std::uint8_t>(j < a ? 0x80 : j - a); }
    }
    return t;
}
constexpr small_masks masks_small = make_small_masks();

// len in [16, 128], IPv6 or a 20-byte IPv4 header: the masked datagram, with
// `ahead` zeros in front, into s as whole 16-byte blocks (s 16-aligned).
inline void small_blocks(const std::byte* l3, std::uint32_t len, bool ipv6, std::uint32_t ahead,
                         std::byte* s) noexcept {
    const std::uint8_t* mk = masks_small.m[ipv6 ? 1 : 0][ahead].data();
    const __m128i first = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l3)),
                                           _mm_load_si128(reinterpret_cast<const __m128i*>(masks_small.shuf[ahead].data())));
    _mm_store_si128(reinterpret_cast<__m128i*>(s),
                    _mm_or_si128(first, _mm_load_si128(reinterpret_cast<const __m128i*>(mk))));
    const std::uint32_t blocks = (ahead + len) / 16;
    for (std::uint32_t i = 1; i < blocks; ++i) {
        // Bytes l3[16 i - ahead, 16 i - ahead + 16): inside the datagram (i >= 1, ahead < 16).
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(l3 + 16 * i - ahead));
        _mm_store_si128(reinterpret_cast<__m128i*>(s + 16 * i),
                        _mm_or_si128(x, _mm_load_si128(reinterpret_cast<const __m128i*>(mk + 16 * i))));
    }
}
#endif

}  // namespace

std::uint32_t roce_icrc(const std::byte* l3, std::uint32_t len, bool ipv6) noexcept {
    // Small packets (ACKs, CNPs, 64 B-class data) are copied whole so the CRC
    // runs once over one buffer; larger ones hash the masked headers from the
    // scratch buffer and the payload in place.
    // Zeros in front (seed_ahead) make the string whole 16-byte blocks.
    constexpr std::uint32_t small = 128;
    alignas(16) std::byte scratch[small + 16];
    static_assert(small >= max_masked);
    if (len <= small) {
        const std::uint32_t ahead = (16 - len % 16) % 16;
#ifdef __SSSE3__
        static_assert(small == small_len);
        if (len >= 16 && (ipv6 || ip_hlen_of(l3, len, false) == 20)) {
            small_blocks(l3, len, ipv6, ahead, scratch);
            return ~crc32_raw(seed_ahead[ahead], scratch, ahead + len);
        }
#endif
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
