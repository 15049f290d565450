// Google Benchmark for lib/qos stages: cost per packet of the pure QoS logic.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "core/rng.hpp"
#include "qos/egress_queues.hpp"
#include "qos/pause_timer.hpp"
#include "qos/qos_maps.hpp"
#include "qos/scheduler.hpp"
#include "qos/shaper.hpp"
#include "qos/wred.hpp"
#include "proto/build.hpp"
#include "proto/ecn.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

// pick + charge with 3 backlogged DWRR queues (AZURE weights), mixed sizes.
void bm_scheduler_dwrr(benchmark::State& st) {
    scheduler s{azure_roce_scheduler()};
    std::array<std::uint32_t, 8> head{};
    rng r{1};
    for (auto& h : head) {
        h = 64 + static_cast<std::uint32_t>(r.next() % 9000);
    }
    std::uint32_t x = 12345;
    for (auto _ : st) {
        const int q = s.pick(std::uint8_t{0b0001'1010}, std::uint8_t{0}, [&](int i) { return head[i]; });
        s.charge(q, head[q]);
        x = x * 1664525u + 1013904223u;
        head[q] = 64 + (x >> 20) % 9000;
        benchmark::DoNotOptimize(q);
    }
}
BENCHMARK(bm_scheduler_dwrr);

void bm_scheduler_strict(benchmark::State& st) {
    scheduler s{azure_roce_scheduler()};
    for (auto _ : st) {
        const int q = s.pick(std::uint8_t{0xff}, [](int) { return 64u; });
        s.charge(q, 64);
        benchmark::DoNotOptimize(q);
    }
}
BENCHMARK(bm_scheduler_strict);

// One conforms() + on_send() per iteration: a saturating sender that jumps
// to next_send_time() when it does not conform. Rate from the argument (Gb/s)
// so the divisor is not a compile-time constant.
void bm_shaper(benchmark::State& st) {
    shaper s{bits_per_sec{static_cast<std::uint64_t>(st.range(0)) * 1'000'000'000ULL}, 16_KiB};
    std::int64_t now = 0;
    std::uint32_t len = 64;
    for (auto _ : st) {
        if (!s.conforms(nanos{now})) {
            now = s.next_send_time().v;
        }
        s.on_send(nanos{now}, len);
        len = len < 9000 ? len + 97 : 64;
    }
    benchmark::DoNotOptimize(now);
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_shaper)->Arg(10)->Arg(100)->Arg(400);

// A queued frame: the queues link items through a node each carries.
struct bench_item {
    queue_link<bench_item*> link{};
};

void bm_egress_enq_deq(benchmark::State& st) {
    egress_queues<bench_item*, member_link> eq;
    bench_item one;
    int q = 0;
    for (auto _ : st) {
        eq.enqueue(q, &one, 1024);
        auto e = eq.dequeue(q);
        benchmark::DoNotOptimize(e);
        q = (q + 1) & 7;
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_egress_enq_deq);

// enqueue 32 then dequeue 32 (queue holds a standing backlog).
void bm_egress_burst32(benchmark::State& st) {
    egress_queues<bench_item*, member_link> eq;
    static std::array<bench_item, 32> frames{};
    for (auto _ : st) {
        for (int i = 0; i < 32; ++i) {
            eq.enqueue(i & 7, &frames[static_cast<std::size_t>(i)], 1500);
        }
        for (int i = 0; i < 32; ++i) {
            auto e = eq.dequeue(i & 7);
            benchmark::DoNotOptimize(e);
        }
    }
    st.SetItemsProcessed(st.iterations() * 32);
}
BENCHMARK(bm_egress_burst32);

void bm_classify(benchmark::State& st) {
    const qos_maps m = azure_roce_maps();
    int dscp = 0;
    for (auto _ : st) {
        const auto tc = m.classify(trust_mode::dscp, dscp, -1);
        benchmark::DoNotOptimize(tc);
        dscp = (dscp + 7) & 63;
    }
}
BENCHMARK(bm_classify);

void bm_pause_mask(benchmark::State& st) {
    pause_timer pt;
    pt.on_pfc(nanos{0}, 0b1000, {0, 0, 0, 0xffff, 0, 0, 0, 0}, 100_Gbps);
    std::int64_t now = 0;
    const auto maps = azure_roce_maps();
    for (auto _ : st) {
        const std::uint8_t pq = pfc_paused_queues(pt.paused_mask(nanos{now}), maps);
        benchmark::DoNotOptimize(pq);
        ++now;
    }
}
BENCHMARK(bm_pause_mask);

// WRED decide per packet with AZURE_LOSSLESS (1MiB..2MiB, 5 %), ECT packets.
// Arg 0: q below Kmin (one compare); 1: between (128-bit multiply + one
// random draw); 2: above Kmax (no draw). Depths cycle over 8 values so the
// compiler cannot fold them.
void bm_wred_decide(benchmark::State& st) {
    wred_profile_cfg p;
    p.wred_green_enable = true;
    p.green_min_threshold = bytes{1048576};
    p.green_max_threshold = bytes{2097152};
    p.green_drop_probability = 5;
    p.ecn = ecn_mode::ecn_all;
    const wred_cfg w = wred_cfg::from_profile(p);
    std::array<std::uint64_t, 8> q{};
    const std::uint64_t base = st.range(0) == 0 ? 1000 : st.range(0) == 1 ? 1048576 + 1000 : 2097152 + 1;
    for (std::size_t i = 0; i < q.size(); ++i) {
        q[i] = base + i * 100000 % 900000;
    }
    rng r{1};
    std::size_t i = 0;
    std::uint64_t marks = 0;
    for (auto _ : st) {
        const wred_verdict v = w.decide(q[i & 7], true, r);
        marks += v == wred_verdict::mark;
        benchmark::DoNotOptimize(v);
        ++i;
    }
    benchmark::DoNotOptimize(marks);
    st.SetItemsProcessed(st.iterations());
    st.SetLabel(st.range(0) == 0 ? "below Kmin" : st.range(0) == 1 ? "between" : "above Kmax");
}
BENCHMARK(bm_wred_decide)->Arg(0)->Arg(1)->Arg(2);

// mark_ce on a 1024-byte-payload RoCEv2 frame, then the two changed 16-bit
// words (TOS word and IPv4 checksum; IPv6: the first 4 bytes) are put back
// so every iteration marks. Arg 0: IPv4, 1: IPv4 + VLAN tag, 2: IPv6.
void bm_mark_ce(benchmark::State& st) {
    static std::array<std::byte, 2048> frame{};
    static std::array<std::byte, 1024> payload{};
    std::uint32_t len = 0;
    if (st.range(0) < 2) {
        roce_v4_params p{};
        p.vlan_id = st.range(0) == 1 ? 100 : -1;
        p.dscp = 26;
        p.ecn = ecn_ect0;
        p.payload = payload;
        len = build_roce_v4(std::span<std::byte>(frame), p);
    } else {
        roce_v6_params p{};
        p.dscp = 26;
        p.ecn = ecn_ect0;
        p.payload = payload;
        len = build_roce_v6(std::span<std::byte>(frame), p);
    }
    const std::uint32_t ip = st.range(0) == 1 ? 18 : 14;
    std::array<std::byte, 12> saved{};
    std::memcpy(saved.data(), frame.data() + ip, saved.size());
    std::uint64_t marked = 0;
    for (auto _ : st) {
        marked += mark_ce(frame.data(), len) == ce_mark_result::marked;
        benchmark::ClobberMemory();
        std::memcpy(frame.data() + ip, saved.data(), 4);
        std::memcpy(frame.data() + ip + 10, saved.data() + 10, 2);
    }
    if (marked != static_cast<std::uint64_t>(st.iterations())) {
        st.SkipWithError("mark_ce did not mark every iteration");
    }
    st.SetItemsProcessed(st.iterations());
    st.SetLabel(st.range(0) == 0 ? "ipv4" : st.range(0) == 1 ? "ipv4+vlan" : "ipv6");
}
BENCHMARK(bm_mark_ce)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
}  // namespace rocelab

BENCHMARK_MAIN();
