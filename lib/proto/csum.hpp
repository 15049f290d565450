// csum.hpp - the Internet checksum (RFC 1071), once for every header that
// carries one: IPv4 (ipv4.hpp), ICMP, ICMPv6 and UDP over IPv6 (ipv6.hpp,
// with the pseudo-header).
//
// What it does:
//   * csum_add_native: adds bytes to a wide partial sum, 32 bits at a time.
//   * csum_add_bytes: the same for any length, an odd last byte padded with
//     a zero byte (RFC 1071 sec. 4.1).
//   * csum_fold: folds a partial sum to 16 bits (not inverted).
//   * inet_checksum: the value to store (host order; write it with
//     store_be16). Over data whose checksum field is in place it is 0 when
//     that field is right.
//   * csum_update16: RFC 1624 incremental update for one changed 16-bit word.
// Counters: none (pure arithmetic).
//
// Derivations:
//   * Byte-order independence (RFC 1071 sec. 2(B)): the ones' complement sum of
//     16-bit words read little-endian is the byte swap of the sum read
//     big-endian, so we sum native loads and swap once at the end. Summing
//     32-bit words into a 64-bit accumulator and folding (hi + lo, twice) is the
//     same ones' complement sum (RFC 1071 sec. 2(C), "parallel summation").
//     The fold of a non-zero sum is the class's non-zero representative, the
//     same whichever order the words were read in: inet_checksum equals the
//     textbook big-endian computation for every input (tests/unit/proto
//     checksum_test.cpp checks it against one).
//   * RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), with + the ones' complement
//     addition. A fold of a positive integer never yields 0, so the result is
//     the unique non-zero representative of the class, exactly as a full
//     recompute of a header whose word sum is non-zero (every IPv4 header: the
//     version nibble is 4). Hence incremental == full, including the case
//     where the checksum becomes 0x0000; 0xFFFF can never be produced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.hpp"

namespace rocelab {

// Ones' complement fold of a wide accumulator to 16 bits (not inverted):
// 64 -> 32 -> 16 bits, each an add whose carry out is added back in (the
// end-around carry). Each step keeps the value modulo 0xFFFF (2^64 - 1 and
// 2^32 - 1 are multiples of it) and maps a non-zero value to a non-zero one
// that fits (a carry out leaves at most 2^k - 2 before the carry is added),
// so the result is the class's non-zero representative for every non-zero
// sum, as the one-step-at-a-time fold gives (checksum_test.cpp checks it
// against the textbook sum). Two dependent add/adc pairs instead of five
// mask-shift-add steps: the L3 router folds once per frame (header check).
constexpr std::uint16_t csum_fold(std::uint64_t s) noexcept {
    std::uint32_t t = 0;
    const bool c32 = __builtin_add_overflow(static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(s >> 32), &t);
    t += c32 ? 1u : 0u;
    std::uint16_t r = 0;
    const bool c16 = __builtin_add_overflow(static_cast<std::uint16_t>(t), static_cast<std::uint16_t>(t >> 16), &r);
    return static_cast<std::uint16_t>(r + (c16 ? 1u : 0u));
}

// Ones' complement addition of two 64-bit partial sums (end-around carry):
// the result is congruent to a + b modulo 0xFFFF and non-zero when either is.
constexpr std::uint64_t csum_add64(std::uint64_t a, std::uint64_t b) noexcept {
    std::uint64_t s = 0;
    const bool c = __builtin_add_overflow(a, b, &s);
    return s + (c ? 1u : 0u);
}

// Adds n bytes (n even) to a native-order partial sum; fold + bswap16 gives
// the big-endian ones' complement sum.
inline std::uint64_t csum_add_native(const std::byte* p, std::uint32_t n, std::uint64_t sum) noexcept {
    while (n >= 4) {
        std::uint32_t w;
        std::memcpy(&w, p, 4);
        sum += w;
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        std::uint16_t w;
        std::memcpy(&w, p, 2);
        sum += w;
    }
    return sum;
}

// Adds n bytes, n odd or even: an odd last byte is the high byte of a word
// whose low byte is zero (RFC 1071 sec. 4.1).
inline std::uint64_t csum_add_bytes(const std::byte* p, std::uint32_t n, std::uint64_t sum) noexcept {
    sum = csum_add_native(p, n & ~1u, sum);
    if ((n & 1u) != 0) {
        const std::byte last[2] = {p[n - 1], std::byte{0}};
        sum = csum_add_native(last, 2, sum);
    }
    return sum;
}

// The Internet checksum of n bytes after a native partial sum (a
// pseudo-header's, or 0): the value to store, host order.
inline std::uint16_t inet_checksum(const std::byte* p, std::uint32_t n, std::uint64_t sum = 0) noexcept {
    return bswap16(static_cast<std::uint16_t>(~csum_fold(csum_add_bytes(p, n, sum))));
}

// RFC 1624 eqn. 3, all values in host order.
constexpr std::uint16_t csum_update16(std::uint16_t old_csum, std::uint16_t old_word,
                                      std::uint16_t new_word) noexcept {
    const std::uint32_t s = std::uint32_t(static_cast<std::uint16_t>(~old_csum)) +
                            std::uint32_t(static_cast<std::uint16_t>(~old_word)) + new_word;
    return static_cast<std::uint16_t>(~csum_fold(s));
}

}  // namespace rocelab
