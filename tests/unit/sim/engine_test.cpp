// Unit tests for sim/engine.hpp: virtual clock, fixed poll order, wake-up on
// delivery, time jumps over idle periods, byte-identical replays of a small
// topology (sources -> shaper node -> sink), and an M/D/1 queue against its
// closed form.
#include "sim/engine.hpp"
#include "sim/parallel.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/fixed_ring.hpp"
#include "core/rng.hpp"
#include "qos/shaper.hpp"

// Counts heap allocations while g_count_allocs is set (this test binary
// only), to check that the engine's run loop allocates nothing.
namespace {
bool g_count_allocs = false;
std::uint64_t g_allocs = 0;
}  // namespace
void* operator new(std::size_t n) {
    if (g_count_allocs) {
        ++g_allocs;
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc{};
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // the replacement new above is malloc
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace rocelab::sim {
namespace {

using namespace rocelab::literals;

struct frame {
    std::uint64_t id = 0;
    std::uint32_t len = 0;
    std::uint32_t src = 0;
    std::int64_t sent_at = 0;
};
using eng = engine<frame>;
using port = eng::port_type;

// printf-style append to an event log (integers passed as long long).
template <typename... A>
void logf(std::string* log, const char* fmt, A... a) {
    char buf[160];
    const int n = std::snprintf(buf, sizeof buf, fmt, static_cast<long long>(a)...);
    log->append(buf, static_cast<std::size_t>(n));
}

// Pipeline-style code templated on a Clock runs against the virtual clock.
template <typename Clock>
nanos read_twice(const Clock& c) {
    return nanos{c.now().v + c.now().v};
}

TEST(sim_engine, virtual_clock_is_a_clock_source_and_only_moves_with_the_engine) {
    static_assert(clock_source<virtual_clock>);
    eng e{nanos{500}};
    EXPECT_EQ(e.clock().now(), nanos{500});
    EXPECT_EQ(read_twice(e.clock()), nanos{1000});
    EXPECT_EQ(virtual_clock::hz(), 1'000'000'000u);
    EXPECT_EQ(virtual_clock::to_nanos(42), nanos{42});
    e.run_until(nanos{10'000});  // nothing to do: time jumps to the end
    EXPECT_EQ(e.clock().now(), nanos{10'000});
    EXPECT_EQ(e.counters().events, 0u);
    e.run_until(nanos{5'000});  // never backwards
    EXPECT_EQ(e.now(), nanos{10'000});
}

// Records (now, name) per poll; wants to be woken at the times in `wakes`.
struct logging_node final : sim_node {
    std::string* log;
    char name;
    std::vector<std::int64_t> wakes;
    std::size_t next = 0;
    logging_node(std::string* l, char n, std::vector<std::int64_t> w) : log(l), name(n), wakes(std::move(w)) {}
    nanos poll(nanos now) noexcept override {
        logf(log, "%lld", now.v);
        *log += name;
        *log += ' ';
        while (next < wakes.size() && wakes[next] <= now.v) {
            ++next;
        }
        return next < wakes.size() ? nanos{wakes[next]} : nanos::max();
    }
};

TEST(sim_engine, due_nodes_are_polled_in_node_index_order) {
    std::string log;
    // c asks for 100 first; a and b later; all are due at 100 and 300.
    logging_node a{&log, 'a', {300, 100}};
    logging_node b{&log, 'b', {100, 300}};
    logging_node c{&log, 'c', {100, 200, 300}};
    a.wakes = {300};
    eng e;
    e.add_node(c);
    e.add_node(a);
    e.add_node(b);
    e.run_until(nanos{1000});
    // index order c(0), a(1), b(2) at every instant, whatever the wake-up order
    EXPECT_EQ(log, "0c 0a 0b 100c 100b 200c 300c 300a 300b ");
    EXPECT_EQ(e.counters().node_polls, 9u);
    EXPECT_EQ(e.counters().instants, 4u);
}

// Sends a frame at each of `times` (one per poll).
struct sched_source final : sim_node {
    port p;
    std::vector<std::int64_t> times;
    std::size_t next = 0;
    std::uint32_t len = 1000;
    std::uint64_t refused = 0;
    nanos poll(nanos now) noexcept override {
        while (next < times.size() && times[next] <= now.v) {
            const frame f{next, len, 0, now.v};
            if (p.tx_burst(now, &f, 1) == 1) {
                ++next;
            } else {
                ++refused;
                return p.tx_free_time(now);
            }
        }
        return next < times.size() ? nanos{times[next]} : nanos::max();
    }
};

// Takes everything, records when; never asks for a wake-up of its own.
struct recording_sink final : sim_node {
    port p;
    std::vector<std::pair<std::int64_t, frame>> got;
    std::uint64_t polls = 0;
    nanos poll(nanos now) noexcept override {
        ++polls;
        std::array<frame, 32> b;
        std::uint16_t n;
        while ((n = p.rx_burst(now, b.data(), 32)) > 0) {
            for (std::uint16_t i = 0; i < n; ++i) {
                got.emplace_back(now.v, b[i]);
            }
        }
        return nanos::max();
    }
};

TEST(sim_engine, delivery_wakes_the_receiver_at_the_arrival_time) {
    sched_source src;
    src.times = {0, 10, 20'000, 20'001};
    recording_sink sink;
    eng e;
    const auto s = e.add_node(src);
    const auto k = e.add_node(sink);
    const auto l = e.add_link(s, k, link_cfg{.rate = 1_Gbps, .prop_delay = 3_us});
    src.p = e.port(l, eng::no_link);
    sink.p = e.port(eng::no_link, l);
    e.run_until(1_ms);
    ASSERT_EQ(sink.got.size(), 4u);
    // 1024 wire bytes at 1 Gb/s = 8192 ns, + 3000 ns propagation
    EXPECT_EQ(sink.got[0].first, 8192 + 3000);
    EXPECT_EQ(sink.got[1].first, 2 * 8192 + 3000);  // queued behind the first
    EXPECT_EQ(sink.got[2].first, 20'000 + 8192 + 3000);
    EXPECT_EQ(sink.got[3].first, 20'000 + 2 * 8192 + 3000);
    EXPECT_EQ(sink.polls, 1u + 4u);  // the initial poll + one per arrival
    EXPECT_EQ(e.link(l).counters().delivered, 4u);
    EXPECT_EQ(e.items_delivered(), 4u);
}

TEST(sim_engine, time_jumps_over_idle_periods) {
    sched_source src;
    for (std::int64_t t = 0; t < 10; ++t) {
        src.times.push_back(t * 1'000'000'000);  // one frame a second
    }
    recording_sink sink;
    eng e;
    const auto s = e.add_node(src);
    const auto k = e.add_node(sink);
    const auto l = e.add_link(s, k, link_cfg{.rate = 100_Gbps, .prop_delay = 1_us});
    src.p = e.port(l, eng::no_link);
    sink.p = e.port(eng::no_link, l);
    e.run_until(20_s);
    EXPECT_EQ(sink.got.size(), 10u);
    // 10 source polls + 1 initial and 10 arrival polls of the sink; 20 s of
    // virtual time at 1 ns granularity cost 21 polls, not 2e10.
    EXPECT_EQ(e.counters().node_polls, 21u);
    EXPECT_EQ(e.counters().instants, 20u);  // t=0 once, 9 more sends, 10 arrivals
    EXPECT_EQ(e.now(), 20_s);
}

// ---- determinism: two sources -> shaper node -> sink ----

// Random sizes and random gaps; sends in bursts of up to 8; keeps refused
// frames and retries when the TX ring frees a slot.
struct random_source final : sim_node {
    port p;
    rng r;
    std::uint32_t id;
    std::uint64_t seq = 0;
    std::int64_t next_t = 0;
    std::array<frame, 8> staged{};
    std::uint16_t n_staged = 0;
    std::string* log;
    random_source(std::uint32_t i, std::uint64_t seed, std::string* l) : r(seed), id(i), log(l) {}
    nanos poll(nanos now) noexcept override {
        if (n_staged == 0 && now.v >= next_t) {
            n_staged = static_cast<std::uint16_t>(1 + r.next() % 8);
            for (std::uint16_t i = 0; i < n_staged; ++i) {
                staged[i] = frame{seq++, 64 + static_cast<std::uint32_t>(r.next() % 1437), id, now.v};
            }
            next_t = now.v + 200 + static_cast<std::int64_t>(r.next() % 2000);
        }
        if (n_staged > 0) {
            const std::uint16_t k = p.tx_burst(now, staged.data(), n_staged);
            logf(log, "S%lld@%lld:%lld/%lld\n", id, now.v, k, n_staged);
            for (std::uint16_t i = k; i < n_staged; ++i) {
                staged[i - k] = staged[i];
            }
            n_staged = static_cast<std::uint16_t>(n_staged - k);
            if (n_staged > 0) {
                return p.tx_free_time(now);
            }
        }
        return nanos{next_t};
    }
};

// Two inputs, a 256-frame FIFO, one output paced by qos/shaper (its own
// pacing, slower than the inputs' sum): frames that do not fit are dropped
// and counted.
struct shaper_node final : sim_node {
    std::array<port, 2> in;
    port out;
    shaper sh;
    fixed_ring<frame, 256> q;
    std::uint64_t dropped = 0;
    std::string* log;
    shaper_node(bits_per_sec rate, std::string* l) : sh(rate, 2_KiB), log(l) {}
    nanos poll(nanos now) noexcept override {
        std::array<frame, 32> b;
        for (auto& p : in) {
            const std::uint16_t n = p.rx_burst(now, b.data(), 32);
            for (std::uint16_t i = 0; i < n; ++i) {
                if (!q.push(b[i])) {
                    ++dropped;
                    logf(log, "D%lld.%lld@%lld\n", b[i].src, b[i].id, now.v);
                }
            }
        }
        while (!q.empty() && sh.conforms(now)) {
            if (out.tx_burst(now, &q.front(), 1) == 0) {
                return out.tx_free_time(now);
            }
            sh.on_send(now, q.front().len);
            q.pop();
        }
        nanos next = q.empty() ? nanos::max() : sh.next_send_time();
        for (auto& p : in) {
            if (p.next_arrival() <= now) {
                next = now;  // more than a burst waiting
            }
        }
        return next;
    }
};

struct logging_sink final : sim_node {
    port p;
    std::string* log;
    std::uint64_t n = 0;
    explicit logging_sink(std::string* l) : log(l) {}
    nanos poll(nanos now) noexcept override {
        std::array<frame, 32> b;
        std::uint16_t k;
        while ((k = p.rx_burst(now, b.data(), 32)) > 0) {
            for (std::uint16_t i = 0; i < k; ++i) {
                logf(log, "R%lld.%lld:%lld@%lld\n", b[i].src, b[i].id, b[i].len, now.v);
                ++n;
            }
        }
        return nanos::max();
    }
};

struct topo_result {
    std::string log;
    std::uint64_t received = 0;
    std::uint64_t dropped = 0;
    std::uint64_t sent = 0;
    std::uint64_t lost = 0;
    std::uint64_t on_links = 0;
    std::uint64_t queued = 0;
    std::uint64_t staged = 0;
};

topo_result run_topology(std::uint64_t seed) {
    topo_result res;
    std::string* log = &res.log;
    random_source s0{0, seed, log};
    random_source s1{1, seed + 1, log};
    shaper_node sh{40_Gbps, log};
    logging_sink sink{log};
    eng e;
    const auto n0 = e.add_node(s0);
    const auto n1 = e.add_node(s1);
    const auto ns = e.add_node(sh);
    const auto nk = e.add_node(sink);
    const auto l0 = e.add_link(n0, ns, link_cfg{.rate = 100_Gbps, .prop_delay = 700_ns, .loss = 0.001,
                                                .loss_seed = seed * 3, .tx_ring_size = 16, .rx_ring_size = 64});
    const auto l1 = e.add_link(n1, ns, link_cfg{.rate = 25_Gbps, .prop_delay = 1_us, .tx_ring_size = 16,
                                                .rx_ring_size = 64});
    const auto l2 = e.add_link(ns, nk, link_cfg{.rate = 100_Gbps, .prop_delay = 300_ns, .tx_ring_size = 32});
    s0.p = e.port(l0, eng::no_link);
    s1.p = e.port(l1, eng::no_link);
    sh.in = {e.port(eng::no_link, l0), e.port(eng::no_link, l1)};
    sh.out = e.port(l2, eng::no_link);
    sink.p = e.port(eng::no_link, l2);
    e.run_until(2_ms);
    const auto& c = e.counters();
    logf(log, "events %lld polls %lld instants %lld\n", c.events, c.node_polls, c.instants);
    for (std::uint32_t i = 0; i < 3; ++i) {
        const auto& lc = e.link(i).counters();
        logf(log, "link%lld acc %lld ref %lld lost %lld rxfull %lld dlv %lld\n", i, lc.tx_accepted, lc.tx_refused,
             lc.lost, lc.rx_ring_full, lc.delivered);
    }
    res.received = sink.n;
    res.dropped = sh.dropped;
    res.sent = s0.seq + s1.seq;
    res.staged = s0.n_staged + s1.n_staged;
    res.queued = sh.q.size();
    for (std::uint32_t i = 0; i < 3; ++i) {
        res.lost += e.link(i).counters().lost + e.link(i).counters().rx_ring_full;
        res.on_links += e.link(i).on_link() + e.link(i).rx_ring_used();
    }
    return res;
}

TEST(sim_engine, two_runs_are_byte_identical) {
    const topo_result a = run_topology(5);
    const topo_result b = run_topology(5);
    EXPECT_GT(a.received, 10'000u);
    EXPECT_GT(a.dropped, 0u);  // the shaper really is the bottleneck
    EXPECT_GT(a.lost, 0u);
    EXPECT_EQ(a.log.size(), b.log.size());
    EXPECT_TRUE(a.log == b.log);
    // every frame is accounted for
    EXPECT_EQ(a.sent, a.received + a.dropped + a.lost + a.on_links + a.queued + a.staged);
    // and the log is sensitive: another seed gives another run
    const topo_result c = run_topology(6);
    EXPECT_NE(a.log, c.log);
}

// ---- M/D/1: Poisson arrivals into one link, fixed frame size ----

struct poisson_source final : sim_node {
    port p;
    rng r;
    double mean_gap_ns;
    double t = 0.0;  // continuous arrival time; frames go at ceil(t)
    std::uint32_t len;
    std::uint64_t seq = 0;
    std::uint64_t count;
    std::uint64_t refused = 0;
    poisson_source(std::uint64_t seed, double gap, std::uint32_t l, std::uint64_t n)
        : r(seed), mean_gap_ns(gap), len(l), count(n) {
        t = draw();
    }
    double draw() noexcept { return -mean_gap_ns * std::log(1.0 - r.uniform()); }
    nanos poll(nanos now) noexcept override {
        while (seq < count && static_cast<std::int64_t>(std::ceil(t)) <= now.v) {
            const frame f{seq++, len, 0, now.v};
            if (p.tx_burst(now, &f, 1) != 1) {
                ++refused;
            }
            t += draw();
        }
        return seq < count ? nanos{static_cast<std::int64_t>(std::ceil(t))} : nanos::max();
    }
};

// Waiting time before serialisation starts: arrival - prop - service - sent.
struct wait_sink final : sim_node {
    port p;
    std::int64_t prop;
    std::int64_t service;
    std::vector<double> waits;
    nanos poll(nanos now) noexcept override {
        std::array<frame, 32> b;
        std::uint16_t n;
        while ((n = p.rx_burst(now, b.data(), 32)) > 0) {
            for (std::uint16_t i = 0; i < n; ++i) {
                waits.push_back(static_cast<double>(now.v - prop - service - b[i].sent_at));
            }
        }
        return nanos::max();
    }
};

// Mean wait W = rho D / (2 (1 - rho)) (Pollaczek-Khinchine for deterministic
// service). Waits of successive frames are correlated, so the tolerance
// comes from batch means: 100 batches, 5 standard errors of their mean.
void check_md1(double rho, std::uint64_t n, std::uint64_t seed) {
    const std::uint32_t len = 976;  // + 24 = 1000 B = 8000 ns at 1 Gb/s
    const double service = 8000.0;
    const double theory = rho * service / (2.0 * (1.0 - rho));
    poisson_source src{seed, service / rho, len, n};
    wait_sink sink;
    sink.prop = 250;
    sink.service = 8000;
    sink.waits.reserve(n);
    eng e;
    const auto s = e.add_node(src);
    const auto k = e.add_node(sink);
    const auto l = e.add_link(s, k, link_cfg{.rate = 1_Gbps, .prop_delay = 250_ns, .tx_ring_size = 1u << 16,
                                             .rx_ring_size = 64});
    src.p = e.port(l, eng::no_link);
    sink.p = e.port(eng::no_link, l);
    e.run_until(nanos{INT64_MAX / 2});  // until the source is done and all arrived
    ASSERT_EQ(src.refused, 0u);
    ASSERT_EQ(sink.waits.size(), n);
    constexpr std::size_t batches = 100;
    const std::size_t per = n / batches;
    double sum = 0.0;
    double sum_sq = 0.0;
    for (std::size_t b = 0; b < batches; ++b) {
        double m = 0.0;
        for (std::size_t i = b * per; i < (b + 1) * per; ++i) {
            m += sink.waits[i];
        }
        m /= static_cast<double>(per);
        sum += m;
        sum_sq += m * m;
    }
    const double mean = sum / batches;
    const double var = (sum_sq - sum * sum / batches) / (batches - 1);
    const double se = std::sqrt(var / batches);
    // 1 ns: arrivals are rounded up to whole ns, which shifts waits by < 1 ns.
    const double tol = 5.0 * se + 1.0;
    EXPECT_LT(tol, 0.05 * theory) << "too few samples for a meaningful check";
    EXPECT_NEAR(mean, theory, tol) << "rho " << rho << " se " << se;
}

struct counting_sink final : sim_node {
    port p;
    std::uint64_t n = 0;
    nanos poll(nanos now) noexcept override {
        std::array<frame, 32> b;
        std::uint16_t k;
        while ((k = p.rx_burst(now, b.data(), 32)) > 0) {
            n += k;
        }
        return nanos::max();
    }
};

TEST(sim_engine, run_loop_allocates_nothing_after_set_up) {
    poisson_source a{1, 100.0, 200, 100'000};
    poisson_source b{2, 150.0, 1000, 100'000};
    counting_sink k;
    eng e;
    const auto na = e.add_node(a);
    const auto nb = e.add_node(b);
    const auto nk = e.add_node(k);
    const auto la = e.add_link(na, nk, link_cfg{.rate = 25_Gbps, .prop_delay = 2_us, .loss = 0.01});
    const auto lb = e.add_link(nb, nk, link_cfg{.rate = 100_Gbps, .prop_delay = 1_us, .rx_ring_size = 8});
    a.p = e.port(la, eng::no_link);
    b.p = e.port(lb, eng::no_link);
    k.p = e.port(eng::no_link, la);  // reads only la: lb's RX ring overflows
    g_allocs = 0;
    g_count_allocs = true;
    ::operator delete(::operator new(16));  // the counter works
    g_count_allocs = false;
    ASSERT_EQ(g_allocs, 1u);
    g_allocs = 0;
    g_count_allocs = true;
    e.run_until(50_ms);
    g_count_allocs = false;
    EXPECT_EQ(g_allocs, 0u);
    EXPECT_GT(k.n, 50'000u);
    EXPECT_GT(a.refused + e.link(la).counters().lost, 0u);
    EXPECT_GT(e.link(lb).counters().rx_ring_full, 0u);
    EXPECT_GT(e.counters().events, 100'000u);
}

TEST(sim_engine, md1_mean_wait_matches_closed_form) {
    check_md1(0.5, 1'000'000, 17);
    check_md1(0.8, 1'000'000, 23);
}

// ---- the parallel engine: the same run on several partitions and threads ----

// The determinism topology (two sources -> shaper node -> sink, loss, RX
// drops, refused TX) with each node logging on its own, run by one engine
// (parts == {}) or partitioned (parts[node] = partition) on `threads`.
struct split_result {
    std::array<std::string, 4> logs;  // s0, s1, shaper, sink
    std::string links;
    std::uint64_t windows = 0;
};

split_result run_split(std::uint64_t seed, const std::array<int, 4>& parts, unsigned threads) {
    split_result res;
    random_source s0{0, seed, &res.logs[0]};
    random_source s1{1, seed + 1, &res.logs[1]};
    shaper_node sh{40_Gbps, &res.logs[2]};
    logging_sink sink{&res.logs[3]};
    const link_cfg c0{.rate = 100_Gbps, .prop_delay = 700_ns, .loss = 0.001, .loss_seed = seed * 3, .tx_ring_size = 16,
                      .rx_ring_size = 64};
    const link_cfg c1{.rate = 25_Gbps, .prop_delay = 1_us, .tx_ring_size = 16, .rx_ring_size = 64};
    const link_cfg c2{.rate = 100_Gbps, .prop_delay = 300_ns, .tx_ring_size = 32};
    sim_node* nodes[4] = {&s0, &s1, &sh, &sink};
    const link_cfg* cfgs[3] = {&c0, &c1, &c2};
    const int ends[3][2] = {{0, 2}, {1, 2}, {2, 3}};
    const sim_link<frame>* lk[3] = {};
    const nanos end = 2_ms;
    if (parts[0] < 0) {  // one engine
        eng e;
        std::uint32_t id[4];
        for (int i = 0; i < 4; ++i) { id[i] = e.add_node(*nodes[i]); }
        std::uint32_t l[3];
        for (int i = 0; i < 3; ++i) { l[i] = e.add_link(id[ends[i][0]], id[ends[i][1]], *cfgs[i]); }
        s0.p = e.port(l[0], eng::no_link);
        s1.p = e.port(l[1], eng::no_link);
        sh.in = {e.port(eng::no_link, l[0]), e.port(eng::no_link, l[1])};
        sh.out = e.port(l[2], eng::no_link);
        sink.p = e.port(eng::no_link, l[2]);
        e.run_until(end);
        for (int i = 0; i < 3; ++i) { lk[i] = &e.link(l[i]); }
        for (int i = 0; i < 3; ++i) {
            const auto& lc = lk[i]->counters();
            logf(&res.links, "link%lld acc %lld ref %lld lost %lld rxfull %lld dlv %lld\n", i, lc.tx_accepted,
                 lc.tx_refused, lc.lost, lc.rx_ring_full, lc.delivered);
        }
        return res;
    }
    std::size_t np = 0;
    for (int p : parts) { np = std::max<std::size_t>(np, static_cast<std::size_t>(p) + 1); }
    parallel_engine<frame> pe(np);
    std::uint32_t id[4];
    for (int i = 0; i < 4; ++i) { id[i] = pe.part(static_cast<std::size_t>(parts[i])).add_node(*nodes[i]); }
    sim_link<frame>* links[3];
    nanos look = nanos::max();
    for (int i = 0; i < 3; ++i) {
        const int a = ends[i][0], b = ends[i][1];
        const auto pa = static_cast<std::size_t>(parts[a]), pb = static_cast<std::size_t>(parts[b]);
        if (pa == pb) {
            links[i] = &pe.part(pa).link(pe.part(pa).add_link(id[a], id[b], *cfgs[i]));
        } else {
            links[i] = &pe.cross_link(pe.add_cross_link(pa, id[a], pb, id[b], *cfgs[i]));
            // delay + the wire time of the smallest frame (60 + 24 B)
            const std::int64_t ser = static_cast<std::int64_t>(84ull * 8 * 1'000'000'000ull / cfgs[i]->rate.v);
            look = std::min(look, nanos{cfgs[i]->prop_delay.v + std::max<std::int64_t>(ser, 1)});
        }
    }
    pe.set_lookahead(look == nanos::max() ? end : look);
    s0.p = port{links[0], nullptr};
    s1.p = port{links[1], nullptr};
    sh.in = {port{nullptr, links[0]}, port{nullptr, links[1]}};
    sh.out = port{links[2], nullptr};
    sink.p = port{nullptr, links[2]};
    pe.run_until(end, threads);
    for (int i = 0; i < 3; ++i) {
        const auto& lc = links[i]->counters();
        logf(&res.links, "link%lld acc %lld ref %lld lost %lld rxfull %lld dlv %lld\n", i, lc.tx_accepted,
             lc.tx_refused, lc.lost, lc.rx_ring_full, lc.delivered);
    }
    res.windows = pe.counters().windows;
    EXPECT_EQ(pe.counters().late, 0u);
    return res;
}

TEST(sim_parallel, partitions_and_threads_give_the_one_engine_run) {
    const split_result one = run_split(5, {-1, -1, -1, -1}, 1);
    EXPECT_GT(one.logs[3].size(), 100'000u);
    const std::array<std::array<int, 4>, 4> layouts{{{0, 0, 1, 1}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}};
    for (const auto& parts : layouts) {
        for (unsigned threads : {1u, 2u, 3u}) {
            const split_result r = run_split(5, parts, threads);
            for (int i = 0; i < 4; ++i) {
                ASSERT_TRUE(r.logs[i] == one.logs[i])
                    << "node " << i << " differs with partitions " << parts[0] << parts[1] << parts[2] << parts[3]
                    << " on " << threads << " threads";
            }
            EXPECT_EQ(r.links, one.links);
            EXPECT_GT(r.windows, 100u);
        }
    }
}

// A lookahead longer than a cross link really takes lets frames arrive in
// the window they were sent in, before they are transferred: the engine
// counts them (`late`), and the fabric fails such a run. The true lookahead
// (delay + the smallest frame's wire time) never does.
TEST(sim_parallel, a_too_long_lookahead_is_caught) {
    auto late = [](nanos look) {
        std::string log_s, log_k;
        random_source s{0, 5, &log_s};
        logging_sink k{&log_k};
        parallel_engine<frame> pe(2);
        const auto a = pe.part(0).add_node(s);
        const auto b = pe.part(1).add_node(k);
        auto& l = pe.cross_link(pe.add_cross_link(0, a, 1, b, link_cfg{.rate = 100_Gbps, .prop_delay = 700_ns}));
        s.p = port{&l, nullptr};
        k.p = port{nullptr, &l};
        pe.set_lookahead(look);
        pe.run_until(200_us, 1);
        EXPECT_GT(k.n, 100u);
        return pe.counters().late;
    };
    EXPECT_EQ(late(706_ns), 0u);  // 700 ns + 6 ns for 84 B at 100 Gb/s
    EXPECT_EQ(late(700_ns), 0u);  // shorter is always safe
    EXPECT_GT(late(5_us), 0u);
}

}  // namespace
}  // namespace rocelab::sim
