// gen_report.hpp - what a gen_pipeline reports: the JSON report (--report),
// the DCQCN trace (--dcqcn-trace), the final lines printed at exit and the
// status line.
//
// Free functions of (const gen_pipeline&, const gen_cfg&, run_report) with
// no globals, so any runner can write the usual per-node report: the
// rocelab-gen binary, or one generator of a virtual-time fabric. The JSON
// fields are the ones tests/dpdk/gen/*.py and tools/ read; do not rename them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "config/gen_config.hpp"
#include "gen/gen_pipeline.hpp"
#include "runtime/report_common.hpp"
#include "runtime/status.hpp"

namespace rocelab::runtime {

// The report as JSON text (one object, newline-terminated).
std::string gen_report_json(const gen::gen_pipeline& p, const gen_cfg& cfg, const run_report& r);
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
std::string write_fct_csv(const std::string& path, const gen::gen_pipeline& p);

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
