// Round trip through real bytes: requester -> build_roce_v4 -> parse_frame ->
// responder -> ACK frame -> parse -> requester, with ICRC checked each way.
#include "roce/frame.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "proto/parse.hpp"

namespace rocelab {
namespace {

TEST(frame, data_and_ack_round_trip_through_bytes) {
    qp_cfg req_cfg;
    req_cfg.src_qpn = 0x11;
    req_cfg.dst_qpn = 0x22;
    req_cfg.start_psn = 0xFFFFFE;
    req_cfg.pmtu = 256;
    req_cfg.remote_va = 0x7f0000001000;
    req_cfg.rkey = 0x1234;
    qp_cfg rsp_cfg = req_cfg;
    rsp_cfg.src_qpn = 0x22;
    rsp_cfg.dst_qpn = 0x11;
    rsp_cfg.ack_coalesce = 2;
    requester rq{req_cfg};
    responder rs{rsp_cfg};
    rq.post_message(nanos{0}, bytes{1000});  // 4 packets across the PSN wrap
    rq.post_message(nanos{0}, bytes{16});

    std::vector<std::byte> payload(4096, std::byte{0xAB});
    std::array<std::byte, 2048> buf{};
    roce_v4_params dp{};
    dp.src_ip = 0xC0A80101;
    dp.dst_ip = 0xC0A80102;
    roce_v4_params ap = dp;
    std::swap(ap.src_ip, ap.dst_ip);
    tx_desc d;
    int packets = 0;
    int reth_seen = 0;
    while (rq.next(nanos{packets}, d)) {
        ++packets;
        fill_data_params(req_cfg, d, std::span<const std::byte>(payload.data(), d.len), dp);
        const std::uint32_t n = build_roce_v4(buf, dp);
        ASSERT_EQ(n, roce_v4_wire_len(d.opcode, d.len));
        const parsed_frame pf = parse_frame(buf.data(), n);
        ASSERT_TRUE(pf.ok());
        ASSERT_TRUE(pf.is_roce);
        ASSERT_TRUE(roce_frame_icrc_ok(buf.data(), pf));
        EXPECT_EQ(pf.sport, roce_udp_sport(0x11, 0x22));
        EXPECT_EQ(pf.dscp, req_cfg.dscp);
        EXPECT_EQ(pf.ecn, ecn_ect0);
        EXPECT_EQ(pf.dest_qpn, 0x22u);
        if (roce_ext_offset(pf.opcode, roce_hdr::reth) >= 0) {
            const reth_fields r = read_reth(buf.data() + pf.bth_off + bth_len);
            EXPECT_EQ(r.va, req_cfg.remote_va);
            EXPECT_EQ(r.rkey, 0x1234u);
            EXPECT_EQ(r.dma_len, d.msg_size);
            ++reth_seen;
        }
        const rx_verdict v = rs.on_packet(nanos{packets}, pf.psn, pf.opcode, pf.ack_req, pf.roce_payload_len);
        ASSERT_EQ(v.status, rx_status::accepted);
        if (v.reply == rx_reply::none) {
            continue;
        }
        fill_reply_params(rsp_cfg, v, ap);
        const std::uint32_t m = build_roce_v4(buf, ap);
        ASSERT_EQ(m, 62u);
        const parsed_frame af = parse_frame(buf.data(), m);
        ASSERT_TRUE(af.ok());
        ASSERT_TRUE(roce_frame_icrc_ok(buf.data(), af));
        EXPECT_EQ(af.opcode, roce_op::rc_ack);
        EXPECT_EQ(af.dest_qpn, 0x11u);
        const aeth_fields a = read_aeth(buf.data() + af.bth_off + bth_len);
        rq.on_aeth(nanos{packets}, af.psn, a.syndrome, a.msn);
    }
    EXPECT_EQ(packets, 5);
    EXPECT_EQ(reth_seen, 2);  // WRITE_FIRST and WRITE_ONLY
    EXPECT_EQ(rs.counters().rx_bytes, 1016u);
    EXPECT_EQ(rq.counters().messages_completed, 2u);
    EXPECT_EQ(rq.counters().msn_mismatch, 0u);
    EXPECT_EQ(rq.unacked(), 0u);
}

}  // namespace
}  // namespace rocelab
