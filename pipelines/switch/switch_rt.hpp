// switch_rt.hpp - the switch pipeline's run-time state, shared by its
// stages: a port (its egress unit, egress_port.hpp, plus what its ingress
// needs), a worker (its ports, counters, FDB copy, neighbours and its links
// to the other workers), the pipeline (impl), and switch_env: what the
// egress unit asks of the worker that runs it.
//
// Private to pipelines/switch (switch_pipeline.cpp, switch_control.cpp).
#pragma once

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/endian.hpp"
#include "core/line_vector.hpp"
#include "core/spsc_queue.hpp"
#include "core/spsc_ring.hpp"
#include "core/timer_heap.hpp"
#include "fwd/fdb.hpp"
#include "fwd/neigh_table.hpp"
#include "dpdk/lpm.hpp"
#include "qos/mmu.hpp"
#include "switch/egress_port.hpp"
#include "switch/frame_meta.hpp"
#include "switch/switch_pipeline.hpp"
#include "stage_clock.hpp"

namespace rocelab::sw {

// A forwarding verdict's special values (else: the egress port index).
constexpr std::uint16_t out_drop = 0xFFFF;
constexpr std::uint16_t out_consumed = 0xFFFE;  // >= out_consumed: free without forwarding
constexpr std::uint16_t out_flood = 0xFFFD;
constexpr std::uint16_t out_held = 0xFFFC;  // parked for neighbour resolution (or handed over): owned elsewhere now
constexpr std::uint16_t out_handled = 0xFFFB;  // dropped and freed where it was decided (counted)

// A port: its egress unit, and what its ingress (RX, classification, PFC
// received, ICMP errors) reads.
struct port_rt : egress_port {
    trust_mode trust = trust_mode::dscp;
    std::uint8_t pfc_enable = 0;
    std::uint16_t owner = 0;  // the worker that polls its RX and runs its egress (queues, scheduler, PFC)
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
        : egress_port(pc, pb, i, link), trust(pc.trust), pfc_enable(pc.pfc_enable) {
        for (const auto& a : pc.addresses) {
            if (!a.v6 && !has_src4) {
                icmp_src4 = load_be32(reinterpret_cast<const std::byte*>(a.addr.data()));
                has_src4 = true;
            } else if (a.v6 && !has_src6) {
                std::memcpy(icmp_src6.data(), a.addr.data(), 16);
                has_src6 = true;
            }
        }
    }
};

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
    rx,       // received on an RSS queue of `port` (this worker's) by another worker, and one
              // that only the port's owner may act on (MAC Control; L3: ARP, ICMP, ND, to the
              // switch): taken as if received here
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

// ---- per-stage cycle counters (bench builds only: -Dstage_cycles=true) ----
enum class stage_id : std::uint8_t { l2_rx, ingress, lpm_bulk, route_admit, drain, handoff_in, handoff_out, count };
inline constexpr const char* stage_names[] = {"l2: rx, parse, bridge, admit", "l3: rx, parse, classify",
                                              "l3: bulk LPM", "l3: route, admit",
                                              "egress: drain (PFC, scheduler, shaper, tx)", "worker link: in",
                                              "worker link: out"};
// ---- RSS: a port's RX over several workers (docs/architecture.md, "RSS") ----
//
// Queue 0 of a port is polled by its owner; queue q by worker (owner + q) %
// workers. Such a worker runs the whole ingress for the frames it receives
// (parse, classify, bridge or route, admission to the egress port), but
// only the owner writes the port's PGs. So it charges them from credit: bytes
// the owner charged to (port, PG) for it. A frame with no credit for its PG
// waits, in arrival order with every frame after it, while the owner charges
// it (one request per frame, answered in order: its bytes, plus a chunk of
// credit when the PG is out of XOFF and has room under its threshold, or a
// refusal: lossy limit or headroom overflow, as for the owner's own frames).
// The PG's use is the frames buffered plus the credit held: exact, and never
// less than what is buffered; credit held idle goes back to the owner.
enum class rss_state : std::uint8_t { waiting, granted, refused_lossy, refused_headroom };
struct rss_parked {
    rte_mbuf* m = nullptr;
    std::uint32_t bytes = 0;  // the charge asked for (its length + a VLAN tag, in cells)
    std::uint8_t pg = 0;
    rss_state state = rss_state::waiting;
};
struct rss_rx {
    static constexpr std::uint32_t park_slots = 256;  // frames waiting for credit; then the queue is not read
    std::uint16_t port = 0, queue = 0;
    std::array<std::uint64_t, 8> credit{};  // bytes charged to (port, PG) by its owner, not drawn yet
    std::array<rss_parked, park_slots> park{};
    std::uint32_t head = 0, count = 0;      // the waiting frames, in arrival order
    std::uint32_t requested = 0;            // the first `requested` of them have a request out,
    std::uint32_t resolved = 0;             // the first `resolved` an answer
    nanos last_rx{0};
    rss_parked& at(std::uint32_t k) noexcept { return park[(head + k) % park_slots]; }
};
// A grant's refusal flags (credit::tag, above the port and PG).
constexpr std::uint32_t grant_refused_lossy = 1u << 24, grant_refused_headroom = 1u << 25;

struct worker_rt {
    static constexpr std::size_t handoff_slots = 2048;  // per worker pair
    static constexpr std::size_t rss_slots = 1024;      // credit requests outstanding per worker pair
    static constexpr std::uint32_t rss_chunk = 16 * 1024;  // credit granted ahead, per request that found none
    static constexpr std::int64_t rss_idle_ns = 20'000;    // credit held this long without a frame goes back
    static constexpr std::size_t credit_slots = 4096;
    static constexpr std::size_t learn_slots = 1024;
    static constexpr std::size_t stage_max = 64;        // frames per destination before a push

    // What this worker produces for one other worker (it is the single
    // producer of these queues; that worker the single consumer).
    struct alignas(64) peer {
        // The queues, set up once: that worker reads these pointers at
        // every poll (drain_in), so nothing this worker writes per frame
        // shares their cache line.
        std::unique_ptr<spsc_queue<handoff, handoff_slots>> frames;
        std::unique_ptr<spsc_queue<credit, credit_slots>> credits;
        std::unique_ptr<spsc_queue<learn_msg, learn_slots>> learns;
        // RSS: credit requests for that worker's ports (this worker polls
        // some of their queues), and its answers to that worker's requests.
        std::unique_ptr<spsc_queue<credit, rss_slots>> rss_req, rss_grant;
        // This worker's alone, from the next cache line on (a stage shared
        // a line with the pointers above: the two CPUs took the line from
        // each other per frame handed out).
        alignas(64) std::array<handoff, stage_max> stage{};
        std::uint16_t n_stage = 0;
        // Lossless frames the full queue did not take: kept in order, still
        // charged to their ingress PG, pushed first at the next flush. Linked
        // through the frames (frame_meta): it holds whatever the buffer
        // model admitted, so a full handoff queue never drops a lossless frame.
        frame_fifo stash;
        std::uint32_t rss_out = 0;  // requests sent to that worker, not answered yet
    };

    std::uint16_t id = 0;
    std::vector<std::uint16_t> ports;  // owned: RX, egress queues, scheduler, shaper, PFC
    std::vector<port_counters> c;      // this worker's counts per port (readers sum the workers)
    std::unique_ptr<fdb> table;        // L2: this worker's copy (learns replayed from the others)
    std::unique_ptr<neigh_table<held_frame>> neigh;  // L3: neighbours behind its own ports
    nanos neigh_next{0};
    // The neighbour listing another thread asks for while this worker runs
    // (switch_pipeline::neighbors_live): it bumps req; the worker, in
    // neighbour_step, copies its table into rows (allocated at create) and
    // publishes done = req (release). Rows are written only between a new
    // req and its done, and read only after that done.
    struct neigh_list_box {
        std::vector<neigh_listed> rows;
        std::size_t n = 0;
        std::uint32_t req = 0;   // written by the reader (relaxed atomic)
        std::uint32_t done = 0;  // written by the worker (release)
    } neigh_list;
    nanos last_now{0};
    // This poll left frames for another worker that its full handoff queue
    // did not take (stashed lossless frames, refused lossy ones): the
    // worker waits on that worker (switch_pipeline::worker_waits).
    bool waits_on_peer = false;
    // L3, ROCELAB ecmp_local_bias: per ECMP group, its members on this
    // worker's ports (nh_table::local_subgroups); ecmp_bias points at them,
    // or is nullptr (every member, the default).
    std::vector<nh_group> ecmp_local;
    const nh_group* ecmp_bias = nullptr;
    std::int64_t icmp_tat = INT64_MIN / 4;  // ICMP error rate (GCRA), per worker
    spsc_ring<switch_event, 1024> events;   // for the control thread
    std::vector<peer> peers;                // [worker]; empty with one worker
    // [worker]: what that worker produces for this one (its peers[id]), set
    // once at start-up. drain_in reads these instead of the other worker's
    // worker_rt, whose vectors share lines with fields it writes per poll.
    std::vector<peer*> inbound;
    // Written per frame handed in: on cache lines of their own (line_vector.hpp).
    line_vector<std::uint64_t> owed;        // [port * 8 + pg]: bytes released here for other workers' ports
    line_vector<std::uint16_t> owed_list;   // indices of owed[] that are non-zero
    // RSS: the other queues of its own ports that this worker polls (port,
    // queue), the queues of other workers' ports (with their credit), and
    // for each port the index of its entry in rss (-1: none).
    std::vector<std::pair<std::uint16_t, std::uint16_t>> extra_rx;
    std::vector<rss_rx> rss;
    bool polls_rss = false;  // == !rss.empty(), one byte for release_frame's test per frame
    std::vector<std::int16_t> rss_of_port;
    worker_counters st{};
#ifdef ROCELAB_STAGE_CYCLES
    std::array<stage_count, static_cast<std::size_t>(stage_id::count)> stages{};
#endif
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
    // buf->charge_for(worker_rt::rss_chunk): the RSS credit a grant adds
    // ahead and release_frame keeps at most (set with buf).
    std::uint32_t rss_chunk_charge = 0;
    // ICMP errors (ROCELAB icmp_errors / icmp_rate): GCRA, one per interval, burst 50.
    bool icmp_on = true;
    std::int64_t icmp_interval = 1'000'000;
    std::int64_t icmp_tau = 49'000'000;
    std::vector<neigh_cfg> static_neigh;  // for the listing
    std::mutex neigh_list_mu;             // neighbors_live: one listing at a time (control threads)
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


// A port may have egress work (see impl::eg_active).
[[gnu::always_inline]] inline void mark_egress(switch_pipeline::impl& p, std::size_t port) noexcept {
    if (p.track) { p.eg_active[port >> 6] |= std::uint64_t{1} << (port & 63); }
}

// Release `bytes` charged to the (port, PG) in `tag`: here when this worker
// owns that ingress port, else owed to its owner (sent back at the end of
// the poll as one credit per (port, PG): worker_link.hpp).
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

// A frame's charge released (it left, or was dropped): as release_tag, but
// a worker that polls an RSS queue of the frame's ingress port (another
// worker's) keeps up to rss_chunk of it as credit for that (port, PG)
// instead of sending it home: the bytes stay charged to the PG on its
// owner, now as credit held, so the PG's use (frames buffered + credit
// held) is as exact as before, and the next frames of that queue draw on
// it without a request. Without this every burst such a worker sent cost a
// credit message home and a request for more. Held credit goes home when
// the queue is idle for rss_idle_ns (rx_rss) and at shutdown; holding at
// most a chunk, as a grant gives one, delays the PG's XON by at most a
// chunk's drain.
[[gnu::always_inline]] inline void release_frame(switch_pipeline::impl& p, worker_rt& w, std::uint32_t tag,
                                                 std::uint64_t bytes) noexcept {
    // rss_of_port[port] >= 0 only for another worker's port: no owner test.
    if (w.polls_rss && p.buf && tag_charged(tag) && bytes != 0) [[unlikely]] {
        const std::int16_t ri = w.rss_of_port[static_cast<std::size_t>(tag_port(tag))];
        if (ri >= 0) {
            std::uint64_t& c = w.rss[static_cast<std::size_t>(ri)].credit[tag_pg(tag)];
            if (c < p.rss_chunk_charge) {
                const std::uint64_t k = std::min<std::uint64_t>(bytes, p.rss_chunk_charge - c);
                c += k;
                bytes -= k;
            }
        }
    }
    release_tag(p, w, tag, bytes);
}

// Does a frame with this tag belong to a lossless PG (charged to it, or a
// flood copy of a frame charged to it)? Such a frame leaves only by
// transmission, link down or the PFC watchdog: it is never dropped for a
// full handoff queue (it waits in the stash) nor by WRED.
inline bool tag_lossless(const switch_pipeline::impl& p, std::uint32_t tag) noexcept {
    return p.buf && (tag & tag_none) == 0 && p.buf->lossless(tag_port(tag), tag_pg(tag));
}

// Charge a frame of `xlen` bytes and traffic class tc to its ingress PG
// (in's, owned by this worker): its acct_tag, or tag_refused when the
// ingress buffer refused it (counted on in: lossy limit or headroom
// overflow; freed). A plain word, not std::optional: when switch_env::charge
// was a call, an optional<uint32_t> returned through the stack was two
// stores read back as one 8-byte load, a store-forwarding stall that cost
// the bridge ~9 % at 74 B (perf annotate).
//
// A frame this worker received on an RSS queue of another worker's port is
// charged from the credit that worker granted (rss_rx): the RSS poll took
// none of it before it checked that the frame's charge is there, so a
// received frame always finds it. Only a frame the switch makes from a
// received one (an ICMP error, which may be longer) can find too little:
// dropped by name (drop_rss_no_credit).
[[gnu::noinline]] inline std::uint32_t charge_credit(switch_pipeline::impl& p, worker_rt& w, port_rt& in, rte_mbuf* x,
                                                     std::uint8_t pg, std::uint32_t xlen) noexcept {
    const std::int16_t ri = w.rss_of_port[in.idx];
    const std::uint64_t c = p.buf->charge_for(xlen);
    if (ri >= 0 && w.rss[static_cast<std::size_t>(ri)].credit[pg] >= c) {
        w.rss[static_cast<std::size_t>(ri)].credit[pg] -= c;
        return acct_tag(in.idx, pg);
    }
    w.c[in.idx].drop(drop_reason::rss_no_credit);
    rte_pktmbuf_free(x);
    return tag_refused;
}

// A frame the ingress buffer refused: counted on its port, freed.
[[gnu::noinline]] inline std::uint32_t charge_refused(worker_rt& w, port_rt& in, rte_mbuf* x, admit_verdict v) noexcept {
    w.c[in.idx].drop(v == admit_verdict::drop_lossy ? drop_reason::lossy_pg_limit : drop_reason::headroom_overflow);
    rte_pktmbuf_free(x);
    return tag_refused;
}

//
// charge_owned: for a port this worker owns (the port's own RX, handoffs to
// its owner); charge_ingress: for any port (an RSS frame draws on credit).
// charge_tagged: charge_owned from the tag the frame will carry (acct_tag
// of a port this worker owns): the admission path has read the PG already
// (charge_tag), and a second read through p.ports put a chain of loads on
// every frame. The data path of a port's own RX burst takes charge_tagged
// through switch_env, with no ownership test per frame (one cost the bridge
// ~3 % at 74 B, A/B 2026-12-05); every other path that may carry another
// worker's frame (RSS bursts, flood originals, handoff_out) takes
// charge_ingress.
[[gnu::always_inline]] inline std::uint32_t charge_tagged(switch_pipeline::impl& p, worker_rt& w, std::uint32_t tag,
                                                          rte_mbuf* x, std::uint32_t xlen) noexcept {
    const int port = tag_port(tag);
    // In a run of the PG's frames when one worker runs (mmu::admit_in_run;
    // poll_worker settles it at the end of each poll).
    const admit_result r = p.buf->admit_in_run(port, tag_pg(tag), xlen);
    mark_egress(p, static_cast<std::size_t>(port));  // its PGs may enter XOFF
    if (!r.ok()) [[unlikely]] { return charge_refused(w, *p.ports[static_cast<std::size_t>(port)], x, r.verdict); }
    return tag;
}
[[gnu::always_inline]] inline std::uint32_t charge_owned(switch_pipeline::impl& p, worker_rt& w, port_rt& in,
                                                         rte_mbuf* x, std::uint8_t tc, std::uint32_t xlen) noexcept {
    return charge_tagged(p, w, acct_tag(in.idx, in.maps.tc_to_pg[tc]), x, xlen);
}
[[gnu::always_inline]] inline std::uint32_t charge_ingress(switch_pipeline::impl& p, worker_rt& w, port_rt& in,
                                                           rte_mbuf* x, std::uint8_t tc, std::uint32_t xlen) noexcept {
    if (in.owner != w.id) [[unlikely]] { return charge_credit(p, w, in, x, in.maps.tc_to_pg[tc], xlen); }
    return charge_owned(p, w, in, x, tc, xlen);
}

// What a port's egress unit needs from the worker that runs it (see the
// contract in egress_port.hpp).
struct switch_env {
    switch_pipeline::impl& p;
    worker_rt& w;
    dpdk::capture* capture;
    port_counters& c(std::size_t port) const noexcept { return w.c[port]; }
    mmu* buf() const noexcept { return p.buf.get(); }
    rte_mempool* pool() const noexcept { return p.pool; }
    dpdk::capture* cap() const noexcept { return capture; }
    bool wred_at_enqueue() const noexcept { return p.wred_at_enqueue; }
    [[gnu::always_inline]] void mark(std::size_t port) const noexcept { mark_egress(p, port); }
    [[gnu::always_inline]] void release(std::uint32_t tag, std::uint64_t bytes) const noexcept {
        release_frame(p, w, tag, bytes);
    }
    bool lossless(std::uint32_t tag) const noexcept { return tag_lossless(p, tag); }
    // Charge the (port, PG) that `tag` (an acct_tag) names; that port is
    // this worker's (any_port_env: any port).
    [[gnu::always_inline]] std::uint32_t charge(std::uint32_t tag, rte_mbuf* x, std::uint32_t xlen) const noexcept {
        return charge_tagged(p, w, tag, x, xlen);
    }
    void event(const switch_event& e) const noexcept { (void)w.events.push(e); }
};

// The same, for frames that may come from another worker's port (RSS): the
// charge draws on that port's credit there.
struct any_port_env : switch_env {
    std::uint32_t charge(std::uint32_t tag, rte_mbuf* x, std::uint32_t xlen) const noexcept {
        port_rt& in = *p.ports[static_cast<std::size_t>(tag_port(tag))];
        if (in.owner != w.id) [[unlikely]] { return charge_credit(p, w, in, x, static_cast<std::uint8_t>(tag_pg(tag)), xlen); }
        return charge_tagged(p, w, tag, x, xlen);
    }
};

// The tag a frame from `in` of class tc will carry once charged (0 without accounting).
inline std::uint32_t charge_tag(const switch_pipeline::impl& p, const port_rt& in, std::uint8_t tc) noexcept {
    return p.buf ? acct_tag(in.idx, in.maps.tc_to_pg[tc]) : 0u;
}

}  // namespace rocelab::sw
