// switch_config_test.cpp - the YAML loader: examples, defaults, semantics, errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/switch_config.hpp"
#include "rocelab_version.h"

namespace rocelab {
namespace {

std::string conf_path(const char* name) {
    return std::string(ROCELAB_SOURCE_DIR) + "/conf/" + name;
}

switch_cfg load_ok(const std::string& yaml) {
    auto r = load_switch_cfg_from_string(yaml, "test.yaml");
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : switch_cfg{};
}

void expect_same_maps(const qos_maps& a, const qos_maps& b) {
    EXPECT_EQ(a.dscp_to_tc, b.dscp_to_tc);
    EXPECT_EQ(a.pcp_to_tc, b.pcp_to_tc);
    EXPECT_EQ(a.tc_to_queue, b.tc_to_queue);
    EXPECT_EQ(a.tc_to_pg, b.tc_to_pg);
    EXPECT_EQ(a.pfc_prio_to_queue, b.pfc_prio_to_queue);
    EXPECT_EQ(a.default_tc, b.default_tc);
}

void expect_same_sched(const scheduler_cfg& a, const scheduler_cfg& b) {
    for (std::size_t q = 0; q < 8; ++q) {
        EXPECT_EQ(a.queues[q].type, b.queues[q].type) << "queue " << q;
        EXPECT_EQ(a.queues[q].weight, b.queues[q].weight) << "queue " << q;
    }
    EXPECT_EQ(a.quantum, b.quantum);
}

void expect_same_port(const port_cfg& a, const port_cfg& b) {
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.port_id, b.port_id);
    EXPECT_EQ(a.speed, b.speed);
    EXPECT_EQ(a.mtu, b.mtu);
    EXPECT_EQ(a.trust, b.trust);
    EXPECT_EQ(a.vlan, b.vlan);
    EXPECT_EQ(a.vlan_id, b.vlan_id);
    EXPECT_EQ(a.mac, b.mac);
    expect_same_maps(a.maps, b.maps);
    expect_same_sched(a.sched, b.sched);
    for (std::size_t q = 0; q < 8; ++q) {
        EXPECT_EQ(a.limits[q].max_bytes, b.limits[q].max_bytes);
        EXPECT_EQ(a.limits[q].max_packets, b.limits[q].max_packets);
    }
    EXPECT_EQ(a.pfc_enable, b.pfc_enable);
    EXPECT_EQ(a.addresses.size(), b.addresses.size());
    EXPECT_EQ(a.tx_ring_size, b.tx_ring_size);
}

// ------------------------------------------------------------ examples

TEST(switch_config, every_example_loads) {
    for (const char* name :
         {"default.yaml", "l2-bridge-2port.yaml", "l3-leaf-ecmp.yaml", "seed-leaf-8x200g-4x400g.yaml"}) {
        const auto r = load_switch_cfg(conf_path(name));
        EXPECT_TRUE(r) << name << ": " << r.error().message;
    }
}

TEST(switch_config, default_is_azure_roce) {
    const switch_cfg d = default_switch_cfg();
    EXPECT_EQ(d.mode, fwd_mode::l2);
    EXPECT_TRUE(d.ports.empty());
    EXPECT_TRUE(d.routes.empty());
    EXPECT_FALSE(d.switch_mac);
    expect_same_maps(d.port_defaults.maps, azure_roce_maps());
    expect_same_sched(d.port_defaults.sched, azure_roce_scheduler());
    EXPECT_EQ(d.port_defaults.pfc_enable, (1u << 3) | (1u << 4));
    EXPECT_EQ(d.port_defaults.trust, trust_mode::dscp);
    EXPECT_EQ(d.port_defaults.mtu, 9100u);

    expect_same_port(default_port_cfg(), d.port_defaults);
    const port_cfg p = probed_port_cfg(d, 3);
    EXPECT_EQ(p.name, "Ethernet3");
    EXPECT_EQ(p.port_id, 3);
    expect_same_maps(p.maps, azure_roce_maps());
}

TEST(switch_config, default_yaml_equals_built_in_default) {
    const auto r = load_switch_cfg(conf_path("default.yaml"));
    ASSERT_TRUE(r) << r.error().message;
    const switch_cfg d = default_switch_cfg();
    EXPECT_EQ(r->mode, d.mode);
    EXPECT_EQ(r->seed, d.seed);
    EXPECT_EQ(r->fdb_aging, d.fdb_aging);
    EXPECT_EQ(r->status_interval, d.status_interval);
    EXPECT_EQ(r->queue_sample_interval, d.queue_sample_interval);
    EXPECT_EQ(r->tx_ring_size, d.tx_ring_size);
    EXPECT_EQ(r->rx_ring_size, d.rx_ring_size);
    EXPECT_EQ(r->mbufs, d.mbufs);
    EXPECT_EQ(r->mbuf_data_size, d.mbuf_data_size);
    EXPECT_EQ(r->burst, d.burst);
    EXPECT_EQ(r->max_frame, d.max_frame);
    EXPECT_EQ(r->switch_mac, d.switch_mac);
    EXPECT_TRUE(r->ports.empty());
    expect_same_port(r->port_defaults, d.port_defaults);
}

TEST(switch_config, empty_file_is_the_default) {
    const switch_cfg c = load_ok("");
    EXPECT_EQ(c.source, "test.yaml");
    expect_same_port(c.port_defaults, default_switch_cfg().port_defaults);
}

TEST(switch_config, l3_leaf_example) {
    const auto r = load_switch_cfg(conf_path("l3-leaf-ecmp.yaml"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->mode, fwd_mode::l3);
    ASSERT_EQ(r->ports.size(), 4u);
    EXPECT_EQ(r->ports[2].name, "Ethernet2");
    EXPECT_EQ(r->ports[2].port_id, 2);
    EXPECT_EQ(r->ports[2].speed, bits_per_sec{100'000'000'000});
    EXPECT_EQ(r->ports[0].addresses.size(), 2u);
    ASSERT_EQ(r->routes.size(), 4u);
    for (const auto& route : r->routes) {
        ASSERT_EQ(route.nexthops.size(), 2u);  // ECMP over both uplinks
        EXPECT_EQ(route.nexthops[0].ifname, "Ethernet2");
        EXPECT_EQ(route.nexthops[1].ifname, "Ethernet3");  // "::/0" resolves ifname from INTERFACE
    }
    EXPECT_TRUE(r->routes[3].prefix.v6);
    EXPECT_EQ(r->routes[3].prefix.len, 0);
    EXPECT_EQ(r->neighbors.size(), 8u);
    ASSERT_TRUE(r->switch_mac);
    EXPECT_EQ((*r->switch_mac)[5], 0x00);
    EXPECT_EQ((*r->switch_mac)[4], 0x01);
}

TEST(switch_config, seed_leaf_is_non_blocking) {
    const auto r = load_switch_cfg(conf_path("seed-leaf-8x200g-4x400g.yaml"));
    ASSERT_TRUE(r) << r.error().message;
    std::uint64_t down = 0;
    std::uint64_t up = 0;
    for (const auto& p : r->ports) {
        ASSERT_TRUE(p.speed);
        (p.port_id < 8 ? down : up) += p.speed->v;
        EXPECT_EQ(p.pfc_enable, 1u << 3);
    }
    EXPECT_EQ(r->ports.size(), 12u);
    EXPECT_EQ(down, 1'600'000'000'000u);
    EXPECT_EQ(up, down);
    ASSERT_EQ(r->routes.size(), 1u);
    EXPECT_EQ(r->routes[0].nexthops.size(), 4u);
    EXPECT_EQ(r->ports[8].limits[3].max_bytes, bytes{2u << 20});
    EXPECT_EQ(r->ports[0].limits[3].max_bytes, bytes{1u << 20});
}

// ------------------------------------------------------------ semantics

TEST(switch_config, maps_default_key_and_unlisted_entries) {
    const switch_cfg c = load_ok(R"(
PORT:
  Ethernet0: {port_id: 0}
  Ethernet1: {port_id: 1, trust: pcp}
DSCP_TO_TC_MAP:
  ROCE: {"26": "3", "48": "6", "10-12": "2"}
  ALL1: {default: "1", "0": "0"}
PORT_QOS_MAP:
  global: {dscp_to_tc_map: ALL1}
  Ethernet0: {dscp_to_tc_map: ROCE, pfc_enable: "3"}
)");
    ASSERT_EQ(c.ports.size(), 2u);
    const auto& roce = c.ports[0].maps.dscp_to_tc;
    EXPECT_EQ(roce[26], 3);
    EXPECT_EQ(roce[48], 6);
    EXPECT_EQ(roce[11], 2);
    EXPECT_EQ(roce[3], 0);  // unlisted, no default key -> TC 0
    EXPECT_EQ(c.ports[0].pfc_enable, 1u << 3);
    EXPECT_EQ(c.ports[1].maps.dscp_to_tc[0], 0);
    EXPECT_EQ(c.ports[1].maps.dscp_to_tc[5], 1);              // global entry
    EXPECT_EQ(c.ports[1].pfc_enable, (1u << 3) | (1u << 4));  // not overridden
    EXPECT_EQ(c.ports[1].trust, trust_mode::pcp);
    EXPECT_EQ(c.port_defaults.maps.dscp_to_tc[5], 1);
}

TEST(switch_config, schedulers_and_queues) {
    const switch_cfg c = load_ok(R"(
PORT:
  Ethernet0: {device: net_ring0}
  Ethernet4: {device: net_ring1}
SCHEDULER:
  scheduler.0: {type: DWRR, weight: 20}
  heavy: {type: WRR, weight: 60}
QUEUE:
  "Ethernet0,Ethernet4|3-4": {scheduler: heavy}
  "global|0": {max_bytes: 64KiB, max_packets: 100}
  "Ethernet4|0": {scheduler: scheduler.strict}
)");
    ASSERT_EQ(c.ports.size(), 2u);
    EXPECT_EQ(c.ports[0].port_id, -1);
    EXPECT_EQ(c.ports[0].device, "net_ring0");
    EXPECT_EQ(c.ports[0].sched.queues[1].weight, 20u);  // redefined scheduler.0 is the default binding
    EXPECT_EQ(c.ports[0].sched.queues[3].weight, 60u);
    EXPECT_EQ(c.ports[1].sched.queues[4].weight, 60u);
    EXPECT_EQ(c.ports[0].sched.queues[6].type, sched_type::strict);
    EXPECT_EQ(c.ports[1].sched.queues[0].type, sched_type::strict);
    EXPECT_EQ(c.ports[0].sched.queues[0].type, sched_type::dwrr);
    EXPECT_EQ(c.ports[1].limits[0].max_bytes, bytes{64 * 1024});
    EXPECT_EQ(c.ports[1].limits[0].max_packets, 100u);
    EXPECT_EQ(c.port_defaults.limits[0].max_packets, 100u);
}

TEST(switch_config, port_fields) {
    const switch_cfg c = load_ok(R"(
ROCELAB: {max_frame: 9216B, status_interval: 500ms, burst: 64, seed: 42}
SWITCH: {switch: {fdb_aging_time: 30}}
PORT:
  Ethernet0: {port_id: 0, speed: 2.5Gbps, mtu: 1500, mac: "02:aa:bb:cc:dd:ee", vlan_mode: tagged, vlan: 100, tx_ring_size: 64}
)");
    ASSERT_EQ(c.ports.size(), 1u);
    const auto& p = c.ports[0];
    EXPECT_EQ(p.speed, bits_per_sec{2'500'000'000});
    EXPECT_EQ(p.mtu, 1500u);
    ASSERT_TRUE(p.mac);
    EXPECT_EQ((*p.mac)[1], 0xaa);
    EXPECT_EQ(p.vlan, vlan_mode::tagged);
    EXPECT_EQ(p.vlan_id, 100);
    EXPECT_EQ(p.tx_ring_size, std::optional<std::uint16_t>{64});
    EXPECT_EQ(c.fdb_aging, nanos{30'000'000'000});
    EXPECT_EQ(c.status_interval, nanos{500'000'000});
    EXPECT_EQ(c.burst, 64);
    EXPECT_EQ(c.seed, 42u);
}

TEST(switch_config, missing_file) {
    const auto r = load_switch_cfg("/nonexistent/rocelab.yaml");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("/nonexistent/rocelab.yaml: cannot open"), std::string::npos)
        << r.error().message;
}

// ------------------------------------------------------------ errors

struct bad_case {
    const char* name;
    std::vector<std::string> expect;  // substrings of the one message
};

const char* const l3_base = R"(ROCELAB: {mode: l3}
PORT:
  Ethernet0: {port_id: 0}
  Ethernet4: {port_id: 1}
INTERFACE:
  "Ethernet0|10.0.0.1/31": {}
  "Ethernet4|10.0.0.3/31": {}
)";

std::string with_l3(const char* tail) {
    return std::string(l3_base) + tail;
}

TEST(switch_config, bad_configs_give_one_clear_error) {
    const std::vector<std::pair<std::string, bad_case>> cases = {
        {R"(PORT:
  Ethernet0: {port_id: 0, sped: 100Gbps}
)",
         {"unknown field",
          {"bad.yaml:2:27:", "PORT|Ethernet0|sped", "unknown field", "did you mean speed?",
           "accepted fields are"}}},
        {R"(PORT:
  Ethernet0:
    port_id: 0
    speed: 100
)",
         {"missing unit",
          {"bad.yaml:4:12:", "PORT|Ethernet0|speed", "\"100\" has no unit", "100Gbps", "1Mbps..1.6Tbps"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, speed: 2Tbps}
)",
         {"speed out of range",
          {"bad.yaml:2:34:", "PORT|Ethernet0|speed", "\"2Tbps\" is out of range", "1Mbps..1.6Tbps"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, speed: 100G}
)",
         {"unknown unit", {"bad.yaml:2:", "PORT|Ethernet0|speed", "\"100G\"", "did you mean 100Gbps?"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, mtu: 9300}
)",
         {"mtu out of range", {"bad.yaml:2:", "PORT|Ethernet0|mtu", "\"9300\"", "68..9216 bytes"}}},
        {R"(ROCELAB:
  status_interval: 1
)",
         {"time without unit",
          {"bad.yaml:2:20:", "ROCELAB|status_interval", "\"1\" has no unit", "10ms..3600s"}}},
        {R"(DSCP_TO_TC_MAP:
  MINE:
    "64": "1"
)",
         {"bad DSCP key", {"bad.yaml:3:5:", "DSCP_TO_TC_MAP|MINE|64", "\"64\"", "DSCP 0..63"}}},
        {R"(DSCP_TO_TC_MAP:
  MINE:
    "3": "8"
)",
         {"TC out of range", {"bad.yaml:3:10:", "DSCP_TO_TC_MAP|MINE|3", "\"8\"", "TC 0..7"}}},
        {R"(DSCP_TO_TC_MAP:
  MINE: {"3": "3", "1-5": "1"}
)",
         {"DSCP mapped twice", {"bad.yaml:2:", "DSCP_TO_TC_MAP|MINE|1-5", "DSCP 3 is already mapped"}}},
        {R"(PORT_QOS_MAP:
  global: {dscp_to_tc_map: AZUR}
)",
         {"unknown map name",
          {"bad.yaml:2:28:", "PORT_QOS_MAP|global|dscp_to_tc_map", "\"AZUR\"", "names are AZURE",
           "did you mean AZURE?"}}},
        {R"(PORT_QOS_MAP:
  global: {pfc_enable: "3,9"}
)",
         {"bad pfc_enable", {"bad.yaml:2:", "PORT_QOS_MAP|global|pfc_enable", "\"3,9\"", "priorities 0..7"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0}
QUEUE:
  "Ethernet9|3": {scheduler: scheduler.1}
)",
         {"unknown port in QUEUE",
          {"bad.yaml:4:3:", "QUEUE|Ethernet9|3", "unknown port \"Ethernet9\"",
           "ports in PORT are Ethernet0"}}},
        {R"(QUEUE:
  "Ethernet0|3": {scheduler: scheduler.1}
)",
         {"per-port QUEUE without PORT",
          {"bad.yaml:2:", "unknown port \"Ethernet0\"", "PORT table is empty", "global"}}},
        {R"(QUEUE:
  "global|8": {scheduler: scheduler.1}
)",
         {"queue out of range", {"bad.yaml:2:", "QUEUE|global|8", "\"8\"", "0..7"}}},
        {R"(QUEUE:
  "global|3": {scheduler: scheduler.9}
)",
         {"unknown scheduler",
          {"bad.yaml:2:", "QUEUE|global|3|scheduler", "\"scheduler.9\"", "scheduler.0"}}},
        {R"(QUEUE:
  "global|3": {max_bytes: 1048576}
)",
         {"max_bytes without unit", {"bad.yaml:2:", "QUEUE|global|3|max_bytes", "\"1048576\" has no unit"}}},
        {R"(SCHEDULER:
  s: {type: DWRR, weight: 101}
)",
         {"weight out of range", {"bad.yaml:2:", "SCHEDULER|s|weight", "\"101\"", "1..100"}}},
        {R"(SCHEDULER:
  s: {type: FIFO}
)",
         {"bad scheduler type", {"bad.yaml:2:", "SCHEDULER|s|type", "\"FIFO\"", "DWRR, WRR, STRICT"}}},
        {with_l3(R"(ROUTE:
  "10.1.0.0/16": {nexthop: "10.0.0.0", ifname: "Ethernet8"}
)"),
         {"unknown port in ROUTE",
          {"bad.yaml:9:", "ROUTE|10.1.0.0/16|ifname", "unknown port \"Ethernet8\"", "Ethernet0, Ethernet4"}}},
        {with_l3(R"(ROUTE:
  "10.1.0.0/16": {nexthop: "10.0.0.0,10.0.0.2", ifname: "Ethernet0"}
)"),
         {"nexthop/ifname lengths",
          {"bad.yaml:9:", "ROUTE|10.1.0.0/16|ifname", "1 port(s)", "2 address(es)", "same length"}}},
        {with_l3(R"(ROUTE:
  "10.1.0.0/33": {nexthop: "10.0.0.0"}
)"),
         {"bad prefix",
          {"bad.yaml:9:3:", "ROUTE|10.1.0.0/33", "\"10.1.0.0/33\"", "such as \"10.1.0.0/16\""}}},
        {with_l3(R"(ROUTE:
  "10.1.0.1/16": {nexthop: "10.0.0.0"}
)"),
         {"host bits", {"bad.yaml:9:", "ROUTE|10.1.0.1/16", "host bits", "did you mean 10.1.0.0/16?"}}},
        {with_l3(R"(ROUTE:
  "10.1.0.0/16": {nexthop: "10.9.0.0", ifname: "Ethernet0"}
)"),
         {"nexthop off-link", {"bad.yaml:9:", "ROUTE|10.1.0.0/16|nexthop", "\"10.9.0.0\"", "10.0.0.1/31"}}},
        {with_l3(R"(ROUTE:
  "fc00::/64": {nexthop: "10.0.0.0"}
)"),
         {"family mismatch", {"bad.yaml:9:", "ROUTE|fc00::/64|nexthop", "is IPv4 but the prefix is IPv6"}}},
        {with_l3(R"(NEIGH:
  "Ethernet0|10.0.0.0": {neigh: "01:00:5e:00:00:01"}
)"),
         {"multicast neighbour MAC", {"bad.yaml:9:", "NEIGH|Ethernet0|10.0.0.0|neigh", "multicast"}}},
        {with_l3(R"(NEIGH:
  "Ethernet0|10.0.0.2": {neigh: "02:00:00:00:00:10"}
)"),
         {"neighbour off-link", {"bad.yaml:9:", "NEIGH|Ethernet0|10.0.0.2", "not on a subnet of Ethernet0"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0}
INTERFACE:
  "Ethernet0|10.0.0.1/31": {}
)",
         {"INTERFACE in l2 mode", {"bad.yaml:3:1:", "INTERFACE", "only used in L3 mode"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0}
  Ethernet0: {port_id: 1}
)",
         {"duplicate port name", {"bad.yaml:3:3:", "PORT|Ethernet0", "duplicate key", "line 2"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0}
  Ethernet4: {port_id: 0}
)",
         {"duplicate port id",
          {"bad.yaml:3:24:", "PORT|Ethernet4|port_id", "port id 0 is already used by port Ethernet0"}}},
        {R"(PORT:
  Ethernet0: {speed: 100Gbps}
)",
         {"port without device",
          {"bad.yaml:2:3:", "PORT|Ethernet0", "give exactly one of device", "port_id"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, vlan_mode: tagged}
)",
         {"tagged without vlan", {"bad.yaml:2:", "PORT|Ethernet0", "vlan: 1..4094"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, vlan_mode: tagged, vlan: 4095}
)",
         {"vlan out of range", {"bad.yaml:2:", "PORT|Ethernet0|vlan", "\"4095\"", "1..4094"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, trust: dcsp}
)",
         {"bad trust",
          {"bad.yaml:2:", "PORT|Ethernet0|trust", "\"dcsp\"", "dscp, pcp", "did you mean dscp?"}}},
        {R"(DEVICE_METADATA:
  localhost: {mac: "02:00:00:00:01"}
)",
         {"short MAC",
          {"bad.yaml:2:", "DEVICE_METADATA|localhost|mac", "\"02:00:00:00:01\"", "02:00:00:00:01:00"}}},
        {R"(ROCELAB:
  mode: l4
)",
         {"bad mode", {"bad.yaml:2:9:", "ROCELAB|mode", "\"l4\"", "l2, l3"}}},
        {R"(PROT:
  Ethernet0: {port_id: 0}
)",
         {"unknown table", {"bad.yaml:1:1:", "PROT", "unknown table", "did you mean PORT?"}}},
        {R"(BUFFER_PROFILE:
  pg_lossless: {size: 56368}
)",
         {"unsupported SONiC table", {"bad.yaml:1:1:", "BUFFER_PROFILE", "not supported"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, speed: [100Gbps]}
)",
         {"list where a scalar belongs", {"bad.yaml:2:", "PORT|Ethernet0|speed", "got a list"}}},
        {R"(PORT:
  Ethernet0: {port_id: 0
ROCELAB: {}
)",
         {"malformed YAML", {"bad.yaml:", "malformed YAML"}}},
        {with_l3(R"(  "Ethernet4|10.0.0.1/30": {}
)"),
         {"address assigned twice",
          {"bad.yaml:8:3:", "INTERFACE|Ethernet4|10.0.0.1/30", "already assigned"}}},
        {with_l3(R"(ROUTE:
  "10.1.0.0/16": {nexthop: "192.168.0.1"}
)"),
         {"next hop on no subnet",
          {"bad.yaml:9:", "ROUTE|10.1.0.0/16|nexthop", "\"192.168.0.1\"", "not on any INTERFACE subnet"}}},
        {"- just\n- a list\n", {"not a mapping", {"bad.yaml:1:1:", "must be a mapping"}}},
    };
    for (const auto& [yaml, c] : cases) {
        const auto r = load_switch_cfg_from_string(yaml, "bad.yaml");
        ASSERT_FALSE(r) << c.name << ": loaded but should not";
        const std::string& m = r.error().message;
        if (std::getenv("ROCELAB_SHOW_ERRORS") != nullptr) {
            std::printf("%s\n", m.c_str());
        }
        EXPECT_EQ(m.find('\n'), std::string::npos) << c.name << ": one line: " << m;
        for (const auto& s : c.expect) {
            EXPECT_NE(m.find(s), std::string::npos) << c.name << ": expected \"" << s << "\" in:\n  " << m;
        }
    }
}

}  // namespace
}  // namespace rocelab
