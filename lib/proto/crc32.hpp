// crc32.hpp - CRC-32 (IEEE 802.3), as used by the Ethernet FCS and the RoCE ICRC.
//
// CRC definition: polynomial 0x04C11DB7 (reflected 0xEDB88320), initial value
// 0xFFFFFFFF, reflected in/out, final XOR 0xFFFFFFFF: bit-identical to zlib's
// crc32(). crc32(crc, p, n) chains like zlib: crc32(crc32(0, a), b) = CRC(a||b).
//
// Two engines, same results:
//   * slicing-by-8 tables (8 KiB, built at compile time): portable fallback and
//     used for short buffers (< 32 bytes) and tails;
//   * PCLMULQDQ folding (x86-64): the running 128-bit remainder R is replaced by
//     R_lo * K(T+32) xor R_hi * K(T-32), congruent to R * x^T mod P and aligned T
//     bits further on; K(e) = reflect32(x^e mod P) << 1. The "<< 1" and the
//     +-32 offsets come from carry-less multiplication of bit-reflected
//     operands: a 64 x 33 bit reflected product lands one bit low, so the
//     constant is stored with bound 33, which turns x^(T+64) into x^(T+32) for
//     the low qword and x^T into x^(T-32) for the high one. From 64 bytes we
//     fold 4 lanes by T = 512 bits; from 256 bytes, where the CPU has
//     VPCLMULQDQ and AVX-512, 8 lanes in two 512-bit registers by T = 1024
//     bits, merged into 4 (T = 512). The last lanes and whole blocks (up to
//     7) are merged by folding each once, straight to the last block's place
//     (T = 128 j), side by side rather than one after another. The final
//     16-byte remainder R is reduced without tables (CRC of R from state 0
//     == CRC of everything so far): folded to 96 and 64 bits by x^96 and
//     x^64 mod P, then a Barrett reduction by mu = floor(x^64 / P); the
//     tail (under 16 bytes) goes to the table engine.
//     All constants are computed by constexpr code in crc32.cpp.
//   Selected at compile time when the compiler targets PCLMUL+SSE4.1
//   (-march=native on any recent x86), otherwise by a runtime CPUID check.
//
// crc32_combine(crc1, crc2, len2) = CRC(A||B) from CRC(A), CRC(B), |B|:
//   CRC(A||B) = CRC(A) * x^(8*len2) mod P  xor  CRC(B)  (the init/final XORs
//   cancel for equal-length B), computed by square-and-multiply over
//   x^(2^k) mod P, O(log len2) polynomial products.
// Counters: none.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/endian.hpp"

namespace rocelab {

// zlib-compatible CRC-32 (best engine available).
std::uint32_t crc32(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept;
// Same, table engine only (reference for tests and benchmarks).
std::uint32_t crc32_portable(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept;
// Raw register update: no pre/post inversion. crc32(c, ...) == ~crc32_raw(~c, ...).
std::uint32_t crc32_raw(std::uint32_t reg, const std::byte* p, std::size_t n) noexcept;
// Same over head[0..nh) then p[0..n), as one string: with nh a multiple of
// 16 the folding engines run on from head into p (one final reduction).
std::uint32_t crc32_raw2(std::uint32_t reg, const std::byte* head, std::size_t nh, const std::byte* p,
                         std::size_t n) noexcept;
// CRC of A||B given crc1 = CRC(A), crc2 = CRC(B), len2 = |B|.
std::uint32_t crc32_combine(std::uint32_t crc1, std::uint32_t crc2, std::uint64_t len2) noexcept;
// Same with the length-dependent factor x^(8*len2) mod P precomputed once
// (for a generator that reuses one payload length): op = crc32_combine_gen(len2).
std::uint32_t crc32_combine_gen(std::uint64_t len2) noexcept;
std::uint32_t crc32_combine_op(std::uint32_t crc1, std::uint32_t crc2, std::uint32_t op) noexcept;
// True when crc32() uses the PCLMULQDQ engine on this machine.
bool crc32_accelerated() noexcept;

// Ethernet FCS of a frame (without FCS): the value whose bytes go on the wire
// least-significant first (crc_store_le).
inline std::uint32_t eth_fcs(const std::byte* frame, std::size_t len) noexcept { return crc32(0, frame, len); }

// Stores / loads a CRC value LSB first (FCS and ICRC wire order).
inline void crc_store_le(std::byte* dst, std::uint32_t v) noexcept {
    dst[0] = std::byte(v);
    dst[1] = std::byte(v >> 8);
    dst[2] = std::byte(v >> 16);
    dst[3] = std::byte(v >> 24);
}
inline std::uint32_t crc_load_le(const std::byte* src) noexcept {
    return std::uint32_t(load_u8(src)) | (std::uint32_t(load_u8(src + 1)) << 8) |
           (std::uint32_t(load_u8(src + 2)) << 16) | (std::uint32_t(load_u8(src + 3)) << 24);
}

// One byte through the reflected CRC-32 register, bit by bit (what the
// tables hold; for constant expressions: the data path uses the engines).
// crc32_table_entry(i) is table 0's entry i: the register 0 after byte i.
inline constexpr std::uint32_t crc32_poly_reflected = 0xEDB88320u;
constexpr std::uint32_t crc32_byte_step(std::uint32_t reg, std::uint8_t byte) noexcept {
    reg ^= byte;
    for (int k = 0; k < 8; ++k) {
        reg = (reg & 1u) ? (reg >> 1) ^ crc32_poly_reflected : reg >> 1;
    }
    return reg;
}
constexpr std::uint32_t crc32_table_entry(std::uint32_t i) noexcept {
    return crc32_byte_step(0, static_cast<std::uint8_t>(i));
}

// CRC-32 residue: crc32(0, data || crc32(0, data) stored LSB first) is this
// constant for every message (reference sec. 1.5 step 7).
inline constexpr std::uint32_t crc32_residue = 0x2144DF1C;

}  // namespace rocelab
