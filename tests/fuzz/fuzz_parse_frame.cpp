// fuzz_parse_frame - parse_frame at every depth (l3, l4, full) on arbitrary
// bytes, plus what the switch and the generator do next with a parsed frame:
// the RoCE ICRC check, and the ARP / ND / ICMP echo responders of
// fwd/arp_nd.hpp (into a separate buffer and in place on a copy).
//
// Invariants (trap on violation): every offset and length parse_frame
// reports lies inside the frame and inside its enclosing layer; the three
// depths agree on what they share (a deeper parse only adds malformed cases
// past the shallower one's depth); roce_frame_icrc_ok agrees with a direct
// roce_icrc over the same bytes; every reply a responder produces fits its
// buffer, and is itself well formed (it parses, its checksums verify).
// ASan catches reads past the input (libFuzzer's input buffer is exactly
// `size` bytes long).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_common.hpp"
#include "fwd/arp_nd.hpp"
#include "fwd/local_addr.hpp"
#include "proto/icrc.hpp"
#include "proto/parse.hpp"

using namespace rocelab;

namespace {

template <parse_depth D>
void check_one(const parsed_frame& r, std::uint32_t len) {
    FUZZ_CHECK(static_cast<std::size_t>(r.status) < parse_status_count);
    FUZZ_CHECK(static_cast<int>(r.kind) <= static_cast<int>(frame_kind::mac_control));
    FUZZ_CHECK(r.vlan_count <= 2);
    FUZZ_CHECK(std::strcmp(parse_status_name(r.status), "invalid") != 0);
    const bool l2_failed = r.status == parse_status::truncated_eth || r.status == parse_status::truncated_vlan ||
                           r.status == parse_status::too_many_vlan_tags;
    if (!l2_failed) {
        FUZZ_CHECK(r.l3_off == 14u + 4u * r.vlan_count);
        FUZZ_CHECK(r.l3_off <= len);
    }
    if ((r.vlan_count == 0) != (r.outer_vid < 0)) { FUZZ_CHECK(l2_failed); }
    if (!r.ok()) { return; }
    const std::uint32_t l3_end = r.l3_off + r.l3_len;
    switch (r.kind) {
        case frame_kind::ipv4:
            FUZZ_CHECK(r.l3_len >= 20 && l3_end <= len);
            break;
        case frame_kind::ipv6:
            FUZZ_CHECK(r.l3_len >= 40 && l3_end <= len);
            FUZZ_CHECK(r.ip6_src_off == r.l3_off + 8u && r.ip6_dst_off + 16u <= len);
            break;
        case frame_kind::mac_control:
            FUZZ_CHECK(r.l3_off + 2u <= len);
            FUZZ_CHECK(r.mac_control_opcode == mac_control_op_pfc || r.mac_control_opcode == mac_control_op_pause);
            FUZZ_CHECK(r.l3_off + (r.mac_control_opcode == mac_control_op_pfc ? pfc_body_len : pause_body_len) <=
                       len);
            break;
        case frame_kind::arp:
            FUZZ_CHECK(r.l3_off + arp_len <= len);
            break;
        default:
            break;
    }
    if (r.is_ip() && r.ipv4_fragment) {
        FUZZ_CHECK(r.kind == frame_kind::ipv4 && r.l4_off == 0);
    }
    if (r.is_ip() && r.l4_off != 0) {
        FUZZ_CHECK(r.l4_off >= r.l3_off + 20u && r.l4_off <= l3_end);
    }
    if constexpr (D != parse_depth::l3) {
        if (r.is_ip() && !r.ipv4_fragment && r.l4_proto == ip_proto_udp) {
            FUZZ_CHECK(r.l4_off != 0 && r.l4_len >= udp_hdr_len && r.l4_off + r.l4_len <= l3_end);
        }
    } else {
        FUZZ_CHECK(!r.is_roce && r.l4_len == 0 && r.sport == 0 && r.dport == 0);
    }
    if constexpr (D == parse_depth::full) {
        if (r.is_roce) {
            FUZZ_CHECK(r.l4_proto == ip_proto_udp && r.dport == udp_port_roce_v2);
            FUZZ_CHECK(r.bth_off == r.l4_off + udp_hdr_len);
            FUZZ_CHECK(r.roce_payload_off >= r.bth_off + bth_len);
            FUZZ_CHECK(r.roce_payload_off + r.roce_payload_len + r.pad_count + icrc_len == r.l4_off + r.l4_len);
            FUZZ_CHECK(r.dest_qpn <= psn_mask && r.psn <= psn_mask && r.pad_count <= 3);
        }
    } else {
        FUZZ_CHECK(!r.is_roce && r.bth_off == 0);
    }
}

// What every depth shares.
void check_same_l2(const parsed_frame& a, const parsed_frame& b) {
    FUZZ_CHECK(a.kind == b.kind && a.vlan_count == b.vlan_count && a.l3_off == b.l3_off &&
               a.ethertype == b.ethertype && a.outer_vid == b.outer_vid && a.outer_pcp == b.outer_pcp);
}

local_addrs make_local() {
    local_addrs me;
    const mac_addr mac{0x02, 0x00, 0x00, 0x00, 0x01, 0x00};
    me.add_v4(0x0A000001u, 31, 0, mac);  // 10.0.0.1
    me.add_v4(0xC0A80102u, 24, 1, mac);  // 192.168.1.2 (the reference vectors' address)
    const std::uint8_t v6a[16] = {0xfc, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    const std::uint8_t v6b[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    me.add_v6(v6a, 126, 0, mac);
    me.add_v6(v6b, 64, 1, mac);
    return me;
}

// A reply built by a responder: inside its buffer, and well formed.
void check_reply(const nd_result& r, std::span<const std::byte> out, std::size_t l3_off, frame_kind want) {
    if (r.status != nd_status::reply) {
        FUZZ_CHECK(r.len == 0);
        return;
    }
    FUZZ_CHECK(r.len <= out.size() && r.len >= l3_off);
    const parsed_frame p = parse_frame<parse_depth::l3>(out.data(), static_cast<std::uint32_t>(r.len));
    FUZZ_CHECK(p.ok() && p.kind == want && p.l3_off == l3_off);
    if (want == frame_kind::ipv6) {
        const std::byte* ip = out.data() + l3_off;
        FUZZ_CHECK(ipv6_l4_checksum(ip, ip + 40, load_be16(ip + 4), ip_proto_icmpv6) == 0);
    } else if (want == frame_kind::ipv4) {
        const std::byte* ip = out.data() + l3_off;
        const std::size_t ihl = std::size_t{load_u8(ip) & 0x0fu} * 4;
        FUZZ_CHECK(inet_checksum(ip, ihl) == 0);
        FUZZ_CHECK(inet_checksum(ip + ihl, load_be16(ip + 2) - ihl) == 0);
    }
}

void responders(const std::byte* data, std::uint32_t len, const parsed_frame& pf) {
    static const local_addrs me = make_local();
    const std::span<const std::byte> in(data, len);
    const std::size_t l3 = pf.l3_off;
    std::vector<std::byte> big(len + 64);
    std::byte small_buf[80];
    const std::span<std::byte> small(small_buf, sizeof small_buf);
    for (int port : {local_addrs::any_port, 0}) {
        if (pf.kind == frame_kind::arp) {
            check_reply(arp_reply(in, l3, me, port, big), big, l3, frame_kind::arp);
            check_reply(arp_reply(in, l3, me, port, small), small, l3, frame_kind::arp);
        } else if (pf.kind == frame_kind::ipv6) {
            check_reply(nd_advertise(in, l3, me, port, big), big, l3, frame_kind::ipv6);
            check_reply(nd_advertise(in, l3, me, port, small, false), small, l3, frame_kind::ipv6);
            check_reply(icmp6_echo_reply(in, l3, me, port, big), big, l3, frame_kind::ipv6);
        } else if (pf.kind == frame_kind::ipv4) {
            check_reply(icmp4_echo_reply(in, l3, me, port, big), big, l3, frame_kind::ipv4);
            check_reply(icmp4_echo_reply(in, l3, me, port, small), small, l3, frame_kind::ipv4);
        }
    }
    // In place, as the switch and the generator answer (on a copy of exactly len bytes).
    std::vector<std::byte> copy(data, data + len);
    const std::uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x01, 0x00};
    if (pf.kind == frame_kind::arp) {
        if (arp_make_reply(copy.data(), copy.size(), l3, mac)) {
            FUZZ_CHECK(arp_target_ip(data + l3) == arp_cview(copy.data() + l3).spa());
        }
    }
    if (nd_is_solicitation(copy.data(), l3, copy.size())) {
        if (nd_make_advert(copy.data(), copy.size(), l3, mac)) {
            const std::size_t n = nd_na_frame_len(l3);
            FUZZ_CHECK(n <= len);
            const std::byte* ip = copy.data() + l3;
            FUZZ_CHECK(ipv6_l4_checksum(ip, ip + 40, na_icmp_len, ip_proto_icmpv6) == 0);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data_u8, std::size_t size) {
    if (size > 65535) { return -1; }  // frames are at most 64 KiB (16-bit offsets)
    const auto* data = reinterpret_cast<const std::byte*>(data_u8);
    const auto len = static_cast<std::uint32_t>(size);
    const parsed_frame l3 = parse_frame<parse_depth::l3>(data, len);
    const parsed_frame l4 = parse_frame<parse_depth::l4>(data, len);
    const parsed_frame full = parse_frame<parse_depth::full>(data, len);
    check_one<parse_depth::l3>(l3, len);
    check_one<parse_depth::l4>(l4, len);
    check_one<parse_depth::full>(full, len);
    check_same_l2(l3, l4);
    check_same_l2(l3, full);
    if (!l3.ok()) { FUZZ_CHECK(l4.status == l3.status && full.status == l3.status); }
    if (!l4.ok()) { FUZZ_CHECK(full.status == l4.status); }
    if (l4.ok()) {
        FUZZ_CHECK(full.l4_off == l4.l4_off && full.l4_len == l4.l4_len && full.sport == l4.sport &&
                   full.dport == l4.dport);
    }
    const parsed_frame sp = parse_frame(std::span<const std::byte>(data, size));
    FUZZ_CHECK(sp.status == full.status && sp.kind == full.kind && sp.l3_off == full.l3_off &&
               sp.l4_off == full.l4_off && sp.bth_off == full.bth_off && sp.roce_payload_len == full.roce_payload_len);

    // ICRC: the check the generator makes on every RoCE frame it accepts.
    const bool icrc_ok = roce_frame_icrc_ok(data, full);
    if (full.ok() && full.is_roce) {
        const std::uint32_t end = full.l4_off + full.l4_len;
        const std::uint32_t want =
            roce_icrc(data + full.l3_off, end - icrc_len - full.l3_off, full.kind == frame_kind::ipv6);
        FUZZ_CHECK(icrc_ok == (want == icrc_load(data + end - icrc_len)));
    } else {
        FUZZ_CHECK(!icrc_ok);
    }
    if (l3.ok()) { responders(data, len, l3); }
    return 0;
}
