// BREAKOUT_CFG and PORT lanes (lib/config/tables/breakout_cfg.cpp): a 400G
// port of 8 lanes as 1x400G, 2x200G or 4x100G[40G]; ports without a speed
// take the mode's; a mode the lanes cannot hold, a missing or misplaced
// port, a speed the mode does not run, a malformed mode and a lane used
// twice each give one line naming the table, the port and the lanes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/switch_config.hpp"

namespace rocelab {
namespace {

constexpr bits_per_sec gbps(std::uint64_t g) { return bits_per_sec{g * 1'000'000'000}; }

const switch_cfg load(const std::string& yaml) {
    auto r = load_switch_cfg_from_string(yaml, "bk.yaml");
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : switch_cfg{};
}

std::string error_of(const std::string& yaml) {
    auto r = load_switch_cfg_from_string(yaml, "bk.yaml");
    EXPECT_FALSE(r) << "loaded but should not:\n" << yaml;
    if (r) { return ""; }
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
    return r.error().message;
}

const char* const two_by_200 = R"(PORT:
  Ethernet0: {port_id: 0, lanes: "0,1,2,3"}
  Ethernet4: {port_id: 1, lanes: "4,5,6,7", speed: 200Gbps}
  Ethernet8: {port_id: 2, lanes: "8,9,10,11,12,13,14,15", speed: 400Gbps}
BREAKOUT_CFG:
  Ethernet0: {brkout_mode: 2x200G}
  Ethernet8: {brkout_mode: 1x400G}
)";

TEST(Breakout, TwoBy200AndOneBy400) {
    const switch_cfg c = load(two_by_200);
    ASSERT_EQ(c.ports.size(), 3u);
    EXPECT_EQ(c.ports[0].lanes, (std::vector<std::uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(c.ports[0].speed, gbps(200)) << "a port without a speed takes the mode's";
    EXPECT_EQ(c.ports[1].speed, gbps(200));
    EXPECT_EQ(c.ports[2].speed, gbps(400));
    ASSERT_EQ(c.breakouts.size(), 2u);
    const breakout_cfg& b = c.breakouts[0];
    EXPECT_EQ(b.port, "Ethernet0");
    EXPECT_EQ(b.mode, "2x200G");
    EXPECT_EQ(b.count, 2u);
    EXPECT_EQ(b.speed, gbps(200));
    EXPECT_EQ(b.lane_speed, gbps(50));
    EXPECT_EQ(b.lanes.size(), 8u);
    EXPECT_EQ(b.ports, (std::vector<std::string>{"Ethernet0", "Ethernet4"}));
    EXPECT_EQ(c.breakouts[1].ports, (std::vector<std::string>{"Ethernet8"}));
}

TEST(Breakout, FourBy100WithAlternativeSpeed) {
    const switch_cfg c = load(R"(PORT:
  Ethernet0: {port_id: 0, lanes: "0,1"}
  Ethernet2: {port_id: 1, lanes: "2,3", speed: 40Gbps}
  Ethernet4: {port_id: 2, lanes: "4,5"}
  Ethernet6: {port_id: 3, lanes: "6,7"}
BREAKOUT_CFG:
  Ethernet0: {brkout_mode: "4x100G[40G]"}
)");
    ASSERT_EQ(c.breakouts.size(), 1u);
    EXPECT_EQ(c.breakouts[0].alt_speeds, std::vector<bits_per_sec>{gbps(40)});
    EXPECT_EQ(c.ports[1].speed, gbps(40));
    EXPECT_EQ(c.ports[3].speed, gbps(100));
}

TEST(Breakout, LanesWithoutBreakoutAreOnlyChecked) {
    const switch_cfg c = load("PORT:\n  Ethernet0: {port_id: 0, lanes: \"0,1,2,3\"}\n");
    EXPECT_TRUE(c.breakouts.empty());
    EXPECT_FALSE(c.ports[0].speed) << "no breakout: the speed stays the driver's";
}

TEST(Breakout, ErrorsAreOneLine) {
    struct bad {
        std::string yaml;
        std::vector<std::string> want;
    };
    const std::string base = two_by_200;
    const auto with = [&](const std::string& from, const std::string& to) {
        std::string s = base;
        s.replace(s.find(from), from.size(), to);
        return s;
    };
    const std::vector<bad> cases = {
        // The issue's "a breakout mode the port's speed cannot hold".
        {with("Ethernet0: {brkout_mode: 2x200G}", "Ethernet0: {brkout_mode: 2x400G}"),
         {"bk.yaml:6:", "BREAKOUT_CFG|Ethernet0|brkout_mode", "2x400G needs 800Gbps", "8 lanes", "50Gbps",
          "hold 400Gbps"}},
        {with("Ethernet0: {brkout_mode: 2x200G}", "Ethernet0: {brkout_mode: 2x200G, lane_speed: 25Gbps}"),
         {"BREAKOUT_CFG|Ethernet0|brkout_mode", "needs 400Gbps", "25Gbps (lane_speed) hold 200Gbps"}},
        {with("\"4,5,6,7\"", "\"4,5,6\""), {"BREAKOUT_CFG|Ethernet0", "PORT Ethernet4 has lanes 4,5,6, not lanes 4-7"}},
        {with("  Ethernet4: {port_id: 1, lanes: \"4,5,6,7\", speed: 200Gbps}\n", ""),
         {"BREAKOUT_CFG|Ethernet0", "2x200G makes 2 ports of 4 lanes from lanes 0-7: no PORT has lanes 4-7"}},
        {with("speed: 200Gbps}", "speed: 100Gbps}"),
         {"BREAKOUT_CFG|Ethernet0", "PORT Ethernet4 has speed 100Gbps, but 2x200G runs its ports at 200Gbps"}},
        {with("2x200G", "3x100G"), {"BREAKOUT_CFG|Ethernet0|brkout_mode", "\"3x100G\"", "2x200G or 4x100G[40G]"}},
        {with("2x200G", "2x200"), {"BREAKOUT_CFG|Ethernet0|brkout_mode", "\"2x200\""}},
        {with("Ethernet0: {brkout_mode: 2x200G}", "Ethernet2: {brkout_mode: 2x200G}"),
         {"BREAKOUT_CFG|Ethernet2", "no PORT Ethernet2"}},
        {with("Ethernet0: {brkout_mode: 2x200G}", "Ethernet0: {}"), {"BREAKOUT_CFG|Ethernet0", "no brkout_mode"}},
        {with("\"8,9,10,11,12,13,14,15\"", "\"7,8,9,10,11,12,13,14\""),
         {"PORT|Ethernet8|lanes", "lane 7 is already used by port Ethernet4"}},
        {with("\"0,1,2,3\"", "\"0,1,x\""), {"PORT|Ethernet0|lanes", "a comma list of lane numbers"}},
        {with("Ethernet8: {brkout_mode: 1x400G}", "Ethernet4: {brkout_mode: 1x200G}"),
         {"BREAKOUT_CFG|Ethernet4", "PORT Ethernet4 is already in BREAKOUT_CFG|Ethernet0"}},
    };
    for (const auto& c : cases) {
        const std::string m = error_of(c.yaml);
        for (const auto& w : c.want) { EXPECT_NE(m.find(w), std::string::npos) << "want \"" << w << "\" in: " << m; }
    }
}

}  // namespace
}  // namespace rocelab
