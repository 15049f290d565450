// switch_report.hpp - what a switch_pipeline reports: the JSON report
// (--report), the final counters printed at exit and the status line.
//
// Free functions of (const switch_pipeline&, const switch_cfg&, run_report)
// with no globals, so any runner can write the usual per-node report: the
// rocelab-switch binary, or one switch of a virtual-time fabric (where
// run_report's ethdev counters are zeros or the modelled links' counters).
// The JSON fields are the ones tests/dpdk/*.py and tools/ read; do not
// rename them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/switch_cfg.hpp"
#include "runtime/report_common.hpp"
#include "runtime/status.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::runtime {

// The report as JSON text (one object, newline-terminated).
std::string switch_report_json(const sw::switch_pipeline& p, const switch_cfg& cfg, const run_report& r);
// Writes it to `path`; empty string on success, else one error line.
std::string write_switch_report(const std::string& path, const sw::switch_pipeline& p, const switch_cfg& cfg,
                                const run_report& r);

// "==== rocelab-switch final counters (Ns) ====" and per port/queue lines, on stdout.
void print_switch_final(const sw::switch_pipeline& p, double elapsed_s);

// Drops of every reason but pfc_disabled_prio (a PFC frame for a disabled priority is not a lost frame).
std::uint64_t total_drops(const sw::port_counters& c);
std::uint64_t total_ecn_marked(const sw::port_counters& c);

// A port's scalar counters, by the names the JSON report's ports and
// /rocelab/port give them, in the report's order: put(name, value).
template <typename Put>
void put_port_counters(const sw::port_counters& c, Put&& put) {
#define ROCELAB_PUT_PORT(name) put(#name, sw::read_counter(c.name));
    ROCELAB_SW_PORT_COUNTERS(ROCELAB_PUT_PORT)
#undef ROCELAB_PUT_PORT
}

// A worker's figures (handed between workers), as the JSON report's workers
// and /rocelab/workers give them.
template <typename Put>
void put_worker_stats(const sw::worker_stats& s, Put&& put) {
#define ROCELAB_PUT_WORKER(name) put(#name, s.name);
    ROCELAB_WORKER_STATS(ROCELAB_PUT_WORKER)
#undef ROCELAB_PUT_WORKER
}

// A priority group's peaks and counters, as the JSON report's
// priority_groups and /rocelab/buffer give them.
template <typename Put>
void put_pg_counters(const sw::pg_status& st, Put&& put) {
#define ROCELAB_PUT_PG(name) put(#name, st.name);
    ROCELAB_SW_PG_COUNTERS(ROCELAB_PUT_PG)
#undef ROCELAB_PUT_PG
}

// The FDB's stations and counters (fwd/fdb.hpp), as the JSON report's fdb
// and /rocelab/fdb give them.
template <typename Put>
void put_fdb(const sw::switch_pipeline& p, Put&& put) {
    const fdb_counters c = p.fdb_totals();
    put("entries", p.fdb_size());
#define ROCELAB_PUT_FDB(name) put(#name, read_counter(c.name));
    ROCELAB_FDB_COUNTERS(ROCELAB_PUT_FDB)
#undef ROCELAB_PUT_FDB
}

// An egress queue's counters (and its WRED thresholds, when it has a
// profile), as the JSON report's queues and /rocelab/queues give them.
template <typename Put>
void put_queue_counters(const sw::queue_snapshot& s, Put&& put) {
#define ROCELAB_PUT_QUEUE(name) put(#name, s.name);
    ROCELAB_SW_QUEUE_COUNTERS(ROCELAB_PUT_QUEUE)
#undef ROCELAB_PUT_QUEUE
    if (s.wred) {
        put("wred_kmin_bytes", s.wred_kmin);
        put("wred_kmax_bytes", s.wred_kmax);
    }
}

// The status line: per port rx/tx Mpps and rate, line utilisation, queued
// bytes, PFC received, ECN marks and drops since the last line; with
// several workers, each one's busy share ("workers busy 41% 63%").
class switch_status {
public:
    explicit switch_status(std::size_t ports, std::uint64_t tsc_hz = 0) : _prev(ports), _hz(tsc_hz) {}
    // dt: seconds since the last line; t: since the start of the run.
    void print(const sw::switch_pipeline& p, double dt, double t);

private:
    struct prev {
        port_traffic traffic;
        std::uint64_t drops = 0, ecn_marked = 0;
    };
    std::vector<prev> _prev;
    std::uint64_t _hz = 0;
    std::vector<std::uint64_t> _prev_busy;
};

}  // namespace rocelab::runtime
