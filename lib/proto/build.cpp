// build.cpp - RoCEv2 frame builders; see build.hpp.
#include "proto/build.hpp"

#include <cstring>

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

// Writes BTH + extended headers + payload + pad at `b`; returns the end.
std::byte* write_transport(std::byte* b, const bth_fields& bth_in, const roce_ext_fields& e,
                           std::span<const std::byte> payload) noexcept {
    bth_fields bth = bth_in;
    bth.pad_count = static_cast<std::uint8_t>(pad_of(payload.size()));
    std::byte* q = b + write_bth(b, bth);
    const std::uint16_t h = roce_opcode_lookup(bth.opcode).hdrs;
    if (h & roce_hdr::deth) {
        q += write_deth(q, e.deth);
    }
    if (h & roce_hdr::feth) {
        store_be32(q, e.feth);
        q += feth_len;
    }
    if (h & roce_hdr::reth) {
        q += write_reth(q, e.reth);
    }
    if (h & roce_hdr::atomic_eth) {
        q += write_atomic_eth(q, e.atomic);
    }
    if (h & roce_hdr::aeth) {
        q += write_aeth(q, e.aeth);
    }
    if (h & roce_hdr::atomic_ack_eth) {
        store_be64(q, e.atomic_ack);
        q += atomic_ack_eth_len;
    }
    if (h & roce_hdr::immdt) {
        store_be32(q, e.immdt);
        q += immdt_len;
    }
    if (h & roce_hdr::ieth) {
        store_be32(q, e.ieth_rkey);
        q += ieth_len;
    }
    if (h & roce_hdr::cnp_resv) {
        std::memset(q, 0, cnp_reserved_len);
        q += cnp_reserved_len;
    }
    if (!payload.empty()) {
        std::memcpy(q, payload.data(), payload.size());
        q += payload.size();
    }
    const std::uint32_t pad = pad_of(payload.size());
    std::memset(q, 0, pad);
    return q + pad;
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
    std::byte* ip = write_l2(out, p.dst_mac, p.src_mac, p.vlan_id, p.pcp, ethertype_ipv4);
    ipv4_hdr_params h{};
    h.src = p.src_ip;
    h.dst = p.dst_ip;
    h.tos = static_cast<std::uint8_t>(((p.dscp & 0x3Fu) << 2) | (p.ecn & 3u));
    h.ttl = p.ttl;
    h.id = p.ip_id;
    h.df = p.df;
    std::byte* udp = ip + write_ipv4(ip, h, static_cast<std::uint16_t>(ipv4_min_hdr_len + udp_len));
    write_udp(udp, p.sport, p.dport, udp_len);
    return udp + udp_hdr_len;
}

std::uint32_t build_roce_v4(std::span<std::byte> out, const roce_v4_params& p) noexcept {
    const std::uint32_t n = roce_v4_frame_len(p);
    if (n == 0 || out.size() < n) {
        return 0;
    }
    const auto udp_len = static_cast<std::uint16_t>(udp_len_of(p.bth.opcode, p.payload.size()));
    std::byte* ip = out.data() + l2_len(p.vlan_id);
    std::byte* end = write_transport(write_roce_v4_hdrs(out.data(), p, udp_len), p.bth, p.ext, p.payload);
    const auto l3_len = static_cast<std::uint32_t>(end - ip);
    icrc_store(end, roce_icrc(ip, l3_len, false));
    end += icrc_len;
    const auto used = static_cast<std::uint32_t>(end - out.data());
    std::memset(end, 0, n - used);
    return n;
}

std::uint16_t ipv6_udp_checksum(const std::byte* ip6) noexcept {
    const std::uint32_t plen = load_be16(ip6 + 4);
    const std::byte* udp = ip6 + ipv6_hdr_len;
    // Pseudo-header: addresses, upper-layer length, next header (RFC 8200 8.1).
    std::uint64_t s = csum_add_native(ip6 + 8, 32, 0);
    std::byte tail[8]{};
    store_be32(tail, plen);
    tail[7] = std::byte{ip_proto_udp};
    s = csum_add_native(tail, 8, s);
    s = csum_add_native(udp, plen & ~1u, s);
    if ((plen & 1u) != 0) {
        std::byte last[2] = {udp[plen - 1], std::byte{0}};
        s = csum_add_native(last, 2, s);
    }
    std::uint16_t stored;
    std::memcpy(&stored, udp + 6, 2);
    s += static_cast<std::uint16_t>(~stored);  // as if the field were 0
    const auto c = bswap16(static_cast<std::uint16_t>(~csum_fold(s)));
    return c == 0 ? 0xFFFF : c;
}

std::uint32_t build_roce_v6(std::span<std::byte> out, const roce_v6_params& p) noexcept {
    const std::uint32_t n = roce_v6_frame_len(p);
    if (n == 0 || out.size() < n) {
        return 0;
    }
    const auto udp_len = static_cast<std::uint16_t>(udp_len_of(p.bth.opcode, p.payload.size()));
    std::byte* ip = write_l2(out.data(), p.dst_mac, p.src_mac, p.vlan_id, p.pcp, ethertype_ipv6);
    ipv6_hdr_params h{};
    h.src = p.src_ip;
    h.dst = p.dst_ip;
    h.traffic_class = static_cast<std::uint8_t>(((p.dscp & 0x3Fu) << 2) | (p.ecn & 3u));
    h.flow_label = p.flow_label;
    h.hop_limit = p.hop_limit;
    h.next_header = ip_proto_udp;
    std::byte* udp = ip + write_ipv6(ip, h, udp_len);
    write_udp(udp, p.sport, p.dport, udp_len);
    std::byte* end = write_transport(udp + udp_hdr_len, p.bth, p.ext, p.payload);
    const auto l3_len = static_cast<std::uint32_t>(end - ip);
    icrc_store(end, roce_icrc(ip, l3_len, true));
    end += icrc_len;
    if (p.udp_checksum) {
        store_be16(udp + 6, ipv6_udp_checksum(ip));
    }
    const auto used = static_cast<std::uint32_t>(end - out.data());
    std::memset(end, 0, n - used);
    return n;
}

}  // namespace rocelab
