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

TEST(gen_config, start_psn_sets_both_ends_of_every_flow) {
    gen_cfg d;
    EXPECT_EQ(d.qp.start_psn, 0u);  // default
    gen_cfg c;
    ASSERT_EQ(gen_cfg_set(c, "start-psn", "16777000"), "");
    EXPECT_EQ(c.qp.start_psn, 16777000u);
    ASSERT_EQ(gen_cfg_set(c, "start_psn", "0xFFFFFF"), "");
    EXPECT_EQ(c.qp.start_psn, 0xFFFFFFu);
    ASSERT_EQ(gen_cfg_set(c, "pattern", "incast"), "");
    ASSERT_EQ(gen_cfg_set(c, "senders", "3"), "");
    ASSERT_EQ(expand_gen_cfg(c, 3), "");
    ASSERT_EQ(c.flows.size(), 3u);
    // The pipeline builds a flow's requester from f.qp and its responder
    // from a copy of f.qp with the QPNs swapped: both start at start_psn.
    for (const auto& f : c.flows) {
        EXPECT_EQ(f.qp.start_psn, 0xFFFFFFu) << f.name;
    }
    // Out of range or not a number: one line naming the key, the text and the range.
    for (const char* v : {"16777216", "-1", "0x1000000", "1e6", ""}) {
        gen_cfg b;
        const std::string e = gen_cfg_set(b, "start_psn", v);
        EXPECT_NE(e.find("start_psn"), std::string::npos) << v;
        EXPECT_NE(e.find(std::string("\"") + v + "\""), std::string::npos) << e;
        EXPECT_NE(e.find("0..16777215"), std::string::npos) << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
        EXPECT_EQ(b.qp.start_psn, 0u);
    }
    // YAML, globally and per flow.
    auto r = load_gen_cfg_from_string(R"(
start_psn: 100
flows:
  - {src: h0, dst: h1}
  - {src: h1, dst: h0, start_psn: 16777215}
)",
                                      "p.yaml");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(expand_gen_cfg(*r, 2), "");
    ASSERT_EQ(r->flows.size(), 2u);
    EXPECT_EQ(r->flows[0].qp.start_psn, 100u);
    EXPECT_EQ(r->flows[1].qp.start_psn, 16777215u);
    auto y = load_gen_cfg_from_string("start_psn: 99999999\n", "q.yaml");
    ASSERT_FALSE(y);
    EXPECT_NE(y.error().message.find("q.yaml:1"), std::string::npos) << y.error().message;
    EXPECT_NE(y.error().message.find("start_psn"), std::string::npos) << y.error().message;
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

// nccl-tests' collectives: steps per iteration, the chunk S / H (rounded up
// to 4 bytes), flows (rings: i -> i+1; alltoall: every ordered pair), and
// the bus factors of nccl-tests' PERFORMANCE.md.
TEST(gen_config, collectives_expand) {
    struct kase {
        const char* pattern;
        gen_pattern p;
        std::uint32_t steps;  // for H = 6
        std::size_t flows;
        double factor;
    };
    for (const kase& k : {kase{"all-reduce", gen_pattern::ring_allreduce, 10, 6, 10.0 / 6.0},
                          kase{"all-gather", gen_pattern::all_gather, 5, 6, 5.0 / 6.0},
                          kase{"reduce-scatter", gen_pattern::reduce_scatter, 5, 6, 5.0 / 6.0},
                          kase{"alltoall", gen_pattern::alltoall, 1, 30, 5.0 / 6.0}}) {
        gen_cfg c;
        ASSERT_EQ(gen_cfg_set(c, "pattern", k.pattern), "") << k.pattern;
        ASSERT_EQ(gen_cfg_set(c, "msg_size", "1000003B"), "");
        ASSERT_EQ(gen_cfg_set(c, "messages", "2"), "");
        ASSERT_EQ(expand_gen_cfg(c, 6), "") << k.pattern;
        EXPECT_EQ(c.pattern, k.p);
        EXPECT_TRUE(is_collective(c.pattern));
        EXPECT_EQ(c.ring_hosts, 6u);
        EXPECT_EQ(c.ring_steps, k.steps) << k.pattern;
        EXPECT_EQ(c.ring_chunk, 166668u);  // ceil(1000003 / 6) = 166668, a multiple of 4
        ASSERT_EQ(c.flows.size(), k.flows) << k.pattern;
        for (const auto& f : c.flows) {
            EXPECT_NE(f.src_host, f.dst_host);
            EXPECT_EQ(f.sizes.fixed.v, 166668u);
            EXPECT_EQ(f.arrivals.count, 2u * k.steps);
            EXPECT_EQ(f.arrivals.outstanding, 1u);
        }
        EXPECT_DOUBLE_EQ(collective_bus_factor(c.pattern, 6), k.factor) << k.pattern;
    }
    EXPECT_FALSE(is_collective(gen_pattern::all_to_all));
}

// Patterns take the explicit hosts, with their own addresses, when given
// (host i in the place of port i); without them, the default hosts.
TEST(gen_config, patterns_use_explicit_hosts) {
    auto r = load_gen_cfg_from_string(R"(
pattern: all-reduce
msg_size: 3MiB
messages: 1
hosts:
  - {name: a, port: 0, ip: 192.168.0.5, mac: "02:aa:00:00:00:05"}
  - {name: b, port: 1, ip: 192.168.1.5}
  - {name: c, port: 2, ip: 192.168.2.5}
)",
                                      "e.yaml");
    ASSERT_TRUE(r) << r.error().message;
    gen_cfg c = *r;
    ASSERT_EQ(expand_gen_cfg(c, 3), "");
    ASSERT_EQ(c.hosts.size(), 3u);
    EXPECT_EQ(c.hosts[0].ip, 0xC0A80005u);
    EXPECT_EQ(c.hosts[2].ip, 0xC0A80205u);
    EXPECT_EQ(c.hosts[0].mac[1], 0xaa);
    ASSERT_EQ(c.flows.size(), 3u);
    EXPECT_EQ(c.flows[0].name, "a->b#0");
    EXPECT_EQ(c.flows[2].name, "c->a#2");
    EXPECT_EQ(c.ring_steps, 4u);
    // A second expansion gives the same hosts and flows.
    ASSERT_EQ(expand_gen_cfg(c, 3), "");
    EXPECT_EQ(c.hosts.size(), 3u);
    EXPECT_EQ(c.flows.size(), 3u);

    // Incast over explicit hosts: the last host receives, the others send.
    auto i = load_gen_cfg_from_string("pattern: incast\nsenders: 4\nhosts:\n  - {name: x, port: 0, ip: 10.9.0.1}\n"
                                      "  - {name: y, port: 1, ip: 10.9.1.1}\n  - {name: z, port: 2, ip: 10.9.2.1}\n",
                                      "i.yaml");
    ASSERT_TRUE(i) << i.error().message;
    gen_cfg ic = *i;
    ASSERT_EQ(expand_gen_cfg(ic, 3), "");
    EXPECT_EQ(ic.hosts.size(), 3u);
    ASSERT_EQ(ic.flows.size(), 4u);
    for (const auto& f : ic.flows) {
        EXPECT_EQ(ic.hosts[f.dst_host].name, "z");
        EXPECT_NE(ic.hosts[f.src_host].name, "z");
    }

    // Default hosts are made again on every expansion (not taken as explicit).
    gen_cfg d;
    ASSERT_EQ(gen_cfg_set(d, "pattern", "alltoall"), "");
    ASSERT_EQ(expand_gen_cfg(d, 4), "");
    ASSERT_EQ(expand_gen_cfg(d, 3), "");
    EXPECT_EQ(d.hosts.size(), 3u);
    EXPECT_EQ(d.flows.size(), 6u);

    // A collective needs one host per port.
    auto s = load_gen_cfg_from_string("pattern: all-gather\nhosts:\n  - {name: x, port: 0}\n  - {name: y, port: 0}\n"
                                      "  - {name: z, port: 1}\n",
                                      "s.yaml");
    ASSERT_TRUE(s) << s.error().message;
    gen_cfg sc = *s;
    EXPECT_NE(expand_gen_cfg(sc, 2).find("one host per port"), std::string::npos) << expand_gen_cfg(sc, 2);
}

using namespace rocelab::literals;

TEST(gen_config, dcqcn_defaults_to_nvidia_cx) {
    gen_cfg c;
    EXPECT_EQ(c.dcqcn, dcqcn_profile::nvidia_cx);
    const dcqcn_cfg d = resolve_dcqcn(c, 100_Gbps);
    const dcqcn_cfg w = dcqcn_defaults(dcqcn_profile::nvidia_cx, 100_Gbps);
    EXPECT_TRUE(d.enabled);
    EXPECT_EQ(d.line_rate, 100_Gbps);
    EXPECT_EQ(d.rpg_time_reset, w.rpg_time_reset);
    EXPECT_EQ(d.rpg_byte_reset, w.rpg_byte_reset);
    EXPECT_EQ(d.rpg_ai_rate, w.rpg_ai_rate);
    EXPECT_DOUBLE_EQ(d.dce_tcp_g, 5.0 / 1024.0);
    const dcqcn_np_cfg n = resolve_dcqcn_np(c);
    EXPECT_TRUE(n.enabled);
    EXPECT_EQ(n.mode, dcqcn_np_mode::per_qp);
    EXPECT_EQ(n.cnp_interval, 50_us);
    EXPECT_EQ(n.min_time_between_cnps, nanos{0});
    EXPECT_EQ(n.cnp_dscp, 48);
    EXPECT_EQ(n.cnp_802p_prio, 6);
    EXPECT_EQ(c.dcqcn_trace, "");
}

// Command line (dashes) and YAML go through the same setter; overrides land
// on top of the profile chosen, whose line-rate-dependent values are
// computed at resolve time.
TEST(gen_config, dcqcn_keys_cli_and_yaml) {
    const std::pair<const char*, const char*> kv[] = {
        {"dcqcn", "hpcc_ns3"},
        {"rpg-time-reset", "55us"},
        {"rpg_byte_reset", "32KiB"},
        {"rpg_threshold", "5"},
        {"rpg_ai_rate", "40Mbps"},
        {"rpg_min_rate", "10Mbps"},
        {"rpg_max_rate", "40Gbps"},
        {"rpg_gd", "10"},
        {"rpg_min_dec_fac", "30%"},
        {"dce_tcp_g", "1020"},
        {"dce_tcp_rtt", "55us"},
        {"initial_alpha_value", "512"},
        {"rate_reduce_monitor_period", "0us"},
        {"rate_to_set_on_first_cnp", "5Gbps"},
        {"clamp_tgt_rate", "true"},
        {"clamp_tgt_rate_after_time_inc", "false"},
        {"cnp_mode", "per_port"},
        {"cnp_interval", "20us"},
        {"min-time-between-cnps", "2us"},
        {"cnp_dscp", "46"},
        {"cnp_802p_prio", "5"},
        {"dcqcn_trace", "/tmp/dcqcn.csv"},
    };
    gen_cfg cli;
    std::string yaml;
    for (const auto& [k, v] : kv) {
        ASSERT_EQ(gen_cfg_set(cli, k, v), "") << k;
        yaml += std::string(k) + ": " + v + "\n";
    }
    auto y = load_gen_cfg_from_string(yaml, "d.yaml");
    ASSERT_TRUE(y) << y.error().message;
    for (const gen_cfg* c : {&cli, &*y}) {
        EXPECT_EQ(c->dcqcn, dcqcn_profile::hpcc_ns3);
        const dcqcn_cfg d = resolve_dcqcn(*c, 100_Gbps);
        EXPECT_EQ(d.profile, dcqcn_profile::hpcc_ns3);
        EXPECT_EQ(d.rpg_time_reset, 55_us);
        EXPECT_EQ(d.rpg_byte_reset, 32_KiB);
        EXPECT_EQ(d.rpg_threshold, 5u);
        EXPECT_EQ(d.rpg_ai_rate, 40_Mbps);
        EXPECT_EQ(d.rpg_hai_rate, 200_Mbps);  // not overridden: the profile's 50Mbps x 100G/25G
        EXPECT_EQ(d.rpg_min_rate, 10_Mbps);
        EXPECT_EQ(d.rpg_max_rate, 40_Gbps);
        EXPECT_EQ(d.rpg_gd, 10u);
        EXPECT_EQ(d.rpg_min_dec_fac, 30u);
        EXPECT_DOUBLE_EQ(d.dce_tcp_g, 1.0 / 256.0);
        EXPECT_EQ(d.dce_tcp_rtt, 55_us);
        EXPECT_DOUBLE_EQ(d.initial_alpha_value, 0.5);
        EXPECT_EQ(d.rate_reduce_monitor_period, nanos{0});
        EXPECT_EQ(d.rate_to_set_on_first_cnp, 5_Gbps);
        EXPECT_TRUE(d.clamp_tgt_rate);
        EXPECT_FALSE(d.clamp_tgt_rate_after_time_inc);
        EXPECT_EQ(d.alpha_mode, dcqcn_alpha_mode::periodic);  // the profile's variant switches stay
        EXPECT_EQ(d.stage_rule, dcqcn_stage_rule::timer_stage);
        const dcqcn_np_cfg n = resolve_dcqcn_np(*c);
        EXPECT_TRUE(n.enabled);
        EXPECT_EQ(n.mode, dcqcn_np_mode::per_port);
        EXPECT_EQ(n.cnp_interval, 20_us);
        EXPECT_EQ(n.min_time_between_cnps, 2_us);
        EXPECT_EQ(n.cnp_dscp, 46);
        EXPECT_EQ(n.cnp_802p_prio, 5);
        EXPECT_EQ(c->dcqcn_trace, "/tmp/dcqcn.csv");
    }
    // Line-rate-dependent profile values follow the rate given at resolve time.
    gen_cfg h;
    ASSERT_EQ(gen_cfg_set(h, "dcqcn", "hpcc_ns3"), "");
    EXPECT_EQ(resolve_dcqcn(h, 25_Gbps).rpg_ai_rate, 5_Mbps);
    EXPECT_EQ(resolve_dcqcn(h, 25_Gbps).rpg_hai_rate, 50_Mbps);
    EXPECT_EQ(resolve_dcqcn(h, 100_Gbps).rpg_ai_rate, 20_Mbps);
    // Profiles by name; off disables the notification point too.
    for (const char* p : {"off", "dcqcn_paper", "nvidia_cx", "hpcc_ns3"}) {
        gen_cfg g;
        ASSERT_EQ(gen_cfg_set(g, "dcqcn", p), "") << p;
        EXPECT_STREQ(dcqcn_profile_name(g.dcqcn), p);
        EXPECT_EQ(resolve_dcqcn(g, 10_Gbps).enabled, std::string(p) != "off");
        EXPECT_EQ(resolve_dcqcn_np(g).enabled, std::string(p) != "off");
    }
    gen_cfg paper;
    ASSERT_EQ(gen_cfg_set(paper, "dcqcn", "dcqcn_paper"), "");
    EXPECT_EQ(resolve_dcqcn(paper, 40_Gbps).rpg_time_reset, 55_us);
    EXPECT_EQ(resolve_dcqcn(paper, 40_Gbps).rpg_threshold, 5u);
    // Whole-number percent without the sign is NVIDIA's integer.
    gen_cfg m;
    ASSERT_EQ(gen_cfg_set(m, "rpg_min_dec_fac", "100"), "");
    EXPECT_EQ(resolve_dcqcn(m, 10_Gbps).rpg_min_dec_fac, 100u);
}

// The NP's mode comes from the profile unless cnp_mode is given: hpcc_ns3
// answers every CE-marked packet (per_port, min_time_between_cnps 0s), as
// HPCC's ns-3 flags the ACK of each; the others keep the paper's per-QP 50us.
TEST(gen_config, cnp_mode_defaults_to_the_profiles) {
    for (const char* p : {"dcqcn_paper", "nvidia_cx", "hpcc_ns3"}) {
        gen_cfg g;
        ASSERT_EQ(gen_cfg_set(g, "dcqcn", p), "") << p;
        const dcqcn_np_cfg n = resolve_dcqcn_np(g);
        EXPECT_EQ(n.mode, std::string(p) == "hpcc_ns3" ? dcqcn_np_mode::per_port : dcqcn_np_mode::per_qp) << p;
        EXPECT_EQ(n.min_time_between_cnps, nanos{0});
        EXPECT_EQ(n.cnp_interval, 50_us);
        gen_cfg q;  // given, in either order with the profile
        ASSERT_EQ(gen_cfg_set(q, "cnp_mode", "per_qp"), "");
        ASSERT_EQ(gen_cfg_set(q, "dcqcn", p), "");
        EXPECT_EQ(resolve_dcqcn_np(q).mode, dcqcn_np_mode::per_qp) << p;
    }
    auto y = load_gen_cfg_from_string("dcqcn: hpcc_ns3\nmin_time_between_cnps: 2us\n", "h.yaml");
    ASSERT_TRUE(y) << y.error().message;
    EXPECT_EQ(resolve_dcqcn_np(*y).mode, dcqcn_np_mode::per_port);
    EXPECT_EQ(resolve_dcqcn_np(*y).min_time_between_cnps, 2_us);
}

TEST(gen_config, dcqcn_errors_name_field_value_and_range) {
    const struct {
        const char* k;
        const char* v;
        const char* expect;
    } bad[] = {
        {"dcqcn", "dctcp", "off, dcqcn_paper, nvidia_cx or hpcc_ns3"},
        {"rpg_time_reset", "300", "1ns..1s"},
        {"rpg_time_reset", "0us", "1ns..1s"},
        {"rpg_time_reset", "2s", "1ns..1s"},
        {"rpg_byte_reset", "32767", "0B..1GiB"},
        {"rpg_byte_reset", "2GiB", "0B..1GiB"},
        {"rpg_threshold", "0", "1..31"},
        {"rpg_threshold", "32", "1..31"},
        {"rpg_ai_rate", "5", "0bps..1Tbps"},
        {"rpg_hai_rate", "2Tbps", "0bps..1Tbps"},
        {"rpg_min_rate", "0bps", "1bps..1Tbps"},
        {"rpg_max_rate", "fast", "0bps..1Tbps"},
        {"rate_to_set_on_first_cnp", "-1Gbps", "0bps..1Tbps"},
        {"rpg_gd", "9", "10..15"},
        {"rpg_gd", "16", "10..15"},
        {"rpg_min_dec_fac", "101%", "0%..100%"},
        {"rpg_min_dec_fac", "50.5%", "0%..100%"},
        {"dce_tcp_g", "1024", "0..1023"},
        {"dce_tcp_rtt", "0us", "1ns..1s"},
        {"initial_alpha_value", "1024", "0..1023"},
        {"rate_reduce_monitor_period", "2s", "0s..1s"},
        {"clamp_tgt_rate", "maybe", "true or false"},
        {"clamp_tgt_rate_after_time_inc", "2", "true or false"},
        {"cnp_mode", "per_flow", "per_qp or per_port"},
        {"cnp_interval", "50", "0s..1s"},
        {"min_time_between_cnps", "5s", "0s..1s"},
        {"cnp_dscp", "64", "0..63"},
        {"cnp_802p_prio", "8", "0..7"},
    };
    for (const auto& b : bad) {
        gen_cfg c;
        const std::string e = gen_cfg_set(c, b.k, b.v);
        EXPECT_NE(e.find(b.k), std::string::npos) << e;
        EXPECT_NE(e.find(std::string("\"") + b.v + "\""), std::string::npos) << e;
        EXPECT_NE(e.find(b.expect), std::string::npos) << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
        // Nothing was stored.
        EXPECT_FALSE(c.rp_overrides.rpg_time_reset || c.rp_overrides.rpg_byte_reset || c.rp_overrides.rpg_gd ||
                     c.rp_overrides.dce_tcp_g || c.rp_overrides.rpg_min_dec_fac)
            << b.k;
    }
    auto y = load_gen_cfg_from_string("rate: 10Gbps\nrpg_gd: 3\n", "g.yaml");
    ASSERT_FALSE(y);
    EXPECT_NE(y.error().message.find("g.yaml:2"), std::string::npos) << y.error().message;
    EXPECT_NE(y.error().message.find("rpg_gd"), std::string::npos) << y.error().message;
}

TEST(gen_config, gateway_mac_for_every_host_and_per_host) {
    // Pattern hosts all take the global gateway.
    auto r = load_gen_cfg_from_string("pattern: incast\nsenders: 2\ngateway_mac: \"02:00:00:00:aa:00\"\n", "g.yaml");
    ASSERT_TRUE(r) << r.error().message;
    gen_cfg c = *r;
    ASSERT_EQ(expand_gen_cfg(c, 3), "");
    for (const auto& h : c.hosts) {
        ASSERT_TRUE(h.gateway.has_value()) << h.name;
        EXPECT_EQ(*h.gateway, (std::array<std::uint8_t, 6>{0x02, 0, 0, 0, 0xaa, 0})) << h.name;
    }
    // A host's own gateway wins; the others take the global one; none without either.
    auto e = load_gen_cfg_from_string(
        "hosts:\n  - {name: a, port: 0, gateway: \"02:00:00:00:bb:00\"}\n  - {name: b, port: 1}\n"
        "flows:\n  - {src: a, dst: b}\n",
        "e.yaml");
    ASSERT_TRUE(e) << e.error().message;
    gen_cfg x = *e;
    ASSERT_EQ(expand_gen_cfg(x, 2), "");
    ASSERT_TRUE(x.hosts[0].gateway.has_value());
    EXPECT_EQ((*x.hosts[0].gateway)[4], 0xbb);
    EXPECT_FALSE(x.hosts[1].gateway.has_value());
    // Bad values name the key and what is accepted.
    gen_cfg bad;
    const std::string m = gen_cfg_set(bad, "gateway_mac", "router");
    EXPECT_NE(m.find("gateway_mac"), std::string::npos) << m;
    EXPECT_NE(m.find("a MAC address"), std::string::npos) << m;
    auto h = load_gen_cfg_from_string("hosts:\n  - {name: a, port: 0, gateway: nope}\n", "h.yaml");
    ASSERT_FALSE(h);
    EXPECT_NE(h.error().message.find("h.yaml:2"), std::string::npos) << h.error().message;
    EXPECT_NE(h.error().message.find("hosts.a.gateway"), std::string::npos) << h.error().message;
}

}  // namespace
}  // namespace rocelab
