// fabric.hpp - switch and generator pipelines joined by modelled links,
// run in deterministic virtual time (lib/sim).
//
// What: the very pipeline classes the apps run on DPDK ports in real time
// (sw::switch_pipeline, gen::gen_pipeline), each a node of a sim::engine.
// Their ports' I/O (dpdk/port_io.hpp) goes to simulated ports instead of
// ethdev queues: RX hands out the frames that have arrived by `now`, TX is a
// bounded descriptor ring that a modelled link drains at line rate (24 B of
// preamble, IFG and FCS per frame, as the shaper counts), then propagation
// delay, optional seeded i.i.d. loss, and the peer's RX ring (sim/link.hpp).
// All nodes share one mbuf pool; frames travel as the same rte_mbuf*.
//
// Time: the engine owns `now`. A node is polled when a frame arrives for it
// or at the deadline it returned: after poll(now) the adapter asks the
// pipeline for next_deadline(now), and adds its ports' own: `now` while
// frames wait in an RX ring, the TX ring's next free slot for a port whose
// TX refused frames. Nothing reads the TSC or the wall clock, so the same
// fabric and seeds give the same run, byte for byte.
//
// A node whose poll moved nothing yet asked to run again at once would spin
// at one instant; the adapter then moves its deadline 1 ns on and counts it
// (spins(), expected 0: a non-zero count is a pipeline deadline bug).
//
// Captures: capture_to(dir) writes, per node port, <node>-<port>-tx.pcap
// (each frame when its last bit left, including frames the link then lost)
// and <node>-<port>-rx.pcap (when its last bit arrived, delivered frames
// only), nanosecond pcap with fabric-time timestamps (t = 0 at the start).
// They are taken on the wire by the links, not by the pipelines.
//
// Use (control path; set-up errors are returned as one line):
//   vt::fabric f;
//   auto sw = f.add_switch("leaf0", sw_cfg);
//   auto g  = f.add_gen("hosts", gen_cfg);
//   f.connect(g, 0, sw, 0, {.rate = 100_Gbps, .prop_delay = 1_us});
//   if (auto e = f.build(pool); !e.empty()) ...
//   f.capture_to("out");
//   f.run_until(10_ms);
//   f.release_all();   // every mbuf back to the pool
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "config/gen_config.hpp"
#include "config/switch_cfg.hpp"
#include "core/units.hpp"
#include "gen/gen_pipeline.hpp"
#include "qos/credit.hpp"
#include "sim/engine.hpp"
#include "sim/parallel.hpp"
#include "switch/switch_pipeline.hpp"
#include "vt/node.hpp"

struct rte_mbuf;
struct rte_mempool;

namespace rocelab::dpdk {
class growing_pool;
}

namespace rocelab::vt {

// One cable: both directions get the same parameters (each its own loss stream).
struct cable_cfg {
    bits_per_sec rate{0};
    nanos prop_delay{0};
    double loss = 0.0;                  // per direction, i.i.d.
    std::uint64_t loss_seed = 1;        // a->b uses it, b->a uses it + 1
    std::uint32_t tx_ring_size = 256;   // like port_params / ROCELAB tx_ring_size
    std::uint32_t rx_ring_size = 1024;
    // Credit mode (qos/credit.hpp, docs/fabric.md "Credit flow control"):
    // the cable runs InfiniBand-style link-level credits instead of PFC. A
    // switch end gives credits for its lossless classes (credit_bytes each,
    // 0 = the class's PG reserved + headroom bytes) and sends no PFC; an end
    // whose peer is a switch sends only with credits. Hosts give none (they
    // take every frame as it comes).
    bool credit = false;
    std::uint64_t credit_bytes = 0;
};

struct wire_tap;  // per link: the pcap writers (fabric.cpp)

// How a link sees an mbuf: pkt_len, rte_pktmbuf_free on a drop, and the
// capture hook.
//
// Over ranks (sim/parallel.hpp, "Over ranks"), a frame crosses as its
// bytes: serialize() appends the frame's pkt_len bytes and frees the mbuf
// (the link's outbox forgets it); deserialize() takes an mbuf from `pool`,
// the receiving rank's, and copies them in. Nothing else of an mbuf travels
// between nodes (the pipelines read frames, not mbuf fields). deserialize
// throws std::runtime_error, between windows, when there is no pool, the
// pool is exhausted or the frame exceeds its data room.
struct mbuf_traits {
    wire_tap* tap = nullptr;
    rte_mempool* pool = nullptr;
    std::uint32_t length(rte_mbuf* const& m) const noexcept;
    void drop(rte_mbuf*& m) const noexcept;
    void on_wire(rte_mbuf* const& m, std::int64_t depart, std::int64_t arrive, sim::wire_fate f) const noexcept;
    void on_credit() const noexcept;
    void serialize(rte_mbuf* const& m, std::vector<std::byte>& out) const;
    rte_mbuf* deserialize(const std::byte* p, std::size_t n) const;
};

using mbuf_engine = sim::engine<rte_mbuf*, mbuf_traits>;
using mbuf_parallel = sim::parallel_engine<rte_mbuf*, mbuf_traits>;

// The mbufs a fabric needs, sized from its description (docs/fabric.md,
// "Memory"): every frame the switches' buffers can admit (their pools in
// minimum-size charges), what the cables' rings and wires can hold, and the
// generators' own working sets. Pure arithmetic over the configuration.
struct memory_plan {
    struct term {
        std::string what;          // "leaf0 BUFFER_POOL 12MiB / 96 B", "cables", ...
        std::uint64_t mbufs = 0;
    };
    std::vector<term> terms;
    std::uint64_t mbufs = 0;          // the common pool's capacity: the terms summed
    std::uint16_t data_room = 0;      // bytes per mbuf, headroom included: the largest frame
    std::vector<std::uint32_t> prefilled_pmtus;  // one shared prefilled pool per pmtu
    std::uint64_t eal_mb = 0;         // EAL memory for rings and LPM tables (mbufs live outside it)
    // A floor of the resident memory the fabric takes before it carries a
    // frame (docs/fabric.md "Memory"): below what every measured scenario
    // took, so a scenario it does not fit in cannot run here.
    std::uint64_t resident_floor = 0;
    std::string resident_what;        // its terms, for the refusal's line
};

struct node_stats {
    std::uint64_t polls = 0;
    std::uint64_t spins = 0;  // deadline moved on by 1 ns (see above); 0 expected
};

class fabric {
public:
    fabric();
    ~fabric();
    fabric(const fabric&) = delete;
    fabric& operator=(const fabric&) = delete;

    // ---- description (before build) ----
    // A switch: its ports are cfg.ports, in order. A port without a speed
    // takes its cable's rate (as a NIC's driver speed).
    std::size_t add_switch(const std::string& name, const switch_cfg& cfg);
    // A generator: its ports are 0..N-1, N = the highest port any cable
    // names + 1 (at least 1). The line rate is cfg.rate, else the cable's.
    // `adjust`, if given, is applied to the configuration after its
    // expansion (hosts and flows exist), before the pipeline is created
    // (rocelab-fabric --real-time scales the flows with it).
    std::size_t add_gen(const std::string& name, const gen_cfg& cfg, gen::gen_tx_opts opts = {},
                        std::function<void(gen_cfg&)> adjust = {});
    // A cable between (node a, port pa) and (node b, port pb). A port takes
    // one cable. Errors are reported by build().
    void connect(std::size_t a, int pa, std::size_t b, int pb, const cable_cfg& c);

    // Several threads (call before build; virtual time only). The fabric is
    // cut into `threads` partitions (sim/parallel.hpp): each switch with
    // the generator hosts cabled to it is one unit (a host's cable is never
    // cut); units go, heaviest first (by ports), to the lightest partition.
    // The lookahead is the smallest delay plus minimum-frame wire time of
    // the cables cut. build() refuses more threads than units. Reports and
    // captures are the same, byte for byte, for every thread count.
    void set_threads(unsigned threads) noexcept;
    // The partitions given instead of computed (rocelab-fabric --partition):
    // each switch's partition, 0..P-1 (`where` names the entry for errors,
    // "file:line"). Hosts go with the switch they are cabled to. build()
    // refuses, in one line, a name that is not a switch of the fabric, a
    // switch left out, two switches joined by hosts' cables in different
    // partitions, and a partition with no switch. The run then has P
    // partitions on min(P, threads) threads.
    struct partition_entry {
        std::string node;
        unsigned part = 0;
        std::string where;
    };
    void set_partition(std::vector<partition_entry> entries, std::string source);
    // Over ranks (rocelab-fabric under mpirun; call before build; virtual
    // time only): this process is rank t.rank() of t.ranks(), and every
    // rank describes and builds the same fabric. The partitions (computed:
    // threads x ranks, at most one per unit; or --partition's) go to the
    // ranks round-robin: partition p runs on rank p mod R, on that rank's
    // threads. Every rank builds every node, and runs only its partitions'
    // units; run_until() is then collective (sim/parallel.hpp, "Over
    // ranks"). A cable between ranks with no delay is refused by build(),
    // in one line. Captures: each rank writes the files of the links it
    // delivers (every file has one writer). `t` must outlive the fabric.
    void set_ranks(sim::sync_transport& t) noexcept;
    // After build: this process's rank and the rank count (1, 0 without
    // ranks), the rank that runs (node n, port p) (a switch: all its ports
    // on one rank; a generator: each host's), and whether every unit of
    // node n runs here.
    unsigned rank() const noexcept;
    unsigned ranks() const noexcept;
    unsigned port_rank(std::size_t n, int port) const noexcept;
    bool node_local(std::size_t n) const noexcept;
    // After build: the partitions, the lookahead, the cables cut, and the
    // synchronisation windows run so far.
    struct partition_figures {
        unsigned partitions = 1;
        nanos lookahead{0};
        std::size_t cut_cables = 0;
        std::uint64_t windows = 0;
        std::uint64_t late = 0;  // frames that crossed too late (must be 0)
        std::vector<unsigned> node_partition;  // per node (a generator: its first host's)
        // Per thread (0: the caller's), over the run so far: wall time
        // running its partitions and waiting at the window barrier
        // (sim/parallel.hpp, "Where the threads' wall time goes").
        std::vector<sim::thread_time> thread_times;
    };
    partition_figures partitions() const;

    // Real time over ethdevs (call before build): every cabled port becomes
    // a net_ring ethdev (rte_eth_from_rings, opened with dpdk::port_open as
    // the apps open theirs), and the pipelines use rte_eth_rx_burst /
    // rte_eth_tx_burst on it. Each poll_realtime() round moves what the
    // cable delivered into the port's RX ring (as much as fits: the rest
    // waits in the cable's RX ring, which overflows and counts as before)
    // and what the pipeline sent from its TX ring onto the cable (as much as
    // the cable's TX ring takes). The ethdev rings are small (RX 64, TX 32
    // frames) so the cable's rings stay the ones that count. `tag` makes
    // the ring and device names unique.
    void use_ethdevs(const std::string& tag);

    // The memory the description needs (before EAL starts: pure). Also
    // checks ports and cables, and expands the generators' configurations.
    std::variant<memory_plan, std::string> plan_memory();

    // Checks the description and creates pipelines, nodes and links. One
    // error line (naming the node, port or cable) or "".
    //   build(pool): every node on the caller's pool (and each generator's
    //                own prefilled pool).
    //   build(mbufs): pools sized by plan_memory() (mbufs: the common pool's
    //                capacity, at least the plan's), growing with what is in
    //                use (dpdk/growing_pool.hpp): the memory follows the frames
    //                held, not the capacity. Generators of one pmtu share one
    //                prefilled pool.
    std::string build(rte_mempool* pool);
    std::string build(std::uint64_t mbufs);
    // build(mbufs): the pools' figures.
    struct pool_figures {
        std::uint64_t capacity = 0;    // mbufs, all pools
        std::uint64_t populated = 0;   // mbufs that were ever needed (memory touched)
        std::uint64_t bytes = 0;       // their memory
        std::uint64_t in_use = 0;      // mbufs in use now
        bool exhausted = false;        // a pool ran low at its capacity
    };
    pool_figures pools() const noexcept;

    // Wire captures (see above); call after build(), before running.
    std::string capture_to(const std::string& dir, std::uint32_t snaplen = 256);

    // ---- run ----
    // Virtual time: runs every event up to `end`.
    void run_until(nanos end) noexcept;
    // Real time: one round at `now` (a wall clock's reading, monotonic):
    // the links deliver what has arrived by now, then every pipeline is
    // polled, as on lcores. A fabric runs one way or the other, not both.
    // The cables keep their model (line rate, delay, loss, ring sizes);
    // the pipelines see real time, with its jitter and stalls.
    void poll_realtime(nanos now) noexcept;
    nanos now() const noexcept;

    // Teardown: frees every mbuf held by links and pipelines, flushes and
    // closes captures. Idempotent; the destructor calls it.
    void release_all() noexcept;

    // ---- inspection ----
    std::size_t node_count() const noexcept;
    const std::string& node_name(std::size_t n) const noexcept;
    node_kind kind(std::size_t n) const noexcept;
    // After build: the node (node.hpp), its pipeline behind the one
    // interface; node_at(n).visit(v) gives it typed.
    node& node_at(std::size_t n) noexcept;
    sw::switch_pipeline& switch_at(std::size_t n) noexcept;  // kind == switch_node
    gen::gen_pipeline& gen_at(std::size_t n) noexcept;       // kind == gen_node
    const switch_cfg& switch_config(std::size_t n) const noexcept;
    const gen_cfg& gen_config(std::size_t n) const noexcept;  // as expanded
    node_stats stats(std::size_t n) const noexcept;
    std::size_t port_count(std::size_t n) const noexcept;
    std::string port_name(std::size_t n, int port) const;
    // The link leaving (node, port), or nullptr when the port has no cable.
    const mbuf_engine::link_type* tx_link(std::size_t n, int port) const noexcept;
    // The link arriving at (node, port), or nullptr.
    const mbuf_engine::link_type* rx_link(std::size_t n, int port) const noexcept;
    // Credit mode: the credits (node, port) sends with (its peer gives
    // credits), and those it gives (a switch port); nullptr when none.
    const credit_tx* credit_sender(std::size_t n, int port) const noexcept;
    const credit_rx* credit_receiver(std::size_t n, int port) const noexcept;
    bool has_credit_links() const noexcept;
    // use_ethdevs(): the DPDK port id of (node, port), -1 when none.
    int eth_port(std::size_t n, int port) const noexcept;
    sim::engine_counters engine_counters() const noexcept;  // summed over the partitions
    std::uint64_t packet_hops() const noexcept;  // frames delivered by all links
    std::uint64_t spins() const noexcept;        // summed over nodes

    struct impl;

private:
    std::unique_ptr<impl> _p;
};

}  // namespace rocelab::vt
