// Unit tests for qos/qos_maps.hpp: the AZURE + RoCE classification profile.
#include "qos/qos_maps.hpp"

#include <gtest/gtest.h>

namespace rocelab {
namespace {

TEST(qos_maps, azure_roce_dscp_classification) {
    constexpr qos_maps m = azure_roce_maps();
    EXPECT_EQ(m.classify(trust_mode::dscp, 3, -1), 3);
    EXPECT_EQ(m.classify(trust_mode::dscp, 26, -1), 3);  // RoCE deviation
    EXPECT_EQ(m.classify(trust_mode::dscp, 48, -1), 6);  // CNP
    EXPECT_EQ(m.classify(trust_mode::dscp, 46, -1), 5);
    EXPECT_EQ(m.classify(trust_mode::dscp, 8, -1), 0);
    EXPECT_EQ(m.classify(trust_mode::dscp, 4, -1), 4);
    EXPECT_EQ(m.classify(trust_mode::dscp, 5, -1), 2);
    for (int d : {0, 1, 2, 6, 7, 9, 10, 24, 25, 27, 32, 47, 49, 63}) {
        EXPECT_EQ(m.classify(trust_mode::dscp, d, 5), 1) << d;
    }
    // non-IP on a DSCP port -> default_tc
    EXPECT_EQ(m.classify(trust_mode::dscp, -1, 3), m.default_tc);
    static_assert(azure_roce_maps().classify(trust_mode::dscp, 26, -1) == 3);
}

TEST(qos_maps, pcp_trust_and_default) {
    qos_maps m = azure_roce_maps();
    for (int p = 0; p < 8; ++p) {
        EXPECT_EQ(m.classify(trust_mode::pcp, 48, p), p);
    }
    EXPECT_EQ(m.classify(trust_mode::pcp, 3, -1), 0);  // untagged -> default_tc
    m.default_tc = 2;
    EXPECT_EQ(m.classify(trust_mode::pcp, 3, -1), 2);
    EXPECT_EQ(m.classify(trust_mode::dscp, -1, -1), 2);
}

TEST(qos_maps, azure_roce_queue_and_pg_maps) {
    constexpr qos_maps m = azure_roce_maps();
    for (int tc = 0; tc < 8; ++tc) {
        EXPECT_EQ(m.tc_to_queue[tc], tc);
        EXPECT_EQ(m.pfc_prio_to_queue[tc], tc);
    }
    EXPECT_EQ(m.tc_to_pg[3], 3);
    EXPECT_EQ(m.tc_to_pg[4], 4);
    EXPECT_EQ(m.tc_to_pg[7], 7);
    EXPECT_EQ(m.tc_to_pg[0], 0);
    EXPECT_EQ(m.tc_to_pg[6], 0);
}

}  // namespace
}  // namespace rocelab
