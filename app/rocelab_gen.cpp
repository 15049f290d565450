// rocelab-gen: a closed-loop RoCEv2 traffic generator on DPDK poll-mode lcores.
//
//   rocelab-gen [EAL options] -- [options]
//
// Option parsing and wiring only: the data path is pipelines/gen, the
// protocol logic lib/roce, lib/proto and lib/qos, the shared main()
// app/runtime. See --help and docs/generator.md.
#include <arpa/inet.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/gen_config.hpp"
#include "config/units_parse.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "gen/gen_pipeline.hpp"
#include "rocelab_version.h"
#include "runtime/app_runtime.hpp"
#include "runtime/options.hpp"
#include "runtime/gen_report.hpp"
#include "runtime/gen_telemetry.hpp"

using namespace rocelab;

namespace {

constexpr const char* usage_text = R"(rocelab-gen - a closed-loop RoCEv2 traffic generator on DPDK

Usage: rocelab-gen [EAL options] -- [options]

EAL options come first, as for dpdk-testpmd. Without NICs or hugepages, one
process can hold both ends over a back-to-back ring pair:
  rocelab-gen --no-huge -m 1024 --no-pci -l 0-1 --file-prefix g1 -- \
      --loopback-pairs 1 --rate 1Gbps --duration 2s --report r.json

Without a config: one RC QP from port 0 to the last port writing 64KiB
messages at the port's rate (--rate, else the driver's speed).

Application options:
  -c, --config FILE         YAML configuration (docs/generator.md)
      --loopback-pairs N    create N pairs of ports wired back to back
                            (rte_eth_from_rings), after any --vdev ports
  -d, --duration TIME       stop after TIME (e.g. 2s); also stops when every
                            flow completed --messages
  -r, --report FILE         final results as JSON (per QP, per port, provenance)
      --timeseries FILE     CSV of per-flow throughput over time
      --timeseries-interval TIME   sampling period (default 100ms)
      --fct-csv FILE        every message's completion time, CSV flow,fct_ns
                            (up to each flow's sample cap: the report's
                            fct_samples and fct_samples_dropped)
      --pcap-out DIR        capture every port, both directions, to
                            DIR/<port>-rx.pcap and DIR/<port>-tx.pcap
      --snaplen BYTES       bytes captured per frame (default 9216)
      --status-interval T   status line period (default 1s; 0s disables)
      --tx-only             benchmark mode: send only, no receiver. Each data
                            packet is acknowledged by its requester at send
                            time (no ACK timeout, window never fills); frames
                            are real RC WRITE/SEND with increasing PSNs and
                            correct ICRCs. One port is enough; unshaped unless
                            --rate is given. Goodput/FCT mean "sent".
      --tx-payload MODE     how data frames get their payload (constant
                            pattern, ICRC = header CRC combined with the
                            cached payload CRC): prefilled (default: full-PMTU
                            frames from a pool pre-filled with the payload)
                            | copy (memcpy per frame) | build (reference: whole
                            frame built and hashed) | no-icrc (benchmark only:
                            ICRC left 0, frames invalid)
      --linger TIME         after the run, keep the ports open (unpolled) until
                            every link is down or TIME has passed: lets a
                            memif peer (rocelab-switch) stop first
      --port-workers LIST   which worker lcore owns each port, in port order,
                            e.g. 0,1 (default: port i to worker i mod N)
  -q, --quiet               no status lines
      --idle-yield          a worker whose poll found nothing to do yields its
                            CPU: for several workers sharing a CPU (a small
                            test machine); costs latency on dedicated cores
      --check-config        validate the configuration and exit
  -V, --version             print the version
  -h, --help                this text

Workers: one per EAL worker lcore (-l 0-1 one, -l 0-2 two). Each owns whole
ports: their RX and TX, the requester side (QPs, pacing, DCQCN, message
sources, FCTs) of the flows sent from them and the responder side (ACKs,
NAKs, CNPs) of the flows received on them, so a flow's two ends can be on
different workers. At most one worker per port; the banner prints the plan.

Workload and transport (also YAML keys; dashes or underscores):
      --rate RATE           port line rate, e.g. 10Gbps (cap and default QP pace)
      --flow-rate RATE      per-QP pacing rate (default: the port rate)
      --pattern P           one-to-one | incast | permutation | all-to-all
                            (traffic); ring-allreduce (all-reduce) | all-gather |
                            reduce-scatter | alltoall (collectives: --msg-size
                            = the buffer S, --messages = collectives)
      --senders N           QPs (one-to-one) or senders (incast)
      --planes N            ring collectives striped over N planes (host i: server i/N, plane i%N)
      --striping MODE       static (default) or weighted by each plane's progress
      --msg-size SIZE       e.g. 64KiB, 1MiB
      --size-dist D         fixed | uniform:LO-HI | cdf:FILE
      --arrivals A          closed-loop | fixed:INTERVAL | poisson:MEAN
      --outstanding N       closed-loop messages in flight per QP (default 4)
      --messages N          messages per QP (0 = unlimited)
      --start T, --start-stagger T    first message time; flow i adds i x T
      --pmtu N              256 | 512 | 1024 | 2048 | 4096 (default 1024)
      --window N            packets outstanding per QP (default 128)
      --ack-timeout X       code 0..31 or a time (rounded up to 4.096us x 2^code)
      --retry-cnt N, --op write|send, --dscp N, --priority N (PFC priority, 3)
      --start-psn N         first PSN of every QP, 0..16777215 (default 0; e.g.
                            16777000 to cross the 24-bit wrap early)
      --ack-every N, --ack-coalesce N
      --loss PCT            data packet loss, e.g. 1% (seeded, at the receiver)
      --ack-loss PCT        ACK/NAK loss
      --link-delay TIME     one-way delay added to every received frame
      --seed N              seed of every random choice (default 1)
      --ip-version 4|6      address family of the default hosts (default 4;
                            6: fc00::<port>:<n>, RoCEv2 over IPv6, ND answered)
      --mbufs N             mbuf pool size (default 16384)
      --pfc-tx SPEC         PFC source: port=P,prio=N,quanta=Q,interval=T,count=N,start=T

DCQCN (on by default, as on an NVIDIA NIC; docs/generator.md "DCQCN"):
      --dcqcn PROFILE       nvidia_cx (default) | dcqcn_paper | hpcc_ns3 | off.
                            Each QP starts at its line rate (--rate / --flow-rate,
                            else the driver's speed) and its reaction point cuts
                            and recovers the pacing rate on CNPs; the receiver
                            turns CE-marked data into CNPs (DSCP 48, PCP 6).
      --rpg-time-reset T, --rpg-byte-reset B, --rpg-threshold N,
      --rpg-ai-rate R, --rpg-hai-rate R, --rpg-min-rate R, --rpg-max-rate R,
      --rpg-gd N, --rpg-min-dec-fac PCT, --dce-tcp-g G (0..1023),
      --dce-tcp-rtt T, --initial-alpha-value A (0..1023),
      --rate-reduce-monitor-period T, --rate-to-set-on-first-cnp R,
      --clamp-tgt-rate B, --clamp-tgt-rate-after-time-inc B
                            NVIDIA's parameter names, units written out
                            (e.g. --rpg-ai-rate 5Mbps --rpg-time-reset 300us);
                            each overrides the profile's value
      --cnp-mode per_qp|per_port (per_qp; hpcc_ns3: per_port, a CNP per CE
                            packet), --cnp-interval T (50us),
      --min-time-between-cnps T (0us), --cnp-dscp N (48), --cnp-802p-prio N (6)
      --dcqcn-trace FILE    CSV of every reaction-point event per QP:
                            time_s,flow,event,rc_bps,rt_bps,alpha

Exit codes: 0 clean stop, 2 bad command line or configuration, 1 runtime error.
Telemetry: dpdk-telemetry.py -f <file-prefix>, then /rocelab_gen/ports,
/rocelab_gen/port,<name>, /rocelab_gen/flows, /rocelab_gen/flow,<index>,
/rocelab_gen/info, /rocelab_gen/workers (ports and busy cycles per worker lcore).
)";

struct app_opts {
    runtime::common_opts common;  // -c, -r, --pcap-out, --snaplen, -q, --check-config
    std::string timeseries;
    std::string fct_csv;
    nanos ts_interval{100'000'000};
    nanos linger{0};
    nanos status_interval{1'000'000'000};
    int loopback_pairs = 0;
    gen::gen_tx_opts tx;
    std::vector<std::pair<std::string, std::string>> sets;  // workload keys, applied after the config file
};

[[noreturn]] void die(int code, const std::string& msg) { runtime::die("rocelab-gen", code, msg); }

app_opts parse_app_opts(int argc, char** argv) {
    app_opts o;
    runtime::option_args args(argc, argv, "rocelab-gen");
    for (; args.more(); args.next()) {
        if (o.common.parse(args, usage_text)) {
            continue;
        }
        const std::string a = args.arg();
        if (a == "--timeseries") {
            o.timeseries = args.value(a);
        } else if (a == "--fct-csv") {
            o.fct_csv = args.value(a);
        } else if (a == "--timeseries-interval" || a == "--status-interval") {
            const std::string v = args.value(a);
            auto t = parse_time(v);
            if (!t || t->v < 0 || (a == "--timeseries-interval" && t->v < 1'000'000)) {
                die(2, a + " " + v + ": expected a time with units, e.g. 100ms (timeseries: >= 1ms)");
            }
            (a == "--timeseries-interval" ? o.ts_interval : o.status_interval) = *t;
        } else if (a == "--linger") {
            const std::string v = args.value(a);
            auto t = parse_time(v);
            if (!t || t->v < 0) {
                die(2, "--linger " + v + ": expected a time with units, e.g. 10s");
            }
            o.linger = *t;
        } else if (a == "--loopback-pairs") {
            const std::string v = args.value(a);
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (end == v.c_str() || *end != 0 || n < 0 || n > 16) {
                die(2, "--loopback-pairs " + v + ": expected 0..16");
            }
            o.loopback_pairs = static_cast<int>(n);
        } else if (a == "--tx-only") {
            o.tx.tx_only = true;
        } else if (a == "--tx-payload") {
            const std::string v = args.value(a);
            if (!gen::tx_payload_parse(v, o.tx.payload)) {
                die(2, "--tx-payload " + v + ": expected prefilled | copy | build | no-icrc");
            }
        } else if (a == "-d") {
            o.sets.emplace_back("duration", args.value(a));
        } else if (a.size() > 2 && a.rfind("--", 0) == 0) {
            const std::string key = a.substr(2);
            // Validate the key now (with a probe value) so typos fail before EAL starts.
            o.sets.emplace_back(key, args.value(a));
        } else {
            args.unknown();
        }
    }
    return o;
}

std::string ip_str(std::uint32_t ip) {
    char b[20];
    std::snprintf(b, sizeof b, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
    return b;
}

std::string host_ip_str(const gen_host& h) {
    if (!h.v6) {
        return ip_str(h.ip);
    }
    char b[INET6_ADDRSTRLEN];
    return inet_ntop(AF_INET6, h.ip6.data(), b, sizeof b) != nullptr ? b : "?";
}

// rocelab-gen for runtime::run_app (app_runtime.hpp): what differs from rocelab-switch.
class gen_app {
public:
    static constexpr const char* name = "rocelab-gen";
    static constexpr const char* usage = usage_text;
    static constexpr const char* capture_tag = "gen";

    // Configuration first (file, then command-line keys), validated before EAL.
    std::optional<int> configure(const runtime::cmdline& cl) {
        _opt = cl.app_argv == nullptr ? app_opts{} : parse_app_opts(cl.app_argc, cl.app_argv);
        _cfg = _opt.common.load_config(name, [] { return gen_cfg{}; }, load_gen_cfg);
        for (const auto& [k, v] : _opt.sets) {
            if (auto e = gen_cfg_set(_cfg, k, v); !e.empty()) {
                die(2, "--" + e);
            }
        }
        if (_opt.common.check_config) {
            std::printf("%s: valid (pattern %s, %zu explicit flows)\n", _cfg.source.c_str(),
                        gen_pattern_name(_cfg.pattern), _cfg.flow_specs.size());
            return 0;
        }
        return std::nullopt;
    }

    runtime::run_options options() const {
        return _opt.common.run.timed(_cfg.duration, _opt.status_interval);
    }

    // The probed ports, then --loopback-pairs; expands the workload onto them.
    std::vector<runtime::port_request> ports(runtime::session& s) {
        std::vector<std::uint16_t> port_ids = dpdk::probed_ports();
        for (int i = 0; i < _opt.loopback_pairs; ++i) {
            const std::string a = "gen_lb" + std::to_string(i) + "a";
            const std::string b = "gen_lb" + std::to_string(i) + "b";
            rte_ring* ab = rte_ring_create(a.c_str(), 4096, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
            rte_ring* ba = rte_ring_create(b.c_str(), 4096, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
            if (ab == nullptr || ba == nullptr) {
                s.fail(1, std::string("cannot create loopback rings: ") + rte_strerror(rte_errno));
            }
            _rings.push_back(ab);
            _rings.push_back(ba);
            const int pa = rte_eth_from_rings(("lb" + std::to_string(i) + "a").c_str(), &ba, 1, &ab, 1,
                                              static_cast<unsigned>(rte_socket_id()));
            const int pb = rte_eth_from_rings(("lb" + std::to_string(i) + "b").c_str(), &ab, 1, &ba, 1,
                                              static_cast<unsigned>(rte_socket_id()));
            if (pa < 0 || pb < 0) {
                s.fail(1, std::string("cannot create loopback ports: ") + rte_strerror(rte_errno));
            }
            port_ids.push_back(static_cast<std::uint16_t>(pa));
            port_ids.push_back(static_cast<std::uint16_t>(pb));
        }
        if (port_ids.empty()) {
            s.fail(2, "no DPDK ports: add --vdev=... or -- --loopback-pairs 1");
        }
        const int nports = static_cast<int>(port_ids.size());
        const bool tx_only = _opt.tx.tx_only;
        // --tx-only: the receiving hosts need no port of their own; expand as if
        // there were two ports and put every host on an existing one.
        if (auto e = expand_gen_cfg(_cfg, tx_only ? std::max(nports, 2) : nports); !e.empty()) {
            s.fail(2, _cfg.source + ": " + e);
        }
        if (tx_only && is_collective(_cfg.pattern)) {
            // Steps wait for the predecessor's messages to arrive; --tx-only has no receiver.
            s.fail(2, std::string("--tx-only: pattern ") + gen_pattern_name(_cfg.pattern) +
                          " needs receivers (each step waits for messages to arrive)");
        }
        if (tx_only) {
            for (auto& h : _cfg.hosts) {
                h.port = std::min(h.port, nports - 1);
            }
        }
        // With only loopback pairs (no switch in between), a frame reaches just
        // the partner port: refuse flows that could never arrive.
        if (!tx_only && _opt.loopback_pairs > 0 && port_ids.size() == static_cast<std::size_t>(2 * _opt.loopback_pairs)) {
            for (const auto& f : _cfg.flows) {
                const int src = _cfg.hosts[static_cast<std::size_t>(f.src_host)].port;
                const int dst = _cfg.hosts[static_cast<std::size_t>(f.dst_host)].port;
                if ((src ^ 1) != dst) {
                    s.fail(2, _cfg.source + ": flow " + f.name + " goes from port " + std::to_string(src) +
                                  " to port " + std::to_string(dst) +
                                  ", but loopback pairs only connect ports 2k and 2k+1 "
                                  "(use one pair, or put a switch between the ports)");
                }
            }
        }
        std::uint32_t max_pmtu = 1024;
        for (const auto& f : _cfg.flows) {
            max_pmtu = std::max(max_pmtu, f.qp.pmtu);
        }
        // One segment per frame: data room for the largest frame (PMTU + headers).
        _max_frame = std::max<std::uint32_t>(max_pmtu + 128, 1518);
        std::vector<runtime::port_request> req;
        for (std::uint16_t id : port_ids) {
            runtime::port_request r;
            r.params.port_id = id;
            r.params.max_frame = _max_frame;
            r.params.rx_ring_size = 1024;
            r.params.tx_ring_size = 512;
            r.label = "port " + std::to_string(id);
            req.push_back(r);
        }
        return req;
    }

    runtime::pool_spec pool(runtime::session&) const {
        return {"rocelab_gen", _cfg.mbufs, static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + _max_frame),
                "(lower --mbufs, or with hugepages raise -m)"};
    }

    void build(runtime::session& s) {
        const auto& infos = s.ports();
        for (const auto& info : infos) {
            gen::port_binding b;
            b.port_id = info.port_id;
            b.name = info.device;
            b.line_rate = _cfg.rate.v != 0 ? _cfg.rate : _opt.tx.tx_only ? bits_per_sec{0} : info.driver_speed;
            _bindings.push_back(b);
        }
        const unsigned lcores = rte_lcore_count();
        const unsigned workers = lcores > 1 ? lcores - 1 : 1;
        auto pipe_r = gen::gen_pipeline::create(_cfg, _bindings, s.pool(), _opt.tx, workers, _opt.common.port_workers);
        if (auto* e = std::get_if<std::string>(&pipe_r)) {
            s.fail(2, _cfg.source + ": " + *e);
        }
        _pipe = std::move(std::get<0>(pipe_r));
        _pipe->poll_continuously();  // the lcores poll without pause: no deadline is asked
        _status.emplace(_bindings.size(), rte_get_tsc_hz());
    }
    gen::gen_pipeline& pipe() { return *_pipe; }

    void start(runtime::session& s, const runtime::run_clock& clock) {
        if (!_opt.timeseries.empty()) {
            _ts = std::fopen(_opt.timeseries.c_str(), "w");
            if (_ts == nullptr) {
                s.fail(2, "--timeseries " + _opt.timeseries + ": " + std::strerror(errno));
            }
            std::fprintf(_ts, "time_s,flow,tx_bps,goodput_bps,tx_bytes,rx_bytes,messages_completed,retransmissions,"
                              "naks,rate_bps,cnp_rx,cnp_tx\n");
            _ts_prev.resize(_pipe->flow_count());
        }
        print_banner(s.ports());
        gen::telemetry_attach(_pipe.get(), gen::telemetry_info{ROCELAB_VERSION, &clock.tsc});
    }

    runtime::no_hook worker_hook(nanos) const { return {}; }

    // The control thread's short period (app_runtime.hpp): a time series to
    // sample, or flows that all finish (the run stops at the tick that sees it).
    bool busy_control() const { return _ts != nullptr || _pipe->can_finish(); }
    void tick(nanos, double el) {
        if (_ts != nullptr && el - _last_ts >= double(_opt.ts_interval.v) / 1e9) {
            sample_timeseries(el);
        }
    }
    void status(double since, double el, bool print) {
        if (print) {
            _status->print(*_pipe, since, el);
        }
    }
    bool finished() const { return _pipe->all_finished(); }

    void stopped(nanos, double elapsed) {
        if (_ts != nullptr) {
            sample_timeseries(elapsed);
            std::fclose(_ts);
            _ts = nullptr;
        }
        linger();
    }
    // Frames still in the loopback rings belong to us: free them.
    void ports_stopped() {
        for (rte_ring* r : _rings) {
            void* obj = nullptr;
            while (rte_ring_dequeue(r, &obj) == 0) {
                rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
            }
        }
    }
    std::uint64_t extra_in_use() const { return _pipe->own_mbufs_in_use(); }
    void final(const runtime::run_report& r) {
        runtime::print_gen_final(*_pipe, _cfg, r.elapsed_s, r.end);
        if (!_opt.fct_csv.empty()) {
            if (auto e = runtime::write_fct_csv(_opt.fct_csv, *_pipe); !e.empty()) {
                std::fprintf(stderr, "rocelab-gen: %s\n", e.c_str());
            }
        }
        if (!_cfg.dcqcn_trace.empty()) {
            if (auto e = runtime::write_dcqcn_trace(_cfg.dcqcn_trace, *_pipe); !e.empty()) {
                std::fprintf(stderr, "rocelab-gen: %s\n", e.c_str());
            } else {
                std::printf("dcqcn trace: %s\n", _cfg.dcqcn_trace.c_str());
            }
        }
    }
    std::string write_report(const std::string& path, const runtime::run_report& r) {
        return runtime::write_gen_report(path, *_pipe, _cfg, r);
    }
    void release() {
        _pipe.reset();
        for (rte_ring* r : _rings) {
            rte_ring_free(r);
        }
        _rings.clear();
    }

private:
    void print_banner(const std::vector<dpdk::port_info>& infos) const {
        std::printf("rocelab-gen %s: %zu ports, %zu flows, pattern %s, config %s, seed %llu\n", ROCELAB_VERSION,
                    _bindings.size(), _cfg.flows.size(), gen_pattern_name(_cfg.pattern), _cfg.source.c_str(),
                    static_cast<unsigned long long>(_cfg.seed));
        for (std::size_t i = 0; i < _bindings.size(); ++i) {
            const bits_per_sec rate = _bindings[i].line_rate;
            std::printf("  port %zu: %s (%s) line rate %s\n", i, _bindings[i].name.c_str(), infos[i].driver.c_str(),
                        rate.v ? format_rate(rate).c_str() : "unknown (unshaped)");
        }
        if (_pipe->flow_count() != 0) {
            const dcqcn_np_cfg& np = _pipe->np_cfg();
            std::printf("  dcqcn %s: %s; notification point %s\n", dcqcn_profile_name(_cfg.dcqcn),
                        _cfg.dcqcn == dcqcn_profile::off ? "QPs paced at their line rate, CNPs counted only"
                                                         : "each QP's reaction point sets its pacing rate on CNPs",
                        !np.enabled ? "off"
                        : np.mode == dcqcn_np_mode::per_qp
                            ? ("per QP, at most one CNP per " + format_time(np.cnp_interval) + ", DSCP " +
                               std::to_string(np.cnp_dscp) + " PCP " + std::to_string(np.cnp_802p_prio)).c_str()
                            : ("per port, CNPs at least " + format_time(np.min_time_between_cnps) + " apart, DSCP " +
                               std::to_string(np.cnp_dscp) + " PCP " + std::to_string(np.cnp_802p_prio)).c_str());
        }
        std::string plan;
        unsigned lc = rte_get_next_lcore(-1, 1, 0);
        for (std::size_t k = 0; k < _pipe->worker_count(); ++k) {
            plan += (k == 0 ? "" : "; ") + std::string("worker ") + std::to_string(k) +
                    (lc < RTE_MAX_LCORE ? " (lcore " + std::to_string(lc) + ")" : " (thread)") + ":";
            for (std::size_t i = 0; i < _bindings.size(); ++i) {
                if (_pipe->port_worker(i) == k) { plan += " port " + std::to_string(i) + " rxq 0 txq 0"; }
            }
            if (lc < RTE_MAX_LCORE) { lc = rte_get_next_lcore(lc, 1, 0); }
        }
        std::printf("  workers: %zu; %s\n", _pipe->worker_count(), plan.c_str());
        for (const auto& h : _cfg.hosts) {
            std::printf("  host %s: port %d mac %s ip %s\n", h.name.c_str(), h.port, runtime::mac_str(h.mac).c_str(),
                        host_ip_str(h).c_str());
        }
        for (const auto& f : _cfg.flows) {
            std::printf("  flow %s: qpn 0x%x -> 0x%x pmtu %u window %u ack_timeout %u (%s) msg %s\n", f.name.c_str(),
                        f.qp.src_qpn, f.qp.dst_qpn, f.qp.pmtu, f.qp.window, f.qp.ack_timeout,
                        format_time(ack_timeout_of(f.qp.ack_timeout)).c_str(), format_bytes(f.sizes.fixed).c_str());
        }
        std::fflush(stdout);
    }

    // --timeseries: one row per flow with the rates since the last row.
    void sample_timeseries(double el) {
        const double dt = el - _last_ts;
        if (dt <= 0) {
            return;
        }
        for (std::size_t f = 0; f < _pipe->flow_count(); ++f) {
            const auto& fl = _pipe->flow(f);
            const std::uint64_t tx = gen::read_counter(fl.rq.counters().tx_bytes);
            const std::uint64_t rx = gen::read_counter(fl.rs.counters().rx_bytes);
            std::fprintf(_ts, "%.6f,%s,%.0f,%.0f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", el, fl.cfg.name.c_str(),
                         double(tx - _ts_prev[f].first) * 8 / dt, double(rx - _ts_prev[f].second) * 8 / dt,
                         (unsigned long long)tx, (unsigned long long)rx,
                         (unsigned long long)gen::read_counter(fl.rq.counters().messages_completed),
                         (unsigned long long)gen::read_counter(fl.rq.counters().retx_packets),
                         (unsigned long long)gen::read_counter(fl.rq.counters().naks_rx),
                         (unsigned long long)fl.pacer.rate_relaxed().v,
                         (unsigned long long)gen::read_counter(fl.cnp_rx),
                         (unsigned long long)gen::read_counter(fl.cnp_tx));
            _ts_prev[f] = {tx, rx};
        }
        _last_ts = el;
    }

    // --linger: the worker has stopped; keep the ports open (not polled)
    // until every link is down (the peer exited) or the time is up. A memif
    // server unmaps a departing client's rings while its own worker may be
    // inside rx_burst (a DPDK 22.11 memif race): letting the peer leave
    // first, while nothing here polls, avoids it on both sides.
    void linger() const {
        if (_opt.linger.v <= 0) {
            return;
        }
        const auto l0 = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - l0 < std::chrono::nanoseconds(_opt.linger.v)) {
            bool any_up = false;
            for (const auto& b : _bindings) {
                rte_eth_link link{};
                any_up = any_up || (rte_eth_link_get_nowait(b.port_id, &link) == 0 && link.link_status != 0);
            }
            if (!any_up) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

    app_opts _opt;
    gen_cfg _cfg;
    std::vector<rte_ring*> _rings;  // --loopback-pairs
    std::uint32_t _max_frame = 1518;
    std::vector<gen::port_binding> _bindings;
    std::unique_ptr<gen::gen_pipeline> _pipe;
    std::optional<runtime::gen_status> _status;
    std::FILE* _ts = nullptr;  // --timeseries
    double _last_ts = 0.0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> _ts_prev;  // tx, rx bytes per flow at the last row
};

}  // namespace

int main(int argc, char** argv) {
    gen_app app;
    return runtime::run_app(app, argc, argv);
}
