// gen_report.hpp - what a gen_pipeline reports: the JSON report (--report),
// the DCQCN trace (--dcqcn-trace), the final lines printed at exit and the
// status line.
//
// Free functions of (const gen_pipeline&, const gen_cfg&, run_report) with
// no globals, so any runner can write the usual per-node report: the
// rocelab-gen binary, or one generator of a virtual-time fabric. The JSON
// fields are the ones tests/dpdk/gen/*.py and tools/ read; do not rename them.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "config/gen_config.hpp"
#include "gen/gen_pipeline.hpp"
#include "runtime/report_common.hpp"
#include "runtime/status.hpp"

namespace rocelab::runtime {

// What the report reads that the run changes (the configuration, names and
// bindings aside), as plain records grouped by who writes them: a flow's
// requester side (its source host's worker), its responder side (its
// destination host's), each port, each worker. gen_report_json(p, cfg, r)
// reads them from p itself (gen_figs_of); rocelab-fabric over MPI ranks
// takes each record from the rank that runs its part and writes the same
// report from them.
struct gen_req_figs {
    requester_counts rq{};  // a snapshot (rocelab::snapshot)
    dcqcn_rp_counters rp{};
    std::uint64_t cnp_rx = 0;
    std::uint64_t pacing_bps = 0;
    std::uint64_t fct_dropped = 0;
    std::int64_t flow_fct_ns = 0;
    double goodput_fct_bps = 0;
    double rate_mean_bps = 0;
    double rate_min_bps = 0;  // the lowest pacing rate (without DCQCN: the pacer's)
    bool ready = true;        // the QP's state
};
struct gen_resp_figs {
    responder_counts rs{};
    std::uint64_t ce_rx = 0;
    std::uint64_t cnp_tx = 0;
    std::uint64_t cnp_tx_fail = 0;
};
struct gen_port_figs {
    gen::gen_port_counters c{};
    pause_counts pause{};
    std::array<std::int64_t, 8> paused_ns{};
};
struct gen_figs {
    std::vector<gen_req_figs> req;                // per flow
    std::vector<gen_resp_figs> resp;              // per flow
    std::vector<std::vector<std::uint64_t>> fct;  // per flow: the FCT samples kept, in completion order
    std::vector<gen_port_figs> ports;
    gen::gen_pipeline::worker_view totals;        // poll_totals()
    std::vector<gen::gen_pipeline::worker_view> workers;
    bool all_finished = false;
    gen::gen_pipeline::collective_figures coll;   // when p.ring()
};
static_assert(std::is_trivially_copyable_v<gen_req_figs> && std::is_trivially_copyable_v<gen_resp_figs> &&
              std::is_trivially_copyable_v<gen_port_figs> &&
              std::is_trivially_copyable_v<gen::gen_pipeline::worker_view>);
// p's figures at the end of a run that stopped at `end` (the run clock).
gen_figs gen_figs_of(const gen::gen_pipeline& p, const gen_cfg& cfg, nanos end);
// The parts of it: flow i's two sides, port i, worker k's view.
gen_req_figs gen_req_figs_of(const gen::flow_state& f, const gen_cfg& cfg, nanos end);
gen_resp_figs gen_resp_figs_of(const gen::flow_state& f);
gen_port_figs gen_port_figs_of(const gen::gen_pipeline& p, std::size_t i);
gen::gen_pipeline::worker_view gen_worker_figs_of(const gen::gen_pipeline::worker_view& v);

// The report as JSON text (one object, newline-terminated): of p's own
// figures, or of the figures given.
std::string gen_report_json(const gen::gen_pipeline& p, const gen_cfg& cfg, const run_report& r);
std::string gen_report_json(const gen::gen_pipeline& p, const gen_cfg& cfg, const run_report& r, const gen_figs& x);
// Writes it to `path`; empty string on success, else one error line.
std::string write_gen_report(const std::string& path, const gen::gen_pipeline& p, const gen_cfg& cfg,
                             const run_report& r);

// Every reaction-point event of every QP as CSV
//   time_s,flow,event,rc_bps,rt_bps,alpha
// in time order per QP (from the preallocated per-flow buffers). Empty
// string on success, else one line (also when events did not fit).
std::string write_dcqcn_trace(const std::string& path, const gen::gen_pipeline& p);

// Every message completion time the pipeline kept (all of them up to each
// flow's sample cap; the report's fct_samples_dropped counts the rest), as
// CSV rows "flow,fct_ns", flow by flow in completion order, each FCT x
// `scale` (rocelab-fabric in real time: back on the scenario's scale).
// write_fct_rows appends the rows to an open file (false on a write error);
// write_fct_csv writes a file with the header line: empty string on
// success, else one line naming the file.
bool write_fct_rows(std::FILE* out, const gen::gen_pipeline& p, double scale = 1.0);
// One flow's rows ("flow,fct_ns" lines), appended to `out`.
void append_fct_rows(std::string& out, const gen::flow_state& fl, double scale = 1.0);
std::string write_fct_csv(const std::string& path, const gen::gen_pipeline& p);

// A port's scalar counters, by the names the JSON report's ports and
// /rocelab_gen/port give them, in the report's order: put(name, value).
template <typename Put>
void put_port_counters(const gen::gen_port_counters& c, Put&& put) {
    using gen::read_counter;
    put("rx_packets", read_counter(c.rx_packets));
    put("rx_bytes", read_counter(c.rx_bytes));
    put("tx_packets", read_counter(c.tx_packets));
    put("tx_bytes", read_counter(c.tx_bytes));
    put("tx_acks", read_counter(c.tx_acks));
    put("tx_naks", read_counter(c.tx_naks));
    put("rx_mac_control", read_counter(c.rx_mac_control));
    put("rx_pfc", read_counter(c.rx_pfc));
    put("rx_pause", read_counter(c.rx_pause));
    put("tx_pfc", read_counter(c.tx_pfc));
    put("rx_arp", read_counter(c.rx_arp));
    put("arp_replies", read_counter(c.arp_replies));
    put("rx_nd", read_counter(c.rx_nd));
    put("nd_replies", read_counter(c.nd_replies));
    put("rx_bad_icrc", read_counter(c.rx_bad_icrc));
    put("rx_unknown_qpn", read_counter(c.rx_unknown_qpn));
    put("rx_not_local", read_counter(c.rx_not_local));
    put("rx_non_roce", read_counter(c.rx_non_roce));
    put("rx_cnp", read_counter(c.rx_cnp));
    put("rx_ce", read_counter(c.rx_ce));
    put("tx_cnp", read_counter(c.tx_cnp));
    put("drop_cnp_full", read_counter(c.drop_cnp_full));
    put("rx_unsupported_opcode", read_counter(c.rx_unsupported_opcode));
    put("rx_multiseg", read_counter(c.rx_multiseg));
    put("rx_malformed", read_counter(c.rx_malformed_total));
    put("loss_data", read_counter(c.loss_data));
    put("loss_ack", read_counter(c.loss_ack));
    put("drop_delay_full", read_counter(c.drop_delay_full));
    put("drop_reply_full", read_counter(c.drop_reply_full));
    put("replies_coalesced", read_counter(c.replies_coalesced));
    put("tx_alloc_fail", read_counter(c.tx_alloc_fail));
    put("tx_retry", read_counter(c.tx_retry));
    put("tx_prefilled", read_counter(c.tx_prefilled));
    put("tx_copied", read_counter(c.tx_copied));
    put("tx_built", read_counter(c.tx_built));
}

// "==== rocelab-gen final (Ns) ====", a line per flow and the DCQCN summary,
// on stdout. `end`: the run clock when the worker stopped.
void print_gen_final(const gen::gen_pipeline& p, const gen_cfg& cfg, double elapsed_s, nanos end);

// The status line: per port tx/rx rate and Mpps since the last line, then
// messages completed, NAKs, retransmissions and timeouts of all flows.
class gen_status {
public:
    explicit gen_status(std::size_t ports, std::uint64_t tsc_hz = 0) : _prev(ports), _hz(tsc_hz) {}
    // dt: seconds since the last line; t: since the start of the run.
    void print(const gen::gen_pipeline& p, double dt, double t);

private:
    std::vector<port_traffic> _prev;
    std::uint64_t _hz = 0;
    std::vector<std::uint64_t> _prev_busy;  // per worker, at the last line
};

}  // namespace rocelab::runtime
