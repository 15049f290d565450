// config_db_test.cpp - a SONiC config_db.json as rocelab-switch's config:
// the two example files load to the same switch_cfg as their YAML
// equivalents, the values are the ones the JSON says, unmodelled tables are
// listed, errors are one line naming table, key and field, ports are mapped.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_db.hpp"
#include "config/switch_config.hpp"
#include "config/yaml_load.hpp"
#include "rocelab_version.h"

namespace rocelab {
namespace config_db_test {  // its own names: meson compiles the suite as unity blocks

using namespace literals;

std::string conf_path(const std::string& name) { return std::string(ROCELAB_SOURCE_DIR) + "/conf/" + name; }

switch_cfg load_file_ok(const std::string& path, const load_options& opt = {}) {
    auto r = load_switch_cfg(path, opt);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : switch_cfg{};
}

switch_cfg load_json_ok(const std::string& json, const load_options& opt = {}) {
    auto r = load_switch_cfg_from_string(json, "config_db.json", opt);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : switch_cfg{};
}

std::string load_json_error(const std::string& json, const load_options& opt = {}) {
    auto r = load_switch_cfg_from_string(json, "config_db.json", opt);
    EXPECT_FALSE(r) << "loaded, expected an error";
    return r ? std::string() : r.error().message;
}

// ------------------------------------------------- field-by-field comparison

void expect_same_pg(const pg_buffer_cfg& a, const pg_buffer_cfg& b, const std::string& where) {
    EXPECT_EQ(a.configured, b.configured) << where;
    EXPECT_EQ(a.reserved.v, b.reserved.v) << where;
    EXPECT_EQ(a.mode, b.mode) << where;
    EXPECT_EQ(a.dynamic_th, b.dynamic_th) << where;
    EXPECT_EQ(a.static_th.v, b.static_th.v) << where;
    EXPECT_EQ(a.xoff.v, b.xoff.v) << where;
    EXPECT_EQ(a.xon.has_value(), b.xon.has_value()) << where;
    if (a.xon && b.xon) {
        EXPECT_EQ(a.xon->v, b.xon->v) << where;
    }
    EXPECT_EQ(a.xon_offset.has_value(), b.xon_offset.has_value()) << where;
    if (a.xon_offset && b.xon_offset) {
        EXPECT_EQ(a.xon_offset->v, b.xon_offset->v) << where;
    }
    EXPECT_EQ(a.xoff_auto, b.xoff_auto) << where;
    EXPECT_EQ(a.reserved_auto, b.reserved_auto) << where;
}

void expect_same_wred(const wred_cfg& a, const wred_cfg& b, const std::string& where) {
    EXPECT_EQ(a.enabled, b.enabled) << where;
    EXPECT_EQ(a.mark_ect, b.mark_ect) << where;
    EXPECT_EQ(a.drop_enable, b.drop_enable) << where;
    EXPECT_EQ(a.kmin.v, b.kmin.v) << where;
    EXPECT_EQ(a.kmax.v, b.kmax.v) << where;
    EXPECT_DOUBLE_EQ(a.pmax, b.pmax) << where;
    EXPECT_EQ(a.lo, b.lo) << where;
    EXPECT_EQ(a.hi, b.hi) << where;
    EXPECT_EQ(a.slope, b.slope) << where;
    EXPECT_EQ(a.on_ect, b.on_ect) << where;
    EXPECT_EQ(a.on_not_ect, b.on_not_ect) << where;
}

void expect_same_port(const port_cfg& a, const port_cfg& b) {
    const std::string w = "port " + a.name;
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.device, b.device) << w;
    EXPECT_EQ(a.port_id, b.port_id) << w;
    EXPECT_EQ(a.speed.has_value(), b.speed.has_value()) << w;
    if (a.speed && b.speed) {
        EXPECT_EQ(a.speed->v, b.speed->v) << w;
    }
    EXPECT_EQ(a.mtu, b.mtu) << w;
    EXPECT_EQ(a.trust, b.trust) << w;
    EXPECT_EQ(a.vlan, b.vlan) << w;
    EXPECT_EQ(a.vlan_id, b.vlan_id) << w;
    EXPECT_EQ(a.mac, b.mac) << w;
    EXPECT_EQ(a.maps.dscp_to_tc, b.maps.dscp_to_tc) << w;
    EXPECT_EQ(a.maps.pcp_to_tc, b.maps.pcp_to_tc) << w;
    EXPECT_EQ(a.maps.tc_to_queue, b.maps.tc_to_queue) << w;
    EXPECT_EQ(a.maps.tc_to_pg, b.maps.tc_to_pg) << w;
    EXPECT_EQ(a.maps.pfc_prio_to_queue, b.maps.pfc_prio_to_queue) << w;
    EXPECT_EQ(a.maps.default_tc, b.maps.default_tc) << w;
    for (std::size_t q = 0; q < 8; ++q) {
        const std::string wq = w + " queue " + std::to_string(q);
        EXPECT_EQ(a.sched.queues[q].type, b.sched.queues[q].type) << wq;
        EXPECT_EQ(a.sched.queues[q].weight, b.sched.queues[q].weight) << wq;
        EXPECT_EQ(a.limits[q].max_bytes.v, b.limits[q].max_bytes.v) << wq;
        EXPECT_EQ(a.limits[q].max_packets, b.limits[q].max_packets) << wq;
        expect_same_wred(a.wred[q], b.wred[q], wq + " wred");
    }
    EXPECT_EQ(a.sched.quantum.v, b.sched.quantum.v) << w;
    EXPECT_EQ(a.pfc_enable, b.pfc_enable) << w;
    ASSERT_EQ(a.addresses.size(), b.addresses.size()) << w;
    for (std::size_t i = 0; i < a.addresses.size(); ++i) {
        EXPECT_EQ(a.addresses[i].v6, b.addresses[i].v6) << w << " address " << i;
        EXPECT_EQ(a.addresses[i].addr, b.addresses[i].addr) << w << " address " << i;
        EXPECT_EQ(a.addresses[i].len, b.addresses[i].len) << w << " address " << i;
    }
    EXPECT_EQ(a.tx_ring_size, b.tx_ring_size) << w;
    for (std::size_t g = 0; g < a.pgs.size(); ++g) {
        expect_same_pg(a.pgs[g], b.pgs[g], w + " PG " + std::to_string(g));
    }
    EXPECT_EQ(a.fc_mode, b.fc_mode) << w;
    EXPECT_EQ(a.pfc_quanta, b.pfc_quanta) << w;
    EXPECT_DOUBLE_EQ(a.cable_length_m, b.cable_length_m) << w;
    EXPECT_EQ(a.pfcwd_queues, b.pfcwd_queues) << w;
    EXPECT_EQ(a.wd.enabled, b.wd.enabled) << w;
    EXPECT_EQ(a.wd.detection_time.v, b.wd.detection_time.v) << w;
    EXPECT_EQ(a.wd.restoration_time.v, b.wd.restoration_time.v) << w;
    EXPECT_EQ(a.wd.action, b.wd.action) << w;
    EXPECT_EQ(a.wd.poll_interval.v, b.wd.poll_interval.v) << w;
}

void expect_same_cfg(const switch_cfg& a, const switch_cfg& b) {
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.switch_mac, b.switch_mac);
    EXPECT_EQ(a.fdb_aging.v, b.fdb_aging.v);
    EXPECT_EQ(a.seed, b.seed);
    EXPECT_EQ(a.pool.enabled, b.pool.enabled);
    EXPECT_EQ(a.pool.name, b.pool.name);
    EXPECT_EQ(a.pool.size.v, b.pool.size.v);
    EXPECT_EQ(a.pool.cell.v, b.pool.cell.v);
    EXPECT_EQ(a.pool.mode, b.pool.mode);
    EXPECT_EQ(a.wred_at_enqueue, b.wred_at_enqueue);
    EXPECT_EQ(a.routes.size(), b.routes.size());
    EXPECT_EQ(a.neighbors.size(), b.neighbors.size());
    ASSERT_EQ(a.ports.size(), b.ports.size());
    for (std::size_t i = 0; i < a.ports.size(); ++i) {
        expect_same_port(a.ports[i], b.ports[i]);
    }
}

const port_cfg& port(const switch_cfg& c, const std::string& name) {
    for (const auto& p : c.ports) {
        if (p.name == name) {
            return p;
        }
    }
    ADD_FAILURE() << "no port " << name;
    static const port_cfg none{};
    return none;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// ------------------------------------------------------------- the examples

TEST(ConfigDb, MellanoxTorEqualsItsYaml) {
    const switch_cfg j = load_file_ok(conf_path("config_db/mellanox-tor.json"));
    const switch_cfg y = load_file_ok(conf_path("config_db/mellanox-tor.yaml"));
    EXPECT_TRUE(j.config_db);
    EXPECT_FALSE(y.config_db);
    expect_same_cfg(j, y);
}

TEST(ConfigDb, MellanoxTorValues) {
    const switch_cfg c = load_file_ok(conf_path("config_db/mellanox-tor.json"));
    ASSERT_EQ(c.ports.size(), 8u);
    EXPECT_EQ(c.mode, fwd_mode::l3);  // INTERFACE entries
    ASSERT_TRUE(c.switch_mac);
    EXPECT_EQ(*c.switch_mac, (mac_addr{0x98, 0x03, 0x9b, 0xa2, 0x16, 0x00}));
    EXPECT_TRUE(c.pool.enabled);
    EXPECT_EQ(c.pool.name, "ingress_lossless_pool");
    EXPECT_EQ(c.pool.size.v, 10177536u);
    EXPECT_EQ(c.pool.mode, threshold_mode::dynamic_th);
    for (std::size_t i = 0; i < 8; ++i) {
        const port_cfg& p = c.ports[i];
        EXPECT_EQ(p.name, "Ethernet" + std::to_string(4 * i));
        EXPECT_EQ(p.port_id, static_cast<int>(i));
        ASSERT_TRUE(p.speed);
        EXPECT_EQ(p.speed->v, 100'000'000'000u);
        EXPECT_EQ(p.mtu, 9100u);
        EXPECT_EQ(p.pfc_enable, 0x18);
        EXPECT_EQ(p.maps.dscp_to_tc[3], 3);
        EXPECT_EQ(p.maps.dscp_to_tc[4], 4);
        EXPECT_EQ(p.maps.dscp_to_tc[8], 0);
        EXPECT_EQ(p.maps.dscp_to_tc[26], 3);
        EXPECT_EQ(p.maps.dscp_to_tc[46], 5);
        EXPECT_EQ(p.maps.dscp_to_tc[48], 6);
        EXPECT_EQ(p.maps.dscp_to_tc[0], 1);
        EXPECT_EQ(p.maps.tc_to_pg[3], 3);
        EXPECT_EQ(p.maps.tc_to_pg[4], 4);
        EXPECT_EQ(p.maps.tc_to_pg[5], 0);
        EXPECT_EQ(p.sched.queues[0].weight, 14u);
        EXPECT_EQ(p.sched.queues[3].type, sched_type::dwrr);
        EXPECT_EQ(p.sched.queues[3].weight, 15u);
        EXPECT_EQ(p.sched.queues[6].type, sched_type::dwrr);  // SONiC: scheduler.0, not the built-in strict
        EXPECT_EQ(p.sched.queues[6].weight, 14u);
        for (int q : {3, 4}) {
            EXPECT_TRUE(p.wred[q].mark_ect);
            EXPECT_TRUE(p.wred[q].drop_enable);
            EXPECT_EQ(p.wred[q].kmin.v, 1048576u);
            EXPECT_EQ(p.wred[q].kmax.v, 2097152u);
            EXPECT_DOUBLE_EQ(p.wred[q].pmax, 0.05);
        }
        EXPECT_FALSE(p.wred[0].enabled);
        const bool near = i < 4;
        EXPECT_DOUBLE_EQ(p.cable_length_m, near ? 5.0 : 40.0);
        EXPECT_TRUE(p.pgs[0].configured);
        EXPECT_FALSE(p.pgs[0].lossless());
        EXPECT_EQ(p.pgs[0].dynamic_th, 3);
        for (int g : {3, 4}) {
            const pg_buffer_cfg& pg = p.pgs[g];
            EXPECT_TRUE(pg.lossless());
            EXPECT_EQ(pg.reserved.v, near ? 49152u : 56320u);
            EXPECT_EQ(pg.xoff.v, near ? 29696u : 36864u);
            ASSERT_TRUE(pg.xon);
            EXPECT_EQ(pg.xon->v, 19456u);
            EXPECT_EQ(pg.dynamic_th, near ? 0 : -2);
        }
        EXPECT_TRUE(p.wd.enabled);
        EXPECT_EQ(p.wd.detection_time.v, (200_ms).v);
        EXPECT_EQ(p.wd.restoration_time.v, (200_ms).v);
        EXPECT_EQ(p.wd.poll_interval.v, (200_ms).v);
        EXPECT_EQ(p.wd.action, pfc_wd_action::drop);
        EXPECT_EQ(p.addresses.size(), 2u);  // the bare "Ethernet0": {} sets nothing
    }
    EXPECT_EQ(c.ports[1].addresses[0].addr[3], 2);  // 10.0.0.2/31
    EXPECT_EQ(c.ports[1].addresses[0].len, 31);
    EXPECT_TRUE(c.ports[1].addresses[1].v6);
    EXPECT_EQ(c.ports[1].addresses[1].len, 126);
}

TEST(ConfigDb, BroadcomTorEqualsItsYaml) {
    const switch_cfg j = load_file_ok(conf_path("config_db/broadcom-tor.json"));
    const switch_cfg y = load_file_ok(conf_path("config_db/broadcom-tor.yaml"));
    EXPECT_TRUE(j.config_db);
    expect_same_cfg(j, y);
}

TEST(ConfigDb, BroadcomTorValues) {
    const switch_cfg c = load_file_ok(conf_path("config_db/broadcom-tor.json"));
    ASSERT_EQ(c.ports.size(), 8u);
    EXPECT_EQ(c.mode, fwd_mode::l2);  // no INTERFACE table
    EXPECT_EQ(c.pool.mode, threshold_mode::static_th);
    EXPECT_EQ(c.pool.size.v, 12766208u);
    const port_cfg& down = port(c, "Ethernet0");
    ASSERT_TRUE(down.speed);
    EXPECT_EQ(down.speed->v, 40'000'000'000u);
    EXPECT_EQ(down.vlan, vlan_mode::untagged);
    EXPECT_EQ(down.pgs[3].mode, threshold_mode::static_th);
    EXPECT_EQ(down.pgs[3].static_th.v, 1048576u);
    EXPECT_EQ(down.pgs[3].xoff.v, 55120u);
    EXPECT_EQ(down.pgs[3].reserved.v, 56368u);
    ASSERT_TRUE(down.pgs[3].xon);
    EXPECT_EQ(down.pgs[3].xon->v, 18432u);
    EXPECT_FALSE(down.pgs[3].xon_offset);  // dropped: the profile gives xon
    EXPECT_EQ(down.pgs[0].static_th.v, 12766208u);
    EXPECT_EQ(down.wred[3].kmin.v, 250000u);
    EXPECT_EQ(down.wd.action, pfc_wd_action::drop);
    EXPECT_EQ(down.wd.detection_time.v, (400_ms).v);
    EXPECT_EQ(down.wd.poll_interval.v, (100_ms).v);
    EXPECT_EQ(down.pfcwd_queues, 0x18);
    const port_cfg& tagged = port(c, "Ethernet20");
    EXPECT_EQ(tagged.vlan, vlan_mode::tagged);
    EXPECT_EQ(tagged.vlan_id, 2000);
    const port_cfg& up = port(c, "Ethernet28");
    EXPECT_EQ(up.port_id, 7);
    ASSERT_TRUE(up.speed);
    EXPECT_EQ(up.speed->v, 100'000'000'000u);
    EXPECT_DOUBLE_EQ(up.cable_length_m, 40.0);
    EXPECT_EQ(up.pgs[4].xoff.v, 81920u);
    EXPECT_EQ(up.wd.action, pfc_wd_action::forward);
    EXPECT_EQ(up.wd.restoration_time.v, (800_ms).v);
}

// --------------------------------------------------------- ignored tables

TEST(ConfigDb, IgnoredTablesAreCollectedAndDoNotFail) {
    const YAML::Node root = YAML::Load(
        R"({"DEVICE_METADATA": {"localhost": {"hostname": "s"}}, "BGP_NEIGHBOR": {}, "PORT": {},
            "SYSLOG_SERVER": {"10.0.0.9": {}}, "VLAN": {}, "ACL_TABLE": {}, "WHATEVER_NEW": {"a": {"b": "c"}}})");
    EXPECT_EQ(detail::config_db_ignored_tables(root),
              (std::vector<std::string>{"ACL_TABLE", "BGP_NEIGHBOR", "SYSLOG_SERVER", "WHATEVER_NEW"}));

    const switch_cfg c = load_file_ok(conf_path("config_db/mellanox-tor.json"));
    for (const char* t : {"BGP_NEIGHBOR", "SYSLOG_SERVER", "NTP_SERVER", "LOOPBACK_INTERFACE", "MGMT_INTERFACE",
                          "FEATURE", "CRM", "FLEX_COUNTER_TABLE", "TELEMETRY", "ACL_TABLE",
                          "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "BUFFER_PORT_INGRESS_PROFILE_LIST"}) {
        EXPECT_TRUE(contains(c.ignored_tables, t)) << t;
    }
    EXPECT_FALSE(contains(c.ignored_tables, "PORT"));
    EXPECT_TRUE(std::is_sorted(c.ignored_tables.begin(), c.ignored_tables.end()));
    // PORT lanes are read (BREAKOUT_CFG splits them), not skipped.
    EXPECT_FALSE(contains(c.ignored_fields, "PORT|lanes"));
    EXPECT_FALSE(c.ports[0].lanes.empty());
    for (const char* f : {"PORT|alias", "PORT|index", "PORT|admin_status", "PORT|fec",
                          "DEVICE_METADATA|hwsku", "DEVICE_METADATA|hostname", "DEVICE_METADATA|type",
                          "PORT_QOS_MAP|pfc_to_pg_map"}) {
        EXPECT_TRUE(contains(c.ignored_fields, f)) << f;
    }
    // Egress pools and BUFFER_QUEUE are read, not skipped.
    EXPECT_FALSE(contains(c.ignored_tables, "BUFFER_QUEUE"));
    ASSERT_EQ(c.pools.size(), 3u);
    EXPECT_EQ(c.pools[1].name, "egress_lossless_pool");
    EXPECT_FALSE(c.pools[1].ingress);
    EXPECT_EQ(c.ports[0].egress_buffers[3].profile, "egress_lossless_profile");
    EXPECT_EQ(c.ports[0].egress_buffers[0].profile, "q_lossy_profile");
    // A YAML file gets no such leniency: an unmodelled table is an error.
    EXPECT_FALSE(load_switch_cfg_from_string("BGP_NEIGHBOR: {}\n", "t.yaml"));
}

TEST(ConfigDb, RecognisedByContentNotExtension) {
    const std::string json = R"({"DEVICE_METADATA": {"localhost": {"mac": "02:00:00:00:00:01", "hwsku": "x"}},
        "PORT": {"Ethernet0": {"speed": "25000", "lanes": "1"}}})";
    const switch_cfg c = load_json_ok(json);
    EXPECT_TRUE(c.config_db);
    ASSERT_EQ(c.ports.size(), 1u);
    ASSERT_TRUE(c.ports[0].speed);
    EXPECT_EQ(c.ports[0].speed->v, 25'000'000'000u);
    // The same text under a .yaml name is still config_db.
    auto r = load_switch_cfg_from_string(json, "whatever.yaml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->config_db);
    // YAML that is not a JSON object keeps the strict loader (a SONiC-only field is an error).
    EXPECT_FALSE(load_switch_cfg_from_string("PORT:\n  Ethernet0: {port_id: 0, alias: \"x\"}\n", "t.yaml"));
    EXPECT_TRUE(load_switch_cfg_from_string("PORT:\n  Ethernet0: {port_id: 0, lanes: \"1\"}\n", "t.yaml"));
}

TEST(ConfigDb, SonicEncodings) {
    const switch_cfg c = load_json_ok(R"({
      "DEVICE_METADATA": {"localhost": {"type": "ToRRouter"}},
      "PORT": {"Ethernet0": {"speed": "100000", "mtu": "9100"}},
      "BUFFER_POOL": {"ingress_lossless_pool": {"size": "1048576", "type": "ingress", "mode": "dynamic"}},
      "BUFFER_PROFILE": {"p": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "-2"}},
      "BUFFER_PG": {"Ethernet0|3-4": {"profile": "p"}},
      "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,4", "dscp_to_tc_map": "AZURE"}},
      "WRED_PROFILE": {"W": {"wred_green_enable": "false", "ecn": "ecn_all", "green_min_threshold": "300000",
                             "green_max_threshold": "900000", "green_drop_probability": "20"}},
      "QUEUE": {"Ethernet0|3": {"scheduler": "[SCHEDULER|scheduler.1]", "wred_profile": "[WRED_PROFILE|W]"}}
    })");
    ASSERT_EQ(c.ports.size(), 1u);
    const port_cfg& p = c.ports[0];
    EXPECT_EQ(p.pgs[3].dynamic_th, -2);
    EXPECT_EQ(p.pfc_enable, 0x18);
    EXPECT_TRUE(p.wred[3].mark_ect);
    EXPECT_FALSE(p.wred[3].drop_enable);
    EXPECT_EQ(p.wred[3].kmin.v, 300000u);
    EXPECT_DOUBLE_EQ(p.wred[3].pmax, 0.2);
    EXPECT_FALSE(p.wred[4].enabled);
    EXPECT_EQ(p.sched.queues[3].weight, 15u);
    EXPECT_EQ(c.mode, fwd_mode::l2);
}

TEST(ConfigDb, PfcWdSwitchesThatAreOffAreSkipped) {
    const switch_cfg c = load_json_ok(R"({"PORT": {"Ethernet0": {"speed": "100000"}},
        "PFC_WD": {"Ethernet0": {"action": "alert", "detection_time": "300", "restoration_time": "600",
                                 "pfc_stat_history": "disable"},
                   "GLOBAL": {"POLL_INTERVAL": "100", "BIG_RED_SWITCH": "disable"}}})");
    ASSERT_EQ(c.ports.size(), 1u);
    EXPECT_TRUE(c.ports[0].wd.enabled);
    EXPECT_EQ(c.ports[0].wd.action, pfc_wd_action::alert);
    EXPECT_EQ(c.ports[0].wd.detection_time.v, (300_ms).v);
    EXPECT_EQ(c.ports[0].wd.restoration_time.v, (600_ms).v);
    EXPECT_EQ(c.ports[0].wd.poll_interval.v, (100_ms).v);
    EXPECT_TRUE(contains(c.ignored_fields, "PFC_WD|pfc_stat_history"));
    EXPECT_TRUE(contains(c.ignored_fields, "PFC_WD|BIG_RED_SWITCH"));
    // Switched on, it changes what the watchdog does: not skipped.
    const std::string e = load_json_error(R"({"PORT": {"Ethernet0": {}},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "100", "BIG_RED_SWITCH": "enable"}}})");
    EXPECT_NE(e.find("PFC_WD|GLOBAL|BIG_RED_SWITCH"), std::string::npos) << e;
}

// --------------------------------------------------------------- errors

struct bad_case {
    const char* what;
    std::string json;
    const char* expect;  // regex the one-line error must match
};

TEST(ConfigDb, ErrorsAreOneLineNamingTableKeyField) {
    const std::string head = R"({"DEVICE_METADATA": {"localhost": {}},
      "PORT": {"Ethernet0": {"speed": "100000"}, "Ethernet4": {"speed": "100000"}},
      "BUFFER_POOL": {"ingress_lossless_pool": {"size": "4194304", "type": "ingress", "mode": "dynamic"}},
      "BUFFER_PROFILE": {"lossy": {"pool": "[BUFFER_POOL|ingress_lossless_pool]", "size": "0", "dynamic_th": "3"}},
)";
    const std::vector<bad_case> cases = {
        {"bad reference", head + R"("BUFFER_PG": {"Ethernet0|3-4": {"profile": "[BUFFER_PROFILE|nope]"}}})",
         R"(^config_db\.json:5:\d+: BUFFER_PG\|Ethernet0\|3-4\|profile: "\[BUFFER_PROFILE\|nope\]" names no BUFFER_PROFILE entry)"},
        {"reference to the wrong table", head + R"("BUFFER_PG": {"Ethernet0|0": {"profile": "[BUFFER_POOL|lossy]"}}})",
         R"(^config_db\.json:5:\d+: BUFFER_PG\|Ethernet0\|0\|profile: .*refers to table BUFFER_POOL, expected a BUFFER_PROFILE entry)"},
        {"bad speed", R"({"PORT": {"Ethernet0": {"speed": "100G"}}})",
         R"(^config_db\.json:1:\d+: PORT\|Ethernet0\|speed: "100G" is not a port speed)"},
        {"speed out of range", R"({"PORT": {"Ethernet0": {"speed": "0"}}})",
         R"(^config_db\.json:1:\d+: PORT\|Ethernet0\|speed: )"},
        {"bad number", head + R"("BUFFER_PG": {"Ethernet0|0": {"profile": "lossy"}}, "PFC_WD": {"Ethernet4": {"detection_time": "two hundred"}}})",
         R"(^config_db\.json:5:\d+: PFC_WD\|Ethernet4\|detection_time: )"},
        {"bad dynamic_th", R"({"PORT": {"Ethernet0": {}},
          "BUFFER_POOL": {"p": {"size": "1048576", "type": "ingress", "mode": "dynamic"}},
          "BUFFER_PROFILE": {"x": {"pool": "p", "size": "0", "dynamic_th": "-9"}}})",
         R"(^config_db\.json:3:\d+: BUFFER_PROFILE\|x\|dynamic_th: )"},
        {"unknown field in a known table", R"({"PORT": {"Ethernet0": {"speeed": "100000"}}})",
         R"(^config_db\.json:1:\d+: PORT\|Ethernet0\|speeed: .*speed)"},
        {"VLAN member of no VLAN", R"({"PORT": {"Ethernet0": {}}, "VLAN_MEMBER": {"Vlan9|Ethernet0": {"tagging_mode": "tagged"}}})",
         R"(^config_db\.json:1:\d+: VLAN_MEMBER\|Vlan9\|Ethernet0: "Vlan9" names no VLAN entry)"},
        {"bad tagging mode", R"({"PORT": {"Ethernet0": {}}, "VLAN": {"Vlan9": {"vlanid": "9"}}, "VLAN_MEMBER": {"Vlan9|Ethernet0": {"tagging_mode": "trunk"}}})",
         R"(^config_db\.json:1:\d+: VLAN_MEMBER\|Vlan9\|Ethernet0\|tagging_mode: "trunk")"},
        {"bad scheduler weight", R"({"PORT": {"Ethernet0": {}}, "SCHEDULER": {"s": {"type": "DWRR", "weight": "0"}}})",
         R"(^config_db\.json:1:\d+: SCHEDULER\|s\|weight: )"},
    };
    for (const auto& c : cases) {
        const std::string e = load_json_error(c.json);
        EXPECT_TRUE(std::regex_search(e, std::regex(c.expect))) << c.what << ": " << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << c.what << ": " << e;
    }
}

TEST(ConfigDb, MalformedJsonIsOneLine) {
    const std::string e = load_json_error("{\"PORT\": {\"Ethernet0\": {\"speed\": \"100000\"}\n");
    EXPECT_EQ(e.rfind("config_db.json:", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// ----------------------------------------------------------- port mapping

const char* three_ports = R"({"DEVICE_METADATA": {"localhost": {}}, "PORT": {
    "Ethernet8": {"speed": "100000"}, "Ethernet0": {"speed": "100000"}, "Ethernet4": {"speed": "100000"}},
    "PORT_QOS_MAP": {"Ethernet0,Ethernet8": {"pfc_enable": "3"}, "Ethernet4": {"pfc_enable": "4"}},
    "CABLE_LENGTH": {"AZURE": {"Ethernet0": "5m", "Ethernet4": "40m", "Ethernet8": "300m"}}})";

int id_of(const switch_cfg& c, const std::string& name) { return port(c, name).port_id; }

TEST(ConfigDb, PortsByNameNumber) {
    const switch_cfg c = load_json_ok(three_ports);
    EXPECT_EQ(id_of(c, "Ethernet0"), 0);
    EXPECT_EQ(id_of(c, "Ethernet4"), 1);
    EXPECT_EQ(id_of(c, "Ethernet8"), 2);
}

TEST(ConfigDb, PortsByIndexFirst) {
    const switch_cfg c = load_json_ok(R"({"PORT": {
        "Ethernet0": {"index": "3"}, "Ethernet4": {"index": "1"}, "Ethernet8": {"index": "2"},
        "Ethernet12": {"index": "1"}}})");
    EXPECT_EQ(id_of(c, "Ethernet4"), 0);  // index 1, name number 4
    EXPECT_EQ(id_of(c, "Ethernet12"), 1);  // index 1 (a breakout sibling), name number 12
    EXPECT_EQ(id_of(c, "Ethernet8"), 2);
    EXPECT_EQ(id_of(c, "Ethernet0"), 3);
}

TEST(ConfigDb, PortsByExplicitMapLeaveOthersOut) {
    load_options opt;
    auto m = parse_port_map("Ethernet8=net_ring0, Ethernet4=5");
    ASSERT_TRUE(m) << m.error().message;
    opt.ports = *m;
    const switch_cfg c = load_json_ok(three_ports, opt);
    ASSERT_EQ(c.ports.size(), 2u);
    EXPECT_EQ(port(c, "Ethernet8").device, "net_ring0");
    EXPECT_EQ(port(c, "Ethernet8").port_id, -1);
    EXPECT_EQ(port(c, "Ethernet8").pfc_enable, 0x08);  // "Ethernet0,Ethernet8" lost Ethernet0 only
    EXPECT_DOUBLE_EQ(port(c, "Ethernet8").cable_length_m, 300.0);
    EXPECT_EQ(port(c, "Ethernet4").port_id, 5);
    EXPECT_EQ(port(c, "Ethernet4").pfc_enable, 0x10);
    EXPECT_TRUE(contains(c.ignored_fields, "PORT|Ethernet0 (not in the port map)"));
}

TEST(ConfigDb, PortsByRocelabPortMapAndOptionOverrides) {
    std::string json = three_ports;
    json.insert(json.rfind('}'), R"(, "ROCELAB": {"port_map": {"Ethernet0": "net_ring1", "Ethernet4": "net_ring0", "Ethernet8": "2"}})");
    const switch_cfg c = load_json_ok(json);
    ASSERT_EQ(c.ports.size(), 3u);
    EXPECT_EQ(port(c, "Ethernet0").device, "net_ring1");
    EXPECT_EQ(port(c, "Ethernet4").device, "net_ring0");
    EXPECT_EQ(port(c, "Ethernet8").port_id, 2);

    load_options opt;
    opt.ports = {{"Ethernet0", "7"}};
    const switch_cfg o = load_json_ok(json, opt);
    ASSERT_EQ(o.ports.size(), 1u);
    EXPECT_EQ(o.ports[0].name, "Ethernet0");
    EXPECT_EQ(o.ports[0].port_id, 7);
}

TEST(ConfigDb, PortMapErrors) {
    load_options opt;
    opt.ports = {{"Ethernet99", "net_ring0"}};
    const std::string e = load_json_error(three_ports, opt);
    EXPECT_NE(e.find("--port-map|Ethernet99: names no PORT entry"), std::string::npos) << e;

    std::string json = three_ports;
    json.insert(json.rfind('}'), R"(, "ROCELAB": {"port_map": {"Ethernet1": "net_ring0"}})");
    const std::string f = load_json_error(json);
    EXPECT_TRUE(std::regex_search(f, std::regex(R"(^config_db\.json:\d+:\d+: ROCELAB\|port_map\|Ethernet1: names no PORT entry)")))
        << f;

    EXPECT_FALSE(parse_port_map("Ethernet0"));  // neither a list nor a file
    EXPECT_FALSE(parse_port_map("Ethernet0=,Ethernet4=1"));
}

TEST(ConfigDb, PortMapFromFile) {
    const std::string path = ::testing::TempDir() + "rocelab_port_map.txt";
    {
        std::ofstream out(path);
        out << "# SONiC name = DPDK device\nEthernet0=net_ring0\nEthernet4=net_ring1  # uplink\n";
    }
    auto m = parse_port_map(path);
    std::remove(path.c_str());
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_EQ(m->size(), 2u);
    EXPECT_EQ((*m)[0].name, "Ethernet0");
    EXPECT_EQ((*m)[0].target, "net_ring0");
    EXPECT_EQ((*m)[1].name, "Ethernet4");
    EXPECT_EQ((*m)[1].target, "net_ring1");
}

TEST(ConfigDb, VlanMembers) {
    const switch_cfg c = load_json_ok(R"({"PORT": {"Ethernet0": {}, "Ethernet4": {}, "Ethernet8": {}},
        "VLAN": {"Vlan1000": {"vlanid": "1000", "members": ["Ethernet0"]}, "Vlan20": {}},
        "VLAN_MEMBER": {"Vlan1000|Ethernet0": {"tagging_mode": "untagged"},
                        "Vlan1000|Ethernet4": {"tagging_mode": "tagged"},
                        "Vlan20|Ethernet8": {"tagging_mode": "tagged"}}})");
    EXPECT_EQ(port(c, "Ethernet0").vlan, vlan_mode::untagged);
    EXPECT_EQ(port(c, "Ethernet4").vlan, vlan_mode::tagged);
    EXPECT_EQ(port(c, "Ethernet4").vlan_id, 1000);
    EXPECT_EQ(port(c, "Ethernet8").vlan_id, 20);  // no vlanid: from the name
    EXPECT_TRUE(contains(c.ignored_fields, "VLAN|members"));
    const std::string e = load_json_error(R"({"PORT": {"Ethernet0": {}},
        "VLAN": {"Vlan1": {"vlanid": "1"}, "Vlan2": {"vlanid": "2"}},
        "VLAN_MEMBER": {"Vlan1|Ethernet0": {"tagging_mode": "tagged"}, "Vlan2|Ethernet0": {"tagging_mode": "tagged"}}})");
    EXPECT_NE(e.find("VLAN_MEMBER|Vlan2|Ethernet0: port Ethernet0 is also a member of Vlan1"), std::string::npos) << e;
}

}  // namespace config_db_test
}  // namespace rocelab
