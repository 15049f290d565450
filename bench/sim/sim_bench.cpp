// Google Benchmark for lib/sim: the virtual-time engine's own overhead with
// trivial nodes, so the pipeline integration knows its budget (goal for the
// whole virtual-time mode: >= 10M packet-hops per wall second).
//
// bm_fabric/<len>: 8 paced sources -> 1 forwarder -> 1 sink, every link
// 100 Gb/s with 500 ns propagation; each source offers 12 Gb/s in bursts of
// 32 frames of <len> bytes (96 Gb/s into the forwarder's 100 Gb/s output).
// One iteration = 100 us of virtual time. Counters, per wall second:
//   events     event-queue pops (node wake-ups + link arrivals)
//   hops       frames moved into an RX ring by any link (item-hops)
//   polls      node polls
//   vtime_x    virtual ns run per wall ns
// bm_event_queue: schedule + pop on a queue with N busy slots.
// bm_link_burst: tx_burst(32) + rx_burst(32) on one link, no engine.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "sim/link.hpp"

namespace rocelab::sim {
namespace {

using namespace rocelab::literals;

struct frame {
    std::uint64_t id = 0;
    std::uint32_t len = 0;
};
using eng = engine<frame>;
using port = eng::port_type;
constexpr std::uint16_t burst = 32;

// A burst of 32 frames every `gap` ns; refused frames are retried when the
// TX ring frees enough slots.
struct paced_source final : sim_node {
    port p;
    std::uint32_t len = 64;
    std::int64_t gap = 1000;
    std::int64_t next_t = 0;
    std::array<frame, burst> staged{};
    std::uint16_t n_staged = 0;
    std::uint16_t off = 0;
    std::uint64_t seq = 0;
    nanos poll(nanos now) noexcept override {
        if (n_staged == 0 && now.v >= next_t) {
            for (auto& f : staged) {
                f = frame{seq++, len};
            }
            n_staged = burst;
            off = 0;
            next_t += gap;
        }
        if (n_staged > 0) {
            const std::uint16_t k = p.tx_burst(now, staged.data() + off, n_staged);
            off = static_cast<std::uint16_t>(off + k);
            n_staged = static_cast<std::uint16_t>(n_staged - k);
            if (n_staged > 0) {
                return p.tx_free_time(now, n_staged);
            }
        }
        return nanos{next_t};
    }
};

// rx_burst from every input, tx_burst to the one output; holds what the
// output refuses (and stops reading while it holds a full burst).
struct forwarder final : sim_node {
    std::vector<port> in;
    port out;
    std::array<frame, burst> staged{};
    std::uint16_t n_staged = 0;
    nanos poll(nanos now) noexcept override {
        if (n_staged > 0) {
            const std::uint16_t k = out.tx_burst(now, staged.data(), n_staged);
            for (std::uint16_t i = k; i < n_staged; ++i) {
                staged[i - k] = staged[i];
            }
            n_staged = static_cast<std::uint16_t>(n_staged - k);
        }
        bool more = false;
        for (auto& p : in) {
            if (n_staged == burst) {
                more = true;
                break;
            }
            const std::uint16_t n =
                p.rx_burst(now, staged.data() + n_staged, static_cast<std::uint16_t>(burst - n_staged));
            const std::uint16_t k = out.tx_burst(now, staged.data() + n_staged, n);
            // keep what the output refused, contiguous after what was held
            for (std::uint16_t i = k; i < n; ++i) {
                staged[n_staged + i - k] = staged[n_staged + i];
            }
            n_staged = static_cast<std::uint16_t>(n_staged + n - k);
            more = more || p.next_arrival() <= now;
        }
        if (n_staged > 0) {
            return out.tx_free_time(now);
        }
        return more ? now : nanos::max();
    }
};

struct sink final : sim_node {
    port p;
    std::uint64_t n = 0;
    nanos poll(nanos now) noexcept override {
        std::array<frame, burst> b;
        std::uint16_t k;
        while ((k = p.rx_burst(now, b.data(), burst)) > 0) {
            n += k;
        }
        return nanos::max();
    }
};

void bm_fabric(benchmark::State& st) {
    const auto len = static_cast<std::uint32_t>(st.range(0));
    constexpr int n_src = 8;
    const link_cfg lc{.rate = 100_Gbps, .prop_delay = 500_ns, .tx_ring_size = 256, .rx_ring_size = 1024};
    eng e;
    std::array<paced_source, n_src> src;
    forwarder fwd;
    sink snk;
    // 32 frames at 12 Gb/s: 32 x (len+24) x 8 / 12 ns
    const std::int64_t gap = static_cast<std::int64_t>(burst) * (len + 24) * 8 / 12;
    std::array<std::uint32_t, n_src> src_id{};
    for (int i = 0; i < n_src; ++i) {
        src_id[i] = e.add_node(src[i]);
        src[i].len = len;
        src[i].gap = gap;
        src[i].next_t = i * gap / n_src;  // staggered
    }
    const auto f = e.add_node(fwd);
    const auto k = e.add_node(snk);
    for (int i = 0; i < n_src; ++i) {
        const auto l = e.add_link(src_id[i], f, lc);
        src[i].p = e.port(l, eng::no_link);
        fwd.in.push_back(e.port(eng::no_link, l));
    }
    const auto out = e.add_link(f, k, lc);
    fwd.out = e.port(out, eng::no_link);
    snk.p = e.port(eng::no_link, out);

    const nanos step = 100_us;
    e.run_until(step);  // warm-up: queues at steady state
    const engine_counters c0 = e.counters();
    const std::uint64_t h0 = e.items_delivered();
    const nanos t0 = e.now();
    for (auto _ : st) {
        e.run_until(e.now() + step);
    }
    const engine_counters c1 = e.counters();
    const double hops = static_cast<double>(e.items_delivered() - h0);
    st.counters["events"] = benchmark::Counter(static_cast<double>(c1.events - c0.events), benchmark::Counter::kIsRate);
    st.counters["hops"] = benchmark::Counter(hops, benchmark::Counter::kIsRate);
    st.counters["polls"] =
        benchmark::Counter(static_cast<double>(c1.node_polls - c0.node_polls), benchmark::Counter::kIsRate);
    st.counters["vtime_x"] =
        benchmark::Counter(static_cast<double>((e.now() - t0).v) * 1e-9, benchmark::Counter::kIsRate);
    st.counters["events_per_hop"] = static_cast<double>(c1.events - c0.events) / hops;
    std::uint64_t drops = 0;
    for (std::uint32_t i = 0; i < e.link_count(); ++i) {
        drops += e.link(i).counters().rx_ring_full + e.link(i).counters().lost;
    }
    st.counters["drops"] = static_cast<double>(drops);
    st.counters["out_gbps"] = static_cast<double>(e.link(out).counters().tx_bytes + 24 * e.link(out).counters().tx_accepted) *
                              8 / static_cast<double>(e.now().v);
    if (snk.n == 0) {
        st.SkipWithError("nothing reached the sink");
    }
}
BENCHMARK(bm_fabric)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);

void bm_event_queue(benchmark::State& st) {
    const auto slots = static_cast<std::uint32_t>(st.range(0));
    event_queue q{slots};
    rng r{1};
    for (std::uint32_t s = 0; s < slots; ++s) {
        q.schedule(s, nanos{static_cast<std::int64_t>(r.next() % 10000)});
    }
    for (auto _ : st) {
        const event e = q.pop();
        q.schedule(e.slot, nanos{e.time.v + 1 + static_cast<std::int64_t>(r.next() % 10000)});
        benchmark::DoNotOptimize(e);
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_event_queue)->Arg(16)->Arg(1024);

void bm_link_burst(benchmark::State& st) {
    sim_link<frame> l{link_cfg{.rate = 100_Gbps, .prop_delay = 500_ns, .tx_ring_size = 256, .rx_ring_size = 1024}};
    std::array<frame, burst> in{};
    for (auto& f : in) {
        f.len = 1000;
    }
    std::array<frame, burst> out{};
    std::int64_t now = 0;
    std::uint64_t moved = 0;
    for (auto _ : st) {
        const std::size_t k = l.tx_burst(nanos{now}, in.data(), burst);
        now = l.next_wire_arrival().v + 82 * 31;  // when the whole burst is there
        moved += l.rx_burst(nanos{now}, out.data(), burst);
        benchmark::DoNotOptimize(k);
    }
    if (moved != static_cast<std::uint64_t>(st.iterations()) * burst) {
        st.SkipWithError("link did not move every frame");
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(moved));
}
BENCHMARK(bm_link_burst);

}  // namespace
}  // namespace rocelab::sim

BENCHMARK_MAIN();
