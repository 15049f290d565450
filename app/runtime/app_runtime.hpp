// app_runtime.hpp - the main() both rocelab binaries share, written once.
//
// run_app(app, argc, argv) does the steps every app takes, in this order,
// and asks the app (a traits object, below) only for what differs:
//
//   --help/--version before EAL       app.configure(): options, config, --check-config
//   EAL init                          app.ports(): which ports (after EAL)
//   mbuf pool                         app.pool(): name, size, data room
//   port_open() for every port        app.build(): bindings and the pipeline
//   the run clock (one epoch)
//   capture open (--pcap-out)         app.start(): banner, telemetry, output files
//   worker launched on an lcore       app.worker_hook(): run_worker()'s per-loop hook
//   control loop (control_loop.hpp,   app.tick(): per-app outputs (events, CSVs)
//   lcore_clock: every 500 us or      app.busy_control(): whether its tick needs
//   5 ms):                              the short period
//     capture drain, status line      app.status(): the status line (and warnings)
//     every status interval, stop on  app.finished(): stop early (all messages done)
//     SIGINT/SIGTERM, duration
//   stop + join, telemetry withdrawn  app.stopped(): final outputs
//   release_all, ports stopped        app.ports_stopped(): (loopback rings)
//   ports closed, capture flushed     app.extra_in_use(): mbufs of the app's own pools
//   mbufs-in-use check                app.final(): final counters on stdout
//   report (--report)                 app.write_report()
//   teardown                          app.release(): pipeline and what it uses
//
// Exit codes: 0 clean stop, 2 bad command line or configuration, 1 runtime
// error; every failure is one line "<prog>: <message>" on stderr (and EAL
// cleaned up). Only the control path exits: the apps' option and config
// checks before EAL (die()), session::fail() after it, and run_app().
//
// One clock: run_clock is created once, right after the pipeline; the worker
// polls a copy (same epoch), capture timestamps are wall time at its zero
// plus its `now`, telemetry reads it, and the status lines, events, elapsed
// time and the report's `end` all come from it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/units.hpp"
#include "dpdk/capture.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "rocelab_version.h"
#include "runtime/app_common.hpp"
#include "runtime/control_loop.hpp"
#include "runtime/report_common.hpp"
#include "runtime/telemetry.hpp"
#include "runtime/worker.hpp"

struct rte_mempool;

namespace rocelab::runtime {

// The run's one clock (see the file comment). Construct after EAL.
struct run_clock {
    dpdk::tsc_clock tsc;
    std::int64_t wall_ns_at_zero;  // CLOCK_REALTIME ns at tsc.now() == 0 (capture timestamps)

    run_clock();
    nanos now() const noexcept { return tsc.now(); }
};

inline double seconds(nanos d) noexcept { return double(d.v) / 1e9; }

struct port_request {
    dpdk::port_params params;  // .pool is filled in by the session
    std::string label;         // names the port in an error: "<prog>: <label>: <error>"
};

struct pool_spec {
    const char* name = "rocelab";
    std::uint32_t mbufs = 16384;
    std::uint16_t data_room = 2048 + 128;  // includes RTE_PKTMBUF_HEADROOM
    const char* hint = "";                 // how to fix a failure, e.g. "(raise -m or lower --mbufs)"
};

struct run_options {
    std::string report;              // --report path ("" = none)
    std::string pcap_out;            // --pcap-out directory ("" = no capture)
    std::uint32_t snaplen = 9216;
    std::optional<nanos> duration;   // stop after (none: until SIGINT/SIGTERM or finished())
    nanos status_interval{1'000'000'000};  // 0 = no status lines
    bool quiet = false;              // no status lines (app.status() still runs, print = false)
    bool idle_yield = false;         // --idle-yield: a worker whose poll found nothing yields its CPU

    // These options with the run's duration and status period (each app
    // takes them from its own place: the command line or the config file).
    run_options timed(std::optional<nanos> run_for, nanos status_every) const {
        run_options o = *this;
        o.duration = run_for;
        o.status_interval = status_every;
        return o;
    }
};

// EAL, the mbuf pool, the ports and the capture of one run.
class session {
public:
    explicit session(const char* prog) noexcept : _prog(prog) {}
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    const char* prog() const noexcept { return _prog; }
    // rte_eal_init(); on failure exits 2 with EAL's message.
    void init_eal(int eal_argc, char** argv);
    // Closes the ports opened so far, cleans EAL up, prints "<prog>: msg", exits.
    [[noreturn]] void fail(int code, const std::string& msg);

    // Exits 1 naming the size and spec.hint when the pool cannot be created.
    void create_pool(const pool_spec& spec);
    rte_mempool* pool() const noexcept { return _pool; }
    std::uint32_t pool_size() const noexcept { return _pool_size; }
    // The pool's mempool handler (dpdk::mbuf_pool_ops: "lf_stack" when
    // worker lcores share a CPU, "rocelab_tsan" in a TSan build).
    std::string pool_ops() const;

    // port_open() on each, with the pool; exits 1 with "<label>: <error>".
    void open_ports(std::vector<port_request> ports);
    const std::vector<dpdk::port_info>& ports() const noexcept { return _infos; }

    // --pcap-out: exits 2 when the directory or a file cannot be written.
    void open_capture(const std::string& dir, const std::vector<std::string>& port_names, std::uint32_t snaplen,
                      const run_clock& clock, const char* tag);
    dpdk::capture* capture() const noexcept { return _capture.get(); }

    // Teardown, in this order: stop_ports() (ethdev counters read after the
    // stop), close_ports(), flush_capture(), pool_in_use(), cleanup().
    std::vector<ethdev_stats> stop_ports();
    void close_ports() noexcept;
    void flush_capture();
    std::uint64_t pool_in_use() const noexcept;
    // Capture closed, pool freed, EAL cleaned up.
    void cleanup() noexcept;

private:
    const char* _prog;
    bool _eal = false;
    rte_mempool* _pool = nullptr;
    std::uint32_t _pool_size = 0;
    std::vector<dpdk::port_info> _infos;
    std::vector<std::uint16_t> _open;  // port ids opened and not yet closed
    std::unique_ptr<dpdk::capture> _capture;
};

// The process's command line, for provenance.
std::string joined_command_line(int argc, char** argv);

template <typename App>
int run_app(App& app, int argc, char** argv) {
    // Application options follow "--"; --help/--version work without EAL.
    const cmdline cl = split_cmdline(argc, argv);
    const std::string command_line = joined_command_line(argc, argv);  // before EAL permutes argv
    if (early_help(cl, argv, App::usage, App::name, ROCELAB_VERSION)) { return 0; }
    // Configuration is validated completely before anything starts.
    if (const std::optional<int> rc = app.configure(cl); rc) { return *rc; }
    const run_options opt = app.options();

    session s(App::name);
    s.init_eal(cl.eal_argc, argv);
    std::vector<port_request> ports = app.ports(s);
    s.create_pool(app.pool(s));
    s.open_ports(std::move(ports));
    app.build(s);
    auto& pipe = app.pipe();

    run_clock clock;
    if (!opt.pcap_out.empty()) {
        std::vector<std::string> names;
        for (std::size_t i = 0; i < pipe.port_count(); ++i) { names.push_back(pipe.binding(i).name); }
        s.open_capture(opt.pcap_out, names, opt.snaplen, clock, App::capture_tag);
        pipe.set_capture(s.capture());
    }
    app.start(s, clock);
    install_stop_signals();

    // One worker per worker lcore (the pipeline was built for that many:
    // both apps' pipelines have worker views); the app's per-loop hook runs
    // on the first.
    using pipe_t = std::remove_reference_t<decltype(pipe)>;
    static_assert(multi_worker<pipe_t>, "run_app drives a pipeline's worker views");
    using view_t = std::remove_reference_t<decltype(pipe.worker(0))>;
    std::vector<std::unique_ptr<worker_ctl<view_t>>> ctls;
    std::vector<std::unique_ptr<worker>> ws;
    for (std::size_t k = 0; k < pipe.worker_count(); ++k) {
        ctls.push_back(std::make_unique<worker_ctl<view_t>>());
        ctls.back()->pipe = &pipe.worker(k);
        ctls.back()->yield_when_idle = opt.idle_yield;
        if (k == 0) {
            using hook_t = decltype(app.worker_hook(clock.now()));
            ws.push_back(std::make_unique<worker>(*ctls.back(), clock.tsc, App::name,
                                                  view_hook<hook_t>{app.worker_hook(clock.now())}, 0u));
        } else {
            ws.push_back(std::make_unique<worker>(*ctls.back(), clock.tsc, App::name, no_hook{},
                                                  static_cast<unsigned>(k)));
        }
    }

    const nanos start = clock.now();
    struct hooks {
        App& app;
        session& s;
        const run_options& opt;
        nanos start;
        void tick(nanos t) {
            if (dpdk::capture* c = s.capture()) { c->drain(); }
            app.tick(start, seconds(t));
        }
        void status(double since, nanos t, double) { app.status(since, seconds(t), !opt.quiet); }
        bool finished() { return app.finished(); }
    } h{app, s, opt, start};
    lcore_clock<run_clock> lc{clock, start};
    lc.period = s.capture() != nullptr || app.busy_control() ? control_period_busy : control_period_quiet;
    lc.until = opt.duration;
    run_control(lc, h, opt.duration, opt.status_interval);
    for (auto& c : ctls) { c->stop.store(true); }
    for (auto& w : ws) { w->join(); }
    const nanos end = clock.now();
    const double elapsed = seconds(end - start);
    telemetry_detach();  // the pipeline the app's start() served (telemetry.hpp)
    app.stopped(start, elapsed);

    // Free what is queued, stop and close the ports (PMDs such as net_pcap
    // infinite_rx hold mbufs until close), then check every mbuf came back.
    pipe.release_all();
    run_report r;
    r.ethdev = s.stop_ports();
    app.ports_stopped();
    s.close_ports();
    s.flush_capture();
    r.elapsed_s = elapsed;
    r.end = end;
    r.tsc_hz = clock.tsc.hz();
    r.mbufs_total = s.pool_size();
    r.mbuf_pool_ops = s.pool_ops();
    r.mbufs_in_use = s.pool_in_use() + app.extra_in_use();
    if (const dpdk::capture* c = s.capture()) { r.capture = capture_counts{c->captured(), c->dropped()}; }
    for (const auto& info : s.ports()) { r.devices.push_back(info.device); }
    r.command_line = command_line;
    for (const auto& c : ctls) { r.run_delay_ns.push_back(c->run_delay_ns); }

    app.final(r);
    std::printf("mbufs in use at exit: %llu of %u\n", static_cast<unsigned long long>(r.mbufs_in_use), s.pool_size());
    if (r.mbufs_in_use != 0) {
        std::fprintf(stderr, "%s: warning: %llu mbufs not returned to the pool\n", App::name,
                     static_cast<unsigned long long>(r.mbufs_in_use));
    }
    if (!opt.report.empty()) {
        if (const std::string e = app.write_report(opt.report, r); !e.empty()) {
            std::fprintf(stderr, "%s: %s\n", App::name, e.c_str());
        }
        std::printf("report: %s\n", opt.report.c_str());
    }
    std::fflush(stdout);
    dpdk::eal_exiting();  // an L3 switch's LPM tables go with EAL's memory (eal.hpp)
    app.release();
    s.cleanup();
    return 0;
}

}  // namespace rocelab::runtime
