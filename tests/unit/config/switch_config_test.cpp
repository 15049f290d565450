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
    for (std::size_t g = 0; g < 8; ++g) {
        const pg_buffer_cfg& x = a.pgs[g];
        const pg_buffer_cfg& y = b.pgs[g];
        EXPECT_EQ(x.configured, y.configured) << "pg " << g;
        EXPECT_EQ(x.reserved, y.reserved) << "pg " << g;
        EXPECT_EQ(x.mode, y.mode) << "pg " << g;
        EXPECT_EQ(x.dynamic_th, y.dynamic_th) << "pg " << g;
        EXPECT_EQ(x.static_th, y.static_th) << "pg " << g;
        EXPECT_EQ(x.xoff, y.xoff) << "pg " << g;
        EXPECT_EQ(x.xon, y.xon) << "pg " << g;
        EXPECT_EQ(x.xon_offset, y.xon_offset) << "pg " << g;
        EXPECT_EQ(x.xoff_auto, y.xoff_auto) << "pg " << g;
        EXPECT_EQ(x.reserved_auto, y.reserved_auto) << "pg " << g;
    }
    for (std::size_t q = 0; q < 8; ++q) {
        const wred_cfg& x = a.wred[q];
        const wred_cfg& y = b.wred[q];
        EXPECT_EQ(x.enabled, y.enabled) << "queue " << q;
        EXPECT_EQ(x.mark_ect, y.mark_ect) << "queue " << q;
        EXPECT_EQ(x.drop_enable, y.drop_enable) << "queue " << q;
        EXPECT_EQ(x.kmin, y.kmin) << "queue " << q;
        EXPECT_EQ(x.kmax, y.kmax) << "queue " << q;
        EXPECT_EQ(x.pmax, y.pmax) << "queue " << q;
        EXPECT_EQ(x.lo, y.lo) << "queue " << q;
        EXPECT_EQ(x.hi, y.hi) << "queue " << q;
        EXPECT_EQ(x.slope, y.slope) << "queue " << q;
    }
}

void expect_same_pool(const buffer_pool_cfg& a, const buffer_pool_cfg& b) {
    EXPECT_EQ(a.enabled, b.enabled);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.cell, b.cell);
    EXPECT_EQ(a.mode, b.mode);
}

// ------------------------------------------------------------ examples

TEST(switch_config, every_example_loads) {
    for (const char* name :
         {"default.yaml", "l2-bridge-2port.yaml", "l3-leaf-ecmp.yaml", "seed-leaf-8x200g-4x400g.yaml",
          "demo-prio-shaping.yaml", "incast-lossless-1g.yaml"}) {
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
    expect_same_pool(r->pool, d.pool);
    EXPECT_EQ(r->wred_at_enqueue, d.wred_at_enqueue);
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

void expect_errors(const std::vector<std::pair<std::string, bad_case>>& cases);

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
        {R"(BUFFER_PORT_INGRESS_PROFILE_LIST:
  Ethernet0: {profile_list: ingress_lossy_profile}
)",
         {"unsupported SONiC table", {"bad.yaml:1:1:", "BUFFER_PORT_INGRESS_PROFILE_LIST", "not supported"}}},
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
    expect_errors(cases);
}

void expect_errors(const std::vector<std::pair<std::string, bad_case>>& cases) {
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

// ------------------------------------------------------------ lossless classes

// Two 100G ports, a dynamic pool, a lossless profile on PG 3-4 and a lossy one on PG 0.
const char* const lossless_base = R"(PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
  Ethernet4: {port_id: 1, speed: 100Gbps}
BUFFER_POOL:
  ingress_lossless_pool: {size: 12766208, type: ingress, mode: dynamic}
BUFFER_PROFILE:
  pg_lossless_100000_5m_profile: {pool: ingress_lossless_pool, size: 1248, dynamic_th: -3, xoff: 72704, xon_offset: 2496}
  ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}
)";

std::string with_lossless(const char* tail) {
    return std::string(lossless_base) + tail;
}

TEST(switch_config, lossless_tables) {
    const switch_cfg c = load_ok(with_lossless(R"(BUFFER_PG:
  "Ethernet0,Ethernet4|3-4": {profile: pg_lossless_100000_5m_profile}
  "global|0": {profile: "[BUFFER_PROFILE|ingress_lossy_profile]"}
CABLE_LENGTH:
  AZURE: {Ethernet0: 5m, Ethernet4: 2.5m}
PORT_QOS_MAP:
  global: {pfc_enable: "3,4", pfcwd_sw_enable: "3"}
  Ethernet4: {pfc_mode: pause, pfc_quanta: 1000}
PFC_WD:
  Ethernet0: {detection_time: 200, restoration_time: 400ms, action: forward}
  GLOBAL: {POLL_INTERVAL: 100}
)"));
    EXPECT_TRUE(c.pool.enabled);
    EXPECT_EQ(c.pool.size, bytes{12766208});
    EXPECT_EQ(c.pool.mode, threshold_mode::dynamic_th);
    EXPECT_EQ(c.pool.cell, bytes{0});
    ASSERT_EQ(c.ports.size(), 2u);
    for (const auto& p : c.ports) {
        const pg_buffer_cfg& pg3 = p.pgs[3];
        EXPECT_TRUE(pg3.configured);
        EXPECT_TRUE(pg3.lossless());
        EXPECT_EQ(pg3.reserved, bytes{1248});
        EXPECT_EQ(pg3.mode, threshold_mode::dynamic_th);
        EXPECT_EQ(pg3.dynamic_th, -3);
        EXPECT_EQ(pg3.xoff, bytes{72704});
        EXPECT_FALSE(pg3.xon);
        EXPECT_EQ(pg3.xon_offset, std::optional<bytes>{bytes{2496}});
        EXPECT_TRUE(p.pgs[4].lossless());
        EXPECT_TRUE(p.pgs[0].configured);
        EXPECT_FALSE(p.pgs[0].lossless());
        EXPECT_EQ(p.pgs[0].dynamic_th, 3);
        EXPECT_FALSE(p.pgs[0].xon);
        EXPECT_FALSE(p.pgs[1].configured);
        EXPECT_EQ(p.pfcwd_queues, 1u << 3);
    }
    EXPECT_TRUE(c.port_defaults.pgs[0].configured);  // global entry
    EXPECT_FALSE(c.port_defaults.pgs[3].configured);
    EXPECT_DOUBLE_EQ(c.ports[0].cable_length_m, 5.0);
    EXPECT_DOUBLE_EQ(c.ports[1].cable_length_m, 2.5);
    EXPECT_EQ(c.ports[0].fc_mode, flow_ctrl_mode::pfc);
    EXPECT_EQ(c.ports[0].pfc_quanta, 0xFFFF);
    EXPECT_EQ(c.ports[1].fc_mode, flow_ctrl_mode::pause);
    EXPECT_EQ(c.ports[1].pfc_quanta, 1000);
    const pfc_wd_cfg& wd = c.ports[0].wd;
    EXPECT_TRUE(wd.enabled);
    EXPECT_EQ(wd.detection_time, nanos{200'000'000});
    EXPECT_EQ(wd.restoration_time, nanos{400'000'000});
    EXPECT_EQ(wd.action, pfc_wd_action::forward);
    EXPECT_EQ(wd.poll_interval, nanos{100'000'000});
    EXPECT_FALSE(c.ports[1].wd.enabled);
    EXPECT_EQ(c.ports[1].wd.poll_interval, nanos{100'000'000});  // GLOBAL applies to every port
}

// The built-in default is SONiC's RoCE buffer set-up (docs/config.md): a
// 12MiB ingress_lossless_pool in 96-byte cells, lossless PGs 3-4 (xoff: auto,
// dynamic_th 0, resolved from the port speed), lossy PG 0
// (ingress_lossy_profile: size 0, dynamic_th 3). (Before WRED/ECN defaults
// were added the default had no pool; this test asserted that.)
TEST(switch_config, lossless_defaults) {
    const switch_cfg d = default_switch_cfg();
    EXPECT_TRUE(d.pool.enabled);
    EXPECT_EQ(d.pool.name, "ingress_lossless_pool");
    EXPECT_EQ(d.pool.size, bytes{12 * 1024 * 1024});
    EXPECT_EQ(d.pool.cell, bytes{96});
    EXPECT_EQ(d.pool.mode, threshold_mode::dynamic_th);
    for (std::size_t g = 0; g < 8; ++g) {
        const pg_buffer_cfg& pg = d.port_defaults.pgs[g];
        EXPECT_EQ(pg.configured, g == 0 || g == 3 || g == 4) << "pg " << g;
        EXPECT_EQ(pg.lossless(), g == 3 || g == 4) << "pg " << g;
        EXPECT_EQ(pg.xoff_auto, g == 3 || g == 4) << "pg " << g;
        EXPECT_EQ(pg.headroom_pending(), g == 3 || g == 4) << "pg " << g;  // speed not known yet
        EXPECT_EQ(pg.xoff, bytes{0}) << "pg " << g;
        EXPECT_EQ(pg.reserved, bytes{0}) << "pg " << g;
        EXPECT_EQ(pg.mode, threshold_mode::dynamic_th);
    }
    EXPECT_EQ(d.port_defaults.pgs[0].dynamic_th, 3);
    EXPECT_EQ(d.port_defaults.pgs[3].dynamic_th, 0);
    EXPECT_TRUE(d.port_defaults.pgs[3].reserved_auto);
    EXPECT_EQ(d.port_defaults.pfcwd_queues, (1u << 3) | (1u << 4));
    EXPECT_EQ(d.port_defaults.fc_mode, flow_ctrl_mode::pfc);
    EXPECT_EQ(d.port_defaults.pfc_quanta, 0xFFFF);
    EXPECT_DOUBLE_EQ(d.port_defaults.cable_length_m, 5.0);
    EXPECT_FALSE(d.port_defaults.wd.enabled);
    EXPECT_EQ(d.asic.cell, bytes{96});
    EXPECT_EQ(d.asic.pipeline_latency, bytes{18432});
}

TEST(switch_config, static_pool_and_probed_ports) {
    // No PORT table: global entries configure every probed port.
    const switch_cfg c = load_ok(R"(
BUFFER_POOL:
  pool: {size: 1MiB, type: ingress, mode: static, cell: 96}
BUFFER_PROFILE:
  lossless: {pool: pool, size: 1536, static_th: 96KiB, xoff: 64KiB, xon: 18KiB}
BUFFER_PG:
  "*|3": {profile: lossless}
CABLE_LENGTH:
  AZURE: {global: 1m}
PFC_WD:
  global: {detection_time: 20ms, restoration_time: 100ms}
  GLOBAL: {POLL_INTERVAL: 5ms}
)");
    EXPECT_EQ(c.pool.mode, threshold_mode::static_th);
    EXPECT_EQ(c.pool.cell, bytes{96});
    const port_cfg p = probed_port_cfg(c, 2);
    EXPECT_EQ(p.pgs[3].mode, threshold_mode::static_th);
    EXPECT_EQ(p.pgs[3].static_th, bytes{96 * 1024});
    EXPECT_EQ(p.pgs[3].xoff, bytes{64 * 1024});
    EXPECT_EQ(p.pgs[3].xon, std::optional<bytes>{bytes{18 * 1024}});
    EXPECT_DOUBLE_EQ(p.cable_length_m, 1.0);
    EXPECT_TRUE(p.wd.enabled);
    EXPECT_EQ(p.wd.detection_time, nanos{20'000'000});
    EXPECT_EQ(p.wd.restoration_time, nanos{100'000'000});
    EXPECT_EQ(p.wd.action, pfc_wd_action::drop);
    EXPECT_EQ(p.wd.poll_interval, nanos{5'000'000});
}

TEST(switch_config, auto_headroom_from_speed_and_cable) {
    const switch_cfg c = load_ok(R"(
PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
  Ethernet1: {port_id: 1, speed: 100Gbps}
  Ethernet2: {port_id: 2, speed: 400Gbps}
BUFFER_POOL:
  ingress_lossless_pool: {size: 12766208, type: ingress}
BUFFER_PROFILE:
  pg_lossless_auto: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto}
  pg_lossless_auto_sized: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0, xoff: auto, xon_offset: 2KiB}
BUFFER_PG:
  "Ethernet0,Ethernet2|3": {profile: pg_lossless_auto}
  "Ethernet1|3": {profile: pg_lossless_auto_sized}
CABLE_LENGTH:
  AZURE: {Ethernet0: 40m, Ethernet1: 5m, Ethernet2: 40m}
)");
    ASSERT_EQ(c.ports.size(), 3u);
    // Reference 2.3: 100G / 40 m -> xoff 81920, xon 18432, size 100352.
    EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{81920});
    EXPECT_EQ(c.ports[0].pgs[3].xon, std::optional<bytes>{bytes{18432}});
    EXPECT_EQ(c.ports[0].pgs[3].reserved + c.ports[0].pgs[3].xoff, bytes{100352});
    // 100G / 5 m -> xoff 72704; an explicit size is kept.
    EXPECT_EQ(c.ports[1].pgs[3].xoff, bytes{72704});
    EXPECT_EQ(c.ports[1].pgs[3].reserved, bytes{0});
    EXPECT_EQ(c.ports[1].pgs[3].xon_offset, std::optional<bytes>{bytes{2048}});
    // 400G / 40 m -> xoff 176128.
    EXPECT_EQ(c.ports[2].pgs[3].xoff, bytes{176128});
    EXPECT_EQ(c.ports[2].pgs[3].reserved + c.ports[2].pgs[3].xoff, bytes{194560});
}

TEST(switch_config, headroom_constants) {
    const switch_cfg c = load_ok(R"(
ROCELAB:
  headroom: {cell: 128, pipeline_latency: 20KiB, mac_phy_delay: 819.2, small_packet_percent: 50%, lossless_mtu: 4200, port_mtu: 9100}
PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
BUFFER_POOL:
  p: {size: 12766208, type: ingress}
BUFFER_PROFILE:
  a: {pool: p, dynamic_th: 0, xoff: auto}
BUFFER_PG:
  "Ethernet0|3": {profile: a}
)");
    EXPECT_EQ(c.asic.cell, bytes{128});
    EXPECT_EQ(c.asic.pipeline_latency, bytes{20 * 1024});
    EXPECT_DOUBLE_EQ(c.asic.mac_phy_delay_bytes, 819.2);
    EXPECT_DOUBLE_EQ(c.asic.small_packet_percent, 50.0);
    EXPECT_EQ(c.asic.lossless_mtu, bytes{4200});
    EXPECT_EQ(c.asic.port_mtu, bytes{9100});
    EXPECT_EQ(c.ports[0].pgs[3].xon, std::optional<bytes>{bytes{20 * 1024}});
    // 100G/5m: propagation 35766.5 B; cell 128: wcf 2*128/129, 50 % small -> x 1.4922;
    // 4200 + 53371 = 57571 -> 57344 + 1024 = 58368.
    EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{58368});
}

TEST(switch_config, lossless_errors_give_one_clear_error) {
    const std::vector<std::pair<std::string, bad_case>> cases = {
        {R"(PORT:
  Ethernet0: {port_id: 0}
BUFFER_PG:
  "Ethernet0|3": {profile: pg_lossless}
)",
         {"BUFFER_PG without pool", {"bad.yaml:3:1:", "BUFFER_PG", "needs an ingress BUFFER_POOL"}}},
        {R"(BUFFER_PROFILE:
  p: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0}
)",
         {"profile without pool table",
          {"bad.yaml:2:", "BUFFER_PROFILE|p|pool", "\"ingress_lossless_pool\"", "no BUFFER_POOL table"}}},
        {with_lossless(R"(BUFFER_PG:
  "Ethernet0|3": {profile: pg_lossless_100000_5m_profil}
)"),
         {"unknown profile",
          {"bad.yaml:10:", "BUFFER_PG|Ethernet0|3|profile",
           "unknown profile \"pg_lossless_100000_5m_profil\"", "ingress_lossy_profile",
           "did you mean pg_lossless_100000_5m_profile?"}}},
        {with_lossless(R"(  both: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0, static_th: 1000}
)"),
         {"both thresholds",
          {"bad.yaml:9:", "BUFFER_PROFILE|both|static_th", "both dynamic_th and static_th", "-8..8"}}},
        {with_lossless(R"(  none: {pool: ingress_lossless_pool, size: 0}
)"),
         {"no threshold", {"bad.yaml:9:3:", "BUFFER_PROFILE|none", "give exactly one of dynamic_th"}}},
        {with_lossless(R"(  big: {pool: ingress_lossless_pool, size: 0, dynamic_th: 9}
)"),
         {"dynamic_th out of range",
          {"bad.yaml:9:", "BUFFER_PROFILE|big|dynamic_th", "\"9\" is out of range", "-8..8"}}},
        {with_lossless(R"(  neg: {pool: ingress_lossless_pool, size: 0, dynamic_th: -9}
)"),
         {"dynamic_th below range", {"bad.yaml:9:", "BUFFER_PROFILE|neg|dynamic_th", "\"-9\"", "-8..8"}}},
        {with_lossless(R"(  nosize: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: 1000}
)"),
         {"size missing", {"bad.yaml:9:3:", "BUFFER_PROFILE|nosize", "size is required"}}},
        {with_lossless(R"(  lossy_xon: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0, xon: 1000}
)"),
         {"xon on a lossy profile",
          {"bad.yaml:9:", "BUFFER_PROFILE|lossy_xon|xon", "only used by a lossless"}}},
        {with_lossless(R"(  auto_xon: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto, xon: 1000}
)"),
         {"xon with auto", {"bad.yaml:9:", "BUFFER_PROFILE|auto_xon|xon", "computed with xoff: auto"}}},
        {with_lossless(
             R"(  two: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0, xoff: 1000, xon: 10, xon_offset: 20}
)"),
         {"xon and xon_offset", {"bad.yaml:9:", "BUFFER_PROFILE|two|xon_offset", "both xon and xon_offset"}}},
        {with_lossless(R"(  far: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0, xoff: 13MiB}
)"),
         {"xoff above the pool",
          {"bad.yaml:9:", "BUFFER_PROFILE|far|xoff", "\"13MiB\" is out of range", "0..12766208 bytes"}}},
        {with_lossless(R"(  typo: {pool: ingress_lossless_pol, size: 0, dynamic_th: 0}
)"),
         {"unknown pool",
          {"bad.yaml:9:", "BUFFER_PROFILE|typo|pool", "\"ingress_lossless_pol\"",
           "did you mean ingress_lossless_pool?"}}},
        {R"(BUFFER_POOL:
  p: {size: 1MiB, type: ingress, mode: static}
BUFFER_PROFILE:
  s: {pool: p, size: 0, static_th: 10000, xoff: 20000, xon: 20000}
)",
         {"xon above static_th",
          {"bad.yaml:4:", "BUFFER_PROFILE|s|xon", "\"20000\" is out of range", "0..10000 bytes"}}},
        {R"(BUFFER_POOL:
  egress_lossless_pool: {size: 1MiB, type: egress, mode: dynamic, xoff: 1000}
)",
         {"shared headroom on an egress pool",
          {"bad.yaml:2:", "BUFFER_POOL|egress_lossless_pool|xoff", "only used on an ingress pool"}}},
        {R"(BUFFER_POOL:
  p: {size: 1MiB, type: ingress}
BUFFER_PROFILE:
  d: {pool: p, dynamic_th: 0, headroom_type: dynamic}
)",
         {"headroom_type dynamic in the traditional model",
          {"bad.yaml:4:", "BUFFER_PROFILE|d|headroom_type", "buffer_model dynamic"}}},
        {R"(BUFFER_POOL:
  p: {size: 12, type: ingress}
)",
         {"pool too small to be a pool", {"bad.yaml:2:", "BUFFER_POOL|p|size", "\"12\"", "1024.."}}},
        {R"(PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
  Ethernet4: {port_id: 1, speed: 100Gbps}
BUFFER_POOL:
  ingress_lossless_pool: {size: 200000, type: ingress}
BUFFER_PROFILE:
  l: {pool: ingress_lossless_pool, size: 18432, dynamic_th: 0, xoff: 72704}
BUFFER_PG:
  "Ethernet0,Ethernet4|3-4": {profile: l}
)",
         {"pool too small",
          {"bad.yaml:5:", "BUFFER_POOL|ingress_lossless_pool|size", "\"200000\" is too small",
           "add up to 364544 bytes", "Ethernet0 182272", "Ethernet4 182272", "at least 364544"}}},
        {with_lossless(R"(BUFFER_PG:
  "Ethernet0|8": {profile: ingress_lossy_profile}
)"),
         {"PG out of range", {"bad.yaml:10:3:", "BUFFER_PG|Ethernet0|8", "\"8\"", "0..7"}}},
        {with_lossless(R"(BUFFER_PG:
  "Ethernet0|3-4": {profile: ingress_lossy_profile}
  "Ethernet0|4": {profile: ingress_lossy_profile}
)"),
         {"PG set twice",
          {"bad.yaml:11:3:", "BUFFER_PG|Ethernet0|4", "priority group 4 of port Ethernet0",
           "\"Ethernet0|3-4\""}}},
        {with_lossless(R"(BUFFER_PG:
  "Ethernet0": {profile: ingress_lossy_profile}
)"),
         {"PG key without PG", {"bad.yaml:10:3:", "BUFFER_PG|Ethernet0", "\"<ports>|<priority groups>\""}}},
        {with_lossless(R"(PFC_WD:
  Ethernet0: {action: shutdown}
)"),
         {"bad PFC_WD action",
          {"bad.yaml:10:", "PFC_WD|Ethernet0|action", "\"shutdown\"", "drop, forward, alert"}}},
        {with_lossless(R"(PFC_WD:
  Ethernet0: {detection_time: 6000}
)"),
         {"detection_time out of range",
          {"bad.yaml:10:", "PFC_WD|Ethernet0|detection_time", "\"6000\" is out of range", "1ms..5s"}}},
        {with_lossless(R"(PFC_WD:
  Ethernet0: {restoration_time: 0}
)"),
         {"restoration_time out of range",
          {"bad.yaml:10:", "PFC_WD|Ethernet0|restoration_time", "\"0\" is out of range", "1ms..60s"}}},
        {with_lossless(R"(PFC_WD:
  Ethernet0: {detection_time: 20ms}
  GLOBAL: {POLL_INTERVAL: 50}
)"),
         {"poll slower than detection",
          {"bad.yaml:11:", "PFC_WD|GLOBAL|POLL_INTERVAL", "50ms", "20ms", "Ethernet0", "1ms..20ms"}}},
        {with_lossless(R"(PFC_WD:
  GLOBAL: {detection_time: 200}
)"),
         {"GLOBAL holds only POLL_INTERVAL",
          {"bad.yaml:10:", "PFC_WD|GLOBAL|detection_time", "accepted fields are POLL_INTERVAL"}}},
        {with_lossless(R"(CABLE_LENGTH:
  AZURE: {Ethernet0: 5meters}
)"),
         {"bad cable length",
          {"bad.yaml:10:", "CABLE_LENGTH|AZURE|Ethernet0", "\"5meters\"", "5m", "0m..100km"}}},
        {with_lossless(R"(CABLE_LENGTH:
  AZURE: {Ethernet0: 5}
)"),
         {"cable length without unit",
          {"bad.yaml:10:", "CABLE_LENGTH|AZURE|Ethernet0", "\"5\" has no unit"}}},
        {with_lossless(R"(CABLE_LENGTH:
  AZURE: {Ethernet0: 200km}
)"),
         {"cable length out of range", {"bad.yaml:10:", "\"200km\" is out of range", "0m..100km"}}},
        {with_lossless(R"(CABLE_LENGTH:
  AZURE: {Ethernet9: 5m}
)"),
         {"cable length unknown port", {"bad.yaml:10:", "CABLE_LENGTH|AZURE|Ethernet9", "unknown port"}}},
        {with_lossless(R"(PORT_QOS_MAP:
  Ethernet0: {pfc_quanta: 0}
)"),
         {"pfc_quanta out of range",
          {"bad.yaml:10:", "PORT_QOS_MAP|Ethernet0|pfc_quanta", "\"0\"", "1..65535"}}},
        {with_lossless(R"(PORT_QOS_MAP:
  Ethernet0: {pfc_mode: llfc}
)"),
         {"bad pfc_mode", {"bad.yaml:10:", "PORT_QOS_MAP|Ethernet0|pfc_mode", "\"llfc\"", "pfc, pause"}}},
        {with_lossless(R"(PORT_QOS_MAP:
  Ethernet0: {pfcwd_sw_enable: "3,8"}
)"),
         {"bad pfcwd_sw_enable",
          {"bad.yaml:10:", "PORT_QOS_MAP|Ethernet0|pfcwd_sw_enable", "\"3,8\"", "queues 0..7"}}},
        {R"(ROCELAB:
  headroom: {cell: 0}
)",
         {"headroom cell out of range", {"bad.yaml:2:", "ROCELAB|headroom|cell", "\"0\"", "1..16384 bytes"}}},
        {R"(ROCELAB:
  headroom: {mac_phy_delay: 0.8KB.}
)",
         {"bad mac_phy_delay", {"bad.yaml:2:", "ROCELAB|headroom|mac_phy_delay", "819.2"}}},
        {R"(ROCELAB:
  headroom: {small_packet_percent: 120}
)",
         {"small packets out of range",
          {"bad.yaml:2:", "ROCELAB|headroom|small_packet_percent", "\"120\"", "0..100%"}}},
    };
    expect_errors(cases);
}

// A failed load applies nothing: the error is all the caller gets.
TEST(switch_config, lossless_error_applies_nothing) {
    const auto r = load_switch_cfg_from_string(with_lossless(R"(BUFFER_PG:
  "Ethernet0|3": {profile: pg_lossless_100000_5m_profile}
PFC_WD:
  Ethernet0: {action: shutdown}
)"),
                                               "bad.yaml");
    ASSERT_FALSE(r);
}

TEST(switch_config, lossless_examples) {
    {
        const auto r = load_switch_cfg(conf_path("l3-leaf-ecmp.yaml"));
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_TRUE(r->pool.enabled);
        EXPECT_EQ(r->ports[0].pgs[3].xoff, bytes{72704});  // server port, 5m
        EXPECT_EQ(r->ports[2].pgs[4].xoff, bytes{81920});  // uplink, 40m
        EXPECT_FALSE(r->ports[0].pgs[0].lossless());
        EXPECT_TRUE(r->ports[0].wd.enabled);
    }
    {
        const auto r = load_switch_cfg(conf_path("seed-leaf-8x200g-4x400g.yaml"));
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_EQ(r->ports[0].pgs[3].xoff, bytes{81920});   // 200G, 5m
        EXPECT_EQ(r->ports[8].pgs[3].xoff, bytes{176128});  // 400G, 40m
        EXPECT_TRUE(r->ports[8].wd.enabled);
    }
    {
        const auto r = load_switch_cfg(conf_path("incast-lossless-1g.yaml"));
        ASSERT_TRUE(r) << r.error().message;
        ASSERT_EQ(r->ports.size(), 5u);
        for (const auto& p : r->ports) {
            EXPECT_EQ(p.speed, bits_per_sec{1'000'000'000});
            EXPECT_EQ(p.pgs[3].xoff, bytes{1052672});  // see the file's comment
            EXPECT_EQ(p.pgs[3].reserved, bytes{18432});
            EXPECT_EQ(p.pfc_enable, 1u << 3);
            EXPECT_EQ(p.pfcwd_queues, 1u << 3);
            EXPECT_TRUE(p.wd.enabled);
        }
    }
}

// ------------------------------------------------------- start-up speeds

constexpr bits_per_sec g100{100'000'000'000};
constexpr bits_per_sec g400{400'000'000'000};

void expect_default_lossless_100g_5m(const port_cfg& p) {
    // Reference 2.3, 100G / 5 m: xoff 72704, xon 18432, size 91136.
    for (const std::size_t g : {std::size_t{3}, std::size_t{4}}) {
        EXPECT_FALSE(p.pgs[g].headroom_pending()) << p.name << " pg " << g;
        EXPECT_TRUE(p.pgs[g].lossless());
        EXPECT_EQ(p.pgs[g].xoff, bytes{72704}) << p.name << " pg " << g;
        EXPECT_EQ(p.pgs[g].xon, std::optional<bytes>{bytes{18432}});
        EXPECT_EQ(p.pgs[g].reserved, bytes{18432});
        EXPECT_EQ(p.pgs[g].reserved + p.pgs[g].xoff, bytes{91136});
        EXPECT_EQ(p.pgs[g].dynamic_th, 0);
    }
    EXPECT_TRUE(p.pgs[0].configured);
    EXPECT_FALSE(p.pgs[0].lossless());
    EXPECT_EQ(p.pgs[0].reserved, bytes{0});
    EXPECT_EQ(p.pgs[0].dynamic_th, 3);
}

TEST(switch_config, default_config_resolved_at_100g) {
    switch_cfg c = default_switch_cfg();
    for (const int id : {0, 1}) {
        c.ports.push_back(probed_port_cfg(c, id));  // what the app does with probed ports
    }
    EXPECT_TRUE(c.ports[0].pgs[3].headroom_pending());
    EXPECT_EQ(resolve_port_speeds(c, {{0, g100}, {1, g100}}), "");
    for (const auto& p : c.ports) {
        EXPECT_EQ(p.speed, std::optional<bits_per_sec>{g100});
        expect_default_lossless_100g_5m(p);
    }
    // Idempotent.
    EXPECT_EQ(resolve_port_speeds(c, {{0, g100}, {1, g100}}), "");
    expect_default_lossless_100g_5m(c.ports[1]);
}

TEST(switch_config, resolve_port_speeds_errors) {
    {
        switch_cfg c = default_switch_cfg();
        c.ports.push_back(probed_port_cfg(c, 0));
        c.ports.push_back(probed_port_cfg(c, 1));
        const std::string e = resolve_port_speeds(c, {{0, g100}, {1, bits_per_sec{0}}});  // driver: unknown
        EXPECT_NE(e.find("<built-in defaults>: PORT|Ethernet1|speed:"), std::string::npos) << e;
        EXPECT_NE(e.find("xoff: auto"), std::string::npos) << e;
        EXPECT_NE(e.find("set PORT|Ethernet1|speed"), std::string::npos) << e;
        EXPECT_EQ(e.find('\n'), std::string::npos);
    }
    {
        switch_cfg c = default_switch_cfg();
        c.ports.push_back(probed_port_cfg(c, 0));
        const std::string e = resolve_port_speeds(c, {{1, g100}});
        EXPECT_NE(e.find("port index 1"), std::string::npos) << e;
    }
    {
        // 60 x 400G ports: 60 x 2 x 194560 reserved bytes do not fit 12MiB.
        switch_cfg c = default_switch_cfg();
        std::vector<std::pair<int, bits_per_sec>> speeds;
        for (int i = 0; i < 60; ++i) {
            c.ports.push_back(probed_port_cfg(c, i));
            c.ports.back().cable_length_m = 40;
            speeds.emplace_back(i, g400);
        }
        const std::string e = resolve_port_speeds(c, speeds);
        EXPECT_NE(e.find("BUFFER_POOL|ingress_lossless_pool|size: 12582912 is too small"), std::string::npos) << e;
        EXPECT_NE(e.find("add up to 23347200 bytes"), std::string::npos) << e;
    }
}

// xoff: auto with no PORT speed is no longer a load error: the PG waits for
// the driver's speed (resolve_port_speeds), which reports the missing speed.
// (These were load errors before the built-in default needed xoff: auto on
// probed ports; conf/default.yaml writes that default out and must load.)
TEST(switch_config, xoff_auto_without_speed_waits_for_the_driver) {
    {
        switch_cfg c = load_ok(R"(PORT:
  Ethernet0: {port_id: 0}
BUFFER_POOL:
  ingress_lossless_pool: {size: 12766208, type: ingress}
BUFFER_PROFILE:
  a: {pool: ingress_lossless_pool, dynamic_th: 0, xoff: auto}
BUFFER_PG:
  "Ethernet0|3": {profile: a}
)");
        ASSERT_EQ(c.ports.size(), 1u);
        EXPECT_TRUE(c.ports[0].pgs[3].headroom_pending());
        EXPECT_FALSE(c.ports[0].pgs[4].configured);  // the file's buffers replace the built-in ones
        const std::string e = resolve_port_speeds(c, {});
        EXPECT_NE(e.find("test.yaml: PORT|Ethernet0|speed: priority group 3 has xoff: auto"), std::string::npos)
            << e;
        EXPECT_EQ(resolve_port_speeds(c, {{0, g400}}), "");
        EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{141312});  // 400G / 5 m: 1500 + (9100 + 2525.25 + 819.2 + 57920) x 2 x 96 / 97, up to 1KiB
        EXPECT_EQ(c.ports[0].pgs[3].reserved + c.ports[0].pgs[3].xoff, bytes{141312 + 18432});
    }
    {
        const switch_cfg d = load_ok(R"(BUFFER_POOL:
  ingress_lossless_pool: {size: 12766208, type: ingress}
BUFFER_PROFILE:
  a: {pool: ingress_lossless_pool, size: 1024, dynamic_th: 0, xoff: auto}
BUFFER_PG:
  "global|3": {profile: a}
)");
        switch_cfg c = d;
        c.ports.push_back(probed_port_cfg(c, 5));
        EXPECT_TRUE(c.ports[0].pgs[3].headroom_pending());
        EXPECT_EQ(resolve_port_speeds(c, {{0, g100}}), "");
        EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{72704});
        EXPECT_EQ(c.ports[0].pgs[3].reserved, bytes{1024});  // size given: kept
    }
    {
        // A PORT speed wins over the driver's.
        switch_cfg c = load_ok(R"(PORT:
  Ethernet0: {port_id: 0, speed: 400Gbps}
CABLE_LENGTH:
  AZURE: {Ethernet0: 40m}
)");
        EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{176128});  // resolved at load (reference 2.3, 400G / 40 m)
        EXPECT_EQ(resolve_port_speeds(c, {{0, g100}}), "");
        EXPECT_EQ(c.ports[0].speed, std::optional<bits_per_sec>{g400});
        EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{176128});
        EXPECT_EQ(c.ports[0].pgs[4].reserved + c.ports[0].pgs[4].xoff, bytes{194560});
    }
}

// ------------------------------------------------------------------ WRED

void expect_azure_lossless(const wred_cfg& w) {
    EXPECT_TRUE(w.enabled);
    EXPECT_TRUE(w.mark_ect);
    EXPECT_TRUE(w.drop_enable);
    EXPECT_EQ(w.kmin, bytes{1048576});
    EXPECT_EQ(w.kmax, bytes{2097152});
    EXPECT_DOUBLE_EQ(w.pmax, 0.05);
}

TEST(switch_config, wred_default_is_azure_lossless_on_queues_3_and_4) {
    const switch_cfg d = default_switch_cfg();
    EXPECT_FALSE(d.wred_at_enqueue);
    for (std::size_t q = 0; q < 8; ++q) {
        if (q == 3 || q == 4) {
            expect_azure_lossless(d.port_defaults.wred[q]);
        } else {
            EXPECT_FALSE(d.port_defaults.wred[q].enabled) << q;
        }
    }
    const wred_profile_cfg a = azure_lossless_wred_profile();
    EXPECT_EQ(a.name, "AZURE_LOSSLESS");
    EXPECT_EQ(a.ecn, ecn_mode::ecn_all);
    EXPECT_EQ(a.green_drop_probability, 5);
    EXPECT_TRUE(a.wred_green_enable);
}

// A file with only PORT entries keeps every QoS, buffer and WRED default.
TEST(switch_config, ports_only_config_keeps_the_defaults) {
    switch_cfg c = load_ok(R"(PORT:
  Ethernet0: {device: net_ring0, speed: 100Gbps}
  Ethernet1: {device: net_ring1}
)");
    const switch_cfg d = default_switch_cfg();
    expect_same_pool(c.pool, d.pool);
    ASSERT_EQ(c.ports.size(), 2u);
    for (const auto& p : c.ports) {
        expect_same_maps(p.maps, azure_roce_maps());
        expect_same_sched(p.sched, azure_roce_scheduler());
        EXPECT_EQ(p.pfc_enable, (1u << 3) | (1u << 4));
        expect_azure_lossless(p.wred[3]);
        expect_azure_lossless(p.wred[4]);
        EXPECT_FALSE(p.wred[0].enabled);
    }
    expect_default_lossless_100g_5m(c.ports[0]);  // speed given: resolved at load
    EXPECT_TRUE(c.ports[1].pgs[3].headroom_pending());
    EXPECT_EQ(resolve_port_speeds(c, {{0, g100}, {1, g100}}), "");
    expect_default_lossless_100g_5m(c.ports[1]);
}

TEST(switch_config, wred_profiles_and_queue_bindings) {
    const switch_cfg c = load_ok(R"(ROCELAB: {ecn_at: enqueue}
PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
  Ethernet4: {port_id: 1, speed: 100Gbps}
WRED_PROFILE:
  AZURE_LOSSLESS:
    wred_green_enable: "true"
    wred_yellow_enable: "true"
    wred_red_enable: "true"
    ecn: ecn_all
    green_min_threshold: "1048576"
    green_max_threshold: "2097152"
    yellow_min_threshold: "1048576"
    yellow_max_threshold: "2097152"
    red_min_threshold: "1048576"
    red_max_threshold: "2097152"
    green_drop_probability: "5"
    yellow_drop_probability: "5"
    red_drop_probability: "5"
  HPCC_100G: {ecn: ecn_green, green_min_threshold: 400KB, green_max_threshold: 1600KB, green_drop_probability: 20}
  DCTCP: {ecn: ecn_green, green_min_threshold: 300KB, green_max_threshold: 300KB}
  DROP_ONLY: {wred_green_enable: true, green_min_threshold: 1MiB, green_max_threshold: 2MiB}
QUEUE:
  "global|3-4": {wred_profile: AZURE_LOSSLESS}
  "Ethernet4|3": {wred_profile: "[WRED_PROFILE|HPCC_100G]"}
  "Ethernet0|5": {wred_profile: DCTCP}
  "Ethernet0,Ethernet4|1": {wred_profile: DROP_ONLY, scheduler: scheduler.0}
)");
    EXPECT_TRUE(c.wred_at_enqueue);
    expect_azure_lossless(c.ports[0].wred[3]);
    expect_azure_lossless(c.ports[0].wred[4]);
    expect_azure_lossless(c.ports[1].wred[4]);
    expect_azure_lossless(c.port_defaults.wred[3]);
    const wred_cfg& h = c.ports[1].wred[3];  // per-port entry on top of global
    EXPECT_TRUE(h.enabled);
    EXPECT_TRUE(h.mark_ect);
    EXPECT_FALSE(h.drop_enable);
    EXPECT_EQ(h.kmin, bytes{400000});
    EXPECT_EQ(h.kmax, bytes{1600000});
    EXPECT_DOUBLE_EQ(h.pmax, 0.20);
    EXPECT_NEAR(h.probability(1000000), 0.10, 1e-12);
    const wred_cfg& s = c.ports[0].wred[5];
    EXPECT_EQ(s.kmin, s.kmax);
    EXPECT_DOUBLE_EQ(s.pmax, 1.0);  // SONiC's default drop probability 100
    EXPECT_FALSE(c.ports[1].wred[5].enabled);
    for (const auto& p : c.ports) {
        const wred_cfg& d = p.wred[1];
        EXPECT_TRUE(d.enabled);
        EXPECT_FALSE(d.mark_ect);  // ecn_none
        EXPECT_TRUE(d.drop_enable);
        EXPECT_EQ(d.kmin, bytes{1 << 20});
        EXPECT_EQ(d.kmax, bytes{2 << 20});
        EXPECT_FALSE(p.wred[0].enabled);
        EXPECT_FALSE(p.wred[2].enabled);
    }
}

// WRED_PROFILE in the file: only the file's QUEUE bindings apply.
TEST(switch_config, wred_profile_table_replaces_the_default_bindings) {
    const switch_cfg c = load_ok(R"(PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
WRED_PROFILE:
  HPCC_100G: {ecn: ecn_green, green_min_threshold: 400KB, green_max_threshold: 1600KB, green_drop_probability: 20}
QUEUE:
  "Ethernet0|3": {wred_profile: HPCC_100G}
)");
    EXPECT_EQ(c.ports[0].wred[3].kmin, bytes{400000});
    EXPECT_FALSE(c.ports[0].wred[4].enabled);
    EXPECT_FALSE(c.port_defaults.wred[4].enabled);
    // A QUEUE wred_profile alone (built-in AZURE_LOSSLESS) also replaces them.
    const switch_cfg q = load_ok(R"(QUEUE:
  "global|5": {wred_profile: AZURE_LOSSLESS}
)");
    expect_azure_lossless(q.port_defaults.wred[5]);
    EXPECT_FALSE(q.port_defaults.wred[3].enabled);
    EXPECT_FALSE(q.port_defaults.wred[4].enabled);
    // A QUEUE table without wred_profile keeps them.
    const switch_cfg k = load_ok(R"(QUEUE:
  "global|3": {max_packets: 100}
)");
    expect_azure_lossless(k.port_defaults.wred[3]);
    expect_azure_lossless(k.port_defaults.wred[4]);
}

TEST(switch_config, switching_the_defaults_off) {
    const switch_cfg c = load_ok(R"(PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
WRED_PROFILE: {}
BUFFER_POOL: {}
)");
    EXPECT_FALSE(c.pool.enabled);
    for (const port_cfg* p : {&c.ports[0], &c.port_defaults}) {
        for (std::size_t q = 0; q < 8; ++q) {
            EXPECT_FALSE(p->wred[q].enabled) << q;
            EXPECT_FALSE(p->pgs[q].configured) << q;
            EXPECT_FALSE(p->pgs[q].lossless()) << q;
        }
        EXPECT_EQ(p->pfc_enable, (1u << 3) | (1u << 4));  // other defaults stay
    }
    // An empty value (WRED_PROFILE:) is the same as {}.
    const switch_cfg n = load_ok("WRED_PROFILE:\n");
    EXPECT_FALSE(n.port_defaults.wred[3].enabled);
    EXPECT_TRUE(n.pool.enabled);
}

TEST(switch_config, wred_errors_give_one_clear_error) {
    const std::vector<std::pair<std::string, bad_case>> cases = {
        {R"(PORT:
  Ethernet0: {port_id: 0}
QUEUE:
  "Ethernet0|3": {wred_profile: AZURE_LOSLESS}
)",
         {"unknown profile",
          {"bad.yaml:4:", "QUEUE|Ethernet0|3|wred_profile", "unknown WRED_PROFILE \"AZURE_LOSLESS\"",
           "did you mean AZURE_LOSSLESS?"}}},
        {R"(WRED_PROFILE:
  P: {wred_green_enable: "true", green_min_threshold: "2097152", green_max_threshold: "1048576"}
)",
         {"max below min",
          {"bad.yaml:2:", "WRED_PROFILE|P|green_max_threshold", "\"1048576\"", "below green_min_threshold 2097152",
           "2097152..4294967296 bytes"}}},
        {R"(WRED_PROFILE:
  P:
    wred_green_enable: "true"
    green_min_threshold: 1MiB
    green_max_threshold: 2MiB
    green_drop_probability: "120"
)",
         {"probability 120", {"bad.yaml:6:", "WRED_PROFILE|P|green_drop_probability", "\"120\"", "0..100"}}},
        {R"(WRED_PROFILE:
  P: {ecn: bogus, green_min_threshold: 1MiB, green_max_threshold: 2MiB}
)",
         {"ecn bogus", {"bad.yaml:2:", "WRED_PROFILE|P|ecn", "\"bogus\"", "ecn_none", "ecn_all"}}},
        {R"(WRED_PROFILE:
  P: {ecn: ecn_gren, green_min_threshold: 1MiB, green_max_threshold: 2MiB}
)",
         {"ecn typo", {"bad.yaml:2:", "WRED_PROFILE|P|ecn", "did you mean ecn_green?"}}},
        {R"(WRED_PROFILE:
  AZURE_LOSSLESS: {ecn: ecn_all}
)",
         {"thresholds missing",
          {"bad.yaml:2:3:", "WRED_PROFILE|AZURE_LOSSLESS", "green_min_threshold and green_max_threshold",
           "required when ecn marks green"}}},
        {R"(WRED_PROFILE:
  P: {wred_green_enable: yes please, green_min_threshold: 1MiB, green_max_threshold: 2MiB}
)",
         {"bad bool", {"bad.yaml:2:", "WRED_PROFILE|P|wred_green_enable", "true, false"}}},
        {R"(WRED_PROFILE:
  P: {green_min_threshold: 1PiB, green_max_threshold: 2MiB}
)",
         {"bad size", {"bad.yaml:2:", "WRED_PROFILE|P|green_min_threshold", "\"1PiB\""}}},
        {R"(WRED_PROFILE:
  P: {green_min_threshold: 1MiB, green_max_threshold: 5GiB}
)",
         {"threshold out of range",
          {"bad.yaml:2:", "WRED_PROFILE|P|green_max_threshold", "out of range", "0..4294967296 bytes"}}},
        {R"(WRED_PROFILE:
  P: {green_min: 1MiB}
)",
         {"unknown field", {"bad.yaml:2:", "WRED_PROFILE|P|green_min", "unknown field"}}},
        {R"(WRED_PROFILE:
  P: {wred_weight: 2}
)",
         {"SONiC field not read", {"bad.yaml:2:", "WRED_PROFILE|P|wred_weight", "not supported"}}},
        {R"(ROCELAB: {ecn_at: egress}
)",
         {"ecn_at", {"bad.yaml:1:", "ROCELAB|ecn_at", "\"egress\"", "dequeue, enqueue"}}},
        {R"(QUEUE:
  "global|3": {wred_profile: [A]}
)",
         {"profile not a name", {"bad.yaml:2:", "QUEUE|global|3|wred_profile", "got a list"}}},
    };
    expect_errors(cases);
}

// The file's buffer tables replace the built-in buffers as a whole.
TEST(switch_config, buffer_tables_replace_the_default_buffers) {
    const switch_cfg c = load_ok(R"(PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
BUFFER_POOL:
  p: {size: 2MiB, type: ingress, mode: dynamic}
BUFFER_PROFILE:
  l: {pool: p, size: 0, dynamic_th: -2, xoff: 64KiB}
BUFFER_PG:
  "Ethernet0|3": {profile: l}
)");
    EXPECT_EQ(c.pool.name, "p");
    EXPECT_EQ(c.pool.size, bytes{2 << 20});
    EXPECT_EQ(c.pool.cell, bytes{0});
    EXPECT_EQ(c.ports[0].pgs[3].xoff, bytes{64 * 1024});
    EXPECT_FALSE(c.ports[0].pgs[3].xoff_auto);
    EXPECT_FALSE(c.ports[0].pgs[4].configured);
    EXPECT_FALSE(c.ports[0].pgs[0].configured);
    expect_azure_lossless(c.ports[0].wred[3]);  // WRED defaults are separate
}

// Regression (found by fuzz_switch_path under ASan): entries() kept a
// reference to `it->first`, a node inside the temporary proxy that a
// yaml-cpp iterator's operator-> returns, and read it after the proxy died
// (stack-use-after-scope). Only visible under a sanitizer: the unit suite
// runs under ASan in tools/sanitize.sh. Keys, their checks and duplicate
// detection all read that node.
TEST(switch_config, mapping_keys_read_after_the_iterator_moves) {
    const switch_cfg c = load_ok(R"(
PORT:
  Ethernet0: {port_id: 0}
  Ethernet1: {port_id: 1}
  Ethernet2: {port_id: 2}
)");
    ASSERT_EQ(c.ports.size(), 3u);
    EXPECT_EQ(c.ports[2].name, "Ethernet2");
    const auto dup = load_switch_cfg_from_string("PORT:\n  Ethernet0: {port_id: 0}\n  Ethernet0: {port_id: 1}\n", "d.yaml");
    ASSERT_FALSE(dup);
    EXPECT_NE(dup.error().message.find("duplicate key"), std::string::npos) << dup.error().message;
}

}  // namespace
}  // namespace rocelab

namespace rocelab {
namespace {

TEST(switch_config, ecmp_local_bias_is_off_unless_asked) {
    EXPECT_FALSE(default_switch_cfg().ecmp_local_bias);
    EXPECT_TRUE(load_ok("ROCELAB: {mode: l3, ecmp_local_bias: on}\n").ecmp_local_bias);
    EXPECT_FALSE(load_ok("ROCELAB: {mode: l3, ecmp_local_bias: off}\n").ecmp_local_bias);
    const auto r = load_switch_cfg_from_string("ROCELAB: {ecmp_local_bias: maybe}\n", "bad.yaml");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("ecmp_local_bias"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace rocelab
