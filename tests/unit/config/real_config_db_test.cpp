// real_config_db_test.cpp - the config_db.json files in conf/config_db/real
// (written in the shapes SONiC renders for real switches, README there)
// load as they are; their buffer values are the ones the files say; the
// SONiC buffer features they use (buffer_model, shared headroom pool,
// headroom_type dynamic, NULL profiles, egress pools, BUFFER_QUEUE, chassis
// QUEUE keys) have their documented meaning; a bad value is one line naming
// file, TABLE|key|field and the accepted range.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_db.hpp"
#include "config/switch_config.hpp"
#include "qos/mmu.hpp"
#include "rocelab_version.h"

namespace rocelab {
namespace real_config_db_test {  // its own names: meson compiles the suite as unity blocks

std::string real_path(const std::string& name) {
    return std::string(ROCELAB_SOURCE_DIR) + "/conf/config_db/real/" + name;
}

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

switch_cfg load_ok(const std::string& name) {
    auto r = load_switch_cfg(real_path(name));
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : switch_cfg{};
}

bool any_note(const switch_cfg& c, const std::string& needle) {
    for (const auto& n : c.notes) {
        if (n.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

const port_cfg& port(const switch_cfg& c, const std::string& name) {
    for (const auto& p : c.ports) {
        if (p.name == name) {
            return p;
        }
    }
    ADD_FAILURE() << "no port " << name;
    static port_cfg none;
    return none;
}

const std::vector<std::string> files = {
    "mellanox-sn2700-t0.json",     "mellanox-sn4600c-t1.json", "broadcom-td3-s5248f-t0.json",
    "broadcom-th3-z9332f-t1.json", "arista-7050cx3-32s-t0.json", "dell-s6100-t0.json",
    "chassis-7800r3-lc.json",
};

// Every file loads, keeps all its pools, gives every port a lossless PG 3
// and 4 (S6100: its admin-down ports excepted) and fits the MMU as the
// switch builds it (mmu::validate, the check the data path makes).
TEST(RealConfigDb, EveryFileLoadsAndFitsTheMmu) {
    for (const auto& f : files) {
        SCOPED_TRACE(f);
        const switch_cfg c = load_ok(f);
        EXPECT_TRUE(c.config_db);
        EXPECT_EQ(c.pools.size(), f == "broadcom-th3-z9332f-t1.json" ? 2u : 3u);
        ASSERT_TRUE(c.pool.enabled);
        EXPECT_EQ(c.pool.name, "ingress_lossless_pool");
        std::vector<std::array<pg_buffer_cfg, 8>> pgs;
        for (const auto& p : c.ports) {
            pgs.push_back(p.pgs);
        }
        EXPECT_EQ(mmu::validate(c.pool, static_cast<int>(c.ports.size()), pgs), "");
        const std::string d = describe_switch_cfg(c);
        EXPECT_NE(d.find("BUFFER_POOL egress_lossless_pool: egress"), std::string::npos) << d;
        EXPECT_NE(d.find("ingress buffer (MMU): pool ingress_lossless_pool"), std::string::npos) << d;
        std::printf("%s", d.c_str());  // the --check-config text, for the log
    }
}

// Traditional model with a shared headroom pool (pool xoff): the headroom
// pool is that xoff, carved out of size; the profile values are as written.
TEST(RealConfigDb, MellanoxSn2700TraditionalSharedHeadroom) {
    const switch_cfg c = load_ok("mellanox-sn2700-t0.json");
    EXPECT_EQ(c.model, buffer_model::traditional);
    EXPECT_EQ(c.pool.size.v, 7719936u);
    EXPECT_EQ(c.pool.shared_headroom.v, 1433600u);
    const auto& e0 = port(c, "Ethernet0");
    EXPECT_EQ(e0.pgs[3].reserved.v, 19456u);
    EXPECT_EQ(e0.pgs[3].xoff.v, 20480u);
    EXPECT_EQ(e0.pgs[3].xon->v, 19456u);
    EXPECT_EQ(e0.pgs[3].dynamic_th, 0);
    EXPECT_FALSE(e0.pgs[0].lossless());
    EXPECT_EQ(e0.pgs[0].dynamic_th, 3);
    EXPECT_EQ(port(c, "Ethernet124").pgs[4].xoff.v, 36864u);  // 40m uplink
    EXPECT_EQ(e0.egress_buffers[3].profile, "egress_lossless_profile");
    EXPECT_EQ(e0.egress_buffers[3].dynamic_th, 7);
    EXPECT_EQ(e0.egress_buffers[6].profile, "q_lossy_profile");
    EXPECT_FALSE(e0.egress_buffers[7].configured);
    EXPECT_TRUE(any_note(c, "BUFFER_POOL|ingress_lossless_pool|xoff: shared headroom pool of 1433600 bytes"));
    // dynamic_th 7 on a 13945824-byte egress pool holds more than the ingress can admit: no warning.
    EXPECT_FALSE(any_note(c, "warning"));
}

// Dynamic model: no ingress pool size (the egress lossless pool is the ASIC's
// buffer), NULL lossless PGs and headroom_type dynamic get the formula's
// headroom, PGs the file does not give are added for the PFC priorities,
// over_subscribe_ratio sizes the shared headroom pool.
TEST(RealConfigDb, MellanoxSn4600DynamicModel) {
    const switch_cfg c = load_ok("mellanox-sn4600c-t1.json");
    EXPECT_EQ(c.model, buffer_model::dynamic);
    EXPECT_EQ(c.default_dynamic_th, 0);
    EXPECT_DOUBLE_EQ(c.over_subscribe_ratio, 2.0);
    EXPECT_EQ(c.pool.size.v, 60817392u);
    EXPECT_TRUE(any_note(c, "taken as egress_lossless_pool size 60817392"));
    // LOSSLESS_TRAFFIC_PATTERN feeds the headroom formula.
    EXPECT_EQ(c.asic.lossless_mtu.v, 1024u);
    EXPECT_DOUBLE_EQ(c.asic.small_packet_percent, 100.0);
    for (const auto& t : c.ignored_tables) {
        EXPECT_NE(t, "LOSSLESS_TRAFFIC_PATTERN");
    }
    const auto& near = port(c, "Ethernet0");   // NULL, 40m
    const auto& far = port(c, "Ethernet128");  // NULL, 300m
    for (const auto* p : {&near, &far}) {
        EXPECT_TRUE(p->pgs[3].xoff_auto);
        EXPECT_FALSE(p->pgs[3].headroom_pending());
        EXPECT_EQ(p->pgs[3].dynamic_th, 0);                  // default_dynamic_th
        EXPECT_EQ(p->pgs[3].reserved.v, p->pgs[3].xon->v);  // size = xoff + xon, reserved = size - xoff
    }
    // 260 m more cable at 100 Gb/s is 2 x 260 / 1.98e8 s x 12.5e9 B/s = 32828 B more in flight
    // (before cell rounding): the 300 m PG's headroom must be at least that much larger.
    EXPECT_GE(far.pgs[3].xoff.v, near.pgs[3].xoff.v + 32828u);
    EXPECT_EQ(port(c, "Ethernet224").pgs[3].dynamic_th, 1);  // headroom_type dynamic profile
    EXPECT_TRUE(port(c, "Ethernet224").pgs[3].xoff_auto);
    EXPECT_TRUE(port(c, "Ethernet252").pgs[4].xoff_auto);  // no BUFFER_PG entry: added
    EXPECT_TRUE(any_note(c, "Ethernet248|3,4, Ethernet252|3,4"));
    std::uint64_t xoff = 0;
    for (const auto& p : c.ports) {
        for (const auto& pg : p.pgs) {
            xoff += pg.configured ? pg.xoff.v : 0;
        }
    }
    EXPECT_EQ(c.pool.shared_headroom.v, (xoff + 1) / 2);
    EXPECT_TRUE(any_note(c, "over_subscribe_ratio 2"));
    EXPECT_FALSE(port(c, "Ethernet0").egress_buffers[0].pool.empty());
    // egress_lossless_profile dynamic_th 7 is SAI's "infinity": the whole egress pool, no warning.
    EXPECT_FALSE(any_note(c, "warning"));
}

// Broadcom TD3: pool xoff far below the PGs' xoff (over-subscribed), xon
// and xon_offset (xon kept), a static egress lossless threshold below the
// ingress pool: a warning naming the queues.
TEST(RealConfigDb, BroadcomTd3WarnsAboutEgressLossless) {
    const switch_cfg c = load_ok("broadcom-td3-s5248f-t0.json");
    EXPECT_EQ(c.pool.size.v, 32689152u);
    EXPECT_EQ(port(c, "Ethernet0").speed->v, 25'000'000'000u);
    EXPECT_EQ(port(c, "Ethernet0").pgs[3].xoff.v, 21248u);
    EXPECT_EQ(port(c, "Ethernet0").pgs[3].dynamic_th, -4);
    EXPECT_EQ(port(c, "Ethernet60").pgs[3].xoff.v, 65792u);
    EXPECT_FALSE(port(c, "Ethernet0").pgs[3].xon_offset.has_value());
    EXPECT_TRUE(any_note(c, "warning: BUFFER_QUEUE: lossless queues 3,4 of Ethernet0, Ethernet1, Ethernet2, ..., Ethernet60 (52 ports) use"));
    EXPECT_TRUE(any_note(c, "egress_lossless_profile, which holds at most size + static_th = 32340992 bytes"));
}

// Broadcom TH3 (pool and profile values of the Z9332f template): SONiC's
// ingress_lossy_profile has static_th on a dynamic pool; the egress lossy
// profile has dynamic_th in the static egress lossless pool; the egress
// lossless static_th is above the pool size.
TEST(RealConfigDb, BroadcomTh3StaticLossyOnDynamicPool) {
    const switch_cfg c = load_ok("broadcom-th3-z9332f-t1.json");
    const auto& e0 = port(c, "Ethernet0");
    EXPECT_EQ(c.pool.mode, threshold_mode::dynamic_th);
    EXPECT_EQ(e0.pgs[0].mode, threshold_mode::static_th);
    EXPECT_EQ(e0.pgs[0].static_th.v, 66394076u);
    EXPECT_EQ(c.pool.size.v, 66394076u);
    EXPECT_EQ(c.pool.shared_headroom.v, 27200352u);
    EXPECT_EQ(e0.egress_buffers[0].pool, "egress_lossless_pool");
    EXPECT_EQ(e0.egress_buffers[0].dynamic_th, 1);
    EXPECT_EQ(e0.egress_buffers[3].static_th.v, 67117468u);
    EXPECT_EQ(e0.pgs[3].mode, threshold_mode::dynamic_th);
    EXPECT_EQ(port(c, "Ethernet128").pgs[3].xoff.v, 178752u);
    EXPECT_EQ(e0.speed->v, 400'000'000'000u);
    EXPECT_FALSE(any_note(c, "warning"));
    // The egress lossy profile is dynamic: not enforced, said once.
    EXPECT_TRUE(any_note(c, "BUFFER_PROFILE|egress_lossy_profile|dynamic_th: egress dynamic thresholds are not modelled"));
}

// Arista 7050CX3: [TABLE|name] references and comma-list keys.
TEST(RealConfigDb, Arista7050cx3ReferencesAndCommaKeys) {
    const switch_cfg c = load_ok("arista-7050cx3-32s-t0.json");
    EXPECT_EQ(port(c, "Ethernet0").pgs[3].xoff.v, 41148u);
    EXPECT_EQ(port(c, "Ethernet124").pgs[3].xoff.v, 53142u);
    EXPECT_EQ(port(c, "Ethernet124").egress_buffers[4].profile, "egress_lossless_profile");
    EXPECT_EQ(port(c, "Ethernet64").egress_buffers[5].profile, "egress_lossy_profile");
    EXPECT_EQ(c.pool.size.v, 32732160u);
    EXPECT_EQ(c.pool.shared_headroom.v, 1622016u);
    EXPECT_EQ(port(c, "Ethernet0").egress_buffers[0].size.v, 1792u);
    EXPECT_EQ(port(c, "Ethernet0").egress_buffers[0].dynamic_th, -1);
    // The template's egress lossless static_th (32599040) is below its ingress pool (32732160).
    EXPECT_TRUE(any_note(c, "which holds at most size + static_th = 32599040 bytes, less than the 32732160 bytes"));
}

// Dell S6100 as buffers-dell6100.json: a 4194112-byte shared headroom pool
// under 44 lossless ports x 2 PGs x 120064 bytes of xoff; admin-down ports'
// lossless PGs are NULL (no buffer).
TEST(RealConfigDb, DellS6100SharedHeadroomAndNull) {
    const switch_cfg c = load_ok("dell-s6100-t0.json");
    EXPECT_EQ(c.pool.size.v, 10875072u);
    EXPECT_EQ(c.pool.shared_headroom.v, 4194112u);
    EXPECT_EQ(port(c, "Ethernet0").pgs[3].xoff.v, 120064u);
    EXPECT_EQ(port(c, "Ethernet0").pgs[3].reserved.v, 1248u);
    EXPECT_EQ(port(c, "Ethernet0").pgs[0].static_th.v, 10875072u);
    EXPECT_FALSE(port(c, "Ethernet2").pgs[3].configured);  // "NULL"
    EXPECT_FALSE(port(c, "Ethernet2").pgs[4].configured);
    EXPECT_TRUE(port(c, "Ethernet1").pgs[3].configured);
    std::uint64_t xoff = 0;
    for (const auto& p : c.ports) {
        xoff += p.pgs[3].xoff.v + p.pgs[4].xoff.v;
    }
    EXPECT_EQ(xoff, 44u * 2u * 120064u);
    EXPECT_GT(xoff, 2 * c.pool.shared_headroom.v);  // over-subscribed 2.5:1
    EXPECT_FALSE(any_note(c, "warning"));
}

// The S6100 buffers in the MMU: headroom comes from the shared headroom
// pool, so one PG fills its own xoff, but once the pool is used up by other
// PGs a PG in XOFF drops (drop_headroom_overflow) before its own xoff.
TEST(RealConfigDb, SharedHeadroomPoolInTheMmu) {
    const switch_cfg c = load_ok("dell-s6100-t0.json");
    std::vector<std::array<pg_buffer_cfg, 8>> pgs;
    for (const auto& p : c.ports) {
        auto a = p.pgs;
        a[3].mode = threshold_mode::static_th;  // a small shared limit: XOFF after one frame
        a[3].static_th = bytes{1024};
        a[3].xon = bytes{0};
        pgs.push_back(a);
    }
    ASSERT_EQ(mmu::validate(c.pool, static_cast<int>(pgs.size()), pgs), "");
    mmu m(c.pool, static_cast<int>(pgs.size()), pgs);
    EXPECT_EQ(m.pool().headroom_total, 4194112u);
    std::vector<int> lossless;  // the ports up (the others' PG 3 is NULL)
    for (std::size_t i = 0; i < c.ports.size(); ++i) {
        if (c.ports[i].pgs[3].lossless()) {
            lossless.push_back(static_cast<int>(i));
        }
    }
    ASSERT_EQ(lossless.size(), 44u);
    // 34 ports each fill their own xoff (80 frames, 120000 of 120064 bytes): 4080000 bytes.
    const std::uint32_t frame = 1500;
    std::uint64_t held = 0;
    for (int k = 0; k < 34; ++k) {
        const int p = lossless[static_cast<std::size_t>(k)];
        std::uint64_t pg_headroom = 0;
        for (int i = 0; i < 200; ++i) {
            const auto r = m.admit(p, 3, frame);
            if (!r.ok()) {
                EXPECT_EQ(r.verdict, admit_verdict::drop_headroom_overflow);
                break;
            }
            if ((r.regions & region_headroom) != 0) {
                pg_headroom += frame;
            }
        }
        EXPECT_EQ(m.snapshot(p, 3).headroom_use, pg_headroom);
        EXPECT_LE(pg_headroom, 120064u);
        EXPECT_GT(pg_headroom, 120064u - frame);
        held += pg_headroom;
    }
    // 4194112 - held bytes are left; port 34 gets at most that, less than its xoff.
    ASSERT_LT(4194112u - held, 120064u);
    const int last = lossless[34];
    std::uint64_t got = 0;
    for (int i = 0; i < 200; ++i) {
        const auto r = m.admit(last, 3, frame);
        if (!r.ok()) {
            EXPECT_EQ(r.verdict, admit_verdict::drop_headroom_overflow);
            break;
        }
        got += (r.regions & region_headroom) != 0 ? frame : 0;
    }
    EXPECT_LE(got, 4194112u - held);
    EXPECT_GT(got + frame, 4194112u - held);
    EXPECT_GE(m.snapshot(last, 3).counters.drop_headroom_overflow, 1u);
    EXPECT_LT(m.snapshot(last, 3).headroom_use, 120064u - frame);  // below its own xoff
    // Releasing one PG's frames gives its headroom back to the shared pool.
    const int first = lossless[0];
    const auto before = m.snapshot(first, 3);
    for (std::uint64_t b = 0; b < before.reserved_use + before.shared_use + before.headroom_use; b += frame) {
        m.release(first, 3, charge{frame});
    }
    EXPECT_EQ(m.snapshot(first, 3).headroom_use, 0u);
    EXPECT_TRUE(m.admit(last, 3, frame).ok());
}

// VOQ chassis line card: this card's host|asic|port|queue keys apply, the
// other card's are left out and listed.
TEST(RealConfigDb, ChassisLineCardKeys) {
    const switch_cfg c = load_ok("chassis-7800r3-lc.json");
    EXPECT_EQ(c.ports.size(), 14u);
    const auto& e0 = port(c, "Ethernet0");
    EXPECT_TRUE(e0.wred[3].enabled);
    EXPECT_EQ(e0.sched.queues[3].weight, 15u);
    EXPECT_EQ(e0.egress_buffers[3].profile, "egress_lossless_profile");
    EXPECT_EQ(e0.egress_buffers[0].profile, "egress_lossy_profile");
    bool listed = false;
    for (const auto& f : c.ignored_fields) {
        listed = listed || f == "QUEUE|str2-7804-lc4-1|Asic0 (another line card's or ASIC's system ports)";
    }
    EXPECT_TRUE(listed);
    EXPECT_EQ(c.pool.size.v, 6441610000u);
    // dynamic_th -1 (alpha 1/2) lets one queue hold a third of the egress pool: 2147203333 bytes.
    EXPECT_TRUE(any_note(c, "x alpha/(1+alpha) with dynamic_th -1 = 2147203333 bytes, less than the 6441610000 bytes"));
    EXPECT_EQ(port(c, "Ethernet-IB0").speed->v, 10'000'000'000u);
}

// ------------------------------------------------------------- bad values

struct bad {
    std::string file;
    std::string from;  // unique text in the file
    std::string to;
    std::vector<std::string> expect;  // each must appear in the one-line error
};

TEST(RealConfigDb, BadVariantsGiveOneLine) {
    const std::vector<bad> cases = {
        {"mellanox-sn2700-t0.json", R"("xoff": "1433600")", R"("xoff": "-5")",
         {"BUFFER_POOL|ingress_lossless_pool|xoff", "0..68719476736 bytes"}},
        {"mellanox-sn4600c-t1.json", R"("buffer_model": "dynamic")", R"("buffer_model": "dyn")",
         {"DEVICE_METADATA|localhost|buffer_model", "traditional, dynamic"}},
        {"mellanox-sn4600c-t1.json", R"("buffer_model": "dynamic")", R"("buffer_model": "traditional")",
         {"BUFFER_POOL|egress_lossy_pool", "size is required"}},
        {"mellanox-sn4600c-t1.json", R"("over_subscribe_ratio": "2")", R"("over_subscribe_ratio": "2000")",
         {"DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE|over_subscribe_ratio", "0..1000"}},
        {"mellanox-sn4600c-t1.json", R"("headroom_type": "dynamic")", R"("headroom_type": "auto")",
         {"BUFFER_PROFILE|non_default_dynamic_th_profile|headroom_type", "static, dynamic"}},
        {"mellanox-sn4600c-t1.json", R"("mtu": "1024")", R"("mtu": "40000")",
         {"LOSSLESS_TRAFFIC_PATTERN|AZURE|mtu", "64..16384"}},
        {"mellanox-sn4600c-t1.json", R"("default_dynamic_th": "0")", R"("default_dynamic_th": "9")",
         {"DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE|default_dynamic_th", "-8..8"}},
        {"dell-s6100-t0.json", R"("static_th": "15982720")", R"("static_th": "0")",
         {"BUFFER_PROFILE|egress_lossless_profile|static_th", "1..68719476736 bytes"}},
        {"broadcom-th3-z9332f-t1.json", R"("Ethernet0|0-2": {
            "profile": "egress_lossy_profile")",
         R"("Ethernet0|0-2": {
            "profile": "ingress_lossy_profile")",
         {"BUFFER_QUEUE|Ethernet0|0-2|profile", "BUFFER_QUEUE takes egress profiles"}},
        {"broadcom-th3-z9332f-t1.json", R"("Ethernet0|0": {
            "profile": "ingress_lossy_profile")",
         R"("Ethernet0|0": {
            "profile": "egress_lossy_profile")",
         {"BUFFER_PG|Ethernet0|0|profile", "BUFFER_PG takes ingress profiles"}},
        {"arista-7050cx3-32s-t0.json", R"("ingress_lossless_pool": {
            "size": "32732160")",
         R"("ingress_lossless_pool": {
            "size": "1000000")",
         {"BUFFER_POOL|ingress_lossless_pool|size", "\"1000000\" is too small", "accepted: at least",
          "shared headroom pool 1622016"}},
        {"chassis-7800r3-lc.json", R"("str2-7804-lc3-1|Asic0|Ethernet0|3": {)",
         R"("str2-7804-lc3-1|Asic0|Ethernet0|9": {)", {"QUEUE|Ethernet0|9", "queue numbers 0..7"}},
    };
    for (const auto& b : cases) {
        SCOPED_TRACE(b.file + ": " + b.to);
        std::string text = read(real_path(b.file));
        const auto at = text.find(b.from);
        ASSERT_NE(at, std::string::npos);
        ASSERT_EQ(text.find(b.from, at + 1), std::string::npos) << "not unique";
        text.replace(at, b.from.size(), b.to);
        const auto r = load_switch_cfg_from_string(text, b.file);
        ASSERT_FALSE(r) << "loaded";
        const std::string& m = r.error().message;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        EXPECT_EQ(m.rfind(b.file + ":", 0), 0u) << m;
        for (const auto& e : b.expect) {
            EXPECT_NE(m.find(e), std::string::npos) << "expected \"" << e << "\" in: " << m;
        }
    }
}

// QUEUE max_packets: the 16384 ring limit is gone (queues are linked
// through the mbufs); the bound is ROCELAB mbufs.
TEST(RealConfigDb, QueueMaxPacketsBoundedByMbufs) {
    const std::string base = "PORT:\n  Ethernet0: {port_id: 0}\n";
    auto ok = load_switch_cfg_from_string(base + "QUEUE:\n  \"Ethernet0|1\": {max_packets: 100000}\n", "q.yaml");
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->ports[0].limits[1].max_packets, 100000u);
    auto big = load_switch_cfg_from_string(
        "ROCELAB: {mbufs: 300000}\n" + base + "QUEUE:\n  \"Ethernet0|1\": {max_packets: 300000}\n", "q.yaml");
    ASSERT_TRUE(big) << big.error().message;
    EXPECT_EQ(big->ports[0].limits[1].max_packets, 300000u);
    auto over = load_switch_cfg_from_string(base + "QUEUE:\n  \"Ethernet0|1\": {max_packets: 147457}\n", "q.yaml");
    ASSERT_FALSE(over);
    EXPECT_NE(over.error().message.find("QUEUE|Ethernet0|1|max_packets: \"147457\" is out of range"), std::string::npos)
        << over.error().message;
    EXPECT_NE(over.error().message.find("1..147456"), std::string::npos) << over.error().message;
    EXPECT_NE(over.error().message.find("ROCELAB|mbufs"), std::string::npos) << over.error().message;
}

// A BUFFER_QUEUE static_th on a lossy queue is its max_bytes (unless QUEUE
// gives one); lossless queues keep theirs (the switch never tail-drops them).
TEST(RealConfigDb, StaticEgressLossyThresholdIsMaxBytes) {
    const std::string y = R"(PORT:
  Ethernet0: {port_id: 0, speed: 100Gbps}
  Ethernet4: {port_id: 1, speed: 100Gbps}
QUEUE:
  "Ethernet4|1": {max_bytes: 2MiB}
BUFFER_POOL:
  ingress_lossless_pool: {size: 12MiB, type: ingress, mode: dynamic}
  egress_lossy_pool: {size: 8MiB, type: egress, mode: static}
BUFFER_PROFILE:
  lossy: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}
  q_static: {pool: egress_lossy_pool, size: 1518, static_th: 300000}
BUFFER_PG:
  "global|0": {profile: lossy}
BUFFER_QUEUE:
  "global|0-4": {profile: q_static}
)";
    auto r = load_switch_cfg_from_string(y, "s.yaml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->ports[0].limits[1].max_bytes.v, 301518u);
    EXPECT_EQ(r->ports[1].limits[1].max_bytes.v, 2u << 20);   // QUEUE max_bytes wins
    EXPECT_EQ(r->ports[0].limits[3].max_bytes.v, 1u << 20);   // lossless (pfc_enable 3,4): unchanged default
    EXPECT_TRUE(r->ports[0].egress_buffers[3].configured);
    // The lossless queues hold 1518 + 300000 bytes, less than the 12MiB pool: warned.
    bool warned = false;
    for (const auto& n : r->notes) {
        warned = warned || n.find("warning: BUFFER_QUEUE: lossless queues 3,4 of Ethernet0, Ethernet4 use egress profile q_static") != std::string::npos;
    }
    EXPECT_TRUE(warned);
}

}  // namespace real_config_db_test
}  // namespace rocelab
