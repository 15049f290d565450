// proto_bench.cpp - per-packet cost of the protocol library: parse_frame,
// ICRC, CRC-32 engines, the switch's TTL/ECN rewrite and the frame builder.
#include <benchmark/benchmark.h>

#include <array>
#include <cstring>
#include <vector>

#include "proto/build.hpp"
#include "proto/crc32.hpp"
#include "proto/icrc.hpp"
#include "proto/ipv4.hpp"
#include "proto/mac_control.hpp"
#include "proto/parse.hpp"

namespace rocelab {
namespace {

std::vector<std::byte> make_frame(std::size_t payload, std::int16_t vid = -1) {
    std::vector<std::byte> pl(payload);
    for (std::size_t i = 0; i < payload; ++i) {
        pl[i] = std::byte(i * 7);
    }
    roce_v4_params p{};
    p.dst_mac = mac_addr{2, 0, 0, 0, 0, 2};
    p.src_mac = mac_addr{2, 0, 0, 0, 0, 1};
    p.vlan_id = vid;
    p.pcp = 3;
    p.src_ip = ipv4_addr(192, 168, 1, 1);
    p.dst_ip = ipv4_addr(192, 168, 1, 2);
    p.dscp = 26;
    p.ip_id = 0x1234;
    p.sport = 49152;
    p.bth.dest_qpn = 0x11;
    p.bth.ack_req = true;
    p.bth.opcode = roce_op::rc_write_only;
    p.ext.reth = reth_fields{0x7f0000001000ull, 0x1234, static_cast<std::uint32_t>(payload)};
    p.payload = pl;
    std::vector<std::byte> f(roce_v4_frame_len(p));
    build_roce_v4(std::span<std::byte>(f), p);
    return f;
}

void parse_one(benchmark::State& st, const std::vector<std::byte>& f) {
    const auto len = static_cast<std::uint32_t>(f.size());
    for (auto _ : st) {
        const std::byte* p = f.data();
        benchmark::DoNotOptimize(p);
        parsed_frame r = parse_frame(p, len);
        benchmark::DoNotOptimize(r);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

void BM_parse_roce_v4(benchmark::State& st) { parse_one(st, make_frame(16)); }
void BM_parse_roce_v4_vlan(benchmark::State& st) { parse_one(st, make_frame(1024, 100)); }
void BM_parse_pfc(benchmark::State& st) {
    std::vector<std::byte> f(60);
    build_pfc(f.data(), mac_addr{2, 0, 0, 0, 0, 0xaa}, 0x08, {0, 0, 0, 0xFFFF, 0, 0, 0, 0});
    parse_one(st, f);
}

// A burst of 32 different frames (4 shapes), as the switch sees it.
void BM_parse_burst32(benchmark::State& st) {
    std::vector<std::vector<std::byte>> frames;
    for (int i = 0; i < 32; ++i) {
        frames.push_back(make_frame(static_cast<std::size_t>(16 << (i % 4)), (i % 2) ? 100 : -1));
    }
    std::array<parsed_frame, 32> out{};
    for (auto _ : st) {
        for (std::size_t i = 0; i < 32; ++i) {
            out[i] = parse_frame(frames[i].data(), static_cast<std::uint32_t>(frames[i].size()));
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * 32);
}

void BM_icrc(benchmark::State& st) {
    const auto f = make_frame(static_cast<std::size_t>(st.range(0)));
    const std::byte* l3 = f.data() + 14;
    const auto len = static_cast<std::uint32_t>(f.size() - 14 - 4);
    for (auto _ : st) {
        benchmark::DoNotOptimize(l3);
        std::uint32_t c = roce_icrc(l3, len, false);
        benchmark::DoNotOptimize(c);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * len);
}

void BM_icrc_reuse_payload_crc(benchmark::State& st) {
    const auto f = make_frame(static_cast<std::size_t>(st.range(0)));
    const std::byte* l3 = f.data() + 14;
    const std::uint32_t hdr = 20 + 8 + 12 + 16;
    const auto pl = static_cast<std::uint32_t>(st.range(0));
    const std::uint32_t pcrc = crc32(0, l3 + hdr, pl);
    const std::uint32_t op = crc32_combine_gen(pl);
    for (auto _ : st) {
        benchmark::DoNotOptimize(l3);
        std::uint32_t c = roce_icrc_with_payload_crc_op(l3, hdr, false, pcrc, op);
        benchmark::DoNotOptimize(c);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

template <bool Portable>
void BM_crc32(benchmark::State& st) {
    std::vector<std::byte> buf(static_cast<std::size_t>(st.range(0)), std::byte{0x5a});
    for (auto _ : st) {
        std::uint32_t c = Portable ? crc32_portable(0, buf.data(), buf.size()) : crc32(0, buf.data(), buf.size());
        benchmark::DoNotOptimize(c);
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * st.range(0));
}

// What the switch does to a forwarded, congested RoCE packet: TTL - 1 and
// ECT -> CE, each with an RFC 1624 checksum update. The header is restored
// from a pristine copy every iteration (a 20-byte copy, included in the time).
void BM_ipv4_ttl_dec_ecn_mark(benchmark::State& st) {
    const auto f = make_frame(16);
    alignas(64) std::array<std::byte, 20> pristine{};
    alignas(64) std::array<std::byte, 20> ip{};
    std::memcpy(pristine.data(), f.data() + 14, 20);
    for (auto _ : st) {
        std::memcpy(ip.data(), pristine.data(), 20);
        benchmark::DoNotOptimize(ip.data());
        std::uint8_t t = ipv4_dec_ttl(ip.data());
        bool m = ipv4_mark_ce(ip.data());
        benchmark::DoNotOptimize(t);
        benchmark::DoNotOptimize(m);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

void BM_build_roce_v4(benchmark::State& st) {
    std::vector<std::byte> pl(static_cast<std::size_t>(st.range(0)), std::byte{1});
    roce_v4_params p{};
    p.bth.opcode = roce_op::rc_send_only;
    p.payload = pl;
    std::vector<std::byte> out(roce_v4_frame_len(p));
    for (auto _ : st) {
        std::uint32_t n = build_roce_v4(std::span<std::byte>(out), p);
        benchmark::DoNotOptimize(n);
        benchmark::ClobberMemory();
        p.bth.psn = psn_add(p.bth.psn, 1);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

BENCHMARK(BM_parse_roce_v4);
BENCHMARK(BM_parse_roce_v4_vlan);
BENCHMARK(BM_parse_pfc);
BENCHMARK(BM_parse_burst32);
BENCHMARK(BM_icrc)->Arg(16)->Arg(1024)->Arg(4096);
BENCHMARK(BM_icrc_reuse_payload_crc)->Arg(1024);
BENCHMARK(BM_crc32<false>)->Name("BM_crc32")->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK(BM_crc32<true>)->Name("BM_crc32_portable")->Arg(64)->Arg(1024)->Arg(4096);
BENCHMARK(BM_ipv4_ttl_dec_ecn_mark);
BENCHMARK(BM_build_roce_v4)->Arg(16)->Arg(1024);

}  // namespace
}  // namespace rocelab

BENCHMARK_MAIN();
