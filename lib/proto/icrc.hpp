// icrc.hpp - RoCEv2 Invariant CRC (reference sec. 1.5).
//
// ICRC = CRC-32(0xFF x 8 || masked IP/UDP/BTH headers || rest of the packet up
// to the ICRC), where the masked bytes are replaced by 0xFF:
//   IPv4: TOS, TTL, header checksum.  IPv6: traffic class + flow label (bytes
//   0..3 become 0x6F FF FF FF) and hop limit.  UDP: checksum.  BTH: byte 4
//   (FECN, BECN, reserved).
// The 8-byte 0xFF prefix is folded into a constant starting register (the CRC
// state after eight 0xFF bytes, 0xDEBB20E3, checked at compile time). A
// datagram up to 128 bytes (an ACK, a CNP, a data frame's headers) is copied
// whole into a stack scratch buffer behind k = (16 - len % 16) % 16 zero
// bytes, masked, and hashed from the register that k zeros turn into that
// constant, so the folding engine sees whole 16-byte blocks and leaves no
// tail. A longer one has its headers copied and masked, padded with payload
// bytes to a whole block, and the CRC runs on from them into the payload in
// place (crc32_raw2). Nothing allocates.
//
// `l3` points at the first byte of the IP header; lengths are counted from
// there. icrc_store() writes the value LSB first, as on the wire.
// roce_icrc_with_payload_crc() lets a generator compute the payload CRC once
// and reuse it for every packet carrying the same payload (crc32_combine).
// Counters: none.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proto/crc32.hpp"

namespace rocelab {

// ICRC over l3[0 .. l3_len_excluding_icrc). Requires at least the IP+UDP+BTH
// headers to be present; shorter input is hashed without the missing masks.
std::uint32_t roce_icrc(const std::byte* l3, std::uint32_t l3_len_excluding_icrc, bool ipv6) noexcept;

// True when the 4 bytes after l3_len_including_icrc - 4 hold the right ICRC.
bool roce_icrc_verify(const std::byte* l3, std::uint32_t l3_len_including_icrc, bool ipv6) noexcept;

// ICRC from the headers l3[0 .. hdr_len) (IP..end of extended headers) plus a
// precomputed payload_crc = crc32(0, payload_with_pad, payload_len).
std::uint32_t roce_icrc_with_payload_crc(const std::byte* l3, std::uint32_t hdr_len, bool ipv6,
                                         std::uint32_t payload_crc, std::uint32_t payload_len) noexcept;

// Same with combine_op = crc32_combine_gen(payload_len) precomputed.
std::uint32_t roce_icrc_with_payload_crc_op(const std::byte* l3, std::uint32_t hdr_len, bool ipv6,
                                            std::uint32_t payload_crc, std::uint32_t combine_op) noexcept;

inline void icrc_store(std::byte* dst, std::uint32_t icrc) noexcept { crc_store_le(dst, icrc); }
inline std::uint32_t icrc_load(const std::byte* src) noexcept { return crc_load_le(src); }

}  // namespace rocelab
