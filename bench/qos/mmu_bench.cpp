// Google Benchmark for the lossless-class state machines: mmu admit+release
// (shared, headroom, reserved paths), pfc_tx idle poll, pfc_watchdog poll.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "qos/mmu.hpp"
#include "qos/pfc_tx.hpp"
#include "qos/pfc_watchdog.hpp"

namespace rocelab {
namespace {

using namespace rocelab::literals;

mmu make_mmu(int ports) {
    buffer_pool_cfg pool;
    pool.enabled = true;
    pool.size = bytes{32u << 20};
    pool.cell = bytes{96};
    std::array<pg_buffer_cfg, 8> t{};
    for (int g : {3, 4}) {
        t[g].configured = true;
        t[g].dynamic_th = -2;
        t[g].xoff = bytes{80 * 1024};
        t[g].xon = bytes{18 * 1024};
    }
    t[0].configured = true;
    t[0].reserved = bytes{2048};
    t[0].dynamic_th = 0;
    std::vector<std::array<pg_buffer_cfg, 8>> v{t};
    return mmu{pool, ports, v};
}

// admit + release of one packet on varying (port, pg): the common shared path.
void bm_mmu_admit_release_shared(benchmark::State& st) {
    mmu m = make_mmu(32);
    rng r{1};
    std::array<std::uint32_t, 256> len{};
    std::array<int, 256> port{};
    std::array<int, 256> pg{};
    for (std::size_t i = 0; i < len.size(); ++i) {
        len[i] = 64 + static_cast<std::uint32_t>(r.next() % 9000);
        port[i] = static_cast<int>(r.next() % 32);
        pg[i] = (r.next() & 1) ? 3 : 0;
    }
    std::size_t i = 0;
    for (auto _ : st) {
        const admit_result a = m.admit(port[i], pg[i], len[i]);
        benchmark::DoNotOptimize(a);
        m.release(port[i], pg[i], a.token);
        i = (i + 1) & 255;
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_mmu_admit_release_shared);

// An RX burst of 32 frames of one port, admitted frame by frame (admit) or
// in runs (admit_in_run, settled at the burst's end as the switch does at
// the end of a poll), then released: PGs 3, 3, 0, 0, 0, 0 in turn, as the
// switch benchmark's DSCPs 26, 3, 0, 8, 48, 46 under the default maps, 74 B
// and 1082 B frames. Per frame: the admit and its share of the release.
template <bool Runs>
void bm_mmu_burst32(benchmark::State& st) {
    mmu m = make_mmu(2);
    const auto len = static_cast<std::uint32_t>(st.range(0));
    std::array<int, 32> pg{};
    for (std::size_t i = 0; i < pg.size(); ++i) { pg[i] = (i % 6) < 2 ? 3 : 0; }
    std::array<charge, 32> tok{};
    for (auto _ : st) {
        for (std::size_t i = 0; i < pg.size(); ++i) {
            tok[i] = (Runs ? m.admit_in_run(0, pg[i], len) : m.admit(0, pg[i], len)).token;
        }
        if (Runs) { m.settle(); }
        for (std::size_t i = 0; i < pg.size(); ++i) { benchmark::DoNotOptimize(m.release(0, pg[i], tok[i])); }
    }
    st.SetItemsProcessed(st.iterations() * 32);
}
BENCHMARK(bm_mmu_burst32<false>)->Name("bm_mmu_burst32_admit")->Arg(74)->Arg(1082);
BENCHMARK(bm_mmu_burst32<true>)->Name("bm_mmu_burst32_in_runs")->Arg(74)->Arg(1082);

// A burst of 32 admits then 32 releases with a standing queue (PG in XOFF,
// packets go to headroom and XON/XOFF checks run).
void bm_mmu_burst32_in_xoff(benchmark::State& st) {
    mmu m = make_mmu(4);
    std::vector<charge> standing;
    while (m.xoff_pgs(0) == 0) {
        standing.push_back(m.admit(0, 3, 1024).token);
    }
    std::array<charge, 32> tok{};
    for (auto _ : st) {
        for (auto& t : tok) {
            t = m.admit(0, 3, 1024).token;
        }
        for (auto& t : tok) {
            benchmark::DoNotOptimize(m.release(0, 3, t));
        }
    }
    st.SetItemsProcessed(st.iterations() * 32);
}
BENCHMARK(bm_mmu_burst32_in_xoff);

void bm_pfc_tx_poll_idle_asserted(benchmark::State& st) {
    pfc_tx tx{flow_ctrl_mode::pfc, 100_Gbps};
    pfc_frame f;
    tx.poll(nanos{0}, 0b1000, f);
    std::int64_t t = 1;
    for (auto _ : st) {
        benchmark::DoNotOptimize(tx.poll(nanos{t & 0xFFFF}, 0b1000, f));
        ++t;
    }
}
BENCHMARK(bm_pfc_tx_poll_idle_asserted);

void bm_pfc_watchdog_poll(benchmark::State& st) {
    pfc_wd_cfg c;
    c.enabled = true;
    pfc_watchdog wd{c, 0, 3};
    std::int64_t t = 0;
    std::uint64_t rx = 0;
    for (auto _ : st) {
        t += 10'000'000;
        rx += (t >> 20) & 1;
        benchmark::DoNotOptimize(wd.poll(nanos{t}, (t >> 21) & 1, rx));
    }
}
BENCHMARK(bm_pfc_watchdog_poll);

}  // namespace
}  // namespace rocelab

BENCHMARK_MAIN();
