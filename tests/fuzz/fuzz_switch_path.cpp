// fuzz_switch_path - the real switch_pipeline fed from memory.
//
// Two switches live in one process, each on its own net_ring ports, built
// once in LLVMFuzzerInitialize (EAL: --no-huge -m 512 --no-pci, one lcore):
//   bed 0  L2 bridge, 3 ports at 1Gbps: lossless PG 3 with buffer
//          accounting, PFC XOFF/XON, the PFC watchdog; Ethernet1 tagged
//          (VLAN 100, trusts PCP), Ethernet2 sends 802.3x PAUSE.
//   bed 1  L3 leaf, 4 ports: conf/l3-leaf-ecmp.yaml (IPv4/IPv6 LPM, ECMP,
//          static neighbours, ARP/ND for its own addresses).
//   bed 2  L3 leaf, 2 ports, no NEIGH: neighbours resolved by ARP/ND (frames
//          wait, requests are retransmitted every 10 ms, a small table that
//          fills up, a route's next hop resolved at run time).
//   bed 3  bed 0's L2 bridge on 3 workers (a port each): every forwarded
//          frame, flood copy and buffer release crosses between workers.
//   bed 4  bed 2's L3 leaf on 2 workers: frames waiting for a neighbour on
//          the other worker's port, ICMP errors sent back across.
//   The workers of a bed are polled in turn on this one thread (each poll
//   is poll_worker(k) for every k, twice, so what one hands over the other
//   takes in the same step).
// Input: byte 0 picks the bed (mod 5); then frames, each a control byte (port =
// (ctl & 15) % ports, time step = ctl >> 5: 0, 1us, 10us, 100us, 1ms, 10ms, 100ms,
// 1s added to the fake clock) and a 2-byte length-prefixed body. Each frame
// is copied into an mbuf, put on that port's RX ring, and poll(now) runs;
// the TX rings are drained (and the frames freed) after every poll.
// At the end of the input the switch polls with time moving on (1ms steps,
// up to 32) until idle (queues drain, pauses expire), then release_all().
// Invariants (trap): the mempool's in-use count is back to 0 (no mbuf leaked
// by any path: forwarding, flooding copies, drops, PFC frames, ARP/ND
// replies), and with buffer accounting every PG's use and the shared pool
// use are back to 0 (no byte leaked in the MMU).
// Conservation (trap), over each input and every port of the bed: every
// frame injected is received (rx_packets), and the frames the harness
// drained from the TX rings are exactly
//     received - counted drops - consumed (MAC Control, ARP/ND taken in)
//     + made by the switch (flood copies, PFC frames, ARP requests, NS,
//       ICMP errors) - flushed (queued or staged at release, counted)
// so no frame is lost, or made, without a counter saying so. And no frame of
// a lossless class is dropped at its egress queue (tail or WRED): queue 3
// (TC 3, lossless PG 3 in the accounting beds) drops none; a lossless frame
// leaves only by TX, link down, the watchdog, or headroom overflow at ingress.
// State (FDB, pause timers, watchdog) persists between inputs, as in a
// running switch; the clock only moves forward.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/switch_config.hpp"
#include "fuzz_common.hpp"
#include "rocelab_version.h"
#include "switch/switch_pipeline.hpp"

using namespace rocelab;
using namespace rocelab::fuzz;

namespace {

const char* const l2_yaml = R"(
ROCELAB: {mode: l2, seed: 3}
PORT:
  Ethernet0: {port_id: 0, speed: 1Gbps, mtu: 1500}
  Ethernet1: {port_id: 1, speed: 1Gbps, mtu: 1500, vlan_mode: tagged, vlan: 100, trust: pcp}
  Ethernet2: {port_id: 2, speed: 1Gbps, mtu: 1500}
PORT_QOS_MAP:
  global: {pfc_enable: "3", pfcwd_sw_enable: "3", pfc_quanta: 4000}
  Ethernet2: {pfc_mode: pause}
CABLE_LENGTH:
  AZURE: {global: 1m}
BUFFER_POOL:
  ingress_lossless_pool: {size: 1MiB, type: ingress, mode: dynamic}
BUFFER_PROFILE:
  pg_lossless: {pool: ingress_lossless_pool, size: 4KiB, dynamic_th: -6, xoff: 64KiB, xon: 8KiB}
  lossy: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0}
BUFFER_PG:
  "global|3": {profile: pg_lossless}
  "global|0": {profile: lossy}
PFC_WD:
  global: {detection_time: 20ms, restoration_time: 100ms, action: drop}
  GLOBAL: {POLL_INTERVAL: 5ms}
)";

struct bed {
    std::unique_ptr<sw::switch_pipeline> pipe;
    std::vector<ring_port> ports;
};

rte_mempool* g_pool = nullptr;
bed g_beds[5];
std::int64_t g_now = 1'000'000'000;

bed make_bed(switch_cfg cfg, const std::string& tag, unsigned workers = 1) {
    bed b;
    std::vector<sw::port_binding> bindings;
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
        ring_port rp = make_ring_port(tag + std::to_string(i), g_pool);
        cfg.ports[i].port_id = rp.port_id;
        sw::port_binding pb;
        pb.port_id = rp.port_id;
        pb.name = cfg.ports[i].name;
        // As rocelab-switch does: the port's MAC, else (L3) the switch MAC, else the device's.
        const mac_addr dev{0x02, 0x5a, 0, 0, static_cast<std::uint8_t>(tag[0]), static_cast<std::uint8_t>(i + 1)};
        pb.mac = cfg.ports[i].mac ? *cfg.ports[i].mac
                                  : (cfg.switch_mac && cfg.mode == fwd_mode::l3 ? *cfg.switch_mac : dev);
        pb.shaped = cfg.ports[i].speed.has_value();
        pb.line_rate = cfg.ports[i].speed.value_or(bits_per_sec{10'000'000'000ULL});
        bindings.push_back(pb);
        b.ports.push_back(rp);
    }
    auto r = sw::switch_pipeline::create(cfg, bindings, g_pool, workers);
    if (auto* e = std::get_if<std::string>(&r)) {
        std::fprintf(stderr, "fuzz_switch_path: %s: %s\n", tag.c_str(), e->c_str());
        std::abort();
    }
    b.pipe = std::move(std::get<0>(r));
    return b;
}

switch_cfg must_load(result<switch_cfg> r) {
    if (!r) {
        std::fprintf(stderr, "fuzz_switch_path: %s\n", r.error().message.c_str());
        std::abort();
    }
    return *r;
}

std::uint32_t poll(bed& b, nanos now) {
    std::uint32_t moved = 0;
    for (int round = 0; round < (b.pipe->worker_count() > 1 ? 2 : 1); ++round) {
        for (std::size_t k = 0; k < b.pipe->worker_count(); ++k) { moved += b.pipe->poll_worker(k, now); }
    }
    return moved;
}

std::uint64_t g_drained = 0;  // frames the harness took off the TX rings

void drain_all(bed& b) {
    for (const auto& p : b.ports) { g_drained += drain(p); }
}

// The counters of a bed that conservation needs, summed over its ports.
struct totals {
    std::uint64_t rx = 0, drops = 0, consumed = 0, made = 0, flushed = 0, lossless_q_drops = 0;
};

totals sum_counters(const bed& b) {
    totals t;
    for (std::size_t i = 0; i < b.ports.size(); ++i) {
        const auto& c = b.pipe->counters(i);
        t.rx += c.rx_packets;
        for (std::size_t r = 0; r < sw::drop_reason_count; ++r) { t.drops += c.drops[r]; }
        // A PFC frame naming disabled priorities is consumed and counted by that name too.
        t.drops -= c.drops[static_cast<std::size_t>(sw::drop_reason::pfc_disabled_prio)];
        t.consumed += c.rx_mac_control + c.neigh_consumed;
        t.made += c.flood_copies + c.tx_pfc_frames + c.arp_requests + c.nd_solicits + c.icmp_errors;
        // Queued or staged frames discarded: the watchdog and link down count
        // them as drops too, so only what release_all() discards is taken
        // (the difference across it).
        t.flushed += c.tx_flushed;
        for (int q = 0; q < 8; ++q) { t.flushed += b.pipe->queue(i, q).flushed_packets; }
        if (b.pipe->buffer_accounting()) {
            t.lossless_q_drops += b.pipe->queue(i, 3).drop_packets + c.wred_dropped[3];
        }
    }
    return t;
}

constexpr std::int64_t steps_ns[8] = {0, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000,
                                      1'000'000'000};

}  // namespace

namespace {
const char* const l3_dyn_yaml = R"(
ROCELAB: {mode: l3, seed: 5, neigh_retrans_time: 10ms, neigh_probes: 2, neigh_max: 16, neigh_queue: 3,
          neigh_reachable_time: 1s, neigh_gc_time: 2s}
DEVICE_METADATA:
  localhost: {mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {port_id: 0, speed: 1Gbps}
  Ethernet1: {port_id: 1, speed: 1Gbps}
INTERFACE:
  "Ethernet0|10.20.0.1/24": {}
  "Ethernet0|2001:db8:20::1/64": {}
  "Ethernet1|10.21.0.1/24": {}
  "Ethernet1|2001:db8:21::1/64": {}
ROUTE:
  "10.50.0.0/16": {nexthop: "10.21.0.7"}
)";
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_eal("fuzz_sw_");
    // Cache 0: the in-use count is exact at any time.
    g_pool = rte_pktmbuf_pool_create("fuzz_sw", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    FUZZ_CHECK(g_pool != nullptr);
    g_beds[0] = make_bed(must_load(load_switch_cfg_from_string(l2_yaml, "fuzz-l2.yaml")), "l2_");
    g_beds[1] = make_bed(must_load(load_switch_cfg(std::string(ROCELAB_SOURCE_DIR) + "/conf/l3-leaf-ecmp.yaml")),
                         "l3_");
    g_beds[2] = make_bed(must_load(load_switch_cfg_from_string(l3_dyn_yaml, "fuzz-l3-dyn.yaml")), "l3d_");
    g_beds[3] = make_bed(must_load(load_switch_cfg_from_string(l2_yaml, "fuzz-l2.yaml")), "l2w_", 3);
    g_beds[4] = make_bed(must_load(load_switch_cfg_from_string(l3_dyn_yaml, "fuzz-l3-dyn.yaml")), "l3dw_", 2);
    std::atexit([] {
        for (auto& b : g_beds) {
            if (b.pipe) { b.pipe->release_all(); }
            drain_all(b);
            b.pipe.reset();
            for (const auto& p : b.ports) { dpdk::port_close(p.port_id); }
        }
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input_reader in(data, size);
    bed& b = g_beds[in.u8() % 5u];
    const std::size_t np = b.ports.size();
    const totals before = sum_counters(b);
    g_drained = 0;
    int frames = 0;
    while (!in.empty() && frames < 64) {
        const std::uint8_t ctl = in.u8();
        const auto body = in.frame();
        g_now += steps_ns[ctl >> 5];
        rte_mbuf* m = frame_mbuf(g_pool, body);
        FUZZ_CHECK(m != nullptr);  // nothing else holds mbufs between inputs: the pool cannot run dry
        inject(b.ports[(ctl & 0x0Fu) % np], m);
        ++frames;
        poll(b, nanos{g_now});
        drain_all(b);
    }
    // Let queues drain and pauses expire, then flush what is left.
    for (int i = 0; i < 32; ++i) {
        g_now += i < 2 ? 10'000 : 1'000'000;
        const std::uint32_t moved = poll(b, nanos{g_now});
        drain_all(b);
        if (moved == 0 && i >= 2) { break; }
    }
    static const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;
    if (verbose) {  // what the input reached, per port (cumulative)
        for (std::size_t i = 0; i < np; ++i) {
            const auto& c = b.pipe->counters(i);
            const auto u = [](std::uint64_t x) { return static_cast<unsigned long>(x); };  // counter64 -> %lu
            std::fprintf(stderr, "port %zu: rx %lu tx %lu pfc_rx %lu pause_rx %lu pfc_tx %lu flood %lu arp %lu nd %lu",
                         i, u(c.rx_packets), u(c.tx_packets), u(c.rx_pfc), u(c.rx_pause), u(c.tx_pfc_frames),
                         u(c.flood_copies), u(c.arp_replies), u(c.nd_replies));
            for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
                if (c.drops[r] != 0) {
                    std::fprintf(stderr, " %s %lu", sw::drop_reason_name(static_cast<sw::drop_reason>(r)), u(c.drops[r]));
                }
            }
            if (b.pipe->buffer_accounting()) {
                const sw::pg_status g = b.pipe->pg(i, 3);
                std::fprintf(stderr, " pg3 peak %lu threshold %lu xoff_transitions %lu", g.peak_use, g.threshold,
                             g.xoff_transitions);
            }
            std::fprintf(stderr, "\n");
        }
    }
    const totals at_release = sum_counters(b);
    b.pipe->release_all();
    drain_all(b);
    FUZZ_CHECK(rte_mempool_in_use_count(g_pool) == 0);
    const totals after = sum_counters(b);
    const std::uint64_t rx = after.rx - before.rx;
    const std::uint64_t out = rx - (after.drops - before.drops) - (after.consumed - before.consumed) +
                              (after.made - before.made) - (after.flushed - at_release.flushed);
    if (verbose || rx != static_cast<std::uint64_t>(frames) || out != g_drained) {
        std::fprintf(stderr,
                     "conservation: injected %d rx %lu drops %lu consumed %lu made %lu flushed %lu -> expect %lu, "
                     "drained %lu\n",
                     frames, rx, after.drops - before.drops, after.consumed - before.consumed,
                     after.made - before.made, after.flushed - at_release.flushed, out, g_drained);
    }
    FUZZ_CHECK(rx == static_cast<std::uint64_t>(frames));
    FUZZ_CHECK(out == g_drained);
    FUZZ_CHECK(after.lossless_q_drops == before.lossless_q_drops);
    if (b.pipe->buffer_accounting()) {
        for (std::size_t p = 0; p < np; ++p) {
            for (int pg = 0; pg < 8; ++pg) { FUZZ_CHECK(b.pipe->pg(p, pg).use == 0); }
        }
        FUZZ_CHECK(b.pipe->pool_shared_used() == 0);
    }
    return 0;
}
