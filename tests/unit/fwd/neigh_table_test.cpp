// neigh_table_test.cpp - the dynamic neighbour table's life cycle (incomplete,
// reachable, stale, probe, failure, aging), its bounded wait queue, and the
// open-addressing table checked against a std::map model under random churn.
// The ARP request / NS frames are checked against tshark and scapy in
// tests/dpdk/test_switch.py (L3Tests); here only their round trip.
#include "fwd/neigh_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "fwd/arp_nd.hpp"

using namespace rocelab;

namespace {

constexpr std::int64_t s_ = 1'000'000'000;
const mac_addr mac1{0x02, 0, 0, 0, 0, 0x11};
const mac_addr mac2{0x02, 0, 0, 0, 0, 0x22};

neigh_params params(std::uint8_t queue = 4) {
    neigh_params p;
    p.capacity = 16;
    p.queue = queue;
    p.scan = 1024;  // every slot per poll
    return p;
}

struct sink {
    std::vector<int> released, dropped;
    std::vector<std::pair<neigh_key, neigh_request>> requests;
};

void poll(neigh_table<int>& t, std::int64_t ns, sink& s) {
    t.poll(
        nanos{ns}, [&](const neigh_table<int>::entry& e, neigh_request r) { s.requests.emplace_back(e.key, r); },
        [&](int h) { s.dropped.push_back(h); });
}

bool learn(neigh_table<int>& t, const neigh_key& k, const mac_addr& m, std::int64_t ns, bool create, sink& s,
           std::uint16_t port = 3) {
    return t.learn(k, port, m, nanos{ns}, create, [&](int h, const mac_addr& mm, std::uint16_t p) {
        EXPECT_EQ(mm, m);
        EXPECT_EQ(p, port);
        s.released.push_back(h);
    });
}

}  // namespace

TEST(neigh_table, unresolved_frames_wait_then_go_in_order_with_one_request) {
    neigh_table<int> t(params(3));
    sink s;
    const neigh_key k = neigh_key::v4(0x0a000102);
    auto r = t.resolve(k, 3, nanos{0}, 1);
    EXPECT_EQ(r.verdict, neigh_verdict::held);
    EXPECT_EQ(r.request, neigh_request::multicast) << "the first frame asks";
    ASSERT_NE(r.e, nullptr);
    EXPECT_EQ(r.e->key, k);
    EXPECT_EQ(r.e->port, 3);
    r = t.resolve(k, 3, nanos{1000}, 2);
    EXPECT_EQ(r.verdict, neigh_verdict::held);
    EXPECT_EQ(r.request, neigh_request::none) << "one request per neighbour, not per frame";
    EXPECT_EQ(t.resolve(k, 3, nanos{2000}, 3).verdict, neigh_verdict::held);
    EXPECT_EQ(t.resolve(k, 3, nanos{3000}, 4).verdict, neigh_verdict::queue_full);
    EXPECT_EQ(t.stats().dropped_queue_full, 1u);
    EXPECT_EQ(t.lookup(k)->state, neigh_state::incomplete);
    EXPECT_TRUE(learn(t, k, mac1, 5000, false, s));
    EXPECT_EQ(s.released, (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(t.lookup(k)->state, neigh_state::reachable);
    r = t.resolve(k, 3, nanos{6000}, 5);
    EXPECT_EQ(r.verdict, neigh_verdict::forward);
    EXPECT_EQ(r.e->mac, mac1);
    EXPECT_EQ(r.request, neigh_request::none);
    EXPECT_EQ(t.stats().requests, 1u);
    EXPECT_EQ(t.stats().resolved, 1u);
}

TEST(neigh_table, no_answer_retransmits_then_drops_the_waiting_frames) {
    neigh_params p = params();
    p.probes = 3;
    neigh_table<int> t(p);
    sink s;
    const neigh_key k = neigh_key::v4(0x0a000105);
    t.resolve(k, 1, nanos{0}, 7);
    t.resolve(k, 1, nanos{10}, 8);
    poll(t, s_ - 1, s);
    EXPECT_TRUE(s.requests.empty()) << "not before retrans";
    poll(t, s_, s);
    poll(t, 2 * s_, s);
    ASSERT_EQ(s.requests.size(), 2u);
    EXPECT_EQ(s.requests[0].second, neigh_request::multicast);
    EXPECT_TRUE(s.dropped.empty());
    poll(t, 3 * s_, s);  // 3 requests sent (t=0, 1s, 2s), no answer by 3s: failed
    EXPECT_EQ(s.requests.size(), 2u);
    EXPECT_EQ(s.dropped, (std::vector<int>{7, 8}));
    EXPECT_EQ(t.lookup(k), nullptr);
    EXPECT_EQ(t.stats().failed, 1u);
    EXPECT_EQ(t.stats().dropped_unresolved, 2u);
    EXPECT_EQ(t.stats().requests, 3u);
    // The next frame starts over.
    const auto r = t.resolve(k, 1, nanos{4 * s_}, 9);
    EXPECT_EQ(r.request, neigh_request::multicast);
}

// The switch's set-up (switch_control.cpp): 4096 entries, an aging sweep of
// 128 slots per 1 ms poll (64 ms for the table), neigh_retrans_time at its
// 10 ms minimum. Requests and the failure keep their times (to the poll):
// 10, 20 and 30 ms after the first request, wherever the entries sit in
// the table and wherever the sweep's cursor is.
TEST(neigh_table, retransmissions_keep_their_time_whatever_the_sweep) {
    neigh_params p;
    p.capacity = 4096;
    p.scan = 128;
    p.retrans = nanos{10'000'000};
    p.probes = 3;
    neigh_table<int> t(p);
    sink s;
    std::vector<std::int64_t> request_ms, drop_ms;
    constexpr int n = 50;
    for (int a = 0; a < n; ++a) { t.resolve(neigh_key::v4(0x0a000000u + 97u * a), 1, nanos{0}, a); }
    EXPECT_EQ(t.under_resolution(), static_cast<std::size_t>(n));
    for (std::int64_t ms = 1; ms <= 40; ++ms) {
        const std::size_t r0 = s.requests.size(), d0 = s.dropped.size();
        poll(t, ms * 1'000'000, s);
        for (std::size_t k = r0; k < s.requests.size(); ++k) { request_ms.push_back(ms); }
        for (std::size_t k = d0; k < s.dropped.size(); ++k) { drop_ms.push_back(ms); }
    }
    ASSERT_EQ(request_ms.size(), 2u * n);
    EXPECT_EQ(std::count(request_ms.begin(), request_ms.end(), 10), n);
    EXPECT_EQ(std::count(request_ms.begin(), request_ms.end(), 20), n);
    ASSERT_EQ(drop_ms.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(std::count(drop_ms.begin(), drop_ms.end(), 30), n);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.under_resolution(), 0u);
    EXPECT_EQ(t.stats().failed, static_cast<std::uint64_t>(n));
}

TEST(neigh_table, stale_entry_is_used_and_reconfirmed_by_unicast) {
    neigh_params p = params();
    p.reachable = nanos{30 * s_};
    neigh_table<int> t(p);
    sink s;
    const neigh_key k = neigh_key::v4(0x0a000107);
    t.resolve(k, 2, nanos{0}, 1);
    learn(t, k, mac1, 100, false, s, 2);
    auto r = t.resolve(k, 2, nanos{29 * s_}, 2);
    EXPECT_EQ(r.request, neigh_request::none);
    poll(t, 31 * s_, s);
    EXPECT_EQ(t.lookup(k)->state, neigh_state::stale);
    r = t.resolve(k, 2, nanos{31 * s_}, 3);
    EXPECT_EQ(r.verdict, neigh_verdict::forward) << "a stale entry still forwards";
    EXPECT_EQ(r.request, neigh_request::unicast);
    EXPECT_EQ(r.e->mac, mac1);
    EXPECT_EQ(t.lookup(k)->state, neigh_state::probe);
    r = t.resolve(k, 2, nanos{31 * s_ + 1}, 4);
    EXPECT_EQ(r.request, neigh_request::none) << "one probe in flight";
    // The answer moves it to a new MAC (the host's NIC was replaced).
    learn(t, k, mac2, 31 * s_ + 500, false, s, 2);
    EXPECT_EQ(t.lookup(k)->state, neigh_state::reachable);
    EXPECT_EQ(t.lookup(k)->mac, mac2);
    EXPECT_EQ(t.stats().mac_changes, 1u);
    // Without an answer, the probe fails and the entry goes.
    poll(t, 62 * s_, s);
    t.resolve(k, 2, nanos{62 * s_}, 5);
    for (int i = 1; i <= 3; ++i) { poll(t, 62 * s_ + i * s_, s); }
    EXPECT_EQ(t.lookup(k), nullptr);
    ASSERT_GE(s.requests.size(), 2u);
    EXPECT_EQ(s.requests.back().second, neigh_request::unicast);
}

TEST(neigh_table, unused_stale_entries_age_out) {
    neigh_params p = params();
    p.reachable = nanos{30 * s_};
    p.gc = nanos{60 * s_};
    neigh_table<int> t(p);
    sink s;
    const neigh_key k = neigh_key::v6_from(std::array<std::uint8_t, 16>{0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}.data());
    EXPECT_TRUE(learn(t, k, mac1, 0, true, s));
    poll(t, 31 * s_, s);
    EXPECT_EQ(t.lookup(k)->state, neigh_state::stale);
    poll(t, 59 * s_, s);
    EXPECT_NE(t.lookup(k), nullptr);
    poll(t, 60 * s_, s);
    EXPECT_EQ(t.lookup(k), nullptr);
    EXPECT_EQ(t.stats().aged, 1u);
}

TEST(neigh_table, learning_creates_only_when_told_and_never_a_group_mac) {
    neigh_table<int> t(params());
    sink s;
    const neigh_key k = neigh_key::v4(0x0a000109);
    EXPECT_FALSE(learn(t, k, mac1, 0, false, s)) << "a reply for an address we never asked about";
    EXPECT_EQ(t.size(), 0u);
    EXPECT_FALSE(learn(t, k, mac_addr{0x01, 0, 0x5e, 0, 0, 1}, 0, true, s));
    EXPECT_FALSE(learn(t, k, mac_addr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0, true, s));
    EXPECT_TRUE(learn(t, k, mac1, 0, true, s));
    EXPECT_EQ(t.size(), 1u);
    EXPECT_NE(neigh_key::v4(0x0a000109), neigh_key::v6_from(neigh_key::v4(0x0a000109).addr.data()))
        << "families never collide";
}

TEST(neigh_table, full_table_and_zero_queue) {
    neigh_params p = params(0);
    p.capacity = 4;
    neigh_table<int> t(p);
    for (std::uint32_t i = 0; i < 4; ++i) {
        const auto r = t.resolve(neigh_key::v4(0x0a000000 + i), 0, nanos{0}, 1);
        EXPECT_EQ(r.verdict, neigh_verdict::queue_full) << "queue 0: frames are dropped, the request still goes";
        EXPECT_EQ(r.request, neigh_request::multicast);
    }
    const auto r = t.resolve(neigh_key::v4(0x0a0000ff), 0, nanos{0}, 1);
    EXPECT_EQ(r.verdict, neigh_verdict::table_full);
    EXPECT_EQ(r.request, neigh_request::none);
    EXPECT_EQ(t.stats().dropped_table_full, 1u);
}

TEST(neigh_table, flush_port_drops_waiting_frames_and_forgets_entries) {
    neigh_table<int> t(params());
    sink s;
    t.resolve(neigh_key::v4(1), 0, nanos{0}, 10);
    t.resolve(neigh_key::v4(2), 1, nanos{0}, 20);
    learn(t, neigh_key::v4(3), mac1, 0, true, s, 1);
    std::vector<int> dropped;
    EXPECT_EQ(t.flush_port(1, [&](int h) { dropped.push_back(h); }), 2u);
    EXPECT_EQ(dropped, (std::vector<int>{20}));
    EXPECT_EQ(t.size(), 1u);
    EXPECT_NE(t.lookup(neigh_key::v4(1)), nullptr);
}

// The open-addressing table (linear probing, backward-shift erase) under
// random resolve / learn / failure / aging over a small table whose keys
// collide a lot: every entry stays reachable from its home slot, the count
// is right, and every parked frame comes out exactly once.
TEST(neigh_table, random_churn_matches_a_map_model) {
    neigh_params p;
    p.capacity = 32;
    p.queue = 2;
    p.probes = 1;
    p.retrans = nanos{10};
    p.reachable = nanos{50};
    p.gc = nanos{100};
    p.scan = 7;  // partial sweeps: the cursor logic matters
    neigh_table<int> t(p);
    std::mt19937 rng(12345);
    std::int64_t now = 0;
    std::size_t held_total = 0, out_total = 0;
    for (int step = 0; step < 200000; ++step) {
        now += rng() % 3;
        const std::uint32_t a = rng() % 64;
        const neigh_key k = neigh_key::v4(a);
        switch (rng() % 3) {
            case 0: {
                const auto r = t.resolve(k, 0, nanos{now}, 1);
                if (r.verdict == neigh_verdict::held) { ++held_total; }
                break;
            }
            case 1: {
                t.learn(k, 0, mac1, nanos{now}, rng() % 2 == 0, [&](int, const mac_addr&, std::uint16_t) { ++out_total; });
                break;
            }
            default:
                t.poll(nanos{now}, [](const auto&, neigh_request) {}, [&](int) { ++out_total; });
                break;
        }
        // Every key the table holds is found; none is found twice.
        std::size_t n = 0;
        t.for_each([&](const neigh_table<int>::entry& e) {
            ++n;
            ASSERT_EQ(t.lookup(e.key), &e) << "entry not reachable from its home slot (step " << step << ")";
        });
        ASSERT_EQ(n, t.size());
        ASSERT_LE(t.size(), p.capacity);
        // The list of entries under resolution holds exactly the incomplete and probe entries.
        std::size_t resolving = 0;
        t.for_each([&](const neigh_table<int>::entry& e) {
            if (e.state == neigh_state::incomplete || e.state == neigh_state::probe) { ++resolving; }
        });
        ASSERT_EQ(resolving, t.under_resolution()) << "step " << step;
    }
    // Every parked frame came out exactly once (released or dropped) or is still parked.
    std::size_t still = 0;
    t.drop_all_held([&](int) { ++still; });
    EXPECT_EQ(held_total, out_total + still) << "every parked frame comes out once";
    EXPECT_GT(t.stats().failed, 0u);
    EXPECT_GT(t.stats().aged, 0u);
    EXPECT_GT(t.stats().released, 0u);
}

TEST(neigh_frames, arp_request_and_ns_round_trip) {
    std::byte f[128] = {};
    const mac_addr our{0x02, 0, 0, 0, 1, 0};
    ASSERT_EQ(arp_make_request(f, our, 0x0a4e0101, 0x0a4e0102), nd_min_frame);
    const arp_info a = arp_parse(f, nd_min_frame, eth_hdr_len);
    EXPECT_TRUE(a.ok);
    EXPECT_EQ(a.oper, arp_op_request);
    EXPECT_EQ(a.sha, our);
    EXPECT_EQ(a.spa, 0x0a4e0101u);
    EXPECT_EQ(a.tpa, 0x0a4e0102u);
    EXPECT_EQ(load_mac(f), (mac_addr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
    arp_make_request(f, our, 0x0a4e0101, 0x0a4e0102, &mac1);
    EXPECT_EQ(load_mac(f), mac1) << "unicast reconfirmation";

    const std::uint8_t src[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    const std::uint8_t tgt[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xab, 0xcd, 0xef};
    ASSERT_EQ(nd_make_solicit(f, our, src, tgt), ns_frame_len);
    const nd_info n = nd_parse(f, ns_frame_len, eth_hdr_len);
    ASSERT_TRUE(n.ok) << "hop limit 255, checksum, options";
    EXPECT_EQ(n.type, wire::icmp6_ns);
    EXPECT_TRUE(n.has_lladdr);
    EXPECT_EQ(n.lladdr, our);
    EXPECT_EQ(std::memcmp(n.target, tgt, 16), 0);
    EXPECT_EQ(load_mac(f), (mac_addr{0x33, 0x33, 0xff, 0xab, 0xcd, 0xef})) << "solicited-node group";
    EXPECT_TRUE(is_solicited_node_of(reinterpret_cast<const std::uint8_t*>(f) + 14 + wire::ip6_dst, tgt));
    f[70] = std::byte{0x55};  // corrupt the target address: the checksum fails
    EXPECT_FALSE(nd_parse(f, ns_frame_len, eth_hdr_len).ok);
}

// list() is the copy a worker hands to another thread (the /rocelab/neigh
// listing): every entry once, with for_each's fields, never more than the
// span holds; a span of capacity() holds a full table.
TEST(neigh_table, list_copies_every_entry_and_stops_at_the_span) {
    neigh_params p = params(2);
    neigh_table<int> t(p);
    sink s;
    for (std::uint32_t a = 0; a < 16; ++a) {
        t.resolve(neigh_key::v4(0x0a000100 + a), static_cast<std::uint16_t>(a % 3), nanos{5}, static_cast<int>(a));
    }
    for (std::uint32_t a = 0; a < 16; a += 3) {  // some answer: reachable, with their MAC, frames released
        ASSERT_TRUE(learn(t, neigh_key::v4(0x0a000100 + a), mac2, 7 * s_ / 1000, false, s, static_cast<std::uint16_t>(a % 3)));
    }
    ASSERT_EQ(t.size(), 16u);
    ASSERT_EQ(t.capacity(), 16u);
    std::vector<neigh_listed> rows(t.capacity());
    ASSERT_EQ(t.list(rows), 16u);
    std::vector<neigh_listed> want;
    t.for_each([&](const neigh_table<int>::entry& e) { want.push_back(neigh_table<int>::listed(e)); });
    ASSERT_EQ(want.size(), 16u);
    std::size_t reachable = 0;
    for (std::size_t i = 0; i < 16; ++i) {
        EXPECT_EQ(rows[i].key.addr, want[i].key.addr);
        EXPECT_EQ(rows[i].port, want[i].port);
        EXPECT_EQ(rows[i].mac, want[i].mac);
        EXPECT_EQ(rows[i].state, want[i].state);
        EXPECT_EQ(rows[i].confirmed_ns, want[i].confirmed_ns);
        EXPECT_EQ(rows[i].n_held, want[i].n_held);
        const std::uint32_t a = rows[i].key.addr[3];  // 10.0.1.a
        EXPECT_EQ(rows[i].port, a % 3);
        if (a % 3 == 0) {
            EXPECT_EQ(rows[i].state, neigh_state::reachable);
            EXPECT_EQ(rows[i].mac, mac2);
            EXPECT_EQ(rows[i].n_held, 0u);
            ++reachable;
        } else {
            EXPECT_EQ(rows[i].state, neigh_state::incomplete);
            EXPECT_EQ(rows[i].n_held, 1u);
        }
    }
    EXPECT_EQ(reachable, 6u);
    std::vector<neigh_listed> few(5);
    EXPECT_EQ(t.list(few), 5u);
    for (std::size_t i = 0; i < 5; ++i) { EXPECT_EQ(few[i].key.addr, rows[i].key.addr); }
}
