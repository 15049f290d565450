// udp.hpp - UDP header view and writer.
//
// Layout: source port (2), destination port (2), length (2, header included),
// checksum (2). RoCEv2 uses destination port 4791 and sends checksum 0
// (and the ICRC masks it). Counters: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/endian.hpp"
#include "proto/header_view.hpp"

namespace rocelab {

inline constexpr std::uint32_t udp_hdr_len = 8;
inline constexpr std::uint16_t udp_port_roce_v2 = 4791;

template <typename B>
class basic_udp_view : public header_view<B> {
public:
    using header_view<B>::header_view;
    std::uint16_t sport() const noexcept { return load_be16(_p); }
    std::uint16_t dport() const noexcept { return load_be16(_p + 2); }
    std::uint16_t length() const noexcept { return load_be16(_p + 4); }
    std::uint16_t checksum() const noexcept { return load_be16(_p + 6); }

    void set_sport(std::uint16_t v) const noexcept requires(!std::is_const_v<B>) { store_be16(_p, v); }
    void set_dport(std::uint16_t v) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 2, v); }
    void set_length(std::uint16_t v) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 4, v); }
    void set_checksum(std::uint16_t v) const noexcept requires(!std::is_const_v<B>) { store_be16(_p + 6, v); }

private:
    using header_view<B>::_p;
};
using udp_view = basic_udp_view<std::byte>;
using udp_cview = basic_udp_view<const std::byte>;

// Writes the header with checksum 0; returns 8.
inline std::uint32_t write_udp(std::byte* p, std::uint16_t sport, std::uint16_t dport, std::uint16_t length) noexcept {
    store_be16(p, sport);
    store_be16(p + 2, dport);
    store_be16(p + 4, length);
    store_be16(p + 6, 0);
    return udp_hdr_len;
}

}  // namespace rocelab
