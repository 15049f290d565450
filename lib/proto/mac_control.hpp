// mac_control.hpp - MAC Control frames: 802.3x PAUSE and 802.1Qbb PFC.
//
// Both (reference sec. 2.1): DA 01:80:C2:00:00:01, EtherType 0x8808, then a
// 16-bit opcode; 60 bytes without FCS, zero padded.
//   PAUSE (0x0001): offset 16 pause_time (quanta).
//   PFC   (0x0101): offset 16 class-enable vector (high byte 0, bit n =
//         priority n), offsets 18..33 time[0..7] (quanta, priority 0 first).
// A quantum is 512 bit times at the link rate. time = 0 means XON.
// Builders write the 60-byte frame into a caller buffer and return 60; the
// NIC appends the FCS (eth_fcs() in crc32.hpp computes it for tests/pcaps).
// Counters: none.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.hpp"
#include "proto/eth.hpp"
#include "proto/header_view.hpp"

namespace rocelab {

inline constexpr mac_addr mac_control_dst{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
inline constexpr std::uint16_t mac_control_op_pause = 0x0001;
inline constexpr std::uint16_t mac_control_op_pfc = 0x0101;
inline constexpr std::uint32_t pause_body_len = 4;  // opcode + pause_time
inline constexpr std::uint32_t pfc_body_len = 20;   // opcode + class-enable + 8 times
inline constexpr std::uint32_t mac_control_frame_len = eth_min_frame_len;
inline constexpr std::uint32_t pfc_num_priorities = 8;

// View over the MAC Control body (starts at the opcode, right after the
// EtherType). The caller checks the length (the parser does).
class mac_control_cview : public header_view<const std::byte> {
public:
    using header_view::header_view;
    std::uint16_t opcode() const noexcept { return load_be16(_p); }
    // PAUSE
    std::uint16_t pause_time() const noexcept { return load_be16(_p + 2); }
    // PFC
    std::uint8_t class_enable() const noexcept { return load_u8(_p + 3); }
    std::uint16_t pfc_time(unsigned prio) const noexcept { return load_be16(_p + 4 + 2 * (prio & 7u)); }
    std::array<std::uint16_t, 8> pfc_times() const noexcept {
        std::array<std::uint16_t, 8> t{};
        for (unsigned i = 0; i < 8; ++i) {
            t[i] = pfc_time(i);
        }
        return t;
    }
};

// 802.1Qbb PFC frame; returns 60.
inline std::uint32_t build_pfc(std::byte* out, const mac_addr& src, std::uint8_t class_enable,
                               const std::array<std::uint16_t, 8>& quanta) noexcept {
    std::memset(out, 0, mac_control_frame_len);
    write_eth(out, mac_control_dst, src, ethertype_mac_control);
    store_be16(out + 14, mac_control_op_pfc);
    store_be16(out + 16, class_enable);
    for (unsigned i = 0; i < 8; ++i) {
        store_be16(out + 18 + 2 * i, quanta[i]);
    }
    return mac_control_frame_len;
}

// 802.3x PAUSE frame; returns 60.
inline std::uint32_t build_pause(std::byte* out, const mac_addr& src, std::uint16_t quanta) noexcept {
    std::memset(out, 0, mac_control_frame_len);
    write_eth(out, mac_control_dst, src, ethertype_mac_control);
    store_be16(out + 14, mac_control_op_pause);
    store_be16(out + 16, quanta);
    return mac_control_frame_len;
}

}  // namespace rocelab
