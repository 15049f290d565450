// psn.hpp - 24-bit circular packet sequence number arithmetic (RoCE BTH.PSN).
//
// psn_diff(a, b) is the signed distance a - b in [-2^23, 2^23): the 24-bit
// difference is shifted into the top of a 32-bit word and shifted back
// arithmetically, which sign-extends bit 23 (the same trick rxe uses). So
// psn_diff(0, 0xFFFFFF) == 1 and psn_diff(0xFFFFFF, 0) == -1. With an expected
// PSN e, a packet p is "ahead" when psn_diff(p, e) > 0 and a duplicate when
// psn_diff(p, e) < 0 (windows of 2^23 each). Counters: none.
#pragma once

#include <cstdint>

namespace rocelab {

inline constexpr std::uint32_t psn_mask = 0x00FFFFFFu;
inline constexpr std::uint32_t psn_modulus = 0x01000000u;

constexpr std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) noexcept { return (psn + n) & psn_mask; }
constexpr std::uint32_t psn_sub(std::uint32_t psn, std::uint32_t n) noexcept { return (psn - n) & psn_mask; }
constexpr std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) noexcept {
    return static_cast<std::int32_t>((a - b) << 8) >> 8;
}
constexpr bool psn_lt(std::uint32_t a, std::uint32_t b) noexcept { return psn_diff(a, b) < 0; }
constexpr bool psn_le(std::uint32_t a, std::uint32_t b) noexcept { return psn_diff(a, b) <= 0; }
constexpr bool psn_gt(std::uint32_t a, std::uint32_t b) noexcept { return psn_diff(a, b) > 0; }
constexpr bool psn_ge(std::uint32_t a, std::uint32_t b) noexcept { return psn_diff(a, b) >= 0; }

static_assert(psn_diff(0, 0xFFFFFF) == 1);
static_assert(psn_diff(0xFFFFFF, 0) == -1);
static_assert(psn_diff(0x800000, 0) == -0x800000);
static_assert(psn_add(0xFFFFFF, 2) == 1);

}  // namespace rocelab
