// build.cpp - RoCEv2 frame builders; see build.hpp.
#include "proto/build.hpp"

#include <cstring>
#include <type_traits>

#include "proto/icrc.hpp"

namespace rocelab {

namespace {

constexpr std::uint32_t pad_of(std::size_t payload) noexcept {
    return static_cast<std::uint32_t>((4u - (payload & 3u)) & 3u);
}

// UDP length (header .. ICRC) for a given opcode and payload.
constexpr std::uint64_t udp_len_of(std::uint8_t op, std::size_t payload) noexcept {
    return std::uint64_t(udp_hdr_len) + bth_len + roce_opcode_lookup(op).ext_len + payload + pad_of(payload) +
           icrc_len;
}

std::uint32_t l2_len(std::int16_t vid) noexcept { return eth_hdr_len + (vid >= 0 ? vlan_tag_len : 0); }

std::uint32_t frame_len(std::uint32_t l2, std::uint32_t l3_hdr, std::uint64_t udp_len, bool pad_min,
                        std::uint64_t max_l3) noexcept {
    const std::uint64_t l3 = l3_hdr + udp_len;
    if (l3 > max_l3) {
        return 0;
    }
    std::uint64_t n = l2 + l3;
    if (pad_min && n < eth_min_frame_len) {
        n = eth_min_frame_len;
    }
    return static_cast<std::uint32_t>(n);
}

// FETH, ImmDt and IETH: one big-endian word each (feth_len, immdt_len, ieth_len).
std::uint32_t write_be32_ext(std::byte* q, std::uint32_t v) noexcept {
    store_be32(q, v);
    return 4;
}

std::byte* write_l2(std::byte* out, const mac_addr& dst, const mac_addr& src, std::int16_t vid, std::uint8_t pcp,
                    std::uint16_t ethertype) noexcept {
    if (vid < 0) {
        return out + write_eth(out, dst, src, ethertype);
    }
    write_eth(out, dst, src, ethertype_vlan);
    write_vlan_tag(out + 12, ethertype_vlan,
                   vlan_tci{static_cast<std::uint8_t>(pcp & 7u), false, static_cast<std::uint16_t>(vid & 0x0FFF)});
    store_be16(out + 16, ethertype);
    return out + eth_hdr_len + vlan_tag_len;
}

// Writes extended header `which` (one roce_hdr bit) at `q`; returns its length.
std::uint32_t write_ext(std::byte* q, std::uint16_t which, const roce_ext_fields& e) noexcept {
    switch (which) {
        case roce_hdr::deth: return write_deth(q, e.deth);
        case roce_hdr::feth: return write_be32_ext(q, e.feth);
        case roce_hdr::reth: return write_reth(q, e.reth);
        case roce_hdr::atomic_eth: return write_atomic_eth(q, e.atomic);
        case roce_hdr::aeth: return write_aeth(q, e.aeth);
        case roce_hdr::atomic_ack_eth:
            store_be64(q, e.atomic_ack);
            return atomic_ack_eth_len;
        case roce_hdr::immdt: return write_be32_ext(q, e.immdt);
        case roce_hdr::ieth: return write_be32_ext(q, e.ieth_rkey);
        case roce_hdr::cnp_resv:
            std::memset(q, 0, cnp_reserved_len);
            return cnp_reserved_len;
        default: return 0;
    }
}

// Writes BTH + extended headers + payload + pad at `b`; returns the end.
// The extended headers go in the bit order of roce_hdr, the order that
// roce_ext_offset() and the opcode table's ext_len assume.
std::byte* write_transport(std::byte* b, const bth_fields& bth_in, const roce_ext_fields& e,
                           std::span<const std::byte> payload) noexcept {
    bth_fields bth = bth_in;
    bth.pad_count = static_cast<std::uint8_t>(pad_of(payload.size()));
    std::byte* q = b + write_bth(b, bth);
    for (unsigned h = roce_opcode_lookup(bth.opcode).hdrs; h != 0; h &= h - 1) {
        q += write_ext(q, static_cast<std::uint16_t>(h & (0u - h)), e);  // the lowest bit left
    }
    if (!payload.empty()) {
        std::memcpy(q, payload.data(), payload.size());
        q += payload.size();
    }
    const std::uint32_t pad = pad_of(payload.size());
    std::memset(q, 0, pad);
    return q + pad;
}

// The TOS byte / Traffic Class: DSCP in the high six bits, ECN in the low two.
constexpr std::uint8_t tos_of(std::uint8_t dscp, std::uint8_t ecn) noexcept {
    return static_cast<std::uint8_t>(((dscp & 0x3Fu) << 2) | (ecn & 3u));
}

// The IP header of p's frame, whose UDP datagram is udp_len bytes; returns its length.
std::uint32_t write_ip(std::byte* ip, const roce_v4_params& p, std::uint16_t udp_len) noexcept {
    const ipv4_hdr_params h{
        .src = p.src_ip, .dst = p.dst_ip, .tos = tos_of(p.dscp, p.ecn), .ttl = p.ttl, .id = p.ip_id, .df = p.df};
    return write_ipv4(ip, h, static_cast<std::uint16_t>(ipv4_min_hdr_len + udp_len));
}
std::uint32_t write_ip(std::byte* ip, const roce_v6_params& p, std::uint16_t udp_len) noexcept {
    const ipv6_hdr_params h{.src = p.src_ip,
                            .dst = p.dst_ip,
                            .traffic_class = tos_of(p.dscp, p.ecn),
                            .flow_label = p.flow_label,
                            .hop_limit = p.hop_limit,
                            .next_header = ip_proto_udp};
    return write_ipv6(ip, h, udp_len);
}

template <typename Params>
constexpr bool is_v6 = std::is_same_v<Params, roce_v6_params>;

// Ethernet [+ 802.1Q] | IPv4 or IPv6 | UDP of p's frame; returns where the BTH goes.
template <typename Params>
std::byte* write_roce_hdrs(std::byte* out, const Params& p, std::uint16_t udp_len) noexcept {
    std::byte* ip =
        write_l2(out, p.dst_mac, p.src_mac, p.vlan_id, p.pcp, is_v6<Params> ? ethertype_ipv6 : ethertype_ipv4);
    std::byte* udp = ip + write_ip(ip, p, udp_len);
    write_udp(udp, p.sport, p.dport, udp_len);
    return udp + udp_hdr_len;
}

// build_roce_v4/v6: the headers, BTH .. pad, the ICRC (and over IPv6 the UDP
// checksum, which covers it), then zeros up to n = the frame's length.
template <typename Params>
std::uint32_t build_roce(std::span<std::byte> out, const Params& p, std::uint32_t n) noexcept {
    if (n == 0 || out.size() < n) {
        return 0;
    }
    const auto udp_len = static_cast<std::uint16_t>(udp_len_of(p.bth.opcode, p.payload.size()));
    std::byte* ip = out.data() + l2_len(p.vlan_id);
    std::byte* end = write_transport(write_roce_hdrs(out.data(), p, udp_len), p.bth, p.ext, p.payload);
    const auto l3_len = static_cast<std::uint32_t>(end - ip);
    icrc_store(end, roce_icrc(ip, l3_len, is_v6<Params>));
    end += icrc_len;
    if constexpr (is_v6<Params>) {
        if (p.udp_checksum) {
            store_be16(ip + ipv6_hdr_len + 6, ipv6_udp_checksum(ip));
        }
    }
    const auto used = static_cast<std::uint32_t>(end - out.data());
    std::memset(end, 0, n - used);
    return n;
}

}  // namespace

std::uint32_t roce_v4_frame_len(const roce_v4_params& p) noexcept {
    return frame_len(l2_len(p.vlan_id), ipv4_min_hdr_len, udp_len_of(p.bth.opcode, p.payload.size()),
                     p.pad_to_min_frame, 0xFFFF);
}

std::uint32_t roce_v6_frame_len(const roce_v6_params& p) noexcept {
    return frame_len(l2_len(p.vlan_id), ipv6_hdr_len, udp_len_of(p.bth.opcode, p.payload.size()),
                     p.pad_to_min_frame, ipv6_hdr_len + 0xFFFF);
}

std::byte* write_roce_v4_hdrs(std::byte* out, const roce_v4_params& p, std::uint16_t udp_len) noexcept {
    return write_roce_hdrs(out, p, udp_len);
}

std::uint32_t build_roce_v4(std::span<std::byte> out, const roce_v4_params& p) noexcept {
    return build_roce(out, p, roce_v4_frame_len(p));
}

std::uint16_t ipv6_udp_checksum(const std::byte* ip6) noexcept {
    const std::uint32_t plen = load_be16(ip6 + 4);
    const std::byte* udp = ip6 + ipv6_hdr_len;
    std::uint64_t s = csum_add_bytes(udp, plen, ipv6_pseudo_sum(ip6, plen, ip_proto_udp));
    std::uint16_t stored;
    std::memcpy(&stored, udp + 6, 2);
    s += static_cast<std::uint16_t>(~stored);  // as if the field were 0
    const auto c = bswap16(static_cast<std::uint16_t>(~csum_fold(s)));
    return c == 0 ? 0xFFFF : c;
}

std::uint32_t build_roce_v6(std::span<std::byte> out, const roce_v6_params& p) noexcept {
    return build_roce(out, p, roce_v6_frame_len(p));
}

}  // namespace rocelab
