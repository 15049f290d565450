// metrics.hpp - the values a scenario's expectations name (fabric/expect.hpp),
// read from a fabric after (or during) a run. docs/scenarios.md lists them.
//
//   drops [SW | SW:PORT]          every switch drop (all reasons)
//   lossless_drops                frames lost in a lossless class: headroom
//                                 overflows, tail/WRED drops on PFC-enabled
//                                 queues, and RX-ring overflows of cables
//   link_drops                    cable losses (seeded) + RX-ring overflows
//   goodput(FLOW)                 payload bits the responder took in / (end - flow start), bit/s
//   flow_fct(FLOW)                the flow's completion time: its first message's post
//                                 to its last message's completion, ns (0: none completed)
//   goodput_fct(FLOW)             bits of the completed messages / flow_fct, bit/s
//   fct_p50|fct_p99|fct_max|fct_mean(FLOW)   message completion times, ns
//   messages(FLOW)                messages completed
//   naks(FLOW) retx(FLOW) timeouts(FLOW) cnp_rx(FLOW) cnp_tx(FLOW)
//   rate_min(FLOW) rate_mean(FLOW)   DCQCN pacing rate, bit/s
//   pfc_rx(X) pfc_tx(X)           PFC/PAUSE frames: X = HOST, SW, SW:PORT
//   ecn_marked [SW | SW:PORT | SW:PORT:Q]
//   busy(X)                       share of the run the cable out of X was
//                                 sending: X = HOST or NODE:PORT (0..1;
//                                 frames that arrived by the end, over the
//                                 run less the propagation delay)
//   queue_peak(SW:PORT:Q)         deepest the egress queue got, bytes
//   pg_peak(SW:PORT:PG)           peak use of an ingress priority group, bytes
//   pfcwd_storms [SW | SW:PORT]   storms the PFC watchdog detected
//   collectives, collective_mean  ring all-reduce: collectives completed,
//                                 mean completion time (ns)
//   deadlocks                     PFC deadlocks found (cycles of paused queues
//                                 that sent nothing; fabric/deadlock.hpp)
//   deadlocked                    ... of them still holding at the end
//   deadlock_max                  the longest one held, ns (to the end if it
//                                 still holds)
//
// validate() checks names before a run (unknown flow, host, node or port:
// one line saying what exists); value() reads the number after it.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "fabric/deadlock.hpp"
#include "fabric/expect.hpp"
#include "fabric/topology.hpp"
#include "vt/fabric.hpp"

namespace rocelab::vt {

class metrics {
public:
    metrics(fabric& f, const topology_cfg& t) noexcept : _f(f), _t(t) {}
    // The runner's deadlock detector (deadlocks, deadlocked); without one both are 0.
    void set_deadlocks(const deadlock_detector* d) noexcept { _dl = d; }
    // The collectives' figures per node (collectives, collective_mean,
    // algbw, busbw) given instead of read from each generator: over MPI
    // ranks rocelab-fabric's rank 0 computes them from every rank's flows.
    using collective_figs = std::vector<gen::gen_pipeline::collective_figures>;
    void set_collectives(const collective_figs* c) noexcept { _coll = c; }

    // "" when the metric and its arguments name things that exist.
    std::string validate(const expect_metric& m) const;
    std::optional<double> value(const expect_metric& m, std::string& err) const;
    // What the metric measures (an expectation's detail writes it with its unit).
    static expect_unit unit(const expect_metric& m) noexcept;
    // Whether the metric reads one flow (its argument is a flow name).
    static bool of_flow(const std::string& name) noexcept;

    // Resolution helpers (also used for time series and reports).
    // (generator node, flow index) by flow name; node = SIZE_MAX when unknown.
    std::pair<std::size_t, std::size_t> flow(const std::string& name) const;
    // (node, port) of NODE:PORT or of a host; node = SIZE_MAX when unknown.
    std::pair<std::size_t, int> port_of(const std::string& x) const;
    std::size_t node(const std::string& name) const;

private:
    std::string check_args(const expect_metric& m) const;
    fabric& _f;
    const topology_cfg& _t;
    const deadlock_detector* _dl = nullptr;
    const collective_figs* _coll = nullptr;
    // Flow name -> (node, index), built at the first lookup (a scenario of
    // thousands of flows asks for each of them in its summary).
    mutable std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> _flow_index;
    mutable bool _indexed = false;
};

}  // namespace rocelab::vt
