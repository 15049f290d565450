// gen_pipeline.hpp - the closed-loop RoCEv2 traffic generator data path.
//
// Where the code lives: this one class, its member functions split by stage
// over pipelines/gen/ (the map, and the inline helpers the stages share:
// gen_stages.hpp): gen_rx.cpp (rx below), gen_responder.hpp/.cpp (the
// responder's ACK/NAK and the DCQCN notification point), gen_requester.cpp
// (per-flow service: timeouts, completions, posting), gen_pacer.cpp (pacing,
// the reaction point's rate, ready QPs, next deadline), gen_tx.cpp (tx below,
// data frames), gen_collectives.cpp, gen_setup.cpp (create()'s steps) and
// gen_pipeline.cpp (the composition: create, poll_worker, deadlines, release).
//
// What: emulated hosts on DPDK ports, each flow one RC QP: a requester on its
// source host's port and a responder on its destination host's port (one
// process can hold both ends). One lcore polls every port:
//   rx  rte_eth_rx_burst -> [optional link delay line] -> parse_frame ->
//       MAC Control: PFC/PAUSE into the port's pause_timer (quanta at the
//         port rate), counted;
//       ARP request or ICMPv6 Neighbor Solicitation for a local host:
//         answered in place (ND: Solicited+Override, no Router flag);
//       RoCEv2 (over IPv4 or IPv6) to a local host: loss injection (data / ACK direction, seeded),
//         ICRC check (bad ICRC dropped and counted, never accepted), QPN
//         lookup (a flat table per port), then the responder (data; its
//         ACK/NAK reply is built at once and queued on the port's reply
//         ring) or the requester (ACK/NAK via on_aeth);
//       everything else dropped into a named counter.
//   tx  per port: pending frames first (a refused tx burst is retried, never
//       dropped), then replies and PFC-source frames, then data: round robin
//       over the port's QPs, a burst of up to max(1, max_burst / QPs)
//       packets per QP per visit, while the port's line-rate cap (shaper,
//       24 B/frame overhead) and the QP's pacer (shaper at the flow rate, ns
//       resolution against the TSC) conform and the QP's PFC priority is not
//       paused; unshaped (rate 0) shapers are not called.
//   Delay line (link_delay): sized to both mbuf pools, never overflows;
//   create() refuses a window whose frames in flight the pools cannot hold
//   (check_in_flight). Due frames leave it while the reply ring has room.
//   Per loop: ACK timeouts (poll_timeout), completions (FCT samples kept in a
//   preallocated array per flow), message arrivals (message_source), or for
//   a collective the step gate instead (coll_post). Rings (all-reduce,
//   all-gather, reduce-scatter): a flow posts message k once its message k-1
//   is ACKed and its predecessor flow's responder has received k-1.
//   alltoall: a host's flows post iteration k once its H-1 messages of k-1
//   are ACKed and the H-1 sent to it have arrived (its port's counters).
//   Every gate reads only its own host's state. Each flow records when it
//   posted and completed each message (preallocated); collectives() derives
//   the collective and step times from them after the run, the same for any
//   polling order or thread count.
//
// Data frames (tx_payload, --tx-payload): the payload bytes are a constant
// pattern (byte i of a packet's payload = i & 0xFF, whatever the message
// offset), so every frame with L payload bytes carries the same payload. Its
// CRC (with the pad) and the crc32_combine operator for its length are
// precomputed per length at create() (tables up to the largest PMTU), and each
// frame's ICRC is CRC(masked IP..extended headers) combined with it
// (roce_icrc_with_payload_crc_op): the per-frame CRC covers ~56 bytes.
//   build      reference path: build_roce_v4 copies the payload and runs the
//              CRC over the whole IP datagram (as the switch tests do).
//   copy       headers written here, payload memcpy'd from the pattern,
//              ICRC by combination; one mbuf from the common pool.
//   prefilled  (default) full-PMTU packets come from a second pool whose
//              mbufs hold the pattern at a fixed buffer offset (written once
//              at create()); the headers go right before it (data_off moves
//              by the header length, so WRITE FIRST with RETH and MIDDLE
//              share the offset), nothing touches the payload per frame.
//              Shorter packets (the last of a message) and a failed
//              allocation from that pool fall back to copy. Nothing writes
//              into those mbufs' payload areas: an ACK to a frame received
//              in such an mbuf (loopback) is built into a fresh mbuf.
//   no-icrc    benchmark only: prefilled with the ICRC left 0 (frames are
//              invalid), to measure what the ICRC costs.
// A frame stays one segment (net_null copy=1 and most NICs read the first
// segment fastest; a 3-segment header | shared payload | ICRC chain costs
// three mbufs and two atomic refcount updates per frame).
//
// Transmit-only benchmark mode (gen_tx_opts::tx_only, --tx-only): no
// receiver. Each QP's burst is acknowledged by the requester itself as it
// is sent (one cumulative on_ack with the burst's last PSN and the MSN a
// responder would return; also when the window fills mid-burst), so the
// window and the ACK timeout never hold it; messages complete (FCT = time to
// send them) and closed-loop sources re-post. Frames are real RC WRITE/SEND
// frames with increasing PSNs and correct ICRCs. The ports' rx queues are
// not polled (no PFC/PAUSE is seen; a sink such as net_null,copy=1 that
// returns frames on rx costs nothing).
//
// Nothing on the data path allocates (mbufs come from the pool), locks, logs
// or throws; every drop has a named counter (gen_port_counters). The control
// thread reads the counters with relaxed loads (read_counter).
//
// Counters (per port): rx/tx packets and bytes, rx_mac_control, rx_pfc,
// rx_pause, tx_pfc, rx_arp, arp_replies, rx_nd, nd_replies, malformed[parse_status],
// rx_bad_icrc, rx_unknown_qpn, rx_not_local, rx_non_roce, rx_cnp,
// rx_unsupported_opcode, rx_multiseg, loss_data, loss_ack,
// drop_delay_full, drop_reply_full, replies_coalesced, tx_alloc_fail, tx_retry;
// paused time per priority from the pause_timer.
// Per flow: requester_counters, responder_counters, FCT samples.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "config/gen_config.hpp"
#include "core/counter.hpp"
#include "core/fixed_ring.hpp"
#include "core/line_vector.hpp"
#include "core/rng.hpp"
#include "core/timer_heap.hpp"
#include "core/units.hpp"
#include "dpdk/port_io.hpp"
#include "proto/ack_template.hpp"
#include "proto/build.hpp"
#include "proto/parse.hpp"
#include "qos/pause_timer.hpp"
#include "qos/shaper.hpp"
#include "roce/arrivals.hpp"
#include "roce/dcqcn.hpp"
#include "roce/loss.hpp"
#include "roce/requester.hpp"
#include "roce/responder.hpp"
#include "stage_clock.hpp"
#include "worker_view.hpp"

struct rte_mbuf;
struct rte_mempool;

namespace rocelab::dpdk {
class capture;
}

namespace rocelab::gen {

inline constexpr std::uint16_t max_burst = 32;

using rocelab::read_counter;  // core/counter.hpp

enum class tx_payload : std::uint8_t { build, copy, prefilled, no_icrc };
const char* tx_payload_name(tx_payload m) noexcept;
bool tx_payload_parse(const std::string& s, tx_payload& out) noexcept;

struct gen_tx_opts {
    bool tx_only = false;  // self-acknowledge at send time (benchmark mode, no receiver)
    tx_payload payload = tx_payload::prefilled;
    // prefilled: an external pool of prefilled mbufs, shared by the
    // generators of one process (rocelab-fabric) and not owned: its mbufs
    // hold gen_pipeline::prefill()'s pattern for this generator's largest
    // pmtu, and its data room is at least prefilled_data_room(that pmtu).
    // Null: the pipeline creates its own (mbufs of them).
    rte_mempool* prefilled_pool = nullptr;
    // mbufs taken per refill of a port's stock (1..max_burst). A real-time
    // burst sends up to max_burst frames, so it takes that many at once; in
    // virtual time a poll sends about one frame, and 64 ports' stocks of
    // max_burst would hold thousands of mbufs that go cold before their
    // turn, so rocelab-fabric takes a few at a time. Which mbuf a frame
    // gets changes nothing in it.
    std::uint16_t stock_bulk = max_burst;
    // How far ahead of its paced time a frame may go: the burst tolerance of
    // each QP's pacer and of each port's line cap is at least this much time
    // (besides 2 and 4 frames). A real-time poll sends up to max_burst frames
    // at one `now`, and polls come a few microseconds apart: with 2 frames
    // of tolerance a QP paced at 400Gbps sent 3 frames per poll, 0.54x the
    // unpaced rate (docs/benchmarks.md, 2026-12-05). 1 us lets a poll send a
    // whole burst at high rates (45 frames of 1 KB at 400Gbps), and below
    // ~10Gbps changes nothing. Virtual time polls at each frame's own time,
    // so rocelab-fabric keeps it 0 there: exact pacing, as before.
    nanos pace_ahead{1000};
    // Tests: every QP's frames through tx_port's checked loop (pacer, line
    // cap, credits and DCQCN asked before each frame) instead of in bursts
    // where only the pacer and the line cap can hold them. The frames are
    // the same; the tests compare the two.
    bool per_frame_checks = false;
};

// A port as the pipeline sees it (dpdk/port_io.hpp); the generator uses
// line_rate (cap and pause quanta; 0 = unknown, unshaped), not `shaped`.
using port_binding = dpdk::port_binding;

struct alignas(64) gen_port_counters {
    std::uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
    std::uint64_t rx_mac_control = 0, rx_pfc = 0, rx_pause = 0, tx_pfc = 0;
    std::uint64_t rx_arp = 0, arp_replies = 0, rx_nd = 0, nd_replies = 0;
    std::uint64_t rx_bad_icrc = 0, rx_unknown_qpn = 0, rx_not_local = 0, rx_non_roce = 0, rx_cnp = 0;
    std::uint64_t rx_unsupported_opcode = 0, rx_multiseg = 0;
    std::uint64_t loss_data = 0, loss_ack = 0;
    std::uint64_t drop_delay_full = 0, drop_reply_full = 0, tx_alloc_fail = 0, tx_retry = 0;
    std::uint64_t replies_coalesced = 0;  // ACK/NAKs folded into their QP's waiting reply (reply ring full)
    std::uint64_t tx_acks = 0, tx_naks = 0;
    std::uint64_t rx_ce = 0, tx_cnp = 0, drop_cnp_full = 0;  // DCQCN: CE-marked data in, CNPs out
    std::uint64_t tx_prefilled = 0, tx_copied = 0, tx_built = 0;  // data frames by payload path
    std::uint64_t malformed[parse_status_count]{};
    std::uint64_t rx_malformed_total = 0;
};

// A data frame's headers for one (flow, opcode kind, payload length), built
// once at create() with PSN 0, IP id 0 and AckReq 0. Per frame only the PSN
// (BTH), the IP id (= PSN & 0xFFFF), its checksum and AckReq change. The ICRC
// covers a fixed-length string here, so it is affine in those bytes:
// ICRC = icrc0 ^ T0[psn>>16] ^ T1[psn>>8 & 255] ^ T2[psn & 255] ^ (ack ? ackc : 0),
// with the tables (gen_pipeline::_ptab) holding each byte position's
// contribution (crc(byte at distance d from the end) ^ crc(zeros)).
struct alignas(64) frame_tpl {
    std::uint32_t len = 0;       // payload bytes
    std::uint32_t msg_size = 0;  // RETH DMA length it was built with
    std::uint32_t icrc0 = 0;
    std::uint32_t ackc = 0;
    std::uint16_t csum0 = 0;     // IPv4 checksum with id 0
    std::uint16_t tab = 0;       // index in _ptab
    std::uint8_t hl = 0;         // header bytes (0 = no template)
    std::uint8_t l2 = 0;
    std::uint8_t ipl = 20;       // IP header bytes: 20 (IPv4) or 40 (IPv6: no id, no checksum)
    std::uint16_t usum = 0;      // IPv6: ones' complement sum of the UDP checksum's inputs
                                 // without the PSN word pair and the ICRC (added per frame)
    // The hl header bytes at its end (right-aligned). Its last 64 bytes on a
    // line of their own: build_data's 64-byte load of them is not split.
    alignas(32) std::array<std::byte, 96> hdr{};
};
static_assert(offsetof(frame_tpl, hdr) + sizeof(frame_tpl::hdr) - 64 == 64);

// The slots of a flow's requester message table and completion ring
// (both sized alike, written at construction, so they cost set-up time and
// resident memory): what can be outstanding at once, at most 1024. A flow
// with a message count never has more than that; a closed loop outside a
// collective never more than its `outstanding`, since a message is released
// only when fewer are in flight and a table slot is freed when its message
// completes, before the loop counts it done. A collective posts messages
// itself, so its flows keep 1024. Nothing else depends on the size while no
// post is refused (post_rejected), which these bounds keep at 0.
inline std::uint32_t message_slots(const gen_cfg& cfg, const gen_flow& f) noexcept {
    std::uint64_t n = 1024;
    if (f.arrivals.count != 0) { n = std::min<std::uint64_t>(n, f.arrivals.count); }
    if (f.arrivals.kind == arrival_kind::closed_loop && !is_collective(cfg.pattern)) {
        n = std::min<std::uint64_t>(n, std::max<std::uint32_t>(f.arrivals.outstanding, 1));
    }
    return static_cast<std::uint32_t>(n);
}

struct flow_state {
    flow_state(const gen_flow& f, const qp_cfg& rq_cfg, const qp_cfg& rs_cfg, size_dist sizes,
               std::size_t fct_capacity, const dcqcn_cfg& rp_cfg, const dcqcn_np_cfg& np_cfg,
               dcqcn_cnp_limiter* port_limiter, std::uint32_t msg_capacity = 1024)
        : cfg(f), dcqcn(rp_cfg.enabled), rq(rq_cfg, msg_capacity, msg_capacity), src(f.arrivals, sizes), rp(rp_cfg), rs(rs_cfg),
          np(np_cfg, port_limiter) {
        fct_ns.reserve(fct_capacity);
        rs_cfg_ = rs_cfg;
    }
    // The fields come in three groups, each on cache lines of its own: what
    // create() sets and both ends only read, then the requester's side
    // (written by its source host's worker), then the responder's side
    // (written by its destination host's worker). In a virtual-time fabric
    // on several threads the two ends of a flow are often in different
    // partitions, and fields of both sides on one line would bounce between
    // the cores at every data frame and every ACK.

    // ---- set at create(), read by both ends ----
    gen_flow cfg;
    qp_cfg rs_cfg_;
    std::uint16_t src_port = 0;  // port indices
    std::uint16_t dst_port = 0;
    std::uint8_t prio_bit = 0;
    bool v6 = false;         // IPv6 hosts: data6/reply6 are used
    bool dcqcn = false;      // the RP is active (profile not off)
    roce_v4_params data{};   // addresses of the data direction
    roce_v4_params reply{};  // addresses of the reply direction
    // IPv4: this QP's ACK/NAK as a template (PSN, syndrome, MSN patched,
    // ICRC from tables); respond() builds from `reply` only without it.
    ack_template_v4 ack{};
    roce_v6_params data6{};
    roce_v6_params reply6{};
    std::array<frame_tpl, 4> tpl{};  // by kind: 0 first, 1 middle, 2 last, 3 only
    // The largest data frame the QP sends (mbuf bytes): its templates' when
    // every kind it sends has one, else PMTU + max_data_overhead.
    std::uint32_t max_frame = UINT32_MAX;  // (unset: shaper::frames_at then counts 1 frame at a time)
    std::uint32_t ring_pred = 0;  // ring collectives: the flow into this flow's source host
    std::uint32_t ring_succ = UINT32_MAX;
    std::uint32_t plane = 0;      // planes: the flow's plane and its source's server
    std::uint32_t server = 0;
    // Scheduling (gen_pipeline::service_flows): each side's place in its
    // worker's flow list, the QP's slot in its source port's list, and for
    // ring-allreduce the flow whose gate this flow's responder opens.
    std::uint32_t req_ref = UINT32_MAX;
    std::uint32_t resp_ref = UINT32_MAX;
    std::uint16_t req_worker = 0;
    std::uint16_t resp_worker = 0;
    std::uint32_t qp_slot = 0;

    // ---- the requester's side ----
    alignas(64) requester rq;
    message_source src;
    shaper pacer;
    bool finished = false;  // count reached and everything completed
    std::vector<std::uint64_t> fct_ns;  // reserved; never grows on the data path
    std::uint64_t fct_dropped = 0;
    nanos first_posted{-1};  // when the first message completed was posted (-1: none completed yet)
    nanos last_done{-1};     // when the newest message completed
    std::uint64_t posted = 0;
    // Collectives: when message k was posted and when it completed (ns),
    // preallocated to min(messages, cap); coll_recs completions recorded
    // (written by the flow's requester worker, read with acquire).
    std::vector<std::int64_t> coll_post;
    std::vector<std::int64_t> coll_done;
    std::uint64_t coll_recs = 0;
    // DCQCN (roce/dcqcn.hpp). Reaction point: this flow's requester; it sets
    // the pacer's rate. Notification point: this flow's responder; CE-marked
    // data arriving for it become CNPs to the requester's QP.
    dcqcn_rp rp;
    nanos rp_next = nanos::max();   // when rp.advance() next has work
    std::uint64_t cnp_rx = 0;       // CNPs received for the requester's QP
    // Pacing-rate statistics: integral of rate over time since rate_t0, for
    // the time-weighted mean in the report (rate_area_bits + rate x (end - rate_t)).
    double rate_area_bits = 0;
    nanos rate_t0{-1};
    nanos rate_t{0};
    std::vector<dcqcn_trace_rec> trace_store;  // --dcqcn-trace: preallocated, never grows
    std::unique_ptr<dcqcn_trace_buf> trace;

    // ---- the responder's side ----
    alignas(64) responder rs;
    dcqcn_np np;
    roce_v4_params cnp4{};          // this flow's CNP (responder -> requester), built per CNP
    roce_v6_params cnp6{};
    std::uint64_t cnp_tx = 0;       // CNPs sent by the responder
    std::uint64_t cnp_tx_fail = 0;  // CNPs decided but not sent (no mbuf, CNP ring full)
    // The responder's ACK/NAK waiting on its port's reply ring (not yet
    // sent), or null: a reply that finds the ring full overwrites it.
    rte_mbuf* queued_reply = nullptr;
};

// The flow's completion time: from its first message's post to its last
// message's completion so far (0 when none completed). Messages of a QP
// complete in order, so the first completion carries the first post; both
// are on the run clock, whatever its epoch.
inline nanos flow_fct(const flow_state& f) noexcept {
    return f.first_posted.v < 0 ? nanos{0} : f.last_done - f.first_posted;
}

// Goodput over the flow's completion time: the completed messages' bits /
// flow_fct, bit/s (0 when none completed). Goodput over the run divides by
// the whole run instead, so a flow that finished early reads lower there.
inline double goodput_over_fct(const flow_state& f) noexcept {
    const nanos t = flow_fct(f);
    return t.v > 0 ? double(f.rq.counters().bytes_completed) * 8 / (double(t.v) / 1e9) : 0.0;
}

// Time-weighted mean of flow f's pacing rate from its start to end_now (the
// worker clock's epoch is the run's start): the line rate until the first
// DCQCN change, then the recorded rate x time.
inline double mean_pacing_rate(const flow_state& f, const gen_cfg& cfg, nanos end_now) noexcept {
    (void)cfg;
    const double cur = double(f.pacer.rate().v);
    const nanos start = f.cfg.start;
    if (f.rate_t0.v < 0 || end_now <= start) {
        return cur;
    }
    const double span_s = double((end_now - start).v) / 1e9;
    const double before = double(f.rp.cfg().line_rate.v) * double((f.rate_t0 - start).v) / 1e9;
    const double after = cur * double((end_now - f.rate_t).v) / 1e9;
    return (before + f.rate_area_bits + after) / span_s;
}

// The stages of a worker's poll, for the per-stage cycle counters of a
// bench build (stage_clock.hpp): frames = frames received (rx), flow
// sides serviced (service), CNPs and data/reply/PFC frames sent (cnps, tx).
enum class gen_stage : std::uint8_t { rx, service, cnps, tx, count };
inline constexpr const char* gen_stage_names[] = {
    "rx: parse, responder, ACK/NAK/CNP to the requester", "requester service: timers, completions, posts",
    "tx: CNPs", "tx: PFC sources, replies, data (round robin, pacer, build), send"};

class gen_pipeline {
public:
    // workers: how many lcores run it. Ports are partitioned over them
    // (port i to worker i % workers, unless port_worker gives one per
    // port): a worker polls its ports' RX, sends on them, and serves the
    // requester side of every flow whose source port it owns (QPs, pacing,
    // DCQCN reaction point, message sources, timeouts, FCTs) and the
    // responder side of every flow whose destination port it owns (ACKs,
    // NAKs, the notification point's CNPs). A flow's two ends may so sit on
    // different workers; nothing of a port or of one side of a flow is
    // written by two workers. ring-allreduce's gate reads the predecessor's
    // responder counter (relaxed atomics); worker 0 keeps the ring's step
    // and collective times.
    static std::variant<std::unique_ptr<gen_pipeline>, std::string> create(const gen_cfg& cfg,
                                                                           std::vector<port_binding> ports,
                                                                           rte_mempool* pool,
                                                                           gen_tx_opts opts = {},
                                                                           unsigned workers = 1,
                                                                           const std::vector<unsigned>& port_worker = {});
    ~gen_pipeline();

    // One poll of every port; returns frames moved (worker 0's poll: with
    // one worker, everything).
    std::uint32_t poll(nanos now) noexcept;
    // Worker k's poll (its ports and its sides of the flows); each k from one thread.
    std::uint32_t poll_worker(std::size_t k, nanos now) noexcept;
    using worker_view = rocelab::worker_view<gen_pipeline>;
    // Worker k's frames and TSC cycles per stage (gen_stage), in a bench
    // build (meson -Dstage_cycles=true, stage_clock.hpp); empty otherwise.
    static constexpr bool stage_cycles_built = ::rocelab::stage_cycles_built;
    std::vector<stage_figures> stage_cycles(std::size_t k) const;
    std::size_t worker_count() const noexcept { return _workers.size(); }
    worker_view& worker(std::size_t k) noexcept { return *_views[k]; }
    const worker_view& worker(std::size_t k) const noexcept { return *_views[k]; }
    std::uint16_t port_worker(std::size_t port) const noexcept { return _owner[port]; }
    // Poll figures of the whole generator: the views summed (the longest
    // gap: the largest) plus this object's own (poll() driven directly).
    worker_view poll_totals() const noexcept;

    // After poll(now): the earliest time at which the pipeline has work of
    // its own (>= now), so a virtual-time engine can jump over idle time: a
    // requester's ACK timeout or RNR wait, a DCQCN timer, a deferred CNP, a
    // flow's start or next open-loop arrival, a QP that may send (when its
    // pacer and the port's line cap conform, or its pause expires), CNPs or
    // replies waiting, a PFC source's next frame, the delay line's head.
    // The QPs that may send are not walked: each port keeps its ready QPs in
    // a heap by pacer time (port_state::pace), and the earliest one answers
    // when it has started and its window is open (else, rarely, the walk).
    // nanos::max() when only an arriving frame can give it work. Not
    // included: frames waiting in an RX ring and ports whose TX refused
    // frames (the port I/O knows when its ring frees up).
    nanos next_deadline(nanos now) noexcept;
    // Worker k's own deadline (its ports and its sides of its flows): a
    // virtual-time fabric polls each worker as a node of its own (one per
    // host), each from one thread.
    nanos next_deadline_worker(std::size_t k, nanos now) noexcept;
    // From now on nobody asks next_deadline: the workers poll without pause
    // (rocelab-gen's lcores, rocelab-fabric --real-time). Then update_ready
    // keeps no pace heap, and reschedule only moves a flow's timer earlier:
    // a deadline that moved later (an ACK timeout after each ACK) fires at
    // its old time and the service it causes sets the new one. That upkeep
    // was a quarter of a worker's time per frame with 256 QPs in closed loop
    // (docs/benchmarks.md). One-way; next_deadline stays correct after it
    // (it walks the ready QPs, and a timer may answer early), only slower.
    void poll_continuously() noexcept;

    // Free every mbuf the pipeline holds (pending, replies, delay line).
    void release_all() noexcept;
    void set_capture(dpdk::capture* c) noexcept { _cap = c; }

    std::size_t port_count() const noexcept { return _ports.size(); }
    const port_binding& binding(std::size_t i) const noexcept { return _ports[i].b; }
    const gen_port_counters& counters(std::size_t i) const noexcept { return _ports[i].c; }
    const pause_timer& pauses(std::size_t i) const noexcept { return _ports[i].pt; }
    std::size_t flow_count() const noexcept { return _flows.size(); }
    const flow_state& flow(std::size_t i) const noexcept { return *_flows[i]; }
    // True when every flow has a message limit and has completed it.
    bool all_finished() const noexcept { return __atomic_load_n(&_all_finished, __ATOMIC_RELAXED); }
    // Every flow has a message limit: all_finished() can become true.
    bool can_finish() const noexcept { return _has_limit; }
    // Worker k has seen every flow it sends finish (all_finished(): every
    // worker's, as its last poll found them).
    bool worker_done(std::size_t k) const noexcept { return __atomic_load_n(&_workers[k]->done, __ATOMIC_RELAXED); }
    const gen_cfg& cfg() const noexcept { return _cfg; }
    const gen_tx_opts& tx_opts() const noexcept { return _opts; }
    // Collectives (pattern ring-allreduce, all-gather, reduce-scatter,
    // alltoall), from every flow's message records: per completed collective
    // its time (its first step-0 post to its last step's last ACK), and per
    // step index the summed duration and count (a step ends when every
    // flow's message of that step is ACKed; step 0 starts at the
    // collective's start, step s at the end of step s-1). `dropped`:
    // collectives past the records' capacity (not timed). Control path
    // (allocates); safe to call while workers run (status line).
    struct collective_figures {
        std::uint64_t done = 0;
        std::uint64_t dropped = 0;
        std::vector<std::uint64_t> ns;
        std::vector<std::uint64_t> step_sum_ns;
        std::vector<std::uint64_t> step_n;
    };
    bool ring() const noexcept { return _ring; }
    collective_figures collectives() const;
    // What collectives() derives the figures from, per flow: the
    // completions recorded, the messages completed, and each recorded
    // message's post and completion times ([recs] each). rocelab-fabric
    // over MPI ranks gathers them from the rank of each flow's requester.
    struct coll_flow_records {
        std::uint64_t recs = 0;
        std::uint64_t completed = 0;
        const std::int64_t* post = nullptr;
        const std::int64_t* done = nullptr;
    };
    static collective_figures collective_figures_of(std::uint64_t steps, const std::vector<coll_flow_records>& flows);
    // mbufs of the pipeline's own (prefilled) pool still in use; 0 after release_all at exit.
    std::uint64_t own_mbufs_in_use() const noexcept;
    // The prefilled pool's layout, for a pool shared by several generators:
    // the data room a prefilled mbuf needs for payloads of `pmtu` bytes, the
    // largest pmtu of a configuration's flows (after expand_gen_cfg), and
    // the per-mbuf fill (arg: the pmtu, as an integer in the pointer).
    static std::uint16_t prefilled_data_room(std::uint32_t pmtu) noexcept;
    static std::uint32_t max_pmtu_of(const gen_cfg& cfg) noexcept;
    static void prefill(void* pmtu, rte_mbuf* m) noexcept;
    // DCQCN: the reaction point's resolved parameters (same for every flow
    // but the line rate) and the notification point's.
    const dcqcn_np_cfg& np_cfg() const noexcept { return _np_cfg; }
    std::uint8_t cnp_prio() const noexcept { return _np_cfg.cnp_802p_prio; }

    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    // Set by the worker loop (app/runtime/worker_loop.hpp): the longest time
    // between two polls, and the stalls (idle polls followed by > 5 us
    // without a poll: the CPU was taken from the lcore) and their total.
    std::int64_t max_poll_gap_ns = 0;
    std::uint64_t stalls = 0;
    std::int64_t stalled_ns = 0;

private:
    struct delayed {
        rte_mbuf* m = nullptr;
        std::int64_t due = 0;
    };
    struct pfc_src_state {
        pfc_source_cfg cfg;
        std::int64_t next = 0;
        std::uint64_t sent = 0;
    };
    // mbufs allocated ahead in bulk (so a failed allocation never consumes a
    // packet: next() is only called with one in hand); freed by release_all.
    struct stock {
        std::array<rte_mbuf*, max_burst> m{};
        std::uint16_t n = 0;
    };
    struct port_state {
        port_binding b;
        stock stk;     // common pool (each port's: a port is one worker's)
        stock pf_stk;  // prefilled pool
        std::array<tx_desc, max_burst> descs{};  // tx_port: a QP's packets of a visit (next_burst)
        std::vector<std::uint32_t> hosts_ip;  // local IPv4 host addresses
        std::vector<std::array<std::uint8_t, 16>> hosts_ip6;  // local IPv6 host addresses
        std::vector<gen_host> hosts;
        std::vector<std::int32_t> qpn_table;  // QPN -> flow*2 + role (0 requester, 1 responder), -1 none
        std::vector<std::uint32_t> qps;       // flows whose requester is here
        std::uint32_t rr = 0;
        // Bit per qps slot: the QP has a packet it may send (window, posted
        // data; an RNR wait is checked when it is visited). tx_port's round
        // robin visits these only, in the same order as over every QP.
        line_vector<std::uint64_t> ready;  // on lines of its own: written per frame sent
        // The ready QPs again, by the time their pacer next lets them send
        // (an unpaced QP: at once, the earliest key): next_deadline_worker
        // reads the earliest instead of walking every ready QP.
        timer_heap pace;
        std::uint8_t qp_prios = 0;  // the PFC priorities of its QPs
        // alltoall: messages of its host's flows ACKed, and messages of
        // flows into it arrived (the gate of its flows' next iteration).
        std::uint64_t a2a_acked = 0;
        std::uint64_t a2a_arrived = 0;
        shaper line;
        pause_timer pt{0xff};
        fixed_ring<rte_mbuf*, 4096> replies;
        // CNPs: their own ring, staging and tx_burst call, ahead of data and
        // replies, in their own class (cnp_802p_prio): a PFC pause on the
        // RoCE priority or a refused data burst never holds them.
        fixed_ring<rte_mbuf*, 1024> cnps;
        std::array<rte_mbuf*, max_burst> cnp_pend{};
        std::uint16_t n_cnp_pend = 0;
        std::unique_ptr<dcqcn_cnp_limiter> cnp_limiter;  // per_port NP spacing
        // Delay line (link_delay): sized at create() to every mbuf the
        // pipeline can hold (both pools), so it can never overflow.
        std::vector<delayed> delay;
        std::uint64_t delay_head = 0;
        std::uint64_t delay_tail = 0;
        std::uint64_t delay_mask = 0;
        std::array<rte_mbuf*, max_burst> pend{};
        std::uint16_t npend = 0;
        std::vector<pfc_src_state> pfc;
        rng loss_rng{1};
        loss_injector data_loss;
        loss_injector ack_loss;
        gen_port_counters c;
    };

    gen_pipeline() = default;
    // create()'s steps, in this order (gen_setup.cpp); an error ends it.
    void setup_ports(const std::vector<port_binding>& ports);
    std::string setup_flows();
    void setup_collectives();
    void setup_payload();
    std::string setup_pools();
    std::string setup_workers(unsigned workers, const std::vector<unsigned>& port_worker);
    // The stages' member functions, by file (gen_stages.hpp has the map).
    // gen_rx.cpp
    std::uint32_t rx_port(std::size_t pi, nanos now) noexcept;
    void rx_frame(std::size_t pi, rte_mbuf* m, nanos now) noexcept;
    void queue_reply(port_state& ps, rte_mbuf* m, std::uint32_t len, std::uint64_t& sent) noexcept;
    bool icrc_ok(const std::byte* frame, const parsed_frame& pf) const noexcept;
    // gen_responder.hpp (inline: respond runs per data frame in rx_frame) and .cpp
    [[gnu::always_inline]] inline void respond(port_state& ps, flow_state& f, std::size_t fi, rte_mbuf* m,
                                               std::byte* p, const parsed_frame& pf, nanos now) noexcept;
    inline void forget_reply(rte_mbuf* m) noexcept;
    void send_cnp(flow_state& f, port_state& ps) noexcept;
    // gen_tx.cpp
    std::uint32_t tx_port(std::size_t pi, nanos now) noexcept;
    // tx_port's staging of one burst: the frames so far (out[0..n)), their
    // bytes (read before the PMD owns them), and what holds the port's data.
    struct tx_stage {
        rte_mbuf** out;
        std::uint16_t n;
        std::uint64_t bytes;
        nanos now;
        credit_tx* cr;            // credit mode: a priority without credits waits as if paused
        std::uint8_t paused;      // priorities held (PFC, out of credits)
        bool line_shaped = false;
        bool stop = false;        // no more data now (line cap, no mbufs)
        std::uint32_t quota = 0;  // frames per QP per visit
    };
    // --tx-only: a QP visit's frames, acknowledged once, cumulatively, at its
    // end or when the window fills.
    struct tx_ack {
        std::uint32_t psn = 0;
        std::uint32_t ends = 0;  // message ends among them
        bool unacked = false;
        [[gnu::always_inline]] inline void sent(const tx_desc& d, bool tx_only) noexcept;
    };
    // All inline in tx_port: t stays in registers (its address never
    // reaches an out-of-line call).
    [[gnu::always_inline]] inline void stage_pfc_sources(port_state& ps, tx_stage& t) noexcept;
    [[gnu::always_inline]] inline void stage_replies(port_state& ps, tx_stage& t) noexcept;
    [[gnu::always_inline]] inline void stage_data(port_state& ps, tx_stage& t) noexcept;
    [[gnu::always_inline]] inline std::uint32_t visit_burst(flow_state& f, port_state& ps, tx_stage& t,
                                                            tx_ack& a) noexcept;
    [[gnu::always_inline]] inline std::uint32_t visit_checked(flow_state& f, port_state& ps, tx_stage& t,
                                                              tx_ack& a) noexcept;
    [[gnu::always_inline]] inline bool ack_full_window(flow_state& f, nanos now, tx_ack& a) noexcept;
    [[gnu::always_inline]] inline std::uint32_t send_staged(std::size_t pi, port_state& ps, tx_stage& t) noexcept;
    rte_mbuf* build_data(flow_state& f, const tx_desc& d, port_state& ps) noexcept;
    rte_mbuf* build_data_generic(flow_state& f, const tx_desc& d, port_state& ps) noexcept;
    std::uint32_t tx_cnps(std::size_t pi, nanos now) noexcept;
    // gen_pacer.cpp
    static void apply_rate(flow_state& f, nanos now) noexcept;
    void update_ready(flow_state& f) noexcept;
    // gen_requester.cpp
    void self_ack(flow_state& f, nanos now, std::uint32_t psn, std::uint32_t ends) noexcept;

    gen_cfg _cfg;
    rte_mempool* _pool = nullptr;
    std::vector<port_state> _ports;
    std::vector<std::unique_ptr<flow_state>> _flows;
    std::vector<empirical_cdf> _cdfs;
    dpdk::capture* _cap = nullptr;
    nanos _link_delay{0};
    bool _all_finished = false;
    bool _has_limit = false;
    bool _deadlines = true;  // someone asks next_deadline (virtual time); see poll_continuously
    gen_tx_opts _opts;
    dcqcn_np_cfg _np_cfg{};
    // Collective state (control path sizes it; the data path only indexes).
    bool _ring = false;                // any collective (the name is historical)
    bool _a2a = false;                 // alltoall (else a ring)
    std::uint32_t _ring_steps = 0;
    std::uint64_t _ring_chunk = 0;
    std::uint64_t _ring_limit = 0;     // messages per flow (0 = unlimited)
    std::uint32_t _a2a_peers = 0;      // alltoall: H - 1
    // Planes (gen_cfg::planes): a server's flows, one per plane (flow
    // plane * servers + server), and the chunk each plane carries in the
    // server's current collective (striping; weighted: set at each
    // collective from the previous one's per-plane throughput).
    std::uint32_t _planes = 1;
    bool _weighted = false;
    struct server_state {
        std::uint64_t coll = 0;             // the collective `size` is for
        std::vector<std::uint64_t> size;    // bytes per message, per plane
    };
    std::vector<server_state> _servers;
    // gen_collectives.cpp
    std::uint64_t plane_chunk(flow_state& f, std::uint64_t k) noexcept;
    bool plane_gate(const flow_state& f, std::uint64_t k) const noexcept;
    void touch_server(std::uint32_t server) noexcept;
    std::uint32_t _ring_servers = 0;  // ring ranks (servers)
    void coll_post(flow_state& f, nanos now) noexcept;
    void coll_completed(flow_state& f, const msg_completion& c) noexcept;
    void coll_arrived(flow_state& f) noexcept;
    std::array<std::byte, 4096 + 4> _payload{};
    // Per payload length L (0..max PMTU): CRC of pattern[0..L) + pad, and
    // crc32_combine_gen(L + pad).
    std::vector<std::uint32_t> _pcrc;
    std::vector<std::uint32_t> _pop;
    // The combine step, crc1 * x^(8 L) mod P, is linear in crc1: for the hot
    // lengths (PMTU, each fixed-size flow's last packet) it is 4 lookups in
    // byte tables instead of crc32_combine_op's 32-step bit loop.
    using combine_table = std::array<std::array<std::uint32_t, 256>, 4>;
    std::vector<combine_table> _ctab;
    std::vector<std::int16_t> _ctab_of;  // payload length -> index in _ctab, -1 = none
    using psn_table = std::array<std::array<std::uint32_t, 256>, 3>;
    std::vector<psn_table> _ptab;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> _ptab_key;  // (header bytes, payload bytes)
    void make_templates(flow_state& f);  // gen_tx.cpp, as are icrc_of and refill
    std::uint32_t icrc_of(const std::byte* l3, std::uint32_t hdr_len, std::uint32_t len) const noexcept;
    rte_mempool* _pf_pool = nullptr;  // prefilled pool
    bool _pf_owned = false;           // created here (else shared: gen_tx_opts::prefilled_pool)
    std::uint32_t _pf_len = 0;        // payload bytes held by every prefilled mbuf
    std::uint16_t _room = 0;          // data room of the common pool (without headroom)
    // Fills an empty stock: raw for the prefilled pool (its mbufs keep
    // their payload), reset for the common pool.
    bool refill(stock& s, rte_mempool* mp, bool raw = false) noexcept;
    bool restock(stock& s, rte_mempool* mp, bool raw) noexcept;  // refill's call: s is empty

    // One worker's share: its ports, and the flows it serves one side of.
    struct flow_ref {
        std::uint32_t flow = 0;
        bool req = false;   // requester side (the flow's source port is this worker's)
        bool resp = false;  // responder side (its destination port)
    };
    // Cache lines of its own: its worker writes it at every poll.
    struct alignas(64) worker_state {
        std::uint16_t id = 0;
        std::vector<std::uint16_t> ports;
        std::vector<flow_ref> flows;  // in flow order
        rng arrivals_rng{1};          // message sizes and arrivals of its flows
        bool done = false;            // every flow it sends has finished (relaxed atomic)
        // Only flows with something to do are visited: a ref is serviced when
        // its deadline (timer_heap: ACK timeout, RNR end, DCQCN timer, CNP
        // due, start, next arrival) has come, or when a frame, a send or a
        // completion touched it (svc). An idle flow costs nothing per poll.
        timer_heap timers;
        line_vector<std::uint64_t> svc;  // bit per ref: service at the next poll (lines of its own)
        std::uint32_t n_svc = 0;
        std::uint32_t unfinished = 0;    // requester refs not finished (message limits)
#ifdef ROCELAB_STAGE_CYCLES
        std::array<stage_count, static_cast<std::size_t>(gen_stage::count)> stages{};  // bench builds
#endif
    };
    std::vector<std::unique_ptr<worker_state>> _workers;
    std::vector<std::unique_ptr<worker_view>> _views;
    std::vector<std::uint16_t> _owner;  // port -> worker
    // gen_requester.cpp (touch: inline, gen_stages.hpp)
    std::uint32_t service_flows(worker_state& w, nanos now) noexcept;  // returns the refs serviced
    inline void touch(flow_state& f, bool req_side) noexcept;
    inline bool req_touched(const flow_state& f) const noexcept;
    void reschedule(worker_state& w, std::uint32_t ref, nanos now) noexcept;
};

}  // namespace rocelab::gen
