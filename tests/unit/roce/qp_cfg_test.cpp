// Unit tests for roce/qp_cfg.hpp: UDP source port derivation, validation,
// timeouts and opcode selection.
#include "roce/qp_cfg.hpp"

#include <gtest/gtest.h>

namespace rocelab {
namespace {

TEST(qp_cfg, udp_sport_matches_linux_derivation) {
    // Values computed independently (Python) from the ib_verbs.h formulas.
    EXPECT_EQ(roce_udp_sport(0x11, 0x22), 0xC242);
    EXPECT_EQ(roce_udp_sport(0x123456, 0x654321), 0xF787);
    EXPECT_EQ(roce_udp_sport(0xFFFFFF, 0xFFFFFF), 0xFF21);
    EXPECT_EQ(roce_udp_sport(1, 1), 0xC001);
    // Symmetric, always in the ephemeral range.
    for (std::uint32_t a = 1; a < 3000; a += 7) {
        const std::uint16_t s = roce_udp_sport(a, a * 31 + 5);
        EXPECT_EQ(s, roce_udp_sport(a * 31 + 5, a));
        EXPECT_GE(s, 0xC000);
    }
    qp_cfg c;
    c.src_qpn = 0x11;
    c.dst_qpn = 0x22;
    EXPECT_EQ(qp_udp_sport(c), 0xC242);
    c.udp_sport = 0xD000;
    EXPECT_EQ(qp_udp_sport(c), 0xD000);
}

TEST(qp_cfg, validation_names_field_and_range) {
    qp_cfg c;
    EXPECT_EQ(qp_cfg_check(c), "");
    c.pmtu = 1000;
    const std::string e = qp_cfg_check(c);
    EXPECT_NE(e.find("qp.pmtu"), std::string::npos) << e;
    EXPECT_NE(e.find("1000"), std::string::npos) << e;
    EXPECT_NE(e.find("4096"), std::string::npos) << e;
    for (std::uint32_t p : {256u, 512u, 1024u, 2048u, 4096u}) {
        c.pmtu = p;
        EXPECT_EQ(qp_cfg_check(c), "");
    }
    c = qp_cfg{};
    c.src_qpn = 1u << 24;
    EXPECT_NE(qp_cfg_check(c).find("src_qpn"), std::string::npos);
    c = qp_cfg{};
    c.retry_cnt = 8;
    EXPECT_NE(qp_cfg_check(c).find("retry_cnt"), std::string::npos);
    c = qp_cfg{};
    c.ack_timeout = 32;
    EXPECT_NE(qp_cfg_check(c).find("ack_timeout"), std::string::npos);
    c = qp_cfg{};
    c.window = 0;
    EXPECT_NE(qp_cfg_check(c).find("window"), std::string::npos);
    c = qp_cfg{};
    c.udp_sport = 1234;
    EXPECT_NE(qp_cfg_check(c).find("udp_sport"), std::string::npos);
    c = qp_cfg{};
    c.ack_coalesce = 0;
    EXPECT_NE(qp_cfg_check(c).find("ack_coalesce"), std::string::npos);
}

TEST(qp_cfg, ack_timeout_and_rnr_timer) {
    EXPECT_EQ(ack_timeout_of(0), nanos::max());
    EXPECT_EQ(ack_timeout_of(1).v, 8192);
    EXPECT_EQ(ack_timeout_of(14).v, 67'108'864);   // ~67 ms
    EXPECT_EQ(ack_timeout_of(16).v, 268'435'456);  // ~268 ms
    EXPECT_EQ(ack_timeout_of(31).v, 4096LL << 31);
    EXPECT_EQ(rnr_timer_of(0).v, 655'360'000);
    EXPECT_EQ(rnr_timer_of(16).v, 2'560'000);
    EXPECT_EQ(rnr_timer_of(31).v, 491'520'000);
}

TEST(qp_cfg, packets_and_opcodes) {
    EXPECT_EQ(packets_of(0, 1024), 1u);
    EXPECT_EQ(packets_of(1, 1024), 1u);
    EXPECT_EQ(packets_of(1024, 1024), 1u);
    EXPECT_EQ(packets_of(1025, 1024), 2u);
    EXPECT_EQ(packets_of(65536, 4096), 16u);
    EXPECT_EQ(rc_opcode(op_family::rdma_write, true, true), roce_op::rc_write_only);
    EXPECT_EQ(rc_opcode(op_family::rdma_write, true, false), roce_op::rc_write_first);
    EXPECT_EQ(rc_opcode(op_family::rdma_write, false, false), roce_op::rc_write_middle);
    EXPECT_EQ(rc_opcode(op_family::rdma_write, false, true), roce_op::rc_write_last);
    EXPECT_EQ(rc_opcode(op_family::send, true, true), roce_op::rc_send_only);
    EXPECT_EQ(rc_opcode(op_family::send, true, false), roce_op::rc_send_first);
    EXPECT_EQ(rc_opcode(op_family::send, false, false), roce_op::rc_send_middle);
    EXPECT_EQ(rc_opcode(op_family::send, false, true), roce_op::rc_send_last);
    // RETH only on FIRST/ONLY of a WRITE.
    EXPECT_EQ(roce_v4_wire_len(roce_op::rc_write_first, 1024), 14u + 20 + 8 + 12 + 16 + 1024 + 4);
    EXPECT_EQ(roce_v4_wire_len(roce_op::rc_write_middle, 1024), 14u + 20 + 8 + 12 + 1024 + 4);
    EXPECT_EQ(roce_v6_wire_len(roce_op::rc_send_only, 16), 94u);                         // reference vector F
    EXPECT_EQ(roce_v4_wire_len(roce_op::rc_send_last, 13), 14u + 20 + 8 + 12 + 16 + 4);  // padded
}

}  // namespace
}  // namespace rocelab
