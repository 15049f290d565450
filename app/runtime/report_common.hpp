// report_common.hpp - what a node's JSON report takes from the run around its
// pipeline, and the pieces the switch and generator reports share.
//
// A run (rocelab-switch, rocelab-gen, or one node of a virtual-time fabric)
// fills a run_report once the worker has stopped and the ports are closed;
// write_switch_report() / write_gen_report() (switch_report.hpp,
// gen_report.hpp) combine it with the pipeline's counters and its config.
// Nothing here reads a clock or a global: `end` and `elapsed_s` are on the
// run's one clock (the TSC in real time, the virtual clock in a fabric).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/counter.hpp"
#include "core/json.hpp"
#include "core/units.hpp"
#include "proto/parse.hpp"
#include "runtime/worker_figs.hpp"
#include "stage_clock.hpp"

namespace rocelab::runtime {

// The NIC's own counters of a port (rte_eth_stats, whose names they keep and
// the report's "ethdev" object gives; zeros where there is no ethdev).
#define ROCELAB_ETHDEV_STATS(X) X(ipackets) X(opackets) X(imissed) X(ierrors) X(oerrors) X(rx_nombuf)
struct ethdev_stats {
    ROCELAB_ETHDEV_STATS(ROCELAB_U64_COUNTER)
};

struct capture_counts {
    std::uint64_t frames = 0;   // frames captured
    std::uint64_t dropped = 0;  // not captured: ring or capture pool full
};

struct run_report {
    double elapsed_s = 0;       // from the start of the run to `end`
    nanos end{0};               // the run clock when the worker stopped (PFC/DCQCN times are read at it)
    std::uint64_t tsc_hz = 0;   // the clock's rate (1e9 for a virtual clock)
    std::uint64_t mbufs_total = 0;
    std::string mbuf_pool_ops;                // the mbuf pool's mempool handler
    std::uint64_t mbufs_in_use = 0;           // at exit, after every port closed
    std::optional<capture_counts> capture;    // with --pcap-out
    std::vector<std::string> devices;         // per port: the device name ("" if none)
    std::vector<ethdev_stats> ethdev;         // per port (missing ports: zeros)
    std::string command_line;                 // provenance (rocelab-gen)
    std::vector<std::int64_t> run_delay_ns;   // per worker: its thread's run_delay over the run (-1: unknown)

    const std::string& device(std::size_t i) const;
    ethdev_stats port_ethdev(std::size_t i) const { return i < ethdev.size() ? ethdev[i] : ethdev_stats{}; }
};

// Nearest-rank percentile of a sorted sample (0 when empty).
std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double q);

// A sorted sample of times (FCTs, collective times) as "<what>_samples",
// "<what>_samples_dropped" (not kept: the sample store was full), then
// "<what>_p50_ns", "_p99_ns", "_max_ns", with `with_min` "_min_ns", and
// "_mean_ns" (`mean`, over every time, kept or not).
void write_sample_stats(json_writer& j, std::string_view what, const std::vector<std::uint64_t>& sorted,
                        std::uint64_t dropped, double mean, bool with_min);

// A node's report document is one JSON object: begin_report() opens it with
// "provenance" (tool, version, config, then what provenance() writes);
// end_report() closes it and returns `out` (j's text), newline-terminated.
void write_provenance_head(json_writer& j, const char* tool, const std::string& config);
template <typename Provenance>
void begin_report(json_writer& j, const char* tool, const std::string& config, Provenance&& provenance) {
    j.begin_object();
    j.key("provenance");
    j.begin_object();
    write_provenance_head(j, tool, config);
    provenance();
    j.end_object();
}
std::string end_report(json_writer& j, std::string& out);

// "key": an array of n objects, the i-th holding what item(i) writes.
template <typename Item>
void json_objects(json_writer& j, std::string_view key, std::size_t n, Item&& item) {
    j.key(key);
    j.begin_array();
    for (std::size_t i = 0; i < n; ++i) {
        j.begin_object();
        item(i);
        j.end_object();
    }
    j.end_array();
}

// A port object's first members: name, port_id, device (b: a port binding).
template <typename Binding>
void write_port_head(json_writer& j, const Binding& b, const run_report& r, std::size_t i) {
    j.kv("name", b.name);
    j.kv("port_id", static_cast<unsigned>(b.port_id));
    j.kv("device", r.device(i));
}

// The "malformed" object of a port: frames the parser refused, by
// parse_status name (every status but ok, counters or plain integers).
template <typename Counts>
void write_malformed(json_writer& j, const Counts& malformed) {
    j.key("malformed");
    j.begin_object();
    for (std::size_t s = 1; s < parse_status_count; ++s) {
        j.kv(parse_status_name(static_cast<parse_status>(s)), static_cast<std::uint64_t>(malformed[s]));
    }
    j.end_object();
}

// "capture_frames"/"capture_dropped" when captured.
void write_capture_fields(json_writer& j, const run_report& r);
// The "ethdev" object of port i.
void write_ethdev(json_writer& j, const run_report& r, std::size_t i);

// The whole pipeline's busy_cycles, loops, max_poll_gap_ns, stalls and
// stalled_ns, then "workers": one object per worker lcore of a pipeline
// with worker views (the switch, the generator): its ports, busy cycles and
// share of the run, loops, longest poll gap, stalls and their length
// (stalled_ns), then what `extra(j, k)` adds.
template <typename Pipeline, typename Extra>
void json_workers(json_writer& j, const Pipeline& p, const run_report& r, Extra&& extra) {
    json_workers(j, p, r, p.poll_totals(), [&p](std::size_t k) -> const auto& { return p.worker(k); }, extra);
}
// A worker's "stages" array (bench builds, meson -Dstage_cycles=true:
// frames and TSC cycles per stage; pipelines' stage_cycles(k)).
template <typename Pipeline>
void json_stages(json_writer& j, const Pipeline& p, std::size_t k) {
    if constexpr (Pipeline::stage_cycles_built) {
        j.key("stages");
        j.begin_array();
        for (const stage_figures& s : p.stage_cycles(k)) {
            j.begin_object();
            j.kv("stage", s.name);
            j.kv("calls", s.calls);
            j.kv("frames", s.frames);
            j.kv("cycles", s.cycles);
            j.end_object();
        }
        j.end_array();
    }
}
// The same from given figures: `tot` (the pipeline's poll_totals()) and
// `view(k)`, worker k's view (a generator's report gathered over ranks).
template <typename Pipeline, typename View, typename Extra>
void json_workers(json_writer& j, const Pipeline& p, const run_report& r, const typename Pipeline::worker_view& tot,
                  View&& view, Extra&& extra) {
    j.kv("busy_cycles", tot.busy_cycles);
    j.kv("loops", tot.loops);
    j.kv("max_poll_gap_ns", tot.max_poll_gap_ns);
    j.kv("stalls", tot.stalls);
    j.kv("stalled_ns", tot.stalled_ns);
    j.key("workers");
    j.begin_array();
    for (std::size_t k = 0; k < p.worker_count(); ++k) {
        const worker_poll_figs w = poll_figs(tot, view(k), p.worker_count() == 1);
        j.begin_object();
        j.kv("worker", static_cast<std::uint64_t>(k));
        j.key("ports");
        j.begin_array();
        for (std::size_t i = 0; i < p.port_count(); ++i) {
            if (p.port_worker(i) == k) { j.value(p.binding(i).name); }
        }
        j.end_array();
        j.kv("busy_cycles", w.busy_cycles);
        j.kv("busy_share",
             r.elapsed_s > 0 && r.tsc_hz > 0 ? double(w.busy_cycles) / (double(r.tsc_hz) * r.elapsed_s) : 0.0);
        j.kv("loops", w.loops);
        j.kv("max_poll_gap_ns", w.max_poll_gap_ns);
        j.kv("stalls", w.stalls);
        j.kv("stalled_ns", w.stalled_ns);
        // The kernel's view of the same worker: the time its thread was
        // runnable but another had its CPU (a runner with an OS thread per
        // worker only; not the virtual-time fabric).
        if (k < r.run_delay_ns.size() && r.run_delay_ns[k] >= 0) { j.kv("run_delay_ns", r.run_delay_ns[k]); }
        extra(j, k);
        j.end_object();
    }
    j.end_array();
}

// The final output's lines on the workers' stalls (worker_loop.hpp): one
// per worker lcore, "worker 0 (Ethernet0, Ethernet1): stalled 41.4ms in
// 2157 stalls, 2.6% of the run; longest gap between polls 101us", with a
// note when the stalls took stall_note_share (1 %) of the run or more: the
// run's rates and times include what the host took (a software pacer or
// scheduler cannot win it back).
inline constexpr double stall_note_share = 0.01;
std::string stall_time_str(std::int64_t ns);  // "41.4ms", "101us", "0us"
template <typename Pipeline>
void print_worker_stalls(const Pipeline& p, double elapsed_s) {
    const auto tot = p.poll_totals();
    for (std::size_t k = 0; k < p.worker_count(); ++k) {
        const worker_poll_figs w = poll_figs(tot, p.worker(k), p.worker_count() == 1);
        const double share = elapsed_s > 0 ? double(w.stalled_ns) / (elapsed_s * 1e9) : 0.0;
        std::printf("worker %zu (%s): stalled %s in %llu stalls, %.1f%% of the run; longest gap between polls %s%s\n", k,
                    worker_ports(p, k, ", ").c_str(), stall_time_str(w.stalled_ns).c_str(),
                    static_cast<unsigned long long>(w.stalls), share * 100, stall_time_str(w.max_poll_gap_ns).c_str(),
                    share >= stall_note_share ? " (the host took this time from the worker: this run's rates and "
                                                "times include it; docs/generator.md, \"Worker stalls\")"
                                              : "");
    }
}

// put(name, value) as a member of j's open object, for the put_*_counters() visitors.
inline auto json_put(json_writer& j) {
    return [&j](const char* k, std::uint64_t v) { j.kv(k, v); };
}

// Writes `text` to `path`; empty string on success, else "cannot write report <path>".
std::string write_report_file(const std::string& path, const std::string& text);

}  // namespace rocelab::runtime
