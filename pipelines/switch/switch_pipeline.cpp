// switch_pipeline.cpp - see switch_pipeline.hpp for the stage layout.
#include "switch/switch_pipeline.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "core/endian.hpp"
#include "core/spsc_queue.hpp"
#include "core/spsc_ring.hpp"
#include "core/timer_heap.hpp"
#include "dpdk/capture.hpp"
#include "dpdk/mbuf_meta.hpp"
#include "port_burst.hpp"
#include "route_lookup.hpp"
#include "switch/frame_meta.hpp"
#include "fwd/arp_nd.hpp"
#include "fwd/icmp_error.hpp"
#include "fwd/ecmp.hpp"
#include "fwd/fdb.hpp"
#include "fwd/neigh_table.hpp"
#include "proto/ipv4.hpp"
#include "proto/mac_control.hpp"
#include "proto/ecn.hpp"
#include "proto/parse.hpp"
#include "qos/egress_queues.hpp"
#include "qos/mmu.hpp"
#include "qos/pfc_tx.hpp"
#include "qos/pfc_watchdog.hpp"
#include "qos/credit.hpp"
#include "qos/pause_timer.hpp"
#include "qos/scheduler.hpp"
#include "qos/shaper.hpp"
#include "qos/wred.hpp"

namespace rocelab::sw {

namespace {

constexpr std::uint16_t out_drop = 0xFFFF;
constexpr std::uint16_t out_consumed = 0xFFFE;  // >= out_consumed: free without forwarding
constexpr std::uint16_t out_flood = 0xFFFD;
constexpr std::uint16_t out_held = 0xFFFC;  // parked for neighbour resolution (or handed over): owned elsewhere now
constexpr std::uint16_t out_handled = 0xFFFB;  // dropped and freed where it was decided (counted)

// Ingress buffer accounting: where a queued frame was charged (ingress
// port, PG) travels in the egress queue entry's tag; the charge itself is
// mmu::charge_for(len), recomputed at release from the entry's length.
constexpr std::uint32_t acct_tag(std::uint16_t in_port, std::uint8_t pg) noexcept {
    return std::uint32_t{in_port} | std::uint32_t{pg} << 16;
}
constexpr int tag_port(std::uint32_t tag) noexcept { return static_cast<int>(tag & 0xFFFFu); }
constexpr int tag_pg(std::uint32_t tag) noexcept { return static_cast<int>(tag >> 16 & 0xFFu); }
// A flood copy that carries no charge (the ingress PG is charged once per
// received frame, on the copy that keeps the original mbuf): nothing to
// release when it leaves. It still names its ingress (port, PG), so that a
// copy of a lossless frame is treated as lossless (never WRED-dropped, never
// dropped for a full handoff queue).
constexpr std::uint32_t tag_uncharged = 0x80000000u;
// A frame parked for neighbour resolution: not admitted (not charged) yet;
// admission happens when its neighbour resolves (docs/architecture.md,
// "Lossless containers"). tag_handed: the same, for a frame another worker
// handed over for resolution (already rewritten for its egress port).
constexpr std::uint32_t tag_none = 0x40000000u;
constexpr std::uint32_t tag_handed = tag_none | 0x20000000u;
// Made by the switch itself (ARP requests, Neighbor Solicitations): no ingress PG.
constexpr std::uint32_t tag_made = tag_uncharged | tag_none;
constexpr bool tag_charged(std::uint32_t tag) noexcept { return (tag & (tag_uncharged | tag_none)) == 0; }

inline std::byte* data(rte_mbuf* m) noexcept { return rte_pktmbuf_mtod(m, std::byte*); }

// Remove the outer 802.1Q tag in place (MACs move forward by 4 bytes).
inline void vlan_strip(rte_mbuf* m) noexcept {
    std::byte* d = data(m);
    std::memmove(d + 4, d, 12);
    rte_pktmbuf_adj(m, 4);
}

// Insert (or rewrite) an 802.1Q tag with the given PCP and VID.
inline bool vlan_set(rte_mbuf* m, bool tagged_now, std::uint8_t pcp, std::uint16_t vid) noexcept {
    if (!tagged_now) {
        if (rte_pktmbuf_headroom(m) < 4 || rte_mbuf_refcnt_read(m) > 1) { return false; }
        std::byte* d = reinterpret_cast<std::byte*>(rte_pktmbuf_prepend(m, 4));
        if (d == nullptr) { return false; }
        std::memmove(d, d + 4, 12);
        store_be16(d + 12, 0x8100);
    }
    std::byte* d = data(m);
    store_be16(d + 14, static_cast<std::uint16_t>((pcp & 7u) << 13 | (vid & 0x0FFFu)));
    return true;
}

}  // namespace

struct port_rt {
    port_binding b;
    std::uint16_t idx = 0;
    trust_mode trust = trust_mode::dscp;
    vlan_mode vmode = vlan_mode::untagged;
    std::uint16_t vid = 0;
    std::uint8_t pfc_enable = 0;
    std::uint16_t owner = 0;  // the worker that polls its RX and runs its egress (queues, scheduler, PFC)
    bool link_down = false;  // link state as the worker applied it (next to what admit() reads per frame)
    qos_maps maps{};
    scheduler sched;
    shaper shp;
    pause_timer pause;
    egress_queues<rte_mbuf*, mbuf_link> eq;  // linked through the frames: no slots to run out of
    std::array<rte_mbuf*, switch_pipeline::max_burst> staged{};
    std::array<std::uint32_t, switch_pipeline::max_burst> staged_len{};
    std::uint16_t n_staged = 0;
    bool backlog = false;  // eligible frames were left after the last fill
    // lossless classes
    pfc_tx pfc_gen;                              // XOFF/XON (or PAUSE) sent upstream
    std::array<std::uint8_t, 256> xoff_pg_to_prio{};  // xoff PG bitmap -> priorities to pause
    rte_mbuf* pfc_pending = nullptr;             // a PFC frame tx_burst has not taken yet
    std::array<std::unique_ptr<pfc_watchdog>, 8> wd{};  // per egress queue (pfcwd_sw_enable)
    std::uint8_t wd_drop_mask = 0;               // queues stormed with action drop
    std::uint8_t wd_ignore_mask = 0;             // queues whose pauses are ignored (drop/forward)
    nanos wd_next{0};
    nanos wd_interval{0};
    // Congestion point (WRED_PROFILE bound by QUEUE): per egress queue.
    std::array<wred_cfg, 8> wred{};
    std::uint8_t wred_mask = 0;  // queues with a profile (marking and/or dropping)
    rng wred_rng;                // seeded from ROCELAB seed and the port index
    // Link state: link_req written by the control thread (relaxed atomic),
    // link_down applied by the worker; seen_up: the control thread has seen
    // the ethdev's link up once (poll_link_states).
    std::uint8_t link_req = 1;
    bool seen_up = false;
    // ICMP errors (L3): this port's addresses as their source (the first
    // IPv4 and IPv6 address of its INTERFACE entries, else the switch's first).
    std::uint32_t icmp_src4 = 0;
    std::array<std::uint8_t, 16> icmp_src6{};
    bool has_src4 = false, has_src6 = false;
    port_rt(const port_cfg& pc, const port_binding& pb, std::uint16_t i, mbuf_link link)
        : b(pb),
          idx(i),
          trust(pc.trust),
          vmode(pc.vlan),
          vid(pc.vlan_id),
          pfc_enable(pc.pfc_enable),
          maps(pc.maps),
          sched(pc.sched),
          shp(pb.shaped ? pb.line_rate : bits_per_sec{0}, bytes{16 * 1024}),
          pause(pc.pfc_enable),
          eq(pc.limits, link),
          pfc_gen(pc.fc_mode, pb.line_rate, pc.pfc_quanta),
          wred(pc.wred),
          wred_rng(0x5EED0000u + i) {
        for (const auto& a : pc.addresses) {
            if (!a.v6 && !has_src4) {
                icmp_src4 = load_be32(reinterpret_cast<const std::byte*>(a.addr.data()));
                has_src4 = true;
            } else if (a.v6 && !has_src6) {
                std::memcpy(icmp_src6.data(), a.addr.data(), 16);
                has_src6 = true;
            }
        }
        for (int q = 0; q < 8; ++q) {
            if (wred[q].enabled) { wred_mask |= static_cast<std::uint8_t>(1u << q); }
        }
        for (unsigned x = 0; x < 256; ++x) {
            std::uint8_t prios = 0;
            for (int pr = 0; pr < 8; ++pr) {
                // Priority pr <-> TC pr (PFC priority = 802.1p = TC); pause it when
                // its PG is in XOFF and PFC is enabled for it on this port.
                if ((pc.pfc_enable >> pr & 1u) != 0 && (x >> pc.maps.tc_to_pg[pr] & 1u) != 0) {
                    prios |= static_cast<std::uint8_t>(1u << pr);
                }
            }
            // PAUSE mode: any lossless PG in XOFF pauses the link.
            if (pc.fc_mode == flow_ctrl_mode::pause && x != 0) { prios = 0xFF; }
            // Credit mode: the port gives credits instead of pausing its peer.
            xoff_pg_to_prio[x] = pb.credit_port ? 0 : prios;
        }
        if (pc.wd.enabled) {
            for (int q = 0; q < 8; ++q) {
                if ((pc.pfcwd_queues >> q & 1u) != 0) {
                    wd[q] = std::make_unique<pfc_watchdog>(pc.wd, i, static_cast<std::uint8_t>(q));
                }
            }
            wd_interval = pc.wd.poll_interval;
        }
    }
};

// A frame waiting for its neighbour (ARP/ND), with what admission needs.
struct held_frame {
    rte_mbuf* m = nullptr;
    std::uint16_t in = 0;
    std::uint8_t tc = 0;
    bool tagged = false;
    std::uint32_t tag = tag_none;  // tag_none, or tag_handed (handed over by the ingress port's worker)
};

// ---- several workers (docs/architecture.md, "Several workers") ----

// A frame handed to the worker that owns the port it must go to.
enum class handoff_kind : std::uint8_t {
    enqueue,  // charged (or not) at RX, rewritten for the egress port: queue it
    resolve,  // L3, next hop resolved by ARP/ND on the egress port: resolve there (not charged:
              // a frame waiting for its neighbour is not admitted yet), then back to `admit`
    ingress,  // made on another worker for one of this worker's ports (an ICMP error back out
              // of its ingress port): charge that port's PG here, then queue
    admit,    // resolved on the egress port's worker (MAC and VLAN rewritten): charge its
              // ingress PG here, on the ingress port's owner, then hand it to `port`'s owner
};
struct handoff {
    rte_mbuf* m = nullptr;
    std::uint32_t tag = 0;   // acct_tag (charged), | tag_uncharged (a flood copy), tag_handed, tag_none,
                             // or 0 (no accounting)
    std::uint32_t aux = 0;   // resolve: offset of the destination address, or dynamic hop | aux_dynhop
    std::uint16_t port = 0;  // egress port (ingress kind: the port to charge and send on)
    std::uint16_t in = 0;    // ingress port
    std::uint8_t tc = 0;
    handoff_kind kind = handoff_kind::enqueue;
    std::uint8_t flags = 0;  // hf_tagged, hf_v6
    std::uint8_t pad = 0;
};
static_assert(sizeof(handoff) == 24);
constexpr std::uint8_t hf_tagged = 1, hf_v6 = 2;
constexpr std::uint32_t aux_dynhop = 0x80000000u;

// Ingress buffer released by another worker, for one of this worker's (port, PG).
struct credit {
    std::uint32_t tag = 0;
    std::uint32_t bytes = 0;
};
// An FDB write on one worker, replayed into every other worker's table.
struct learn_msg {
    std::uint64_t key = 0;  // MAC (6 bytes, wire order) | VID << 48
    std::int64_t now = 0;
    std::uint16_t port = 0;
    std::uint16_t flush = 0;  // 1: forget every station on `port` (its link went down)
    std::uint32_t pad = 0;
};

struct worker_rt {
    static constexpr std::size_t handoff_slots = 2048;  // per worker pair
    static constexpr std::size_t credit_slots = 4096;
    static constexpr std::size_t learn_slots = 1024;
    static constexpr std::size_t stage_max = 64;        // frames per destination before a push

    // What this worker produces for one other worker (it is the single
    // producer of these queues; that worker the single consumer).
    struct peer {
        std::unique_ptr<spsc_queue<handoff, handoff_slots>> frames;
        std::unique_ptr<spsc_queue<credit, credit_slots>> credits;
        std::unique_ptr<spsc_queue<learn_msg, learn_slots>> learns;
        std::array<handoff, stage_max> stage{};
        std::uint16_t n_stage = 0;
        // Lossless frames the full queue did not take: kept in order, still
        // charged to their ingress PG, pushed first at the next flush. Linked
        // through the frames (frame_meta): it holds whatever the buffer
        // model admitted, so a full handoff queue never drops a lossless frame.
        frame_fifo stash;
    };

    std::uint16_t id = 0;
    std::vector<std::uint16_t> ports;  // owned: RX, egress queues, scheduler, shaper, PFC
    std::vector<port_counters> c;      // this worker's counts per port (readers sum the workers)
    std::unique_ptr<fdb> table;        // L2: this worker's copy (learns replayed from the others)
    std::unique_ptr<neigh_table<held_frame>> neigh;  // L3: neighbours behind its own ports
    nanos neigh_next{0};
    nanos last_now{0};
    std::int64_t icmp_tat = INT64_MIN / 4;  // ICMP error rate (GCRA), per worker
    spsc_ring<switch_event, 1024> events;   // for the control thread
    std::vector<peer> peers;                // [worker]; empty with one worker
    std::vector<std::uint64_t> owed;        // [port * 8 + pg]: bytes released here for other workers' ports
    std::vector<std::uint16_t> owed_list;   // indices of owed[] that are non-zero
    worker_stats st{};
};

struct switch_pipeline::impl {
    fwd_mode mode = fwd_mode::l2;
    bool wred_at_enqueue = false;  // ROCELAB ecn_at: enqueue (default: dequeue)
    std::uint16_t burst = 32;
    std::uint32_t max_frame = 9216;
    rte_mempool* pool = nullptr;
    mbuf_link link;  // the frames' frame_meta (egress queues, stash)
    std::vector<std::unique_ptr<port_rt>> ports;
    std::unique_ptr<dpdk::route_table> routes;
    std::uint32_t ecmp_seed = 0;
    std::uint64_t all_ports_mask = 0;
    std::unique_ptr<mmu> buf;  // ingress buffer accounting (BUFFER_POOL); null = off
    // ICMP errors (ROCELAB icmp_errors / icmp_rate): GCRA, one per interval, burst 50.
    bool icmp_on = true;
    std::int64_t icmp_interval = 1'000'000;
    std::int64_t icmp_tau = 49'000'000;
    std::vector<neigh_cfg> static_neigh;  // for the listing
    std::vector<std::unique_ptr<worker_rt>> workers;
    std::vector<std::unique_ptr<worker_view>> views;
    bool multi = false;  // more than one worker
    std::size_t event_rr = 0;
    // One worker (virtual time, one lcore): only the egress ports with work
    // are visited. eg_active: a bit per port that may have work now (frames
    // queued or staged, a PFC frame to send, a PG that crossed XOFF/XON,
    // received PFC); eg_timers: for each other port, when it next has work of
    // its own (PFC refresh, watchdog, shaper, a pause ending). A port leaves
    // the active set after its egress step when it has nothing due, and
    // every place that can give it work marks it again (mark_egress). The
    // visit order stays the port order, so a run is the same as visiting
    // every port. With several workers every port is visited, as before.
    // On when the port I/O flags RX (port_io::rx_pending: virtual time) and
    // one worker runs: lcores on real ports keep visiting every port.
    bool track = false;
    std::vector<std::uint64_t> eg_active;
    timer_heap eg_timers;
    std::uint32_t link_seq = 0;   // set_link bumps it (relaxed atomic): every port is visited once
    std::uint32_t link_seen = 0;
};

namespace {

// A port may have egress work (see impl::eg_active).
[[gnu::always_inline]] inline void mark_egress(switch_pipeline::impl& p, std::size_t port) noexcept {
    if (p.track) { p.eg_active[port >> 6] |= std::uint64_t{1} << (port & 63); }
}
std::uint32_t flush_queue(switch_pipeline::impl& p, worker_rt& w, port_rt& eg, int q) noexcept;
}  // namespace

switch_pipeline::switch_pipeline(std::unique_ptr<impl> p) noexcept : _p(std::move(p)) {}
switch_pipeline::~switch_pipeline() { release_all(); }

std::variant<std::unique_ptr<switch_pipeline>, std::string> switch_pipeline::create(
    const switch_cfg& cfg, const std::vector<port_binding>& ports, rte_mempool* pool, unsigned workers,
    const std::vector<unsigned>& port_worker) {
    if (ports.empty()) { return std::string("no ports: give --vdev=... or bind a NIC to DPDK"); }
    if (workers == 0) { workers = 1; }
    if (workers > ports.size()) {
        return "workers: " + std::to_string(workers) + " worker lcores for " + std::to_string(ports.size()) +
               " ports; each worker owns at least one port (give at most " + std::to_string(ports.size()) +
               " worker lcores)";
    }
    if (workers > 64) { return std::string("workers: at most 64 worker lcores"); }
    if (!port_worker.empty() && port_worker.size() != ports.size()) {
        return "port-worker map: " + std::to_string(port_worker.size()) + " entries for " +
               std::to_string(ports.size()) + " ports";
    }
    if (ports.size() > 64) { return std::string("at most 64 ports per switch"); }
    if (cfg.ports.size() != ports.size()) {
        return std::string("internal: port config and bindings differ in count");
    }
    auto p = std::make_unique<impl>();
    {
        auto off = dpdk::frame_meta_offset(sizeof(frame_meta), alignof(frame_meta));
        if (auto* e = std::get_if<std::string>(&off)) { return *e; }
        p->link = mbuf_link{std::get<int>(off)};
    }
    p->mode = cfg.mode;
    p->burst = std::clamp<std::uint16_t>(cfg.burst, 1, max_burst);
    p->max_frame = cfg.max_frame;
    p->pool = pool;
    p->ecmp_seed = static_cast<std::uint32_t>(cfg.seed * 0x9E3779B1u);
    p->wred_at_enqueue = cfg.wred_at_enqueue;
    p->icmp_on = cfg.icmp_errors && cfg.mode == fwd_mode::l3;
    p->icmp_interval = 1'000'000'000 / std::max<std::int64_t>(1, cfg.icmp_rate);
    p->icmp_tau = 49 * p->icmp_interval;
    for (std::size_t i = 0; i < ports.size(); ++i) {
        p->ports.push_back(std::make_unique<port_rt>(cfg.ports[i], ports[i], static_cast<std::uint16_t>(i), p->link));
        p->ports.back()->wred_rng.reseed(cfg.seed * 0x9E3779B97F4A7C15ULL + i);
        p->all_ports_mask |= 1ULL << i;
        const unsigned ow = port_worker.empty() ? static_cast<unsigned>(i % workers) : port_worker[i];
        if (ow >= workers) {
            return "port-worker map: port " + ports[i].name + " to worker " + std::to_string(ow) + ", accepted range 0.." +
                   std::to_string(workers - 1);
        }
        p->ports.back()->owner = static_cast<std::uint16_t>(ow);
    }
    p->multi = workers > 1;
    p->track = !p->multi && std::all_of(ports.begin(), ports.end(),
                                        [](const dpdk::port_binding& b) { return b.io.rx_pending != nullptr; });
    p->eg_active.assign((ports.size() + 63) / 64, 0);
    for (std::size_t i = 0; i < ports.size(); ++i) { p->eg_active[i >> 6] |= std::uint64_t{1} << (i & 63); }
    p->eg_timers.reserve(ports.size());
    for (unsigned k = 0; k < workers; ++k) {
        auto w = std::make_unique<worker_rt>();
        w->id = static_cast<std::uint16_t>(k);
        for (std::size_t i = 0; i < ports.size(); ++i) {
            if (p->ports[i]->owner == k) { w->ports.push_back(static_cast<std::uint16_t>(i)); }
        }
        if (w->ports.empty()) { return "port-worker map: worker " + std::to_string(k) + " owns no port"; }
        w->c.resize(ports.size());
        w->table = std::make_unique<fdb>(64 * 1024, cfg.fdb_aging);
        if (workers > 1) {
            w->peers.resize(workers);
            for (unsigned j = 0; j < workers; ++j) {
                if (j == k) { continue; }
                auto& pr = w->peers[j];
                pr.frames = std::make_unique<spsc_queue<handoff, worker_rt::handoff_slots>>();
                pr.credits = std::make_unique<spsc_queue<credit, worker_rt::credit_slots>>();
                pr.learns = std::make_unique<spsc_queue<learn_msg, worker_rt::learn_slots>>();
            }
            w->owed.assign(ports.size() * 8, 0);
            w->owed_list.reserve(ports.size() * 8);
        }
        p->workers.push_back(std::move(w));
        auto v = std::make_unique<worker_view>();
        p->views.push_back(std::move(v));
    }
    // A port without an address of a family answers with the switch's first one.
    for (auto& a : p->ports) {
        for (auto& b : p->ports) {
            if (!a->has_src4 && b->has_src4) {
                a->icmp_src4 = b->icmp_src4;
                a->has_src4 = true;
            }
            if (!a->has_src6 && b->has_src6) {
                a->icmp_src6 = b->icmp_src6;
                a->has_src6 = true;
            }
        }
    }
    if (cfg.pool.enabled) {
        std::vector<std::array<pg_buffer_cfg, 8>> pgs;
        for (const auto& pc : cfg.ports) { pgs.push_back(pc.pgs); }
        const std::string err = mmu::validate(cfg.pool, static_cast<int>(pgs.size()), pgs);
        if (!err.empty()) { return "BUFFER_POOL: " + err; }
        p->buf = std::make_unique<mmu>(cfg.pool, static_cast<int>(pgs.size()), pgs);
        std::vector<std::uint16_t> owners;
        for (const auto& pr : p->ports) { owners.push_back(pr->owner); }
        p->buf->set_workers(owners, workers);
        // Lossless traffic is limited by ingress accounting (XOFF before the
        // headroom runs out), never by egress tail drop: lift the egress limits
        // of every queue a lossless PG's traffic class maps to. The queues are
        // linked through the frames, so a lifted queue holds whatever the
        // buffer admitted (docs/architecture.md, "Lossless containers").
        for (auto& eg : p->ports) {
            for (const auto& pc : cfg.ports) {
                for (int tc = 0; tc < 8; ++tc) {
                    if (pc.pgs[pc.maps.tc_to_pg[tc]].lossless()) {
                        eg->eq.set_limits(eg->maps.tc_to_queue[tc], queue_limits{bytes{~0ULL >> 1}, ~0u});
                    }
                }
            }
        }
    }
    if (cfg.mode == fwd_mode::l3) {
        std::vector<route_port> rports;
        for (std::size_t i = 0; i < ports.size(); ++i) {
            rports.push_back(route_port{cfg.ports[i].name, cfg.ports[i].addresses, ports[i].mac, ports[i].port_id});
        }
        auto rt = dpdk::route_table::build(route_sources{rports, cfg.neighbors, cfg.routes, cfg.neigh.dynamic});
        if (auto* e = std::get_if<std::string>(&rt)) { return *e; }
        p->routes = std::make_unique<dpdk::route_table>(std::move(std::get<dpdk::route_table>(rt)));
        p->static_neigh = cfg.neighbors;
        if (cfg.neigh.dynamic) {
            neigh_params np;
            np.capacity = cfg.neigh.max;
            np.reachable = cfg.neigh.reachable;
            np.retrans = cfg.neigh.retrans;
            np.probes = cfg.neigh.probes;
            np.gc = cfg.neigh.gc;
            np.queue = cfg.neigh.queue;
            // poll_neigh() runs every neigh_poll_interval (1 ms): a whole
            // sweep of the slots in at most 64 ms, well inside retrans (>= 10 ms
            // is the configurable minimum; the sweep bounds timer precision).
            np.scan = std::max<std::size_t>(64, std::bit_ceil(std::max<std::size_t>(2 * np.capacity, 8)) / 64);
            // One table per worker, for the neighbours behind its own ports
            // (neigh_max each).
            for (auto& w : p->workers) { w->neigh = std::make_unique<neigh_table<held_frame>>(np); }
        }
    }
    auto sp = std::unique_ptr<switch_pipeline>(new switch_pipeline(std::move(p)));
    for (std::size_t k = 0; k < sp->_p->views.size(); ++k) {
        sp->_p->views[k]->pipe = sp.get();
        sp->_p->views[k]->id = static_cast<std::uint16_t>(k);
    }
    return sp;
}

std::size_t switch_pipeline::port_count() const noexcept { return _p->ports.size(); }
const port_binding& switch_pipeline::binding(std::size_t i) const noexcept { return _p->ports[i]->b; }
port_counters switch_pipeline::counters(std::size_t i) const noexcept {
    // Every field is a uint64_t: sum them as such, each read relaxed.
    static_assert(sizeof(port_counters) % sizeof(std::uint64_t) == 0);
    constexpr std::size_t nw = sizeof(port_counters) / sizeof(std::uint64_t);
    port_counters out;
    auto* o = reinterpret_cast<std::uint64_t*>(&out);
    for (const auto& w : _p->workers) {
        const auto* c = reinterpret_cast<const std::uint64_t*>(&w->c[i]);
        for (std::size_t k = 0; k < nw; ++k) { o[k] += read_counter(c[k]); }
    }
    return out;
}
std::size_t switch_pipeline::fdb_size() const noexcept { return _p->workers[0]->table->size(); }
std::size_t switch_pipeline::worker_count() const noexcept { return _p->workers.size(); }
switch_pipeline::worker_view& switch_pipeline::worker(std::size_t k) noexcept { return *_p->views[k]; }
const switch_pipeline::worker_view& switch_pipeline::worker(std::size_t k) const noexcept { return *_p->views[k]; }
std::uint16_t switch_pipeline::port_worker(std::size_t port) const noexcept { return _p->ports[port]->owner; }
switch_pipeline::worker_view switch_pipeline::poll_totals() const noexcept { return poll_totals_of(*this, _p->views); }

worker_stats switch_pipeline::worker_figures(std::size_t k) const noexcept {
    const worker_stats& s = _p->workers[k]->st;
    worker_stats o;
    o.handed_out = read_counter(s.handed_out);
    o.handed_in = read_counter(s.handed_in);
    o.stashed = read_counter(s.stashed);
    o.credits_out = read_counter(s.credits_out);
    o.learns_out = read_counter(s.learns_out);
    o.learns_lost = read_counter(s.learns_lost);
    return o;
}
fwd_mode switch_pipeline::mode() const noexcept { return _p->mode; }

queue_snapshot switch_pipeline::queue(std::size_t port, int q) const noexcept {
    const auto& pr = *_p->ports[port];
    const auto& st = pr.eq.stats(q);
    queue_snapshot s;
    s.depth_bytes = read_counter(pr.eq.depth_bytes(q).v);
    s.depth_packets = pr.eq.depth_packets(q);
    s.max_depth_bytes = read_counter(st.depth_max_bytes);
    s.max_depth_packets = static_cast<std::uint32_t>(read_counter(st.depth_max_packets));
    s.enq_packets = read_counter(st.enq_packets);
    s.enq_bytes = read_counter(st.enq_bytes);
    s.deq_packets = read_counter(st.deq_packets);
    s.deq_bytes = read_counter(st.deq_bytes);
    s.drop_packets = read_counter(st.drop_tail_packets);
    s.drop_bytes = read_counter(st.drop_tail_bytes);
    s.flushed_packets = read_counter(st.drop_flush_packets);
    s.flushed_bytes = read_counter(st.drop_flush_bytes);
    const port_counters c = counters(port);
    s.ecn_marked = c.ecn_marked[q];
    s.wred_dropped = c.wred_dropped[q];
    s.wred = (pr.wred_mask >> q & 1u) != 0;
    s.wred_kmin = pr.wred[q].kmin.v;
    s.wred_kmax = pr.wred[q].kmax.v;
    return s;
}

std::uint64_t switch_pipeline::queued_bytes(std::size_t port, int q) const noexcept {
    return _p->ports[port]->eq.depth_bytes(q).v;
}

std::uint8_t switch_pipeline::paused_queues(std::size_t port, nanos now) const noexcept {
    const auto& pr = *_p->ports[port];
    // paused_mask() settles expired timers; reading from another thread
    // must not do that, so compare the deadlines directly.
    std::uint8_t prio = 0;
    for (int i = 0; i < 8; ++i) {
        if (pr.pause.paused_until(i) > now) { prio |= static_cast<std::uint8_t>(1u << i); }
    }
    return pfc_paused_queues(prio, pr.maps.pfc_prio_to_queue);
}

bool switch_pipeline::buffer_accounting() const noexcept { return _p->buf != nullptr; }

pg_status switch_pipeline::pg(std::size_t port, int pgi) const noexcept {
    pg_status st;
    if (!_p->buf) { return st; }
    const pg_snapshot s = _p->buf->snapshot(static_cast<int>(port), pgi);
    st.lossless = s.lossless;
    st.xoff = s.xoff;
    st.use = s.reserved_use + s.shared_use + s.headroom_use;
    st.headroom = s.headroom_use;
    st.threshold = s.threshold;
    st.peak_use = s.counters.peak_use;
    st.peak_headroom = s.counters.peak_headroom;
    st.drop_lossy = s.counters.drop_lossy;
    st.drop_headroom_overflow = s.counters.drop_headroom_overflow;
    st.xoff_transitions = s.counters.xoff_transitions;
    return st;
}

std::uint64_t switch_pipeline::pg_use(std::size_t port, int pgi) const noexcept {
    return _p->buf ? _p->buf->use(static_cast<int>(port), pgi) : 0;
}
std::uint64_t switch_pipeline::pg_guaranteed(std::size_t port, int pgi) const noexcept {
    return _p->buf ? _p->buf->guaranteed(static_cast<int>(port), pgi) : 0;
}
std::uint32_t switch_pipeline::buffer_cell() const noexcept { return _p->buf ? _p->buf->cell() : 0; }
bool switch_pipeline::shared_headroom_pool() const noexcept { return _p->buf && _p->buf->shared_headroom(); }

std::uint64_t switch_pipeline::pfc_frames_sent(std::size_t port) const noexcept {
    std::uint64_t n = 0;
    for (const auto& w : _p->workers) { n += read_counter(w->c[port].tx_pfc_frames); }
    return n;
}

pfc_status switch_pipeline::pfc(std::size_t port, nanos now) const noexcept {
    const port_rt& pr = *_p->ports[port];
    const port_counters c = counters(port);
    pfc_status st;
    for (int i = 0; i < 8; ++i) {
        st.rx_frames[i] = c.rx_pfc_prio[i];
        st.paused_ns[i] = pr.pause.paused_time(i, now).v;
        if (pr.pause.paused_until(i) > now) { st.paused_prios |= static_cast<std::uint8_t>(1u << i); }
        st.xoff_sent[i] = read_counter(pr.pfc_gen.stats().xoff_sent[i]);
        st.xon_sent[i] = read_counter(pr.pfc_gen.stats().xon_sent[i]);
        st.asserted_ns[i] = pr.pfc_gen.asserted_time(i, now).v;
        if (pr.wd[i]) {
            st.wd_enabled[i] = true;
            st.wd_stormed[i] = pr.wd[i]->stormed();
            st.wd_storms[i] = pr.wd[i]->stats().storms_detected;
            st.wd_restores[i] = pr.wd[i]->stats().storms_restored;
            st.wd_tx_dropped[i] = pr.wd[i]->stats().tx_dropped;
            st.wd_rx_dropped[i] = pr.wd[i]->stats().rx_dropped;
        }
    }
    st.frames_sent = c.tx_pfc_frames;
    return st;
}

std::uint64_t switch_pipeline::pool_shared_used() const noexcept { return _p->buf ? _p->buf->pool().shared_used : 0; }
std::uint64_t switch_pipeline::pool_shared_size() const noexcept { return _p->buf ? _p->buf->pool().shared_size : 0; }
switch_pipeline::pool_figures switch_pipeline::buffer_pool() const noexcept {
    if (!_p->buf) { return {}; }
    const pool_snapshot ps = _p->buf->pool();
    return pool_figures{ps.size, ps.shared_size, ps.shared_used, ps.peak_shared_used};
}
bool switch_pipeline::pop_event(switch_event& e) noexcept {
    const std::size_t n = _p->workers.size();
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = (_p->event_rr + i) % n;
        if (_p->workers[k]->events.pop(e)) {
            _p->event_rr = k + 1;
            return true;
        }
    }
    return false;
}

void switch_pipeline::set_link(std::size_t port, bool up) noexcept {
    __atomic_store_n(&_p->ports[port]->link_req, static_cast<std::uint8_t>(up ? 1 : 0), __ATOMIC_RELAXED);
    __atomic_fetch_add(&_p->link_seq, 1u, __ATOMIC_RELEASE);
}

bool switch_pipeline::link_up(std::size_t port) const noexcept {
    return !__atomic_load_n(&_p->ports[port]->link_down, __ATOMIC_RELAXED);
}

std::size_t switch_pipeline::poll_link_states() noexcept {
    std::size_t changed = 0;
    for (auto& pp : _p->ports) {
        port_rt& pr = *pp;
        if (pr.b.io.ops != nullptr) { continue; }  // not an ethdev (virtual time)
        rte_eth_link l{};
        if (rte_eth_link_get_nowait(pr.b.port_id, &l) != 0) { continue; }
        const bool up = l.link_status == RTE_ETH_LINK_UP;
        if (up) { pr.seen_up = true; }
        if (!pr.seen_up) { continue; }  // never connected yet: taken as up
        const bool was = __atomic_load_n(&pr.link_req, __ATOMIC_RELAXED) != 0;
        if (was != up) {
            set_link(pr.idx, up);
            ++changed;
        }
    }
    return changed;
}

bool switch_pipeline::neigh_dynamic() const noexcept { return _p->workers[0]->neigh != nullptr; }

neigh_stats switch_pipeline::neigh_totals() const noexcept {
    neigh_stats t;
    for (const auto& w : _p->workers) {
        if (!w->neigh) { continue; }
        const neigh_stats s = w->neigh->stats();
        t.created += s.created;
        t.learned += s.learned;
        t.updated_mac += s.updated_mac;
        t.resolved += s.resolved;
        t.failed += s.failed;
        t.aged += s.aged;
        t.requests += s.requests;
        t.held += s.held;
        t.released += s.released;
        t.dropped_queue_full += s.dropped_queue_full;
        t.dropped_table_full += s.dropped_table_full;
        t.dropped_unresolved += s.dropped_unresolved;
    }
    return t;
}

std::vector<neigh_row> switch_pipeline::neighbors(nanos now) const {
    std::vector<neigh_row> out;
    for (const neigh_cfg& n : _p->static_neigh) {
        neigh_row r;
        r.v6 = n.addr.v6;
        std::memcpy(r.addr.data(), n.addr.addr.data(), 16);
        for (std::size_t i = 0; i < _p->ports.size(); ++i) {
            if (_p->ports[i]->b.name == n.ifname) { r.port = static_cast<std::uint16_t>(i); }
        }
        r.mac = n.mac;
        r.state = "permanent";
        out.push_back(r);
    }
    for (const auto& w : _p->workers) {
        if (!w->neigh) { continue; }
        w->neigh->for_each([&](const neigh_table<held_frame>::entry& e) {
            neigh_row r;
            r.v6 = e.key.v6;
            r.addr = e.key.addr;
            r.port = e.port;
            r.mac = e.mac;
            neigh_state st = e.state;
            if (st == neigh_state::reachable && now.v - e.confirmed_ns >= w->neigh->params().reachable.v) {
                st = neigh_state::stale;
            }
            r.state = to_string(st);
            r.confirmed_ago_ns = e.state == neigh_state::incomplete ? -1 : now.v - e.confirmed_ns;
            r.hits = e.hits;
            r.waiting = e.n_held;
            out.push_back(r);
        });
    }
    return out;
}

nanos switch_pipeline::paused_time(std::size_t port, int prio, nanos now) const noexcept {
    return _p->ports[port]->pause.paused_time(prio, now);
}

// release_all() is defined at the end of the file (it drains the workers' queues).

namespace {

// ---- several workers: ownership, buffer releases, handoff staging ----

// Release `bytes` charged to the (port, PG) in `tag`: here when this worker
// owns that ingress port, else owed to its owner (sent back at the end of
// the poll as one credit per (port, PG)).
inline void release_tag(switch_pipeline::impl& p, worker_rt& w, std::uint32_t tag, std::uint64_t bytes) noexcept {
    if (!p.buf || !tag_charged(tag) || bytes == 0) { return; }
    const int port = tag_port(tag);
    if (p.ports[static_cast<std::size_t>(port)]->owner == w.id) [[likely]] {
        p.buf->release(port, tag_pg(tag), charge{static_cast<std::uint32_t>(bytes)});
        mark_egress(p, static_cast<std::size_t>(port));  // its PGs may leave XOFF
        return;
    }
    const std::size_t i = static_cast<std::size_t>(port) * 8 + static_cast<std::size_t>(tag_pg(tag));
    if (w.owed[i] == 0) { w.owed_list.push_back(static_cast<std::uint16_t>(i)); }
    w.owed[i] += bytes;
}

// Send what is owed to the ingress ports' owners (end of every poll). What
// does not fit stays owed: a release is never lost, only later.
void send_credits(switch_pipeline::impl& p, worker_rt& w) noexcept {
    std::size_t keep = 0;
    for (std::size_t k = 0; k < w.owed_list.size(); ++k) {
        const std::uint16_t i = w.owed_list[k];
        const std::size_t port = i / 8;
        std::uint64_t& b = w.owed[i];
        auto& q = *w.peers[p.ports[port]->owner].credits;
        while (b != 0) {
            const std::uint64_t part = std::min<std::uint64_t>(b, 0x7FFFFFFFu);
            if (!q.push(credit{acct_tag(static_cast<std::uint16_t>(port), static_cast<std::uint8_t>(i % 8)),
                               static_cast<std::uint32_t>(part)})) {
                break;
            }
            b -= part;
            ++w.st.credits_out;
        }
        if (b != 0) { w.owed_list[keep++] = i; }
    }
    w.owed_list.resize(keep);
}

// Does a frame with this tag belong to a lossless PG (charged to it, or a
// flood copy of a frame charged to it)? Such a frame leaves only by
// transmission, link down or the PFC watchdog: it is never dropped for a
// full handoff queue (it waits in the stash) nor by WRED.
inline bool tag_lossless(const switch_pipeline::impl& p, std::uint32_t tag) noexcept {
    return p.buf && (tag & tag_none) == 0 && p.buf->lossless(tag_port(tag), tag_pg(tag));
}
inline bool handoff_lossless(const switch_pipeline::impl& p, const handoff& h) noexcept { return tag_lossless(p, h.tag); }

// A lossy frame the full handoff queue did not take (lossless ones wait in the stash).
void handoff_refused(switch_pipeline::impl& p, worker_rt& w, const handoff& h) noexcept {
    w.c[h.port].drop(drop_reason::handoff_full);
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    rte_pktmbuf_free(h.m);
}

// A handoff record kept in the frame itself while it waits in the stash.
inline void stash_push(switch_pipeline::impl& p, frame_fifo& stash, const handoff& h) noexcept {
    frame_meta& fm = p.link.meta(h.m);
    fm.q.len = h.aux;
    fm.q.tag = h.tag;
    fm.port = h.port;
    fm.in = h.in;
    fm.tc = h.tc;
    fm.kind = static_cast<std::uint8_t>(h.kind);
    fm.flags = h.flags;
    stash.push(p.link, h.m);
}
inline handoff stash_peek(const switch_pipeline::impl& p, rte_mbuf* m) noexcept {
    const frame_meta& fm = p.link.meta(m);
    handoff h;
    h.m = m;
    h.tag = fm.q.tag;
    h.aux = fm.q.len;
    h.port = fm.port;
    h.in = fm.in;
    h.tc = fm.tc;
    h.kind = static_cast<handoff_kind>(fm.kind);
    h.flags = fm.flags;
    return h;
}

// Push the frames staged for worker `to`. A full queue: lossless frames wait
// in the stash (in order, ahead of later lossless frames), others are
// dropped by name (drop_handoff_full on the egress port). Everything moves
// in bursts (a push that finds the queue full reads the consumer's index,
// another core's cache line: once per burst, not per frame).
void flush_stage(switch_pipeline::impl& p, worker_rt& w, std::size_t to) noexcept {
    worker_rt::peer& pr = w.peers[to];
    auto& q = *pr.frames;
    frame_fifo& stash = pr.stash;
    handoff tmp[worker_rt::stage_max];
    while (!stash.empty()) {  // the oldest waiting lossless frames first
        const std::size_t m = std::min<std::size_t>(stash.size(), worker_rt::stage_max);
        rte_mbuf* x = stash.front();
        rte_mbuf* after[worker_rt::stage_max];  // each frame's successor, read while it is still ours
        for (std::size_t i = 0; i < m; ++i) {
            tmp[i] = stash_peek(p, x);
            x = p.link.node(x).next;
            after[i] = x;
        }
        const std::size_t k = q.push_burst(tmp, m);
        // The k frames pushed belong to the consumer now: its worker may be
        // linking them into an egress queue already, so their links are not
        // read again here.
        if (k != 0) { stash.drop_front(static_cast<std::uint32_t>(k), after[k - 1]); }
        if (k < m) { break; }
    }
    const std::size_t n = pr.n_stage;
    pr.n_stage = 0;
    if (n == 0) { return; }
    std::size_t k = 0;
    if (stash.empty()) {
        k = q.push_burst(pr.stage.data(), n);
        w.st.handed_out += k;
        if (k == n) [[likely]] { return; }
    }
    // What did not fit: lossless frames join the stash (behind the ones
    // already waiting), lossy ones get one more try, then are dropped.
    std::size_t nl = 0;
    for (std::size_t i = k; i < n; ++i) {
        const handoff& h = pr.stage[i];
        if (!handoff_lossless(p, h)) {
            tmp[nl++] = h;
        } else {
            stash_push(p, stash, h);
            ++w.st.stashed;
            ++w.st.handed_out;
        }
    }
    const std::size_t kl = nl != 0 ? q.push_burst(tmp, nl) : 0;
    w.st.handed_out += kl;
    for (std::size_t i = kl; i < nl; ++i) { handoff_refused(p, w, tmp[i]); }
}

inline void stage(switch_pipeline::impl& p, worker_rt& w, std::uint16_t to, const handoff& h) noexcept {
    worker_rt::peer& pr = w.peers[to];
    pr.stage[pr.n_stage++] = h;
    if (pr.n_stage == worker_rt::stage_max) { flush_stage(p, w, to); }
}

// Charge a frame of `xlen` bytes and traffic class tc to its ingress PG
// (in's, owned by this worker): its acct_tag, or nothing when the ingress
// buffer refused it (counted on in: lossy limit or headroom overflow; freed).
[[gnu::always_inline]] inline std::optional<std::uint32_t> charge_ingress(switch_pipeline::impl& p, worker_rt& w,
                                                                          port_rt& in, rte_mbuf* x, std::uint8_t tc,
                                                                          std::uint32_t xlen) noexcept {
    const std::uint8_t pg = in.maps.tc_to_pg[tc];
    const admit_result r = p.buf->admit(in.idx, pg, xlen);
    mark_egress(p, in.idx);  // its PGs may enter XOFF
    if (!r.ok()) [[unlikely]] {
        w.c[in.idx].drop(r.verdict == admit_verdict::drop_lossy ? drop_reason::lossy_pg_limit
                                                                : drop_reason::headroom_overflow);
        rte_pktmbuf_free(x);
        return std::nullopt;
    }
    return acct_tag(in.idx, pg);
}

// A frame for a port another worker owns: rewritten for that port (VLAN),
// charged to its ingress PG here (unless `charged` is false: a flood copy),
// and staged for the owner. False only when the ingress buffer refused it.
[[gnu::noinline]] bool handoff_out(switch_pipeline::impl& p, worker_rt& w, port_rt& in, port_rt& eg, rte_mbuf* x,
                                   std::uint8_t tc, bool tagged, bool charged, handoff_kind kind = handoff_kind::enqueue,
                                   std::uint32_t aux = 0, std::uint8_t flags = 0) noexcept {
    if (__atomic_load_n(&eg.link_down, __ATOMIC_RELAXED)) {
        w.c[eg.idx].drop(drop_reason::link_down);
        rte_pktmbuf_free(x);
        return true;
    }
    const std::uint32_t before = rte_pktmbuf_pkt_len(x);
    if (eg.vmode == vlan_mode::tagged) {
        if (!vlan_set(x, tagged, tc, eg.vid)) {
            w.c[eg.idx].drop(drop_reason::flood_nombuf);
            rte_pktmbuf_free(x);
            return true;
        }
        flags |= hf_tagged;
    } else if (tagged) {
        vlan_strip(x);
    }
    const std::uint32_t xlen = rte_pktmbuf_pkt_len(x);
    if (kind == handoff_kind::resolve && (aux & aux_dynhop) == 0) { aux = aux + xlen - before; }  // tag in/out
    std::uint32_t tag = 0;
    if (kind == handoff_kind::resolve) {
        tag = tag_handed;  // not admitted while it waits for its neighbour: charged once resolved
    } else if (p.buf) {
        tag = tag_uncharged | acct_tag(in.idx, in.maps.tc_to_pg[tc]);
        if (charged) {
            const auto t = charge_ingress(p, w, in, x, tc, xlen);
            if (!t) [[unlikely]] { return false; }
            tag = *t;
        }
    }
    handoff h;
    h.m = x;
    h.tag = tag;
    h.aux = aux;
    h.port = eg.idx;
    h.in = in.idx;
    h.tc = tc;
    h.kind = kind;
    h.flags = flags;
    stage(p, w, eg.owner, h);
    return true;
}

// Handle a consumed MAC Control frame (PAUSE or PFC).
inline void on_mac_control(worker_rt& w, port_rt& in, const parsed_frame& pf, const std::byte* d, nanos now) noexcept {
    ++w.c[in.idx].rx_mac_control;
    const mac_control_cview v(d + pf.l3_off);  // body (opcode) follows the EtherType
    if (pf.mac_control_opcode == mac_control_op_pfc) {
        ++w.c[in.idx].rx_pfc;
        const std::uint8_t cev = v.class_enable();
        const std::uint8_t honoured = cev & in.pfc_enable;
        if ((cev & ~in.pfc_enable) != 0) { w.c[in.idx].drop(drop_reason::pfc_disabled_prio); }
        for (int i = 0; i < 8; ++i) {
            if ((honoured >> i & 1u) != 0) { ++w.c[in.idx].rx_pfc_prio[i]; }
        }
        if (honoured != 0) { in.pause.on_pfc(now, honoured, v.pfc_times(), in.b.line_rate); }
    } else if (pf.mac_control_opcode == mac_control_op_pause) {
        ++w.c[in.idx].rx_pause;
        in.pause.on_pause(now, v.pause_time(), in.b.line_rate);
    }
}

}  // namespace

namespace {

// An ICMP/ICMPv6 error (fwd/icmp_error.hpp) for a datagram the router
// drops, made in place of it and sent back out of the ingress port to the
// previous hop. False (nothing sent) when errors are off, over the rate,
// forbidden for this datagram (an ICMP error, multicast, ...), the port has
// no address of the family, or the frame spans several segments.
[[gnu::noinline]] bool icmp_error(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                  icmp_error_kind k, nanos now) noexcept {
    const bool v4 = f.kind == frame_kind::ipv4;
    if (!p.icmp_on || m->nb_segs != 1 || !(v4 ? in.has_src4 : in.has_src6)) { return false; }
    if (now.v < w.icmp_tat - p.icmp_tau) {
        ++w.c[in.idx].icmp_ratelimited;
        return false;
    }
    std::byte* d = data(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const std::uint32_t cap = len + rte_pktmbuf_tailroom(m);
    const std::uint32_t n = v4 ? make_icmp4_error(d, len, cap, f.l3_off, k, in.b.mac.data(), in.icmp_src4)
                               : make_icmp6_error(d, len, cap, f.l3_off, k, in.b.mac.data(), in.icmp_src6.data());
    if (n == 0) { return false; }
    w.icmp_tat = std::max(w.icmp_tat, now.v) + p.icmp_interval;
    m->data_len = static_cast<std::uint16_t>(n);
    m->pkt_len = n;
    ++w.c[in.idx].icmp_errors;
    return true;
}

using neigh_entry = neigh_table<held_frame>::entry;
constexpr nanos neigh_poll_interval{1'000'000};

// A frame that waited for its neighbour, forwarded now that it answered
// (defined below admit()).
void release_held(switch_pipeline::impl& p, worker_rt& w, const held_frame& h, const mac_addr& mac, std::uint16_t port) noexcept;
void unresolved_held(switch_pipeline::impl& p, worker_rt& w, const held_frame& h, nanos now) noexcept;

// A frame that waited for a neighbour and is dropped (failed resolution,
// shutdown): counted on its ingress port.
void drop_held(switch_pipeline::impl& p, worker_rt& w, const held_frame& h, drop_reason why) noexcept {
    w.c[h.in].drop(why);
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    rte_pktmbuf_free(h.m);
}

// Our address on `port` in the subnet of `k` (the source of a request);
// false if the port has none (then nothing is sent).
bool neigh_source(const switch_pipeline::impl& p, std::uint16_t port, const neigh_key& k, std::uint8_t* out16) noexcept {
    const local_addrs& l = p.routes->locals();
    if (!k.v6) {
        const std::uint32_t a = k.v4_host();
        for (const local_v4& x : l.v4()) {
            const std::uint32_t mask = x.len == 0 ? 0 : ~0u << (32 - x.len);
            if (x.port == port && (x.addr & mask) == (a & mask)) {
                store_be32(reinterpret_cast<std::byte*>(out16), x.addr);
                return true;
            }
        }
        return false;
    }
    for (const local_v6& x : l.v6()) {
        if (x.port != port) { continue; }
        bool same = true;
        for (int b = 0; b < x.len && same; b += 8) {
            const int bits = std::min(8, x.len - b);
            const auto m = static_cast<std::uint8_t>(0xFFu << (8 - bits));
            same = ((x.addr[b / 8] ^ k.addr[b / 8]) & m) == 0;
        }
        if (same) {
            std::memcpy(out16, x.addr.data(), 16);
            return true;
        }
    }
    return false;
}

// Send an ARP request / Neighbor Solicitation for e on its port, queued
// (uncharged) ahead of data in the queue of traffic class 7.
[[gnu::noinline]] void send_neigh_request(switch_pipeline::impl& p, worker_rt& w, const neigh_entry& e, neigh_request kind) noexcept {
    port_rt& eg = *p.ports[e.port];
    std::uint8_t src[16];
    if (eg.link_down || !neigh_source(p, e.port, e.key, src)) { return; }
    rte_mbuf* m = rte_pktmbuf_alloc(p.pool);
    if (m == nullptr) { return; }  // retried at the next retransmission
    const std::size_t len = e.key.v6 ? ns_frame_len : nd_min_frame;
    auto* d = reinterpret_cast<std::byte*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(len)));
    if (d == nullptr) {
        rte_pktmbuf_free(m);
        return;
    }
    const mac_addr* to = kind == neigh_request::unicast ? &e.mac : nullptr;
    if (e.key.v6) {
        nd_make_solicit(d, eg.b.mac, src, e.key.addr.data(), to);
        ++w.c[eg.idx].nd_solicits;
    } else {
        arp_make_request(d, eg.b.mac, load_be32(reinterpret_cast<const std::byte*>(src)), e.key.v4_host(), to);
        ++w.c[eg.idx].arp_requests;
    }
    if (eg.vmode == vlan_mode::tagged && !vlan_set(m, false, 7, eg.vid)) {
        rte_pktmbuf_free(m);
        return;
    }
    const int q = eg.maps.tc_to_queue[7];
    mark_egress(p, eg.idx);
    if (!eg.eq.enqueue(q, m, rte_pktmbuf_pkt_len(m), p.buf ? tag_made : 0u)) {
        w.c[eg.idx].drop(drop_reason::tail_drop);
        rte_pktmbuf_free(m);
    }
}

// A routed frame whose next hop (the destination host on a connected
// subnet, or a dynamic route next hop) is resolved by ARP/ND: forwarded with
// the neighbour's MAC, parked while it is resolved, or dropped by name.
// The TTL has been checked and decremented.
// (On the worker that owns the egress port `port`; a dropped frame's charge,
// if it has one, is released, and the caller frees it.)
[[gnu::noinline]] std::uint16_t neigh_forward(switch_pipeline::impl& p, worker_rt& w, const held_frame& h,
                                              const neigh_key& k, std::uint16_t port, nanos now) noexcept {
    const auto r = w.neigh->resolve(k, port, now, h);
    if (r.request != neigh_request::none) { send_neigh_request(p, w, *r.e, r.request); }
    switch (r.verdict) {
        case neigh_verdict::forward: {
            std::byte* d = data(h.m);
            std::memcpy(d, r.e->mac.data(), 6);
            std::memcpy(d + 6, p.ports[port]->b.mac.data(), 6);
            return port;
        }
        case neigh_verdict::held:
            ++w.c[h.in].neigh_held;
            return out_held;
        case neigh_verdict::queue_full:
            w.c[h.in].drop(drop_reason::neigh_queue_full);
            break;
        case neigh_verdict::table_full:
            w.c[h.in].drop(drop_reason::neigh_table_full);
            break;
    }
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    return out_drop;
}

// Learn a neighbour from an ARP/ND packet received on `in`: only an address
// in a connected subnet of that port without a static NEIGH entry (those
// win). True if the table holds it now.
bool neigh_learn(switch_pipeline::impl& p, worker_rt& w, port_rt& in, const neigh_key& k, const mac_addr& mac, bool create,
                 nanos now) noexcept {
    if (!w.neigh) { return false; }
    const auto port = p.routes->connected_port(k.addr.data(), k.v6);
    if (!port || *port != in.idx) { return false; }
    const bool ok = w.neigh->learn(k, in.idx, mac, now, create, [&](const held_frame& h, const mac_addr& m, std::uint16_t eg) noexcept {
        ++w.c[h.in].neigh_released;
        release_held(p, w, h, m, eg);
    });
    if (ok) { ++w.c[in.idx].neigh_learned; }
    return ok;
}

// ARP received in L3 mode: learn the sender, answer requests for our
// addresses in place. Returns the egress (the ingress port: a reply), or
// out_consumed / out_drop (counted).
[[gnu::noinline]] std::uint16_t l3_arp(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                       std::uint8_t& tc, nanos now) noexcept {
    std::byte* d = data(m);
    const arp_info a = arp_parse(d, rte_pktmbuf_data_len(m), f.l3_off);
    const bool for_us = a.ok && p.routes->is_local_v4(a.tpa);
    bool learned = false;
    if (a.ok && a.spa != 0 && a.spa != a.tpa) {  // not a probe (sender 0.0.0.0) nor an announcement
        learned = neigh_learn(p, w, in, neigh_key::v4(a.spa), a.sha, for_us && a.oper == wire::arp_op_request, now);
    } else if (a.ok && a.spa == a.tpa && a.spa != 0) {  // gratuitous ARP: update only
        learned = neigh_learn(p, w, in, neigh_key::v4(a.spa), a.sha, false, now);
    }
    if (for_us && a.oper == wire::arp_op_request && arp_make_reply(d, rte_pktmbuf_data_len(m), f.l3_off, in.b.mac.data())) {
        ++w.c[in.idx].arp_replies;
        tc = 7;
        return in.idx;
    }
    if (learned) {  // a reply (or announcement) that told us a neighbour's MAC
        ++w.c[in.idx].neigh_consumed;
        return out_consumed;
    }
    w.c[in.idx].drop(drop_reason::to_switch);
    return out_drop;
}

// IPv6 neighbour discovery received in L3 mode: learn from NS (source
// link-layer option) and NA (target link-layer option), answer NS for our
// addresses in place.
[[gnu::noinline]] std::uint16_t l3_nd(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                      std::uint8_t& tc, nanos now) noexcept {
    std::byte* d = data(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const nd_info nd = nd_parse(d, len, f.l3_off);
    if (nd.ok && nd.type == wire::icmp6_na) {
        const mac_addr mac = nd.has_lladdr ? nd.lladdr : wire::load_mac(d + wire::eth_src);
        if (neigh_learn(p, w, in, neigh_key::v6_from(nd.target), mac, false, now)) {
            ++w.c[in.idx].neigh_consumed;
            return out_consumed;
        }
        w.c[in.idx].drop(drop_reason::to_switch);
        return out_drop;
    }
    const std::uint8_t* target = nd_target(d, f.l3_off);
    const bool for_us = p.routes->is_local_v6(target);
    static constexpr std::uint8_t unspecified[16] = {};
    if (nd.ok && for_us && nd.has_lladdr && std::memcmp(nd.src, unspecified, 16) != 0) {
        (void)neigh_learn(p, w, in, neigh_key::v6_from(nd.src), nd.lladdr, true, now);
    }
    if (for_us && nd_make_advert(d, len, f.l3_off, in.b.mac.data())) {
        const auto na_len = static_cast<std::uint16_t>(nd_na_frame_len(f.l3_off));
        m->data_len = na_len;
        m->pkt_len = na_len;
        ++w.c[in.idx].nd_replies;
        tc = 7;
        return in.idx;
    }
    w.c[in.idx].drop(drop_reason::to_switch);
    return out_drop;
}

// An IP datagram addressed to one of our addresses: ICMP / ICMPv6 echo
// requests are answered in place (from the pinged address, out of the
// ingress port; icmp_echo_replies), anything else is dropped as to_switch
// (there is no stack behind the addresses).
[[gnu::noinline]] std::uint16_t to_us(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                                      std::uint8_t& tc) noexcept {
    const bool v4 = f.kind == frame_kind::ipv4;
    if (f.l4_proto == (v4 ? wire::proto_icmp : wire::proto_icmpv6) && m->nb_segs == 1) {
        std::byte* d = data(m);
        const std::uint32_t len = rte_pktmbuf_data_len(m);
        const std::span<std::byte> fr(d, len + rte_pktmbuf_tailroom(m));
        const std::span<const std::byte> rx(d, len);
        const nd_result r = v4 ? icmp4_echo_reply(rx, f.l3_off, p.routes->locals(), local_addrs::any_port, fr)
                               : icmp6_echo_reply(rx, f.l3_off, p.routes->locals(), local_addrs::any_port, fr);
        if (r.status == nd_status::reply) {
            std::memcpy(d + 6, in.b.mac.data(), 6);  // from the port it came in on
            m->data_len = static_cast<std::uint16_t>(r.len);
            m->pkt_len = static_cast<std::uint32_t>(r.len);
            ++w.c[in.idx].icmp_echo_replies;
            tc = 7;
            return in.idx;
        }
    }
    w.c[in.idx].drop(drop_reason::to_switch);
    return out_drop;
}

// L3 forwarding decision for one parsed frame (ARP/ND answered in place,
// ICMP errors for TTL expiry and no route made in place).
// Returns the egress port index, or out_drop with the reason counted.
std::uint16_t l3_decide(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* m, const parsed_frame& f,
                        std::uint8_t& tc, nanos now) noexcept {
    std::byte* d = data(m);
    const auto* dmac = reinterpret_cast<const std::uint8_t*>(d);
    if (f.kind == frame_kind::arp) { return l3_arp(p, w, in, m, f, tc, now); }
    if (f.kind == frame_kind::ipv6 && nd_is_nd(d, f.l3_off, rte_pktmbuf_data_len(m))) [[unlikely]] {
        return l3_nd(p, w, in, m, f, tc, now);
    }
    if (std::memcmp(dmac, in.b.mac.data(), 6) != 0) {
        w.c[in.idx].drop((dmac[0] & 1u) ? drop_reason::link_local : drop_reason::not_router_mac);
        return out_drop;
    }
    if (f.kind != frame_kind::ipv4 && f.kind != frame_kind::ipv6) {
        w.c[in.idx].drop(drop_reason::l3_not_ip);
        return out_drop;
    }
    // The 5-tuple hash is computed only for routes with several next hops.
    const auto h = [&]() noexcept -> std::uint32_t {
        return f.kind == frame_kind::ipv4
                   ? flow_hash_v4(f.ip4_src, f.ip4_dst, f.l4_proto, f.sport, f.dport, p.ecmp_seed)
                   : flow_hash_v6(reinterpret_cast<const std::uint8_t*>(d + f.ip6_src_off),
                                  reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off), f.l4_proto, f.sport,
                                  f.dport, p.ecmp_seed);
    };
    const nexthop* nh = nullptr;
    int rc;
    if (f.kind == frame_kind::ipv4) {
        if (p.routes->is_local_v4(f.ip4_dst)) { return to_us(p, w, in, m, f, tc); }
        rc = p.routes->lookup_v4(f.ip4_dst, h, &nh);
    } else {
        const auto* dst = reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off);
        if (p.routes->is_local_v6(dst)) { return to_us(p, w, in, m, f, tc); }
        rc = p.routes->lookup_v6(dst, h, &nh);
    }
    // Resolved by ARP/ND: a connected host without a NEIGH entry, or a
    // route's dynamic next hop.
    const bool dyn = (rc == dpdk::route_table::no_neighbor && nh != nullptr && w.neigh) ||
                     (rc == 0 && nh != nullptr && nh->dynamic());
    if (dyn) [[unlikely]] {
        if (f.ttl <= 1) {
            w.c[in.idx].drop(drop_reason::ttl_expired);
            return icmp_error(p, w, in, m, f, icmp_error_kind::time_exceeded, now) ? (tc = 7, in.idx) : out_drop;
        }
        if (f.kind == frame_kind::ipv4) {
            ipv4_dec_ttl(d + f.l3_off);
        } else {
            d[f.l3_off + 7] = std::byte(f.ttl - 1);
        }
        port_rt& eg = *p.ports[nh->port];
        if (eg.owner != w.id) {
            // The neighbours behind eg live on its owner: hand it over with
            // where the key is (charged here, resolved there).
            const std::uint32_t aux = nh->dynamic() ? (nh->dynamic_index() | aux_dynhop)
                                                    : static_cast<std::uint32_t>(f.kind == frame_kind::ipv4
                                                                                     ? f.l3_off + 16
                                                                                     : f.ip6_dst_off);
            const std::uint8_t fl = f.kind == frame_kind::ipv6 ? hf_v6 : 0;
            return handoff_out(p, w, in, eg, m, tc, f.vlan_count > 0, false, handoff_kind::resolve, aux, fl)
                       ? out_held
                       : out_handled;
        }
        neigh_key k;
        if (nh->dynamic()) {
            const ip_prefix& a = p.routes->dynamic_hop(nh->dynamic_index());
            std::memcpy(k.addr.data(), a.addr.data(), 16);
            k.v6 = a.v6;
        } else if (f.kind == frame_kind::ipv4) {
            k = neigh_key::v4(f.ip4_dst);
        } else {
            k = neigh_key::v6_from(reinterpret_cast<const std::uint8_t*>(d + f.ip6_dst_off));
        }
        return neigh_forward(p, w, held_frame{m, in.idx, tc, f.vlan_count > 0, tag_none}, k, nh->port, now);
    }
    if (rc != 0 || nh == nullptr) {
        const bool no_nb = rc == dpdk::route_table::no_neighbor;
        w.c[in.idx].drop(no_nb ? drop_reason::no_neighbor : drop_reason::no_route);
        if (!no_nb && icmp_error(p, w, in, m, f, icmp_error_kind::unreachable, now)) {
            tc = 7;
            return in.idx;
        }
        return out_drop;
    }
    if (f.ttl <= 1) {
        w.c[in.idx].drop(drop_reason::ttl_expired);
        if (icmp_error(p, w, in, m, f, icmp_error_kind::time_exceeded, now)) {
            tc = 7;
            return in.idx;
        }
        return out_drop;
    }
    if (f.kind == frame_kind::ipv4) {
        ipv4_dec_ttl(d + f.l3_off);
    } else {
        d[f.l3_off + 7] = std::byte(f.ttl - 1);
    }
    std::memcpy(d, nh->dst_mac.data(), 6);
    std::memcpy(d + 6, nh->src_mac.data(), 6);
    return nh->port;
}

// A MAC as a 48-bit key: one 8-byte load, masked. Callers guarantee 8
// readable bytes (the parser has checked the 14-byte Ethernet header).
// (A 6-byte memcpy into a zeroed u64 compiles to two narrow stores and a
// wide load: a store-forwarding stall that cost 25 % of the whole loop.)
inline std::uint64_t load_mac48(const std::byte* p) noexcept {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    return x & 0x0000FFFFFFFFFFFFULL;
}

// Discard everything queued in q (watchdog drop, shutdown), releasing its buffer.
std::uint32_t flush_queue(switch_pipeline::impl& p, worker_rt& w, port_rt& eg, int q) noexcept {
    return eg.eq.flush(q, [&](const auto& e) noexcept {
        if (p.buf && (e.tag & tag_uncharged) == 0) {
            release_tag(p, w, e.tag, p.buf->charge_for(e.len));
        }
        rte_pktmbuf_free(e.item);
    });
}

// Send XOFF/XON (or PAUSE) out of this port for its ingress PGs in XOFF. The
// frame goes ahead of any data (MAC Control is never queued behind data).
void send_pfc(switch_pipeline::impl& p, worker_rt& w, port_rt& eg, nanos now, dpdk::capture* cap) noexcept {
    if (eg.pfc_pending == nullptr) {
        const std::uint8_t want = eg.xoff_pg_to_prio[p.buf->xoff_pgs(eg.idx)];
        pfc_frame f;
        if (!eg.pfc_gen.poll(now, want, f)) { return; }
        rte_mbuf* m = rte_pktmbuf_alloc(p.pool);
        if (m == nullptr) { return; }  // counted by the pool; retried at the next refresh
        auto* d = reinterpret_cast<std::byte*>(rte_pktmbuf_append(m, mac_control_frame_len));
        if (d == nullptr) {
            rte_pktmbuf_free(m);
            return;
        }
        if (f.mode == flow_ctrl_mode::pfc) {
            build_pfc(d, eg.b.mac, f.class_enable, f.time);
        } else {
            build_pause(d, eg.b.mac, f.pause_time);
        }
        if (cap != nullptr) { cap->tap(eg.idx, true, m, now); }
        eg.pfc_pending = m;
    }
    if (dpdk::port_tx(eg.b, now, &eg.pfc_pending, 1) == 1) {
        eg.pfc_pending = nullptr;
        ++w.c[eg.idx].tx_pfc_frames;
    }
}

// SONiC PFC watchdog, polled every poll_interval per watched queue.
void poll_watchdog(switch_pipeline::impl& p, worker_rt& w, port_rt& eg, nanos now) noexcept {
    eg.wd_next = now + eg.wd_interval;
    const std::uint8_t paused_prios = eg.pause.paused_mask(now);
    for (int q = 0; q < 8; ++q) {
        if (!eg.wd[q]) { continue; }
        std::uint64_t rx = 0;
        bool paused = false;
        for (int pr = 0; pr < 8; ++pr) {
            if (eg.maps.pfc_prio_to_queue[pr] == q) {
                rx += w.c[eg.idx].rx_pfc_prio[pr];
                paused = paused || (paused_prios >> pr & 1u) != 0;
            }
        }
        pfc_watchdog& wd = *eg.wd[q];
        const pfc_wd_event ev = wd.poll(now, paused, rx);
        if (ev) {
            switch_event se;
            se.what = ev.kind == pfc_wd_event_kind::storm_detected ? switch_event::kind::storm_detected
                                                                   : switch_event::kind::storm_restored;
            se.ns = ev.at.v;
            se.port = eg.idx;
            se.queue = static_cast<std::uint8_t>(q);
            (void)w.events.push(se);
        }
        const auto bit = static_cast<std::uint8_t>(1u << q);
        eg.wd_drop_mask = wd.drop_active() ? (eg.wd_drop_mask | bit) : (eg.wd_drop_mask & ~bit);
        eg.wd_ignore_mask = wd.ignore_pause() ? (eg.wd_ignore_mask | bit) : (eg.wd_ignore_mask & ~bit);
        if (wd.drop_active()) {
            const std::uint32_t n = flush_queue(p, w, eg, q);
            if (n != 0) {
                wd.count_tx_drop(n);
                w.c[eg.idx].drops[static_cast<std::size_t>(drop_reason::pfcwd)] += n;
            }
        }
    }
}

}  // namespace

namespace {

// ---- Congestion point: the WRED/ECN stage (qos/wred.hpp, proto/ecn.hpp) ----
// Called for a frame leaving egress queue q of eg (default; HPCC ns-3 and
// ns3-rdma evaluate at dequeue, so the mark is not delayed by the queue it
// describes) or, with ROCELAB ecn_at: enqueue, for a frame about to join it.
// `depth` is the queue's instantaneous depth in bytes: what is left behind
// the frame at dequeue, what it finds at enqueue. Callers only call it above
// Kmin (the common case never touches the frame). It reads the frame's ECN
// field (behind up to 3 VLAN tags), draws from the port's seeded rng, and
// marks ECT(0)/ECT(1) as CE (IPv4 checksum updated incrementally, IPv6
// traffic class), or tells the caller to drop: Not-ECT frames (and non-IP
// frames) only when the profile enables WRED drop. Counters per queue:
// ecn_marked, wred_dropped (the latter also as drops[drop_wred]).
// A frame of a lossless PG (`tag`: tag_lossless) is never dropped: a drop
// decision passes it (wred_lossless_kept), since a lossless frame leaves
// only by transmission, link down or the PFC watchdog.
// Returns false when the caller must free the frame.
[[gnu::noinline]] bool wred_stage(const switch_pipeline::impl& p, worker_rt& w, port_rt& eg, int q, rte_mbuf* m,
                                  std::uint64_t depth, std::uint32_t tag) noexcept {
    std::byte* d = data(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const std::uint8_t ecn = frame_ecn(d, len);
    const bool ect = ecn != 0xFF && ecn_capable(ecn);
    switch (eg.wred[q].decide(depth, ect, eg.wred_rng)) {
        case wred_verdict::pass:
            return true;
        case wred_verdict::mark:
            if (mark_ce(d, len) == ce_mark_result::marked) { ++w.c[eg.idx].ecn_marked[q]; }
            return true;
        case wred_verdict::drop:
            break;
    }
    if (tag_lossless(p, tag)) {
        ++w.c[eg.idx].wred_lossless_kept;
        return true;
    }
    ++w.c[eg.idx].wred_dropped[q];
    w.c[eg.idx].drop(drop_reason::wred);
    return false;
}

// ecn_at: enqueue, for a frame from `in` of traffic class tc. True when the
// frame was dropped (freed and counted).
[[gnu::always_inline]] inline bool wred_enqueue_drop(switch_pipeline::impl& p, worker_rt& w, const port_rt& in,
                                                     port_rt& eg, int q, std::uint8_t tc, rte_mbuf* x) noexcept {
    if (!p.wred_at_enqueue || (eg.wred_mask >> q & 1u) == 0) [[likely]] { return false; }
    const std::uint64_t depth = eg.eq.depth_bytes(q).v;
    if (depth <= eg.wred[q].kmin.v || wred_stage(p, w, eg, q, x, depth, acct_tag(in.idx, in.maps.tc_to_pg[tc]))) {
        return false;
    }
    rte_pktmbuf_free(x);
    return true;
}

// Enqueue to queue q of eg with ingress buffer accounting: charged now,
// released at dequeue (acct_tag). Frees and counts what is refused. False
// only when the ingress buffer refused the frame (lossy limit, headroom).
[[gnu::always_inline]] inline bool enqueue_accounted(switch_pipeline::impl& p, worker_rt& w, port_rt& in, port_rt& eg,
                                                     rte_mbuf* x, std::uint8_t tc, int q,
                                                     std::uint32_t xlen) noexcept {
    if (wred_enqueue_drop(p, w, in, eg, q, tc, x)) [[unlikely]] { return true; }
    const auto tag = charge_ingress(p, w, in, x, tc, xlen);
    if (!tag) [[unlikely]] { return false; }
    mark_egress(p, eg.idx);
    if (!eg.eq.enqueue(q, x, xlen, *tag)) [[unlikely]] {
        w.c[eg.idx].drop(drop_reason::tail_drop);
        release_tag(p, w, *tag, p.buf->charge_for(xlen));
        rte_pktmbuf_free(x);
    }
    return true;
}

// Admission of one frame to egress port eg, general case: VLAN tag rewrite,
// PFC watchdog drop, ingress buffer accounting (unless `uncharged`: a flood
// copy), then the egress queue. False only when the ingress buffer refused it.
[[gnu::noinline]] bool admit_slow(switch_pipeline::impl& p, worker_rt& w, port_rt& in, port_rt& eg, rte_mbuf* x,
                                  std::uint8_t tc, bool tagged, bool uncharged = false) noexcept {
    if (eg.link_down) {
        w.c[eg.idx].drop(drop_reason::link_down);
        rte_pktmbuf_free(x);
        return true;
    }
    if (eg.vmode == vlan_mode::tagged) {
        if (!vlan_set(x, tagged, tc, eg.vid)) {
            w.c[eg.idx].drop(drop_reason::flood_nombuf);
            rte_pktmbuf_free(x);
            return true;
        }
    } else if (tagged) {
        vlan_strip(x);
    }
    const int q = eg.maps.tc_to_queue[tc];
    if ((eg.wd_drop_mask >> q & 1u) != 0) {
        w.c[eg.idx].drop(drop_reason::pfcwd);
        eg.wd[q]->count_rx_drop();
        rte_pktmbuf_free(x);
        return true;
    }
    const std::uint32_t xlen = rte_pktmbuf_pkt_len(x);
    if (p.buf && !uncharged) { return enqueue_accounted(p, w, in, eg, x, tc, q, xlen); }
    if (wred_enqueue_drop(p, w, in, eg, q, tc, x)) { return true; }
    mark_egress(p, eg.idx);
    if (!eg.eq.enqueue(q, x, xlen, p.buf ? (tag_uncharged | acct_tag(in.idx, in.maps.tc_to_pg[tc])) : 0u)) {
        w.c[eg.idx].drop(drop_reason::tail_drop);
        rte_pktmbuf_free(x);
    }
    return true;
}

// Admission, common case inline: an untagged frame to an untagged port, no
// watchdog drop active (with or without buffer accounting).
[[gnu::always_inline]] inline void admit(switch_pipeline::impl& p, worker_rt& w, port_rt& in, port_rt& eg, rte_mbuf* x,
                                         std::uint8_t tc, bool tagged, bool acct) noexcept {
    if (!tagged && eg.vmode == vlan_mode::untagged && eg.wd_drop_mask == 0 && !eg.link_down) [[likely]] {
        const int q = eg.maps.tc_to_queue[tc];
        const std::uint32_t xlen = rte_pktmbuf_pkt_len(x);
        if (acct) {
            enqueue_accounted(p, w, in, eg, x, tc, q, xlen);
            return;
        }
        if (wred_enqueue_drop(p, w, in, eg, q, tc, x)) [[unlikely]] { return; }
        mark_egress(p, eg.idx);
        if (!eg.eq.enqueue(q, x, xlen)) [[unlikely]] {
            w.c[eg.idx].drop(drop_reason::tail_drop);
            rte_pktmbuf_free(x);
        }
        return;
    }
    admit_slow(p, w, in, eg, x, tc, tagged);
}

// Admission to eg whichever worker owns it (general case).
inline bool admit_any(switch_pipeline::impl& p, worker_rt& w, port_rt& in, port_rt& eg, rte_mbuf* x, std::uint8_t tc,
                      bool tagged, bool uncharged) noexcept {
    if (eg.owner == w.id) { return admit_slow(p, w, in, eg, x, tc, tagged, uncharged); }
    return handoff_out(p, w, in, eg, x, tc, tagged, !uncharged);
}

// Queue a frame another worker handed over (or a charged frame that waited
// for its neighbour here), already rewritten for eg and charged (tag) on
// the ingress side: the egress half of admit_slow(). A drop releases the
// charge (here or to the ingress port's owner).
void egress_enqueue(switch_pipeline::impl& p, worker_rt& w, port_rt& eg, rte_mbuf* x, std::uint8_t tc,
                    std::uint32_t tag) noexcept {
    const std::uint32_t xlen = rte_pktmbuf_pkt_len(x);
    const auto refuse = [&](drop_reason r) noexcept {
        if (r != drop_reason::count) { w.c[eg.idx].drop(r); }
        release_tag(p, w, tag, p.buf ? p.buf->charge_for(xlen) : 0);
        rte_pktmbuf_free(x);
    };
    if (eg.link_down) [[unlikely]] { return refuse(drop_reason::link_down); }
    const int q = eg.maps.tc_to_queue[tc];
    if ((eg.wd_drop_mask >> q & 1u) != 0) [[unlikely]] {
        eg.wd[q]->count_rx_drop();
        return refuse(drop_reason::pfcwd);
    }
    if (p.wred_at_enqueue && (eg.wred_mask >> q & 1u) != 0) [[unlikely]] {
        const std::uint64_t depth = eg.eq.depth_bytes(q).v;
        if (depth > eg.wred[q].kmin.v && !wred_stage(p, w, eg, q, x, depth, tag)) { return refuse(drop_reason::count); }
    }
    mark_egress(p, eg.idx);
    if (!eg.eq.enqueue(q, x, xlen, tag)) [[unlikely]] { refuse(drop_reason::tail_drop); }
}

// Flood to every port but the ingress port: copies for all but the last.
// With buffer accounting the ingress PG is charged once per received frame,
// as an ASIC stores a flooded frame once and replicates it at egress: the
// copies are made first, the original goes to the last target charged, and
// the copies follow uncharged, only if the ingress admitted the original
// (a lossless frame the headroom cannot take is dropped for every port).
// Without accounting the same order applies (nothing is charged).
[[gnu::noinline]] void flood(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* m, std::uint8_t tc,
                             bool tagged) noexcept {
    std::uint64_t targets = p.all_ports_mask & ~(1ULL << in.idx);
    if (targets == 0) {
        w.c[in.idx].drop(drop_reason::flood_no_port);
        rte_pktmbuf_free(m);
        return;
    }
    rte_mbuf* copies[64];
    std::uint8_t to[64];
    unsigned n = 0;
    while ((targets & (targets - 1)) != 0) {
        const int t = std::countr_zero(targets);
        targets &= targets - 1;
        rte_mbuf* x = rte_pktmbuf_copy(m, p.pool, 0, UINT32_MAX);
        if (x == nullptr) {
            w.c[t].drop(drop_reason::flood_nombuf);
            continue;
        }
        copies[n] = x;
        to[n++] = static_cast<std::uint8_t>(t);
    }
    const bool admitted = admit_any(p, w, in, *p.ports[std::countr_zero(targets)], m, tc, tagged, false);
    for (unsigned k = 0; k < n; ++k) {
        if (!admitted) {
            rte_pktmbuf_free(copies[k]);
            continue;
        }
        ++w.c[in.idx].flood_copies;
        admit_any(p, w, in, *p.ports[to[k]], copies[k], tc, tagged, /*uncharged=*/true);
    }
}

// A frame whose neighbour is known now (its MACs rewritten) is admitted:
// charged to its ingress PG and queued. One handed over by the ingress
// port's worker (tag_handed) goes back there to be charged, since only the
// port's owner writes its PG; that worker hands it to eg's owner charged.
void admit_resolved(switch_pipeline::impl& p, worker_rt& w, const held_frame& h, port_rt& eg) noexcept {
    port_rt& in = *p.ports[h.in];
    if (h.tag != tag_handed) {
        admit(p, w, in, eg, h.m, h.tc, h.tagged, p.buf != nullptr);
        return;
    }
    if (!p.buf) {  // no accounting: nothing to charge
        egress_enqueue(p, w, eg, h.m, h.tc, 0);
        return;
    }
    handoff e;
    e.m = h.m;
    e.tag = tag_none;
    e.port = eg.idx;
    e.in = in.idx;
    e.tc = h.tc;
    e.kind = handoff_kind::admit;
    e.flags = h.tagged ? hf_tagged : 0;
    stage(p, w, in.owner, e);
}

void release_held(switch_pipeline::impl& p, worker_rt& w, const held_frame& h, const mac_addr& mac, std::uint16_t port) noexcept {
    port_rt& eg = *p.ports[port];
    std::byte* d = data(h.m);
    std::memcpy(d, mac.data(), 6);
    std::memcpy(d + 6, eg.b.mac.data(), 6);
    admit_resolved(p, w, h, eg);
}

// A frame whose neighbour never answered: dropped (drop_neigh_unresolved)
// and answered with ICMP host / address unreachable from its ingress port,
// as a router does when ARP / ND fails (RFC 1812 4.3.3.1, RFC 4443 3.1).
void unresolved_held(switch_pipeline::impl& p, worker_rt& w, const held_frame& h, nanos now) noexcept {
    port_rt& in = *p.ports[h.in];
    w.c[in.idx].drop(drop_reason::neigh_unresolved);
    release_tag(p, w, h.tag, p.buf ? p.buf->charge_for(rte_pktmbuf_pkt_len(h.m)) : 0);
    const parsed_frame f = parse_frame<parse_depth::l4>(data(h.m), rte_pktmbuf_pkt_len(h.m));
    if (f.status == parse_status::ok && (f.kind == frame_kind::ipv4 || f.kind == frame_kind::ipv6) &&
        icmp_error(p, w, in, h.m, f, icmp_error_kind::host_unreachable, now)) {
        if (in.owner == w.id) {
            admit(p, w, in, in, h.m, 7, h.tagged, p.buf != nullptr);
        } else {  // back to the ingress port's worker, which charges and sends it
            handoff e;
            e.m = h.m;
            e.tag = tag_none;
            e.port = in.idx;
            e.in = in.idx;
            e.tc = 7;
            e.kind = handoff_kind::ingress;
            e.flags = h.tagged ? hf_tagged : 0;
            stage(p, w, in.owner, e);
        }
        return;
    }
    rte_pktmbuf_free(h.m);
}

// The worker applies a link change (see set_link in the header).
[[gnu::noinline]] void link_change(switch_pipeline::impl& p, worker_rt& w, port_rt& eg, bool up, nanos now) noexcept {
    switch_event se;
    se.ns = now.v;
    se.port = eg.idx;
    if (up) {
        __atomic_store_n(&eg.link_down, false, __ATOMIC_RELAXED);
        se.what = switch_event::kind::link_up;
        (void)w.events.push(se);
        return;
    }
    std::uint64_t n = 0;
    for (int q = 0; q < 8; ++q) { n += flush_queue(p, w, eg, q); }
    // Staged frames were dequeued (their buffer already released): free them.
    if (eg.n_staged != 0) {
        rte_pktmbuf_free_bulk(eg.staged.data(), eg.n_staged);
        n += eg.n_staged;
        w.c[eg.idx].tx_flushed += eg.n_staged;  // dequeued (and ECN-marked) for TX, never sent, as at shutdown
        eg.n_staged = 0;
    }
    if (eg.pfc_pending != nullptr) {
        rte_pktmbuf_free(eg.pfc_pending);
        eg.pfc_pending = nullptr;
    }
    w.c[eg.idx].drops[static_cast<std::size_t>(drop_reason::link_down)] += n;
    eg.backlog = false;
    if (p.mode == fwd_mode::l2) {
        w.table->flush_port(eg.idx);
        for (std::size_t k = 0; k < w.peers.size(); ++k) {  // and the other workers' copies
            if (k == w.id) { continue; }
            learn_msg lm;
            lm.port = eg.idx;
            lm.flush = 1;
            if (!w.peers[k].learns->push(lm)) { ++w.st.learns_lost; }
        }
    }
    if (w.neigh) {  // neighbours behind the port are forgotten; frames waiting for them dropped
        w.neigh->flush_port(eg.idx, [&](const held_frame& h) noexcept { drop_held(p, w, h, drop_reason::link_down); });
    }
    __atomic_store_n(&eg.link_down, true, __ATOMIC_RELAXED);
    se.what = switch_event::kind::link_down;
    (void)w.events.push(se);
}

}  // namespace

namespace {

// Tell the other workers' FDB copies about a write to this one's.
[[gnu::noinline]] void learn_out(worker_rt& w, std::uint64_t key, std::uint16_t port, nanos now) noexcept {
    learn_msg lm;
    lm.key = key;
    lm.now = now.v;
    lm.port = port;
    for (std::size_t k = 0; k < w.peers.size(); ++k) {
        if (k == w.id) { continue; }
        if (w.peers[k].learns->push(lm)) {
            ++w.st.learns_out;
        } else {
            ++w.st.learns_lost;
        }
    }
}

// One RX burst of port `in`, one pass per frame: parse + classify +
// forwarding decision + egress rewrite + enqueue. L2: learning bridge
// (parses to the IP header); else L3 (checksum and L4 ports too).
template <bool L2>
std::uint32_t rx_port(switch_pipeline::impl& p, worker_rt& w, port_rt& in, nanos now, dpdk::capture* cap) noexcept {
    constexpr std::uint16_t max_burst = switch_pipeline::max_burst;
    const bool acct = p.buf != nullptr;
    const std::uint32_t max_frame = p.max_frame;
    rte_mbuf* pkts[max_burst];
    const std::uint16_t n = dpdk::port_rx(in.b, now, pkts, p.burst);
    if (n == 0) { return 0; }
    for (std::uint16_t i = 0; i < n && i < 4; ++i) { rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*)); }

    // FDB results are cached within a burst: consecutive frames of one
    // flow share source and destination, so learn/lookup run once.
    std::uint64_t last_src = ~0ULL;
    std::uint64_t last_dst = ~0ULL;
    int last_dst_port = -1;

    rte_mbuf* to_free[max_burst];
    std::uint16_t n_free = 0;
    std::uint64_t rx_bytes = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
        if (i + 4 < n) { rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void*)); }
        rte_mbuf* m = pkts[i];
        const std::uint32_t len = rte_pktmbuf_pkt_len(m);
        rx_bytes += len;
        if (cap != nullptr) { cap->tap(in.idx, false, m, now); }
        std::uint16_t o = out_drop;
        std::uint8_t tc = 0;
        bool tagged = false;
        do {  // decision; `break` leaves with o set (out_drop: counted)
            if (len > max_frame) [[unlikely]] {
                w.c[in.idx].drop(drop_reason::oversize);
                break;
            }
            const std::uint32_t seg = rte_pktmbuf_data_len(m);
            if (seg < len && seg < 128) [[unlikely]] {
                w.c[in.idx].drop(drop_reason::segmented_header);
                break;
            }
            const std::byte* d = data(m);
            const parsed_frame f = parse_frame<L2 ? parse_depth::l3 : parse_depth::l4>(d, len);
            if (f.status != parse_status::ok) [[unlikely]] {
                ++w.c[in.idx].malformed[static_cast<std::size_t>(f.status)];
                w.c[in.idx].drop(drop_reason::malformed);
                break;
            }
            // Link-local group addresses 01:80:C2:00:00:00..0F are never
            // forwarded. A MAC Control frame (Length/Type 0x8808 right after
            // the source address: untagged) is never passed to the bridge
            // (IEEE 802.3 clause 31): it acts when addressed to the reserved
            // group or to this port, and is dropped by name otherwise. A
            // tagged frame is not MAC Control, whatever its inner type.
            const bool mac_ctl = f.kind == frame_kind::mac_control && f.vlan_count == 0;
            if (mac_ctl || is_link_local_reserved(reinterpret_cast<const std::uint8_t*>(d))) [[unlikely]] {
                if (mac_ctl && (is_link_local_reserved(reinterpret_cast<const std::uint8_t*>(d)) ||
                                std::memcmp(d, in.b.mac.data(), 6) == 0)) {
                    on_mac_control(w, in, f, d, now);
                    o = out_consumed;
                } else {
                    w.c[in.idx].drop(mac_ctl ? drop_reason::mac_control_other : drop_reason::link_local);
                }
                break;
            }
            // VLAN membership: tagged ports accept their VID (or priority tags),
            // untagged ports accept untagged or priority-tagged frames.
            std::uint16_t vid = 0;
            tagged = f.vlan_count > 0;
            if (tagged) [[unlikely]] {
                vid = static_cast<std::uint16_t>(f.outer_vid);
                if (vid != 0 && (in.vmode != vlan_mode::tagged || vid != in.vid)) {
                    w.c[in.idx].drop(drop_reason::vlan_mismatch);
                    break;
                }
            }
            tc = in.maps.classify(in.trust, f.is_ip() ? f.dscp : -1, tagged ? f.outer_pcp : -1);
            if constexpr (!L2) {
                o = l3_decide(p, w, in, m, f, tc, now);
                break;
            }
            // L2: learn the source, look up the destination; flood on a miss.
            const std::uint64_t src = load_mac48(d + 6) | (std::uint64_t{vid} << 48);
            if (src != last_src) {
                if ((std::to_integer<std::uint8_t>(d[6]) & 1u) == 0) {
                    if (w.table->learn(now, reinterpret_cast<const std::uint8_t*>(d + 6), vid, in.idx) &&
                        p.multi) [[unlikely]] {
                        learn_out(w, src, in.idx, now);
                    }
                }
                last_src = src;
            }
            if ((std::to_integer<std::uint8_t>(d[0]) & 1u) != 0) {
                o = out_flood;  // broadcast / multicast
                break;
            }
            const std::uint64_t dst = load_mac48(d) | (std::uint64_t{vid} << 48);
            if (dst != last_dst) {
                last_dst = dst;
                last_dst_port = w.table->lookup(now, reinterpret_cast<const std::uint8_t*>(d), vid);
            }
            if (last_dst_port < 0) {
                o = out_flood;  // unknown unicast
            } else if (last_dst_port == in.idx) {
                w.c[in.idx].drop(drop_reason::same_port);
            } else {
                o = static_cast<std::uint16_t>(last_dst_port);
            }
        } while (false);
        if (o < out_handled) [[likely]] {
            port_rt& eg = *p.ports[o];
            if (eg.owner == w.id) [[likely]] {
                admit(p, w, in, eg, m, tc, tagged, acct);
            } else {
                (void)handoff_out(p, w, in, eg, m, tc, tagged, true);
            }
        } else if (o == out_held || o == out_handled) {
            // parked in the neighbour table (counted neigh_held)
        } else if (o == out_flood) {
            // With two ports a flood is one unicast: no copy, no call.
            const std::uint64_t targets = p.all_ports_mask & ~(1ULL << in.idx);
            if (targets != 0 && (targets & (targets - 1)) == 0) {
                port_rt& eg = *p.ports[std::countr_zero(targets)];
                if (eg.owner == w.id) [[likely]] {
                    admit(p, w, in, eg, m, tc, tagged, acct);
                } else {
                    (void)handoff_out(p, w, in, eg, m, tc, tagged, true);
                }
            } else {
                flood(p, w, in, m, tc, tagged);
            }
        } else {  // out_drop or out_consumed: already counted
            to_free[n_free++] = m;
        }
    }
    w.c[in.idx].rx_packets += n;
    w.c[in.idx].rx_bytes += rx_bytes;
    if (n_free != 0) { rte_pktmbuf_free_bulk(to_free, n_free); }
    return n;
}

}  // namespace

// The earliest time at which poll() has work of its own (see the header).
// Ports whose TX refused frames are left to the caller (their retry time is
// the TX ring's, which only the port I/O knows).
namespace {

// When egress port eg next has work of its own: a PFC frame to send or
// refresh, the watchdog, a queue the shaper or a pause holds (<= now: work
// now; nanos::max(): none until something arrives). Not included: frames
// staged because TX refused them (the port I/O knows when its ring frees).
// Credit mode: the queues among `nonempty` whose head frame the port holds
// no credits for (qos/credit.hpp; queue q is the sender's class q).
std::uint8_t credit_blocked_queues(const port_rt& eg, const credit_tx& cr, std::uint8_t nonempty) noexcept {
    std::uint8_t m = 0;
    for (std::uint8_t bits = nonempty; bits != 0; bits = static_cast<std::uint8_t>(bits & (bits - 1))) {
        const int q = std::countr_zero(bits);
        if (!cr.can_send(q, eg.eq.head_len(q))) { m = static_cast<std::uint8_t>(m | (1u << q)); }
    }
    return m;
}

nanos egress_deadline(switch_pipeline::impl& p, port_rt& eg, nanos now) noexcept {
    nanos d = nanos::max();
    if (p.buf != nullptr && eg.pfc_pending == nullptr) {
        d = std::min(d, eg.pfc_gen.due(now, eg.xoff_pg_to_prio[p.buf->xoff_pgs(eg.idx)]));
    }
    if (eg.wd_interval.v > 0) { d = std::min(d, eg.wd_next); }
    const std::uint8_t nonempty = eg.eq.nonempty_mask();
    if (eg.n_staged != 0 || nonempty == 0) { return d; }
    std::uint8_t paused = static_cast<std::uint8_t>(
        pfc_paused_queues(eg.pause.paused_mask(now), eg.maps.pfc_prio_to_queue) & ~eg.wd_ignore_mask);
    // A queue waiting for credits has no deadline: the credits' arrival marks the port.
    if (eg.b.credit != nullptr) [[unlikely]] { paused |= credit_blocked_queues(eg, *eg.b.credit, nonempty); }
    if ((nonempty & static_cast<std::uint8_t>(~paused)) != 0) {
        d = std::min(d, eg.b.shaped ? std::max(now, eg.shp.next_send_time()) : now);
    }
    if ((nonempty & paused) != 0) { d = std::min(d, eg.pause.next_deadline(now)); }
    return d;
}

// After its egress step (one worker): the port stays active while frames
// wait for TX, a PFC frame is pending or something is due now; otherwise it
// waits in eg_timers for its own deadline, or for a mark.
void settle_egress(switch_pipeline::impl& p, port_rt& eg, nanos now) noexcept {
    const std::size_t i = eg.idx;
    if (eg.n_staged == 0 && eg.pfc_pending == nullptr) {
        const nanos d = egress_deadline(p, eg, now);
        if (d > now) {
            p.eg_active[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
            p.eg_timers.set(static_cast<std::uint32_t>(i), d);  // nanos::max(): no timer
            return;
        }
    }
    p.eg_timers.set(static_cast<std::uint32_t>(i), nanos::max());
}

}  // namespace

nanos switch_pipeline::next_deadline(nanos now) noexcept {
    impl& p = *_p;
    worker_rt& w = *p.workers[0];  // virtual time runs one worker
    nanos d = nanos::max();
    if (w.neigh && w.neigh->size() != 0) { d = std::max(now, w.neigh_next); }
    if (!p.track) {
        for (auto& pp : p.ports) { d = std::min(d, egress_deadline(p, *pp, now)); }
        return d;
    }
    // The active ports, and the others' deadlines kept in eg_timers.
    for (std::size_t wi = 0; wi < p.eg_active.size(); ++wi) {
        for (std::uint64_t bits = p.eg_active[wi]; bits != 0; bits &= bits - 1) {
            d = std::min(d, egress_deadline(p, *p.ports[wi * 64 + static_cast<std::size_t>(std::countr_zero(bits))], now));
        }
    }
    return std::min(d, p.eg_timers.top_time());
}

namespace {

// A frame another worker handed to this one (see handoff_kind).
void take_handoff(switch_pipeline::impl& p, worker_rt& w, const handoff& h, nanos now) noexcept {
    switch (h.kind) {
        case handoff_kind::enqueue:
            egress_enqueue(p, w, *p.ports[h.port], h.m, h.tc, h.tag);
            return;
        case handoff_kind::ingress: {
            port_rt& in = *p.ports[h.port];
            admit(p, w, in, in, h.m, h.tc, (h.flags & hf_tagged) != 0, p.buf != nullptr);
            return;
        }
        case handoff_kind::resolve: {
            neigh_key k;
            if ((h.aux & aux_dynhop) != 0) {
                const ip_prefix& a = p.routes->dynamic_hop(h.aux & ~aux_dynhop);
                std::memcpy(k.addr.data(), a.addr.data(), 16);
                k.v6 = a.v6;
            } else if ((h.flags & hf_v6) != 0) {
                k = neigh_key::v6_from(reinterpret_cast<const std::uint8_t*>(data(h.m) + h.aux));
            } else {
                k = neigh_key::v4(load_be32(data(h.m) + h.aux));
            }
            const held_frame hf{h.m, h.in, h.tc, (h.flags & hf_tagged) != 0, tag_handed};
            const std::uint16_t o = neigh_forward(p, w, hf, k, h.port, now);
            if (o == out_drop) {
                rte_pktmbuf_free(h.m);
            } else if (o != out_held) {
                admit_resolved(p, w, hf, *p.ports[o]);
            }
            return;
        }
        case handoff_kind::admit: {  // resolved on eg's worker: charge here, then send it there
            port_rt& in = *p.ports[h.in];
            port_rt& eg = *p.ports[h.port];
            const bool tagged = (h.flags & hf_tagged) != 0;
            if (eg.owner == w.id) {
                admit(p, w, in, eg, h.m, h.tc, tagged, p.buf != nullptr);
            } else {
                (void)handoff_out(p, w, in, eg, h.m, h.tc, tagged, true);
            }
            return;
        }
    }
}

// Start of a worker's poll: buffer released by the others for its ingress
// ports, their FDB writes, then the frames they handed it (a bounded number
// per peer and poll, so its own RX is never starved).
std::uint32_t drain_in(switch_pipeline::impl& p, worker_rt& w, nanos now) noexcept {
    std::uint32_t work = 0;
    for (std::size_t v = 0; v < p.workers.size(); ++v) {
        if (v == w.id) { continue; }
        worker_rt::peer& from = p.workers[v]->peers[w.id];
        if (p.buf) {
            credit c[64];
            std::size_t n;
            while ((n = from.credits->pop_burst(c, 64)) != 0) {
                for (std::size_t i = 0; i < n; ++i) {
                    p.buf->release(tag_port(c[i].tag), tag_pg(c[i].tag), charge{c[i].bytes});
                }
            }
        }
        learn_msg l[32];
        std::size_t nl;
        while ((nl = from.learns->pop_burst(l, 32)) != 0) {
            for (std::size_t i = 0; i < nl; ++i) {
                if (l[i].flush != 0) {
                    w.table->flush_port(l[i].port);
                    continue;
                }
                std::uint8_t mac[8];
                std::memcpy(mac, &l[i].key, 8);
                (void)w.table->learn(nanos{l[i].now}, mac, static_cast<std::uint16_t>(l[i].key >> 48), l[i].port);
            }
        }
        // Per peer and poll, one burst (what a port's TX sends per poll):
        // polls take microseconds, so below CPU overload frames reach the
        // egress queues as they come (queue depth, WRED/ECN and PFC see them
        // there). When this worker is the bottleneck the surplus waits in the
        // handoff queue, still charged to its ingress PG, and lossy frames
        // are dropped at the sending worker (drop_handoff_full) before they
        // cross, instead of crossing only to be tail-dropped here.
        handoff h[switch_pipeline::max_burst];
        const std::size_t n = from.frames->pop_burst(h, p.burst);
        if (n == 0) { continue; }
        w.st.handed_in += n;
        work += static_cast<std::uint32_t>(n);
        for (std::size_t i = 0; i < n; ++i) {
            if (i + 2 < n) { rte_prefetch0(h[i + 2].m); }
            take_handoff(p, w, h[i], now);
        }
    }
    return work;
}

}  // namespace

std::uint32_t switch_pipeline::poll(nanos now) noexcept { return poll_worker(0, now); }

std::uint32_t switch_pipeline::poll_worker(std::size_t wk, nanos now) noexcept {
    impl& p = *_p;
    worker_rt& w = *p.workers[wk];
    dpdk::capture* const cap = _capture;
    const bool acct = p.buf != nullptr;
    std::uint32_t work = 0;
    w.last_now = now;

    if (p.multi) { work += drain_in(p, w, now); }
    auto rx_step = [&](port_rt& in) noexcept {
        work += p.mode == fwd_mode::l2 ? rx_port<true>(p, w, in, now, cap) : rx_port<false>(p, w, in, now, cap);
        mark_egress(p, in.idx);  // a PFC frame in changes its pauses
    };
    if (p.track) {
        std::uint64_t* const pend = p.ports[w.ports[0]]->b.io.rx_pending;
        // The port I/O flags the ports with frames (port_io::rx_pending): in
        // port order, a port's flag cleared once its RX ring is empty.
        for (std::size_t wi = 0; wi < p.eg_active.size(); ++wi) {
            for (std::uint64_t bits = pend[wi]; bits != 0; bits &= bits - 1) {
                port_rt& in = *p.ports[wi * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
                if (in.b.credit != nullptr && in.b.credit->take_news()) [[unlikely]] { mark_egress(p, in.idx); }
                if (dpdk::port_rx_maybe(in.b)) { rx_step(in); }
                if (!dpdk::port_rx_maybe(in.b)) { pend[wi] &= ~(std::uint64_t{1} << (in.idx & 63)); }
            }
        }
    } else {
        for (const std::uint16_t pi : w.ports) {
            port_rt& in = *p.ports[pi];
            if (dpdk::port_rx_maybe(in.b)) { rx_step(in); }
        }
    }
    if (p.multi) {
        for (std::size_t k = 0; k < w.peers.size(); ++k) {
            if (k != w.id && (w.peers[k].n_stage != 0 || !w.peers[k].stash.empty())) { flush_stage(p, w, k); }
        }
    }

    // Neighbour timers (retransmissions, failures, aging), every millisecond.
    if (w.neigh && now >= w.neigh_next) [[unlikely]] {
        w.neigh_next = now + neigh_poll_interval;
        w.neigh->poll(
            now, [&](const neigh_entry& e, neigh_request kind) noexcept { send_neigh_request(p, w, e, kind); },
            [&](const held_frame& h) noexcept { unresolved_held(p, w, h, now); });
    }

    // ---- per port: PFC generation, watchdog, schedule + shape + transmit ----
    auto egress_step = [&](port_rt& eg) noexcept {
        // Link state from the control thread: applied here, on the owner lcore.
        if ((__atomic_load_n(&eg.link_req, __ATOMIC_RELAXED) != 0) == eg.link_down) [[unlikely]] {
            link_change(p, w, eg, eg.link_down, now);
        }
        if (eg.link_down) [[unlikely]] { return; }
        if (acct) [[unlikely]] {
            send_pfc(p, w, eg, now, cap);
        }
        if (eg.wd_interval.v > 0 && now >= eg.wd_next) [[unlikely]] {
            poll_watchdog(p, w, eg, now);
        }
        if (eg.n_staged == 0 && eg.eq.nonempty_mask() == 0) { return; }
        std::uint8_t paused = static_cast<std::uint8_t>(
            pfc_paused_queues(eg.pause.paused_mask(now), eg.maps.pfc_prio_to_queue) & ~eg.wd_ignore_mask);
        credit_tx* const cr = eg.b.credit;  // credit mode: queues wait for credits as for a pause
        if (cr != nullptr) [[unlikely]] { paused |= credit_blocked_queues(eg, *cr, eg.eq.nonempty_mask()); }
        // The line sat idle for 200 us while frames were eligible: the lcore
        // (or the device) is not keeping up with the configured rate.
        if (eg.backlog && eg.b.shaped && now - eg.shp.finish_time() > nanos{200000}) { ++w.c[eg.idx].tx_behind; }
        // Buffer released per run of frames from one (ingress port, PG):
        // release() is linear in the bytes, and XON is decided from the state
        // after the run (use only falls while dequeuing, so the decision is
        // the one the run's last frame would have made; the PFC frame goes
        // out at the next poll either way).
        std::uint32_t rel_tag = 0;
        std::uint64_t rel_bytes = 0;
        // A run of uncharged flood copies releases nothing (checked per run,
        // not per frame: the per-frame path is the tag compare it always had).
        auto release_run = [&]() noexcept {
            if (rel_bytes != 0) {
                release_tag(p, w, rel_tag, rel_bytes);
                rel_bytes = 0;
            }
        };
        const bool shaped = eg.b.shaped;
        while (eg.n_staged < p.burst) {
            const std::uint8_t nonempty = eg.eq.nonempty_mask();
            if ((nonempty & static_cast<std::uint8_t>(~paused)) == 0) { break; }
            if (shaped && !eg.shp.conforms(now)) { break; }
            const int q = eg.sched.pick(nonempty, paused, [&](int qq) noexcept { return eg.eq.head_len(qq); });
            if (q < 0) { break; }
            // Serve q for as long as pick() would return it again: a strict
            // queue until it is empty (nothing is enqueued during this loop,
            // so no higher strict queue can appear), a DWRR queue while its
            // deficit covers the head frame. Same order as a pick per frame.
            const bool strict = (eg.sched.strict_mask() >> q & 1u) != 0;
            // The WRED/ECN stage hook at dequeue (queues with a profile only).
            const bool wred_q = (eg.wred_mask >> q & 1u) != 0 && !p.wred_at_enqueue;
            const std::uint64_t kmin = eg.wred[q].kmin.v;
            do {
                auto e = eg.eq.dequeue(q);
                eg.sched.charge(q, e.len);
                if (acct) [[unlikely]] {
                    if (e.tag != rel_tag) {
                        release_run();
                        rel_tag = e.tag;
                    }
                    rel_bytes += p.buf->charge_for(e.len);
                }
                if (wred_q) [[unlikely]] {
                    const std::uint64_t depth = eg.eq.depth_bytes(q).v;
                    if (depth > kmin && !wred_stage(p, w, eg, q, e.item, depth, e.tag)) {
                        rte_pktmbuf_free(e.item);
                        continue;
                    }
                }
                if (shaped) { eg.shp.on_send(now, e.len); }
                if (cr != nullptr) [[unlikely]] { cr->on_send(q, e.len); }
                if (cap != nullptr) [[unlikely]] { cap->tap(eg.idx, true, e.item, now); }
                eg.staged_len[eg.n_staged] = e.len;
                eg.staged[eg.n_staged++] = e.item;
            } while (eg.n_staged < p.burst && !eg.eq.empty(q) && (!shaped || eg.shp.conforms(now)) &&
                     (strict || eg.sched.deficit(q) >= static_cast<std::int64_t>(eg.eq.head_len(q))) &&
                     (cr == nullptr || cr->can_send(q, eg.eq.head_len(q))));
            if (cr != nullptr && !eg.eq.empty(q) && !cr->can_send(q, eg.eq.head_len(q))) [[unlikely]] {
                paused = static_cast<std::uint8_t>(paused | (1u << q));  // out of credits: as if paused
                ++cr->waits;
            }
        }
        release_run();
        eg.backlog = (eg.eq.nonempty_mask() & static_cast<std::uint8_t>(~paused)) != 0;
        if (eg.n_staged == 0) { return; }
        const std::uint16_t sent = dpdk::port_tx(eg.b, now, eg.staged.data(), eg.n_staged);
        std::uint64_t txb = 0;
        for (std::uint16_t i = 0; i < sent; ++i) { txb += eg.staged_len[i]; }
        w.c[eg.idx].tx_packets += sent;
        w.c[eg.idx].tx_bytes += txb;
        work += sent;
        if (sent < eg.n_staged) {
            ++w.c[eg.idx].tx_ring_full;
            std::copy(eg.staged.begin() + sent, eg.staged.begin() + eg.n_staged, eg.staged.begin());
            std::copy(eg.staged_len.begin() + sent, eg.staged_len.begin() + eg.n_staged, eg.staged_len.begin());
        }
        eg.n_staged = static_cast<std::uint16_t>(eg.n_staged - sent);
    };
    if (!p.track) {
        for (const std::uint16_t pi : w.ports) { egress_step(*p.ports[pi]); }
    } else {
        // The active ports, in port order (a port marked during the loop is
        // visited in this poll when it comes later, in the next otherwise,
        // as when every port is visited), then each one settles: it stays
        // active while something is due now, else waits in eg_timers.
        p.eg_timers.pop_due(now, [&](std::uint32_t i) noexcept { mark_egress(p, i); });
        const std::uint32_t seq = __atomic_load_n(&p.link_seq, __ATOMIC_ACQUIRE);
        if (seq != p.link_seen) [[unlikely]] {
            p.link_seen = seq;
            for (std::size_t i = 0; i < p.ports.size(); ++i) { mark_egress(p, i); }
        }
        for (std::size_t wi = 0; wi < p.eg_active.size(); ++wi) {
            std::uint64_t ahead = p.eg_active[wi];
            while (ahead != 0) {
                const auto bit = static_cast<unsigned>(std::countr_zero(ahead));
                port_rt& eg = *p.ports[wi * 64 + bit];
                egress_step(eg);
                settle_egress(p, eg, now);
                ahead = bit == 63 ? 0 : p.eg_active[wi] & (~std::uint64_t{0} << (bit + 1));
            }
        }
    }
    if (p.multi && !w.owed_list.empty()) { send_credits(p, w); }
    return work;
}

void switch_pipeline::release_all() noexcept {
    if (!_p) { return; }
    impl& p = *_p;
    // The workers have stopped. Frames still between them are taken as their
    // owner would take them (queued, or parked for a neighbour), then
    // everything queued is flushed as with one worker.
    if (p.multi) {
        for (int guard = 0; guard < 100000; ++guard) {
            bool busy = false;
            for (auto& w : p.workers) {
                for (std::size_t k = 0; k < w->peers.size(); ++k) {
                    if (k == w->id) { continue; }
                    if (w->peers[k].n_stage != 0 || !w->peers[k].stash.empty()) {
                        flush_stage(p, *w, k);
                        busy = true;
                    }
                }
            }
            for (auto& w : p.workers) {
                if (drain_in(p, *w, w->last_now) != 0) { busy = true; }
            }
            if (!busy) { break; }
        }
    }
    for (auto& w : p.workers) {
        if (w->neigh) {
            w->neigh->drop_all_held([&](const held_frame& h) noexcept { drop_held(p, *w, h, drop_reason::neigh_unresolved); });
        }
    }
    for (auto& pp : p.ports) {
        worker_rt& w = *p.workers[pp->owner];
        for (int q = 0; q < 8; ++q) { flush_queue(p, w, *pp, q); }
        for (std::uint16_t i = 0; i < pp->n_staged; ++i) { rte_pktmbuf_free(pp->staged[i]); }
        w.c[pp->idx].tx_flushed += pp->n_staged;
        pp->n_staged = 0;
        if (pp->pfc_pending != nullptr) {
            rte_pktmbuf_free(pp->pfc_pending);
            pp->pfc_pending = nullptr;
        }
    }
    if (p.multi) {  // buffer owed between workers goes home
        for (int guard = 0; guard < 100000; ++guard) {
            bool busy = false;
            for (auto& w : p.workers) {
                if (!w->owed_list.empty()) {
                    send_credits(p, *w);
                    busy = true;
                }
            }
            for (auto& w : p.workers) { (void)drain_in(p, *w, w->last_now); }
            if (!busy) { break; }
        }
    }
}

}  // namespace rocelab::sw
