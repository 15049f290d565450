// rocelab-gen: a closed-loop RoCEv2 traffic generator on DPDK poll-mode lcores.
//
//   rocelab-gen [EAL options] -- [options]
//
// Option parsing and wiring only: the data path is pipelines/gen, the
// protocol logic lib/roce, lib/proto and lib/qos. See --help and
// docs/generator.md.
#include <arpa/inet.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/gen_config.hpp"
#include "config/units_parse.hpp"
#include "core/json.hpp"
#include "dpdk/capture.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "gen/gen_pipeline.hpp"
#include "rocelab_version.h"
#include "runtime/app_common.hpp"
#include "runtime/gen_telemetry.hpp"
#include "runtime/worker.hpp"

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
  -q, --quiet               no status lines
      --check-config        validate the configuration and exit
  -V, --version             print the version
  -h, --help                this text

Workload and transport (also YAML keys; dashes or underscores):
      --rate RATE           port line rate, e.g. 10Gbps (cap and default QP pace)
      --flow-rate RATE      per-QP pacing rate (default: the port rate)
      --pattern P           one-to-one | incast | permutation | all-to-all |
                            ring-allreduce (--messages = collectives)
      --senders N           QPs (one-to-one) or senders (incast)
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
      --cnp-mode per_qp|per_port, --cnp-interval T (50us),
      --min-time-between-cnps T (0us), --cnp-dscp N (48), --cnp-802p-prio N (6)
      --dcqcn-trace FILE    CSV of every reaction-point event per QP:
                            time_s,flow,event,rc_bps,rt_bps,alpha

Exit codes: 0 clean stop, 2 bad command line or configuration, 1 runtime error.
Telemetry: dpdk-telemetry.py -f <file-prefix>, then /rocelab_gen/ports,
/rocelab_gen/port,<name>, /rocelab_gen/flows, /rocelab_gen/flow,<index>,
/rocelab_gen/info.
)";

struct app_opts {
    std::string config;
    std::string report;
    std::string timeseries;
    nanos ts_interval{100'000'000};
    nanos linger{0};
    std::string pcap_out;
    std::uint32_t snaplen = 9216;
    nanos status_interval{1'000'000'000};
    bool quiet = false;
    bool check_config = false;
    int loopback_pairs = 0;
    gen::gen_tx_opts tx;
    std::vector<std::pair<std::string, std::string>> sets;  // workload keys, applied after the config file
};

[[noreturn]] void die(int code, const std::string& msg) { runtime::die("rocelab-gen", code, msg); }

app_opts parse_app_opts(int argc, char** argv) {
    app_opts o;
    auto need = [&](int& i, const std::string& opt) -> std::string {
        if (i + 1 >= argc) {
            die(2, "option " + opt + " needs a value (see --help)");
        }
        return argv[++i];
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else if (a == "-V" || a == "--version") {
            std::printf("rocelab-gen %s\n", ROCELAB_VERSION);
            std::exit(0);
        } else if (a == "-c" || a == "--config") {
            o.config = need(i, a);
        } else if (a == "-r" || a == "--report") {
            o.report = need(i, a);
        } else if (a == "--timeseries") {
            o.timeseries = need(i, a);
        } else if (a == "--timeseries-interval" || a == "--status-interval") {
            const std::string v = need(i, a);
            auto t = parse_time(v);
            if (!t || t->v < 0 || (a == "--timeseries-interval" && t->v < 1'000'000)) {
                die(2, a + " " + v + ": expected a time with units, e.g. 100ms (timeseries: >= 1ms)");
            }
            (a == "--timeseries-interval" ? o.ts_interval : o.status_interval) = *t;
        } else if (a == "--linger") {
            const std::string v = need(i, a);
            auto t = parse_time(v);
            if (!t || t->v < 0) {
                die(2, "--linger " + v + ": expected a time with units, e.g. 10s");
            }
            o.linger = *t;
        } else if (a == "--pcap-out") {
            o.pcap_out = need(i, a);
        } else if (a == "--snaplen") {
            const std::string v = need(i, a);
            auto b = parse_bytes(v, bare_number::accepted);
            if (!b || b->v < 64 || b->v > 9216) {
                die(2, "--snaplen " + v + ": expected 64..9216 bytes");
            }
            o.snaplen = static_cast<std::uint32_t>(b->v);
        } else if (a == "--loopback-pairs") {
            const std::string v = need(i, a);
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (end == v.c_str() || *end != 0 || n < 0 || n > 16) {
                die(2, "--loopback-pairs " + v + ": expected 0..16");
            }
            o.loopback_pairs = static_cast<int>(n);
        } else if (a == "-q" || a == "--quiet") {
            o.quiet = true;
        } else if (a == "--tx-only") {
            o.tx.tx_only = true;
        } else if (a == "--tx-payload") {
            const std::string v = need(i, a);
            if (!gen::tx_payload_parse(v, o.tx.payload)) {
                die(2, "--tx-payload " + v + ": expected prefilled | copy | build | no-icrc");
            }
        } else if (a == "--check-config") {
            o.check_config = true;
        } else if (a == "-d") {
            o.sets.emplace_back("duration", need(i, a));
        } else if (a.size() > 2 && a.rfind("--", 0) == 0) {
            const std::string key = a.substr(2);
            // Validate the key now (with a probe value) so typos fail before EAL starts.
            o.sets.emplace_back(key, need(i, a));
        } else {
            die(2, "unknown option '" + a + "' (application options go after '--'; see --help)");
        }
    }
    return o;
}

using runtime::mac_str;
using runtime::rate_str;

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

struct port_prev {
    std::uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
};

void print_status(const gen::gen_pipeline& p, std::vector<port_prev>& prev, double dt, double t) {
    std::string line;
    char b[320];
    std::snprintf(b, sizeof b, "[%7.1fs]", t);
    line += b;
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const port_prev now{gen::read_counter(c.rx_packets), gen::read_counter(c.tx_packets),
                            gen::read_counter(c.rx_bytes), gen::read_counter(c.tx_bytes)};
        std::snprintf(b, sizeof b, " | %s tx %s %.3fMpps rx %s %.3fMpps", p.binding(i).name.c_str(),
                      rate_str(double(now.tx_bytes - prev[i].tx_bytes) * 8 / dt).c_str(),
                      double(now.tx_packets - prev[i].tx_packets) / dt / 1e6,
                      rate_str(double(now.rx_bytes - prev[i].rx_bytes) * 8 / dt).c_str(),
                      double(now.rx_packets - prev[i].rx_packets) / dt / 1e6);
        line += b;
        prev[i] = now;
    }
    std::uint64_t naks = 0, retx = 0, timeouts = 0, done = 0;
    for (std::size_t f = 0; f < p.flow_count(); ++f) {
        const auto& rc = p.flow(f).rq.counters();
        naks += gen::read_counter(rc.naks_rx);
        retx += gen::read_counter(rc.retx_packets);
        timeouts += gen::read_counter(rc.timeouts);
        done += gen::read_counter(rc.messages_completed);
    }
    std::snprintf(b, sizeof b, " | msgs %llu naks %llu retx %llu timeouts %llu", (unsigned long long)done,
                  (unsigned long long)naks, (unsigned long long)retx, (unsigned long long)timeouts);
    line += b;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double q) {
    if (sorted.empty()) {
        return 0;
    }
    // Nearest rank.
    std::size_t k = static_cast<std::size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
    k = std::clamp<std::size_t>(k, 1, sorted.size());
    return sorted[k - 1];
}

// --dcqcn-trace: every reaction-point event of every QP, in time order per
// QP (written after the run from the preallocated per-flow buffers).
std::string write_dcqcn_trace(const std::string& path, const gen::gen_pipeline& p) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        return "--dcqcn-trace " + path + ": " + std::strerror(errno);
    }
    std::fprintf(f, "time_s,flow,event,rc_bps,rt_bps,alpha\n");
    std::uint64_t dropped = 0;
    for (std::size_t i = 0; i < p.flow_count(); ++i) {
        const auto& fl = p.flow(i);
        if (!fl.trace) {
            continue;
        }
        for (const auto& r : fl.trace->records()) {
            std::fprintf(f, "%.9f,%s,%s,%.0f,%.0f,%.6f\n", double(r.t.v) / 1e9, fl.cfg.name.c_str(),
                         dcqcn_event_name(r.ev), r.rc_bps, r.rt_bps, r.alpha);
        }
        dropped += fl.trace->dropped();
    }
    std::fclose(f);
    if (dropped != 0) {
        return "--dcqcn-trace " + path + ": " + std::to_string(dropped) +
               " events did not fit the per-QP trace buffer (262144 events) and are missing at the end";
    }
    return "";
}

void write_report(const std::string& path, const gen::gen_pipeline& p, const gen_cfg& cfg, double elapsed,
                  const std::vector<dpdk::port_info>& infos, const std::vector<rte_eth_stats>& es,
                  std::uint64_t mbufs_total, std::uint64_t in_use, const dpdk::capture* cap, std::uint64_t tsc_hz,
                  const std::string& cmdline, nanos end_now) {
    std::string out;
    json_writer j(out);
    j.begin_object();
    j.key("provenance");
    j.begin_object();
    j.kv("tool", "rocelab-gen");
    j.kv("version", ROCELAB_VERSION);
    j.kv("config", cfg.source);
    j.kv("command_line", cmdline);
    j.kv("seed", cfg.seed);
    j.kv("pattern", gen_pattern_name(cfg.pattern));
    j.kv("data_loss", cfg.data_loss.p);
    j.kv("ack_loss", cfg.ack_loss.p);
    j.kv("link_delay_ns", cfg.link_delay.v);
    j.kv("tx_only", p.tx_opts().tx_only);
    j.kv("tx_payload", gen::tx_payload_name(p.tx_opts().payload));
    j.end_object();
    // DCQCN as resolved (every flow shares it but for its line rate).
    j.key("dcqcn");
    j.begin_object();
    j.kv("profile", dcqcn_profile_name(cfg.dcqcn));
    if (p.flow_count() != 0) {
        const dcqcn_cfg& d = p.flow(0).rp.cfg();
        j.kv("line_rate_bps", d.line_rate.v);
        j.kv("rpg_time_reset_ns", d.rpg_time_reset.v);
        j.kv("rpg_byte_reset_bytes", d.rpg_byte_reset.v);
        j.kv("rpg_threshold", static_cast<std::uint64_t>(d.rpg_threshold));
        j.kv("rpg_ai_rate_bps", d.rpg_ai_rate.v);
        j.kv("rpg_hai_rate_bps", d.rpg_hai_rate.v);
        j.kv("rpg_min_rate_bps", d.rpg_min_rate.v);
        j.kv("rpg_max_rate_bps", d.rpg_max_rate.v);
        j.kv("rpg_gd", static_cast<std::uint64_t>(d.rpg_gd));
        j.kv("rpg_min_dec_fac_percent", static_cast<std::uint64_t>(d.rpg_min_dec_fac));
        j.kv("dce_tcp_g", d.dce_tcp_g);
        j.kv("dce_tcp_rtt_ns", d.dce_tcp_rtt.v);
        j.kv("initial_alpha_value", d.initial_alpha_value);
        j.kv("rate_reduce_monitor_period_ns", d.rate_reduce_monitor_period.v);
        j.kv("rate_to_set_on_first_cnp_bps", d.rate_to_set_on_first_cnp.v);
        j.kv("clamp_tgt_rate", d.clamp_tgt_rate);
        j.kv("clamp_tgt_rate_after_time_inc", d.clamp_tgt_rate_after_time_inc);
    }
    const dcqcn_np_cfg& np = p.np_cfg();
    j.kv("cnp_enabled", np.enabled);
    j.kv("cnp_mode", np.mode == dcqcn_np_mode::per_qp ? "per_qp" : "per_port");
    j.kv("cnp_interval_ns", np.cnp_interval.v);
    j.kv("min_time_between_cnps_ns", np.min_time_between_cnps.v);
    j.kv("cnp_dscp", static_cast<std::uint64_t>(np.cnp_dscp));
    j.kv("cnp_802p_prio", static_cast<std::uint64_t>(np.cnp_802p_prio));
    j.end_object();
    {
        std::uint64_t ctx = 0, crx = 0, ce = 0, cuts = 0;
        double rmin = 0, rmean = 0;
        for (std::size_t i = 0; i < p.flow_count(); ++i) {
            const auto& f = p.flow(i);
            ctx += f.cnp_tx;
            crx += f.cnp_rx;
            ce += f.np.counters().ce_rx;
            cuts += f.rp.counters().cuts;
            const double m = f.dcqcn ? f.rp.counters().min_rate_seen_bps : double(f.pacer.rate().v);
            rmin = i == 0 ? m : std::min(rmin, m);
            rmean += gen::mean_pacing_rate(f, cfg, end_now) / double(p.flow_count());
        }
        j.key("totals");
        j.begin_object();
        j.kv("cnp_tx", ctx);
        j.kv("cnp_rx", crx);
        j.kv("ce_rx", ce);
        j.kv("rate_cuts", cuts);
        j.kv("rate_min_bps", rmin);
        j.kv("rate_mean_bps", rmean);
        j.end_object();
    }
    j.kv("elapsed_s", elapsed);
    j.kv("busy_cycles", gen::read_counter(p.busy_cycles));
    j.kv("loops", gen::read_counter(p.loops));
    j.kv("tsc_hz", tsc_hz);
    j.kv("mbufs_total", mbufs_total);
    j.kv("mbufs_in_use_at_exit", in_use);
    j.kv("all_finished", p.all_finished());
    if (cap != nullptr) {
        j.kv("capture_frames", cap->captured());
        j.kv("capture_dropped", cap->dropped());
    }
    if (p.ring()) {
        // ring-allreduce: one sample per completed collective.
        std::vector<std::uint64_t> ct = p.collective_ns();
        std::sort(ct.begin(), ct.end());
        std::uint64_t sum = 0;
        for (auto v : p.collective_ns()) {
            sum += v;
        }
        j.key("collective");
        j.begin_object();
        j.kv("kind", "ring-allreduce");
        j.kv("hosts", static_cast<std::uint64_t>(cfg.ring_hosts));
        j.kv("steps", static_cast<std::uint64_t>(cfg.ring_steps));
        j.kv("msg_size", cfg.sizes.fixed.v);
        j.kv("chunk_bytes", cfg.ring_chunk);
        j.kv("collectives", cfg.ring_collectives);
        j.kv("collectives_completed", p.collectives_done());
        j.kv("collective_samples", static_cast<std::uint64_t>(ct.size()));
        j.kv("collective_samples_dropped", p.collective_dropped());
        j.kv("collective_p50_ns", percentile(ct, 0.50));
        j.kv("collective_p99_ns", percentile(ct, 0.99));
        j.kv("collective_max_ns", ct.empty() ? 0 : ct.back());
        j.kv("collective_min_ns", ct.empty() ? 0 : ct.front());
        j.kv("collective_mean_ns", ct.empty() ? 0.0 : double(sum) / double(ct.size()));
        j.key("collective_times_ns");  // in completion order (at most 1000)
        j.begin_array();
        for (std::size_t k = 0; k < p.collective_ns().size() && k < 1000; ++k) {
            j.value(p.collective_ns()[k]);
        }
        j.end_array();
        j.key("step_mean_ns");  // by step index: reduce-scatter 0..H-2, all-gather H-1..2H-3
        j.begin_array();
        for (std::size_t k = 0; k < p.step_sum_ns().size(); ++k) {
            const std::uint64_t n = p.step_count()[k];
            j.value(n ? double(p.step_sum_ns()[k]) / double(n) : 0.0);
        }
        j.end_array();
        j.end_object();
    }
    j.key("flows");
    j.begin_array();
    for (std::size_t i = 0; i < p.flow_count(); ++i) {
        const auto& f = p.flow(i);
        const auto& rc = f.rq.counters();
        const auto& sc = f.rs.counters();
        std::vector<std::uint64_t> fct = f.fct_ns;
        std::sort(fct.begin(), fct.end());
        j.begin_object();
        j.kv("name", f.cfg.name);
        j.kv("src", cfg.hosts[f.cfg.src_host].name);
        j.kv("dst", cfg.hosts[f.cfg.dst_host].name);
        j.kv("src_port", p.binding(f.src_port).name);
        j.kv("dst_port", p.binding(f.dst_port).name);
        j.kv("src_qpn", f.cfg.qp.src_qpn);
        j.kv("dst_qpn", f.cfg.qp.dst_qpn);
        j.kv("pmtu", f.cfg.qp.pmtu);
        j.kv("window", f.cfg.qp.window);
        j.kv("ack_timeout_code", static_cast<unsigned>(f.cfg.qp.ack_timeout));
        j.kv("ack_timeout_ns", ack_timeout_of(f.cfg.qp.ack_timeout).v);
        j.kv("pacing_rate", format_rate(f.pacer.rate()));
        j.kv("pacing_rate_bps", f.pacer.rate().v);
        j.kv("state", f.rq.state() == qp_state::ready ? "ready" : "error");
        j.kv("tx_packets", rc.tx_packets);
        j.kv("tx_bytes", rc.tx_bytes);
        j.kv("rx_packets", sc.rx_packets);
        j.kv("rx_bytes", sc.rx_bytes);
        j.kv("goodput_bps", elapsed > 0 ? double(sc.rx_bytes) * 8 / elapsed : 0.0);
        j.kv("messages_posted", rc.messages_posted);
        j.kv("messages_completed", rc.messages_completed);
        j.kv("messages_rx", sc.messages_rx);
        j.kv("bytes_completed", rc.bytes_completed);
        j.kv("fct_samples", static_cast<std::uint64_t>(fct.size()));
        j.kv("fct_samples_dropped", f.fct_dropped);
        j.kv("fct_p50_ns", percentile(fct, 0.50));
        j.kv("fct_p99_ns", percentile(fct, 0.99));
        j.kv("fct_max_ns", fct.empty() ? 0 : fct.back());
        j.kv("fct_mean_ns", rc.messages_completed ? double(rc.fct_sum_ns) / double(rc.messages_completed) : 0.0);
        j.kv("acks_rx", rc.acks_rx);
        j.kv("acks_dup", rc.acks_dup);
        j.kv("naks_rx", rc.naks_rx);
        j.kv("acks_tx", sc.acks_tx);
        j.kv("naks_tx", sc.naks_tx);
        j.kv("retransmissions", rc.retx_packets);
        j.kv("retx_bytes", rc.retx_bytes);
        j.kv("timeouts", rc.timeouts);
        j.kv("retry_exceeded", rc.retry_exceeded);
        j.kv("out_of_sequence", sc.out_of_sequence);
        j.kv("duplicates", sc.duplicates);
        j.kv("invalid_requests", sc.invalid_requests);
        // DCQCN (OTG result names: CNPs sent and received).
        const auto& rk = f.rp.counters();
        j.kv("dcqcn", f.dcqcn ? dcqcn_profile_name(cfg.dcqcn) : "off");
        j.kv("cnp_tx", f.cnp_tx);
        j.kv("cnp_tx_failed", f.cnp_tx_fail);
        j.kv("cnp_rx", f.cnp_rx);
        j.kv("ce_rx", f.np.counters().ce_rx);
        j.kv("rate_cuts", rk.cuts);
        j.kv("rate_increases", rk.fast_recovery + rk.additive_increase + rk.hyper_increase);
        j.kv("rate_min_bps", f.dcqcn ? rk.min_rate_seen_bps : double(f.pacer.rate().v));
        j.kv("rate_mean_bps", gen::mean_pacing_rate(f, cfg, end_now));
        j.kv("rate_end_bps", f.pacer.rate().v);
        j.end_object();
    }
    j.end_array();
    j.key("ports");
    j.begin_array();
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const auto& b = p.binding(i);
        const auto& pt = p.pauses(i);
        j.begin_object();
        j.kv("name", b.name);
        j.kv("port_id", static_cast<unsigned>(b.port_id));
        j.kv("device", infos[i].device);
        j.kv("line_rate", b.rate.v ? format_rate(b.rate) : std::string("unknown"));
        j.kv("line_rate_bps", b.rate.v);
        j.kv("rx_packets", c.rx_packets);
        j.kv("rx_bytes", c.rx_bytes);
        j.kv("tx_packets", c.tx_packets);
        j.kv("tx_bytes", c.tx_bytes);
        j.kv("tx_acks", c.tx_acks);
        j.kv("tx_naks", c.tx_naks);
        j.kv("rx_mac_control", c.rx_mac_control);
        j.kv("rx_pfc", c.rx_pfc);
        j.kv("rx_pause", c.rx_pause);
        j.kv("tx_pfc", c.tx_pfc);
        j.kv("rx_arp", c.rx_arp);
        j.kv("arp_replies", c.arp_replies);
        j.kv("rx_nd", c.rx_nd);
        j.kv("nd_replies", c.nd_replies);
        j.kv("rx_bad_icrc", c.rx_bad_icrc);
        j.kv("rx_unknown_qpn", c.rx_unknown_qpn);
        j.kv("rx_not_local", c.rx_not_local);
        j.kv("rx_non_roce", c.rx_non_roce);
        j.kv("rx_cnp", c.rx_cnp);
        j.kv("rx_ce", c.rx_ce);
        j.kv("tx_cnp", c.tx_cnp);
        j.kv("drop_cnp_full", c.drop_cnp_full);
        j.kv("rx_unsupported_opcode", c.rx_unsupported_opcode);
        j.kv("rx_multiseg", c.rx_multiseg);
        j.kv("rx_malformed", c.rx_malformed_total);
        j.kv("loss_data", c.loss_data);
        j.kv("loss_ack", c.loss_ack);
        j.kv("drop_delay_full", c.drop_delay_full);
        j.kv("drop_reply_full", c.drop_reply_full);
        j.kv("tx_alloc_fail", c.tx_alloc_fail);
        j.kv("tx_retry", c.tx_retry);
        j.kv("tx_prefilled", c.tx_prefilled);
        j.kv("tx_copied", c.tx_copied);
        j.kv("tx_built", c.tx_built);
        j.key("malformed");
        j.begin_object();
        for (std::size_t s = 1; s < parse_status_count; ++s) {
            j.kv(parse_status_name(static_cast<parse_status>(s)), c.malformed[s]);
        }
        j.end_object();
        j.key("pause");
        j.begin_object();
        j.kv("pfc_frames", pt.stats().pfc_frames);
        j.kv("pause_frames", pt.stats().pause_frames);
        j.key("xoff_frames");
        j.begin_array();
        for (auto v : pt.stats().xoff_frames) {
            j.value(v);
        }
        j.end_array();
        j.key("paused_ns");
        j.begin_array();
        for (int q = 0; q < 8; ++q) {
            j.value(pt.paused_time(q, nanos{INT64_MAX / 2}).v);
        }
        j.end_array();
        j.end_object();
        j.key("ethdev");
        j.begin_object();
        j.kv("ipackets", es[i].ipackets);
        j.kv("opackets", es[i].opackets);
        j.kv("imissed", es[i].imissed);
        j.kv("ierrors", es[i].ierrors);
        j.kv("oerrors", es[i].oerrors);
        j.kv("rx_nombuf", es[i].rx_nombuf);
        j.end_object();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    out += '\n';
    std::ofstream f(path);
    f << out;
    if (!f) {
        std::fprintf(stderr, "rocelab-gen: cannot write report %s\n", path.c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    const runtime::cmdline cl = runtime::split_cmdline(argc, argv);
    if (runtime::early_help(cl, argv, usage_text, "rocelab-gen", ROCELAB_VERSION)) { return 0; }
    app_opts opt = cl.app_argv == nullptr ? app_opts{} : parse_app_opts(cl.app_argc, cl.app_argv);
    std::string cmdline;
    for (int i = 0; i < argc; ++i) {
        cmdline += (i ? " " : "") + std::string(argv[i]);
    }

    // Configuration first (file, then command-line keys), validated before EAL.
    auto cfg_r = opt.config.empty() ? result<gen_cfg>(gen_cfg{}) : load_gen_cfg(opt.config);
    if (!cfg_r) {
        die(2, cfg_r.error().message);
    }
    gen_cfg cfg = std::move(*cfg_r);
    for (const auto& [k, v] : opt.sets) {
        if (auto e = gen_cfg_set(cfg, k, v); !e.empty()) {
            die(2, "--" + e);
        }
    }
    if (opt.check_config) {
        std::printf("%s: valid (pattern %s, %zu explicit flows)\n", cfg.source.c_str(), gen_pattern_name(cfg.pattern),
                    cfg.flow_specs.size());
        return 0;
    }

    const int eal_argc = cl.eal_argc;
    auto eal = dpdk::eal_init(eal_argc, argv);
    if (auto* e = std::get_if<std::string>(&eal)) {
        die(2, *e);
    }
    auto fail = [&](int code, const std::string& msg) {
        dpdk::eal_cleanup();
        die(code, msg);
    };

    std::vector<std::uint16_t> port_ids = dpdk::probed_ports();
    std::vector<rte_ring*> rings;
    for (int i = 0; i < opt.loopback_pairs; ++i) {
        const std::string a = "gen_lb" + std::to_string(i) + "a";
        const std::string b = "gen_lb" + std::to_string(i) + "b";
        rte_ring* ab = rte_ring_create(a.c_str(), 4096, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
        rte_ring* ba = rte_ring_create(b.c_str(), 4096, static_cast<int>(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (ab == nullptr || ba == nullptr) {
            fail(1, std::string("cannot create loopback rings: ") + rte_strerror(rte_errno));
        }
        rings.push_back(ab);
        rings.push_back(ba);
        const int pa = rte_eth_from_rings(("lb" + std::to_string(i) + "a").c_str(), &ba, 1, &ab, 1,
                                          static_cast<unsigned>(rte_socket_id()));
        const int pb = rte_eth_from_rings(("lb" + std::to_string(i) + "b").c_str(), &ab, 1, &ba, 1,
                                          static_cast<unsigned>(rte_socket_id()));
        if (pa < 0 || pb < 0) {
            fail(1, std::string("cannot create loopback ports: ") + rte_strerror(rte_errno));
        }
        port_ids.push_back(static_cast<std::uint16_t>(pa));
        port_ids.push_back(static_cast<std::uint16_t>(pb));
    }
    if (port_ids.empty()) {
        fail(2, "no DPDK ports: add --vdev=... or -- --loopback-pairs 1");
    }
    const int nports = static_cast<int>(port_ids.size());
    // --tx-only: the receiving hosts need no port of their own; expand as if
    // there were two ports and put every host on an existing one.
    if (auto e = expand_gen_cfg(cfg, opt.tx.tx_only ? std::max(nports, 2) : nports); !e.empty()) {
        fail(2, cfg.source + ": " + e);
    }
    if (opt.tx.tx_only && cfg.pattern == gen_pattern::ring_allreduce) {
        // Steps wait for the predecessor's messages to arrive; --tx-only has no receiver.
        fail(2, "--tx-only: pattern ring-allreduce needs receivers (each step waits for messages to arrive)");
    }
    if (opt.tx.tx_only) {
        for (auto& h : cfg.hosts) {
            h.port = std::min(h.port, nports - 1);
        }
    }

    // With only loopback pairs (no switch in between), a frame reaches just
    // the partner port: refuse flows that could never arrive.
    if (!opt.tx.tx_only && opt.loopback_pairs > 0 && port_ids.size() == static_cast<std::size_t>(2 * opt.loopback_pairs)) {
        for (const auto& f : cfg.flows) {
            const int s = cfg.hosts[static_cast<std::size_t>(f.src_host)].port;
            const int d = cfg.hosts[static_cast<std::size_t>(f.dst_host)].port;
            if ((s ^ 1) != d) {
                fail(2, cfg.source + ": flow " + f.name + " goes from port " + std::to_string(s) + " to port " +
                            std::to_string(d) + ", but loopback pairs only connect ports 2k and 2k+1 "
                            "(use one pair, or put a switch between the ports)");
            }
        }
    }
    std::uint32_t max_pmtu = 1024;
    for (const auto& f : cfg.flows) {
        max_pmtu = std::max(max_pmtu, f.qp.pmtu);
    }
    // One segment per frame: data room for the largest frame (PMTU + headers).
    const std::uint32_t max_frame = std::max<std::uint32_t>(max_pmtu + 128, 1518);
    const auto data_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + max_frame);
    rte_mempool* pool = rte_pktmbuf_pool_create("rocelab_gen", cfg.mbufs, 256, 0, data_room,
                                                static_cast<int>(rte_socket_id()));
    if (pool == nullptr) {
        fail(1, "cannot create mbuf pool of " + std::to_string(cfg.mbufs) + " mbufs: " + rte_strerror(rte_errno) +
                    " (raise -m or lower --mbufs)");
    }

    std::vector<dpdk::port_info> infos(port_ids.size());
    std::vector<gen::port_binding> bindings;
    for (std::size_t i = 0; i < port_ids.size(); ++i) {
        dpdk::port_params pp;
        pp.port_id = port_ids[i];
        pp.pool = pool;
        pp.max_frame = max_frame;
        pp.rx_ring_size = 1024;
        pp.tx_ring_size = 512;
        if (auto e = dpdk::port_open(pp, infos[i]); !e.empty()) {
            fail(1, "port " + std::to_string(port_ids[i]) + ": " + e);
        }
        gen::port_binding b;
        b.port_id = port_ids[i];
        b.name = infos[i].device;
        b.rate = cfg.rate.v != 0 ? cfg.rate : opt.tx.tx_only ? bits_per_sec{0} : infos[i].driver_speed;
        bindings.push_back(b);
    }
    auto pipe_r = gen::gen_pipeline::create(cfg, bindings, pool, opt.tx);
    if (auto* e = std::get_if<std::string>(&pipe_r)) {
        fail(2, cfg.source + ": " + *e);
    }
    auto pipe = std::move(std::get<0>(pipe_r));

    dpdk::tsc_clock clock;
    const std::int64_t wall_ns0 = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count() -
                                  clock.now().v;
    std::unique_ptr<dpdk::capture> cap;
    if (!opt.pcap_out.empty()) {
        std::vector<std::string> names;
        for (const auto& b : bindings) {
            names.push_back(b.name);
        }
        auto c = dpdk::capture::open(opt.pcap_out, names, opt.snaplen, wall_ns0, "gen");
        if (auto* e = std::get_if<std::string>(&c)) {
            fail(2, *e);
        }
        cap = std::move(std::get<0>(c));
        pipe->set_capture(cap.get());
    }
    std::FILE* ts = nullptr;
    if (!opt.timeseries.empty()) {
        ts = std::fopen(opt.timeseries.c_str(), "w");
        if (ts == nullptr) {
            fail(2, "--timeseries " + opt.timeseries + ": " + std::strerror(errno));
        }
        std::fprintf(ts, "time_s,flow,tx_bps,goodput_bps,tx_bytes,rx_bytes,messages_completed,retransmissions,naks,"
                         "rate_bps,cnp_rx,cnp_tx\n");
    }

    std::printf("rocelab-gen %s: %zu ports, %zu flows, pattern %s, config %s, seed %llu\n", ROCELAB_VERSION,
                bindings.size(), cfg.flows.size(), gen_pattern_name(cfg.pattern), cfg.source.c_str(),
                static_cast<unsigned long long>(cfg.seed));
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        std::printf("  port %zu: %s (%s) line rate %s\n", i, bindings[i].name.c_str(), infos[i].driver.c_str(),
                    bindings[i].rate.v ? format_rate(bindings[i].rate).c_str() : "unknown (unshaped)");
    }
    if (pipe->flow_count() != 0) {
        const dcqcn_np_cfg& np = pipe->np_cfg();
        std::printf("  dcqcn %s: %s; notification point %s\n", dcqcn_profile_name(cfg.dcqcn),
                    cfg.dcqcn == dcqcn_profile::off ? "QPs paced at their line rate, CNPs counted only"
                                                    : "each QP's reaction point sets its pacing rate on CNPs",
                    !np.enabled ? "off"
                    : np.mode == dcqcn_np_mode::per_qp
                        ? ("per QP, at most one CNP per " + format_time(np.cnp_interval) + ", DSCP " +
                           std::to_string(np.cnp_dscp) + " PCP " + std::to_string(np.cnp_802p_prio)).c_str()
                        : ("per port, CNPs at least " + format_time(np.min_time_between_cnps) + " apart, DSCP " +
                           std::to_string(np.cnp_dscp) + " PCP " + std::to_string(np.cnp_802p_prio)).c_str());
    }
    for (const auto& h : cfg.hosts) {
        std::printf("  host %s: port %d mac %s ip %s\n", h.name.c_str(), h.port, mac_str(h.mac).c_str(),
                    host_ip_str(h).c_str());
    }
    for (const auto& f : cfg.flows) {
        std::printf("  flow %s: qpn 0x%x -> 0x%x pmtu %u window %u ack_timeout %u (%s) msg %s\n", f.name.c_str(),
                    f.qp.src_qpn, f.qp.dst_qpn, f.qp.pmtu, f.qp.window, f.qp.ack_timeout,
                    format_time(ack_timeout_of(f.qp.ack_timeout)).c_str(), format_bytes(f.sizes.fixed).c_str());
    }
    std::fflush(stdout);

    runtime::install_stop_signals();

    gen::telemetry_attach(pipe.get(), gen::telemetry_info{ROCELAB_VERSION, &clock});
    // The worker polls a copy of main's clock: one epoch for data path,
    // capture, telemetry and report.
    runtime::worker_ctl<gen::gen_pipeline> ctl;
    ctl.pipe = pipe.get();
    runtime::worker worker(ctl, clock, "rocelab-gen");

    const auto t0 = std::chrono::steady_clock::now();
    auto last_status = t0;
    double last_ts = 0.0;
    std::vector<port_prev> prev(bindings.size());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ts_prev(pipe->flow_count());
    auto sample_ts = [&](double el) {
        const double dt = el - last_ts;
        if (dt <= 0) {
            return;
        }
        for (std::size_t f = 0; f < pipe->flow_count(); ++f) {
            const auto& fl = pipe->flow(f);
            const std::uint64_t tx = gen::read_counter(fl.rq.counters().tx_bytes);
            const std::uint64_t rx = gen::read_counter(fl.rs.counters().rx_bytes);
            std::fprintf(ts, "%.6f,%s,%.0f,%.0f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", el, fl.cfg.name.c_str(),
                         double(tx - ts_prev[f].first) * 8 / dt, double(rx - ts_prev[f].second) * 8 / dt,
                         (unsigned long long)tx, (unsigned long long)rx,
                         (unsigned long long)gen::read_counter(fl.rq.counters().messages_completed),
                         (unsigned long long)gen::read_counter(fl.rq.counters().retx_packets),
                         (unsigned long long)gen::read_counter(fl.rq.counters().naks_rx),
                         (unsigned long long)fl.pacer.rate_relaxed().v,
                         (unsigned long long)gen::read_counter(fl.cnp_rx),
                         (unsigned long long)gen::read_counter(fl.cnp_tx));
            ts_prev[f] = {tx, rx};
        }
        last_ts = el;
    };
    while (!runtime::stop_requested().load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        const auto tn = std::chrono::steady_clock::now();
        const double el = std::chrono::duration<double>(tn - t0).count();
        if (cap) {
            cap->drain();
        }
        if (ts != nullptr && el - last_ts >= double(opt.ts_interval.v) / 1e9) {
            sample_ts(el);
        }
        const double since = std::chrono::duration<double>(tn - last_status).count();
        if (opt.status_interval.v > 0 && since * 1e9 >= double(opt.status_interval.v)) {
            if (!opt.quiet) {
                print_status(*pipe, prev, since, el);
            }
            last_status = tn;
        }
        if (cfg.duration && el * 1e9 >= double(cfg.duration->v)) {
            break;
        }
        if (pipe->all_finished()) {
            break;
        }
    }
    ctl.stop.store(true);
    worker.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const nanos end_now = clock.now();
    gen::telemetry_detach();
    if (ts != nullptr) {
        sample_ts(elapsed);
        std::fclose(ts);
    }
    // --linger: the worker has stopped; keep the ports open (not polled)
    // until every link is down (the peer exited) or the time is up. A memif
    // server unmaps a departing client's rings while its own worker may be
    // inside rx_burst (a DPDK 22.11 memif race): letting the peer leave
    // first, while nothing here polls, avoids it on both sides.
    if (opt.linger.v > 0) {
        const auto l0 = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - l0 < std::chrono::nanoseconds(opt.linger.v)) {
            bool any_up = false;
            for (const auto& b : bindings) {
                rte_eth_link link{};
                any_up = any_up || (rte_eth_link_get_nowait(b.port_id, &link) == 0 && link.link_status != 0);
            }
            if (!any_up) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    pipe->release_all();
    std::vector<rte_eth_stats> ethstats(bindings.size());
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        rte_eth_dev_stop(bindings[i].port_id);
        rte_eth_stats_get(bindings[i].port_id, &ethstats[i]);
    }
    // Frames still in the loopback rings belong to us: free them.
    for (rte_ring* r : rings) {
        void* obj = nullptr;
        while (rte_ring_dequeue(r, &obj) == 0) {
            rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
        }
    }
    for (const auto& b : bindings) {
        rte_eth_dev_close(b.port_id);
    }
    if (cap) {
        cap->drain(SIZE_MAX);
        cap->flush();
    }
    const std::uint64_t in_use = rte_mempool_in_use_count(pool) + pipe->own_mbufs_in_use();
    std::printf("\n==== rocelab-gen final (%.2fs) ====\n", elapsed);
    for (std::size_t f = 0; f < pipe->flow_count(); ++f) {
        const auto& fl = pipe->flow(f);
        const auto& rc = fl.rq.counters();
        const auto& sc = fl.rs.counters();
        std::printf("%s: tx %llu pkts, goodput %s, messages %llu/%llu, naks %llu, retx %llu, timeouts %llu, "
                    "out_of_sequence %llu\n",
                    fl.cfg.name.c_str(), (unsigned long long)rc.tx_packets,
                    rate_str(elapsed > 0 ? double(sc.rx_bytes) * 8 / elapsed : 0).c_str(),
                    (unsigned long long)rc.messages_completed, (unsigned long long)rc.messages_posted,
                    (unsigned long long)rc.naks_rx, (unsigned long long)rc.retx_packets,
                    (unsigned long long)rc.timeouts, (unsigned long long)sc.out_of_sequence);
    }
    if (cfg.dcqcn != dcqcn_profile::off) {
        std::uint64_t ctx = 0, crx = 0, ce = 0, cuts = 0;
        for (std::size_t f = 0; f < pipe->flow_count(); ++f) {
            const auto& fl = pipe->flow(f);
            ctx += fl.cnp_tx;
            crx += fl.cnp_rx;
            ce += fl.np.counters().ce_rx;
            cuts += fl.rp.counters().cuts;
            std::printf("%s: dcqcn %s: cnp_rx %llu, rate_cuts %llu, rate min %s mean %s now %s; ce_rx %llu, cnp_tx %llu\n",
                        fl.cfg.name.c_str(), dcqcn_profile_name(cfg.dcqcn), (unsigned long long)fl.cnp_rx,
                        (unsigned long long)fl.rp.counters().cuts,
                        rate_str(fl.dcqcn ? fl.rp.counters().min_rate_seen_bps : double(fl.pacer.rate().v)).c_str(),
                        rate_str(gen::mean_pacing_rate(fl, cfg, end_now)).c_str(),
                        rate_str(double(fl.pacer.rate().v)).c_str(), (unsigned long long)fl.np.counters().ce_rx,
                        (unsigned long long)fl.cnp_tx);
        }
        std::printf("dcqcn total: ce_rx %llu, cnp_tx %llu, cnp_rx %llu, rate_cuts %llu\n", (unsigned long long)ce,
                    (unsigned long long)ctx, (unsigned long long)crx, (unsigned long long)cuts);
    }
    if (!cfg.dcqcn_trace.empty()) {
        if (auto e = write_dcqcn_trace(cfg.dcqcn_trace, *pipe); !e.empty()) {
            std::fprintf(stderr, "rocelab-gen: %s\n", e.c_str());
        } else {
            std::printf("dcqcn trace: %s\n", cfg.dcqcn_trace.c_str());
        }
    }
    std::printf("mbufs in use at exit: %llu of %u\n", static_cast<unsigned long long>(in_use), cfg.mbufs);
    if (!opt.report.empty()) {
        write_report(opt.report, *pipe, cfg, elapsed, infos, ethstats, cfg.mbufs, in_use, cap.get(), clock.hz(),
                     cmdline, end_now);
        std::printf("report: %s\n", opt.report.c_str());
    }
    std::fflush(stdout);
    cap.reset();
    pipe.reset();
    for (rte_ring* r : rings) {
        rte_ring_free(r);
    }
    rte_mempool_free(pool);
    dpdk::eal_cleanup();
    return 0;
}
