// switch_pipeline.hpp - the rocelab-switch data path, as burst stages on one lcore.
//
// One switch_pipeline owns every port it is given and runs the whole switch:
//
//   rx_burst -> [checks + parse + classify] -> [forward: l2_bridge | l3_router]
//            -> egress_port::admit  [link, VLAN rewrite, watchdog, WRED at
//               enqueue, ingress charge, 8 queues with tail drop]
//   per port: egress_port::drain  [PFC TX, watchdog, strict + DWRR skipping
//               paused queues, WRED/ECN at dequeue, shaper] -> tx_burst
//
// Files (pipelines/switch/): egress_port.hpp (one port's egress: one
// admit(), one drain()), l2_bridge.hpp, l3_router.hpp (a verdict per
// frame), worker_link.hpp (handoff, credits and learns between workers),
// switch_rt.hpp (the run-time state they share), switch_pipeline.cpp (the
// ingress stage and one worker's poll), switch_control.cpp (create() and
// what the control thread reads). Nothing on the data path allocates,
// locks, throws or logs; every drop is a named counter (counters.hpp).
//
// Time: poll(now) takes `now` from the caller's clock (TSC in production,
// a virtual clock in the simulator). Nothing below reads a clock.
//
// Several workers (docs/architecture.md, "Several workers"): create(...,
// workers = N) partitions the ports over N workers; worker k runs
// poll_worker(k, now) on its own lcore. A worker owns its ports' RX, their
// ingress buffer accounting (per port and PG) and their egress (queues,
// scheduler, shaper, PFC, watchdog, neighbours). A frame for another
// worker's port is charged to its ingress PG here and handed over a
// lock-free SPSC queue; that worker queues it and sends the buffer release
// back over another. Counters are per worker and summed by every reader.
// With one worker (the default) nothing of this runs: poll(now) is
// poll_worker(0, now).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/switch_cfg.hpp"
#include "core/units.hpp"
#include "stage_clock.hpp"
#include "fwd/fdb.hpp"
#include "fwd/neigh_table.hpp"
#include "qos/mmu.hpp"
#include "dpdk/port_io.hpp"
#include "switch/counters.hpp"
#include "worker_view.hpp"

struct rte_mbuf;
struct rte_mempool;

namespace rocelab::dpdk {
class capture;
}

namespace rocelab::sw {

// A port as the pipeline sees it (id, name, MAC, rate, port I/O): dpdk/port_io.hpp.
using port_binding = dpdk::port_binding;

// An egress queue's figures. Its counters are one list for the struct and
// the reports that list them all, in that order (runtime::put_queue_counters:
// the JSON report's queues and /rocelab/queues; core/counter.hpp):
//   drop_packets, drop_bytes   tail drops
//   flushed_packets            discarded from the queue (shutdown, watchdog)
//   ecn_marked, wred_dropped   WRED_PROFILE: CE marks and WRED drops
// clang-format off
#define ROCELAB_SW_QUEUE_COUNTERS(X) \
    X(enq_packets) X(enq_bytes) X(deq_packets) X(deq_bytes) X(drop_packets) X(drop_bytes) \
    X(flushed_packets) X(ecn_marked) X(wred_dropped)
// clang-format on
struct queue_snapshot {
    std::uint64_t depth_bytes = 0;
    std::uint32_t depth_packets = 0;
    std::uint64_t max_depth_bytes = 0;
    std::uint32_t max_depth_packets = 0;
    ROCELAB_SW_QUEUE_COUNTERS(ROCELAB_U64_COUNTER)
    std::uint64_t flushed_bytes = 0;             // the flushed frames' bytes (not reported)
    bool wred = false;                           // a WRED/ECN profile is bound to this queue
    std::uint64_t wred_kmin = 0, wred_kmax = 0;  // its thresholds (bytes)
};

// Something the control thread should print as one event line.
struct switch_event {
    enum class kind : std::uint8_t { storm_detected, storm_restored, link_down, link_up } what{};
    std::int64_t ns = 0;
    std::uint16_t port = 0;
    std::uint8_t queue = 0;
};

// A priority group's state and the buffer model's counters for it
// (qos/mmu.hpp's pg_counters) that the reports list: one list for the
// struct, switch_pipeline::pg()'s copy and the reports, in their order
// (runtime::put_pg_counters: the JSON report's priority_groups and
// /rocelab/buffer; core/counter.hpp).
// clang-format off
#define ROCELAB_SW_PG_COUNTERS(X) \
    X(peak_use) X(peak_headroom) X(xoff_transitions) X(drop_lossy) X(drop_headroom_overflow)
// clang-format on
struct pg_status {
    bool lossless = false;
    bool xoff = false;
    std::uint64_t use = 0, headroom = 0, threshold = 0;
    ROCELAB_SW_PG_COUNTERS(ROCELAB_U64_COUNTER)
};

struct pfc_status {
    std::array<std::uint64_t, 8> rx_frames{};     // PFC frames received per priority
    std::array<std::int64_t, 8> paused_ns{};      // egress time paused per priority
    std::uint8_t paused_prios = 0;                // pause state now
    std::array<std::uint64_t, 8> xoff_sent{}, xon_sent{};
    std::array<std::int64_t, 8> asserted_ns{};    // time spent asserting a pause upstream
    std::uint64_t frames_sent = 0;
    std::array<bool, 8> wd_enabled{}, wd_stormed{};
    std::array<std::uint64_t, 8> wd_storms{}, wd_restores{}, wd_tx_dropped{}, wd_rx_dropped{};
};

// One neighbour for "show neighbours" (/rocelab/neigh, the report):
// static NEIGH entries ("permanent") and the dynamic table.
struct neigh_row {
    bool v6 = false;
    std::array<std::uint8_t, 16> addr{};  // IPv4 in the first 4 bytes, network order
    std::uint16_t port = 0;
    mac_addr mac{};
    const char* state = "";              // permanent, incomplete, reachable, stale, probe
    std::int64_t confirmed_ago_ns = -1;  // since the last answer (-1: none yet / static)
    std::uint64_t hits = 0;              // frames forwarded with it (dynamic entries)
    std::uint8_t waiting = 0;            // frames parked for it now
};

// One worker's own figures (the report, telemetry, the status line), one
// list for the struct, its snapshot (worker_figures()) and the reports that
// list them all (core/counter.hpp):
//   handed_out   frames handed to other workers
//   handed_in    frames taken from other workers
//   stashed      lossless frames that found the handoff queue full and waited
//   credits_out  buffer releases sent back to other workers
//   learns_out   FDB writes sent to the other workers' tables
//   learns_lost  ... that found the queue full (the station is flooded to until refreshed)
//   rss_parked   RSS: frames from another worker's port that waited for its credit
//   rss_requests ... credit requests sent for them (one per frame)
//   rss_to_owner ... frames only the port's owner may act on, handed to it
// clang-format off
#define ROCELAB_WORKER_STATS(X) \
    X(handed_out) X(handed_in) X(stashed) X(credits_out) X(learns_out) X(learns_lost) \
    X(rss_parked) X(rss_requests) X(rss_to_owner)
// clang-format on
struct worker_stats {  // a snapshot (worker_figures)
    ROCELAB_WORKER_STATS(ROCELAB_U64_COUNTER)
};
// The live counters: the worker counts, the control thread reads them while
// it runs (status line, /rocelab/workers), so relaxed atomics (counter64).
struct worker_counters {
    ROCELAB_WORKER_STATS(ROCELAB_COUNTER64)
};

// One stage's figures in a bench build (meson -Dstage_cycles=true): stage_clock.hpp.
using ::rocelab::stage_figures;

class switch_pipeline {
public:
    static constexpr std::uint16_t max_burst = 64;
    static constexpr bool stage_cycles_built = ::rocelab::stage_cycles_built;
    // Worker k's per-stage figures (empty unless stage_cycles_built).
    std::vector<stage_figures> stage_cycles(std::size_t k) const;

    // Validates and precomputes everything (routes, maps, schedulers).
    // Returns an error line on failure; never half-built.
    // workers: how many lcores run it (ports partitioned round-robin:
    // port i to worker i % workers, unless port_worker gives one per port).
    static std::variant<std::unique_ptr<switch_pipeline>, std::string> create(
        const switch_cfg& cfg, const std::vector<port_binding>& ports, rte_mempool* pool, unsigned workers = 1,
        const std::vector<unsigned>& port_worker = {});
    ~switch_pipeline();
    switch_pipeline(const switch_pipeline&) = delete;
    switch_pipeline& operator=(const switch_pipeline&) = delete;

    // One iteration: receive a burst on every port, process, transmit.
    // Returns the number of frames received + transmitted (0 = idle loop).
    std::uint32_t poll(nanos now) noexcept;

    // Several workers: worker k's iteration (its ports only, plus what the
    // other workers handed it). Each k from one thread only.
    std::uint32_t poll_worker(std::size_t k, nanos now) noexcept;
    // What run_worker() drives on worker k's lcore (busy and stall figures per worker).
    using worker_view = rocelab::worker_view<switch_pipeline>;
    std::size_t worker_count() const noexcept;
    worker_view& worker(std::size_t k) noexcept;
    const worker_view& worker(std::size_t k) const noexcept;
    std::uint16_t port_worker(std::size_t port) const noexcept;
    // RSS: the worker that polls RX queue q of a port (queue 0: its owner).
    std::uint16_t rx_queue_worker(std::size_t port, std::uint16_t q) const noexcept;
    worker_stats worker_figures(std::size_t k) const noexcept;
    // Worker k's last poll left frames for another worker that a full
    // handoff queue did not take: it cannot go on until that worker runs
    // (run_worker yields the CPU then, with --idle-yield). Worker k's thread.
    bool worker_waits(std::size_t k) const noexcept;
    // The poll figures of the whole switch: the workers' views summed (the
    // longest gap: the largest), plus this object's own (when poll() is
    // driven directly, as virtual time and the in-process tests do).
    worker_view poll_totals() const noexcept;

    // After poll(now): the earliest time at which the pipeline has work of
    // its own, so a virtual-time engine can jump over idle time:
    //   - a PFC/PAUSE frame to send (XOFF/XON now, or the next refresh);
    //   - the PFC watchdog's next poll;
    //   - a non-empty egress queue: now (unshaped) or when the port's
    //     shaper conforms; a paused one: when its pause expires.
    // nanos::max() when only an arriving frame can give it work. Not
    // included: frames waiting in an RX ring and ports whose TX refused
    // frames (the port I/O knows when its ring frees up). O(ports); the
    // real-time worker never calls it (it polls continuously).
    nanos next_deadline(nanos now) noexcept;

    // Optional capture (pcap-out); the pipeline only calls capture::tap().
    void set_capture(dpdk::capture* c) noexcept { _capture = c; }

    // Shutdown: free everything still queued or staged (counted as flushed).
    void release_all() noexcept;

    std::size_t port_count() const noexcept;
    const port_binding& binding(std::size_t i) const noexcept;
    // Summed over the workers (each counts what it did for the port).
    port_counters counters(std::size_t i) const noexcept;
    queue_snapshot queue(std::size_t port, int q) const noexcept;
    std::uint64_t queued_bytes(std::size_t port, int q) const noexcept;
    std::uint8_t paused_queues(std::size_t port, nanos now) const noexcept;
    // Time priority `prio` of `port`'s egress has spent paused by received PFC/PAUSE.
    nanos paused_time(std::size_t port, int prio, nanos now) const noexcept;
    // The L2 FDB: stations in the table, and its counters (fwd/fdb.hpp):
    // the table's writes as one worker's copy counts them (every copy learns
    // every station), the lookups summed over the workers.
    std::size_t fdb_size() const noexcept;
    fdb_counters fdb_totals() const noexcept;
    bool buffer_accounting() const noexcept;
    pg_status pg(std::size_t port, int pg) const noexcept;
    // Credit mode (qos/credit.hpp): the bytes (port, pg) holds now, the bytes
    // it can always hold (reserved + headroom), the accounting cell (0: bytes).
    std::uint64_t pg_use(std::size_t port, int pg) const noexcept;
    std::uint64_t pg_guaranteed(std::size_t port, int pg) const noexcept;
    std::uint32_t buffer_cell() const noexcept;
    bool shared_headroom_pool() const noexcept;
    pfc_status pfc(std::size_t port, nanos now) const noexcept;
    // PFC/PAUSE frames sent on the port so far: pfc().frames_sent without
    // building the whole status (the worker's queue sampler reads it; a
    // pfc() call there cost the worker's loop 11 % at 74 B, measured).
    std::uint64_t pfc_frames_sent(std::size_t port) const noexcept;
    std::uint64_t pool_shared_used() const noexcept;
    std::uint64_t pool_shared_size() const noexcept;
    // The ingress buffer pool as a whole (zeros without buffer accounting):
    // size, shared part, shared bytes in use now and at most.
    struct pool_figures {
        ROCELAB_POOL_FIGURES(ROCELAB_U64_COUNTER)
    };
    pool_figures buffer_pool() const noexcept;
    // Control thread: next watchdog or link event, if any.
    bool pop_event(switch_event& e) noexcept;

    // Link state (control thread). set_link() tells the data path that a
    // port's link is up or down; the worker acts at its next poll:
    //   down: every egress queue of the port is flushed, with the frames
    //         staged for TX and a pending PFC frame (drop_link_down; the
    //         ingress buffer they held is released, so no lossless PG stays
    //         in XOFF), the port's FDB entries are flushed, frames forwarded
    //         to it are dropped (drop_link_down), nothing is sent on it, and
    //         a link_down event is queued;
    //   up:   it forwards again (link_up event).
    // poll_link_states() reads each ethdev port's link without waiting
    // (rte_eth_link_get_nowait) and calls set_link() on changes. A port is
    // taken as up until its link has been seen up once: a memif or af_packet
    // port whose peer has not connected yet queues as before; a peer that
    // goes away takes the link down. Returns the ports whose state changed.
    void set_link(std::size_t port, bool up) noexcept;
    std::size_t poll_link_states() noexcept;
    bool link_up(std::size_t port) const noexcept;  // as the data path last applied it
    fwd_mode mode() const noexcept;

    // L3 neighbours: the static ones (NEIGH), then each worker's table.
    // Dynamic resolution: ROCELAB neigh_dynamic (on).
    //   neighbors       reads the tables: only with the workers stopped, or
    //                   from the thread that polls them (virtual time);
    //   neighbors_live  while the workers run (telemetry): each worker copies
    //                   its own table at its next neighbour step (every
    //                   millisecond) and hands the copy over; nullopt when a
    //                   worker does not answer within `timeout` (not running).
    bool neigh_dynamic() const noexcept;
    neigh_stats neigh_totals() const noexcept;
    std::vector<neigh_row> neighbors(nanos now) const;
    std::optional<std::vector<neigh_row>> neighbors_live(nanos now, std::chrono::milliseconds timeout) const;

    // Busy-cycle accounting (cycles spent in polls that did work), set by the runner.
    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    std::int64_t max_poll_gap_ns = 0;  // longest time between two polls (lcore stalls)
    std::uint64_t stalls = 0;          // idle polls followed by > 5 us without a poll (worker_loop.hpp)
    std::int64_t stalled_ns = 0;       // their total length

    struct impl;

private:
    explicit switch_pipeline(std::unique_ptr<impl> p) noexcept;
    std::vector<neigh_row> neighbors_static() const;  // NEIGH entries ("permanent")
    std::unique_ptr<impl> _p;
    dpdk::capture* _capture = nullptr;
};

}  // namespace rocelab::sw
