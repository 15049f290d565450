// icrc_zlib.hpp - an independent RoCEv2 ICRC and IPv4 header-checksum check
// for tests, written from ROCE_REFERENCE.md 1.5 and RFC 791 with zlib's
// crc32() and a plain 16-bit ones' complement sum. It shares no code with
// lib/proto (icrc.cpp, crc32.cpp, ipv4.hpp), so a test that uses it checks
// the code under test against something it did not write. Tests that need an
// outside ICRC oracle include this header rather than writing another.
#pragma once

#include <zlib.h>
// With 64-bit file offsets zlib.h renames its combine functions by macro
// (crc32_combine_gen -> crc32_combine_gen64, ...), which would rename
// rocelab's functions of the same names in any test compiled after this
// header (unity builds put several tests in one unit). Only crc32() is used.
#undef crc32_combine
#undef crc32_combine_gen
#undef adler32_combine

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocelab::test {

// Offsets found by walking Ethernet and any number of 0x8100/0x88A8 tags.
struct ref_l3 {
    std::size_t ip = 0;  // first byte of the IP header
    bool v6 = false;
    bool ok = false;     // IPv4 or IPv6 found and the whole datagram is in the frame
    std::size_t datagram_len = 0;  // IPv4 total length / 40 + IPv6 payload length
};

inline unsigned ref_be16(const std::byte* p) {
    return (std::to_integer<unsigned>(p[0]) << 8) | std::to_integer<unsigned>(p[1]);
}

inline ref_l3 ref_find_l3(const std::byte* f, std::size_t len) {
    ref_l3 r;
    std::size_t off = 12;
    if (len < 14) {
        return r;
    }
    while (ref_be16(f + off) == 0x8100 || ref_be16(f + off) == 0x88A8) {
        off += 4;
        if (off + 2 > len) {
            return r;
        }
    }
    const unsigned type = ref_be16(f + off);
    r.ip = off + 2;
    if (type == 0x0800 && r.ip + 20 <= len) {
        r.datagram_len = ref_be16(f + r.ip + 2);
    } else if (type == 0x86DD && r.ip + 40 <= len) {
        r.v6 = true;
        r.datagram_len = 40 + ref_be16(f + r.ip + 4);
    } else {
        return r;
    }
    r.ok = r.ip + r.datagram_len <= len;
    return r;
}

// RFC 791: the 16-bit ones' complement sum of the header words, checksum
// included, is 0xFFFF.
inline bool ref_ipv4_checksum_ok(const std::byte* ip) {
    const std::size_t hlen = (std::to_integer<unsigned>(ip[0]) & 0x0Fu) * 4u;
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < hlen; i += 2) {
        sum += ref_be16(ip + i);
    }
    while (sum > 0xFFFF) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return sum == 0xFFFF;
}

// Reference 1.5: CRC-32 (zlib) of 8 x 0xFF || the IP datagram up to the ICRC
// with TOS/TTL/IPv4 checksum (IPv6: bytes 0..3 -> 6F FF FF FF, hop limit),
// the UDP checksum and BTH byte 4 replaced by all-ones; the ICRC is the last
// 4 bytes of the datagram, least-significant byte first.
inline std::uint32_t ref_icrc(const std::byte* f, const ref_l3& l3) {
    std::vector<unsigned char> b(8, 0xFF);
    const std::byte* ip = f + l3.ip;
    for (std::size_t i = 0; i + 4 < l3.datagram_len; ++i) {
        b.push_back(std::to_integer<unsigned char>(ip[i]));
    }
    unsigned char* h = b.data() + 8;
    std::size_t udp = 0;
    if (l3.v6) {
        h[0] = 0x6F;
        h[1] = h[2] = h[3] = 0xFF;
        h[7] = 0xFF;
        udp = 40;
    } else {
        h[1] = 0xFF;
        h[8] = 0xFF;
        h[10] = h[11] = 0xFF;
        udp = (h[0] & 0x0Fu) * 4u;
    }
    h[udp + 6] = h[udp + 7] = 0xFF;
    h[udp + 8 + 4] = 0xFF;
    return static_cast<std::uint32_t>(::crc32(0L, b.data(), static_cast<uInt>(b.size())));
}

inline std::uint32_t ref_wire_icrc(const std::byte* f, const ref_l3& l3) {
    const std::byte* t = f + l3.ip + l3.datagram_len - 4;
    return std::to_integer<std::uint32_t>(t[0]) | (std::to_integer<std::uint32_t>(t[1]) << 8) |
           (std::to_integer<std::uint32_t>(t[2]) << 16) | (std::to_integer<std::uint32_t>(t[3]) << 24);
}

// True when the frame is a whole IP datagram whose ICRC verifies.
inline bool ref_icrc_ok(const std::byte* f, std::size_t len) {
    const ref_l3 l3 = ref_find_l3(f, len);
    if (!l3.ok || l3.datagram_len < (l3.v6 ? 40u : 20u) + 8 + 12 + 4) {
        return false;
    }
    return ref_icrc(f, l3) == ref_wire_icrc(f, l3);
}

}  // namespace rocelab::test
