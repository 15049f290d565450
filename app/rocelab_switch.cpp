// rocelab-switch: a software RoCEv2 leaf switch on DPDK poll-mode lcores.
//
//   rocelab-switch [EAL options] -- [options]
//
// Option parsing and wiring only: the data path is pipelines/switch, the
// protocol logic lib/. See --help and docs/.
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pdump.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/switch_config.hpp"
#include "config/units_parse.hpp"
#include "core/json.hpp"
#include "dpdk/capture.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "rocelab_version.h"
#include "runtime/app_common.hpp"
#include "runtime/queue_sampler.hpp"
#include "runtime/switch_telemetry.hpp"
#include "runtime/worker.hpp"
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
                           out). Without it: an L2 learning bridge over all
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
  -r, --report FILE        write final counters as JSON (with version, config, seed)
      --queue-csv FILE     sample egress queue depths into a CSV time series
                           (interval: ROCELAB.queue_sample_interval, default 1ms)
      --pcap-out DIR       capture every port, both directions, to
                           DIR/<port>-rx.pcap and DIR/<port>-tx.pcap
      --snaplen BYTES      bytes captured per frame (default 9216)
      --status-interval T  status line period (default 1s; 0 disables)
  -q, --quiet              no status lines
      --check-config       validate the configuration and exit (0 = valid)
  -V, --version            print the version
  -h, --help               this text

Exit codes: 0 clean stop, 2 bad command line or configuration, 1 runtime error.
Telemetry: dpdk-telemetry.py -f <file-prefix>, then /rocelab/ports,
/rocelab/port,<name>, /rocelab/queues,<name>, /rocelab/buffer,<name>
(ingress buffer per priority group, computed xoff/xon), /rocelab/pfc,<name>
(PFC per priority and the watchdog), /rocelab/info, /rocelab/fdb.

Lossless classes: BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / PFC_WD in the
config (docs/config.md); conf/incast-lossless-1g.yaml is a worked example.
ECN (DCQCN's congestion point): WRED_PROFILE bound by QUEUE|<port>|<q>
wred_profile, evaluated at dequeue (ROCELAB ecn_at: enqueue to change);
counters ecn_marked / wred_dropped per queue (docs/dcqcn.md).
)";

struct app_opts {
    std::string config;
    std::optional<nanos> duration;
    std::string report;
    std::string queue_csv;
    std::string pcap_out;
    std::uint32_t snaplen = 9216;
    std::optional<nanos> status_interval;
    bool quiet = false;
    bool check_config = false;
};

[[noreturn]] void die(int code, const std::string& msg) { runtime::die("rocelab-switch", code, msg); }

// Parses the application's options (after "--"). Exits 2 on bad input.
app_opts parse_app_opts(int argc, char** argv) {
    app_opts o;
    auto need = [&](int& i, const char* opt) -> std::string {
        if (i + 1 >= argc) { die(2, std::string("option ") + opt + " needs a value (see --help)"); }
        return argv[++i];
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else if (a == "-V" || a == "--version") {
            std::printf("rocelab-switch %s\n", ROCELAB_VERSION);
            std::exit(0);
        } else if (a == "-c" || a == "--config") {
            o.config = need(i, "--config");
        } else if (a == "-d" || a == "--duration") {
            const std::string v = need(i, "--duration");
            auto t = parse_time(v);
            if (!t || t->v <= 0) { die(2, "--duration " + v + ": expected a time with units, e.g. 5s, 500ms, 2min is not accepted; use 120s"); }
            o.duration = *t;
        } else if (a == "-r" || a == "--report") {
            o.report = need(i, "--report");
        } else if (a == "--queue-csv") {
            o.queue_csv = need(i, "--queue-csv");
        } else if (a == "--pcap-out") {
            o.pcap_out = need(i, "--pcap-out");
        } else if (a == "--snaplen") {
            const std::string v = need(i, "--snaplen");
            auto b = parse_bytes(v, bare_number::accepted);
            if (!b || b->v < 64 || b->v > 9216) { die(2, "--snaplen " + v + ": expected 64..9216 bytes"); }
            o.snaplen = static_cast<std::uint32_t>(b->v);
        } else if (a == "--status-interval") {
            const std::string v = need(i, "--status-interval");
            auto t = parse_time(v);
            if (!t || t->v < 0) { die(2, "--status-interval " + v + ": expected a time with units, e.g. 1s, 0s to disable"); }
            o.status_interval = *t;
        } else if (a == "-q" || a == "--quiet") {
            o.quiet = true;
        } else if (a == "--check-config") {
            o.check_config = true;
        } else {
            die(2, "unknown option '" + a + "' (application options go after '--'; see --help)");
        }
    }
    return o;
}

using runtime::mac_str;
using runtime::rate_str;

struct port_prev {
    std::uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0, drops = 0, ecn_marked = 0;
};

std::uint64_t total_ecn_marked(const sw::port_counters& c) {
    std::uint64_t n = 0;
    for (int q = 0; q < 8; ++q) { n += sw::read_counter(c.ecn_marked[q]); }
    return n;
}

std::uint64_t total_drops(const sw::port_counters& c) {
    std::uint64_t d = 0;
    for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
        if (r != static_cast<std::size_t>(sw::drop_reason::pfc_disabled_prio)) { d += sw::read_counter(c.drops[r]); }
    }
    return d;
}

void print_status(const sw::switch_pipeline& p, std::vector<port_prev>& prev, double dt, double t) {
    std::string line;
    char b[256];
    std::snprintf(b, sizeof b, "[%7.1fs]", t);
    line += b;
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const port_prev now{sw::read_counter(c.rx_packets), sw::read_counter(c.tx_packets),
                            sw::read_counter(c.rx_bytes), sw::read_counter(c.tx_bytes), total_drops(c),
                            total_ecn_marked(c)};
        std::uint64_t qb = 0;
        for (int q = 0; q < 8; ++q) { qb += p.queue(i, q).depth_bytes; }
        const double rx_bps = double(now.rx_bytes - prev[i].rx_bytes) * 8 / dt;
        const double tx_bps = double(now.tx_bytes - prev[i].tx_bytes) * 8 / dt;
        // Line utilisation counts what the wire carries: frame + FCS + preamble + IFG.
        const double wire_bps = tx_bps + double(now.tx_packets - prev[i].tx_packets) * 24 * 8 / dt;
        const double line_bps = double(p.binding(i).line_rate.v);
        char util[32] = "";
        if (line_bps > 0) { std::snprintf(util, sizeof util, " (line %.1f%%)", 100.0 * wire_bps / line_bps); }
        std::snprintf(b, sizeof b, " | %s rx %.3fMpps %s tx %.3fMpps %s%s q %lluB pfc %llu ecn %llu drop %llu",
                      p.binding(i).name.c_str(), double(now.rx_packets - prev[i].rx_packets) / dt / 1e6,
                      rate_str(rx_bps).c_str(), double(now.tx_packets - prev[i].tx_packets) / dt / 1e6,
                      rate_str(tx_bps).c_str(), util, static_cast<unsigned long long>(qb),
                      static_cast<unsigned long long>(sw::read_counter(c.rx_pfc)),
                      static_cast<unsigned long long>(now.ecn_marked - prev[i].ecn_marked),
                      static_cast<unsigned long long>(now.drops - prev[i].drops));
        line += b;
        prev[i] = now;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

void write_report(const std::string& path, const sw::switch_pipeline& p, const switch_cfg& cfg, double elapsed,
                  const std::vector<dpdk::port_info>& infos, const std::vector<rte_eth_stats>& ethstats,
                  std::uint64_t mbufs_total, std::uint64_t mbufs_in_use,
                  const dpdk::capture* cap, std::uint64_t tsc_hz, nanos end_now) {
    std::string out;
    json_writer j(out);
    j.begin_object();
    j.key("provenance");
    j.begin_object();
    j.kv("tool", "rocelab-switch");
    j.kv("version", ROCELAB_VERSION);
    j.kv("config", cfg.source);
    j.kv("seed", cfg.seed);
    j.kv("mode", cfg.mode == fwd_mode::l2 ? "l2" : "l3");
    j.end_object();
    j.kv("elapsed_s", elapsed);
    j.kv("busy_cycles", sw::read_counter(p.busy_cycles));
    j.kv("tsc_hz", tsc_hz);
    j.kv("max_poll_gap_ns", sw::read_counter(p.max_poll_gap_ns));
    j.kv("buffer_accounting", p.buffer_accounting());
    if (p.buffer_accounting()) {
        j.kv("pool_size", cfg.pool.size.v);
        j.kv("pool_shared_size", p.pool_shared_size());
    }
    j.kv("mbufs_total", mbufs_total);
    j.kv("mbufs_in_use_at_exit", mbufs_in_use);
    if (cap != nullptr) {
        j.kv("capture_frames", cap->captured());
        j.kv("capture_dropped", cap->dropped());
    }
    j.key("ports");
    j.begin_array();
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const auto& b = p.binding(i);
        j.begin_object();
        j.kv("name", b.name);
        j.kv("port_id", static_cast<unsigned>(b.port_id));
        j.kv("device", infos[i].device);
        j.kv("mac", mac_str(b.mac));
        j.kv("line_rate", format_rate(b.line_rate));
        j.kv("line_rate_bps", b.line_rate.v);
        j.kv("shaped", b.shaped);
        j.kv("rx_packets", c.rx_packets);
        j.kv("rx_bytes", c.rx_bytes);
        j.kv("tx_packets", c.tx_packets);
        j.kv("tx_bytes", c.tx_bytes);
        j.kv("rx_mac_control", c.rx_mac_control);
        j.kv("rx_pfc", c.rx_pfc);
        j.kv("rx_pause", c.rx_pause);
        j.kv("flood_copies", c.flood_copies);
        j.kv("arp_replies", c.arp_replies);
        j.kv("nd_replies", c.nd_replies);
        j.kv("tx_behind", c.tx_behind);
        j.kv("tx_ring_full", c.tx_ring_full);
        j.key("drops");
        j.begin_object();
        for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
            j.kv(sw::drop_reason_name(static_cast<sw::drop_reason>(r)), c.drops[r]);
        }
        j.end_object();
        j.key("malformed");
        j.begin_object();
        for (std::size_t s = 1; s < parse_status_count; ++s) {
            j.kv(parse_status_name(static_cast<parse_status>(s)), c.malformed[s]);
        }
        j.end_object();
        j.kv("tx_pfc_frames", c.tx_pfc_frames);
        const sw::pfc_status ps = p.pfc(i, end_now);
        auto arr = [&](std::string_view k, const auto& a) {
            j.key(k);
            j.begin_array();
            for (auto v : a) { j.value(static_cast<std::uint64_t>(v)); }
            j.end_array();
        };
        j.key("pfc");
        j.begin_object();
        arr("rx_frames", ps.rx_frames);
        arr("paused_ns", ps.paused_ns);
        arr("xoff_sent", ps.xoff_sent);
        arr("xon_sent", ps.xon_sent);
        arr("asserted_ns", ps.asserted_ns);
        j.key("watchdog");
        j.begin_array();
        for (int q = 0; q < 8; ++q) {
            if (!ps.wd_enabled[q]) { continue; }
            j.begin_object();
            j.kv("queue", q);
            j.kv("storms", ps.wd_storms[q]);
            j.kv("restores", ps.wd_restores[q]);
            j.kv("stormed", ps.wd_stormed[q]);
            j.kv("tx_dropped", ps.wd_tx_dropped[q]);
            j.kv("rx_dropped", ps.wd_rx_dropped[q]);
            j.end_object();
        }
        j.end_array();
        j.end_object();
        if (p.buffer_accounting()) {
            j.key("priority_groups");
            j.begin_array();
            for (int g = 0; g < 8; ++g) {
                const sw::pg_status st = p.pg(i, g);
                const auto& pgc = cfg.ports[i].pgs[g];
                if (!pgc.configured && st.peak_use == 0) { continue; }
                j.begin_object();
                j.kv("pg", g);
                j.kv("lossless", st.lossless);
                j.kv("reserved", pgc.reserved.v);
                j.kv("xoff", pgc.xoff.v);
                j.kv("xon", pgc.xon ? pgc.xon->v : 0);
                j.kv("peak_use", st.peak_use);
                j.kv("peak_headroom", st.peak_headroom);
                j.kv("xoff_transitions", st.xoff_transitions);
                j.kv("drop_lossy", st.drop_lossy);
                j.kv("drop_headroom_overflow", st.drop_headroom_overflow);
                j.end_object();
            }
            j.end_array();
        }
        const rte_eth_stats& es = ethstats[i];
        j.key("ethdev");
        j.begin_object();
        j.kv("ipackets", es.ipackets);
        j.kv("opackets", es.opackets);
        j.kv("imissed", es.imissed);
        j.kv("ierrors", es.ierrors);
        j.kv("oerrors", es.oerrors);
        j.kv("rx_nombuf", es.rx_nombuf);
        j.end_object();
        j.key("queues");
        j.begin_array();
        for (int q = 0; q < 8; ++q) {
            const auto s = p.queue(i, q);
            j.begin_object();
            j.kv("queue", q);
            j.kv("enq_packets", s.enq_packets);
            j.kv("enq_bytes", s.enq_bytes);
            j.kv("deq_packets", s.deq_packets);
            j.kv("deq_bytes", s.deq_bytes);
            j.kv("drop_packets", s.drop_packets);
            j.kv("drop_bytes", s.drop_bytes);
            j.kv("flushed_packets", s.flushed_packets);
            j.kv("ecn_marked", s.ecn_marked);
            j.kv("wred_dropped", s.wred_dropped);
            if (s.wred) {
                j.kv("wred_kmin_bytes", s.wred_kmin);
                j.kv("wred_kmax_bytes", s.wred_kmax);
            }
            j.kv("depth_bytes", s.depth_bytes);
            j.kv("max_depth_bytes", s.max_depth_bytes);
            j.kv("max_depth_packets", static_cast<std::uint64_t>(s.max_depth_packets));
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    out += '\n';
    std::ofstream f(path);
    f << out;
    if (!f) { std::fprintf(stderr, "rocelab-switch: cannot write report %s\n", path.c_str()); }
}

void print_final(const sw::switch_pipeline& p, double elapsed) {
    std::printf("\n==== rocelab-switch final counters (%.2fs) ====\n", elapsed);
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const auto& b = p.binding(i);
        std::printf("%s (port %u, %s%s): rx %llu pkts %llu B, tx %llu pkts %llu B\n", b.name.c_str(), b.port_id,
                    format_rate(b.line_rate).c_str(), b.shaped ? " shaped" : "",
                    static_cast<unsigned long long>(c.rx_packets), static_cast<unsigned long long>(c.rx_bytes),
                    static_cast<unsigned long long>(c.tx_packets), static_cast<unsigned long long>(c.tx_bytes));
        for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
            if (c.drops[r] != 0) {
                std::printf("  %-24s %llu\n", sw::drop_reason_name(static_cast<sw::drop_reason>(r)),
                            static_cast<unsigned long long>(c.drops[r]));
            }
        }
        for (std::size_t s = 1; s < parse_status_count; ++s) {
            if (c.malformed[s] != 0) {
                std::printf("  rx_malformed_%-12s %llu\n", parse_status_name(static_cast<parse_status>(s)),
                            static_cast<unsigned long long>(c.malformed[s]));
            }
        }
        if (c.tx_pfc_frames != 0) {
            std::printf("  tx_pfc_frames %llu (XOFF/XON frames sent upstream)\n",
                        static_cast<unsigned long long>(c.tx_pfc_frames));
        }
        if (c.rx_mac_control != 0) {
            std::printf("  rx_mac_control %llu (pfc %llu, pause %llu)\n",
                        static_cast<unsigned long long>(c.rx_mac_control), static_cast<unsigned long long>(c.rx_pfc),
                        static_cast<unsigned long long>(c.rx_pause));
        }
        std::printf("  %-6s %12s %12s %12s %12s %12s %12s %10s\n", "queue", "tx_pkts", "tx_bytes", "drop_pkts",
                    "ecn_marked", "wred_drop", "max_depth_B", "Mbps");
        for (int q = 0; q < 8; ++q) {
            const auto s = p.queue(i, q);
            if (s.enq_packets == 0 && s.drop_packets == 0) { continue; }
            std::printf("  q%-5d %12llu %12llu %12llu %12llu %12llu %12llu %10.1f\n", q,
                        static_cast<unsigned long long>(s.deq_packets), static_cast<unsigned long long>(s.deq_bytes),
                        static_cast<unsigned long long>(s.drop_packets),
                        static_cast<unsigned long long>(s.ecn_marked), static_cast<unsigned long long>(s.wred_dropped),
                        static_cast<unsigned long long>(s.max_depth_bytes),
                        elapsed > 0 ? double(s.deq_bytes) * 8 / elapsed / 1e6 : 0.0);
        }
    }
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    // Application options follow "--"; --help/--version work without EAL.
    const runtime::cmdline cl = runtime::split_cmdline(argc, argv);
    if (runtime::early_help(cl, argv, usage_text, "rocelab-switch", ROCELAB_VERSION)) { return 0; }
    app_opts opt = cl.app_argv == nullptr ? app_opts{} : parse_app_opts(cl.app_argc, cl.app_argv);

    // Configuration is validated completely before anything starts.
    auto cfg_r = opt.config.empty() ? result<switch_cfg>(default_switch_cfg()) : load_switch_cfg(opt.config);
    if (!cfg_r) { die(2, cfg_r.error().message); }
    switch_cfg cfg = std::move(*cfg_r);
    if (opt.status_interval) { cfg.status_interval = *opt.status_interval; }
    if (opt.check_config) {
        std::printf("%s: valid (%zu ports, mode %s)\n", cfg.source.c_str(), cfg.ports.size(),
                    cfg.mode == fwd_mode::l2 ? "l2" : "l3");
        return 0;
    }

    auto eal = dpdk::eal_init(cl.eal_argc, argv);
    if (auto* e = std::get_if<std::string>(&eal)) { die(2, *e); }

    // Bind configured ports to DPDK ports (by device name or id), or take
    // every probed port as EthernetN with defaults.
    if (cfg.ports.empty()) {
        for (std::uint16_t id : dpdk::probed_ports()) { cfg.ports.push_back(probed_port_cfg(cfg, id)); }
        if (cfg.ports.empty()) {
            dpdk::eal_cleanup();
            die(2, "no DPDK ports: add --vdev=net_null0 (or net_pcap/net_ring/net_tap) or bind a NIC");
        }
    }
    for (auto& pc : cfg.ports) {
        if (pc.port_id < 0) {
            const int id = dpdk::port_by_name(pc.device);
            if (id < 0) {
                dpdk::eal_cleanup();
                die(2, cfg.source + ": PORT|" + pc.name + "|device: no DPDK port named '" + pc.device +
                           "' (probed ports are the --vdev names and PCI addresses given to EAL)");
            }
            pc.port_id = id;
        } else if (!rte_eth_dev_is_valid_port(static_cast<std::uint16_t>(pc.port_id))) {
            dpdk::eal_cleanup();
            die(2, cfg.source + ": PORT|" + pc.name + "|port_id: no DPDK port " + std::to_string(pc.port_id));
        }
    }

    const std::uint16_t data_room = cfg.mbuf_data_size;  // includes RTE_PKTMBUF_HEADROOM
    if (cfg.pool.enabled) {
        // Losslessness needs every byte the buffer model admits to be backed
        // by an mbuf: running out of mbufs would drop silently in the NIC.
        // Worst case: the whole pool in minimum-size frames (or cells).
        const std::uint64_t min_charge = std::max<std::uint64_t>(cfg.pool.cell.v, 60);
        std::uint64_t needed = cfg.pool.size.v / min_charge;
        for (const auto& pc : cfg.ports) {
            (void)pc;
            needed += cfg.rx_ring_size + cfg.tx_ring_size + 2u * cfg.burst;
        }
        if (cfg.mbufs < needed) {
            dpdk::eal_cleanup();
            die(2, cfg.source + ": ROCELAB|mbufs: " + std::to_string(cfg.mbufs) + " mbufs cannot back BUFFER_POOL size " +
                       std::to_string(cfg.pool.size.v) + " B: the pool can hold " +
                       std::to_string(cfg.pool.size.v / min_charge) + " frames of " + std::to_string(min_charge) +
                       " B plus " + std::to_string(needed - cfg.pool.size.v / min_charge) +
                       " in RX/TX rings; set ROCELAB.mbufs to at least " + std::to_string(needed) +
                       " (and -m large enough), or shrink the pool");
        }
    }
    rte_mempool* pool = rte_pktmbuf_pool_create("rocelab_sw", cfg.mbufs, 256, 0, data_room, rte_socket_id());
    if (pool == nullptr) {
        dpdk::eal_cleanup();
        die(1, std::string("cannot create mbuf pool of ") + std::to_string(cfg.mbufs) +
                   " mbufs: " + rte_strerror(rte_errno) + " (raise -m or lower ROCELAB.mbufs)");
    }

    std::vector<dpdk::port_info> infos(cfg.ports.size());
    std::vector<sw::port_binding> bindings;
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
        auto& pc = cfg.ports[i];
        dpdk::port_params pp;
        pp.port_id = static_cast<std::uint16_t>(pc.port_id);
        pp.rx_ring_size = cfg.rx_ring_size;
        pp.tx_ring_size = cfg.tx_ring_size;
        pp.max_frame = cfg.max_frame;
        pp.pool = pool;
        if (auto e = dpdk::port_open(pp, infos[i]); !e.empty()) {
            std::fprintf(stderr, "rocelab-switch: %s: %s\n", pc.name.c_str(), e.c_str());
            dpdk::eal_cleanup();
            return 1;
        }
        sw::port_binding b;
        b.port_id = pp.port_id;
        b.name = pc.name;
        b.mac = pc.mac ? *pc.mac : (cfg.switch_mac && cfg.mode == fwd_mode::l3 ? *cfg.switch_mac : infos[i].mac);
        b.shaped = pc.speed.has_value();
        b.line_rate = pc.speed ? *pc.speed : infos[i].driver_speed;
        bindings.push_back(b);
    }
    // Speeds the config left to the driver complete the buffer model:
    // `xoff: auto` headroom (the built-in RoCE default) needs each port's speed.
    {
        std::vector<std::pair<int, bits_per_sec>> speeds;
        for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
            speeds.emplace_back(static_cast<int>(i), infos[i].driver_speed);
        }
        if (auto e = resolve_port_speeds(cfg, speeds); !e.empty()) {
            std::fprintf(stderr, "rocelab-switch: %s\n", e.c_str());
            for (const auto& b : bindings) { dpdk::port_close(b.port_id); }
            dpdk::eal_cleanup();
            return 2;
        }
    }

    auto pipe_r = sw::switch_pipeline::create(cfg, bindings, pool);
    if (auto* e = std::get_if<std::string>(&pipe_r)) {
        std::fprintf(stderr, "rocelab-switch: %s: %s\n", cfg.source.c_str(), e->c_str());
        for (const auto& b : bindings) { dpdk::port_close(b.port_id); }
        dpdk::eal_cleanup();
        return 2;
    }
    auto pipe = std::move(std::get<0>(pipe_r));

    const auto wall0 = std::chrono::system_clock::now();
    dpdk::tsc_clock clock;
    const std::int64_t wall_ns0 =
        std::chrono::duration_cast<std::chrono::nanoseconds>(wall0.time_since_epoch()).count() - clock.now().v;
    std::unique_ptr<dpdk::capture> cap;
    if (!opt.pcap_out.empty()) {
        std::vector<std::string> names;
        for (const auto& b : bindings) { names.push_back(b.name); }
        auto c = dpdk::capture::open(opt.pcap_out, names, opt.snaplen, wall_ns0, "sw");
        if (auto* e = std::get_if<std::string>(&c)) {
            dpdk::eal_cleanup();
            die(2, *e);
        }
        cap = std::move(std::get<0>(c));
        pipe->set_capture(cap.get());
    }
    if (!dpdk::eal_no_huge()) { rte_pdump_init(); }  // lets dpdk-dumpcap attach (needs hugepages)

    {
        sw::telemetry_info ti{ROCELAB_VERSION, cfg.source, cfg.seed, {}, &clock};
        for (const auto& pc : cfg.ports) { ti.pgs.push_back(pc.pgs); }
        sw::telemetry_attach(pipe.get(), ti);
    }

    runtime::queue_csv csv;
    if (!opt.queue_csv.empty()) {
        if (auto e = csv.open(opt.queue_csv); !e.empty()) {
            dpdk::eal_cleanup();
            die(2, "--queue-csv " + opt.queue_csv + ": " + e);
        }
    }

    std::printf("rocelab-switch %s: %zu ports, mode %s, config %s, seed %llu\n", ROCELAB_VERSION,
                bindings.size(), cfg.mode == fwd_mode::l2 ? "l2" : "l3", cfg.source.c_str(),
                static_cast<unsigned long long>(cfg.seed));
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        std::printf("  %s: port %u (%s, %s) mac %s line rate %s%s; %s\n", bindings[i].name.c_str(),
                    bindings[i].port_id, infos[i].device.c_str(), infos[i].driver.c_str(),
                    mac_str(bindings[i].mac).c_str(),
                    bindings[i].line_rate.v ? format_rate(bindings[i].line_rate).c_str() : "unknown",
                    bindings[i].shaped ? " (shaped)" : " (driver, not shaped)", infos[i].flow_ctrl_note.c_str());
    }
    std::fflush(stdout);

    runtime::install_stop_signals();

    // The worker polls a copy of main's clock: the worker, capture
    // timestamps, telemetry and the report share one epoch (PFC pause
    // deadlines compare against it).
    runtime::worker_ctl<sw::switch_pipeline> ctl;
    ctl.pipe = pipe.get();
    runtime::worker worker(ctl, clock, "rocelab-switch", csv.sampler(cfg.queue_sample_interval, clock.now()));

    const auto t0 = std::chrono::steady_clock::now();
    const nanos tsc0 = clock.now();
    auto last_status = t0;
    std::vector<port_prev> prev(bindings.size());
    std::uint64_t warned_behind = 0;
    std::uint64_t warned_overflow = 0;
    auto print_events = [&] {
        sw::switch_event ev;
        while (pipe->pop_event(ev)) {
            const char* what = ev.what == sw::switch_event::kind::storm_detected ? "PFC storm detected"
                                                                                : "PFC storm restored";
            std::printf("[%7.3fs] event: %s on %s queue %u\n", double(ev.ns - tsc0.v) / 1e9, what,
                        bindings[ev.port].name.c_str(), ev.queue);
            std::fflush(stdout);
        }
    };
    const bool status_on = !opt.quiet && cfg.status_interval.v > 0;
    while (!runtime::stop_requested().load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        const auto tn = std::chrono::steady_clock::now();
        const double el = std::chrono::duration<double>(tn - t0).count();
        if (cap) { cap->drain(); }
        print_events();
        csv.drain(*pipe);
        const double since = std::chrono::duration<double>(tn - last_status).count();
        if (since * 1e9 >= double(cfg.status_interval.v) && cfg.status_interval.v > 0) {
            if (status_on) { print_status(*pipe, prev, since, el); }
            std::uint64_t behind = 0;
            for (std::size_t i = 0; i < bindings.size(); ++i) { behind += sw::read_counter(pipe->counters(i).tx_behind); }
            std::uint64_t overflow = 0;
            for (std::size_t i = 0; i < bindings.size(); ++i) {
                overflow += sw::read_counter(
                    pipe->counters(i).drops[static_cast<std::size_t>(sw::drop_reason::headroom_overflow)]);
            }
            if (overflow > warned_overflow) {
                std::fprintf(stderr, "rocelab-switch: warning: lossless headroom overflowed (drop_headroom_overflow %llu): "
                                     "the headroom (xoff) is too small for the link, or the worker lcore stalled "
                                     "(longest gap between polls %.1f us)\n",
                             static_cast<unsigned long long>(overflow), double(pipe->max_poll_gap_ns) / 1e3);
                warned_overflow = overflow;
            }
            if (behind > warned_behind) {
                std::fprintf(stderr, "rocelab-switch: warning: the lcore cannot keep up with the configured line rate "
                                     "(tx_behind %llu)\n", static_cast<unsigned long long>(behind));
                warned_behind = behind;
            }
            last_status = tn;
        }
        if (opt.duration && el * 1e9 >= double(opt.duration->v)) { break; }
    }
    ctl.stop.store(true);
    worker.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sw::telemetry_detach();
    print_events();

    // Flush outputs, then free everything still queued and stop the ports.
    csv.close(*pipe);
    print_final(*pipe, elapsed);
    // Free what is queued, stop and close the ports (PMDs such as net_pcap
    // infinite_rx hold mbufs until close), then check every mbuf came back.
    pipe->release_all();
    std::vector<rte_eth_stats> ethstats(bindings.size());
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        rte_eth_dev_stop(bindings[i].port_id);
        rte_eth_stats_get(bindings[i].port_id, &ethstats[i]);
        rte_eth_dev_close(bindings[i].port_id);
    }
    if (cap) { cap->flush(); }
    const std::uint64_t in_use = rte_mempool_in_use_count(pool);
    std::printf("mbufs in use at exit: %llu of %u\n", static_cast<unsigned long long>(in_use), cfg.mbufs);
    if (in_use != 0) { std::fprintf(stderr, "rocelab-switch: warning: %llu mbufs not returned to the pool\n",
                                    static_cast<unsigned long long>(in_use)); }
    if (!opt.report.empty()) {
        write_report(opt.report, *pipe, cfg, elapsed, infos, ethstats, cfg.mbufs, in_use, cap.get(), clock.hz(),
                     clock.now());
        std::printf("report: %s\n", opt.report.c_str());
    }
    cap.reset();
    pipe.reset();
    rte_mempool_free(pool);
    dpdk::eal_cleanup();
    return 0;
}
