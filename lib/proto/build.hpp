// build.hpp - RoCEv2 frame builders (IPv4 and IPv6).
//
// build_roce_v4 / build_roce_v6 write a complete frame into a caller buffer
// and return its length (0 when it does not fit or the payload is too large):
//   Ethernet [+ one 802.1Q tag] | IPv4 (DF, TOS = dscp<<2 | ecn, id, ttl,
//   correct checksum) or IPv6 (TC, flow label, hop limit) | UDP (checksum 0) |
//   BTH | extended headers chosen by the opcode (RETH, AETH, DETH, ImmDt, ...
//   from roce_ext_fields) | payload | zero pad to 4 bytes (BTH.PadCnt set
//   accordingly) | ICRC | [zero Ethernet padding up to 60 bytes].
// The Ethernet FCS is not written (the NIC adds it; eth_fcs() computes it).
// bth.pad_count in the parameters is ignored: it is derived from the payload.
// Nothing allocates; the payload is copied once. The generator can avoid
// rehashing a constant payload with roce_icrc_with_payload_crc (icrc.hpp).
// Counters: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "proto/bth.hpp"
#include "proto/eth.hpp"
#include "proto/ipv4.hpp"
#include "proto/ipv6.hpp"
#include "proto/udp.hpp"

namespace rocelab {

// Extended-header contents; only those the opcode carries are written.
struct roce_ext_fields {
    reth_fields reth{};
    aeth_fields aeth{};
    deth_fields deth{};
    std::uint32_t immdt = 0;       // ImmDt (big-endian on the wire)
    std::uint32_t ieth_rkey = 0;   // IETH
    std::uint32_t feth = 0;        // FETH (FLUSH)
    atomic_eth_fields atomic{};    // AtomicETH
    std::uint64_t atomic_ack = 0;  // AtomicAckETH original value
};

struct roce_v4_params {
    mac_addr dst_mac{};
    mac_addr src_mac{};
    std::int16_t vlan_id = -1;     // -1 = untagged, else 0..4095 (TPID 0x8100)
    std::uint8_t pcp = 0;
    std::uint32_t src_ip = 0;      // host order
    std::uint32_t dst_ip = 0;
    std::uint8_t dscp = 0;
    std::uint8_t ecn = ecn_ect0;
    std::uint8_t ttl = 64;
    std::uint16_t ip_id = 0;
    bool df = true;
    std::uint16_t sport = 0xC000;
    std::uint16_t dport = udp_port_roce_v2;
    bth_fields bth{};
    roce_ext_fields ext{};
    std::span<const std::byte> payload{};
    bool pad_to_min_frame = true;  // zero-pad the Ethernet frame to 60 bytes
};

struct roce_v6_params {
    mac_addr dst_mac{};
    mac_addr src_mac{};
    std::int16_t vlan_id = -1;
    std::uint8_t pcp = 0;
    ipv6_addr src_ip{};
    ipv6_addr dst_ip{};
    std::uint8_t dscp = 0;
    std::uint8_t ecn = ecn_ect0;
    std::uint32_t flow_label = 0;
    std::uint8_t hop_limit = 64;
    std::uint16_t sport = 0xC000;
    std::uint16_t dport = udp_port_roce_v2;
    bth_fields bth{};
    roce_ext_fields ext{};
    std::span<const std::byte> payload{};
    // RFC 8200 makes the UDP checksum mandatory over IPv6 (tshark flags 0 as
    // an error); RoCEv2 NICs may send 0 (RFC 6936 zero-checksum UDP). The
    // checksum is masked out of the ICRC, so either is valid RoCE. Default:
    // computed (over the pseudo-header and the datagram, ICRC included).
    bool udp_checksum = true;
    bool pad_to_min_frame = true;
};

// Length build_roce_v4/v6 will write (0 when the datagram would exceed 65535).
std::uint32_t roce_v4_frame_len(const roce_v4_params& p) noexcept;
std::uint32_t roce_v6_frame_len(const roce_v6_params& p) noexcept;

// Writes the frame; returns its length, or 0 if out is too small.
std::uint32_t build_roce_v4(std::span<std::byte> out, const roce_v4_params& p) noexcept;
std::uint32_t build_roce_v6(std::span<std::byte> out, const roce_v6_params& p) noexcept;
// The Ethernet [+ 802.1Q] | IPv4 | UDP headers of p's frame, whose UDP
// datagram (header, BTH .. ICRC) is udp_len bytes; returns where the BTH
// goes. build_roce_v4 and the generator's data-frame template write them.
std::byte* write_roce_v4_hdrs(std::byte* out, const roce_v4_params& p, std::uint16_t udp_len) noexcept;
// UDP checksum of the IPv6 datagram at ip6 (fixed header, next header UDP,
// payload length as written), computed as if its checksum field were 0; a
// result of 0 is returned as 0xFFFF (RFC 768). Host order.
std::uint16_t ipv6_udp_checksum(const std::byte* ip6) noexcept;

// Unchecked variants: out must hold roce_v4_frame_len(p) bytes.
inline std::uint32_t build_roce_v4(std::byte* out, const roce_v4_params& p) noexcept {
    return build_roce_v4(std::span<std::byte>(out, roce_v4_frame_len(p)), p);
}
inline std::uint32_t build_roce_v6(std::byte* out, const roce_v6_params& p) noexcept {
    return build_roce_v6(std::span<std::byte>(out, roce_v6_frame_len(p)), p);
}

// CNP (reference sec. 1.4) for the reaction point's QP: BTH 0x81, BECN=1,
// 16 zero bytes. Typical marking: dscp 48, ecn not-ECT. Params is
// roce_v4_params (addresses host order) or roce_v6_params (Traffic Class =
// dscp<<2 | not-ECT, flow label 0).
template <typename Params, typename Addr>
inline Params make_cnp(const mac_addr& dst_mac, const mac_addr& src_mac, const Addr& src_ip, const Addr& dst_ip,
                       std::uint32_t dest_qpn, std::uint8_t dscp = 48) noexcept {
    Params p{};
    p.dst_mac = dst_mac;
    p.src_mac = src_mac;
    p.src_ip = src_ip;
    p.dst_ip = dst_ip;
    p.dscp = dscp;
    p.ecn = ecn_not_ect;
    p.bth = cnp_bth(dest_qpn);
    return p;
}
inline roce_v4_params make_cnp_v4(const mac_addr& dst_mac, const mac_addr& src_mac, std::uint32_t src_ip,
                                  std::uint32_t dst_ip, std::uint32_t dest_qpn, std::uint8_t dscp = 48) noexcept {
    return make_cnp<roce_v4_params>(dst_mac, src_mac, src_ip, dst_ip, dest_qpn, dscp);
}
inline roce_v6_params make_cnp_v6(const mac_addr& dst_mac, const mac_addr& src_mac, const ipv6_addr& src_ip,
                                  const ipv6_addr& dst_ip, std::uint32_t dest_qpn, std::uint8_t dscp = 48) noexcept {
    return make_cnp<roce_v6_params>(dst_mac, src_mac, src_ip, dst_ip, dest_qpn, dscp);
}

}  // namespace rocelab
