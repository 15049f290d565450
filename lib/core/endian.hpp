// endian.hpp - big-endian field types and unaligned loads/stores for wire formats.
//
// be16/be32 hold a value in network byte order; .get() converts to host order.
// load_be*/store_be* read and write big-endian integers at any alignment from
// a std::byte pointer (memcpy-based, compiles to a single mov+bswap).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rocelab {

constexpr std::uint16_t bswap16(std::uint16_t x) noexcept { return static_cast<std::uint16_t>((x >> 8) | (x << 8)); }
constexpr std::uint32_t bswap32(std::uint32_t x) noexcept { return __builtin_bswap32(x); }
constexpr std::uint64_t bswap64(std::uint64_t x) noexcept { return __builtin_bswap64(x); }

static_assert(std::endian::native == std::endian::little, "rocelab assumes a little-endian host");

inline std::uint16_t load_be16(const std::byte* p) noexcept { std::uint16_t x; std::memcpy(&x, p, 2); return bswap16(x); }
inline std::uint32_t load_be24(const std::byte* p) noexcept {
    return (std::uint32_t(std::to_integer<std::uint8_t>(p[0])) << 16) |
           (std::uint32_t(std::to_integer<std::uint8_t>(p[1])) << 8) | std::to_integer<std::uint8_t>(p[2]);
}
inline std::uint32_t load_be32(const std::byte* p) noexcept { std::uint32_t x; std::memcpy(&x, p, 4); return bswap32(x); }
inline std::uint64_t load_be64(const std::byte* p) noexcept { std::uint64_t x; std::memcpy(&x, p, 8); return bswap64(x); }
inline void store_be16(std::byte* p, std::uint16_t v) noexcept { v = bswap16(v); std::memcpy(p, &v, 2); }
inline void store_be24(std::byte* p, std::uint32_t v) noexcept {
    p[0] = std::byte(v >> 16); p[1] = std::byte(v >> 8); p[2] = std::byte(v);
}
inline void store_be32(std::byte* p, std::uint32_t v) noexcept { v = bswap32(v); std::memcpy(p, &v, 4); }
inline void store_be64(std::byte* p, std::uint64_t v) noexcept { v = bswap64(v); std::memcpy(p, &v, 8); }
inline std::uint8_t load_u8(const std::byte* p) noexcept { return std::to_integer<std::uint8_t>(*p); }

struct be16 {
    std::uint16_t raw = 0;
    static constexpr be16 from_host(std::uint16_t h) noexcept { return be16{bswap16(h)}; }
    constexpr std::uint16_t get() const noexcept { return bswap16(raw); }
    constexpr bool operator==(const be16&) const noexcept = default;
};
struct be32 {
    std::uint32_t raw = 0;
    static constexpr be32 from_host(std::uint32_t h) noexcept { return be32{bswap32(h)}; }
    constexpr std::uint32_t get() const noexcept { return bswap32(raw); }
    constexpr bool operator==(const be32&) const noexcept = default;
};

}  // namespace rocelab
