// A frame between MPI ranks (vt::mbuf_traits::serialize / deserialize,
// issue 21): the sender's bytes become a new mbuf of the receiver's pool,
// byte for byte and of the same length; the sender's mbuf goes back to its
// pool; and a frame that cannot be taken is an error naming why, not a
// null mbuf on the receiver's wire.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "vt/fabric.hpp"
#include "vt_harness.hpp"

namespace rocelab::test {
namespace {

rte_mbuf* frame_of(rte_mempool* mp, std::uint16_t len, std::uint8_t seed) {
    rte_mbuf* m = rte_pktmbuf_alloc(mp);
    EXPECT_NE(m, nullptr);
    if (m == nullptr) { return nullptr; }
    char* d = rte_pktmbuf_append(m, len);
    EXPECT_NE(d, nullptr);
    for (std::uint16_t i = 0; i < len; ++i) { d[i] = static_cast<char>(seed + i * 7); }
    return m;
}

TEST(vt_rank_frames, a_frame_crosses_as_its_bytes_into_the_receivers_pool) {
    init_vt_eal("vt_fabric_test");
    pool_guard sender(1024, "rk_send");  // (its lcore cache of 256 needs n >= 384)
    pool_guard receiver(1024, "rk_recv");
    ASSERT_NE(sender.mp, nullptr);
    ASSERT_NE(receiver.mp, nullptr);
    vt::mbuf_traits tr;
    tr.pool = receiver.mp;
    std::vector<std::byte> wire;
    const std::uint16_t lens[] = {60, 1082, 2000};  // pool_guard: 2048 B of data room
    std::vector<std::vector<std::byte>> sent;
    for (std::size_t k = 0; k < 3; ++k) {
        rte_mbuf* m = frame_of(sender.mp, lens[k], static_cast<std::uint8_t>(k));
        ASSERT_NE(m, nullptr);
        const auto* d = rte_pktmbuf_mtod(m, const std::byte*);
        sent.emplace_back(d, d + lens[k]);
        const std::size_t at = wire.size();
        tr.serialize(m, wire);
        EXPECT_EQ(wire.size() - at, lens[k]);
    }
    EXPECT_EQ(sender.in_use(), 0u) << "serialize gives the sender's mbuf back";
    std::size_t at = 0;
    for (std::size_t k = 0; k < 3; ++k) {
        rte_mbuf* m = tr.deserialize(wire.data() + at, lens[k]);
        ASSERT_NE(m, nullptr);
        EXPECT_EQ(m->pool, receiver.mp);
        EXPECT_EQ(rte_pktmbuf_pkt_len(m), lens[k]);
        EXPECT_EQ(m->nb_segs, 1);
        EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(m, const void*), sent[k].data(), lens[k]), 0) << "frame " << k;
        rte_pktmbuf_free(m);
        at += lens[k];
    }
    EXPECT_EQ(receiver.in_use(), 0u);
}

TEST(vt_rank_frames, a_frame_that_cannot_be_taken_is_an_error_naming_why) {
    init_vt_eal("vt_fabric_test");
    pool_guard receiver(1024, "rk_small");
    ASSERT_NE(receiver.mp, nullptr);
    std::vector<std::byte> bytes(100, std::byte{0x5a});
    vt::mbuf_traits none;
    EXPECT_THROW((void)none.deserialize(bytes.data(), bytes.size()), std::runtime_error);
    vt::mbuf_traits tr;
    tr.pool = receiver.mp;
    std::vector<std::byte> huge(RTE_MBUF_DEFAULT_BUF_SIZE + 1, std::byte{1});
    try {
        (void)tr.deserialize(huge.data(), huge.size());
        ADD_FAILURE() << "a frame larger than the data room was taken";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("data room"), std::string::npos) << e.what();
    }
    EXPECT_EQ(receiver.in_use(), 0u) << "the refused frame's mbuf went back";
    // Exhausted: hold every mbuf (the lcore cache included), then one more frame.
    std::vector<rte_mbuf*> held;
    while (rte_mbuf* m = rte_pktmbuf_alloc(receiver.mp)) { held.push_back(m); }
    try {
        (void)tr.deserialize(bytes.data(), bytes.size());
        ADD_FAILURE() << "a frame was taken from an exhausted pool";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("exhausted"), std::string::npos) << e.what();
    }
    for (rte_mbuf* m : held) { rte_pktmbuf_free(m); }
}

}  // namespace
}  // namespace rocelab::test
