// rocelab-fabric - switches and traffic generators together in deterministic
// virtual time (pipelines/vt/fabric.hpp, docs/fabric.md).
//
// Loads a topology file (lib/fabric/topology.hpp), builds every node from
// its own rocelab-switch / rocelab-gen configuration, joins them with
// modelled cables and runs the fabric for the given fabric time. Writes the
// usual per-node reports plus fabric.json (deterministic: the same topology
// gives the same bytes) and speed.json (wall-clock figures), and with
// --pcap wire captures in fabric time.
#include <rte_errno.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <sys/resource.h>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <fstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#ifdef ROCELAB_WITH_MPI
#include <mpi.h>

#include "sim/mpi_transport.hpp"
#endif

#include "runtime/app_common.hpp"
#include "runtime/control_loop.hpp"
#include "runtime/status.hpp"
#include "fabric/deadlock.hpp"
#include "fabric/rt_scale.hpp"
#include "fabric/topology.hpp"
#include "config/units_parse.hpp"
#include "core/json.hpp"
#include "dpdk/eal.hpp"
#include "rocelab_version.h"
#include "runtime/gen_report.hpp"
#include "runtime/switch_report.hpp"
#include "vt/fabric.hpp"
#include "vt/metrics.hpp"

using namespace rocelab;

namespace {

constexpr const char* usage_text = R"(rocelab-fabric - switches and RoCEv2 generators together, in virtual or real time

Usage:
  rocelab-fabric [EAL options --] run TOPOLOGY.yaml [options]
  rocelab-fabric [EAL options --] check TOPOLOGY.yaml

The topology file names the nodes (each a rocelab-switch or rocelab-gen
configuration, a file or inline), the cables between their ports (rate,
propagation delay, optional seeded loss, TX/RX descriptor rings) and the
fabric time to run (docs/fabric.md; examples in conf/fabric/). The very
pipelines of rocelab-switch and rocelab-gen run as nodes of a discrete-event
engine: time jumps from one event to the next, nothing reads the wall clock,
and the same topology gives the same run, byte for byte.

With --real-time the same pipelines and cables run against the TSC clock
instead, polled in turn on this lcore as lcores poll their ports, with real
jitter and stalls. A scenario faster than --rt-rate is slowed down: every
rate x k, every time / k (k = rt-rate / fastest cable), bytes unchanged,
so the fabric behaves alike, only slower; expectations are judged on the
scenario's own scale (docs/scenarios.md, "Real time").

Options:
  --duration TIME   fabric time to run (default: the file's, else 10ms)
  --out DIR         write reports there (default: fabric-out):
                      fabric.json   links, nodes, engine counters (deterministic)
                      <node>.json   each switch's and generator's own report
                      speed.json    wall time and packet-hops per wall second
                      summary.json  expectations, per-flow and total metrics
                      flows.csv, queues.csv, pfc.csv  time series
                      fct.csv       every message's completion time
                      index.html    one-page summary with throughput.png,
                                    fct.png, queues.png, pfc.png
                                    (tools/fabric_report.py)
  --no-plots        skip index.html and the plots (no Python run)
  --pcap            wire captures DIR/<node>-<port>-{tx,rx}.pcap, nanosecond
                    timestamps in fabric time (t = 0 at the start)
  --snaplen BYTES   captured bytes per frame (default 128B)
  --mbufs N         the mbuf pool's capacity (default: sized from the scenario:
                    every switch's BUFFER_POOL in minimum-size frames, the
                    cables' rings and wires, the generators' stocks; memory
                    grows with what is in use; docs/fabric.md "Memory")
  --threads N       virtual time on N threads (default 1): each switch with
                    the hosts cabled to it is a part; parts go to N
                    partitions synchronised in windows of the quickest
                    cable between them; every report is the same for any N.
                    Thread k (k >= 1) runs on the k-th EAL worker lcore's CPU
                    if -l/--lcores names one, else on a CPU of the process's
                    other than the main lcore's (docs/fabric.md "Threads")
  --partition FILE  virtual time: the partitions given, not computed: one
                    "SWITCH: PARTITION" line per switch (0..P-1; hosts go
                    with the switch they are cabled to), run on --threads N
                    threads (default P); the reports stay the same
  --real-time       run in real time (above) instead of virtual time
  --rt-rate RATE    real time: the fastest cable's rate after scaling
                    (default 1Gbps, what one core here sustains)
  --quiet           no status line
  --help, --version

Over MPI ranks (built with MPI, -Dmpi=auto): mpirun -np R rocelab-fabric run ...
  runs the fabric's partitions on R ranks (partition p on rank p mod R, on
  --threads threads each), byte for byte the one process's run. Rank 0 writes
  every report, the time series and the plots from every rank's figures;
  each rank its own captures. EAL options given over ranks get a file prefix
  per rank (--file-prefix P: P-rank<N>). A start-up step that fails on one
  rank (EAL, the output folder, captures) stops every rank, naming the rank.
  SIGUSR1 to mpirun stops every rank at the next sample step
  (docs/fabric.md "Over MPI ranks").

EAL: without EAL options rocelab-fabric runs as
  --no-huge -m <sized to its rings and LPM tables> --no-pci -l 0 --file-prefix rocelab-fabric-<pid>
  --no-telemetry --log-level=lib.eal:error
It needs no device: every port is a modelled cable.

Status line (each wall second): fabric time reached, packet-hops per wall
second, frames on the wire, drops (switches, links).
Exit status: 0 done (every expectation passed), 1 run-time failure, 2 bad
command line or topology, 3 an expectation failed.
)";

struct opts {
    std::string cmd;
    std::string topology;
    std::optional<nanos> duration;
    std::string out = "fabric-out";
    bool pcap = false;
    std::uint32_t snaplen = 128;
    std::uint32_t mbufs = 0;
    bool quiet = false;
    bool plots = true;
    bool realtime = false;
    bits_per_sec rt_rate{1'000'000'000};
    unsigned threads = 1;
    bool threads_given = false;
    std::string partition;  // --partition FILE
    std::vector<vt::fabric::partition_entry> parts;  // its lines, read before EAL starts
};

// Over MPI ranks (mpirun -np R rocelab-fabric run ...; docs/fabric.md
// "Over MPI ranks"): this process's rank, and whether the ranks are still
// setting up (every rank takes the same steps on the same input until the
// run starts, so a set-up error is met by all of them at once).
struct rank_ctx {
    unsigned rank = 0;
    unsigned ranks = 1;
    bool setting_up = true;
#ifdef ROCELAB_WITH_MPI
    std::unique_ptr<sim::mpi_transport> tr;
#endif
    bool on() const noexcept { return ranks > 1; }
};
rank_ctx g_rk;

// The rank count a launcher gave this process (Open MPI's mpirun, or a
// PMI launcher as MPICH's), 0 when it was not started by one.
unsigned launched_ranks() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
        if (const char* e = std::getenv(v); e != nullptr) { return static_cast<unsigned>(std::strtoul(e, nullptr, 10)); }
    }
    return 0;
}

// One line on stderr, then exit. Over ranks, while setting up every rank
// meets the same error: rank 0 says it and exits with the code, the others
// leave quietly with 0 (mpirun ends the job at the first non-zero exit, and
// its exit status is that one).
[[noreturn]] void die(int code, const std::string& msg) {
    if (!g_rk.on()) { runtime::die("rocelab-fabric", code, msg); }
    if (g_rk.rank == 0) { std::fprintf(stderr, "rocelab-fabric: %s\n", msg.c_str()); }
#ifdef ROCELAB_WITH_MPI
    if (g_rk.setting_up) {
        g_rk.tr.reset();
        MPI_Finalize();
        std::exit(g_rk.rank == 0 ? code : 0);
    }
#endif
    std::exit(code);
}

// --partition FILE: one "SWITCH: PARTITION" per line ('#' starts a comment;
// blank lines are skipped), PARTITION a whole number 0..255. A line that is
// not of that form is one error line naming file:line.
std::vector<vt::fabric::partition_entry> read_partition(const std::string& path) {
    std::ifstream in(path);
    if (!in) { die(2, "--partition " + path + ": cannot read it"); }
    std::vector<vt::fabric::partition_entry> out;
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
        const std::string where = path + ":" + std::to_string(no);
        if (const auto h = line.find('#'); h != std::string::npos) { line.resize(h); }
        const auto trim = [](std::string x) {
            const auto b = x.find_first_not_of(" \t\r");
            if (b == std::string::npos) { return std::string(); }
            return x.substr(b, x.find_last_not_of(" \t\r") - b + 1);
        };
        line = trim(line);
        if (line.empty()) { continue; }
        const auto colon = line.rfind(':');
        if (colon == std::string::npos) { die(2, where + ": '" + line + "': expected 'SWITCH: PARTITION'"); }
        const std::string name = trim(line.substr(0, colon)), num = trim(line.substr(colon + 1));
        unsigned part = 0;
        const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), part);
        if (name.empty() || num.empty() || ec != std::errc{} || end != num.data() + num.size() || part > 255) {
            die(2, where + ": '" + line + "': expected 'SWITCH: PARTITION', PARTITION a whole number 0..255");
        }
        out.push_back({name, part, where});
    }
    if (out.empty()) { die(2, "--partition " + path + ": no 'SWITCH: PARTITION' line"); }
    return out;
}

opts parse(int argc, char** argv) {
    opts o;
    int i = 0;
    auto need = [&](const char* what) -> std::string {
        if (i + 1 >= argc) { die(2, std::string(argv[i]) + " needs " + what); }
        return argv[++i];
    };
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else if (a == "--version") {
            std::printf("rocelab-fabric %s\n", ROCELAB_VERSION);
            std::exit(0);
        } else if (a == "--duration") {
            const std::string v = need("a fabric time, e.g. 10ms");
            auto d = parse_time(v);
            if (!d || d->v <= 0) { die(2, "--duration '" + v + "': a fabric time > 0 with units, e.g. 10ms"); }
            o.duration = *d;
        } else if (a == "--out") {
            o.out = need("a directory");
        } else if (a == "--pcap") {
            o.pcap = true;
        } else if (a == "--snaplen") {
            const std::string v = need("bytes, e.g. 128B");
            auto b = parse_bytes(v, bare_number::accepted);
            if (!b || b->v < 14 || b->v > 16384) { die(2, "--snaplen '" + v + "': 14B..16KiB"); }
            o.snaplen = static_cast<std::uint32_t>(b->v);
        } else if (a == "--mbufs") {
            const std::string v = need("a count");
            char* end = nullptr;
            const unsigned long n = std::strtoul(v.c_str(), &end, 10);
            if (end == v.c_str() || *end != '\0' || n < 1024 || n > 16'000'000) { die(2, "--mbufs '" + v + "': 1024..16000000"); }
            o.mbufs = static_cast<std::uint32_t>(n);
        } else if (a == "--quiet") {
            o.quiet = true;
        } else if (a == "--real-time") {
            o.realtime = true;
        } else if (a == "--rt-rate") {
            const std::string v = need("a rate, e.g. 1Gbps");
            auto r = parse_rate(v);
            if (!r || r->v < 1'000'000 || r->v > 100'000'000'000ULL) {
                die(2, "--rt-rate '" + v + "': a rate with units, 1Mbps..100Gbps");
            }
            o.rt_rate = *r;
        } else if (a == "--no-plots") {
            o.plots = false;
        } else if (a == "--threads") {
            const std::string v = need("a thread count, e.g. 2");
            char* end = nullptr;
            const unsigned long n = std::strtoul(v.c_str(), &end, 10);
            if (end == v.c_str() || *end != '\0' || n < 1 || n > 256) { die(2, "--threads '" + v + "': 1..256"); }
            o.threads = static_cast<unsigned>(n);
            o.threads_given = true;
        } else if (a == "--partition") {
            o.partition = need("a file of 'switch: partition' lines");
        } else if (!a.empty() && a[0] == '-') {
            die(2, "unknown option " + a + " (see --help)");
        } else if (o.cmd.empty()) {
            if (a != "run" && a != "check") { die(2, "unknown command '" + a + "': run or check (see --help)"); }
            o.cmd = a;
        } else if (o.topology.empty()) {
            o.topology = a;
        } else {
            die(2, "unexpected argument '" + a + "'");
        }
    }
    if (o.cmd.empty() || o.topology.empty()) { die(2, "usage: rocelab-fabric run TOPOLOGY.yaml [options] (see --help)"); }
    if (o.threads > 1 && o.realtime) { die(2, "--threads: virtual time only (--real-time runs on one thread)"); }
    if (!o.partition.empty() && o.realtime) { die(2, "--partition: virtual time only (--real-time runs on one thread)"); }
    if (!o.partition.empty()) {
        o.parts = read_partition(o.partition);
        unsigned np = 0;
        for (const auto& e : o.parts) { np = std::max(np, e.part + 1); }
        if (!o.threads_given) {
            o.threads = np;  // one thread per partition
        } else if (o.threads > np) {
            die(2, "--threads " + std::to_string(o.threads) + ": --partition " + o.partition + " has " +
                       std::to_string(np) + " partition" + (np == 1 ? "" : "s") + ": at most " + std::to_string(np) +
                       " thread" + (np == 1 ? "" : "s"));
        }
    }
    return o;
}

std::uint64_t switch_drops(sw::switch_pipeline& s) {
    std::uint64_t n = 0;
    for (std::size_t p = 0; p < s.port_count(); ++p) {
        for (std::size_t r = 0; r < static_cast<std::size_t>(sw::drop_reason::count); ++r) { n += s.counters(p).drops[r]; }
    }
    return n;
}

struct link_totals {
    std::uint64_t frames = 0, on_wire = 0, lost = 0, rx_full = 0;
};
link_totals totals(vt::fabric& f) {
    link_totals t;
    for (std::size_t i = 0; i < f.node_count(); ++i) {
        for (std::size_t p = 0; p < f.port_count(i); ++p) {
            if (const auto* l = f.tx_link(i, static_cast<int>(p))) {
                t.frames += l->counters().tx_accepted;
                t.on_wire += l->on_link();
                t.lost += l->counters().lost;
                t.rx_full += l->counters().rx_ring_full;
            }
        }
    }
    return t;
}

// Over ranks: whether this process runs (node n, port p) (one process runs
// everything), and the rank that runs a switch (all its ports on one rank;
// a switch without ports: rank 0).
bool runs_here(vt::fabric& f, std::size_t n, int p) { return f.ranks() <= 1 || f.port_rank(n, p) == f.rank(); }
unsigned switch_rank(vt::fabric& f, std::size_t n) { return f.port_count(n) == 0 ? 0 : f.port_rank(n, 0); }

// What fabric.json reads that the run changes, as plain numbers. One
// process: read from the fabric (collect_figs). Over ranks, every rank
// collects what it runs (its switches, its ports' credits; its halves of
// the links and its units' polls, the rest staying 0), and rank 0 combines
// the gathered figures (rank_gather): counters of links, units and engines
// summed (each is counted on one rank only: a link's TX side on its
// sender's, its arrivals on its receiver's), a switch's and a port's own
// figures taken from the rank that runs it. The same writer then makes the
// same bytes (docs/fabric.md "Over MPI ranks").
struct switch_figs {
    sw::switch_pipeline::pool_figures bp{};
    std::uint64_t drops = 0;
    std::uint64_t pg_use_end = 0;
    std::vector<sw::port_counters> ports;    // per port
    std::vector<sw::queue_snapshot> queues;  // per port x 8
    std::vector<sw::pg_status> pgs;          // per port x 8
};
struct fabric_figs {
    sim::engine_counters eng{};
    std::uint64_t hops = 0;
    std::vector<vt::node_stats> nodes;
    std::vector<std::vector<sim::link_counters>> tx;  // per node, per port: its TX link's (zero: no cable)
    std::vector<switch_figs> sw;                      // per node (empty for a generator)
    std::vector<std::vector<credit_rx>> crx;          // per node, per port (credit mode)
    std::vector<std::vector<credit_tx>> ctx;
};
static_assert(std::is_trivially_copyable_v<sw::port_counters> && std::is_trivially_copyable_v<sw::queue_snapshot> &&
              std::is_trivially_copyable_v<sw::pg_status> && std::is_trivially_copyable_v<sim::link_counters> &&
              std::is_trivially_copyable_v<credit_rx> && std::is_trivially_copyable_v<credit_tx> &&
              std::is_trivially_copyable_v<vt::node_stats> && std::is_trivially_copyable_v<sim::engine_counters>,
              "fabric figures travel between ranks as bytes");

// A switch's figures (`s` runs here).
switch_figs collect_switch(sw::switch_pipeline& s) {
    switch_figs x;
    x.drops = switch_drops(s);
    x.bp = s.buffer_pool();
    for (std::size_t p = 0; p < s.port_count(); ++p) {
        x.ports.push_back(s.counters(p));
        for (int i = 0; i < 8; ++i) {
            x.queues.push_back(s.queue(p, i));
            x.pgs.push_back(s.pg(p, i));
            x.pg_use_end += x.pgs.back().use;
        }
    }
    return x;
}

// The figures of what runs on this process (one process: everything).
fabric_figs collect_figs(vt::fabric& f) {
    fabric_figs x;
    x.eng = f.engine_counters();
    x.hops = f.packet_hops();
    const bool credit = f.has_credit_links();
    for (std::size_t n = 0; n < f.node_count(); ++n) {
        x.nodes.push_back(f.stats(n));
        auto& tx = x.tx.emplace_back();
        auto& crx = x.crx.emplace_back();
        auto& ctx = x.ctx.emplace_back();
        for (std::size_t p = 0; p < f.port_count(n); ++p) {
            const auto* l = f.tx_link(n, static_cast<int>(p));
            tx.push_back(l != nullptr ? l->counters() : sim::link_counters{});
            if (credit) {
                const credit_rx* r = f.credit_receiver(n, static_cast<int>(p));
                const credit_tx* t = f.credit_sender(n, static_cast<int>(p));
                crx.push_back(r != nullptr ? *r : credit_rx{});
                ctx.push_back(t != nullptr ? *t : credit_tx{});
            }
        }
        const bool mine = f.ranks() <= 1 || switch_rank(f, n) == f.rank();
        x.sw.push_back(f.kind(n) == vt::node_kind::switch_node && mine ? collect_switch(f.switch_at(n)) : switch_figs{});
    }
    return x;
}

// Over ranks: a rank's figures as bytes (host order: the ranks share one
// architecture), and rank 0's combination of every rank's.
template <typename T>
void put_pod(std::vector<std::byte>& b, const T& v) {
    const std::size_t at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
}
template <typename T>
void put_pods(std::vector<std::byte>& b, const std::vector<T>& v) {
    put_pod(b, static_cast<std::uint64_t>(v.size()));
    for (const T& e : v) { put_pod(b, e); }
}
struct byte_reader {
    const std::vector<std::byte>& b;
    std::size_t at = 0;
    template <typename T>
    T pod() {
        if (b.size() - at < sizeof(T)) { throw std::runtime_error("a rank's figures are truncated"); }
        static_assert(std::is_trivially_copyable_v<T>);
        T v;
        // void*: T may have no copy assignment (counter64's is deleted), which
        // memcpy into a trivially copyable object does not need.
        std::memcpy(static_cast<void*>(&v), b.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    template <typename T>
    std::vector<T> pods() {
        const auto n = pod<std::uint64_t>();
        if (n > (b.size() - at) / sizeof(T)) { throw std::runtime_error("a rank's figures are truncated"); }
        std::vector<T> v;
        for (std::uint64_t i = 0; i < n; ++i) { v.push_back(pod<T>()); }
        return v;
    }
};

std::vector<std::byte> figs_bytes(const fabric_figs& x) {
    std::vector<std::byte> b;
    put_pod(b, x.eng);
    put_pod(b, x.hops);
    put_pods(b, x.nodes);
    for (std::size_t n = 0; n < x.nodes.size(); ++n) {
        put_pods(b, x.tx[n]);
        put_pods(b, x.crx[n]);
        put_pods(b, x.ctx[n]);
        const switch_figs& w = x.sw[n];
        put_pod(b, w.bp);
        put_pod(b, w.drops);
        put_pod(b, w.pg_use_end);
        put_pods(b, w.ports);
        put_pods(b, w.queues);
        put_pods(b, w.pgs);
    }
    return b;
}

void add_counters(sim::link_counters& a, const sim::link_counters& b) {
    a.tx_accepted += b.tx_accepted;
    a.tx_bytes += b.tx_bytes;
    a.tx_refused += b.tx_refused;
    a.tx_refused_wire_full += b.tx_refused_wire_full;
    a.lost += b.lost;
    a.rx_ring_full += b.rx_ring_full;
    a.delivered += b.delivered;
    a.arrived += b.arrived;
    a.arrived_bytes += b.arrived_bytes;
    a.rx_taken += b.rx_taken;
    a.credit_updates += b.credit_updates;
}

// Rank 0: every rank's figures (by rank) combined (see fabric_figs).
fabric_figs combine_figs(vt::fabric& f, const std::vector<std::vector<std::byte>>& by_rank) {
    fabric_figs x;
    for (unsigned r = 0; r < by_rank.size(); ++r) {
        byte_reader in{by_rank[r]};
        const auto eng = in.pod<sim::engine_counters>();
        const auto hops = in.pod<std::uint64_t>();
        const auto nodes = in.pods<vt::node_stats>();
        if (nodes.size() != f.node_count()) { throw std::runtime_error("rank " + std::to_string(r) + " has another fabric"); }
        if (r == 0) {
            x.nodes.assign(nodes.size(), vt::node_stats{});
            x.tx.resize(nodes.size());
            x.crx.resize(nodes.size());
            x.ctx.resize(nodes.size());
            x.sw.resize(nodes.size());
        }
        x.eng.events += eng.events;
        x.eng.link_events += eng.link_events;
        x.eng.node_polls += eng.node_polls;
        x.eng.instants += eng.instants;
        x.hops += hops;
        for (std::size_t n = 0; n < nodes.size(); ++n) {
            x.nodes[n].polls += nodes[n].polls;
            x.nodes[n].spins += nodes[n].spins;
            const auto tx = in.pods<sim::link_counters>();
            const auto crx = in.pods<credit_rx>();
            const auto ctx = in.pods<credit_tx>();
            switch_figs w;
            w.bp = in.pod<sw::switch_pipeline::pool_figures>();
            w.drops = in.pod<std::uint64_t>();
            w.pg_use_end = in.pod<std::uint64_t>();
            w.ports = in.pods<sw::port_counters>();
            w.queues = in.pods<sw::queue_snapshot>();
            w.pgs = in.pods<sw::pg_status>();
            if (x.tx[n].size() < tx.size()) { x.tx[n].resize(tx.size()); }
            for (std::size_t p = 0; p < tx.size(); ++p) { add_counters(x.tx[n][p], tx[p]); }
            if (x.crx[n].size() < crx.size()) { x.crx[n].resize(crx.size()); }
            if (x.ctx[n].size() < ctx.size()) { x.ctx[n].resize(ctx.size()); }
            for (std::size_t p = 0; p < crx.size() && p < ctx.size(); ++p) {
                if (f.port_rank(n, static_cast<int>(p)) == r) {  // a port's credits: its own rank's
                    x.crx[n][p] = crx[p];
                    x.ctx[n][p] = ctx[p];
                }
            }
            if (f.kind(n) == vt::node_kind::switch_node && switch_rank(f, n) == r) {
                x.sw[n] = std::move(w);  // a switch's figures: the rank that runs it
            }
        }
        if (in.at != in.b.size()) { throw std::runtime_error("rank " + std::to_string(r) + " sent more figures than its fabric has"); }
    }
    return x;
}

// fabric.json: the topology as run, every link's counters and busy share,
// every node's poll counts, the engine's counters. No wall-clock figure.
// `f` gives only what the description fixes (names, ports, cables'
// parameters, which ports give or take credits); `x` the run's figures.
std::string fabric_json(vt::fabric& f, const fabric_figs& x, const topology_cfg& t, nanos ran) {
    std::string s;
    json_writer j(s);
    j.begin_object();
    j.kv("tool", "rocelab-fabric");
    j.kv("version", ROCELAB_VERSION);
    j.kv("topology", t.source);
    j.kv("fabric_time_ns", ran.v);
    j.kv("packet_hops", x.hops);
    j.key("engine");
    j.begin_object();
    j.kv("events", x.eng.events);
    j.kv("link_events", x.eng.link_events);
    j.kv("node_polls", x.eng.node_polls);
    j.end_object();
    j.key("nodes");
    j.begin_array();
    for (std::size_t i = 0; i < f.node_count(); ++i) {
        j.begin_object();
        j.kv("name", f.node_name(i));
        j.kv("kind", f.kind(i) == vt::node_kind::switch_node ? "switch" : "gen");
        j.kv("config", t.nodes[i].config_source);
        j.kv("ports", static_cast<std::uint64_t>(f.port_count(i)));
        j.kv("polls", x.nodes[i].polls);
        j.kv("spins", x.nodes[i].spins);
        if (f.kind(i) == vt::node_kind::switch_node) {
            const switch_figs& sw = x.sw[i];
            j.kv("drops", sw.drops);
            // The ingress buffer pool: its peak, and what is still in use at the
            // end of the run (0 once every frame has left).
            j.key("buffer_pool");
            j.begin_object();
            j.kv("size_bytes", sw.bp.size);
            j.kv("shared_bytes", sw.bp.shared_size);
            j.kv("peak_shared_used_bytes", sw.bp.peak_shared_used);
            j.kv("shared_used_end_bytes", sw.bp.shared_used);
            j.kv("pg_use_end_bytes", sw.pg_use_end);
            j.end_object();
            // PFC/PAUSE frames each port sent and received.
            j.key("pfc");
            j.begin_array();
            for (std::size_t p = 0; p < sw.ports.size(); ++p) {
                const auto& c = sw.ports[p];
                j.begin_object();
                j.kv("port", f.port_name(i, static_cast<int>(p)));
                j.kv("tx_frames", c.tx_pfc_frames);
                j.kv("rx_frames", c.rx_pfc);
                j.end_object();
            }
            j.end_array();
        }
        j.end_object();
    }
    j.end_array();
    j.key("links");
    j.begin_array();
    for (std::size_t i = 0; i < f.node_count(); ++i) {
        for (std::size_t p = 0; p < f.port_count(i); ++p) {
            const auto* l = f.tx_link(i, static_cast<int>(p));
            if (l == nullptr) { continue; }
            const sim::link_counters& c = x.tx[i][p];
            j.begin_object();
            j.kv("from", f.node_name(i) + ":" + f.port_name(i, static_cast<int>(p)));
            j.kv("rate_bps", l->cfg().rate.v);
            j.kv("delay_ns", l->cfg().prop_delay.v);
            j.kv("loss", l->cfg().loss);
            j.kv("tx_frames", c.tx_accepted);
            j.kv("tx_bytes", c.tx_bytes);
            j.kv("tx_refused", c.tx_refused);
            j.kv("delivered", c.delivered);
            j.kv("lost", c.lost);
            j.kv("rx_ring_full", c.rx_ring_full);
            const double span = double(ran.v - l->cfg().prop_delay.v);
            const double busy = span > 0 ? double(c.arrived_bytes + 24 * c.arrived) * 8 /
                                               (double(l->cfg().rate.v) * span / 1e9)
                                         : 0.0;
            j.kv("busy", busy);
            j.end_object();
        }
    }
    j.end_array();
    // Egress queues that carried traffic, with their WRED/ECN thresholds
    // (the plots draw Kmin/Kmax), and lossless priority groups.
    // One object per (switch, port, index 0..7) that `fn` keeps, starting
    // with node, port and `index_key`; fn(switch, port, index) writes the
    // rest, or returns false to leave the object out before it starts.
    const auto per_switch_port = [&](const char* index_key, auto keep, auto write) {
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            if (f.kind(n) != vt::node_kind::switch_node) { continue; }
            const switch_figs& s = x.sw[n];
            for (std::size_t p = 0; p < s.ports.size(); ++p) {
                for (int i = 0; i < 8; ++i) {
                    if (!keep(s, p, i)) { continue; }
                    j.begin_object();
                    j.kv("node", f.node_name(n));
                    j.kv("port", f.port_name(n, static_cast<int>(p)));
                    j.kv(index_key, i);
                    write(s, p, i);
                    j.end_object();
                }
            }
        }
    };
    const auto at = [](std::size_t p, int i) { return p * 8 + static_cast<std::size_t>(i); };
    j.key("queues");
    j.begin_array();
    per_switch_port(
        "queue", [&](const switch_figs& s, std::size_t p, int q) { return s.queues[at(p, q)].enq_packets != 0; },
        [&](const switch_figs& s, std::size_t p, int q) {
            const auto& qs = s.queues[at(p, q)];
            j.kv("enq_packets", qs.enq_packets);
            j.kv("max_depth_bytes", qs.max_depth_bytes);
            j.kv("drop_packets", qs.drop_packets);
            j.kv("ecn_marked", qs.ecn_marked);
            j.kv("wred_dropped", qs.wred_dropped);
            j.kv("wred", qs.wred);
            if (qs.wred) {
                j.kv("kmin_bytes", qs.wred_kmin);
                j.kv("kmax_bytes", qs.wred_kmax);
            }
        });
    j.end_array();
    j.key("priority_groups");
    j.begin_array();
    per_switch_port(
        "pg",
        [&](const switch_figs& s, std::size_t p, int g) {
            const auto& pg = s.pgs[at(p, g)];
            return pg.lossless && pg.peak_use != 0;
        },
        [&](const switch_figs& s, std::size_t p, int g) {
            const auto& pg = s.pgs[at(p, g)];
            j.kv("peak_use_bytes", pg.peak_use);
            j.kv("use_end_bytes", pg.use);
            j.kv("peak_headroom_bytes", pg.peak_headroom);
            j.kv("xoff_transitions", pg.xoff_transitions);
            j.kv("drop_headroom_overflow", pg.drop_headroom_overflow);
        });
    j.end_array();
    if (f.has_credit_links()) {
        // Credit mode (docs/fabric.md "Credit flow control"): per port and
        // credited class, what it gives (a switch port) and what it sends with.
        j.key("credits");
        j.begin_array();
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            for (std::size_t p = 0; p < f.port_count(n); ++p) {
                const bool has_r = f.credit_receiver(n, static_cast<int>(p)) != nullptr;
                const bool has_t = f.credit_sender(n, static_cast<int>(p)) != nullptr;
                const credit_rx* r = has_r ? &x.crx[n][p] : nullptr;
                const credit_tx* t = has_t ? &x.ctx[n][p] : nullptr;
                for (int c = 0; c < 8; ++c) {
                    const bool gives = r != nullptr && (r->credited >> c & 1u) != 0;
                    const bool sends = t != nullptr && t->vl_of[static_cast<std::size_t>(c)] != no_vl;
                    if (!gives && !sends) { continue; }
                    j.begin_object();
                    j.kv("node", f.node_name(n));
                    j.kv("port", f.port_name(n, static_cast<int>(p)));
                    j.kv("class", c);
                    if (gives) {
                        const auto i = static_cast<std::size_t>(c);
                        j.kv("gives_bytes", r->limit[i]);
                        j.kv("block_bytes", std::uint64_t{r->block});
                        j.kv("abr_blocks", r->abr[i]);
                        j.kv("fccl_sent_blocks", r->advertised[i]);
                        j.kv("overruns", r->overruns);
                    }
                    if (sends) {
                        const auto vl = static_cast<std::size_t>(t->vl_of[static_cast<std::size_t>(c)]);
                        j.kv("vl", static_cast<int>(vl));
                        j.kv("fctbs_blocks", t->fctbs[vl]);
                        j.kv("fccl_blocks", t->fccl[vl]);
                        j.kv("updates", t->updates);
                        j.kv("waits", t->waits);
                    }
                    j.end_object();
                }
            }
        }
        j.end_array();
    }
    j.end_object();
    s += "\n";
    return s;
}

// One CSV line built with std::to_chars (a scenario of thousands of flows
// writes a row per flow per sample: printf's double formatting dominated).
// Byte for byte what "%.9f" (seconds from integer ns), "%.0f" (round half
// to even, as printf) and "%llu" print.
class csv_line {
public:
    csv_line& secs(std::int64_t ns) {
        sep();
        _p = std::to_chars(_p, _end, ns / 1'000'000'000).ptr;
        *_p++ = '.';
        char frac[16];
        auto* e = std::to_chars(frac, frac + sizeof frac, ns % 1'000'000'000).ptr;
        const auto len = static_cast<int>(e - frac);
        for (int i = len; i < 9; ++i) { *_p++ = '0'; }
        for (char* c = frac; c != e; ++c) { *_p++ = *c; }
        return *this;
    }
    csv_line& round(double x) { return num(static_cast<unsigned long long>(std::nearbyint(x))); }
    csv_line& num(unsigned long long x) {
        sep();
        _p = std::to_chars(_p, _end, x).ptr;
        return *this;
    }
    csv_line& str(const std::string& x) {
        sep();
        const std::size_t n = std::min<std::size_t>(x.size(), static_cast<std::size_t>(_end - _p - 64));
        std::memcpy(_p, x.data(), n);
        _p += n;
        return *this;
    }
    void write(std::FILE* f) {
        *_p++ = '\n';
        std::fwrite(_buf, 1, static_cast<std::size_t>(_p - _buf), f);
        _p = _buf;
        _first = true;
    }

private:
    void sep() {
        if (!_first) { *_p++ = ','; }
        _first = false;
    }
    char _buf[1024];
    char* _p = _buf;
    char* _end = _buf + sizeof _buf;
    bool _first = true;
};

// What the time series and the deadlock watch read at each sample step, as
// plain numbers in one array: per flow (generators in node order, flows in
// order) its requester's and its responder's figures; per port of every
// node its PFC frames, paused queues and whether a lossless PG holds a
// pause upstream; per switch port and queue the queue's figures. collect()
// fills what this process runs (one process: everything) and leaves the
// rest 0. Over ranks every rank collects its own and an all-reduce sums the
// arrays (each figure is written on one rank only), so rank 0 reads what one
// process reads (docs/fabric.md "Over MPI ranks").
class live_figs {
public:
    struct flow_live {  // the requester's side, then the responder's
        std::uint64_t tx_bytes, messages, retx, naks, rate_bps, cnp_rx;
        std::uint64_t rx_bytes, cnp_tx;
    };
    struct port_live {
        std::uint64_t pfc_rx, pfc_tx;
        std::uint64_t paused;  // a switch port's paused egress queues (bits)
        std::uint64_t holds;   // 1: a lossless PG of the switch port is in XOFF
    };
    struct queue_live {
        std::uint64_t enq_packets, depth_bytes, deq_packets;
    };

    explicit live_figs(vt::fabric& f) : _f(f) {
        std::size_t flows = 0, ports = 0, sw_ports = 0;
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            _flow_base.push_back(flows);
            _port_base.push_back(ports);
            _queue_base.push_back(sw_ports * 8);
            if (f.kind(n) == vt::node_kind::gen_node) { flows += f.gen_at(n).flow_count(); }
            if (f.kind(n) == vt::node_kind::switch_node) { sw_ports += f.port_count(n); }
            ports += f.port_count(n);
        }
        _flows.resize(flows);
        _ports.resize(ports);
        _queues.resize(sw_ports * 8);
    }
    void collect(nanos now) {
        std::fill(_flows.begin(), _flows.end(), flow_live{});
        std::fill(_ports.begin(), _ports.end(), port_live{});
        std::fill(_queues.begin(), _queues.end(), queue_live{});
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) == vt::node_kind::gen_node) {
                const auto& g = _f.gen_at(n);
                for (std::size_t i = 0; i < g.flow_count(); ++i) {
                    const auto& fl = g.flow(i);
                    flow_live& v = _flows[_flow_base[n] + i];
                    if (mine(n, fl.src_port)) {
                        const auto& c = fl.rq.counters();
                        v.tx_bytes = c.tx_bytes;
                        v.messages = c.messages_completed;
                        v.retx = c.retx_packets;
                        v.naks = c.naks_rx;
                        v.rate_bps = fl.pacer.rate().v;
                        v.cnp_rx = fl.cnp_rx;
                    }
                    if (mine(n, fl.dst_port)) {
                        v.rx_bytes = fl.rs.counters().rx_bytes;
                        v.cnp_tx = fl.cnp_tx;
                    }
                }
                for (std::size_t p = 0; p < g.port_count(); ++p) {
                    if (!mine(n, static_cast<int>(p))) { continue; }
                    const auto& c = g.counters(p);
                    _ports[_port_base[n] + p] = {c.rx_pfc + c.rx_pause, c.tx_pfc, 0, 0};
                }
                continue;
            }
            if (_f.port_count(n) == 0 || !mine(n, 0)) { continue; }  // a switch: all its ports on one rank (switch_rank)
            auto& s = _f.switch_at(n);
            for (std::size_t p = 0; p < s.port_count(); ++p) {
                port_live& v = _ports[_port_base[n] + p];
                const auto st = s.pfc(p, now);
                for (int i = 0; i < 8; ++i) { v.pfc_rx += st.rx_frames[i]; }
                v.pfc_tx = st.frames_sent;
                v.paused = s.paused_queues(p, now);
                for (int g = 0; g < 8 && v.holds == 0; ++g) {
                    const sw::pg_status pg = s.pg(p, g);
                    v.holds = pg.lossless && pg.xoff ? 1 : 0;
                }
                for (int q = 0; q < 8; ++q) {
                    const auto qs = s.queue(p, q);
                    _queues[queue_at(n, p, q)] = {qs.enq_packets, qs.depth_bytes, qs.deq_packets};
                }
            }
        }
    }
    // Over ranks: every rank's figures summed into every rank's (collective).
    template <typename Sum>
    void sum(Sum&& all_reduce) {
        all_reduce(words(_flows), static_cast<int>(_flows.size() * sizeof(flow_live) / 8));
        all_reduce(words(_ports), static_cast<int>(_ports.size() * sizeof(port_live) / 8));
        all_reduce(words(_queues), static_cast<int>(_queues.size() * sizeof(queue_live) / 8));
    }
    const flow_live& flow(std::size_t n, std::size_t i) const { return _flows[_flow_base[n] + i]; }
    const port_live& port(std::size_t n, std::size_t p) const { return _ports[_port_base[n] + p]; }
    const queue_live& queue(std::size_t n, std::size_t p, int q) const { return _queues[queue_at(n, p, q)]; }

private:
    bool mine(std::size_t n, int p) const { return runs_here(_f, n, p); }
    std::size_t queue_at(std::size_t n, std::size_t p, int q) const {
        return _queue_base[n] + p * 8 + static_cast<std::size_t>(q);
    }
    // The records as the 64-bit words they are made of (what the all-reduce adds).
    template <typename T>
    static std::uint64_t* words(std::vector<T>& v) {
        static_assert(std::is_standard_layout_v<T> && sizeof(T) % 8 == 0 && alignof(T) == 8);
        return reinterpret_cast<std::uint64_t*>(v.data());
    }
    vt::fabric& _f;
    std::vector<std::size_t> _flow_base, _port_base, _queue_base;
    std::vector<flow_live> _flows;
    std::vector<port_live> _ports;
    std::vector<queue_live> _queues;
};

// Time series in fabric time, sampled by the runner between engine steps
// (sampling reads counters only: it does not change the run).
class series {
public:
    series(const std::string& dir, vt::fabric& f) : _f(f) {
        _flows = std::fopen((dir + "/flows.csv").c_str(), "w");
        _queues = std::fopen((dir + "/queues.csv").c_str(), "w");
        _pfc = std::fopen((dir + "/pfc.csv").c_str(), "w");
        if (_flows == nullptr || _queues == nullptr || _pfc == nullptr) { die(1, dir + ": cannot write the time series"); }
        std::fprintf(_flows, "time_s,flow,tx_bps,goodput_bps,tx_bytes,rx_bytes,messages_completed,retransmissions,naks,"
                             "rate_bps,cnp_rx,cnp_tx\n");
        std::fprintf(_queues, "time_s,node,port,queue,depth_bytes,paused\n");
        std::fprintf(_pfc, "time_s,node,port,pfc_rx,pfc_tx\n");
    }
    ~series() {
        for (std::FILE* x : {_flows, _queues, _pfc}) {
            if (x != nullptr) { std::fclose(x); }
        }
    }
    series(const series&) = delete;
    series& operator=(const series&) = delete;

    void sample(nanos now, const live_figs& lv) {
        const double t = double(now.v) / 1e9;
        const double dt = double((now - _last).v) / 1e9;
        std::size_t k = 0;
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) == vt::node_kind::gen_node) {
                auto& g = _f.gen_at(n);
                for (std::size_t i = 0; i < g.flow_count(); ++i, ++k) {
                    const auto& v = lv.flow(n, i);
                    const std::uint64_t tx = v.tx_bytes, rx = v.rx_bytes;
                    if (_prev.size() <= k) { _prev.emplace_back(0, 0); }
                    _line.secs(now.v)
                        .str(g.flow(i).cfg.name)
                        .round(dt > 0 ? double(tx - _prev[k].first) * 8 / dt : 0.0)
                        .round(dt > 0 ? double(rx - _prev[k].second) * 8 / dt : 0.0)
                        .num(tx)
                        .num(rx)
                        .num(v.messages)
                        .num(v.retx)
                        .num(v.naks)
                        .num(v.rate_bps)
                        .num(v.cnp_rx)
                        .num(v.cnp_tx)
                        .write(_flows);
                    _prev[k] = {tx, rx};
                }
            }
            // Every port's PFC frames; a switch's queues that carried traffic.
            for (std::size_t p = 0; p < _f.port_count(n); ++p) {
                const auto& v = lv.port(n, p);
                std::fprintf(_pfc, "%.9f,%s,%s,%llu,%llu\n", t, _f.node_name(n).c_str(),
                             _f.port_name(n, static_cast<int>(p)).c_str(), (unsigned long long)v.pfc_rx,
                             (unsigned long long)v.pfc_tx);
                for (int q = 0; _f.kind(n) == vt::node_kind::switch_node && q < 8; ++q) {
                    const auto& qs = lv.queue(n, p, q);
                    if (qs.enq_packets == 0 && qs.depth_bytes == 0) { continue; }
                    std::fprintf(_queues, "%.9f,%s,%s,%d,%llu,%d\n", t, _f.node_name(n).c_str(),
                                 _f.port_name(n, static_cast<int>(p)).c_str(), q, (unsigned long long)qs.depth_bytes,
                                 static_cast<int>((v.paused >> q) & 1));
                }
            }
        }
        _last = now;
    }

private:
    vt::fabric& _f;
    std::FILE* _flows = nullptr;
    std::FILE* _queues = nullptr;
    std::FILE* _pfc = nullptr;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> _prev;
    nanos _last{0};
    csv_line _line;
};

// PFC deadlocks (lib/fabric/deadlock.hpp): at each sample, every switch
// egress queue that has carried traffic, whether it is paused, and whether
// the switch at the other end of its cable holds that pause (one of its
// lossless ingress PGs on that port in XOFF). Prints a line when a cycle of
// stuck queues is found and when it clears. Reads counters only.
class deadlock_watch {
public:
    deadlock_watch(vt::fabric& f, const topology_cfg& t) : _f(f), _peer(f.node_count()) {
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            _peer[n].assign(f.port_count(n), {dl_no_node, 0});
        }
        for (const auto& l : t.links) {
            _peer[l.a][static_cast<std::size_t>(l.pa)] = {static_cast<std::uint32_t>(l.b), l.pb};
            _peer[l.b][static_cast<std::size_t>(l.pb)] = {static_cast<std::uint32_t>(l.a), l.pa};
        }
    }
    void observe(nanos now, const live_figs& lv, bool print) {
        _states.clear();
        for (std::size_t n = 0; n < _f.node_count(); ++n) {
            if (_f.kind(n) != vt::node_kind::switch_node) { continue; }
            for (std::size_t p = 0; p < _f.port_count(n); ++p) {
                const std::uint64_t paused = lv.port(n, p).paused;
                const auto [m, r] = _peer[n][p];
                const bool peer_switch = m != dl_no_node && _f.kind(m) == vt::node_kind::switch_node;
                const bool holds = peer_switch && lv.port(m, static_cast<std::size_t>(r)).holds != 0;
                for (int q = 0; q < 8; ++q) {
                    const auto& qs = lv.queue(n, p, q);
                    if (qs.enq_packets == 0) { continue; }
                    dl_queue_state st;
                    st.q = {static_cast<std::uint32_t>(n), static_cast<std::uint16_t>(p), static_cast<std::uint8_t>(q)};
                    st.paused = ((paused >> q) & 1) != 0;
                    st.depth_bytes = qs.depth_bytes;
                    st.sent_packets = qs.deq_packets;
                    st.peer = peer_switch ? m : dl_no_node;
                    st.peer_holds = holds;
                    _states.push_back(st);
                }
            }
        }
        _d.observe(now, _states);
        if (!print) { return; }
        for (std::size_t i : _d.new_found()) {
            std::printf("rocelab-fabric: PFC deadlock at %s: %s (every queue paused by the next, none sent since the "
                        "previous sample)\n",
                        format_time(_d.found()[i].detected).c_str(), cycle_text(_d.found()[i]).c_str());
        }
        for (std::size_t i : _d.new_cleared()) {
            std::printf("rocelab-fabric: PFC deadlock found at %s cleared at %s: %s\n",
                        format_time(_d.found()[i].detected).c_str(), format_time(_d.found()[i].cleared).c_str(),
                        cycle_text(_d.found()[i]).c_str());
        }
        if (!_d.new_found().empty() || !_d.new_cleared().empty()) { std::fflush(stdout); }
    }
    const deadlock_detector& detector() const noexcept { return _d; }
    std::string cycle_text(const dl_deadlock& d) const {
        return dl_cycle_text(d.cycle, [&](std::uint32_t n, std::uint16_t p) { return port_label(n, p); });
    }
    // "s0:Ethernet1:3" per queue (summary.json).
    std::vector<std::string> cycle_refs(const dl_deadlock& d) const {
        std::vector<std::string> v;
        for (const auto& r : d.cycle) { v.push_back(port_label(r.node, r.port) + ":" + std::to_string(r.queue)); }
        return v;
    }

private:
    std::string port_label(std::uint32_t n, std::uint16_t p) const {
        std::string s = _f.node_name(n);
        s += ':';
        s += _f.port_name(n, p);
        return s;
    }
    vt::fabric& _f;
    std::vector<std::vector<std::pair<std::uint32_t, int>>> _peer;
    std::vector<dl_queue_state> _states;
    deadlock_detector _d;
};

// A node's own report, as rocelab-switch or rocelab-gen writes it.
struct node_report final : vt::node_visitor {
    node_report(std::string p, const runtime::run_report& r) : path(std::move(p)), run(r) {}
    void on_switch(sw::switch_pipeline& p, const switch_cfg& cfg) override {
        error = runtime::write_switch_report(path, p, cfg, run);
    }
    void on_gen(gen::gen_pipeline& p, const gen_cfg& cfg) override { error = runtime::write_gen_report(path, p, cfg, run); }
    std::string path;
    const runtime::run_report& run;
    std::string error;
};

// The fabric's clock strategies for runtime::run_control.
// Virtual time: each advance runs every event up to the next sample step.
struct vt_fabric_clock {
    vt::fabric& f;
    nanos duration;
    nanos step;
    std::chrono::steady_clock::time_point t0;
    nanos t{0};
    nanos advance() {
        t = std::min(duration, t + step);
        f.run_until(t);
        return t;
    }
    double wall_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

// Real time: the TSC from the start of the run is fabric time; each
// advance is 256 rounds, each polling every pipeline (fabric::poll_realtime).
// Host stalls freeze the fabric. This thread is every node and cable at
// once; when the host takes the CPU away (a VM's timer tick or an
// interrupt: 50 us to milliseconds), a round that starts more than
// rt_stall after the previous one moves fabric time on by rt_stall only, as
// if the host had paused the whole fabric, instead of leaving every link
// idle for that long (rt_stalls, rt_frozen_ns in summary.json).
struct rt_fabric_clock {
    rt_fabric_clock(vt::fabric& fab, nanos d, nanos st, std::chrono::steady_clock::time_point start)
        : f(fab), duration(d), stall(st), t0(start) {}
    vt::fabric& f;
    nanos duration;
    nanos stall;
    std::chrono::steady_clock::time_point t0;
    dpdk::tsc_clock tsc;
    nanos t{0};
    nanos frozen{0};
    std::uint64_t stalls = 0;
    nanos advance() {
        for (unsigned r = 0; r < 256; ++r) {
            nanos now = tsc.now() - frozen;
            if (now - t > stall) [[unlikely]] {
                frozen += now - t - stall;
                now = t + stall;
                ++stalls;
            }
            if (now >= duration) {
                t = duration;
                break;
            }
            f.poll_realtime(now);
            t = now;
        }
        return t;
    }
    double wall_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

// rt_stall: 20 us, or two 1 KiB frame times at the fastest scaled cable if longer.
nanos rt_stall_of(const topology_cfg& topo) {
    nanos s{20'000};
    for (const auto& l : topo.links) {
        if (l.cable.rate.v > 0) {
            s = std::max(s, nanos{static_cast<std::int64_t>(2 * (1024.0 + 82) * 8 * 1e9 / double(l.cable.rate.v))});
        }
    }
    return s;
}

// The run's per-step work and status line: the time series and the
// deadlock watch at each sample step; each wall second, fabric time reached,
// packet-hops per wall second, frames on the wire, drops.
//
// Over ranks (`ranked`): at each step the ranks agree, in one all-reduce,
// on whether to stop (a SIGUSR1 on any rank: mpirun passes it on to all)
// and sum the status figures; rank 0 prints the status line from the last
// step's sums. So every rank runs the same steps and stops at the same
// one. A second all-reduce sums the ranks' live_figs, from which rank 0
// writes the time series and runs the deadlock watch.
std::atomic<bool> g_rank_stop{false};
struct fabric_hooks {
    vt::fabric& f;
    live_figs* lv;
    series* ts;  // over ranks: rank 0's only, as dl
    deadlock_watch* dl;
    bool realtime;
    bool quiet;
    nanos duration;
    nanos step;
    nanos next_sample = step;
    std::uint64_t last_hops = 0;
    bool ranked = false;
    bool stop_agreed = false;
    std::array<std::uint64_t, 5> sums{};  // over ranks: stop, hops, switch drops, on the wire, link drops
    struct live {
        std::uint64_t hops = 0, switch_drops = 0, on_wire = 0, link_drops = 0;
    };
    live local() {
        live v;
        v.hops = f.packet_hops();
        for (std::size_t i = 0; i < f.node_count(); ++i) {
            if (f.kind(i) == vt::node_kind::switch_node) { v.switch_drops += switch_drops(f.switch_at(i)); }
        }
        const link_totals lt = totals(f);
        v.on_wire = lt.on_wire;
        v.link_drops = lt.lost + lt.rx_full;
        return v;
    }
    void tick(nanos t) {
        if (ranked) {
#ifdef ROCELAB_WITH_MPI
            const live v = local();
            sums = {g_rank_stop.load() ? 1u : 0u, v.hops, v.switch_drops, v.on_wire, v.link_drops};
            g_rk.tr->sum(sums.data(), static_cast<int>(sums.size()));
            stop_agreed = sums[0] != 0;
#endif
            sample(t);
            return;
        }
        if (realtime) {  // sampled when a step has passed (the last round at the end is not)
            if (t >= duration || t < next_sample) { return; }
            next_sample = t + step;
        }
        sample(t);
    }
    // The time series and the deadlock watch at `t`: over ranks collective
    // (every rank's live_figs summed), written by rank 0.
    void sample(nanos t) {
        lv->collect(t);
#ifdef ROCELAB_WITH_MPI
        if (ranked) { lv->sum([](std::uint64_t* v, int n) { g_rk.tr->sum(v, n); }); }
#endif
        if (ts != nullptr) {
            ts->sample(t, *lv);
            dl->observe(t, *lv, true);
        }
    }
    void status(double dt, nanos t, double wall) {
        if (quiet || g_rk.rank != 0) { return; }
        live v;
        if (ranked) {
            v = live{sums[1], sums[2], sums[3], sums[4]};
        } else {
            v = local();
        }
        runtime::status_line line(wall);
        line.append(" | %s %s of %s | %.2f M packet-hops/s | on the wire %" PRIu64 " | drops: switches %" PRIu64
                    ", links %" PRIu64,
                    realtime ? "real time" : "fabric", format_time(t).c_str(), format_time(duration).c_str(),
                    double(v.hops - last_hops) / dt / 1e6, v.on_wire, v.switch_drops, v.link_drops);
        if (ranked) { line.append(" | %u ranks", g_rk.ranks); }
        line.print();
        last_hops = v.hops;
    }
    bool finished() const { return stop_agreed; }
};

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
    if (!f) { die(1, path + ": cannot write"); }
}

// fct.csv: every message's completion time the generators kept (all of
// them up to each flow's sample cap; summary.json's fct_samples_dropped
// counts the rest), flow by flow in completion order, on the scenario's
// scale (x k in real time, like the summary's FCT metrics): `rows` writes
// them after the header.
void write_fct_csv(const std::string& path, const std::function<bool(std::FILE*)>& rows) {
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (out == nullptr) { die(1, path + ": cannot write"); }
    const bool ok = std::fputs("flow,fct_ns\n", out) >= 0 && rows(out);
    if (std::fclose(out) != 0 || !ok) { die(1, path + ": cannot write"); }
}

// index.html and the plots: tools/fabric_report.py (ROCELAB_TOOLS overrides
// the directory), run and waited for. The reports are complete before it
// runs, so its failure is a warning, not the run's exit status.
void summary_page(const std::string& out) {
    const char* env = std::getenv("ROCELAB_TOOLS");
    std::string script = std::string(env != nullptr && *env != '\0' ? env : ROCELAB_TOOLS_DIR) + "/fabric_report.py";
    std::string python = "/usr/bin/python3", dir = out;
    char* args[] = {python.data(), script.data(), dir.data(), nullptr};
    std::fflush(stdout);
    std::fflush(stderr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE}) { sigaddset(&dfl, sig); }
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int e = posix_spawn(&pid, python.c_str(), nullptr, &attr, args, environ);
    posix_spawnattr_destroy(&attr);
    std::string why;
    if (e != 0) {
        why = std::string("cannot start ") + python + ": " + std::strerror(e);
    } else {
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0) {
            if (errno != EINTR) {
                why = std::string("waitpid: ") + std::strerror(errno);
                break;
            }
        }
        if (why.empty() && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            why = WIFEXITED(st) ? "exit status " + std::to_string(WEXITSTATUS(st))
                                : "signal " + std::to_string(WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        }
    }
    if (why.empty()) {
        std::printf("rocelab-fabric: summary %s/index.html\n", out.c_str());
    } else {
        std::fprintf(stderr, "rocelab-fabric: warning: %s failed (%s): no summary page; the reports are in %s/\n",
                     script.c_str(), why.c_str(), out.c_str());
    }
    std::fflush(stdout);
}

// speed.json: wall time, packet-hops per wall second, memory, threads.
// MemAvailable + SwapFree from /proc/meminfo, in bytes; 0 when unknown.
std::uint64_t available_memory() {
    std::FILE* fp = std::fopen("/proc/meminfo", "r");
    if (fp == nullptr) { return 0; }
    char line[256];
    std::uint64_t total = 0;
    int found = 0;
    while (std::fgets(line, sizeof line, fp) != nullptr) {
        unsigned long long kb = 0;
        if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1 || std::sscanf(line, "SwapFree: %llu kB", &kb) == 1) {
            total += kb * 1024;
            ++found;
        }
    }
    std::fclose(fp);
    return found == 2 ? total : 0;
}

std::string speed_json(vt::fabric& f, nanos ran, double wall, double setup_s, unsigned threads,
                       std::uint64_t memory_floor) {
    std::string s;
    json_writer j(s);
    j.begin_object();
    j.kv("fabric_time_ns", ran.v);
    j.kv("wall_s", wall);
    j.kv("packet_hops", f.packet_hops());
    j.kv("packet_hops_per_wall_s", wall > 0 ? double(f.packet_hops()) / wall : 0.0);
    j.kv("node_polls", f.engine_counters().node_polls);
    j.kv("slowdown", double(ran.v) > 0 ? wall / (double(ran.v) / 1e9) : 0.0);
    // Memory: the process's peak RSS, and the mbuf pools (their
    // capacity from the sizing rule; populated: what was ever needed).
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    j.kv("peak_rss_bytes", static_cast<std::uint64_t>(ru.ru_maxrss) * 1024);
    const auto pf = f.pools();
    j.kv("mbufs_capacity", pf.capacity);
    j.kv("mbufs_populated", pf.populated);
    j.kv("mbuf_bytes", pf.bytes);
    j.kv("memory_floor_bytes", memory_floor);  // the floor the start-up check used (plan_memory)
    j.kv("setup_s", setup_s);
    // Threads: the partitions, the lookahead between them, the
    // cables cut and the synchronisation windows run.
    const auto pf2 = f.partitions();
    j.kv("threads", threads);
    j.kv("partitions", pf2.partitions);
    j.kv("lookahead_ns", pf2.lookahead.v);
    j.kv("cut_cables", static_cast<std::uint64_t>(pf2.cut_cables));
    j.kv("windows", pf2.windows);
    // Where each thread's wall time went (sim/parallel.hpp): running its
    // partitions, and waiting at the window barrier (a steady clock read
    // at the barrier's edges); the waits' share of the run's wall time,
    // per thread and over all threads.
    double wait_sum = 0;
    j.key("thread_busy_s");
    j.begin_array();
    for (const auto& t : pf2.thread_times) {
        j.value(double(t.busy_ns) / 1e9);
    }
    j.end_array();
    j.key("thread_wait_s");
    j.begin_array();
    for (const auto& t : pf2.thread_times) {
        j.value(double(t.wait_ns) / 1e9);
        wait_sum += double(t.wait_ns) / 1e9;
    }
    j.end_array();
    j.key("thread_wait_share");
    j.begin_array();
    for (const auto& t : pf2.thread_times) {
        j.value(wall > 0 ? double(t.wait_ns) / 1e9 / wall : 0.0);
    }
    j.end_array();
    const std::size_t nt = pf2.thread_times.size();
    j.kv("sync_wait_share", wall > 0 && nt != 0 ? wait_sum / (wall * double(nt)) : 0.0);
    j.end_object();
    s += "\n";
    return s;
}

// The metrics summary.json gives per flow, and in its totals.
constexpr const char* k_summary_flow_metrics[] = {"goodput",  "messages", "fct_p50",   "fct_p99", "fct_max",
                                                  "naks",     "retx",     "timeouts",  "cnp_rx",  "rate_min",
                                                  "rate_mean", "flow_fct", "goodput_fct"};
constexpr const char* k_summary_totals[] = {"drops", "lossless_drops", "link_drops", "ecn_marked"};

// What summary.json and fct.csv read. One process: the fabric and its
// metrics (summary_of). Over ranks: rank 0's combination of every rank's
// answers (ranked_summary), so the same writer makes the same bytes.
struct summary_source {
    // a metric's value, unscaled (vt::metrics::value)
    std::function<std::optional<double>(const expect_metric&, std::string&)> value;
    std::function<gen::gen_pipeline::collective_figures(std::size_t node)> collectives;
    // per flow: FCT samples kept and dropped
    std::function<std::pair<std::uint64_t, std::uint64_t>(std::size_t node, std::size_t flow)> fct_counts;
    std::function<bool(std::FILE*)> fct_rows;  // fct.csv's rows
    std::uint64_t packet_hops = 0;
};

summary_source summary_of(vt::fabric& f, vt::metrics& mx, double k) {
    summary_source src;
    src.value = [&mx](const expect_metric& m, std::string& err) { return mx.value(m, err); };
    src.collectives = [&f](std::size_t n) { return f.gen_at(n).collectives(); };
    src.fct_counts = [&f](std::size_t n, std::size_t i) {
        const auto& fl = f.gen_at(n).flow(i);
        return std::pair<std::uint64_t, std::uint64_t>{fl.fct_ns.size(), fl.fct_dropped};
    };
    src.fct_rows = [&f, k](std::FILE* out) {
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            if (f.kind(n) == vt::node_kind::gen_node && !runtime::write_fct_rows(out, f.gen_at(n), k)) { return false; }
        }
        return true;
    };
    src.packet_hops = f.packet_hops();
    return src;
}

// summary.json and fct.csv: the expectations (printed as judged), flows,
// collectives, deadlocks and totals. Returns the failed expectations.
std::size_t write_summary(const opts& o, vt::fabric& f, const summary_source& src, const topology_cfg& topo,
                          deadlock_watch& dl, double k, nanos ran, std::uint64_t rt_stalls, nanos rt_frozen) {
    // Expectations, then summary.json (deterministic in virtual
    // time, like fabric.json). In real time a metric is put back on
    // the scenario's scale (rt_metric_scale).
    auto scaled_value = [&](const expect_metric& m, std::string& err) -> std::optional<double> {
        auto v = src.value(m, err);
        if (v) { *v *= rt_metric_scale(m.name, k); }
        return v;
    };
    std::string sum;
    json_writer j(sum);
    j.begin_object();
    j.kv("scenario", topo.name);
    j.kv("description", topo.description);
    j.kv("file", topo.source);
    j.kv("backend", o.realtime ? "real-time" : "virtual-time");
    if (o.realtime) {
        j.kv("rt_factor", k);  // rates x k, times / k; metrics below are on the scenario's scale
        j.kv("rt_rounds", f.engine_counters().instants);
        j.kv("rt_time_ns", ran.v);
        j.kv("rt_stalls", rt_stalls);        // host stalls the fabric was frozen through
        j.kv("rt_frozen_ns", rt_frozen.v);   // their length beyond rt_stall each (wall time, not fabric time)
        j.kv("fabric_time_ns", static_cast<std::int64_t>(static_cast<double>(ran.v) * k + 0.5));
    } else {
        j.kv("fabric_time_ns", ran.v);
    }
    std::size_t failed = 0;
    runtime::json_objects(j, "expectations", topo.expect.size(), [&](std::size_t i) {
        const expectation& e = topo.expect[i];
        const expect_result r = evaluate(
            e, [&](const expect_metric& m, std::string& err) { return scaled_value(m, err); },
            vt::metrics::unit);
        failed += r.passed ? 0 : 1;
        std::printf("  %s  %s   (%s)\n", r.passed ? "PASS" : "FAIL", e.text.c_str(), r.detail.c_str());
        j.kv("expect", e.text);
        j.kv("passed", r.passed);
        j.kv("lhs", r.lhs);
        j.kv("rhs", r.rhs);
        j.kv("detail", r.detail);
    });
    j.kv("passed", failed == 0);
    j.key("flows");
    j.begin_array();
    for (std::size_t n = 0; n < f.node_count(); ++n) {
        if (f.kind(n) != vt::node_kind::gen_node) { continue; }
        for (std::size_t i = 0; i < f.gen_at(n).flow_count(); ++i) {
            const std::string fn = f.gen_at(n).flow(i).cfg.name;
            j.begin_object();
            j.kv("flow", fn);
            for (const char* m : k_summary_flow_metrics) {
                std::string err;
                const auto v = scaled_value(expect_metric{m, {fn}}, err);
                j.kv(m, v.value_or(0.0));
            }
            const auto [kept, dropped] = src.fct_counts(n, i);
            j.kv("fct_samples", kept);
            j.kv("fct_samples_dropped", dropped);
            j.end_object();
        }
    }
    j.end_array();
    // Collectives as nccl-tests reports them: size S, time, algbw =
    // S / t and busbw (docs/scenarios.md, "Collectives").
    j.key("collectives");
    j.begin_array();
    for (std::size_t n = 0; n < f.node_count(); ++n) {
        if (f.kind(n) != vt::node_kind::gen_node || !f.gen_at(n).ring()) { continue; }
        const gen_cfg& g = f.gen_config(n);
        const auto cf = src.collectives(n);
        std::uint64_t tmin = UINT64_MAX, tmax = 0;
        double tsum = 0;
        for (const std::uint64_t t : cf.ns) {
            tmin = std::min(tmin, t);
            tmax = std::max(tmax, t);
            tsum += double(t);
        }
        const double scale = rt_metric_scale("collective_mean", k);
        const double mean = cf.ns.empty() ? 0.0 : tsum / double(cf.ns.size()) * scale;
        const auto [algbw, busbw] = collective_bandwidth(g.pattern, g.ring_hosts, g.sizes.fixed, mean);
        j.begin_object();
        j.kv("node", f.node_name(n));
        j.kv("kind", gen_pattern_name(g.pattern));
        j.kv("ranks", static_cast<std::uint64_t>(g.ring_hosts));
        j.kv("size_bytes", g.sizes.fixed.v);
        j.kv("chunk_bytes", g.ring_chunk);
        j.kv("steps", static_cast<std::uint64_t>(g.ring_steps));
        j.kv("completed", cf.done);
        std::uint64_t steps_done = 0;
        double step_ns = 0;
        for (std::size_t s = 0; s < cf.step_n.size(); ++s) {
            steps_done += cf.step_n[s];
            step_ns += double(cf.step_sum_ns[s]);
        }
        j.kv("steps_completed", steps_done);  // every flow's message of the step ACKed
        j.kv("step_mean_ns", steps_done ? step_ns / double(steps_done) * rt_metric_scale("collective_mean", k) : 0.0);
        j.kv("time_mean_ns", mean);
        j.kv("time_min_ns", cf.ns.empty() ? 0.0 : double(tmin) * scale);
        j.kv("time_max_ns", double(tmax) * scale);
        j.kv("algbw_gbps", algbw);
        j.kv("busbw_gbps", busbw);
        j.kv("bus_factor", collective_bus_factor(g.pattern, g.ring_hosts));
        if (g.planes > 1) {  // multi-plane: how it was striped, and each collective's time
            j.kv("planes", std::uint64_t{g.planes});
            j.kv("striping", g.striping_weighted ? "weighted" : "static");
            j.key("times_ns");
            j.begin_array();
            for (const std::uint64_t t : cf.ns) { j.value(double(t) * scale); }
            j.end_array();
        }
        j.end_object();
        const std::string striped =
            g.planes > 1 ? " striped over " + std::to_string(g.planes) + " planes (" +
                               (g.striping_weighted ? "weighted" : "static") + ")"
                         : std::string();
        std::printf("  collective %s: %s over %u ranks%s, size %s, %llu completed, time %s, algbw %.2f Gbps, "
                    "busbw %.2f Gbps\n",
                    f.node_name(n).c_str(), gen_pattern_name(g.pattern), g.ring_hosts, striped.c_str(),
                    format_bytes(g.sizes.fixed).c_str(), static_cast<unsigned long long>(cf.done),
                    cf.ns.empty() ? "-" : format_time(nanos{static_cast<std::int64_t>(mean + 0.5)}).c_str(),
                    algbw, busbw);
    }
    j.end_array();
    // PFC deadlocks found (lib/fabric/deadlock.hpp): when, the cycle, when it cleared.
    j.key("deadlocks");
    j.begin_array();
    for (const dl_deadlock& d : dl.detector().found()) {
        j.begin_object();
        j.kv("detected_ns", static_cast<std::int64_t>(double(d.detected.v) * k + 0.5));
        if (d.cleared.v >= 0) {
            j.kv("cleared_ns", static_cast<std::int64_t>(double(d.cleared.v) * k + 0.5));
        } else {
            j.key("cleared_ns");
            j.null_value();
        }
        j.key("cycle");
        j.begin_array();
        for (const std::string& q : dl.cycle_refs(d)) { j.value(q); }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.key("totals");
    j.begin_object();
    for (const char* m : k_summary_totals) {
        std::string err;
        j.kv(m, src.value(expect_metric{m, {}}, err).value_or(0.0));
    }
    if (f.has_credit_links()) {
        for (const char* m : {"credit_waits", "credit_overruns"}) {
            std::string err;
            j.kv(m, src.value(expect_metric{m, {}}, err).value_or(0.0));
        }
    }
    j.kv("packet_hops", src.packet_hops);
    j.end_object();
    j.end_object();
    sum += "\n";
    write_file(o.out + "/summary.json", sum);
    write_fct_csv(o.out + "/fct.csv", src.fct_rows);
    return failed;
}

// Whether node n's ports run on several ranks (a generator whose hosts do;
// a switch never is). The same answer on every rank.
bool split_over_ranks(vt::fabric& f, std::size_t n) {
    for (std::size_t p = 1; p < f.port_count(n); ++p) {
        if (f.port_rank(n, static_cast<int>(p)) != f.port_rank(n, 0)) { return true; }
    }
    return false;
}

// Over ranks, the report of generator n whose hosts run on several ranks
// (collective: every rank calls it for the same n). Each rank sends the
// figures of the parts it runs (runtime::gen_figs): each flow's requester
// side and FCT samples from its source port's rank, its responder side
// from its destination port's, each port's counters and ethdev figures and
// each worker's poll figures (and whether it is done) from its ports'
// rank, and every rank its share of the pipeline's own poll figures. Rank
// 0 puts them together, with the collectives it derived for the summary
// (`coll`), and writes the report with the one process's writer, so the
// bytes are the same. Returns the error (rank 0), else "".
std::string write_split_gen(vt::fabric& f, std::size_t n, runtime::run_report& r, const std::string& path,
                            const vt::metrics::collective_figs& coll) {
#ifdef ROCELAB_WITH_MPI
    const gen::gen_pipeline& g = f.gen_at(n);
    const gen_cfg& cfg = f.gen_config(n);
    auto mine = [&](std::size_t p) { return runs_here(f, n, static_cast<int>(p)); };
    // A worker's rank is its ports' (a host's ports run on one rank); a worker without ports: rank 0's.
    std::vector<int> worker_port(g.worker_count(), -1);
    for (std::size_t i = g.port_count(); i-- > 0;) { worker_port[g.port_worker(i)] = static_cast<int>(i); }
    enum : std::uint8_t { t_req, t_resp, t_port, t_worker };
    std::vector<std::byte> b;
    gen::gen_pipeline::worker_view own;  // the pipeline's own poll figures (poll() driven directly)
    own.busy_cycles = read_counter(g.busy_cycles);
    own.loops = read_counter(g.loops);
    own.max_poll_gap_ns = read_counter(g.max_poll_gap_ns);
    own.stalls = read_counter(g.stalls);
    own.stalled_ns = read_counter(g.stalled_ns);
    put_pod(b, own);
    for (std::size_t i = 0; i < g.flow_count(); ++i) {
        const gen::flow_state& fl = g.flow(i);
        if (mine(fl.src_port)) {
            put_pod(b, t_req);
            put_pod(b, static_cast<std::uint64_t>(i));
            put_pod(b, runtime::gen_req_figs_of(fl, cfg, r.end));
            put_pods(b, fl.fct_ns);
        }
        if (mine(fl.dst_port)) {
            put_pod(b, t_resp);
            put_pod(b, static_cast<std::uint64_t>(i));
            put_pod(b, runtime::gen_resp_figs_of(fl));
        }
    }
    for (std::size_t i = 0; i < g.port_count(); ++i) {
        if (!mine(i)) { continue; }
        put_pod(b, t_port);
        put_pod(b, static_cast<std::uint64_t>(i));
        put_pod(b, runtime::gen_port_figs_of(g, i));
        put_pod(b, r.port_ethdev(i));
    }
    for (std::size_t k = 0; k < g.worker_count(); ++k) {
        if (worker_port[k] < 0 ? f.rank() != 0 : !mine(static_cast<std::size_t>(worker_port[k]))) { continue; }
        put_pod(b, t_worker);
        put_pod(b, static_cast<std::uint64_t>(k));
        put_pod(b, runtime::gen_worker_figs_of(g.worker(k)));
        put_pod(b, static_cast<std::uint8_t>(g.worker_done(k)));
    }
    const auto by_rank = g_rk.tr->gather(b);
    if (f.rank() != 0) { return ""; }
    runtime::gen_figs x;
    x.req.resize(g.flow_count());
    x.resp.resize(g.flow_count());
    x.fct.resize(g.flow_count());
    x.ports.resize(g.port_count());
    x.workers.resize(g.worker_count());
    // What each rank sent, so that a part no rank sent (or two did) is an error, not a zero.
    std::vector<std::uint8_t> got_req(g.flow_count()), got_resp(g.flow_count()), got_port(g.port_count()),
        got_worker(g.worker_count()), done(g.worker_count());
    // As poll_totals() sums: the pipeline's own figures (each rank's share) plus every worker's.
    auto add = [&x](const gen::gen_pipeline::worker_view& v) {
        x.totals.busy_cycles += v.busy_cycles;
        x.totals.loops += v.loops;
        x.totals.max_poll_gap_ns = std::max(x.totals.max_poll_gap_ns, v.max_poll_gap_ns);
        x.totals.stalls += v.stalls;
        x.totals.stalled_ns += v.stalled_ns;
    };
    auto at = [](std::uint64_t i, std::size_t size, std::vector<std::uint8_t>& got) {
        if (i >= size || got[i]++ != 0) { throw std::runtime_error("two ranks or none sent one part"); }
        return static_cast<std::size_t>(i);
    };
    try {
        for (const auto& rb : by_rank) {
            byte_reader in{rb};
            add(in.pod<gen::gen_pipeline::worker_view>());
            while (in.at < rb.size()) {
                const auto tag = in.pod<std::uint8_t>();
                const auto i = in.pod<std::uint64_t>();
                if (tag == t_req) {
                    const std::size_t k = at(i, x.req.size(), got_req);
                    x.req[k] = in.pod<runtime::gen_req_figs>();
                    x.fct[k] = in.pods<std::uint64_t>();
                } else if (tag == t_resp) {
                    x.resp[at(i, x.resp.size(), got_resp)] = in.pod<runtime::gen_resp_figs>();
                } else if (tag == t_port) {
                    const std::size_t k = at(i, x.ports.size(), got_port);
                    x.ports[k] = in.pod<runtime::gen_port_figs>();
                    r.ethdev.at(k) = in.pod<runtime::ethdev_stats>();
                } else if (tag == t_worker) {
                    const std::size_t k = at(i, x.workers.size(), got_worker);
                    x.workers[k] = in.pod<gen::gen_pipeline::worker_view>();
                    done[k] = in.pod<std::uint8_t>();
                } else {
                    throw std::runtime_error("an unknown part");
                }
            }
        }
        for (const auto* v : {&got_req, &got_resp, &got_port, &got_worker}) {
            if (std::find(v->begin(), v->end(), 0) != v->end()) { throw std::runtime_error("no rank sent one part"); }
        }
    } catch (const std::exception& e) {
        return "combining the ranks' figures of " + f.node_name(n) + ": " + e.what();
    }
    for (const auto& v : x.workers) { add(v); }
    // all_finished(): every worker saw its flows finish.
    x.all_finished = !done.empty() && std::find(done.begin(), done.end(), 0) == done.end();
    if (g.ring()) {
        if (n >= coll.size()) { return "the collectives of " + f.node_name(n) + " were not gathered"; }
        x.coll = coll[n];
    }
    return runtime::write_report_file(path, runtime::gen_report_json(g, cfg, r, x));
#else
    (void)f, (void)n, (void)r, (void)path, (void)coll;
    return "built without MPI";
#endif
}

// Frees every mbuf (links, pipelines); with `write`, first reads the real-
// time ports' ethdev counters, then writes each node's own report (over
// ranks, `coll`: the collectives rank 0 gathered for the summary). Returns
// 1 when a report could not be written.
int release_and_report(vt::fabric& f, const opts& o, std::uint64_t mbufs, bool write,
                       const vt::metrics::collective_figs& coll) {
    int rc = 0;
    // Real time: the ports' ethdev names and counters, read before the
    // devices close (release_all).
    std::vector<std::vector<std::pair<std::string, runtime::ethdev_stats>>> eth(f.node_count());
    for (std::size_t n = 0; o.realtime && write && n < f.node_count(); ++n) {
        for (std::size_t p = 0; p < f.port_count(n); ++p) {
            const int pid = f.eth_port(n, static_cast<int>(p));
            if (pid < 0) {
                eth[n].emplace_back();
                continue;
            }
            char name[RTE_ETH_NAME_MAX_LEN] = {};
            rte_eth_dev_get_name_by_port(static_cast<std::uint16_t>(pid), name);
            rte_eth_stats st{};
            rte_eth_stats_get(static_cast<std::uint16_t>(pid), &st);
            eth[n].emplace_back(name, runtime::ethdev_stats{st.ipackets, st.opackets, st.imissed, st.ierrors,
                                                            st.oerrors, st.rx_nombuf});
        }
    }
    f.release_all();
    // Each node's own report, as rocelab-switch / rocelab-gen write it (after
    // the release, as the apps do): <out>/<node>.json. Its "ethdev" counters
    // are the modelled cables': opackets what the port's TX ring took,
    // ipackets what arrived into its RX ring, imissed RX-ring overflows.
    if (write) {
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            // Over ranks: the rank that runs all of a node writes its report;
            // a generator whose hosts run on several ranks, rank 0 from every
            // rank's figures (write_split_gen).
            const bool split = f.ranks() > 1 && split_over_ranks(f, n);
            if (f.ranks() > 1 && !split && !f.node_local(n)) { continue; }
            runtime::run_report r;
            r.elapsed_s = double(f.now().v) / 1e9;
            r.end = f.now();
            r.tsc_hz = o.realtime ? rte_get_tsc_hz() : 1'000'000'000;
            r.mbufs_total = mbufs;
            r.mbufs_in_use = f.pools().in_use;
            r.command_line = "rocelab-fabric run " + o.topology;
            for (std::size_t p = 0; p < f.port_count(n); ++p) {
                const std::string pn = f.port_name(n, static_cast<int>(p));
                if (p < eth[n].size() && !eth[n][p].first.empty()) {
                    // Real time: the net_ring device and its own counters.
                    r.devices.push_back(eth[n][p].first);
                    r.ethdev.push_back(eth[n][p].second);
                    continue;
                }
                r.devices.push_back("vt:" + f.node_name(n) + ":" + pn);
                runtime::ethdev_stats es;
                if (const auto* tx = f.tx_link(n, static_cast<int>(p))) { es.opackets = tx->counters().tx_accepted; }
                if (const auto* rx = f.rx_link(n, static_cast<int>(p))) {
                    es.ipackets = rx->counters().delivered;
                    es.imissed = rx->counters().rx_ring_full;
                }
                r.ethdev.push_back(es);
            }
            node_report rep(o.out + "/" + f.node_name(n) + ".json", r);
            if (split) {
                rep.error = write_split_gen(f, n, r, rep.path, coll);
            } else {
                f.node_at(n).visit(rep);
            }
            if (const std::string& e = rep.error; !e.empty()) {
                std::fprintf(stderr, "rocelab-fabric: %s\n", e.c_str());
                rc = 1;
            }
        }
    }
    return rc;
}
// The run's closing lines: what ran, how fast, and (virtual time) the
// partitions and the pools' health. Returns 1 on an internal error.
int print_ran(const opts& o, vt::fabric& f, const topology_cfg& topo, double k, nanos ran, double wall,
              std::uint64_t rt_stalls, nanos rt_frozen) {
    int rc = 0;
    const link_totals lt = totals(f);
    if (o.realtime) {
        std::printf("rocelab-fabric: ran %s of real time (%s of scenario time) in %.3f s wall: %" PRIu64
                    " packet-hops, %.2f M packet-hops per second, %" PRIu64 " rounds; link drops %" PRIu64
                    "; host stalls %" PRIu64 " (fabric frozen %s)\n",
                    format_time(ran).c_str(), format_time(nanos{static_cast<std::int64_t>(double(ran.v) * k + 0.5)}).c_str(),
                    wall, f.packet_hops(), double(f.packet_hops()) / wall / 1e6, f.engine_counters().instants,
                    lt.lost + lt.rx_full, rt_stalls, format_time(rt_frozen).c_str());
        // A round should take less than one 1 KiB frame time at the
        // fastest (scaled) cable's rate, or frames wait for polls.
        const std::uint64_t rounds = f.engine_counters().instants;
        std::uint64_t fastest = 0;
        for (const auto& l : topo.links) { fastest = std::max(fastest, l.cable.rate.v); }
        const double frame_ns = fastest ? (1024.0 + 82) * 8 * 1e9 / double(fastest) : 0;
        const double round_ns = rounds ? double(ran.v) / double(rounds) : 0;
        if (frame_ns > 0 && round_ns > frame_ns) {
            std::printf("rocelab-fabric: warning: a round over all pipelines took %.2f us on average, longer "
                        "than a 1 KiB frame at %s (%.2f us): this CPU did not keep up, lower --rt-rate\n",
                        round_ns / 1e3, format_rate(bits_per_sec{fastest}).c_str(), frame_ns / 1e3);
        }
    } else {
        rusage ru{};
        ::getrusage(RUSAGE_SELF, &ru);
        std::printf("rocelab-fabric: ran %s of fabric time in %.3f s wall: %" PRIu64
                    " packet-hops, %.2f M packet-hops per wall second, peak RSS %.0f MB; link drops %" PRIu64
                    ", spins %" PRIu64 "\n",
                    format_time(ran).c_str(), wall, f.packet_hops(), double(f.packet_hops()) / wall / 1e6,
                    double(ru.ru_maxrss) * 1024 / 1e6,
                    lt.lost + lt.rx_full, f.spins());
        const auto pf2 = f.partitions();
        if (pf2.partitions > 1) {
            std::string cpus = "main lcore";
            for (unsigned k = 1; k < std::min(o.threads, pf2.partitions); ++k) {
                cpus += ", CPU " + dpdk::extra_thread_cpus(k);
            }
            std::string waits;  // each thread's wait at the window barrier, as a share of the wall time
            for (const auto& t : pf2.thread_times) {
                char b[32];
                std::snprintf(b, sizeof b, "%s%.0f %%", waits.empty() ? "" : ", ",
                              wall > 0 ? double(t.wait_ns) / 1e9 / wall * 100 : 0.0);
                waits += b;
            }
            std::printf(
                "rocelab-fabric: %u threads (%s): %u partitions, %zu cables cut, lookahead %s, %" PRIu64
                " windows; waiting at the barrier: %s of the wall time\n",
                o.threads, cpus.c_str(), pf2.partitions, pf2.cut_cables, format_time(pf2.lookahead).c_str(),
                pf2.windows, waits.c_str());
        }
        if (pf2.late != 0) {
            std::fprintf(stderr, "rocelab-fabric: internal error: %" PRIu64
                                 " frames crossed partitions after their arrival time (lookahead too long)\n",
                         pf2.late);
            rc = 1;
        }
        if (f.pools().exhausted) {
            std::fprintf(stderr, "rocelab-fabric: the mbuf pool ran low at its capacity (%" PRIu64
                                 " mbufs): frames may have been refused; raise --mbufs\n",
                         f.pools().capacity);
            rc = 1;
        }
    }
    return rc;
}
}  // namespace

// Over ranks, after the run (collective: every rank calls it): rank 0
// writes fabric.json from every rank's figures (byte for byte the one
// process's), speed.json with each rank's share, and the closing lines.
// Returns the exit status.
int ranked_outputs(const opts& o, vt::fabric& f, const topology_cfg& topo, nanos ran, double wall, double setup_s,
                   std::uint64_t memory_floor) {
#ifdef ROCELAB_WITH_MPI
    int rc = 0;
    std::vector<std::vector<std::byte>> figs;
    try {
        figs = g_rk.tr->gather(figs_bytes(collect_figs(f)));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rocelab-fabric: rank %u: gathering the figures: %s\n", g_rk.rank, e.what());
        return 1;
    }
    // Each rank's speed: packet-hops, partitions, windows, its threads'
    // busy time, and the rest of its wall time: the window's collectives
    // and exchange, waiting for the other ranks.
    const auto pf = f.partitions();
    struct rank_speed {
        std::uint64_t hops = 0, partitions = 0, busy_ns = 0, thread_wait_ns = 0, rank_wait_ns = 0, peak_rss = 0,
                      late = 0, wall_ns = 0;
    } me;
    static_assert(std::is_trivially_copyable_v<rank_speed>);
    me.hops = f.packet_hops();
    for (unsigned q = 0; q < pf.partitions; ++q) { me.partitions += (q % g_rk.ranks) == g_rk.rank ? 1 : 0; }
    for (const auto& t : pf.thread_times) {
        me.busy_ns += static_cast<std::uint64_t>(t.busy_ns);
        me.thread_wait_ns += static_cast<std::uint64_t>(t.wait_ns);
    }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    me.peak_rss = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
    me.late = pf.late;
    // The rest of the rank's wall time: waiting for the other ranks.
    const std::uint64_t busy0 = pf.thread_times.empty() ? 0 : static_cast<std::uint64_t>(pf.thread_times[0].busy_ns);
    const std::uint64_t wait0 = pf.thread_times.empty() ? 0 : static_cast<std::uint64_t>(pf.thread_times[0].wait_ns);
    me.wall_ns = static_cast<std::uint64_t>(wall * 1e9);
    me.rank_wait_ns = me.wall_ns > busy0 + wait0 ? me.wall_ns - busy0 - wait0 : 0;
    std::vector<std::byte> mine;
    put_pod(mine, me);
    std::vector<rank_speed> speeds;
    for (const auto& b : g_rk.tr->gather(mine)) {
        byte_reader in{b};
        speeds.push_back(in.pod<rank_speed>());
    }
    if (g_rk.rank != 0) { return 0; }
    fabric_figs x;
    try {
        x = combine_figs(f, figs);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rocelab-fabric: combining the ranks' figures: %s\n", e.what());
        return 1;
    }
    write_file(o.out + "/fabric.json", fabric_json(f, x, topo, ran));
    std::string s;
    json_writer j(s);
    j.begin_object();
    j.kv("fabric_time_ns", ran.v);
    j.kv("wall_s", wall);
    j.kv("packet_hops", x.hops);
    j.kv("packet_hops_per_wall_s", wall > 0 ? double(x.hops) / wall : 0.0);
    j.kv("node_polls", x.eng.node_polls);
    j.kv("slowdown", double(ran.v) > 0 ? wall / (double(ran.v) / 1e9) : 0.0);
    j.kv("setup_s", setup_s);
    j.kv("memory_floor_bytes", memory_floor);
    j.kv("ranks", g_rk.ranks);
    j.kv("threads_per_rank", o.threads);
    j.kv("partitions", pf.partitions);
    j.kv("lookahead_ns", pf.lookahead.v);
    j.kv("cut_cables", static_cast<std::uint64_t>(pf.cut_cables));
    j.kv("windows", pf.windows);
    std::string lines;
    std::uint64_t late = 0, peak = 0;  // the largest rank's peak RSS (each rank builds every node)
    for (const rank_speed& v : speeds) {
        late += v.late;
        peak = std::max(peak, v.peak_rss);
    }
    j.kv("peak_rss_bytes", peak);
    j.key("per_rank");
    j.begin_array();
    for (unsigned r = 0; r < speeds.size(); ++r) {
        const rank_speed& v = speeds[r];
        const double rw = double(v.wall_ns) / 1e9;
        j.begin_object();
        j.kv("rank", r);
        j.kv("packet_hops", v.hops);
        j.kv("packet_hops_per_wall_s", wall > 0 ? double(v.hops) / wall : 0.0);
        j.kv("partitions", v.partitions);
        j.kv("busy_s", double(v.busy_ns) / 1e9);
        j.kv("thread_wait_s", double(v.thread_wait_ns) / 1e9);
        j.kv("rank_wait_s", double(v.rank_wait_ns) / 1e9);
        j.kv("wall_s", rw);
        j.kv("rank_wait_share", rw > 0 ? double(v.rank_wait_ns) / 1e9 / rw : 0.0);
        j.kv("peak_rss_bytes", v.peak_rss);
        j.end_object();
        char b[200];
        std::snprintf(b, sizeof b, "%srank %u: %" PRIu64 " partition%s, %.2f M packet-hops/s, waiting for ranks %.0f %%",
                      lines.empty() ? "" : "; ", r, v.partitions, v.partitions == 1 ? "" : "s",
                      wall > 0 ? double(v.hops) / wall / 1e6 : 0.0, rw > 0 ? double(v.rank_wait_ns) / 1e9 / rw * 100 : 0.0);
        lines += b;
    }
    j.end_array();
    j.end_object();
    s += "\n";
    write_file(o.out + "/speed.json", s);
    std::printf("rocelab-fabric: ran %s of fabric time in %.3f s wall over %u ranks: %" PRIu64
                " packet-hops, %.2f M packet-hops per wall second, peak RSS %.0f MB per rank at most\n",
                format_time(ran).c_str(), wall, g_rk.ranks, x.hops, wall > 0 ? double(x.hops) / wall / 1e6 : 0.0,
                double(peak) / 1e6);
    std::printf("rocelab-fabric: %u partition%s, %zu cables cut, lookahead %s, %" PRIu64 " windows; %s\n",
                pf.partitions, pf.partitions == 1 ? "" : "s", pf.cut_cables,
                pf.cut_cables != 0 ? format_time(pf.lookahead).c_str() : "none (no cable cut)", pf.windows, lines.c_str());
    if (late != 0) {
        std::fprintf(stderr, "rocelab-fabric: internal error: %" PRIu64
                             " frames crossed partitions after their arrival time (lookahead too long)\n", late);
        rc = 1;
    }
    return rc;
#else
    (void)o, (void)f, (void)topo, (void)ran, (void)wall, (void)setup_s, (void)memory_floor;
    return 1;
#endif
}

// Over ranks, after the run (collective: every rank calls it): rank 0
// writes summary.json and fct.csv, byte for byte the one process's, with
// the same writer (write_summary) fed from every rank's answers:
// - the collectives: each rank sends the records (posts, completions) of
//   the flows whose requester it runs; rank 0 derives the figures from all
//   of them (gen_pipeline::collective_figures_of) and gives them to its
//   metrics;
// - every metric the summary and the expectations read: each rank answers
//   each one from what it runs; rank 0 takes a flow's metric from the rank
//   of the flow's requester (goodput and cnp_tx: its responder's), the
//   collectives' and the deadlocks' from its own (the watch ran on rank 0
//   over every rank's figures, live_figs), and sums the rest: each switch,
//   port and cable half is counted on one rank only and reads 0 elsewhere,
//   and the counts are whole numbers, so the sums are exact;
// - fct.csv: each flow's rows from its requester's rank, in flow order.
// `failed` is set on rank 0 (the expectations that failed), and `coll` (the
// collectives, per node; the split generators' reports read them too). Returns 1 when
// the answers could not be gathered or combined.
int ranked_summary(const opts& o, vt::fabric& f, vt::metrics& mx, const topology_cfg& topo, deadlock_watch* dl,
                   nanos ran, std::size_t& failed, vt::metrics::collective_figs& coll) {
#ifdef ROCELAB_WITH_MPI
    auto mine = [&f](std::size_t n, int p) { return runs_here(f, n, p); };
    auto gens = [&f](auto&& fn) {
        for (std::size_t n = 0; n < f.node_count(); ++n) {
            if (f.kind(n) != vt::node_kind::gen_node) { continue; }
            for (std::size_t i = 0; i < f.gen_at(n).flow_count(); ++i) { fn(n, i, f.gen_at(n).flow(i)); }
        }
    };
    // The collectives' records and fct.csv's rows of the flows whose requester runs here.
    std::vector<std::byte> recs, rows;
    std::string text;
    gens([&](std::size_t n, std::size_t i, const gen::flow_state& fl) {
        if (!mine(n, fl.src_port)) { return; }
        put_pod(rows, static_cast<std::uint64_t>(n));
        put_pod(rows, static_cast<std::uint64_t>(i));
        text.clear();
        runtime::append_fct_rows(text, fl);
        put_pods(rows, std::vector<char>(text.begin(), text.end()));
        if (!f.gen_at(n).ring()) { return; }
        const std::size_t k = std::min<std::size_t>({fl.coll_recs, fl.coll_post.size(), fl.coll_done.size()});
        put_pod(recs, static_cast<std::uint64_t>(n));
        put_pod(recs, static_cast<std::uint64_t>(i));
        put_pod(recs, static_cast<std::uint64_t>(fl.coll_recs));
        put_pod(recs, static_cast<std::uint64_t>(fl.rq.counters().messages_completed));
        put_pods(recs, std::vector<std::int64_t>(fl.coll_post.begin(), fl.coll_post.begin() + static_cast<std::ptrdiff_t>(k)));
        put_pods(recs, std::vector<std::int64_t>(fl.coll_done.begin(), fl.coll_done.begin() + static_cast<std::ptrdiff_t>(k)));
    });
    const auto recs_by_rank = g_rk.tr->gather(recs);
    const auto rows_by_rank = g_rk.tr->gather(rows);
    coll.assign(f.node_count(), {});
    struct unset {  // mx reads coll only here
        vt::metrics& m;
        ~unset() { m.set_collectives(nullptr); }
    } unset_coll{mx};
    std::vector<std::vector<std::string>> fct_rows(f.node_count());
    struct flow_recs {
        bool got = false;
        std::uint64_t recs = 0, completed = 0;
        std::vector<std::int64_t> post, done;
    };
    int rc = 0;
    if (g_rk.rank == 0) {
        try {
            std::vector<std::vector<flow_recs>> got(f.node_count());
            for (std::size_t n = 0; n < f.node_count(); ++n) {
                if (f.kind(n) == vt::node_kind::gen_node) {
                    got[n].resize(f.gen_at(n).flow_count());
                    fct_rows[n].resize(f.gen_at(n).flow_count());
                }
            }
            auto flow_at = [&](std::uint64_t n, std::uint64_t i) {
                if (n >= got.size() || i >= got[n].size()) { throw std::runtime_error("a rank named a flow this fabric does not have"); }
                return std::pair<std::size_t, std::size_t>{n, i};
            };
            for (const auto& b : rows_by_rank) {
                for (byte_reader in{b}; in.at < b.size();) {
                    const auto n0 = in.pod<std::uint64_t>();
                    const auto [n, i] = flow_at(n0, in.pod<std::uint64_t>());
                    const auto t = in.pods<char>();
                    fct_rows[n][i].assign(t.begin(), t.end());
                }
            }
            for (const auto& b : recs_by_rank) {
                for (byte_reader in{b}; in.at < b.size();) {
                    const auto n0 = in.pod<std::uint64_t>();
                    const auto [n, i] = flow_at(n0, in.pod<std::uint64_t>());
                    flow_recs& r = got[n][i];
                    r.got = true;
                    r.recs = in.pod<std::uint64_t>();
                    r.completed = in.pod<std::uint64_t>();
                    r.post = in.pods<std::int64_t>();
                    r.done = in.pods<std::int64_t>();
                    r.recs = std::min<std::uint64_t>({r.recs, r.post.size(), r.done.size()});
                }
            }
            for (std::size_t n = 0; n < f.node_count(); ++n) {
                if (f.kind(n) != vt::node_kind::gen_node || !f.gen_at(n).ring()) { continue; }
                std::vector<gen::gen_pipeline::coll_flow_records> r;
                for (const flow_recs& x : got[n]) {
                    if (!x.got) { throw std::runtime_error("no rank sent the collective records of a flow of " + f.node_name(n)); }
                    r.push_back({x.recs, x.completed, x.post.data(), x.done.data()});
                }
                coll[n] = gen::gen_pipeline::collective_figures_of(f.gen_config(n).ring_steps, r);
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rocelab-fabric: combining the ranks' flows: %s\n", e.what());
            rc = 1;
        }
        mx.set_collectives(&coll);
    }
    // Every metric summary.json and the expectations read, the same list on every rank.
    std::vector<expect_metric> q;
    for (const auto& e : topo.expect) {
        for (auto& m : metrics_of(e)) { q.push_back(std::move(m)); }
    }
    gens([&](std::size_t, std::size_t, const gen::flow_state& fl) {
        for (const char* m : k_summary_flow_metrics) { q.push_back({m, {fl.cfg.name}}); }
        q.push_back({"fct_samples", {fl.cfg.name}});
        q.push_back({"fct_samples_dropped", {fl.cfg.name}});
    });
    for (const char* m : k_summary_totals) { q.push_back({m, {}}); }
    if (f.has_credit_links()) {
        q.push_back({"credit_waits", {}});
        q.push_back({"credit_overruns", {}});
    }
    std::vector<std::byte> mine_answers;
    for (const auto& m : q) {
        std::string err;
        std::optional<double> v;
        if (m.name == "fct_samples" || m.name == "fct_samples_dropped") {
            const auto [n, i] = mx.flow(m.args[0]);
            const auto& fl = f.gen_at(n).flow(i);
            v = double(m.name == "fct_samples" ? fl.fct_ns.size() : fl.fct_dropped);
        } else {
            v = mx.value(m, err);
        }
        put_pod(mine_answers, static_cast<std::uint8_t>(v ? 1 : 0));
        put_pod(mine_answers, v.value_or(0.0));
        put_pods(mine_answers, std::vector<char>(err.begin(), err.end()));
    }
    const auto answers = g_rk.tr->gather(mine_answers);
    std::uint64_t hops = f.packet_hops();
    g_rk.tr->sum(&hops, 1);
    if (g_rk.rank != 0 || rc != 0) { return rc; }
    struct answer {
        std::optional<double> v;
        std::string err;
    };
    auto key = [](const expect_metric& m) {
        std::string k = m.name;
        for (const auto& a : m.args) { (k += '\x1f') += a; }
        return k;
    };
    std::unordered_map<std::string, answer> table;
    try {
        std::vector<std::vector<answer>> by_rank;
        for (const auto& b : answers) {
            auto& v = by_rank.emplace_back();
            byte_reader in{b};
            for (std::size_t i = 0; i < q.size(); ++i) {
                const auto has = in.pod<std::uint8_t>();
                const auto x = in.pod<double>();
                const auto e = in.pods<char>();
                v.push_back({has ? std::optional<double>(x) : std::nullopt, std::string(e.begin(), e.end())});
            }
            if (in.at != b.size()) { throw std::runtime_error("a rank answered more metrics than were asked"); }
        }
        static const std::set<std::string> rank0 = {"deadlocks", "deadlocked", "deadlock_max", "collectives",
                                                     "collective_mean", "algbw", "busbw"};
        for (std::size_t i = 0; i < q.size(); ++i) {
            const expect_metric& m = q[i];
            int owner = -1;  // -1: the sum over the ranks
            if (rank0.count(m.name) != 0) {
                owner = 0;
            } else if ((vt::metrics::of_flow(m.name) || m.name == "fct_samples" || m.name == "fct_samples_dropped") &&
                       m.args.size() == 1) {
                const auto [n, fi] = mx.flow(m.args[0]);
                if (n != SIZE_MAX) {
                    const auto& fl = f.gen_at(n).flow(fi);
                    const bool responder = m.name == "goodput" || m.name == "cnp_tx";
                    owner = static_cast<int>(f.port_rank(n, responder ? fl.dst_port : fl.src_port));
                }
            }
            answer a;
            if (owner >= 0) {
                a = by_rank[static_cast<std::size_t>(owner)][i];
            } else {
                a.v = 0.0;
                for (const auto& r : by_rank) {
                    if (!r[i].v) {
                        a = r[i];
                        break;
                    }
                    *a.v += *r[i].v;
                }
            }
            table[key(m)] = std::move(a);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rocelab-fabric: combining the ranks' metrics: %s\n", e.what());
        return 1;
    }
    summary_source src;
    src.value = [&](const expect_metric& m, std::string& err) -> std::optional<double> {
        const auto it = table.find(key(m));
        if (it == table.end()) {
            err = m.name + ": not gathered from the ranks";
            return std::nullopt;
        }
        err = it->second.err;
        return it->second.v;
    };
    src.collectives = [&](std::size_t n) { return coll[n]; };
    src.fct_counts = [&](std::size_t n, std::size_t i) {
        std::string err;
        const std::string& fn = f.gen_at(n).flow(i).cfg.name;
        return std::pair<std::uint64_t, std::uint64_t>{
            static_cast<std::uint64_t>(src.value({"fct_samples", {fn}}, err).value_or(0.0)),
            static_cast<std::uint64_t>(src.value({"fct_samples_dropped", {fn}}, err).value_or(0.0))};
    };
    src.fct_rows = [&](std::FILE* out) {
        for (const auto& node : fct_rows) {
            for (const std::string& r : node) {
                if (std::fwrite(r.data(), 1, r.size(), out) != r.size()) { return false; }
            }
        }
        return true;
    };
    src.packet_hops = hops;
    failed = write_summary(o, f, src, topo, *dl, 1.0, ran, 0, nanos{0});
    return 0;
#else
    (void)o, (void)f, (void)mx, (void)topo, (void)dl, (void)ran, (void)failed;
    return 1;
#endif
}

// Over ranks: SIGINT and SIGTERM end this rank at once, with one line
// (mpirun sends SIGTERM to every rank when one of them fails or the job is
// interrupted; a rank waiting in a window's collective would never see a
// stop flag). SIGUSR1 (mpirun passes it on to every rank) stops the run at
// the next sample step, all ranks together, with the reports written.
char g_rank_line[160];
std::atomic<bool> g_in_run{false};  // the ranks are in the run's windows
void rank_signals() {
    std::snprintf(g_rank_line, sizeof g_rank_line,
                  "rocelab-fabric: rank %u of %u: ended by a signal (mpirun ends every rank when one fails or the job "
                  "is stopped); this run wrote no reports\n",
                  g_rk.rank, g_rk.ranks);
    auto end = +[](int sig) {
        if (g_in_run.load()) {  // before and after the run mpirun's own lines say it
            const ssize_t w = ::write(2, g_rank_line, std::strlen(g_rank_line));
            (void)w;
        }
        ::_exit(128 + sig);
    };
    std::signal(SIGINT, end);
    std::signal(SIGTERM, end);
    std::signal(SIGUSR1, +[](int) { g_rank_stop.store(true); });
}

// Over ranks: the CPU for this rank's main lcore. mpirun binds a rank to
// its own core(s) by default: the first CPU it may use; unbound ranks
// (--bind-to none) share the CPUs round-robin, rank r x threads on.
unsigned rank_cpu(unsigned threads) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<unsigned> cpus;
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
        for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &set)) { cpus.push_back(c); }
        }
    }
    if (cpus.empty()) { return 0; }
    return cpus[(g_rk.rank * threads) % cpus.size()];
}

// Over ranks with EAL options of the user's, every rank gets a file prefix
// of its own (DPDK allows one primary process per prefix, and mpirun gives
// every rank the same options): PREFIX-rankN for --file-prefix PREFIX, else
// rocelab-fabric-<pid>, as without options.
void rank_file_prefix(std::vector<std::string>& args) {
    const std::string suffix = "-rank" + std::to_string(g_rk.rank);
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--file-prefix" && i + 1 < args.size()) {
            args[i + 1] += suffix;
            return;
        }
        if (args[i].rfind("--file-prefix=", 0) == 0) {
            args[i] += suffix;
            return;
        }
    }
    args.push_back("--file-prefix=rocelab-fabric-" + std::to_string(::getpid()));
}

#ifdef ROCELAB_WITH_MPI
// Over ranks: the worst exit status of all ranks (a collective: every rank calls it).
int worst_over_ranks(int rc) {
    std::uint64_t worst = static_cast<std::uint64_t>(rc);
    g_rk.tr->max(&worst, 1);
    return static_cast<int>(worst);
}
#endif

// Over ranks, a start-up step that can fail on one rank only: every rank
// learns whether any failed. If one did, the failing ones say why (naming
// their rank) and every rank leaves; rank 0 with status 2 (mpirun's exit
// status). One process: nothing to agree on.
void agree_or_exit(const std::string* err) {
#ifdef ROCELAB_WITH_MPI
    if (!g_rk.on()) { return; }
    std::uint64_t failed = err != nullptr ? 1 : 0;
    g_rk.tr->max(&failed, 1);
    if (failed == 0) { return; }
    if (err != nullptr) { std::fprintf(stderr, "rocelab-fabric: rank %u: %s\n", g_rk.rank, err->c_str()); }
    g_rk.tr.reset();
    MPI_Finalize();
    std::exit(g_rk.rank == 0 ? 2 : 0);
#else
    (void)err;
#endif
}

int main(int argc, char** argv) {
    const auto t_start = std::chrono::steady_clock::now();
    // Started by mpirun with several ranks: every rank runs its share of the
    // fabric (docs/fabric.md "Over MPI ranks").
    if (const unsigned lr = launched_ranks(); lr > 1) {
#ifdef ROCELAB_WITH_MPI
        // Open MPI's shared-memory transport copies messages above its eager
        // limit with one process_vm_readv per message (CMA); the window's
        // exchange sends one such message per rank per window, and in a VM
        // the system call cost the seed cluster 10-15 % of its wall time
        // over 2 ranks (docs/benchmarks.md, sixth session). Copy through the
        // shared segment instead, unless the user chose (mpirun --mca ...).
        ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
        MPI_Init(&argc, &argv);
        g_rk.tr = std::make_unique<sim::mpi_transport>();
        g_rk.rank = g_rk.tr->rank();
        g_rk.ranks = g_rk.tr->ranks();
        if (g_rk.rank != 0) {  // one voice: rank 0 prints; the others' errors still reach stderr
            if (std::freopen("/dev/null", "w", stdout) == nullptr) { return 1; }
        }
#else
        runtime::die("rocelab-fabric", 2,
                     "started by mpirun with " + std::to_string(lr) +
                         " ranks, but this rocelab-fabric was built without MPI: install libopenmpi-dev and rebuild "
                         "(meson setup -Dmpi=enabled)");
#endif
    }
    // EAL options, if any, come before "--"; ours after it (or all of argv).
    int eal_n = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            eal_n = i;
            break;
        }
    }
    opts o = parse(argc - (eal_n ? eal_n + 1 : 1), argv + (eal_n ? eal_n + 1 : 1));
    if (g_rk.on()) {
        if (o.realtime) { die(2, "--real-time: one process only (over MPI ranks the fabric runs in virtual time)"); }
        if (!o.partition.empty() && !o.threads_given) {  // the file's partitions over the ranks, one thread each
            unsigned np = 0;
            for (const auto& e : o.parts) { np = std::max(np, e.part + 1); }
            o.threads = std::max(1u, (np + g_rk.ranks - 1) / g_rk.ranks);
        }
    }

    auto topo_r = load_topology(o.topology);
    if (!topo_r) { die(2, topo_r.error().message); }
    topology_cfg topo = std::move(*topo_r);
    nanos duration = o.duration.value_or(topo.duration);
    // Real time: rates x k, times / k (fabric/rt_scale.hpp).
    const double k = o.realtime ? rt_factor(topo, o.rt_rate) : 1.0;
    std::vector<bits_per_sec> node_line(topo.nodes.size(), bits_per_sec{0});  // unscaled, per generator
    for (const auto& l : topo.links) {
        for (std::size_t n : {l.a, l.b}) { node_line[n] = std::max(node_line[n], l.cable.rate); }
    }
    if (o.realtime && o.cmd == "run") {
        const nanos scenario_duration = duration;
        if (const std::string e = rt_scale_topology(topo, k); !e.empty()) {
            die(2, topo.source + ": " + e);
        }
        duration = rt_scale_time(duration, k);
        if (k != 1.0) {
            std::printf("rocelab-fabric: real time, slowed down %.4gx: every rate x %.4g (the fastest cable, %s, runs "
                        "at %s), every time x %.4g (%s of scenario time takes %s); bytes unchanged; expectations "
                        "judged on the scenario's scale\n",
                        1.0 / k, k, format_rate(bits_per_sec{static_cast<std::uint64_t>(o.rt_rate.v / k + 0.5)}).c_str(),
                        format_rate(o.rt_rate).c_str(), 1.0 / k, format_time(scenario_duration).c_str(),
                        format_time(duration).c_str());
        } else {
            std::printf("rocelab-fabric: real time at the scenario's own rates (none above %s)\n",
                        format_rate(o.rt_rate).c_str());
        }
    }
    if (o.cmd == "check") {
        std::printf("%s: valid (%zu nodes, %zu cables, %s of fabric time)\n", topo.source.c_str(), topo.nodes.size(),
                    topo.links.size(), format_time(duration).c_str());
        return 0;
    }

    // The fabric is described first (pure: no DPDK), so its memory can be
    // planned before EAL starts (docs/fabric.md, "Memory").
    auto fab = std::make_unique<vt::fabric>();
    vt::fabric& f = *fab;
    for (const auto& n : topo.nodes) {
        if (n.kind == topo_node::kind_t::switch_node) {
            f.add_switch(n.name, n.sw);
        } else {
            std::function<void(gen_cfg&)> adjust;
            if (k != 1.0) {
                const bits_per_sec line = n.gen.rate.v != 0 ? n.gen.rate : node_line[&n - topo.nodes.data()];
                adjust = [k, line](gen_cfg& c) { rt_scale_gen(c, k, line); };
            }
            f.add_gen(n.name, n.gen, {}, std::move(adjust));
        }
    }
    for (const auto& l : topo.links) {
        f.connect(l.a, l.pa, l.b, l.pb,
                  vt::cable_cfg{.rate = l.cable.rate, .prop_delay = l.cable.delay, .loss = l.cable.loss,
                                .loss_seed = l.cable.loss_seed, .tx_ring_size = l.cable.tx_ring_size,
                                .rx_ring_size = l.cable.rx_ring_size, .credit = l.cable.credit,
                                .credit_bytes = l.cable.credit_bytes});
    }
    const auto plan_r = f.plan_memory();
    if (auto* e = std::get_if<std::string>(&plan_r)) { die(2, topo.source + ": " + *e); }
    const vt::memory_plan& plan = std::get<vt::memory_plan>(plan_r);
    if (o.mbufs != 0 && o.mbufs < plan.mbufs) {
        std::string why;
        for (const auto& t : plan.terms) { why += (why.empty() ? "" : "; ") + t.what + ": " + std::to_string(t.mbufs); }
        die(2, "--mbufs " + std::to_string(o.mbufs) + " cannot back " + topo.source + ": it needs at least " +
                   std::to_string(plan.mbufs) + " mbufs (" + why + ")");
    }
    const std::uint64_t mbufs = std::max<std::uint64_t>(o.mbufs, plan.mbufs);
    // A scenario this machine cannot hold: one line, before EAL starts
    // (building it would take minutes and end in the kernel's OOM killer).
    if (const std::uint64_t avail = available_memory(); avail != 0 && plan.resident_floor > avail) {
        die(2, topo.source + ": too large for memory: it needs at least " +
                   format_bytes_approx(bytes{plan.resident_floor}) + " resident (" + plan.resident_what +
                   "), and this machine has " + format_bytes_approx(bytes{avail}) +
                   " available (MemAvailable + SwapFree); nothing was started");
    }
    std::vector<std::string> eal_args;
    if (eal_n > 0) {
        for (int i = 0; i < eal_n; ++i) { eal_args.emplace_back(argv[i]); }
        if (g_rk.on()) { rank_file_prefix(eal_args); }
    } else {
        // EAL memory holds rings and LPM tables: the mbufs live outside it,
        // in pools that grow with what is in use (plan_memory).
        eal_args = {argv[0], "--no-huge", "-m", std::to_string(plan.eal_mb + (o.realtime ? 64 : 0)), "--no-pci", "-l", "0",
                    "--file-prefix=rocelab-fabric-" + std::to_string(::getpid()), "--no-telemetry",
                    "--log-level=lib.eal:error"};
        if (g_rk.on()) {  // each rank's main lcore on a CPU of its own (rank_cpu)
            eal_args[5] = "--lcores";
            eal_args[6] = "0@" + std::to_string(rank_cpu(o.threads));
        }
    }
    std::vector<char*> eal_argv;
    for (auto& a : eal_args) { eal_argv.push_back(a.data()); }
    auto eal = dpdk::eal_init(static_cast<int>(eal_argv.size()), eal_argv.data());
    // EAL can fail on one rank only (its file prefix in use, its memory):
    // the ranks agree first, so that none runs on waiting for a peer that left.
    agree_or_exit(std::get_if<std::string>(&eal));
    if (auto* e = std::get_if<std::string>(&eal)) { die(2, *e); }
    if (g_rk.on()) {
        rank_signals();
    } else {
        runtime::install_stop_signals();
    }

    int rc = 0;
    bool wrote_summary = false;
    bool node_reports = false;  // the run happened: each node's own report is written
    vt::metrics::collective_figs coll;  // over ranks, rank 0: the collectives gathered (ranked_summary)
    {
        if (o.realtime) { f.use_ethdevs("rtf"); }  // every cabled port a net_ring ethdev
        f.set_threads(o.threads);  // with --partition: its partitions on this many threads (parse())
        if (!o.partition.empty()) { f.set_partition(o.parts, "--partition " + o.partition); }
#ifdef ROCELAB_WITH_MPI
        if (g_rk.on()) { f.set_ranks(*g_rk.tr); }
#endif
        // Over ranks every rank meets the same set-up error: rank 0 says it.
        if (const std::string e = f.build(mbufs); !e.empty()) {
            if (g_rk.rank == 0) { std::fprintf(stderr, "rocelab-fabric: %s: %s\n", topo.source.c_str(), e.c_str()); }
            rc = 2;
        }
        // Expectations name flows, hosts and ports: check them before anything runs.
        vt::metrics mx(f, topo);
        for (std::size_t i = 0; rc == 0 && i < topo.expect.size(); ++i) {
            for (const auto& m : metrics_of(topo.expect[i])) {
                if (const std::string e = mx.validate(m); !e.empty()) {
                    if (g_rk.rank == 0) {
                        std::fprintf(stderr, "rocelab-fabric: %s: expect[%zu] '%s': %s\n", topo.source.c_str(), i,
                                     topo.expect[i].text.c_str(), e.c_str());
                    }
                    rc = 2;
                    break;
                }
            }
        }
        std::error_code ec;
        if (rc == 0) {
            std::filesystem::create_directories(o.out, ec);
            if (ec) {
                std::fprintf(stderr, "rocelab-fabric: %s: %s\n", o.out.c_str(), ec.message().c_str());
                rc = 1;
            }
        }
        if (rc == 0 && o.pcap) {
            if (const std::string e = f.capture_to(o.out, o.snaplen); !e.empty()) {
                std::fprintf(stderr, "rocelab-fabric: %s\n", e.c_str());
                rc = 1;
            }
        }
#ifdef ROCELAB_WITH_MPI
        // The steps above can fail on one rank only (its output folder or
        // its captures, on another machine): the run starts on every rank
        // or on none, so that no rank waits for a peer that left.
        if (g_rk.on()) { rc = worst_over_ranks(rc); }
#endif
        if (rc == 0) {
            std::printf("rocelab-fabric: %s (%s): %zu nodes, %zu cables, %s of %s%s\n", topo.name.c_str(),
                        topo.source.c_str(), topo.nodes.size(), topo.links.size(), format_time(duration).c_str(),
                        o.realtime ? "real time" : "fabric time",
                        topo.expect.empty() ? "" : (", " + std::to_string(topo.expect.size()) + " expectations").c_str());
            if (!topo.description.empty()) { std::printf("  %s\n", topo.description.c_str()); }
            std::fflush(stdout);
            // The time series and the deadlock watch; over ranks rank 0's,
            // from every rank's figures at each sample step (fabric_hooks).
            live_figs lv(f);
            std::optional<series> ts;
            std::optional<deadlock_watch> dl;
            if (g_rk.rank == 0) {
                ts.emplace(o.out, f);
                dl.emplace(f, topo);
                mx.set_deadlocks(&dl->detector());
            }
            using clk = std::chrono::steady_clock;
            const auto t0 = clk::now();
            const double setup_s = std::chrono::duration<double>(t0 - t_start).count();
            const nanos step = topo.sample_interval.v > 0 ? topo.sample_interval
                                                          : nanos{std::max<std::int64_t>(1000, duration.v / 200)};
            // The shared control loop (runtime/control_loop.hpp) with the
            // fabric's clock as its strategy: virtual time runs the engine
            // step by step, real time polls every pipeline in rounds.
            fabric_hooks hooks{f, &lv, ts ? &*ts : nullptr, dl ? &*dl : nullptr, o.realtime, o.quiet, duration, step};
            hooks.ranked = g_rk.on();
            hooks.sample(nanos{0});  // the first sample, at 0
            g_rk.setting_up = false;
            g_in_run.store(true);
            std::optional<rt_fabric_clock> rtc;
            nanos rt_frozen{0};
            std::uint64_t rt_stalls = 0;
            if (o.realtime) {
                rtc.emplace(f, duration, rt_stall_of(topo), t0);
                runtime::run_control(*rtc, hooks, duration, nanos{1'000'000'000});
                rt_frozen = rtc->frozen;
                rt_stalls = rtc->stalls;
            } else {
                vt_fabric_clock vc{f, duration, step, t0};
                runtime::run_control(vc, hooks, duration, nanos{1'000'000'000});
            }
            g_in_run.store(false);
            const double wall = std::chrono::duration<double>(clk::now() - t0).count();
            const nanos ran = f.now();
            node_reports = true;
            std::size_t failed = 0;
            if (g_rk.on()) {
                // Gathered on rank 0: fabric.json and speed.json (ranked_outputs),
                // summary.json and fct.csv (ranked_summary).
                rc = ranked_outputs(o, f, topo, ran, wall, setup_s, plan.resident_floor);
                if (ranked_summary(o, f, mx, topo, dl ? &*dl : nullptr, ran, failed, coll) != 0) { rc = 1; }
                wrote_summary = g_rk.rank == 0;
            } else {
                write_file(o.out + "/fabric.json", fabric_json(f, collect_figs(f), topo, ran));
                write_file(o.out + "/speed.json", speed_json(f, ran, wall, setup_s, o.threads, plan.resident_floor));
                if (print_ran(o, f, topo, k, ran, wall, rt_stalls, rt_frozen) != 0) { rc = 1; }
                failed = write_summary(o, f, summary_of(f, mx, k), topo, *dl, k, ran, rt_stalls, rt_frozen);
                wrote_summary = true;
            }
            if (wrote_summary) {
                if (!topo.expect.empty()) {
                    std::printf("rocelab-fabric: %s: %zu of %zu expectations passed%s\n", topo.name.c_str(),
                                topo.expect.size() - failed, topo.expect.size(), failed ? " - FAILED" : "");
                }
                std::printf("rocelab-fabric: reports in %s/\n", o.out.c_str());
                if (failed != 0) { rc = 3; }
                if ((runtime::stop_requested().load() || hooks.stop_agreed) && ran < duration) {
                    std::printf("rocelab-fabric: stopped at %s of fabric time (%s)\n", format_time(ran).c_str(),
                                g_rk.on() ? "SIGUSR1" : "signal");
                }
            }
        }
        if (release_and_report(f, o, mbufs, node_reports, coll) != 0) { rc = 1; }
    }
    const std::uint64_t in_use = f.pools().in_use;
    if (in_use != 0) {
        std::fprintf(stderr, "rocelab-fabric: %" PRIu64 " mbufs still in use after the run (a leak)\n", in_use);
        rc = rc == 0 ? 1 : rc;
    }
    dpdk::eal_exiting();  // the L3 switches' LPM tables go with EAL's memory (eal.hpp)
    fab.reset();          // pipelines, links, then the pools
    dpdk::eal_cleanup();
    if (wrote_summary && o.plots) { summary_page(o.out); }  // the time series are closed by now
#ifdef ROCELAB_WITH_MPI
    if (g_rk.on()) {  // rank 0 exits with the worst status of all (see die())
        const int worst = worst_over_ranks(rc);
        g_rk.tr.reset();
        MPI_Finalize();
        return g_rk.rank == 0 ? worst : 0;
    }
#endif
    return rc;
}
