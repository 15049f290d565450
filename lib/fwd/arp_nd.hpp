// arp_nd.hpp - responders for the switch's own addresses: ARP, IPv6 neighbour
// discovery and ICMP/ICMPv6 echo.
//
// What it does
//   Pure functions over raw Ethernet frames (std::byte spans, no DPDK types).
//   Each takes the received frame `in`, the offset of the L3 header `l3_off`
//   (14 untagged, 18 with one VLAN tag still in the frame; the two bytes
//   before l3_off must hold the EtherType), the local address table, the
//   ingress port index (or local_addrs::any_port) and an output buffer `out`.
//   `out` may be the same memory as `in` (reply in place): every input field
//   is read before the first write. The L2 prefix (including a VLAN tag) is
//   kept; MACs are rewritten.
//
//   arp_reply       ARP request for one of our IPv4 addresses -> ARP reply
//                   (zero-padded to the 60-byte Ethernet minimum).
//   nd_advertise    ICMPv6 Neighbor Solicitation for one of our IPv6
//                   addresses -> Neighbor Advertisement with Router, Solicited
//                   and Override flags and a Target Link-Layer Address option;
//                   checksum over the IPv6 pseudo-header. A DAD probe (source
//                   ::) is answered to ff02::1 without the Solicited flag.
//   icmp4_echo_reply / icmp6_echo_reply   echo request to us -> echo reply.
//
//   arp_make_reply / nd_make_advert (+ arp_target_ip, nd_is_solicitation,
//   nd_target) are in-place shorthands for a pipeline that has already
//   checked the target address against route_table::is_local_v4/v6.
//
// Result: {status, len}. Only status == nd_status::reply wrote `out`
//   (len bytes). The caller counts the others by name:
//   not_for_us  well-formed but not addressed to one of our addresses
//   ignored     well-formed but not something we answer (ARP reply,
//               gratuitous ARP, other ICMP types)
//   malformed   truncated, bad lengths, bad checksum, hop limit != 255 (ND)
//   no_room     `out` is too small for the reply
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/endian.hpp"
#include "fwd/local_addr.hpp"
#include "fwd/wire.hpp"
#include "proto/arp.hpp"
#include "proto/csum.hpp"
#include "proto/ipv6.hpp"

namespace rocelab {

enum class nd_status : std::uint8_t { reply, not_for_us, ignored, malformed, no_room };

struct nd_result {
    nd_status status = nd_status::malformed;
    std::size_t len = 0;
};

inline constexpr std::size_t nd_min_frame = eth_min_frame_len;  // 60: the Ethernet minimum without FCS

namespace detail {
inline bool ethertype_is(std::span<const std::byte> in, std::size_t l3_off, std::uint16_t t) noexcept {
    return l3_off >= eth_hdr_len && in.size() >= l3_off && load_be16(in.data() + l3_off - 2) == t;
}
inline const std::uint8_t* u8p(const std::byte* p) noexcept {
    return reinterpret_cast<const std::uint8_t*>(p);
}
// Copies the L2 prefix (dst, src, tags, EtherType) unless out aliases in.
inline void copy_l2(std::span<const std::byte> in, std::size_t l3_off, std::span<std::byte> out) noexcept {
    if (out.data() != in.data()) {
        std::memmove(out.data(), in.data(), l3_off);
    }
}
}  // namespace detail

// ---- ARP ----

namespace detail {
// find(tpa) -> const mac_addr* (nullptr: not one of ours).
template <typename Find>
nd_result arp_reply_impl(std::span<const std::byte> in, std::size_t l3_off, std::span<std::byte> out,
                         Find&& find) noexcept {
    if (!detail::ethertype_is(in, l3_off, ethertype_arp) || in.size() < l3_off + arp_len) {
        return {nd_status::malformed, 0};
    }
    const std::byte* a = in.data() + l3_off;
    if (!arp_is_eth_ipv4(a)) {
        return {nd_status::malformed, 0};
    }
    const arp_cview v(a);
    if (v.oper() != arp_op_request) {
        return {nd_status::ignored, 0};
    }
    const mac_addr sha = v.sha();
    const std::uint32_t spa = v.spa();
    const std::uint32_t tpa = v.tpa();
    if ((sha[0] & 1u) != 0) {
        return {nd_status::malformed, 0};
    }
    if (spa == tpa) {
        return {nd_status::ignored, 0};  // gratuitous ARP announcement
    }
    const mac_addr* ours = find(tpa);
    if (ours == nullptr) {
        return {nd_status::not_for_us, 0};
    }
    // Pad to the Ethernet minimum when the buffer allows it.
    const std::size_t len = std::max(l3_off + arp_len, std::min(nd_min_frame, out.size()));
    if (out.size() < len) {
        return {nd_status::no_room, 0};
    }
    copy_l2(in, l3_off, out);
    std::byte* o = out.data();
    store_mac(o + wire::eth_dst, sha);
    store_mac(o + wire::eth_src, *ours);
    std::byte* r = o + l3_off;
    write_arp(r, arp_op_reply, *ours, tpa, sha, spa);
    std::memset(r + arp_len, 0, len - l3_off - arp_len);
    return {nd_status::reply, len};
}
}  // namespace detail

inline nd_result arp_reply(std::span<const std::byte> in, std::size_t l3_off, const local_addrs& me,
                           int rx_port, std::span<std::byte> out) noexcept {
    return detail::arp_reply_impl(in, l3_off, out, [&](std::uint32_t tpa) -> const mac_addr* {
        const local_v4* l = me.find_v4(tpa, rx_port);
        return l != nullptr ? &l->mac : nullptr;
    });
}

// ---- IPv6 neighbour discovery ----

inline constexpr std::size_t na_icmp_len = 32;  // 24 + 8-byte TLLA option

namespace detail {
// find(target16) -> const mac_addr* (nullptr: not one of ours).
template <typename Find>
nd_result nd_advertise_impl(std::span<const std::byte> in, std::size_t l3_off, std::span<std::byte> out,
                            bool router, Find&& find) noexcept {
    if (!detail::ethertype_is(in, l3_off, ethertype_ipv6) ||
        in.size() < l3_off + ipv6_hdr_len + wire::nd_options) {
        return {nd_status::malformed, 0};
    }
    const std::byte* ip = in.data() + l3_off;
    const std::byte* icmp = ip + ipv6_hdr_len;
    const std::size_t plen = load_be16(ip + wire::ip6_payload_len);
    if ((load_u8(ip) >> 4) != 6 || load_u8(ip + wire::ip6_next) != ip_proto_icmpv6) {
        return {nd_status::ignored, 0};
    }
    if (load_u8(icmp) != wire::icmp6_ns) {
        return {nd_status::ignored, 0};
    }
    if (plen < wire::nd_options || in.size() < l3_off + ipv6_hdr_len + plen || load_u8(icmp + 1) != 0 ||
        load_u8(ip + wire::ip6_hop_limit) != 255 ||
        ipv6_l4_checksum(ip, icmp, plen, ip_proto_icmpv6) != 0) {
        return {nd_status::malformed, 0};
    }
    const std::uint8_t* target = detail::u8p(icmp + wire::nd_target);
    if (target[0] == 0xff) {
        return {nd_status::malformed, 0};
    }
    // Source link-layer address option, if any.
    static constexpr std::uint8_t unspecified[16] = {};
    const bool dad = std::memcmp(ip + wire::ip6_src, unspecified, 16) == 0;
    bool have_sll = false;
    mac_addr sll{};
    for (std::size_t off = wire::nd_options; off + 2 <= plen;) {
        const std::size_t olen = std::size_t{load_u8(icmp + off + 1)} * 8;
        if (olen == 0 || off + olen > plen) {
            return {nd_status::malformed, 0};
        }
        if (load_u8(icmp + off) == wire::nd_opt_sll && olen >= 8) {
            have_sll = true;
            sll = load_mac(icmp + off + 2);
        }
        off += olen;
    }
    if (dad && have_sll) {
        return {nd_status::malformed, 0};  // RFC 4861 7.1.1
    }
    const mac_addr* ours = find(target);
    if (ours == nullptr) {
        return {nd_status::not_for_us, 0};
    }
    const std::size_t len = l3_off + ipv6_hdr_len + na_icmp_len;
    if (out.size() < len) {
        return {nd_status::no_room, 0};
    }
    // Everything below still needed from `in`, saved before writing `out`.
    std::uint8_t peer_ip[16];
    std::memcpy(peer_ip, ip + wire::ip6_src, 16);
    std::uint8_t our_ip[16];
    std::memcpy(our_ip, target, 16);
    const mac_addr our_mac = *ours;
    const mac_addr frame_src = load_mac(in.data() + wire::eth_src);

    copy_l2(in, l3_off, out);
    std::byte* o = out.data();
    std::byte* oip = o + l3_off;
    std::byte* oic = oip + ipv6_hdr_len;
    if (dad) {
        static constexpr mac_addr all_nodes_mac{0x33, 0x33, 0, 0, 0, 1};
        static constexpr std::uint8_t all_nodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        store_mac(o + wire::eth_dst, all_nodes_mac);
        std::memcpy(oip + wire::ip6_dst, all_nodes, 16);
    } else {
        store_mac(o + wire::eth_dst, have_sll ? sll : frame_src);
        std::memcpy(oip + wire::ip6_dst, peer_ip, 16);
    }
    store_mac(o + wire::eth_src, our_mac);
    store_be32(oip, 0x60000000u);
    store_be16(oip + wire::ip6_payload_len, static_cast<std::uint16_t>(na_icmp_len));
    oip[wire::ip6_next] = std::byte{ip_proto_icmpv6};
    oip[wire::ip6_hop_limit] = std::byte{255};
    std::memcpy(oip + wire::ip6_src, our_ip, 16);
    oic[0] = std::byte{wire::icmp6_na};
    oic[1] = std::byte{0};
    store_be16(oic + 2, 0);
    std::uint8_t flags = wire::na_flag_override;
    if (router) {
        flags |= wire::na_flag_router;
    }
    if (!dad) {
        flags |= wire::na_flag_solicited;
    }
    oic[4] = std::byte{flags};
    oic[5] = oic[6] = oic[7] = std::byte{0};
    std::memcpy(oic + wire::nd_target, our_ip, 16);
    oic[wire::nd_options] = std::byte{wire::nd_opt_tll};
    oic[wire::nd_options + 1] = std::byte{1};
    store_mac(oic + wire::nd_options + 2, our_mac);
    store_be16(oic + 2, ipv6_l4_checksum(oip, oic, na_icmp_len, ip_proto_icmpv6));
    return {nd_status::reply, len};
}
}  // namespace detail

inline nd_result nd_advertise(std::span<const std::byte> in, std::size_t l3_off, const local_addrs& me,
                              int rx_port, std::span<std::byte> out, bool router = true) noexcept {
    return detail::nd_advertise_impl(in, l3_off, out, router,
                                     [&](const std::uint8_t* target) -> const mac_addr* {
                                         const local_v6* l = me.find_v6(target, rx_port);
                                         return l != nullptr ? &l->mac : nullptr;
                                     });
}

// ---- in-place conveniences for a pipeline that has already decided the
// target is ours (e.g. via route_table::is_local_v4/v6) ----

// ARP target protocol address (host order); arp points at the ARP header.
inline std::uint32_t arp_target_ip(const std::byte* arp) noexcept {
    return arp_cview(arp).tpa();
}

// Rewrites an ARP request in frame[0, len) into the reply from our_mac, in
// place. The reply fits in the request (it is never longer than
// max(len, l3_off + 28)); frames shorter than 60 bytes stay short.
// false: not a well-formed ARP request (the frame is untouched).
inline bool arp_make_reply(std::byte* frame, std::size_t len, std::size_t l3_off,
                           const std::uint8_t* our_mac) noexcept {
    mac_addr m;
    std::memcpy(m.data(), our_mac, 6);
    const std::span<std::byte> f(frame, len);
    return detail::arp_reply_impl(f, l3_off, f, [&](std::uint32_t) { return &m; }).status == nd_status::reply;
}

// Cheap pre-check: IPv6 + ICMPv6 Neighbor Solicitation with room for the
// fixed part (nd_make_advert validates the rest).
inline bool nd_is_solicitation(const std::byte* frame, std::size_t l3_off, std::size_t len) noexcept {
    return len >= l3_off + ipv6_hdr_len + wire::nd_options && l3_off >= 2 &&
           load_be16(frame + l3_off - 2) == ethertype_ipv6 &&
           load_u8(frame + l3_off + wire::ip6_next) == ip_proto_icmpv6 &&
           load_u8(frame + l3_off + ipv6_hdr_len) == wire::icmp6_ns;
}

// Same, for a Neighbor Solicitation or Advertisement.
inline bool nd_is_nd(const std::byte* frame, std::size_t l3_off, std::size_t len) noexcept {
    if (len < l3_off + ipv6_hdr_len + wire::nd_options || l3_off < 2 ||
        load_be16(frame + l3_off - 2) != ethertype_ipv6 ||
        load_u8(frame + l3_off + wire::ip6_next) != ip_proto_icmpv6) {
        return false;
    }
    const std::uint8_t t = load_u8(frame + l3_off + ipv6_hdr_len);
    return t == wire::icmp6_ns || t == wire::icmp6_na;
}

// Target address of a Neighbor Solicitation or Advertisement (16 bytes).
inline const std::uint8_t* nd_target(const std::byte* frame, std::size_t l3_off) noexcept {
    return reinterpret_cast<const std::uint8_t*>(frame + l3_off + ipv6_hdr_len + wire::nd_target);
}

// Rewrites a Neighbor Solicitation in frame[0, len) into the Neighbor
// Advertisement of its target from our_mac, in place. The NA needs
// l3_off + 72 bytes: an NS with a source link-layer option (the usual case)
// is exactly that long; a shorter one (no option, e.g. DAD) returns false,
// as does anything malformed (hop limit, checksum, options). The caller sets
// the frame length to nd_na_frame_len(l3_off) on success.
inline bool nd_make_advert(std::byte* frame, std::size_t len, std::size_t l3_off, const std::uint8_t* our_mac,
                           bool router = true) noexcept {
    mac_addr m;
    std::memcpy(m.data(), our_mac, 6);
    const std::span<std::byte> f(frame, len);
    return detail::nd_advertise_impl(f, l3_off, f, router, [&](const std::uint8_t*) { return &m; }).status ==
           nd_status::reply;
}
inline constexpr std::size_t nd_na_frame_len(std::size_t l3_off) noexcept {
    return l3_off + ipv6_hdr_len + na_icmp_len;
}

// ---- neighbour resolution: what the switch asks and what it learns ----
//
// The L3 leaf resolves connected hosts and next hops itself (neigh_table.hpp):
// it sends ARP requests and Neighbor Solicitations, and learns from the ARP
// requests/replies and NS/NA it receives.

// ARP for IPv4 over Ethernet, as received.
struct arp_info {
    bool ok = false;  // a well-formed Ethernet/IPv4 ARP packet
    std::uint16_t oper = 0;
    mac_addr sha{};
    std::uint32_t spa = 0, tpa = 0;  // host order
};

inline arp_info arp_parse(const std::byte* frame, std::size_t len, std::size_t l3_off) noexcept {
    arp_info r;
    if (len < l3_off + arp_len || l3_off < 2 || load_be16(frame + l3_off - 2) != ethertype_arp) {
        return r;
    }
    const std::byte* a = frame + l3_off;
    if (!arp_is_eth_ipv4(a)) {
        return r;
    }
    const arp_cview v(a);
    r.oper = v.oper();
    r.sha = v.sha();
    r.spa = v.spa();
    r.tpa = v.tpa();
    r.ok = (r.oper == arp_op_request || r.oper == arp_op_reply) && (r.sha[0] & 1u) == 0;
    return r;
}

// An ARP request for `target` from (our_mac, our_ip), untagged, padded to
// 60 bytes. Broadcast, or unicast to `to` (reconfirming a known neighbour,
// RFC 1122 2.3.2.1). Needs 60 bytes at out; returns the frame length.
inline std::size_t arp_make_request(std::byte* out, const mac_addr& our_mac, std::uint32_t our_ip,
                                    std::uint32_t target, const mac_addr* to = nullptr) noexcept {
    // THA zero (RFC 826: "don't care" in a request).
    return build_arp(out, arp_op_request, to != nullptr ? *to : mac_broadcast, our_mac, our_ip, mac_addr{}, target);
}

// Neighbor Solicitation / Advertisement, as received (RFC 4861 7.1.1, 7.1.2
// validity checks: hop limit 255, code 0, checksum, option lengths).
struct nd_info {
    bool ok = false;
    std::uint8_t type = 0;  // icmp6_ns or icmp6_na
    std::uint8_t flags = 0;  // NA: na_flag_*
    const std::uint8_t* src = nullptr;     // IPv6 source (16 bytes)
    const std::uint8_t* target = nullptr;  // target address (16 bytes)
    bool has_lladdr = false;               // NS: source, NA: target link-layer option
    mac_addr lladdr{};
};

inline nd_info nd_parse(const std::byte* frame, std::size_t len, std::size_t l3_off) noexcept {
    nd_info r;
    if (len < l3_off + ipv6_hdr_len + wire::nd_options || l3_off < 2 ||
        load_be16(frame + l3_off - 2) != ethertype_ipv6) {
        return r;
    }
    const std::byte* ip = frame + l3_off;
    const std::byte* icmp = ip + ipv6_hdr_len;
    const std::size_t plen = load_be16(ip + wire::ip6_payload_len);
    if ((load_u8(ip) >> 4) != 6 || load_u8(ip + wire::ip6_next) != ip_proto_icmpv6) { return r; }
    r.type = load_u8(icmp);
    if ((r.type != wire::icmp6_ns && r.type != wire::icmp6_na) || plen < wire::nd_options ||
        len < l3_off + ipv6_hdr_len + plen || load_u8(icmp + 1) != 0 ||
        load_u8(ip + wire::ip6_hop_limit) != 255 || ipv6_l4_checksum(ip, icmp, plen, ip_proto_icmpv6) != 0) {
        return r;
    }
    const std::uint8_t want = r.type == wire::icmp6_ns ? wire::nd_opt_sll : wire::nd_opt_tll;
    for (std::size_t off = wire::nd_options; off + 2 <= plen;) {
        const std::size_t olen = std::size_t{load_u8(icmp + off + 1)} * 8;
        if (olen == 0 || off + olen > plen) { return r; }
        if (load_u8(icmp + off) == want && olen >= 8) {
            r.has_lladdr = true;
            r.lladdr = load_mac(icmp + off + 2);
        }
        off += olen;
    }
    r.flags = load_u8(icmp + 4);
    r.src = detail::u8p(ip + wire::ip6_src);
    r.target = detail::u8p(icmp + wire::nd_target);
    r.ok = (r.target[0] != 0xff) && !(r.has_lladdr && (r.lladdr[0] & 1u) != 0);
    return r;
}

inline constexpr std::size_t ns_frame_len = eth_hdr_len + ipv6_hdr_len + 32;  // 86

// A Neighbor Solicitation for `target` from our_ip / our_mac with a source
// link-layer option, to the target's solicited-node group (33:33:ff:xx:xx:xx,
// ff02::1:ffxx:xxxx), or unicast to `to` / the target address (reconfirming,
// RFC 4861 7.2.2). Needs ns_frame_len bytes at out; returns that length.
inline std::size_t nd_make_solicit(std::byte* out, const mac_addr& our_mac, const std::uint8_t* our_ip,
                                   const std::uint8_t* target, const mac_addr* to = nullptr) noexcept {
    std::byte* ip = out + eth_hdr_len;
    std::byte* ic = ip + ipv6_hdr_len;
    std::uint8_t dst[16];
    mac_addr dmac;
    if (to != nullptr) {
        std::memcpy(dst, target, 16);
        dmac = *to;
    } else {
        static constexpr std::uint8_t sn[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
        std::memcpy(dst, sn, 13);
        std::memcpy(dst + 13, target + 13, 3);
        dmac = mac_addr{0x33, 0x33, dst[12], dst[13], dst[14], dst[15]};
    }
    store_mac(out + wire::eth_dst, dmac);
    store_mac(out + wire::eth_src, our_mac);
    store_be16(out + wire::eth_type, ethertype_ipv6);
    store_be32(ip, 0x60000000u);
    store_be16(ip + wire::ip6_payload_len, 32);
    ip[wire::ip6_next] = std::byte{ip_proto_icmpv6};
    ip[wire::ip6_hop_limit] = std::byte{255};
    std::memcpy(ip + wire::ip6_src, our_ip, 16);
    std::memcpy(ip + wire::ip6_dst, dst, 16);
    std::memset(ic, 0, 32);
    ic[0] = std::byte{wire::icmp6_ns};
    std::memcpy(ic + wire::nd_target, target, 16);
    ic[wire::nd_options] = std::byte{wire::nd_opt_sll};
    ic[wire::nd_options + 1] = std::byte{1};
    store_mac(ic + wire::nd_options + 2, our_mac);
    store_be16(ic + 2, ipv6_l4_checksum(ip, ic, 32, ip_proto_icmpv6));
    return ns_frame_len;
}

// ---- echo ----

// ICMPv4 echo request to one of our addresses -> echo reply (same length).
inline nd_result icmp4_echo_reply(std::span<const std::byte> in, std::size_t l3_off, const local_addrs& me,
                                  int rx_port, std::span<std::byte> out) noexcept {
    if (!detail::ethertype_is(in, l3_off, ethertype_ipv4) || in.size() < l3_off + ipv4_min_hdr_len) {
        return {nd_status::malformed, 0};
    }
    const std::byte* ip = in.data() + l3_off;
    const std::size_t ihl = std::size_t{load_u8(ip) & 0x0fu} * 4;
    const std::size_t tot = load_be16(ip + wire::ip4_total_len);
    if ((load_u8(ip) >> 4) != 4 || ihl < ipv4_min_hdr_len || tot < ihl + 8 || in.size() < l3_off + tot ||
        inet_checksum(ip, ihl) != 0) {
        return {nd_status::malformed, 0};
    }
    if (load_u8(ip + wire::ip4_proto) != ip_proto_icmp || load_u8(ip + ihl) != 8 ||
        (load_be16(ip + wire::ip4_frag) & 0x3fffu) != 0) {
        return {nd_status::ignored, 0};
    }
    const std::uint32_t src = load_be32(ip + wire::ip4_src);
    const std::uint32_t dst = load_be32(ip + wire::ip4_dst);
    const local_v4* ours = me.find_v4(dst, rx_port);
    if (ours == nullptr) {
        return {nd_status::not_for_us, 0};
    }
    if (inet_checksum(ip + ihl, tot - ihl) != 0) {
        return {nd_status::malformed, 0};
    }
    const std::size_t len = std::max(l3_off + tot, nd_min_frame);
    if (out.size() < len) {
        return {nd_status::no_room, 0};
    }
    const mac_addr peer = load_mac(in.data() + wire::eth_src);
    if (out.data() != in.data()) {
        std::memmove(out.data(), in.data(), l3_off + tot);
    }
    std::byte* o = out.data();
    std::byte* oip = o + l3_off;
    store_mac(o + wire::eth_dst, peer);
    store_mac(o + wire::eth_src, ours->mac);
    store_be32(oip + wire::ip4_src, dst);
    store_be32(oip + wire::ip4_dst, src);
    oip[wire::ip4_ttl] = std::byte{64};
    store_be16(oip + wire::ip4_csum, 0);
    store_be16(oip + wire::ip4_csum, inet_checksum(oip, ihl));
    std::byte* ic = oip + ihl;
    ic[0] = std::byte{0};
    store_be16(ic + 2, 0);
    store_be16(ic + 2, inet_checksum(ic, tot - ihl));
    std::memset(o + l3_off + tot, 0, len - l3_off - tot);
    return {nd_status::reply, len};
}

// ICMPv6 echo request to one of our unicast addresses -> echo reply.
inline nd_result icmp6_echo_reply(std::span<const std::byte> in, std::size_t l3_off, const local_addrs& me,
                                  int rx_port, std::span<std::byte> out) noexcept {
    if (!detail::ethertype_is(in, l3_off, ethertype_ipv6) ||
        in.size() < l3_off + ipv6_hdr_len + 8) {
        return {nd_status::malformed, 0};
    }
    const std::byte* ip = in.data() + l3_off;
    const std::byte* icmp = ip + ipv6_hdr_len;
    const std::size_t plen = load_be16(ip + wire::ip6_payload_len);
    if ((load_u8(ip) >> 4) != 6 || load_u8(ip + wire::ip6_next) != ip_proto_icmpv6 ||
        load_u8(icmp) != wire::icmp6_echo_request) {
        return {nd_status::ignored, 0};
    }
    if (plen < 8 || in.size() < l3_off + ipv6_hdr_len + plen ||
        ipv6_l4_checksum(ip, icmp, plen, ip_proto_icmpv6) != 0) {
        return {nd_status::malformed, 0};
    }
    const local_v6* ours = me.find_v6(detail::u8p(ip + wire::ip6_dst), rx_port);
    if (ours == nullptr) {
        return {nd_status::not_for_us, 0};
    }
    const std::size_t len = l3_off + ipv6_hdr_len + plen;
    if (out.size() < len) {
        return {nd_status::no_room, 0};
    }
    const mac_addr peer = load_mac(in.data() + wire::eth_src);
    std::uint8_t peer_ip[16];
    std::memcpy(peer_ip, ip + wire::ip6_src, 16);
    if (out.data() != in.data()) {
        std::memmove(out.data(), in.data(), len);
    }
    std::byte* o = out.data();
    std::byte* oip = o + l3_off;
    std::byte* oic = oip + ipv6_hdr_len;
    store_mac(o + wire::eth_dst, peer);
    store_mac(o + wire::eth_src, ours->mac);
    std::memcpy(oip + wire::ip6_src, ours->addr.data(), 16);
    std::memcpy(oip + wire::ip6_dst, peer_ip, 16);
    oip[wire::ip6_hop_limit] = std::byte{64};
    oic[0] = std::byte{wire::icmp6_echo_reply};
    store_be16(oic + 2, 0);
    store_be16(oic + 2, ipv6_l4_checksum(oip, oic, plen, ip_proto_icmpv6));
    return {nd_status::reply, len};
}

}  // namespace rocelab
