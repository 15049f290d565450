// ack_template.cpp - see ack_template.hpp.
#include "proto/ack_template.hpp"

#include "proto/crc32.hpp"
#include "proto/icrc.hpp"

namespace rocelab {

namespace {

// The covered string of an ACK's ICRC: IPv4 (20) + UDP (8) + BTH (12) + AETH (4).
// The 7 patched bytes, by their distance from its end: PSN at BTH+9..11
// (7, 6, 5), syndrome at BTH+12 (4), MSN at BTH+13..15 (3, 2, 1).
constexpr std::uint32_t dist[7] = {7, 6, 5, 4, 3, 2, 1};

}  // namespace

const ack_template_v4::tables& ack_template_v4::shared_tables() noexcept {
    static const tables t = [] {
        tables r{};
        for (std::size_t b = 0; b < 7; ++b) {
            std::byte s[8]{};
            for (std::uint32_t v = 0; v < 256; ++v) {
                s[0] = std::byte(v);
                const std::uint32_t a = crc32(0, s, dist[b]);
                s[0] = std::byte{0};
                r[b][v] = a ^ crc32(0, s, dist[b]);
            }
        }
        return r;
    }();
    return t;
}

bool ack_template_v4::init(const roce_v4_params& p) noexcept {
    _len = 0;
    if (p.bth.opcode != roce_op::rc_ack || !p.payload.empty()) { return false; }
    roce_v4_params z = p;
    z.bth.psn = 0;
    z.ext.aeth = aeth_fields{0, 0};
    _frame.fill(std::byte{0});
    const std::uint32_t l2 = eth_hdr_len + (p.vlan_id >= 0 ? vlan_tag_len : 0);
    const std::uint32_t want = l2 + ipv4_min_hdr_len + udp_hdr_len + bth_len + aeth_len + icrc_len;
    const std::uint32_t l = build_roce_v4(std::span<std::byte>(_frame.data(), _frame.size()), z);
    if (l != want || want < eth_min_frame_len) { return false; }
    _t = &shared_tables();
    _icrc0 = icrc_load(_frame.data() + l - icrc_len);
    _bth = l2 + ipv4_min_hdr_len + udp_hdr_len;
    _len = l;
    return true;
}

}  // namespace rocelab
