// gen_config_test.cpp - rocelab-gen configuration: keys, errors, patterns, YAML.
#include <gtest/gtest.h>

#include <string>

#include "config/gen_config.hpp"

namespace rocelab {
namespace {

TEST(gen_config, shortcuts_set_fields) {
    gen_cfg c;
    EXPECT_EQ(gen_cfg_set(c, "pattern", "incast"), "");
    EXPECT_EQ(gen_cfg_set(c, "senders", "4"), "");
    EXPECT_EQ(gen_cfg_set(c, "rate", "10Gbps"), "");
    EXPECT_EQ(gen_cfg_set(c, "msg-size", "1MiB"), "");
    EXPECT_EQ(gen_cfg_set(c, "duration", "2s"), "");
    EXPECT_EQ(gen_cfg_set(c, "loss", "1%"), "");
    EXPECT_EQ(gen_cfg_set(c, "ack_loss", "0.5%"), "");
    EXPECT_EQ(gen_cfg_set(c, "pmtu", "4096"), "");
    EXPECT_EQ(gen_cfg_set(c, "window", "64"), "");
    EXPECT_EQ(gen_cfg_set(c, "ack-timeout", "1ms"), "");
    EXPECT_EQ(c.pattern, gen_pattern::incast);
    EXPECT_EQ(c.senders, 4u);
    EXPECT_EQ(c.rate.v, 10'000'000'000u);
    EXPECT_EQ(c.sizes.fixed.v, 1u << 20);
    EXPECT_EQ(c.duration->v, 2'000'000'000);
    EXPECT_DOUBLE_EQ(c.data_loss.p, 0.01);
    EXPECT_DOUBLE_EQ(c.ack_loss.p, 0.005);
    EXPECT_EQ(c.qp.pmtu, 4096u);
    EXPECT_EQ(c.qp.window, 64u);
    EXPECT_EQ(c.qp.ack_timeout, 8);  // 4.096us x 2^8 = 1.05ms >= 1ms
}

TEST(gen_config, errors_name_field_and_range) {
    gen_cfg c;
    const struct {
        const char* k;
        const char* v;
        const char* expect;
    } bad[] = {{"loss", "200%", "0%..100%"},   {"pmtu", "1000", "4096"},
               {"rate", "10G", "rate"},         {"pattern", "ring", "incast"},
               {"window", "0", "1..8388607"},   {"ack_timeout", "40", "0..31"},
               {"senders", "0", "1..4096"},     {"pfc_tx", "prio=3", "port"},
               {"size_dist", "uniform:9KiB-1KiB", "LO <= HI"}};
    for (const auto& b : bad) {
        const std::string e = gen_cfg_set(c, b.k, b.v);
        EXPECT_NE(e.find(b.k), std::string::npos) << e;
        EXPECT_NE(e.find(b.expect), std::string::npos) << e;
    }
    EXPECT_NE(gen_cfg_set(c, "nonsense", "1").find("unknown"), std::string::npos);
}

TEST(gen_config, patterns_expand) {
    gen_cfg c;
    ASSERT_EQ(expand_gen_cfg(c, 2), "");
    ASSERT_EQ(c.flows.size(), 1u);
    EXPECT_EQ(c.hosts[c.flows[0].src_host].port, 0);
    EXPECT_EQ(c.hosts[c.flows[0].dst_host].port, 1);
    EXPECT_EQ(c.flows[0].qp.msg_size.v, 65536u);

    gen_cfg i;
    ASSERT_EQ(gen_cfg_set(i, "pattern", "incast"), "");
    ASSERT_EQ(gen_cfg_set(i, "senders", "4"), "");
    ASSERT_EQ(expand_gen_cfg(i, 3), "");
    ASSERT_EQ(i.flows.size(), 4u);
    for (const auto& f : i.flows) {
        EXPECT_EQ(i.hosts[f.dst_host].port, 2);
        EXPECT_LT(i.hosts[f.src_host].port, 2);
    }

    gen_cfg a;
    ASSERT_EQ(gen_cfg_set(a, "pattern", "all-to-all"), "");
    ASSERT_EQ(expand_gen_cfg(a, 4), "");
    EXPECT_EQ(a.flows.size(), 12u);

    gen_cfg p;
    ASSERT_EQ(gen_cfg_set(p, "pattern", "permutation"), "");
    ASSERT_EQ(expand_gen_cfg(p, 5), "");
    ASSERT_EQ(p.flows.size(), 5u);
    for (const auto& f : p.flows) {
        EXPECT_NE(f.src_host, f.dst_host);
    }
    gen_cfg one;
    EXPECT_NE(expand_gen_cfg(one, 1).find("2 ports"), std::string::npos);
}

TEST(gen_config, yaml_hosts_flows_and_errors) {
    auto r = load_gen_cfg_from_string(R"(
seed: 7
rate: 25Gbps
hosts:
  - {name: a, port: 0, ip: 10.0.0.5}
  - {name: b, port: 1, mac: "02:aa:00:00:00:01"}
flows:
  - {src: a, dst: b, msg_size: 4KiB, start: 10ms, rate: 5Gbps}
  - {src: b, dst: a}
)",
                                      "t.yaml");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(expand_gen_cfg(*r, 2), "");
    EXPECT_EQ(r->seed, 7u);
    ASSERT_EQ(r->flows.size(), 2u);
    EXPECT_EQ(r->flows[0].sizes.fixed.v, 4096u);
    EXPECT_EQ(r->flows[0].start.v, 10'000'000);
    EXPECT_EQ(r->flows[0].rate.v, 5'000'000'000u);
    EXPECT_EQ(r->hosts[0].ip, (10u << 24) | 5u);
    EXPECT_EQ(r->hosts[1].mac[1], 0xaa);

    auto bad = load_gen_cfg_from_string("rate: 10Gbps\nwindow: -3\n", "b.yaml");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("b.yaml:2"), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find("window"), std::string::npos);
}

TEST(gen_config, ipv6_hosts) {
    gen_cfg c;
    ASSERT_EQ(gen_cfg_set(c, "ip-version", "6"), "");
    ASSERT_EQ(gen_cfg_set(c, "pattern", "incast"), "");
    ASSERT_EQ(gen_cfg_set(c, "senders", "3"), "");
    ASSERT_EQ(expand_gen_cfg(c, 3), "");
    for (const auto& h : c.hosts) {
        EXPECT_TRUE(h.v6);
        EXPECT_EQ(h.ip6[0], 0xfc);
        EXPECT_EQ(h.ip6[13], static_cast<std::uint8_t>(h.port));  // fc00::<port>:<n>
    }
    EXPECT_NE(gen_cfg_set(c, "ip_version", "5").find("4 or 6"), std::string::npos);

    auto r = load_gen_cfg_from_string(R"(
hosts:
  - {name: a, port: 0, ip: "fc00::5"}
  - {name: b, port: 1, ip: "2001:db8::1"}
  - {name: c, port: 1, ip: 10.0.0.9}
flows:
  - {src: a, dst: b}
)",
                                      "v6.yaml");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(expand_gen_cfg(*r, 2), "");
    EXPECT_TRUE(r->hosts[0].v6 && r->hosts[1].v6 && !r->hosts[2].v6);
    EXPECT_EQ(r->hosts[0].ip6[15], 5);
    EXPECT_EQ(r->hosts[1].ip6[1], 0x01);
    EXPECT_EQ(r->hosts[2].ip, (10u << 24) | 9u);

    auto mixed = load_gen_cfg_from_string("hosts:\n  - {name: a, port: 0, ip: \"fc00::5\"}\n"
                                          "  - {name: c, port: 1, ip: 10.0.0.9}\nflows:\n  - {src: a, dst: c}\n",
                                          "m.yaml");
    ASSERT_TRUE(mixed);
    EXPECT_NE(expand_gen_cfg(*mixed, 2).find("different families"), std::string::npos);
    auto bad = load_gen_cfg_from_string("hosts:\n  - {name: a, port: 0, ip: \"fc00::zz\"}\n", "x.yaml");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("x.yaml:2"), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find("hosts.a.ip"), std::string::npos) << bad.error().message;
}

TEST(gen_config, ring_allreduce_expands_to_a_ring) {
    for (int h : {2, 3, 5}) {
        gen_cfg c;
        ASSERT_EQ(gen_cfg_set(c, "pattern", "ring-allreduce"), "");
        ASSERT_EQ(gen_cfg_set(c, "msg-size", "1000B"), "");
        ASSERT_EQ(gen_cfg_set(c, "messages", "3"), "");
        ASSERT_EQ(expand_gen_cfg(c, h), "");
        EXPECT_EQ(c.pattern, gen_pattern::ring_allreduce);
        ASSERT_EQ(c.hosts.size(), static_cast<std::size_t>(h));
        ASSERT_EQ(c.flows.size(), static_cast<std::size_t>(h));
        EXPECT_EQ(c.ring_hosts, static_cast<std::uint32_t>(h));
        EXPECT_EQ(c.ring_steps, static_cast<std::uint32_t>(2 * (h - 1)));
        // ceil(1000 / H) rounded up to 4 bytes: 500, 336 (334), 200.
        const std::uint64_t chunk = h == 2 ? 500 : h == 3 ? 336 : 200;
        EXPECT_EQ(c.ring_chunk, chunk);
        EXPECT_EQ(c.ring_collectives, 3u);
        for (int i = 0; i < h; ++i) {
            const auto& f = c.flows[static_cast<std::size_t>(i)];
            EXPECT_EQ(f.src_host, i);
            EXPECT_EQ(f.dst_host, (i + 1) % h);
            EXPECT_EQ(c.hosts[static_cast<std::size_t>(f.src_host)].port, i);
            EXPECT_EQ(f.sizes.fixed.v, chunk);
            EXPECT_EQ(f.qp.msg_size.v, chunk);
            EXPECT_EQ(f.arrivals.count, 3u * 2u * static_cast<std::uint64_t>(h - 1));
            EXPECT_EQ(f.arrivals.outstanding, 1u);
        }
    }
    // H = 2: both directions over one pair.
    gen_cfg two;
    ASSERT_EQ(gen_cfg_set(two, "pattern", "ring_allreduce"), "");
    ASSERT_EQ(expand_gen_cfg(two, 2), "");
    EXPECT_EQ(two.flows[0].src_host, 0);
    EXPECT_EQ(two.flows[0].dst_host, 1);
    EXPECT_EQ(two.flows[1].src_host, 1);
    EXPECT_EQ(two.flows[1].dst_host, 0);
    EXPECT_EQ(two.ring_collectives, 0u);  // unlimited
    EXPECT_EQ(two.flows[0].arrivals.count, 0u);

    gen_cfg one;
    ASSERT_EQ(gen_cfg_set(one, "pattern", "ring-allreduce"), "");
    EXPECT_NE(expand_gen_cfg(one, 1).find("2 ports"), std::string::npos);
    gen_cfg pois;
    ASSERT_EQ(gen_cfg_set(pois, "pattern", "ring-allreduce"), "");
    ASSERT_EQ(gen_cfg_set(pois, "arrivals", "poisson:10us"), "");
    EXPECT_NE(expand_gen_cfg(pois, 2).find("closed-loop"), std::string::npos);
    gen_cfg zero;
    ASSERT_EQ(gen_cfg_set(zero, "pattern", "ring-allreduce"), "");
    ASSERT_EQ(gen_cfg_set(zero, "msg-size", "0B"), "");
    EXPECT_NE(expand_gen_cfg(zero, 2).find("msg_size"), std::string::npos);

    auto y = load_gen_cfg_from_string("pattern: ring-allreduce\nmsg_size: 1MiB\nmessages: 2\n", "r.yaml");
    ASSERT_TRUE(y) << y.error().message;
    ASSERT_EQ(expand_gen_cfg(*y, 4), "");
    EXPECT_EQ(y->ring_chunk, 262144u);
    EXPECT_EQ(y->flows.size(), 4u);
    EXPECT_EQ(y->flows[3].dst_host, 0);
    auto yf = load_gen_cfg_from_string("pattern: ring-allreduce\nflows:\n  - {src: h0, dst: h1}\n", "f.yaml");
    ASSERT_TRUE(yf) << yf.error().message;
    EXPECT_NE(expand_gen_cfg(*yf, 2).find("remove flows"), std::string::npos);
}

}  // namespace
}  // namespace rocelab
