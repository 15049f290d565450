// ack_template_test.cpp - ack_template_v4 against build_roce_v4 and an outside ICRC.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "core/rng.hpp"
#include "icrc_zlib.hpp"
#include "proto/ack_template.hpp"
#include "proto/build.hpp"

namespace rocelab {
namespace {

roce_v4_params random_reply(rng& r, bool vlan) {
    roce_v4_params p;
    for (auto& b : p.dst_mac) { b = static_cast<std::uint8_t>(r.next_u32()); }
    for (auto& b : p.src_mac) { b = static_cast<std::uint8_t>(r.next_u32()); }
    p.vlan_id = vlan ? static_cast<std::int16_t>(r.next_u32() % 4096) : -1;
    p.pcp = static_cast<std::uint8_t>(r.next_u32() % 8);
    p.src_ip = r.next_u32();
    p.dst_ip = r.next_u32();
    p.dscp = static_cast<std::uint8_t>(r.next_u32() % 64);
    p.ecn = static_cast<std::uint8_t>(r.next_u32() % 4);
    p.ttl = static_cast<std::uint8_t>(1 + r.next_u32() % 255);
    p.ip_id = static_cast<std::uint16_t>(r.next_u32());
    p.sport = static_cast<std::uint16_t>(0xC000 | r.next_u32());
    p.bth.opcode = roce_op::rc_ack;
    p.bth.dest_qpn = r.next_u32() & 0xFFFFFF;
    return p;
}

// Every reply from the template is build_roce_v4's, byte for byte, over
// random QPs (tagged and not) and random PSN / syndrome / MSN (their edges
// too), and its ICRC is right by an oracle that shares no code with lib/proto.
TEST(AckTemplate, WritesWhatBuildRoceV4Writes) {
    rng r(23);
    int checked = 0;
    for (int q = 0; q < 64; ++q) {
        const roce_v4_params base = random_reply(r, q % 4 == 3);
        ack_template_v4 t;
        ASSERT_TRUE(t.init(base));
        EXPECT_EQ(t.len(), (q % 4 == 3) ? 66u : 62u);
        for (int i = 0; i < 500; ++i) {
            std::uint32_t psn = r.next_u32() & 0xFFFFFF;
            std::uint32_t msn = r.next_u32() & 0xFFFFFF;
            auto syn = static_cast<std::uint8_t>(r.next_u32());
            if (i < 4) {  // the edges of each field
                psn = (i & 1) ? 0xFFFFFF : 0;
                msn = (i & 2) ? 0xFFFFFF : 0;
                syn = (i & 1) ? 0xFF : 0;
            }
            roce_v4_params p = base;
            p.bth.psn = psn;
            p.ext.aeth = aeth_fields{syn, msn};
            std::array<std::byte, 128> want{};
            const std::uint32_t wl = build_roce_v4(std::span<std::byte>(want.data(), want.size()), p);
            std::array<std::byte, 128> got{};
            const std::uint32_t gl = t.write(got.data(), psn, syn, msn);
            ASSERT_EQ(gl, wl);
            ASSERT_EQ(std::vector<std::byte>(got.begin(), got.begin() + gl),
                      std::vector<std::byte>(want.begin(), want.begin() + wl))
                << "QP " << q << " psn " << psn << " syndrome " << int(syn) << " msn " << msn;
            ASSERT_TRUE(test::ref_icrc_ok(got.data(), gl));
            ++checked;
        }
    }
    EXPECT_EQ(checked, 64 * 500);
}

TEST(AckTemplate, RefusesWhatItCannotStandFor) {
    rng r(5);
    ack_template_v4 t;
    roce_v4_params p = random_reply(r, false);
    p.bth.opcode = roce_op::rc_write_only;
    EXPECT_FALSE(t.init(p));
    EXPECT_FALSE(t.ready());
    p = random_reply(r, false);
    const std::array<std::byte, 4> pl{};
    p.payload = std::span<const std::byte>(pl.data(), pl.size());
    EXPECT_FALSE(t.init(p));
    EXPECT_TRUE(t.init(random_reply(r, false)));
    EXPECT_TRUE(t.ready());
}

}  // namespace
}  // namespace rocelab
