// fwd_bench.cpp - per-operation cost of the forwarding tables:
//   fdb learn of a known station (the per-frame hot path), fdb lookup,
//   5-tuple flow hash (v4/v6), route_table v4 and v6 single and bulk
//   lookup (per packet). The EAL is initialised in main (rte_lpm needs it).
#include <benchmark/benchmark.h>
#include <rte_eal.h>
#include <unistd.h>

#include <array>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "core/rng.hpp"
#include "route_lookup.hpp"
#include "fwd/ecmp.hpp"
#include "fwd/fdb.hpp"
#include "fwd/local_addr.hpp"

using namespace rocelab;
using namespace rocelab::literals;
using rocelab::dpdk::route_table;

namespace {

constexpr std::size_t n_stations = 4096;

std::vector<std::array<std::uint8_t, 6>> stations() {
    rng r(7);
    std::vector<std::array<std::uint8_t, 6>> v(n_stations);
    for (auto& m : v) {
        const std::uint64_t x = r.next();
        for (int i = 0; i < 6; ++i) {
            m[i] = static_cast<std::uint8_t>(x >> (8 * i));
        }
        m[0] = static_cast<std::uint8_t>((m[0] & 0xfe) | 0x02);
    }
    return v;
}

void bm_fdb_learn_hit(benchmark::State& st) {
    const auto macs = stations();
    fdb t(16384, 300_s);
    for (std::size_t i = 0; i < macs.size(); ++i) {
        t.learn(nanos{0}, macs[i].data(), 1, static_cast<std::uint16_t>(i & 7));
    }
    std::size_t i = 0;
    std::int64_t now = 1000;
    for (auto _ : st) {
        t.learn(nanos{now}, macs[i].data(), 1, static_cast<std::uint16_t>(i & 7));
        i = (i + 1) & (n_stations - 1);
        now += 100;
    }
    benchmark::DoNotOptimize(t.size());
}
BENCHMARK(bm_fdb_learn_hit);

void bm_fdb_lookup(benchmark::State& st) {
    const auto macs = stations();
    fdb t(16384, 300_s);
    for (std::size_t i = 0; i < macs.size(); ++i) {
        t.learn(nanos{0}, macs[i].data(), 1, static_cast<std::uint16_t>(i & 7));
    }
    std::size_t i = 0;
    int acc = 0;
    for (auto _ : st) {
        acc += t.lookup(nanos{1000}, macs[i].data(), 1);
        i = (i + 1) & (n_stations - 1);
    }
    benchmark::DoNotOptimize(acc);
}
BENCHMARK(bm_fdb_lookup);

void bm_flow_hash_v4(benchmark::State& st) {
    std::uint32_t h = 0;
    std::uint16_t sport = 0xC000;
    for (auto _ : st) {
        h ^= flow_hash_v4(0x0a000001, 0x0a010002, 17, sport++, 4791, h);
    }
    benchmark::DoNotOptimize(h);
}
BENCHMARK(bm_flow_hash_v4);

// Is a frame's destination one of the switch's addresses? The RSS poll of
// another worker's queue asks per frame (rss_owner_only), before any
// lookup. Transit destinations (none of them ours) against N addresses:
// the scan (find_v4) and is_local_v4 (a filter of the addresses' hashes,
// then the scan when its bit is set).
template <bool Filtered>
void bm_local_v4(benchmark::State& st) {
    local_addrs me;
    rng r{3};
    for (std::int64_t k = 0; k < st.range(0); ++k) {
        (void)me.add_v4(0x0A000000u + static_cast<std::uint32_t>(k) * 2u, 31, static_cast<std::uint16_t>(k), mac_addr{});
    }
    std::array<std::uint32_t, 256> dst{};
    for (auto& d : dst) { d = 0x0B000000u | static_cast<std::uint32_t>(r.next() & 0xFFFFFF); }
    std::size_t i = 0;
    for (auto _ : st) {
        const std::uint32_t a = dst[i];
        benchmark::DoNotOptimize(Filtered ? me.is_local_v4(a) : me.find_v4(a) != nullptr);
        i = (i + 1) & 255;
    }
    st.SetItemsProcessed(st.iterations());
}
BENCHMARK(bm_local_v4<false>)->Name("bm_local_v4_scan")->Arg(2)->Arg(12)->Arg(64);
BENCHMARK(bm_local_v4<true>)->Name("bm_local_v4_filtered")->Arg(2)->Arg(12)->Arg(64);

void bm_flow_hash_v6(benchmark::State& st) {
    std::uint8_t s[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    std::uint8_t d[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    std::uint32_t h = 0;
    std::uint16_t sport = 0xC000;
    for (auto _ : st) {
        h ^= flow_hash_v6(s, d, 17, sport++, 4791, h);
    }
    benchmark::DoNotOptimize(h);
}
BENCHMARK(bm_flow_hash_v6);

ip_prefix v4pfx(std::uint32_t a, std::uint8_t len) {
    ip_prefix p;
    p.addr = {static_cast<std::uint8_t>(a >> 24), static_cast<std::uint8_t>(a >> 16),
              static_cast<std::uint8_t>(a >> 8), static_cast<std::uint8_t>(a)};
    p.len = len;
    return p;
}

ip_prefix v6pfx(const std::array<std::uint8_t, 16>& a, std::uint8_t len) {
    ip_prefix p;
    p.v6 = true;
    p.addr = a;
    p.len = len;
    return network_of(p);
}
std::array<std::uint8_t, 16> fc00(unsigned last) {
    std::array<std::uint8_t, 16> a{};
    a[0] = 0xfc;
    a[15] = static_cast<std::uint8_t>(last);
    return a;
}

// 4 ports with point-to-point subnets and neighbours, a 4-way ECMP default
// route and 1000 random routes: IPv4 10.0.0.x/31s, /24s and /28s; IPv6
// fc00::x/127s, /48s and /64s under 2001:db8::/32.
route_table* make_bench_table(bool v6) {
    const auto port_addr = [v6](unsigned k) { return v6 ? v6pfx(fc00(k), 127) : v4pfx(0x0a000000u + k, 31); };
    const auto host = [v6](unsigned k) { return v6 ? v6pfx(fc00(k), 128) : v4pfx(0x0a000000u + k, 32); };
    std::vector<route_port> ports;
    std::vector<neigh_cfg> neighbors;
    std::vector<route_cfg> routes;
    route_cfg def;
    def.prefix = v6 ? v6pfx({}, 0) : v4pfx(0, 0);
    for (std::uint8_t p = 0; p < 4; ++p) {
        const std::string name = "Ethernet" + std::to_string(p * 4);
        ports.push_back({name, {port_addr(p * 2u + 1)}, {0x02, 0, 0, 0, 0, p}, p});
        neighbors.push_back({name, host(p * 2u), {0x52, 0x54, 0, 0, 0, p}});
        def.nexthops.push_back({host(p * 2u), name});
    }
    routes.push_back(def);
    rng r(11);
    for (int i = 0; i < 1000; ++i) {
        const unsigned p = static_cast<unsigned>(i % 4);
        ip_prefix dst;
        if (v6) {
            std::array<std::uint8_t, 16> a{0x20, 0x01, 0x0d, 0xb8};
            for (std::size_t k = 4; k < 16; ++k) { a[k] = static_cast<std::uint8_t>(r.next_u32()); }
            dst = v6pfx(a, (i % 2) ? 48 : 64);
        } else {
            dst = v4pfx(r.next_u32(), (i % 2) ? 24 : 28);
        }
        routes.push_back({dst, {{host(p * 2), ""}}});
    }
    auto built = route_table::build(route_sources{ports, neighbors, routes, true});
    if (auto* e = std::get_if<std::string>(&built)) {
        std::fprintf(stderr, "route table: %s\n", e->c_str());
        std::abort();
    }
    return new route_table(std::move(std::get<route_table>(built)));
}
route_table& bench_table() {
    static route_table* t = make_bench_table(false);
    return *t;
}
route_table& bench_table_v6() {
    static route_table* t = make_bench_table(true);
    return *t;
}

std::vector<std::uint32_t> random_dsts(std::size_t n) {
    rng r(5);
    std::vector<std::uint32_t> v(n);
    for (auto& x : v) {
        x = r.next_u32();
    }
    return v;
}

void bm_lpm_v4_single(benchmark::State& st) {
    const route_table& t = bench_table();
    const auto dst = random_dsts(4096);
    std::size_t i = 0;
    int acc = 0;
    for (auto _ : st) {
        const nexthop* nh = nullptr;
        acc += t.lookup_v4(dst[i], dst[i] * 2654435761u, &nh);
        i = (i + 1) & 4095;
    }
    benchmark::DoNotOptimize(acc);
}
BENCHMARK(bm_lpm_v4_single);

void bm_lpm_v4_bulk32(benchmark::State& st) {
    const route_table& t = bench_table();
    const auto dst = random_dsts(4096);
    std::vector<std::uint32_t> hash(dst.size());
    for (std::size_t i = 0; i < dst.size(); ++i) {
        hash[i] = fmix32(dst[i]);
    }
    const nexthop* out[32];
    int rc[32];
    std::size_t i = 0;
    for (auto _ : st) {
        t.lookup_v4_bulk(&dst[i], &hash[i], 32, out, rc);
        benchmark::DoNotOptimize(rc);
        i = (i + 32) & 4095;
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 32);
    st.counters["ns_per_pkt"] = benchmark::Counter(static_cast<double>(st.iterations()) * 32,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(bm_lpm_v4_bulk32);

// 4096 destinations: half inside a /48 or /64 route, half elsewhere under 2001:db8::/32.
std::vector<std::array<std::uint8_t, 16>> random_dsts_v6() {
    const route_table& t = bench_table_v6();
    std::vector<const ip_prefix*> routed;  // the random /48s and /64s
    for (const auto& ri : t.routes()) {
        if (ri.prefix.v6 && (ri.prefix.len == 48 || ri.prefix.len == 64)) { routed.push_back(&ri.prefix); }
    }
    rng r(5);
    std::vector<std::array<std::uint8_t, 16>> v(4096);
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::array<std::uint8_t, 16> a{0x20, 0x01, 0x0d, 0xb8};
        for (int k = 4; k < 16; ++k) { a[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(r.next_u32()); }
        if (i % 2 == 0) {
            const ip_prefix& p = *routed[r.next_u32() % routed.size()];
            std::copy(p.addr.begin(), p.addr.begin() + p.len / 8, a.begin());
        }
        v[i] = a;
    }
    return v;
}

// Per frame, as the L3 router did before its burst lookup: lookup_v6.
void bm_lpm_v6_single(benchmark::State& st) {
    const route_table& t = bench_table_v6();
    const auto dst = random_dsts_v6();
    std::size_t i = 0;
    int acc = 0;
    for (auto _ : st) {
        const nexthop* nh = nullptr;
        const std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;
        acc += t.lookup_v6(dst[i].data(), [h] { return h; }, &nh);
        i = (i + 1) & 4095;
    }
    benchmark::DoNotOptimize(acc);
}
BENCHMARK(bm_lpm_v6_single);

// A burst of 32 as the L3 router does now (lookup_burst): the 16-byte
// destinations copied out, one rte_lpm6 bulk lookup, resolve_v6 per frame.
void bm_lpm_v6_bulk32(benchmark::State& st) {
    const route_table& t = bench_table_v6();
    const auto dst = random_dsts_v6();
    ip6_addr d[32];
    std::uint32_t val[32];
    std::size_t i = 0;
    int acc = 0;
    for (auto _ : st) {
        for (unsigned k = 0; k < 32; ++k) { std::memcpy(d[k], dst[i + k].data(), 16); }
        t.lpm().lookup_v6_bulk(d, val, 32);
        for (unsigned k = 0; k < 32; ++k) {
            const nexthop* nh = nullptr;
            const std::uint32_t h = static_cast<std::uint32_t>(i + k) * 2654435761u;
            acc += t.resolve_v6(val[k], [h] { return h; }, &nh);
        }
        i = (i + 32) & 4095;
    }
    benchmark::DoNotOptimize(acc);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 32);
    st.counters["ns_per_pkt"] = benchmark::Counter(static_cast<double>(st.iterations()) * 32,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(bm_lpm_v6_bulk32);

}  // namespace

int main(int argc, char** argv) {
    const std::string prefix = "fwdbench" + std::to_string(::getpid());
    std::vector<std::string> args = {
        "fwd_bench",   "--no-huge",     "-m", "256", "--no-pci", "--file-prefix", prefix,
        "--log-level", "lib.eal:error", "-l", "0"};
    std::vector<char*> eal_argv;
    for (auto& a : args) {
        eal_argv.push_back(a.data());
    }
    eal_argv.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(args.size()), eal_argv.data()) < 0) {
        std::fprintf(stderr, "rte_eal_init failed\n");
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    rte_eal_cleanup();
    return 0;
}
