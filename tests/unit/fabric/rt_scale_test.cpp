// rt_scale (fabric/rt_scale.hpp): slowing a scenario down for real time.
// Oracles: rates x k and times / k exactly; bytes in flight (rate x time)
// unchanged; the headroom in bytes equals the formula's at the scenario's
// speed (compute_headroom, reference 2.3), not at the scaled one; a DCQCN
// profile whose rates are proportional to the line (hpcc_ns3) resolves to
// the same parameters whether scaled or computed at the scaled line rate.
#include <gtest/gtest.h>

#include "config/gen_config.hpp"
#include "fabric/rt_scale.hpp"
#include "config/switch_config.hpp"
#include "fabric/topology.hpp"
#include "qos/headroom.hpp"

namespace rocelab {
namespace {

constexpr const char* incast = R"(
name: t
duration: 5ms
link: {rate: 100Gbps, delay: 1us}
switches:
  - name: leaf0
    config:
      PORT:
        Ethernet0: {speed: 100Gbps}
        Ethernet1: {}
        Ethernet2: {}
      PFC_WD:
        Ethernet0: {action: drop, detection_time: 200, restoration_time: 400}
hosts: h0..h2
links:
  - {a: h0..h1, b: leaf0:Ethernet0..Ethernet1}
  - {a: h2, b: leaf0:Ethernet2, rate: 25Gbps, delay: 2us}
traffic:
  pattern: incast
  senders: 2
  msg_size: 1MiB
  start_stagger: 10us
  ack_timeout: 14
  dcqcn: nvidia_cx
)";

topology_cfg load() {
    auto r = load_topology_from_string(incast, "t.yaml", ".");
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : topology_cfg{};
}

TEST(rt_scale, factor_brings_the_fastest_cable_to_the_target) {
    const topology_cfg t = load();
    EXPECT_DOUBLE_EQ(rt_factor(t, bits_per_sec{1'000'000'000}), 0.01);
    EXPECT_DOUBLE_EQ(rt_factor(t, bits_per_sec{400'000'000'000ULL}), 1.0) << "already slower: not sped up";
}

TEST(rt_scale, topology_rates_times_and_bytes) {
    topology_cfg t = load();
    ASSERT_EQ(t.nodes.size(), 2u);
    const auto& sw0 = t.nodes[0].kind == topo_node::kind_t::switch_node ? t.nodes[0] : t.nodes[1];
    const std::size_t swi = static_cast<std::size_t>(&sw0 - t.nodes.data());
    // The headroom the switch would compute at 100 Gbps on its own.
    switch_cfg at_speed = sw0.sw;
    ASSERT_EQ(resolve_port_speeds(at_speed, {{0, bits_per_sec{100'000'000'000ULL}},
                                             {1, bits_per_sec{100'000'000'000ULL}},
                                             {2, bits_per_sec{25'000'000'000ULL}}}),
              "");
    const bytes xoff100 = at_speed.ports[0].pgs[3].xoff;
    const bytes xoff25 = at_speed.ports[2].pgs[3].xoff;
    ASSERT_GT(xoff100.v, 0u);
    ASSERT_NE(xoff100.v, xoff25.v);
    const headroom_result ref = compute_headroom(bits_per_sec{100'000'000'000ULL}, 5.0, at_speed.asic);
    EXPECT_EQ(xoff100.v, ref.xoff.v) << "the oracle: the formula at the scenario's speed";

    ASSERT_EQ(rt_scale_topology(t, 0.01), "");
    EXPECT_EQ(t.duration, nanos{500'000'000});
    EXPECT_EQ(t.links[0].cable.rate, bits_per_sec{1'000'000'000});
    EXPECT_EQ(t.links[0].cable.delay, nanos{100'000});
    EXPECT_EQ(t.links.back().cable.rate, bits_per_sec{250'000'000});
    EXPECT_EQ(t.links.back().cable.delay, nanos{200'000});
    const switch_cfg& s = t.nodes[swi].sw;
    ASSERT_TRUE(s.ports[0].speed.has_value());
    EXPECT_EQ(*s.ports[0].speed, bits_per_sec{1'000'000'000});
    ASSERT_TRUE(s.ports[1].speed.has_value()) << "a speed taken from the cable is resolved, then scaled";
    EXPECT_EQ(*s.ports[1].speed, bits_per_sec{1'000'000'000});
    EXPECT_EQ(*s.ports[2].speed, bits_per_sec{250'000'000});
    EXPECT_DOUBLE_EQ(s.ports[0].cable_length_m, 500.0);
    EXPECT_EQ(s.ports[0].wd.detection_time, nanos{20'000'000'000LL});
    EXPECT_EQ(s.ports[0].wd.restoration_time, nanos{40'000'000'000LL});
    // Headroom bytes as at 100/25 Gbps, and kept when the switch resolves
    // its (scaled) speeds again at build.
    switch_cfg again = s;
    ASSERT_EQ(resolve_port_speeds(again, {{0, bits_per_sec{1'000'000'000}}}), "");
    EXPECT_EQ(again.ports[0].pgs[3].xoff, xoff100);
    EXPECT_EQ(again.ports[2].pgs[3].xoff, xoff25);
    const headroom_result at1g = compute_headroom(bits_per_sec{1'000'000'000}, 500.0, at_speed.asic);
    EXPECT_NE(at1g.xoff.v, xoff100.v) << "computing at the scaled speed would have changed the bytes";
}

TEST(rt_scale, generator_flows_dcqcn_and_ack_timeout) {
    topology_cfg t = load();
    const auto& h = t.nodes[t.hosts_node];
    gen_cfg c = h.gen;
    ASSERT_EQ(expand_gen_cfg(c, 3), "");
    ASSERT_EQ(c.flows.size(), 2u);
    const nanos start1 = c.flows[1].start;
    ASSERT_GT(start1.v, 0) << "start_stagger gives the second flow a later start";
    const std::uint8_t code = c.flows[0].qp.ack_timeout;
    const bits_per_sec line{100'000'000'000ULL};
    const dcqcn_cfg before = resolve_dcqcn(c, line);
    rt_scale_gen(c, 0.01, line);
    EXPECT_EQ(c.flows[1].start, nanos{start1.v * 100});
    EXPECT_EQ(c.flows[0].qp.ack_timeout, code + 7) << "2^7 = 128 >= 100";
    const dcqcn_cfg after = resolve_dcqcn(c, bits_per_sec{1'000'000'000});
    EXPECT_EQ(after.rpg_time_reset.v, before.rpg_time_reset.v * 100);
    EXPECT_EQ(after.dce_tcp_rtt.v, before.dce_tcp_rtt.v * 100);
    EXPECT_EQ(after.rpg_ai_rate.v, before.rpg_ai_rate.v / 100);
    EXPECT_EQ(after.rpg_hai_rate.v, before.rpg_hai_rate.v / 100);
    EXPECT_EQ(after.rpg_min_rate.v, before.rpg_min_rate.v / 100);
    EXPECT_EQ(after.rpg_byte_reset, before.rpg_byte_reset) << "bytes are not scaled";
    EXPECT_EQ(c.cnp.cnp_interval.v, 50'000 * 100);

    // hpcc_ns3: rates proportional to the line, so scaling equals
    // resolving at the scaled line.
    gen_cfg p = h.gen;
    p.dcqcn = dcqcn_profile::hpcc_ns3;
    ASSERT_EQ(expand_gen_cfg(p, 3), "");
    const dcqcn_cfg direct = resolve_dcqcn(p, bits_per_sec{1'000'000'000});
    rt_scale_gen(p, 0.01, line);
    const dcqcn_cfg scaled = resolve_dcqcn(p, bits_per_sec{1'000'000'000});
    EXPECT_EQ(scaled.rpg_ai_rate, direct.rpg_ai_rate);
    EXPECT_EQ(scaled.rpg_hai_rate, direct.rpg_hai_rate);
    EXPECT_EQ(scaled.rpg_time_reset.v, direct.rpg_time_reset.v * 100) << "times are scaled, the profile's are not";
}

TEST(rt_scale, metrics_back_on_the_scenario_scale) {
    EXPECT_DOUBLE_EQ(rt_metric_scale("fct_p99", 0.01), 0.01);
    EXPECT_DOUBLE_EQ(rt_metric_scale("collective_mean", 0.01), 0.01);
    EXPECT_DOUBLE_EQ(rt_metric_scale("goodput", 0.01), 100.0);
    EXPECT_DOUBLE_EQ(rt_metric_scale("rate_mean", 0.01), 100.0);
    EXPECT_DOUBLE_EQ(rt_metric_scale("flow_fct", 0.01), 0.01);
    EXPECT_DOUBLE_EQ(rt_metric_scale("goodput_fct", 0.01), 100.0);
    EXPECT_DOUBLE_EQ(rt_metric_scale("queue_peak", 0.01), 1.0) << "bytes";
    EXPECT_DOUBLE_EQ(rt_metric_scale("pfc_rx", 0.01), 1.0) << "counts";
    EXPECT_DOUBLE_EQ(rt_metric_scale("busy", 0.01), 1.0) << "a share";
}

}  // namespace
}  // namespace rocelab
