// rocelab-switch: a software RoCEv2 leaf switch on DPDK poll-mode lcores.
//
//   rocelab-switch [EAL options] -- [options]
//
// Option parsing and wiring only: the data path is pipelines/switch, the
// protocol logic lib/, the shared main() app/runtime. See --help and docs/.
#include <rte_ethdev.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pdump.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config_db.hpp"
#include "config/schema.hpp"
#include "config/switch_config.hpp"
#include "config/units_parse.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "rocelab_version.h"
#include "runtime/app_runtime.hpp"
#include "runtime/options.hpp"
#include "runtime/queue_sampler.hpp"
#include "runtime/switch_report.hpp"
#include "runtime/switch_telemetry.hpp"
#include "switch/switch_pipeline.hpp"

using namespace rocelab;

namespace {

constexpr const char* usage_text = R"(rocelab-switch - a software RoCEv2 leaf switch on DPDK

Usage: rocelab-switch [EAL options] -- [options]

EAL options come first, as for dpdk-testpmd. On a machine without NICs or
hugepages, for example:
  rocelab-switch --no-huge -m 1024 --no-pci -l 0-1 --file-prefix sw1 \
      --vdev=net_pcap0,rx_pcap=in.pcap --vdev=net_pcap1,tx_pcap=out.pcap -- --duration 5s

Options:
  -c, --config FILE        YAML configuration (SONiC table names, units written
                           out), or a SONiC config_db.json as it is (recognised
                           by its content; unmodelled tables are listed and
                           ignored; ports get DPDK port ids 0, 1, ... in PORT
                           index order). Without it: an L2 learning bridge over all
                           probed ports, AZURE+RoCE QoS maps, ports unshaped,
                           and SONiC's RoCE default: PFC on priorities 3 and 4
                           (lossless PGs 3-4, headroom from each port's speed,
                           12MiB ingress_lossless_pool) and WRED/ECN
                           AZURE_LOSSLESS (1MiB..2MiB, 5 %, ecn_all) on queues
                           3 and 4. A config with only PORT entries keeps these;
                           a BUFFER_* table replaces the buffer defaults, a
                           WRED_PROFILE table or QUEUE wred_profile the ECN
                           ones. Off: BUFFER_POOL: {} and WRED_PROFILE: {}.
  -d, --duration TIME      stop after TIME (e.g. 5s, 500ms); default: run until
                           SIGINT/SIGTERM
      --until-idle TIME    stop once the switch has been idle for TIME (e.g.
                           100ms) after its first frame: no frame received or
                           sent on any port (PFC frames included) and none held
                           (queued, paused, waiting for a neighbour: every mbuf
                           back in the pool). For replaying a capture
                           (net_pcap rx_pcap) through the switch; --duration
                           still bounds the run
  -r, --report FILE        write final counters as JSON (with version, config, seed)
      --queue-csv FILE     sample egress queue depths into a CSV time series
                           (interval: ROCELAB.queue_sample_interval, default 1ms)
      --pcap-out DIR       capture every port, both directions, to
                           DIR/<port>-rx.pcap and DIR/<port>-tx.pcap
      --snaplen BYTES      bytes captured per frame (default 9216)
      --status-interval T  status line period (default 1s; 0 disables)
  -q, --quiet              no status lines
      --idle-yield         a worker whose poll found nothing to do, or found
                           another worker's handoff queue full, yields its
                           CPU: for several workers sharing a CPU (a small
                           test machine); costs latency on dedicated cores
      --check-config       validate the configuration and exit (0 = valid);
                           for a config_db.json also print the port mapping
      --config-schema      print every table and field the configuration
                           accepts (range, unit, default, meaning) as Markdown
                           and exit; docs/config.md's field tables are this
      --port-map MAP       config_db.json: SONiC port -> DPDK device or port id,
                           "Ethernet0=net_ring0,Ethernet4=1" or a file of such
                           entries; ports not named are left out (default:
                           ROCELAB port_map in the file, else by order)
      --port-workers LIST  which worker lcore owns each port, in port order,
                           e.g. 0,0,1,1 (default: round-robin, port i to
                           worker i mod N)
      --rx-queues N        RX queues per port (default 1): RSS spreads a port's
                           frames over N workers by their 5-tuple (queue q of a
                           port to worker (its owner + q) mod workers; N <= the
                           workers); docs/real-nics.md, "RSS"
  -V, --version            print the version
  -h, --help               this text

Workers: one per EAL worker lcore (every lcore but the main one): -l 0-1 runs
one worker, -l 0-2 two, --lcores 0@0,1@1,2@1 two workers sharing CPU 1. Each
worker owns whole ports (their RX, ingress buffer accounting, egress queues,
scheduler, PFC); frames for another worker's port are handed over lock-free.
At most one worker per port. With --rx-queues N a port's RX (its RSS queues)
is spread over N workers, which charge its ingress PGs from credit its owner
grants (exact accounting, PFC from the owner). The start-up line prints the plan.

Exit codes: 0 clean stop, 2 bad command line or configuration, 1 runtime error.
Telemetry: dpdk-telemetry.py -f <file-prefix>, then /rocelab/ports,
/rocelab/port,<name>, /rocelab/queues,<name>, /rocelab/buffer,<name>
(ingress buffer per priority group, computed xoff/xon), /rocelab/pfc,<name>
(PFC per priority and the watchdog), /rocelab/info, /rocelab/fdb (L2 stations
and the FDB's counters: learned, moved, aged, hits, misses, ...),
/rocelab/neigh (L3 neighbours: static and resolved by ARP/ND), /rocelab/workers
(each worker lcore's ports, busy cycles, frames handed between workers).

Lossless classes: BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / PFC_WD in the
config (docs/config.md); conf/incast-lossless-1g.yaml is a worked example.
ECN (DCQCN's congestion point): WRED_PROFILE bound by QUEUE|<port>|<q>
wred_profile, evaluated at dequeue (ROCELAB ecn_at: enqueue to change);
counters ecn_marked / wred_dropped per queue (docs/dcqcn.md).
L3 (ROCELAB mode: l3): hosts and next hops without a NEIGH entry are found by
ARP / IPv6 ND (ROCELAB neigh_dynamic: on; neigh_* timers, docs/config.md).
)";

struct app_opts {
    runtime::common_opts common;  // -c, -r, --pcap-out, --snaplen, -q, --check-config
    std::optional<nanos> duration;
    std::optional<nanos> until_idle;  // --until-idle
    std::string queue_csv;
    std::optional<nanos> status_interval;
    load_options load;  // --port-map
    std::uint16_t rx_queues = 1;  // --rx-queues
};

[[noreturn]] void die(int code, const std::string& msg) { runtime::die("rocelab-switch", code, msg); }

// Parses the application's options (after "--"). Exits 2 on bad input.
app_opts parse_app_opts(int argc, char** argv) {
    app_opts o;
    runtime::option_args args(argc, argv, "rocelab-switch");
    for (; args.more(); args.next()) {
        if (o.common.parse(args, usage_text)) { continue; }
        const std::string a = args.arg();
        if (a == "-d" || a == "--duration") {
            const std::string v = args.value("--duration");
            auto t = parse_time(v);
            if (!t || t->v <= 0) { die(2, "--duration " + v + ": expected a time with units, e.g. 5s, 500ms, 2min is not accepted; use 120s"); }
            o.duration = *t;
        } else if (a == "--until-idle") {
            const std::string v = args.value(a);
            auto t = parse_time(v);
            if (!t || t->v <= 0) { die(2, "--until-idle " + v + ": expected a time with units, e.g. 100ms"); }
            o.until_idle = *t;
        } else if (a == "--port-map") {
            auto m = parse_port_map(args.value(a));
            if (!m) { die(2, m.error().message); }
            o.load.ports = std::move(*m);
        } else if (a == "--rx-queues") {
            const std::string v = args.value(a);
            char* end = nullptr;
            const unsigned long n = std::strtoul(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < 1 || n > 16) { die(2, "--rx-queues " + v + ": expected 1..16 RX queues per port"); }
            o.rx_queues = static_cast<std::uint16_t>(n);
        } else if (a == "--queue-csv") {
            o.queue_csv = args.value(a);
        } else if (a == "--status-interval") {
            const std::string v = args.value(a);
            auto t = parse_time(v);
            if (!t || t->v < 0) { die(2, "--status-interval " + v + ": expected a time with units, e.g. 1s, 0s to disable"); }
            o.status_interval = *t;
        } else {
            args.unknown();
        }
    }
    return o;
}

// rocelab-switch for runtime::run_app (app_runtime.hpp): what differs from rocelab-gen.
class switch_app {
public:
    static constexpr const char* name = "rocelab-switch";
    static constexpr const char* usage = usage_text;
    static constexpr const char* capture_tag = "sw";

    std::optional<int> configure(const runtime::cmdline& cl) {
        _opt = cl.app_argv == nullptr ? app_opts{} : parse_app_opts(cl.app_argc, cl.app_argv);
        const std::string& file = _opt.common.config;
        _cfg = _opt.common.load_config(name, default_switch_cfg,
                                       [&](const std::string& f) { return load_switch_cfg(f, _opt.load); });
        if (!_cfg.config_db && !_opt.load.ports.empty()) {
            die(2, "--port-map is only used with a config_db.json (" +
                       (file.empty() ? std::string("no --config given") : file + " is YAML: give PORT device or port_id") + ")");
        }
        if (_cfg.config_db) { print_config_db_notes(); }
        if (!_opt.common.check_config) {
            // What the file asks that rocelab models differently (--check-config prints them with the configuration).
            for (const auto& n : _cfg.notes) { std::fprintf(stderr, "rocelab-switch: %s: %s\n", _cfg.source.c_str(), n.c_str()); }
        }
        if (_opt.status_interval) { _cfg.status_interval = *_opt.status_interval; }
        if (_opt.common.check_config) {
            std::printf("%s: valid (%zu ports, mode %s)\n", _cfg.source.c_str(), _cfg.ports.size(), mode_name());
            std::printf("%s", describe_switch_cfg(_cfg).c_str());
            if (_cfg.config_db) {
                // EAL is not up yet: ids are shown as configured, devices by name.
                for (const auto& pc : _cfg.ports) {
                    if (pc.port_id >= 0) {
                        std::printf("  %s -> port %d\n", pc.name.c_str(), pc.port_id);
                    } else {
                        std::printf("  %s -> device %s\n", pc.name.c_str(), pc.device.c_str());
                    }
                }
            }
            return 0;
        }
        return std::nullopt;
    }

    runtime::run_options options() const {
        return _opt.common.run.timed(_opt.duration, _cfg.status_interval);
    }

    // Bind configured ports to DPDK ports (by device name or id), or take
    // every probed port as EthernetN with defaults.
    std::vector<runtime::port_request> ports(runtime::session& s) {
        if (_cfg.ports.empty()) {
            for (std::uint16_t id : dpdk::probed_ports()) { _cfg.ports.push_back(probed_port_cfg(_cfg, id)); }
            if (_cfg.ports.empty()) {
                s.fail(2, "no DPDK ports: add --vdev=net_null0 (or net_pcap/net_ring/net_tap) or bind a NIC");
            }
        }
        std::vector<runtime::port_request> req;
        for (auto& pc : _cfg.ports) {
            if (pc.port_id < 0) {
                const int id = dpdk::port_by_name(pc.device);
                if (id < 0) {
                    s.fail(2, _cfg.source + ": PORT|" + pc.name + "|device: no DPDK port named '" + pc.device +
                                  "' (probed ports are the --vdev names and PCI addresses given to EAL)");
                }
                pc.port_id = id;
            } else if (!rte_eth_dev_is_valid_port(static_cast<std::uint16_t>(pc.port_id))) {
                s.fail(2, _cfg.source + ": PORT|" + pc.name + "|port_id: no DPDK port " + std::to_string(pc.port_id) +
                              (_cfg.config_db ? " (config_db.json ports are numbered by order; choose the ports with "
                                                "--port-map Ethernet0=<device>,...)"
                                              : ""));
            }
            runtime::port_request r;
            r.params.port_id = static_cast<std::uint16_t>(pc.port_id);
            r.params.rx_ring_size = _cfg.rx_ring_size;
            r.params.tx_ring_size = _cfg.tx_ring_size;
            r.params.max_frame = _cfg.max_frame;
            r.params.rx_queues = _opt.rx_queues;
            r.label = pc.name;
            req.push_back(r);
        }
        return req;
    }

    runtime::pool_spec pool(runtime::session& s) const {
        if (_cfg.pool.enabled) {
            // Losslessness needs every byte the buffer model admits to be backed
            // by an mbuf: running out of mbufs would drop silently in the NIC.
            // Worst case: the whole pool in minimum-size frames (or cells).
            const std::uint64_t min_charge = std::max<std::uint64_t>(_cfg.pool.cell.v, 60);
            std::uint64_t needed = _cfg.pool.size.v / min_charge;
            needed += _cfg.ports.size() *
                      (std::uint64_t{_cfg.rx_ring_size} * _opt.rx_queues + _cfg.tx_ring_size + 2u * _cfg.burst);
            if (_cfg.mbufs < needed) {
                s.fail(2, _cfg.source + ": ROCELAB|mbufs: " + std::to_string(_cfg.mbufs) +
                              " mbufs cannot back BUFFER_POOL size " + std::to_string(_cfg.pool.size.v) +
                              " B: the pool can hold " + std::to_string(_cfg.pool.size.v / min_charge) +
                              " frames of " + std::to_string(min_charge) + " B plus " +
                              std::to_string(needed - _cfg.pool.size.v / min_charge) +
                              " in RX/TX rings; set ROCELAB.mbufs to at least " + std::to_string(needed) +
                              " (and -m large enough), or shrink the pool");
            }
        }
        // data room includes RTE_PKTMBUF_HEADROOM
        return {"rocelab_sw", _cfg.mbufs, _cfg.mbuf_data_size, "(lower ROCELAB.mbufs, or with hugepages raise -m)"};
    }

    void build(runtime::session& s) {
        const auto& infos = s.ports();
        for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
            const auto& pc = _cfg.ports[i];
            sw::port_binding b;
            b.port_id = static_cast<std::uint16_t>(pc.port_id);
            b.name = pc.name;
            b.mac = pc.mac ? *pc.mac : (_cfg.switch_mac && _cfg.mode == fwd_mode::l3 ? *_cfg.switch_mac : infos[i].mac);
            b.shaped = pc.speed.has_value();
            b.line_rate = pc.speed ? *pc.speed : infos[i].driver_speed;
            b.rx_queues = infos[i].rx_queues;
            _bindings.push_back(b);
        }
        // Speeds the config left to the driver complete the buffer model:
        // `xoff: auto` headroom (the built-in RoCE default) needs each port's speed.
        std::vector<std::pair<int, bits_per_sec>> speeds;
        for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
            speeds.emplace_back(static_cast<int>(i), infos[i].driver_speed);
        }
        if (auto e = resolve_port_speeds(_cfg, speeds); !e.empty()) { s.fail(2, e); }
        // One worker per worker lcore (EAL's -l / --lcores).
        const unsigned lcores = rte_lcore_count();
        const unsigned workers = lcores > 1 ? lcores - 1 : 1;
        auto pipe_r = sw::switch_pipeline::create(_cfg, _bindings, s.pool(), workers, _opt.common.port_workers);
        if (auto* e = std::get_if<std::string>(&pipe_r)) { s.fail(2, _cfg.source + ": " + *e); }
        _pipe = std::move(std::get<0>(pipe_r));
        _status.emplace(_bindings.size(), rte_get_tsc_hz());
    }
    sw::switch_pipeline& pipe() { return *_pipe; }

    void start(runtime::session& s, const runtime::run_clock& clock) {
        _session = &s;
        _idle_base = s.pool_in_use();  // before any worker runs: what the ports hold when idle
        if (!dpdk::eal_no_huge()) { rte_pdump_init(); }  // lets dpdk-dumpcap attach (needs hugepages)
        sw::telemetry_info ti{ROCELAB_VERSION, _cfg.source, _cfg.seed, {}, &clock.tsc};
        for (const auto& pc : _cfg.ports) { ti.pgs.push_back(pc.pgs); }
        sw::telemetry_attach(_pipe.get(), ti);
        if (!_opt.queue_csv.empty()) {
            if (auto e = _csv.open(_opt.queue_csv); !e.empty()) { s.fail(2, "--queue-csv " + _opt.queue_csv + ": " + e); }
        }
        const auto& infos = s.ports();
        std::printf("rocelab-switch %s: %zu ports, mode %s, config %s, seed %llu\n", ROCELAB_VERSION,
                    _bindings.size(), mode_name(), _cfg.source.c_str(), static_cast<unsigned long long>(_cfg.seed));
        for (std::size_t i = 0; i < _bindings.size(); ++i) {
            const auto& b = _bindings[i];
            std::printf("  %s: port %u (%s, %s) mac %s line rate %s%s; %s\n", b.name.c_str(), b.port_id,
                        infos[i].device.c_str(), infos[i].driver.c_str(), runtime::mac_str(b.mac).c_str(),
                        b.line_rate.v ? format_rate(b.line_rate).c_str() : "unknown",
                        b.shaped ? " (shaped)" : " (driver, not shaped)", infos[i].flow_ctrl_note.c_str());
            if (!infos[i].rss_note.empty()) { std::printf("    %s\n", infos[i].rss_note.c_str()); }
        }
        // The worker plan: which lcore runs which ports (their RX queue,
        // ingress accounting and egress).
        std::string plan;
        unsigned lc = rte_get_next_lcore(-1, 1, 0);
        for (std::size_t k = 0; k < _pipe->worker_count(); ++k) {
            plan += k == 0 ? "" : "; ";
            plan += "worker " + std::to_string(k) +
                    (lc < RTE_MAX_LCORE ? " (lcore " + std::to_string(lc) + ")" : " (thread)") + ":";
            for (std::size_t i = 0; i < _bindings.size(); ++i) {
                const bool owns = _pipe->port_worker(i) == k;
                std::string qs;
                for (std::uint16_t q = 0; q < _bindings[i].rx_queues; ++q) {
                    if (_pipe->rx_queue_worker(i, q) == k) { qs += (qs.empty() ? " rxq " : ",") + std::to_string(q); }
                }
                if (!owns && qs.empty()) { continue; }
                plan += (plan.back() == ':' ? " " : ", ") + _bindings[i].name + qs + (owns ? " txq 0" : "");
            }
            if (lc < RTE_MAX_LCORE) { lc = rte_get_next_lcore(lc, 1, 0); }
        }
        std::printf("  workers: %zu; %s\n", _pipe->worker_count(), plan.c_str());
        std::fflush(stdout);
    }

    runtime::depth_sampler worker_hook(nanos now) { return _csv.sampler(_cfg.queue_sample_interval, now); }

    // The control thread's short period (app_runtime.hpp): a queue-depth
    // sampler's ring to drain, or --until-idle's check every millisecond.
    bool busy_control() const { return !_opt.queue_csv.empty() || _opt.until_idle.has_value(); }
    void tick(nanos start, double el) {
        // Link state every 10 ms (rte_eth_link_get_nowait; the worker acts on changes).
        if (el >= _next_link_poll) {
            _pipe->poll_link_states();
            _next_link_poll = el + 0.010;
        }
        print_events(start);
        _csv.drain(*_pipe);
        if (_opt.until_idle && el >= _next_idle_check) {
            check_idle(el);
            _next_idle_check = el + 0.001;
        }
    }

    void status(double since, double el, bool print) {
        if (print) { _status->print(*_pipe, since, el); }
        std::uint64_t behind = 0;
        std::uint64_t overflow = 0;
        for (std::size_t i = 0; i < _bindings.size(); ++i) {
            const auto& c = _pipe->counters(i);
            behind += sw::read_counter(c.tx_behind);
            overflow += sw::read_counter(c.drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)]);
        }
        if (overflow > _warned_overflow) {
            std::fprintf(stderr, "rocelab-switch: warning: lossless headroom overflowed (drop_headroom_overflow %llu): "
                                 "the headroom (xoff) is too small for the link, or the worker lcore stalled "
                                 "(longest gap between polls %.1f us)\n",
                         static_cast<unsigned long long>(overflow), double(_pipe->poll_totals().max_poll_gap_ns) / 1e3);
            _warned_overflow = overflow;
        }
        if (behind > _warned_behind) {
            std::fprintf(stderr, "rocelab-switch: warning: the lcore cannot keep up with the configured line rate "
                                 "(tx_behind %llu)\n", static_cast<unsigned long long>(behind));
            _warned_behind = behind;
        }
    }

    bool finished() const { return _idle_done; }

    void stopped(nanos start, double) {
        print_events(start);
        _csv.close(*_pipe);
    }
    void ports_stopped() {}
    std::uint64_t extra_in_use() const { return 0; }
    void final(const runtime::run_report& r) {
        runtime::print_switch_final(*_pipe, r.elapsed_s);
        if (_idle_done) {
            std::printf("stopped: idle for %s after the last frame (--until-idle)\n",
                        format_time(*_opt.until_idle).c_str());
        }
    }
    std::string write_report(const std::string& path, const runtime::run_report& r) {
        return runtime::write_switch_report(path, *_pipe, _cfg, r);
    }
    void release() { _pipe.reset(); }

private:
    // --until-idle: the ports' frame counters (RX, TX, PFC sent) and the
    // pool's mbufs in use, read from the control thread every millisecond.
    // Idle: the counters did not move for the whole period, at least one
    // frame came in, and every mbuf is back (none queued, staged, stashed
    // for another worker, parked for RSS credit or held for a neighbour).
    // Every worker must also have polled in that period (its published
    // loop count, every 64 loops, advanced twice), so a worker the kernel
    // kept off its CPU is never taken for an idle one.
    void check_idle(double el) {
        std::uint64_t moved = 0;
        std::uint64_t rx = 0;
        for (std::size_t i = 0; i < _bindings.size(); ++i) {
            const sw::port_counters c = _pipe->counters(i);
            rx += sw::read_counter(c.rx_packets);
            moved += sw::read_counter(c.rx_packets) + sw::read_counter(c.tx_packets) +
                     sw::read_counter(c.tx_pfc_frames);
        }
        const std::uint64_t in_use = _session->pool_in_use();
        const std::size_t nw = _pipe->worker_count();
        // Until the first frame every check takes this branch, which also sizes _idle_loops.
        if (moved != _idle_moved || in_use != _idle_base || rx == 0) {
            _idle_moved = moved;
            _idle_since = el;
            _idle_loops.resize(nw);
            for (std::size_t k = 0; k < nw; ++k) { _idle_loops[k] = sw::read_counter(_pipe->worker(k).loops); }
            return;
        }
        if ((el - _idle_since) * 1e9 < double(_opt.until_idle->v)) { return; }
        for (std::size_t k = 0; k < nw; ++k) {
            if (sw::read_counter(_pipe->worker(k).loops) < _idle_loops[k] + 128) { return; }
        }
        _idle_done = true;
    }

    // One line each for what a config_db.json holds that rocelab does not model.
    void print_config_db_notes() const {
        const auto line = [&](const char* what, const std::vector<std::string>& names) {
            if (names.empty()) { return; }
            std::string list;
            for (const auto& n : names) { list += (list.empty() ? "" : ", ") + n; }
            std::fprintf(stderr, "rocelab-switch: %s: %s (not modelled): %s\n", _cfg.source.c_str(), what, list.c_str());
        };
        line("ignored tables", _cfg.ignored_tables);
        line("ignored fields and entries", _cfg.ignored_fields);
    }

    const char* mode_name() const { return _cfg.mode == fwd_mode::l2 ? "l2" : "l3"; }

    void print_events(nanos start) {
        sw::switch_event ev;
        while (_pipe->pop_event(ev)) {
            using k = sw::switch_event::kind;
            const double t = double(ev.ns - start.v) / 1e9;
            if (ev.what == k::link_down || ev.what == k::link_up) {
                const auto& c = _pipe->counters(ev.port);
                std::printf("[%7.3fs] event: link %s on %s%s\n", t, ev.what == k::link_down ? "down" : "up",
                            _bindings[ev.port].name.c_str(),
                            ev.what == k::link_down
                                ? (": egress queues flushed, FDB entries removed, frames to it dropped (drop_link_down " +
                                   std::to_string(sw::read_counter(c.drops[static_cast<std::size_t>(sw::drop_reason::link_down)])) +
                                   ")").c_str()
                                : ": forwarding again");
            } else {
                std::printf("[%7.3fs] event: %s on %s queue %u\n", t,
                            ev.what == k::storm_detected ? "PFC storm detected" : "PFC storm restored",
                            _bindings[ev.port].name.c_str(), ev.queue);
            }
            std::fflush(stdout);
        }
    }

    app_opts _opt;
    switch_cfg _cfg;
    std::vector<sw::port_binding> _bindings;
    std::unique_ptr<sw::switch_pipeline> _pipe;
    std::optional<runtime::switch_status> _status;
    runtime::queue_csv _csv;
    double _next_link_poll = 0;
    runtime::session* _session = nullptr;
    std::uint64_t _idle_base = 0;   // mbufs in use with nothing in flight (at start)
    std::uint64_t _idle_moved = 0;  // frames received + sent at the last change
    double _idle_since = 0;
    std::vector<std::uint64_t> _idle_loops;  // each worker's loops when the idle period began
    double _next_idle_check = 0;
    bool _idle_done = false;
    std::uint64_t _warned_behind = 0;
    std::uint64_t _warned_overflow = 0;
};

}  // namespace

int main(int argc, char** argv) {
    // --config-schema, like --help, works with or without "--" and starts nothing.
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--config-schema") == 0) {
            std::fputs(schema_markdown().c_str(), stdout);
            return 0;
        }
    }
    switch_app app;
    return runtime::run_app(app, argc, argv);
}
