// ack_template.hpp - an RC ACK/NAK over IPv4 from a template: the reply a
// responder sends per data packet, where only the PSN, the AETH syndrome and
// the MSN change.
//
// What: build_roce_v4 writes every field of a reply and runs the ICRC over
// the 44 bytes it covers (IPv4 .. AETH). A responder's replies to one QP
// differ in 7 of those bytes: BTH PSN (3), AETH syndrome (1) and MSN (3).
// init() builds the reply once with the three at 0; write() copies it,
// stores the 7 bytes and gives the ICRC as the template's xor each byte's
// contribution. The CRC is affine over a fixed length, so a byte at distance
// d from the end of the covered string contributes the CRC of itself
// followed by d - 1 zero bytes, xor the CRC of d zero bytes. Those
// distances (7..1) are the same for every ACK, tagged or not, so one set of
// tables (7 x 256 words, built once on the control path) serves every QP.
// Nothing else in the frame depends on the three fields: the IPv4 id,
// checksum and lengths are fixed, the UDP checksum is 0.
// Not for IPv6: its UDP checksum covers the ICRC (build_roce_v6 there).
// Inputs: roce_v4_params of the reply (opcode ACKNOWLEDGE, no payload);
// per reply the PSN, syndrome and MSN. Outputs: the frame, the same bytes as
// build_roce_v4 with those fields. Counters: none. write() never allocates.
//
// Example:
//   ack_template_v4 t;
//   if (t.init(reply_params)) { len = t.write(buf, psn, syndrome, msn); }  // buf: room bytes at least
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "proto/build.hpp"

namespace rocelab {

class ack_template_v4 {
public:
    // The bytes write() stores (the frame, then whatever the copy's fixed
    // size carries past it): the caller's buffer holds at least this many.
    static constexpr std::uint32_t room = 72;

    // Builds the template from p (its PSN, syndrome and MSN are ignored).
    // False, and write() must not be called, when p is not a reply this
    // template can stand for: opcode other than ACKNOWLEDGE, a payload, or
    // a frame that build_roce_v4 would pad.
    bool init(const roce_v4_params& p) noexcept;
    bool ready() const noexcept { return _len != 0; }
    std::uint32_t len() const noexcept { return _len; }

    // The reply with these fields into out (room bytes); returns its length.
    std::uint32_t write(std::byte* out, std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn) const noexcept {
        std::memcpy(out, _frame.data(), room);  // fixed size: a few moves, no call
        std::byte* b = out + _bth;
        b[9] = std::byte(psn >> 16);
        b[10] = std::byte(psn >> 8);
        b[11] = std::byte(psn);
        b[12] = std::byte(syndrome);
        b[13] = std::byte(msn >> 16);
        b[14] = std::byte(msn >> 8);
        b[15] = std::byte(msn);
        const tables& t = *_t;
        const std::uint32_t icrc = _icrc0 ^ t[0][(psn >> 16) & 0xFF] ^ t[1][(psn >> 8) & 0xFF] ^ t[2][psn & 0xFF] ^
                                   t[3][syndrome] ^ t[4][(msn >> 16) & 0xFF] ^ t[5][(msn >> 8) & 0xFF] ^
                                   t[6][msn & 0xFF];
        const std::uint32_t at = _len - 4;  // ICRC, least significant byte first
        out[at] = std::byte(icrc);
        out[at + 1] = std::byte(icrc >> 8);
        out[at + 2] = std::byte(icrc >> 16);
        out[at + 3] = std::byte(icrc >> 24);
        return _len;
    }

private:
    using tables = std::array<std::array<std::uint32_t, 256>, 7>;
    static const tables& shared_tables() noexcept;

    alignas(8) std::array<std::byte, room> _frame{};
    const tables* _t = nullptr;
    std::uint32_t _icrc0 = 0;
    std::uint32_t _len = 0;  // 0: not initialised
    std::uint32_t _bth = 0;  // BTH offset in the frame
};

}  // namespace rocelab
