// fabric.cpp - see fabric.hpp.
#include "vt/fabric.hpp"

#include <pcap/pcap.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <climits>
#include <atomic>
#include <bit>
#include <array>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "config/gen_config.hpp"
#include "config/switch_config.hpp"
#include "config/units_parse.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/growing_pool.hpp"
#include "dpdk/port.hpp"
#include "qos/credit.hpp"

namespace rocelab::vt {

// ---- links and captures ----

struct wire_tap {
    std::uint32_t* rx_waiting = nullptr;  // the receiving port's count of frames in its RX ring
    std::uint64_t* pend_word = nullptr;   // its node's rx_pending word (port_io::rx_pending), or null
    std::uint64_t pend_bit = 0;
    credit_rx* crx = nullptr;  // credit mode: the receiving switch port's credits (frames the link loses count in its ABR)
    pcap_t* dead = nullptr;
    pcap_dumper_t* tx = nullptr;  // the sender port's -tx.pcap
    pcap_dumper_t* rx = nullptr;  // the receiver port's -rx.pcap
    std::uint32_t snaplen = 256;
    std::uint64_t written = 0;
    std::array<std::uint8_t, 16384> buf{};
};

std::uint32_t mbuf_traits::length(rte_mbuf* const& m) const noexcept { return rte_pktmbuf_pkt_len(m); }
void mbuf_traits::drop(rte_mbuf*& m) const noexcept { rte_pktmbuf_free(m); }

void mbuf_traits::serialize(rte_mbuf* const& m, std::vector<std::byte>& out) const {
    const std::uint32_t len = rte_pktmbuf_pkt_len(m);
    const std::size_t at = out.size();
    out.resize(at + len);
    // rte_pktmbuf_read copies only a segmented frame; a contiguous one it points to.
    const void* d = rte_pktmbuf_read(m, 0, len, out.data() + at);
    if (d != nullptr && d != out.data() + at) { std::memcpy(out.data() + at, d, len); }
    rte_pktmbuf_free(m);
}

rte_mbuf* mbuf_traits::deserialize(const std::byte* p, std::size_t n) const {
    if (pool == nullptr) { throw std::runtime_error("a frame from another rank, and no mbuf pool to take it"); }
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        throw std::runtime_error("mbuf pool " + std::string(pool->name) + " exhausted taking a frame from another rank");
    }
    char* d = n <= 0xFFFF ? rte_pktmbuf_append(m, static_cast<std::uint16_t>(n)) : nullptr;
    if (d == nullptr) {
        rte_pktmbuf_free(m);
        throw std::runtime_error("a frame of " + std::to_string(n) + " bytes from another rank exceeds mbuf pool " +
                                 std::string(pool->name) + "'s data room");
    }
    if (n != 0) { std::memcpy(d, p, n); }
    return m;
}

namespace {
void dump(pcap_dumper_t* d, wire_tap& t, const rte_mbuf* m, std::int64_t ns) noexcept {
    const std::uint32_t len = rte_pktmbuf_pkt_len(m);
    const std::uint32_t cap = std::min({len, t.snaplen, static_cast<std::uint32_t>(t.buf.size())});
    const void* data = rte_pktmbuf_read(m, 0, cap, t.buf.data());
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    h.ts.tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000);  // nanosecond pcap
    h.caplen = cap;
    h.len = len;
    pcap_dump(reinterpret_cast<u_char*>(d), &h, static_cast<const u_char*>(data));
    ++t.written;
}
}  // namespace

void mbuf_traits::on_wire(rte_mbuf* const& m, std::int64_t depart, std::int64_t arrive,
                          sim::wire_fate f) const noexcept {
    if (tap == nullptr) { return; }
    if (f == sim::wire_fate::delivered) {
        ++*tap->rx_waiting;
        if (tap->pend_word != nullptr) { *tap->pend_word |= tap->pend_bit; }
    } else if (tap->crx != nullptr) [[unlikely]] {  // lost on the way: its credit comes back
        const std::uint32_t len = rte_pktmbuf_data_len(m);
        tap->crx->on_arrival(tap->crx->vl_of_frame(rte_pktmbuf_mtod(m, const std::uint8_t*), len), rte_pktmbuf_pkt_len(m));
    }
    if (tap->tx != nullptr) { dump(tap->tx, *tap, m, depart); }
    if (tap->rx != nullptr && f == sim::wire_fate::delivered) { dump(tap->rx, *tap, m, arrive); }
}

void mbuf_traits::on_credit() const noexcept {
    // Credits arrived for the receiving port: flag it as frames do, so a
    // switch that visits only flagged ports looks at its egress.
    if (tap != nullptr && tap->pend_word != nullptr) { *tap->pend_word |= tap->pend_bit; }
}

// ---- ports ----

namespace {

struct vt_port {
    mbuf_engine::port_type sp;
    std::uint32_t rx_waiting = 0;  // frames in the RX ring (port_io::rx_waiting)
    bool refused = false;          // TX refused frames in the last poll
    std::vector<vt_port*>* refused_list = nullptr;  // its node's ports with `refused` set
    bool cabled = false;
    // Credit mode (qos/credit.hpp): the credits the port sends with (its
    // peer is a switch), and, on a switch port, the credits it gives.
    credit_tx ctx;
    credit_rx crx;
    bool gives_credit = false;
    // use_ethdevs(): the port's net_ring ethdev and its two rings.
    int eth_port = -1;
    rte_ring* eth_rx = nullptr;  // the cable delivers here; the pipeline's rte_eth_rx_burst reads it
    rte_ring* eth_tx = nullptr;  // the pipeline's rte_eth_tx_burst writes here; the cable takes from it
};

constexpr unsigned eth_rx_ring = 64;
constexpr unsigned eth_tx_ring = 32;

std::uint16_t vt_rx(void* ctx, nanos now, rte_mbuf** pkts, std::uint16_t n) noexcept {
    auto* p = static_cast<vt_port*>(ctx);
    const std::uint16_t k = p->sp.rx_burst(now, pkts, n);
    p->rx_waiting -= k;
    if (p->gives_credit) [[unlikely]] {  // ABR: counted as the switch takes the frames (and charges them in this poll)
        for (std::uint16_t i = 0; i < k; ++i) {
            p->crx.on_arrival(p->crx.vl_of_frame(rte_pktmbuf_mtod(pkts[i], const std::uint8_t*), rte_pktmbuf_data_len(pkts[i])),
                              rte_pktmbuf_pkt_len(pkts[i]));
        }
    }
    return k;
}
void credit_sink(void* ctx, int vl, std::uint64_t fccl) noexcept { static_cast<credit_tx*>(ctx)->on_update(vl, fccl); }
std::uint16_t vt_tx(void* ctx, nanos now, rte_mbuf** pkts, std::uint16_t n) noexcept {
    auto* p = static_cast<vt_port*>(ctx);
    const std::uint16_t k = p->sp.tx_burst(now, pkts, n);
    if (k < n && !p->refused) {
        p->refused = true;
        if (p->refused_list != nullptr) { p->refused_list->push_back(p); }  // reserved: never grows past the ports
    }
    return k;
}
const dpdk::port_io_ops vt_ops{&vt_rx, &vt_tx};

// One direction of a cable.
sim::link_cfg link_of(const cable_cfg& c) noexcept {
    sim::link_cfg lc;
    lc.rate = c.rate;
    lc.prop_delay = c.prop_delay;
    lc.loss = c.loss;
    lc.loss_seed = c.loss_seed;
    lc.tx_ring_size = c.tx_ring_size;
    lc.rx_ring_size = c.rx_ring_size;
    return lc;
}

// Growing pools (fabric::build(mbufs)): before each poll, every pool has
// at least `low` free mbufs (more than any node allocates in one poll), so
// the pipelines never see a pool that could still grow run dry.
struct pool_keeper {
    std::vector<dpdk::growing_pool*> pools;
    std::uint32_t low = 4096;
    std::atomic<bool> exhausted{false};  // a pool was low at its capacity (any partition's thread)
    void check() noexcept {
        for (dpdk::growing_pool* g : pools) {
            if (g->free_count() < low && !g->top_up(low)) { exhausted.store(true, std::memory_order_relaxed); }
        }
    }
};

// One unit of a node (node.hpp: a switch, or one host of a generator) as
// an engine node: the pipeline's work and deadline, plus its simulated
// ports' own (frames waiting in RX, a TX ring that refused frames).
class unit_node final : public sim::sim_node {
public:
    node* pipe = nullptr;
    std::size_t unit = 0;
    std::vector<vt_port*> ports;
    std::vector<vt_port*> refused;                     // ports whose TX refused frames in this poll
    const std::vector<std::uint64_t>* rx_pending = nullptr;  // the node's port_io::rx_pending, or null
    node_stats st;
    bool realtime = false;  // polled every round: no deadline to compute
    pool_keeper* keeper = nullptr;
    // Credit mode: the switch's ports that give credits, and the link back
    // to each one's peer (which carries the updates).
    struct credit_port {
        vt_port* vp = nullptr;
        std::size_t port = 0;
        mbuf_engine::link_type* back = nullptr;
    };
    std::vector<credit_port> credit_ports;
    const sw::switch_pipeline* credit_sw = nullptr;

    // After a poll: FCCL = ABR + free blocks per credited class; a raised
    // limit goes back over the cable (qos/credit.hpp).
    void advertise(nanos now) noexcept {
        for (credit_port& cp : credit_ports) {
            credit_rx& r = cp.vp->crx;
            for (std::uint8_t bits = r.credited; bits != 0; bits = static_cast<std::uint8_t>(bits & (bits - 1))) {
                const int vl = std::countr_zero(bits);
                const std::uint64_t f = r.fccl(vl, credit_sw->pg_use(cp.port, r.pg_of_vl[static_cast<std::size_t>(vl)]));
                if (f > r.advertised[static_cast<std::size_t>(vl)]) {
                    r.advertised[static_cast<std::size_t>(vl)] = f;
                    cp.back->send_credit(now, vl, f);
                }
            }
        }
    }

    nanos poll(nanos now) noexcept override {
        if (keeper != nullptr) { keeper->check(); }
        if (realtime) {
            ++st.polls;
            (void)pipe->poll(unit, now);
            if (!credit_ports.empty()) { advertise(now); }
            return nanos::max();
        }
        for (vt_port* p : refused) { p->refused = false; }
        refused.clear();
        const std::uint32_t work = pipe->poll(unit, now);
        if (!credit_ports.empty()) [[unlikely]] { advertise(now); }
        ++st.polls;
        nanos d = pipe->next_deadline(unit, now);
        for (vt_port* p : refused) { d = std::min(d, p->sp.tx_free_time(now)); }
        if (rx_pending != nullptr) {  // bit per port with frames in its RX ring
            for (const std::uint64_t word : *rx_pending) {
                if (word != 0) { d = now; }
            }
        } else {
            for (vt_port* p : ports) {
                if (p->rx_waiting != 0) { d = now; }
            }
        }
        if (d <= now && work == 0) {
            ++st.spins;
            d = now + nanos{1};
        }
        return d;
    }
};

}  // namespace

// ---- the fabric ----

struct fabric::impl {
    struct node_rec {
        std::string name;
        node_kind kind{};
        switch_cfg scfg;
        gen_cfg gcfg;
        gen::gen_tx_opts opts;
        std::function<void(gen_cfg&)> adjust;
        // After build: the pipeline (node.hpp), and one engine node per
        // unit: a switch's one, or a generator's per host (the worker that
        // owns the host's ports: hosts sharing a port share a unit).
        std::unique_ptr<node> pipe;
        std::vector<std::unique_ptr<unit_node>> units;
        std::vector<std::unique_ptr<vt_port>> ports;
        std::vector<std::uint64_t> rx_pending;  // switch: port_io::rx_pending (virtual time)
        std::vector<std::uint32_t> port_node;  // engine node of each port
        std::vector<std::int32_t> port_cable;  // cable index per port, -1 none
        std::vector<std::int32_t> port_txlink;  // engine link leaving the port, -1 none
        bool expanded = false;                  // gen: expand_gen_cfg (and adjust) done
    };
    struct cable {
        std::size_t a = 0, b = 0;
        int pa = 0, pb = 0;
        cable_cfg cfg;
    };
    std::vector<node_rec> nodes;
    std::vector<cable> cables;
    std::unique_ptr<mbuf_parallel> peng;            // one partition, or one per thread
    std::vector<mbuf_engine::link_type*> links;     // by cable direction: 2c a->b, 2c+1 b->a
    std::vector<unsigned> en_part;                  // engine node -> partition
    unsigned threads = 1;
    sim::sync_transport* tr = nullptr;              // set_ranks(): over ranks
    std::vector<bool> link_local;                   // by link: delivered (and captured) on this rank
    std::vector<fabric::partition_entry> given_parts;  // --partition (empty: computed)
    std::string given_parts_src;
    unsigned given_nparts = 0;
    std::size_t cut_cables = 0;
    std::vector<std::unique_ptr<wire_tap>> taps;  // per engine link
    bool built = false;
    bool released = false;
    bool realtime = false;
    bool checked = false;  // ports and cables checked, generators expanded
    std::string eth_tag;  // use_ethdevs(): non-empty
    // build(mbufs): the growing pools (common first, then one prefilled pool per pmtu).
    std::vector<std::unique_ptr<dpdk::growing_pool>> pools;
    pool_keeper keeper;

    std::string check();
    std::string credit_error(std::size_t ci) const;
    std::string credit_setup();

    std::string port_label(std::size_t n, int p) const {
        const node_rec& r = nodes[n];
        if (r.kind == node_kind::switch_node && p >= 0 && static_cast<std::size_t>(p) < r.scfg.ports.size()) {
            return r.scfg.ports[static_cast<std::size_t>(p)].name;
        }
        return "port" + std::to_string(p);
    }
};

fabric::fabric() : _p(std::make_unique<impl>()) {}
fabric::~fabric() {
    release_all();
    // Pipelines and links before the pools their mbufs belong to.
    _p->peng.reset();
    _p->nodes.clear();
    _p->pools.clear();
}

std::size_t fabric::add_switch(const std::string& name, const switch_cfg& cfg) {
    impl::node_rec r;
    r.name = name;
    r.kind = node_kind::switch_node;
    r.scfg = cfg;
    _p->nodes.push_back(std::move(r));
    return _p->nodes.size() - 1;
}

std::size_t fabric::add_gen(const std::string& name, const gen_cfg& cfg, gen::gen_tx_opts opts,
                            std::function<void(gen_cfg&)> adjust) {
    impl::node_rec r;
    r.adjust = std::move(adjust);
    r.name = name;
    r.kind = node_kind::gen_node;
    r.gcfg = cfg;
    r.opts = opts;
    _p->nodes.push_back(std::move(r));
    return _p->nodes.size() - 1;
}

void fabric::use_ethdevs(const std::string& tag) { _p->eth_tag = tag.empty() ? "fab" : tag; }

void fabric::connect(std::size_t a, int pa, std::size_t b, int pb, const cable_cfg& c) {
    _p->cables.push_back(impl::cable{a, b, pa, pb, c});
}

// Port counts, the cable on each port, cable parameters; then every
// generator's configuration expanded (hosts and flows) for its port count.
std::string fabric::impl::check() {
    impl& p = *this;
    if (p.checked) { return {}; }
    if (p.nodes.empty()) { return "fabric: no nodes"; }
    // Port counts and the cable on each port.
    for (auto& n : p.nodes) {
        std::size_t np = n.kind == node_kind::switch_node ? n.scfg.ports.size() : 1;
        if (n.kind == node_kind::gen_node) {
            for (const auto& c : p.cables) {
                if (&p.nodes[c.a] == &n) { np = std::max(np, static_cast<std::size_t>(std::max(c.pa, 0)) + 1); }
                if (&p.nodes[c.b] == &n) { np = std::max(np, static_cast<std::size_t>(std::max(c.pb, 0)) + 1); }
            }
        }
        n.port_cable.assign(np, -1);
        n.port_txlink.assign(np, -1);
    }
    for (std::size_t ci = 0; ci < p.cables.size(); ++ci) {
        const auto& c = p.cables[ci];
        const std::string what = "cable " + std::to_string(ci + 1);
        for (auto [n, port] : {std::pair{c.a, c.pa}, std::pair{c.b, c.pb}}) {
            if (n >= p.nodes.size()) { return what + ": no such node"; }
            auto& nr = p.nodes[n];
            if (port < 0 || static_cast<std::size_t>(port) >= nr.port_cable.size()) {
                return what + ": node " + nr.name + " has no port " + std::to_string(port) + " (it has " +
                       std::to_string(nr.port_cable.size()) + ")";
            }
            if (nr.port_cable[static_cast<std::size_t>(port)] >= 0) {
                return what + ": " + nr.name + " port " + p.port_label(n, port) + " already has a cable";
            }
            nr.port_cable[static_cast<std::size_t>(port)] = static_cast<std::int32_t>(ci);
        }
        if (const std::string e = sim::link_cfg_error(link_of(c.cfg)); !e.empty()) { return what + ": " + e; }
        if (const std::string e = p.credit_error(ci); !e.empty()) { return what + ": " + e; }
    }
    for (auto& n : p.nodes) {
        if (n.kind != node_kind::gen_node || n.expanded) { continue; }
        if (auto e = expand_gen_cfg(n.gcfg, static_cast<int>(n.port_cable.size())); !e.empty()) { return n.name + ": " + e; }
        if (n.adjust) { n.adjust(n.gcfg); }
        n.expanded = true;
    }
    // Planes: every ring's hop must have a path over the cables (through any
    // switches): a plane cut off somewhere cannot carry its share.
    std::vector<std::size_t> base(p.nodes.size(), 0);
    std::size_t verts = 0;
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
        base[i] = verts;
        verts += p.nodes[i].kind == node_kind::gen_node ? p.nodes[i].port_cable.size() : 1;
    }
    std::vector<std::size_t> up(verts);
    for (std::size_t v = 0; v < verts; ++v) { up[v] = v; }
    const auto find = [&](std::size_t x) {
        while (up[x] != x) { x = up[x] = up[up[x]]; }
        return x;
    };
    const auto vert = [&](std::size_t n, int port) {
        return base[n] + (p.nodes[n].kind == node_kind::gen_node ? static_cast<std::size_t>(port) : 0);
    };
    for (const auto& c : p.cables) {
        const std::size_t a = find(vert(c.a, c.pa)), b = find(vert(c.b, c.pb));
        if (a != b) { up[std::max(a, b)] = std::min(a, b); }
    }
    for (std::size_t ni = 0; ni < p.nodes.size(); ++ni) {
        const auto& n = p.nodes[ni];
        if (n.kind != node_kind::gen_node || n.gcfg.planes < 2) { continue; }
        for (const auto& f : n.gcfg.flows) {
            const auto& hs = n.gcfg.hosts[static_cast<std::size_t>(f.src_host)];
            const auto& hd = n.gcfg.hosts[static_cast<std::size_t>(f.dst_host)];
            if (find(vert(ni, hs.port)) != find(vert(ni, hd.port))) {
                return n.name + ": plane " + std::to_string(f.plane) + " has no path from " + hs.name + " to " + hd.name +
                       " (no cables join their ports through the plane's switches)";
            }
        }
    }
    p.checked = true;
    return {};
}

// Credit mode on cable ci: what its ends' configurations allow (one line,
// or ""). docs/fabric.md, "Credit flow control".
std::string fabric::impl::credit_error(std::size_t ci) const {
    const cable& c = cables[ci];
    if (!c.cfg.credit) { return {}; }
    if (!eth_tag.empty()) { return "flow_control: credit runs on simulated ports, not over ethdevs"; }
    const node_rec& na = nodes[c.a];
    const node_rec& nb = nodes[c.b];
    if (na.kind == node_kind::gen_node && nb.kind == node_kind::gen_node) {
        return "flow_control: credit needs a switch at one end (two hosts: nobody gives credits)";
    }
    for (auto [n, port] : {std::pair{c.a, c.pa}, std::pair{c.b, c.pb}}) {
        const node_rec& r = nodes[n];
        const std::string who = r.name + " " + port_label(n, port);
        if (r.kind == node_kind::switch_node) {
            const port_cfg& pc = r.scfg.ports[static_cast<std::size_t>(port)];
            if (pc.fc_mode == flow_ctrl_mode::pause) {
                return "flow_control: credit mixed with PFC/PAUSE on one link: " + who +
                       " has PORT_QOS_MAP pfc_mode pause; credits replace it (remove pfc_mode)";
            }
            if (pc.pfc_enable == 0) {
                return "flow_control: credit: " + who +
                       " has no lossless class (PORT_QOS_MAP pfc_enable) to give credits for";
            }
        } else {
            for (const auto& src : r.gcfg.pfc_sources) {
                if (src.port == port) {
                    return "flow_control: credit mixed with PFC on one link: host port " + std::to_string(port) + " of " +
                           r.name + " sends PFC frames (pfc:); a credit link carries no PFC";
                }
            }
        }
    }
    return {};
}

// Credit mode, once the pipelines exist: each sender's side of a cable whose
// other end gives credits. The sender's classes must be the receiver's VLs:
// a switch's egress queue is its TC (the same maps at both ends), a host's
// 802.1p priority is the TC its DSCP gets at the receiver.
std::string fabric::impl::credit_setup() {
    std::uint32_t max_frame = 256 + 160;  // the largest frame any node makes (plan_memory's bound)
    for (const auto& n : nodes) {
        if (n.kind == node_kind::gen_node) { max_frame = std::max(max_frame, gen::gen_pipeline::max_pmtu_of(n.gcfg) + 160); }
    }
    for (const auto& c : cables) {
        if (!c.cfg.credit) { continue; }
        for (auto [x, px, y, py] : {std::tuple{c.a, c.pa, c.b, c.pb}, std::tuple{c.b, c.pb, c.a, c.pa}}) {
            node_rec& ny = nodes[y];
            if (ny.kind != node_kind::switch_node) { continue; }
            node_rec& nx = nodes[x];
            const credit_rx& r = ny.ports[static_cast<std::size_t>(py)]->crx;
            credit_tx& t = nx.ports[static_cast<std::size_t>(px)]->ctx;
            const std::string rname = ny.name + " " + port_label(y, py);
            const std::string sname = nx.name + " " + port_label(x, px);
            t.block = r.block;
            for (int vl = 0; vl < 8; ++vl) {
                if ((r.credited >> vl & 1u) == 0) { continue; }
                if (r.limit[static_cast<std::size_t>(vl)] / r.block < r.blocks(max_frame)) {
                    return "flow_control: credit: " + rname + " gives " + std::to_string(r.limit[static_cast<std::size_t>(vl)]) +
                           " B for class " + std::to_string(vl) + ", less than one frame of " + std::to_string(max_frame) +
                           " B: nothing could ever be sent";
                }
            }
            if (nx.kind == node_kind::switch_node) {
                const port_cfg& xc = nx.scfg.ports[static_cast<std::size_t>(px)];
                if (xc.trust != r.trust || xc.maps.dscp_to_tc != r.maps.dscp_to_tc || xc.maps.pcp_to_tc != r.maps.pcp_to_tc) {
                    return "flow_control: credit: " + sname + " and " + rname +
                           " classify differently (trust, DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP): a credit link needs the same classes at both ends";
                }
                for (int tc = 0; tc < 8; ++tc) {
                    if ((r.credited >> tc & 1u) == 0) { continue; }
                    const std::uint8_t q = xc.maps.tc_to_queue[static_cast<std::size_t>(tc)] & 7;
                    if (t.vl_of[q] != no_vl) {
                        return "flow_control: credit: " + sname + " puts two lossless classes in queue " + std::to_string(q) +
                               " (TC_TO_QUEUE_MAP); credits need a queue of its own per lossless class";
                    }
                    t.vl_of[q] = static_cast<std::uint8_t>(tc);
                }
            } else {
                const gen_cfg& g = nx.gcfg;
                const auto check = [&](int dscp, int prio, const std::string& what) -> std::string {
                    const int tc = r.maps.classify(r.trust, dscp, prio);
                    if (tc != prio && ((r.credited >> tc & 1u) != 0 || (r.credited >> prio & 1u) != 0)) {
                        return "flow_control: credit: " + sname + " sends " + what + " with priority " + std::to_string(prio) +
                               " that " + rname + " puts in class " + std::to_string(tc) +
                               ": a host's priority must be the class its frames get";
                    }
                    return {};
                };
                const int sport = px;  // a structured binding: clang 14 cannot capture it in a lambda
                for (const auto& f : g.flows) {
                    const auto on_port = [&](int h) {
                        return h >= 0 && static_cast<std::size_t>(h) < g.hosts.size() && g.hosts[static_cast<std::size_t>(h)].port == sport;
                    };
                    if (on_port(f.src_host)) {
                        if (auto e = check(f.qp.dscp, f.priority, "flow " + f.name); !e.empty()) { return e; }
                    }
                    if (on_port(f.dst_host)) {
                        if (auto e = check(f.qp.dscp, g.priority, "the ACKs of flow " + f.name); !e.empty()) { return e; }
                    }
                }
                if (g.cnp.enabled) {
                    if (auto e = check(g.cnp.cnp_dscp, g.cnp.cnp_802p_prio, "CNPs"); !e.empty()) { return e; }
                }
                for (int pr = 0; pr < 8; ++pr) {
                    if ((r.credited >> pr & 1u) != 0) { t.vl_of[static_cast<std::size_t>(pr)] = static_cast<std::uint8_t>(pr); }
                }
                t.max_frame = gen::gen_pipeline::max_pmtu_of(g) + 160;
            }
            // The link's first exchange: the whole buffer is free.
            credit_rx& rw = ny.ports[static_cast<std::size_t>(py)]->crx;
            for (int vl = 0; vl < 8; ++vl) {
                if ((r.credited >> vl & 1u) == 0) { continue; }
                const std::uint64_t f0 = rw.fccl(vl, 0);
                rw.advertised[static_cast<std::size_t>(vl)] = f0;
                t.fccl[static_cast<std::size_t>(vl)] = f0;
            }
        }
    }
    return {};
}

// docs/fabric.md, "Memory": the sizing rule.
std::variant<memory_plan, std::string> fabric::plan_memory() {
    impl& p = *_p;
    if (const std::string e = p.check(); !e.empty()) { return e; }
    memory_plan m;
    constexpr std::uint64_t min_frame = 60;  // the smallest frame any node makes (an Ethernet minimum)
    constexpr std::uint64_t burst = 64;      // frames a pipeline stages per port (max_burst)
    std::uint32_t max_pmtu = 256;
    std::uint64_t l3 = 0;
    for (const auto& n : p.nodes) {
        if (n.kind == node_kind::switch_node) {
            const switch_cfg& c = n.scfg;
            std::uint64_t frames = 0;
            std::string what;
            if (c.pool.enabled) {
                // Every frame the buffer model can admit: the whole pool in
                // minimum-size charges (a cell, or the smallest frame).
                const std::uint64_t charge = std::max<std::uint64_t>(c.pool.cell.v, min_frame);
                frames = c.pool.size.v / charge;
                what = n.name + ": BUFFER_POOL " + format_bytes(c.pool.size) + " / " + std::to_string(charge) + " B";
            } else {
                for (const auto& pc : c.ports) {
                    for (const auto& l : pc.limits) {
                        frames += std::min<std::uint64_t>(l.max_packets, l.max_bytes.v / min_frame + 1);
                    }
                }
                what = n.name + ": egress queue limits (no BUFFER_POOL)";
            }
            if (c.mode == fwd_mode::l2) {
                frames *= 2;  // flood copies are not charged (stored once by an ASIC, copied here)
                what += ", x2 for flood copies";
            } else {
                ++l3;
            }
            m.terms.push_back({what, frames});
            m.terms.push_back({n.name + ": TX staging and PFC frames", c.ports.size() * (2 * burst + 1)});
        } else {
            const gen_cfg& g = n.gcfg;
            max_pmtu = std::max(max_pmtu, gen::gen_pipeline::max_pmtu_of(g));
            const std::uint64_t ports = n.port_cable.size();
            // Stocks (common and prefilled), RX and TX bursts, replies and CNPs waiting.
            std::uint64_t own = 256 + 4 * burst * ports;
            if (g.link_delay.v > 0) {  // a delay line holds every frame of a window
                for (const auto& f : g.flows) { own += f.qp.window; }
            }
            m.terms.push_back({n.name + ": generator stocks and bursts", own});
            const bool pf = n.opts.payload == gen::tx_payload::prefilled || n.opts.payload == gen::tx_payload::no_icrc;
            const std::uint32_t pm = gen::gen_pipeline::max_pmtu_of(g);
            if (pf && std::find(m.prefilled_pmtus.begin(), m.prefilled_pmtus.end(), pm) == m.prefilled_pmtus.end()) {
                m.prefilled_pmtus.push_back(pm);
            }
        }
    }
    std::uint64_t wire = 0;
    for (const auto& c : p.cables) {
        const double bits = double(c.cfg.prop_delay.v) * double(c.cfg.rate.v) / 1e9;
        const auto in_flight = static_cast<std::uint64_t>(bits / double((min_frame + 24) * 8)) + 1;
        wire += 2 * (c.cfg.tx_ring_size + c.cfg.rx_ring_size + in_flight);
    }
    m.terms.push_back({"cables: TX and RX rings, frames on the wire", wire});
    for (const auto& t : m.terms) { m.mbufs += t.mbufs; }
    // The largest frame: a data frame of the largest pmtu with its headers
    // (Ethernet, 802.1Q, IPv6, UDP, BTH, RETH, ImmDt, ICRC: 102 B), rounded.
    m.data_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + ((max_pmtu + 160 + 63) / 64) * 64);
    std::uint64_t ring = 1;
    while (ring <= m.mbufs) { ring <<= 1; }
    m.eal_mb = 96 + (ring * 8 * (1 + m.prefilled_pmtus.size()) >> 20) + 160 * l3;
    // The resident floor: constants under what was measured per part
    // (2026-12-04, docs/fabric.md "Memory": a switch about 2 MiB, an L3
    // switch's LPM and neighbour tables 3.5 MiB more, a host 0.2 MiB), and
    // per flow its state and the slots of its message table and completion
    // ring, which are written when the flow is made. mbufs are left out:
    // they grow with use.
    constexpr std::uint64_t mib = 1ull << 20;
    std::uint64_t switches = 0;
    std::uint64_t hosts = 0;
    std::uint64_t flows = 0;
    std::uint64_t flow_bytes = 0;
    for (const auto& n : p.nodes) {
        if (n.kind == node_kind::switch_node) {
            ++switches;
            continue;
        }
        hosts += n.gcfg.hosts.size();
        for (const auto& f : n.gcfg.flows) {
            const std::uint64_t slots = gen::message_slots(n.gcfg, f);
            ++flows;
            flow_bytes += sizeof(gen::flow_state) + slots * requester::bytes_per_message_slot;
        }
    }
    m.resident_floor = 32 * mib + switches * (3 * mib / 2) + l3 * (5 * mib / 2) + hosts * (mib / 10) + flow_bytes;
    m.resident_what = "switches " + std::to_string(switches) + " x 1.5MiB, L3 " + std::to_string(l3) +
                      " x 2.5MiB more, hosts " + std::to_string(hosts) + " x 0.1MiB, flows " + std::to_string(flows) +
                      " " + format_bytes_approx(bytes{flow_bytes}) + ", base 32MiB";
    return m;
}

std::string fabric::build(std::uint64_t mbufs) {
    impl& p = *_p;
    if (p.built) { return "fabric: build() called twice"; }
    auto pr = plan_memory();
    if (auto* e = std::get_if<std::string>(&pr)) { return *e; }
    const memory_plan& m = std::get<memory_plan>(pr);
    if (mbufs != 0 && mbufs < m.mbufs) {
        std::string why;
        for (const auto& t : m.terms) { why += (why.empty() ? "" : "; ") + t.what + ": " + std::to_string(t.mbufs); }
        return "--mbufs " + std::to_string(mbufs) + " cannot back the fabric's buffers: it needs " +
               std::to_string(m.mbufs) + " mbufs (" + why + ")";
    }
    const std::uint64_t cap = std::max(mbufs, m.mbufs);
    if (cap > UINT32_MAX / 2) { return "the fabric needs " + std::to_string(cap) + " mbufs: too many for one pool"; }
    // Free mbufs kept ahead of the pipelines: more than any engine node
    // allocates in one poll (its stocks: 2 x 64 per port, and some), times
    // the threads (their polls run at once). An engine node is a switch or
    // one generator worker: a host's port, or with planes a server's ports
    // (not the whole generator: 2048 hosts made it 263168 mbufs, and 1.6 GB
    // of mbufs populated before the first event).
    std::size_t max_ports = 1;
    for (const auto& n : p.nodes) {
        const std::size_t unit_ports =
            n.kind == node_kind::gen_node ? std::max<std::size_t>(1, n.gcfg.planes) : n.port_cable.size();
        max_ports = std::max(max_ports, std::min(unit_ports, n.port_cable.size()));
    }
    const std::uint64_t per_poll = 1024 + 2 * 64 * max_ports;
    p.keeper.low = static_cast<std::uint32_t>(std::min<std::uint64_t>(cap, per_poll * std::max(1u, p.threads)));
    const auto chunk = static_cast<std::uint32_t>(std::max<std::uint64_t>(8192, 2 * p.keeper.low));
    static unsigned instance = 0;
    const std::string tag = std::to_string(instance++);
    dpdk::growing_pool::params cp;
    cp.name = "fab_mbufs" + tag;
    cp.capacity = static_cast<std::uint32_t>(cap);
    cp.initial = std::min<std::uint32_t>(cp.capacity, chunk);
    cp.chunk = chunk;
    cp.data_room = m.data_room;
    auto g = dpdk::growing_pool::create(cp);
    if (auto* e = std::get_if<std::string>(&g)) { return *e; }
    p.pools.push_back(std::move(std::get<0>(g)));
    for (std::uint32_t pm : m.prefilled_pmtus) {
        dpdk::growing_pool::params pp = cp;
        pp.name = "fab_pf" + std::to_string(pm) + "_" + tag;
        pp.data_room = gen::gen_pipeline::prefilled_data_room(pm);
        pp.init = &gen::gen_pipeline::prefill;
        pp.arg = reinterpret_cast<void*>(static_cast<std::uintptr_t>(pm));
        auto gp = dpdk::growing_pool::create(pp);
        if (auto* e = std::get_if<std::string>(&gp)) { return *e; }
        for (auto& n : p.nodes) {
            if (n.kind == node_kind::gen_node && gen::gen_pipeline::max_pmtu_of(n.gcfg) == pm) {
                n.opts.prefilled_pool = std::get<0>(gp)->get();
            }
        }
        p.pools.push_back(std::move(std::get<0>(gp)));
    }
    for (const auto& gp : p.pools) { p.keeper.pools.push_back(gp.get()); }
    if (const std::string e = build(p.pools.front()->get()); !e.empty()) { return e; }
    for (auto& n : p.nodes) {
        for (auto& u : n.units) { u->keeper = &p.keeper; }
    }
    return {};
}

fabric::pool_figures fabric::pools() const noexcept {
    pool_figures f;
    for (const auto& g : _p->pools) {
        f.capacity += g->capacity();
        f.populated += g->populated();
        f.bytes += std::uint64_t{g->populated()} * g->object_bytes();
        f.in_use += g->populated() - rte_mempool_avail_count(g->get());
    }
    f.exhausted = _p->keeper.exhausted.load();
    return f;
}

std::string fabric::build(rte_mempool* pool) {
    impl& p = *_p;
    if (p.built) { return "fabric: build() called twice"; }
    if (const std::string e = p.check(); !e.empty()) { return e; }
    // check() may have run before use_ethdevs() (plan_memory): credits count
    // frames in the simulated ports' RX, which ethdevs bypass.
    for (std::size_t ci = 0; ci < p.cables.size(); ++ci) {
        if (const std::string e = p.credit_error(ci); !e.empty()) { return "cable " + std::to_string(ci + 1) + ": " + e; }
    }
    auto cable_rate = [&](const impl::node_rec& n, std::size_t port) {
        const std::int32_t ci = n.port_cable[port];
        return ci < 0 ? bits_per_sec{0} : p.cables[static_cast<std::size_t>(ci)].cfg.rate;
    };

    // Pipelines, their ports' I/O pointing at (not yet wired) simulated ports.
    for (std::size_t ni = 0; ni < p.nodes.size(); ++ni) {
        auto& n = p.nodes[ni];
        const std::size_t np = n.port_cable.size();
        for (std::size_t i = 0; i < np; ++i) {
            n.ports.push_back(std::make_unique<vt_port>());
            n.ports.back()->cabled = n.port_cable[i] >= 0;
        }
        std::vector<dpdk::port_binding> bindings(np);
        for (std::size_t i = 0; i < np; ++i) {
            auto& b = bindings[i];
            b.port_id = UINT16_MAX;  // no ethdev behind it
            b.name = p.port_label(ni, static_cast<int>(i));
            b.io = dpdk::port_io{&vt_ops, n.ports[i].get(), &n.ports[i]->rx_waiting};
            if (n.kind == node_kind::switch_node && p.eth_tag.empty()) {  // a switch visits only ports with frames
                if (n.rx_pending.empty()) { n.rx_pending.assign((np + 63) / 64, 0); }
                b.io.rx_pending = n.rx_pending.data();
            }
            b.mac = {0x02, 0x56, static_cast<std::uint8_t>(ni >> 8), static_cast<std::uint8_t>(ni),
                     static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)};
            if (!p.eth_tag.empty() && n.ports[i]->cabled) {
                vt_port& vp = *n.ports[i];
                const std::string base = p.eth_tag + "_" + std::to_string(ni) + "_" + std::to_string(i);
                const int sock = static_cast<int>(rte_socket_id());
                vp.eth_rx = rte_ring_create((base + "r").c_str(), eth_rx_ring, sock,
                                            RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
                vp.eth_tx = rte_ring_create((base + "t").c_str(), eth_tx_ring, sock,
                                            RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
                if (vp.eth_rx == nullptr || vp.eth_tx == nullptr) {
                    return n.name + " " + b.name + ": cannot create the net_ring rings: " + rte_strerror(rte_errno);
                }
                vp.eth_port = rte_eth_from_rings(base.c_str(), &vp.eth_rx, 1, &vp.eth_tx, 1,
                                                 static_cast<unsigned>(sock));
                if (vp.eth_port < 0) {
                    return n.name + " " + b.name + ": rte_eth_from_rings: " + rte_strerror(rte_errno);
                }
                dpdk::port_params pp;
                pp.port_id = static_cast<std::uint16_t>(vp.eth_port);
                pp.rx_ring_size = static_cast<std::uint16_t>(eth_rx_ring);
                pp.tx_ring_size = static_cast<std::uint16_t>(eth_tx_ring);
                pp.pool = pool;
                dpdk::port_info info;
                if (const std::string e = dpdk::port_open(pp, info); !e.empty()) { return n.name + " " + b.name + ": " + e; }
                b.port_id = static_cast<std::uint16_t>(vp.eth_port);
                b.io = dpdk::port_io{};  // rte_eth_rx_burst / rte_eth_tx_burst on queue 0
            }
        }
        // Credit mode: a switch end gives credits (and sends no PFC); an end
        // whose peer is a switch sends with them.
        for (std::size_t i = 0; i < np; ++i) {
            const std::int32_t ci = n.port_cable[i];
            if (ci < 0 || !p.cables[static_cast<std::size_t>(ci)].cfg.credit) { continue; }
            const auto& c = p.cables[static_cast<std::size_t>(ci)];
            const std::size_t peer = (c.a == ni && c.pa == static_cast<int>(i)) ? c.b : c.a;
            vt_port& vp = *n.ports[i];
            vp.gives_credit = n.kind == node_kind::switch_node;
            bindings[i].credit_port = vp.gives_credit;
            if (p.nodes[peer].kind == node_kind::switch_node) { bindings[i].credit = &vp.ctx; }
        }
        if (n.kind == node_kind::switch_node) {
            std::vector<std::pair<int, bits_per_sec>> speeds;
            for (std::size_t i = 0; i < np; ++i) {
                const auto& pc = n.scfg.ports[i];
                auto& b = bindings[i];
                if (pc.mac) {
                    b.mac = *pc.mac;
                } else if (n.scfg.switch_mac && n.scfg.mode == fwd_mode::l3) {
                    b.mac = *n.scfg.switch_mac;
                }
                b.shaped = pc.speed.has_value();
                b.line_rate = pc.speed ? *pc.speed : cable_rate(n, i);
                speeds.emplace_back(static_cast<int>(i), cable_rate(n, i));
            }
            if (auto e = resolve_port_speeds(n.scfg, speeds); !e.empty()) { return n.name + ": " + e; }
            auto r = sw::switch_pipeline::create(n.scfg, bindings, pool);
            if (auto* e = std::get_if<std::string>(&r)) { return n.name + ": " + *e; }
            auto sn = std::make_unique<switch_node>(std::move(std::get<0>(r)), n.scfg);
            sw::switch_pipeline& swp = sn->pipe();
            n.pipe = std::move(sn);
            for (std::size_t i = 0; i < np; ++i) {
                if (!n.ports[i]->gives_credit) { continue; }
                const std::string who = n.name + " " + bindings[i].name;
                const auto& cab = p.cables[static_cast<std::size_t>(n.port_cable[i])];
                credit_rx& cr = n.ports[i]->crx;
                const port_cfg& pc = n.scfg.ports[i];
                if (!swp.buffer_accounting()) {
                    return "flow_control: credit: " + who + ": the switch keeps no buffer accounting (BUFFER_POOL) to give credits from";
                }
                if (swp.shared_headroom_pool()) {
                    return "flow_control: credit: " + who +
                           ": the ingress pool has a shared headroom pool (BUFFER_POOL xoff), so no PG's headroom is its own to give as credits";
                }
                cr.block = swp.buffer_cell() != 0 ? swp.buffer_cell() : 64;
                cr.maps = pc.maps;
                cr.trust = pc.trust;
                std::uint8_t pgs = 0;
                for (int tc = 0; tc < 8; ++tc) {
                    if ((pc.pfc_enable >> tc & 1u) == 0) { continue; }
                    const int pg = pc.maps.tc_to_pg[static_cast<std::size_t>(tc)] & 7;
                    if ((pgs >> pg & 1u) != 0) {
                        return "flow_control: credit: " + who + ": two lossless classes share PG " + std::to_string(pg) +
                               " (TC_TO_PRIORITY_GROUP_MAP); credits need a PG of its own per lossless class";
                    }
                    pgs = static_cast<std::uint8_t>(pgs | (1u << pg));
                    const std::uint64_t g = swp.pg_guaranteed(i, pg);
                    const std::uint64_t lim = cab.cfg.credit_bytes != 0 ? cab.cfg.credit_bytes : g;
                    if (lim > g) {
                        return "flow_control: credit: credits " + std::to_string(lim) + " B per class on " + who +
                               " exceed what PG " + std::to_string(pg) + " always holds (reserved + headroom = " +
                               std::to_string(g) + " B): frames could be dropped";
                    }
                    cr.limit[static_cast<std::size_t>(tc)] = lim;
                    cr.pg_of_vl[static_cast<std::size_t>(tc)] = static_cast<std::uint8_t>(pg);
                    cr.credited = static_cast<std::uint8_t>(cr.credited | (1u << tc));
                }
            }
            auto u = std::make_unique<unit_node>();
            u->pipe = n.pipe.get();
            for (auto& vp : n.ports) { u->ports.push_back(vp.get()); }
            u->refused.reserve(n.ports.size());
            for (auto& vp : n.ports) { vp->refused_list = &u->refused; }
            if (!n.rx_pending.empty()) { u->rx_pending = &n.rx_pending; }
            n.units.push_back(std::move(u));
        } else {
            for (std::size_t i = 0; i < np; ++i) {
                bindings[i].line_rate = n.gcfg.rate.v != 0 ? n.gcfg.rate : cable_rate(n, i);
            }
            // One worker per NIC port, i.e. per host (hosts spread over one
            // port, as an incast's extra senders are, share its worker); each
            // worker is an engine node of its own.
            // With planes, a server's NIC ports (its hosts, one per plane) are
            // one worker and one node.
            unsigned workers = 0;
            std::vector<unsigned> port_worker(np, UINT_MAX);
            if (n.gcfg.planes > 1) {
                std::vector<unsigned> server_worker;
                for (std::size_t h = 0; h < n.gcfg.hosts.size(); ++h) {
                    const std::size_t sv = h / n.gcfg.planes;
                    if (server_worker.size() <= sv) { server_worker.resize(sv + 1, UINT_MAX); }
                    if (server_worker[sv] == UINT_MAX) { server_worker[sv] = workers++; }
                    const auto port = static_cast<std::size_t>(n.gcfg.hosts[h].port);
                    if (port < np) { port_worker[port] = server_worker[sv]; }
                }
            }
            for (std::size_t i = 0; i < np; ++i) {
                if (port_worker[i] == UINT_MAX) { port_worker[i] = workers++; }
            }
            // Virtual time: a poll sends about one frame, so the ports'
            // mbuf stocks take a few at a time (gen_tx_opts::stock_bulk).
            gen::gen_tx_opts o = n.opts;
            // And each frame goes at its own paced time (gen_tx_opts::pace_ahead).
            if (p.eth_tag.empty()) {
                o.stock_bulk = std::min<std::uint16_t>(o.stock_bulk, 4);
                o.pace_ahead = nanos{0};
            }
            auto r = gen::gen_pipeline::create(n.gcfg, bindings, pool, o, workers, port_worker);
            if (auto* e = std::get_if<std::string>(&r)) { return n.name + ": " + *e; }
            n.pipe = std::make_unique<gen_node>(std::move(std::get<0>(r)), n.gcfg);
            for (unsigned k = 0; k < workers; ++k) {
                auto u = std::make_unique<unit_node>();
                u->pipe = n.pipe.get();
                u->unit = k;
                for (std::size_t i = 0; i < np; ++i) {
                    if (port_worker[i] == k) { u->ports.push_back(n.ports[i].get()); }
                }
                n.units.push_back(std::move(u));
            }
            n.port_node.assign(np, 0);
            for (std::size_t i = 0; i < np; ++i) { n.port_node[i] = port_worker[i]; }  // made absolute below
        }
    }

    if (const std::string e = p.credit_setup(); !e.empty()) { return e; }

    // Engine nodes in declaration order (the poll order at an instant):
    // each switch, each generator's hosts.
    std::vector<sim::sim_node*> en;
    std::vector<std::size_t> en_ports;  // ports each engine node polls (its weight)
    std::vector<std::uint32_t> node_first;  // by node: its first engine node
    for (auto& n : p.nodes) {
        const auto first = static_cast<std::uint32_t>(en.size());
        node_first.push_back(first);
        for (auto& u : n.units) {
            en.push_back(u.get());
            en_ports.push_back(u->ports.size());
        }
        if (n.kind == node_kind::switch_node) {
            n.port_node.assign(n.ports.size(), first);
        } else {
            for (auto& e : n.port_node) { e += first; }
        }
    }
    // Partitions: units are joined along every cable with a generator end
    // (a host's cable is never cut); switch-to-switch cables may be.
    std::vector<std::uint32_t> up(en.size());
    for (std::uint32_t i = 0; i < up.size(); ++i) { up[i] = i; }
    const auto find = [&](std::uint32_t x) {
        while (up[x] != x) { x = up[x] = up[up[x]]; }
        return x;
    };
    for (const auto& c : p.cables) {
        if (p.nodes[c.a].kind == node_kind::gen_node || p.nodes[c.b].kind == node_kind::gen_node) {
            const std::uint32_t a = find(p.nodes[c.a].port_node[static_cast<std::size_t>(c.pa)]);
            const std::uint32_t b = find(p.nodes[c.b].port_node[static_cast<std::size_t>(c.pb)]);
            if (a != b) { up[std::max(a, b)] = std::min(a, b); }
        }
    }
    std::vector<std::uint32_t> unit_of(en.size());
    std::vector<std::uint32_t> unit_root;  // by unit: its smallest engine node
    std::vector<std::uint64_t> unit_weight;
    for (std::uint32_t i = 0; i < en.size(); ++i) {
        const std::uint32_t r = find(i);
        const auto it = std::find(unit_root.begin(), unit_root.end(), r);
        const auto u = static_cast<std::uint32_t>(it - unit_root.begin());
        if (it == unit_root.end()) {
            unit_root.push_back(r);
            unit_weight.push_back(0);
        }
        unit_of[i] = u;
        unit_weight[u] += en_ports[i];
    }
    std::vector<unsigned> unit_part(unit_root.size(), 0);
    if (!p.given_parts.empty()) {
        // --partition: each unit takes its switches' partition.
        const std::string& src = p.given_parts_src;
        std::vector<int> node_part(p.nodes.size(), -1);
        std::vector<std::string> node_where(p.nodes.size());
        unsigned nparts = 0;
        for (const auto& e : p.given_parts) {
            std::size_t k = 0;
            while (k < p.nodes.size() && p.nodes[k].name != e.node) { ++k; }
            if (k == p.nodes.size()) {
                std::string names;
                for (const auto& n : p.nodes) {
                    if (n.kind == node_kind::switch_node) { names += (names.empty() ? "" : ", ") + n.name; }
                }
                return e.where + ": no switch '" + e.node + "' in the fabric (its switches: " + names + ")";
            }
            if (p.nodes[k].kind != node_kind::switch_node) {
                return e.where + ": '" + e.node +
                       "' is a generator: its hosts go with the switch they are cabled to (a host's cable is never "
                       "cut); name switches only";
            }
            if (node_part[k] >= 0) { return e.where + ": '" + e.node + "' again (first at " + node_where[k] + ")"; }
            node_part[k] = static_cast<int>(e.part);
            node_where[k] = e.where;
            nparts = std::max(nparts, e.part + 1);
        }
        std::vector<int> up_part(unit_root.size(), -1);
        std::vector<std::size_t> up_node(unit_root.size(), 0);
        std::vector<bool> used(nparts, false);
        for (std::size_t k = 0; k < p.nodes.size(); ++k) {
            if (p.nodes[k].kind != node_kind::switch_node) { continue; }
            if (node_part[k] < 0) {
                return src + ": switch '" + p.nodes[k].name + "' has no partition (name every switch)";
            }
            const std::uint32_t u = unit_of[node_first[k]];
            if (up_part[u] >= 0 && up_part[u] != node_part[k]) {
                return src + ": '" + p.nodes[up_node[u]].name + "' (partition " + std::to_string(up_part[u]) +
                       ") and '" + p.nodes[k].name + "' (partition " + std::to_string(node_part[k]) +
                       ") share hosts' cables, which are never cut: give them one partition";
            }
            up_part[u] = node_part[k];
            up_node[u] = k;
            used[static_cast<unsigned>(node_part[k])] = true;
        }
        for (unsigned q = 0; q < nparts; ++q) {
            if (!used[q]) {
                return src + ": partition " + std::to_string(q) + " has no switch (partitions are 0.." +
                       std::to_string(nparts - 1) + ", each with a switch)";
            }
        }
        for (std::uint32_t u = 0; u < unit_root.size(); ++u) {  // a unit without a switch (hosts to hosts): 0
            unit_part[u] = up_part[u] < 0 ? 0u : static_cast<unsigned>(up_part[u]);
        }
        p.threads = std::min(p.threads, nparts);
        p.given_nparts = nparts;
    }
    const unsigned nranks = p.tr != nullptr ? p.tr->ranks() : 1;
    // Over ranks: threads x ranks partitions, at most one per unit (a rank
    // may be left without one: it still takes part in every window).
    const unsigned parts = !p.given_parts.empty() ? p.given_nparts
                           : nranks > 1 ? std::max(1u, std::min<unsigned>(p.threads * nranks, static_cast<unsigned>(unit_root.size())))
                                        : p.threads;
    if (p.given_parts.empty() && parts > unit_root.size()) {
        return "--threads " + std::to_string(parts) + ": the fabric has " + std::to_string(unit_root.size()) +
               " part" + (unit_root.size() == 1 ? "" : "s") +
               " that can run apart (each switch with the hosts cabled to it): at most " +
               std::to_string(unit_root.size()) + " threads";
    }
    if (p.given_parts.empty()) {  // computed: heaviest unit first, onto the least loaded partition
        std::vector<std::uint32_t> order(unit_root.size());
        for (std::uint32_t u = 0; u < order.size(); ++u) { order[u] = u; }
        std::stable_sort(order.begin(), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return unit_weight[a] > unit_weight[b]; });
        std::vector<std::uint64_t> load(parts, 0);
        for (const std::uint32_t u : order) {
            unsigned best = 0;
            for (unsigned q = 1; q < parts; ++q) {
                if (load[q] < load[best]) { best = q; }
            }
            unit_part[u] = best;
            load[best] += unit_weight[u];
        }
    }
    p.en_part.resize(en.size());
    for (std::uint32_t i = 0; i < en.size(); ++i) { p.en_part[i] = unit_part[unit_of[i]]; }
    std::vector<unsigned> part_rank(parts);
    for (unsigned q = 0; q < parts; ++q) { part_rank[q] = q % nranks; }
    p.peng = p.tr != nullptr ? std::make_unique<mbuf_parallel>(part_rank, *p.tr) : std::make_unique<mbuf_parallel>(parts);
    std::vector<std::uint32_t> local(en.size());
    for (std::uint32_t i = 0; i < en.size(); ++i) { local[i] = p.peng->part(p.en_part[i]).add_node(*en[i]); }
    // Two links per cable (a->b, b->a): inside a partition an engine's own,
    // across partitions a split link. The lookahead: the quickest crossing.
    nanos look = nanos::max();
    p.cut_cables = 0;
    p.links.clear();
    p.link_local.clear();
    for (const auto& c : p.cables) {
        sim::link_cfg lc = link_of(c.cfg);
        const std::uint32_t ea = p.nodes[c.a].port_node[static_cast<std::size_t>(c.pa)];
        const std::uint32_t eb = p.nodes[c.b].port_node[static_cast<std::size_t>(c.pb)];
        const unsigned pa = p.en_part[ea], pb = p.en_part[eb];
        if (p.peng->rank_of(pa) != p.peng->rank_of(pb) && c.cfg.prop_delay.v <= 0) {
            return "cable " + p.nodes[c.a].name + ":" + p.port_label(c.a, c.pa) + " - " + p.nodes[c.b].name + ":" +
                   p.port_label(c.b, c.pb) + " has no propagation delay, and it joins rank " +
                   std::to_string(p.peng->rank_of(pa)) + " to rank " + std::to_string(p.peng->rank_of(pb)) +
                   ": a cable between ranks needs a delay (the ranks' lookahead); give it one, or put both ends "
                   "on one rank (--partition: partition p runs on rank p mod ranks)";
        }
        const auto add = [&](std::uint32_t from, unsigned fp, std::uint32_t to, unsigned tp, std::size_t rx_node,
                             int rx_port) {
            p.taps.push_back(std::make_unique<wire_tap>());
            p.taps.back()->rx_waiting = &p.nodes[rx_node].ports[static_cast<std::size_t>(rx_port)]->rx_waiting;
            if (auto& pend = p.nodes[rx_node].rx_pending; !pend.empty()) {
                p.taps.back()->pend_word = &pend[static_cast<std::size_t>(rx_port) >> 6];
                p.taps.back()->pend_bit = std::uint64_t{1} << (static_cast<unsigned>(rx_port) & 63);
            }
            // The pool takes the frames that arrive from another rank.
            const mbuf_traits tr{p.taps.back().get(), pool};
            p.link_local.push_back(p.peng->is_local(tp));
            if (fp == tp) {
                auto& e = p.peng->part(fp);
                p.links.push_back(&e.link(e.add_link(local[from], local[to], lc, tr)));
            } else {
                p.links.push_back(&p.peng->cross_link(p.peng->add_cross_link(fp, local[from], tp, local[to], lc, tr)));
            }
        };
        add(ea, pa, eb, pb, c.b, c.pb);
        lc.loss_seed = c.cfg.loss_seed + 1;
        add(eb, pb, ea, pa, c.a, c.pa);
        if (pa != pb) {
            ++p.cut_cables;
            // The smallest frame (60 B + 24 B of preamble, IFG and FCS) at the cable's rate.
            const auto wire = static_cast<std::int64_t>(84ull * 8 * 1'000'000'000ull / c.cfg.rate.v);
            look = std::min(look, nanos{c.cfg.prop_delay.v + std::max<std::int64_t>(wire, 1)});
        }
        const auto ab = static_cast<std::int32_t>(p.links.size() - 2);
        const auto ba = static_cast<std::int32_t>(p.links.size() - 1);
        p.nodes[c.a].ports[static_cast<std::size_t>(c.pa)]->sp = mbuf_engine::port_type{p.links[ab], p.links[ba]};
        p.nodes[c.b].ports[static_cast<std::size_t>(c.pb)]->sp = mbuf_engine::port_type{p.links[ba], p.links[ab]};
        p.nodes[c.a].port_txlink[static_cast<std::size_t>(c.pa)] = ab;
        p.nodes[c.b].port_txlink[static_cast<std::size_t>(c.pb)] = ba;
        if (c.cfg.credit) {
            // A switch end's credit updates ride the link back to its peer,
            // a minimum frame's wire time plus the cable's delay after they
            // are sent (never sooner than the lookahead).
            const auto wire = static_cast<std::int64_t>(84ull * 8 * 1'000'000'000ull / c.cfg.rate.v);
            const nanos cd{c.cfg.prop_delay.v + std::max<std::int64_t>(wire, 1)};
            for (auto [g, pg, s, ps, back, fwd] : {std::tuple{c.b, c.pb, c.a, c.pa, ba, ab}, std::tuple{c.a, c.pa, c.b, c.pb, ab, ba}}) {
                vt_port& gp = *p.nodes[g].ports[static_cast<std::size_t>(pg)];
                if (!gp.gives_credit) { continue; }
                vt_port& sp = *p.nodes[s].ports[static_cast<std::size_t>(ps)];
                p.links[static_cast<std::size_t>(back)]->set_credit_channel(&credit_sink, &sp.ctx, cd);
                p.taps[static_cast<std::size_t>(fwd)]->crx = &gp.crx;
                auto& sn = *p.nodes[g].units.front();
                sn.credit_sw = &static_cast<switch_node&>(*p.nodes[g].pipe).pipe();
                sn.credit_ports.push_back({&gp, static_cast<std::size_t>(pg), p.links[static_cast<std::size_t>(back)]});
            }
        }
    }
    p.peng->set_lookahead(look == nanos::max() ? nanos{INT64_MAX / 4} : look);
    // Threads other than the caller's take DPDK lcore ids (their own mempool
    // caches) and a CPU of their own (dpdk::pin_extra_thread): they would
    // otherwise inherit the main lcore's and share it with the caller.
    p.peng->on_thread_start([](unsigned k) {
        (void)rte_thread_register();
        (void)dpdk::pin_extra_thread(k);
    });
    p.built = true;
    return {};
}

std::string fabric::capture_to(const std::string& dir, std::uint32_t snaplen) {
    impl& p = *_p;
    if (!p.built) { return "fabric: capture_to() before build()"; }
    for (std::size_t ni = 0; ni < p.nodes.size(); ++ni) {
        auto& n = p.nodes[ni];
        for (std::size_t i = 0; i < n.ports.size(); ++i) {
            const std::int32_t tx = n.port_txlink[i];
            if (tx < 0) { continue; }
            // The port's RX link is the other direction of its cable.
            const std::int32_t rx = (tx % 2 == 0) ? tx + 1 : tx - 1;
            const std::string base = dir + "/" + n.name + "-" + p.port_label(ni, static_cast<int>(i));
            for (auto [li, sfx] : {std::pair{tx, "-tx.pcap"}, std::pair{rx, "-rx.pcap"}}) {
                if (!p.link_local[static_cast<std::size_t>(li)]) { continue; }  // another rank delivers it
                wire_tap& t = *p.taps[static_cast<std::size_t>(li)];
                t.snaplen = snaplen;
                if (t.dead == nullptr) {
                    t.dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snaplen),
                                                                  PCAP_TSTAMP_PRECISION_NANO);
                    if (t.dead == nullptr) { return "cannot open a pcap handle"; }
                }
                const std::string path = base + sfx;
                pcap_dumper_t* d = pcap_dump_open(t.dead, path.c_str());
                if (d == nullptr) { return path + ": " + pcap_geterr(t.dead); }
                (std::strcmp(sfx, "-tx.pcap") == 0 ? t.tx : t.rx) = d;
            }
        }
    }
    return {};
}

void fabric::run_until(nanos end) noexcept {
    if (_p->built && !_p->released) { _p->peng->run_until(end, _p->threads); }
}

void fabric::poll_realtime(nanos now) noexcept {
    impl& p = *_p;
    if (!p.built || p.released) { return; }
    if (!p.realtime) {
        p.realtime = true;
        for (auto& n : p.nodes) {
            for (auto& u : n.units) { u->realtime = true; }
            if (n.pipe) { n.pipe->polled_continuously(); }
        }
    }
    if (p.eth_tag.empty()) {
        p.peng->part(0).poll_all(now);
        return;
    }
    // Cables -> ethdev RX rings, the pipelines, ethdev TX rings -> cables.
    rte_mbuf* buf[64];
    p.peng->part(0).deliver_all(now);
    for (auto& n : p.nodes) {
        for (auto& vp : n.ports) {
            if (vp->eth_rx == nullptr) { continue; }
            unsigned room = rte_ring_free_count(vp->eth_rx);
            while (room > 0) {
                const std::uint16_t k = vp->sp.rx_burst(now, buf, static_cast<std::uint16_t>(std::min(room, 64u)));
                if (k == 0) { break; }
                vp->rx_waiting -= k;
                rte_ring_sp_enqueue_bulk(vp->eth_rx, reinterpret_cast<void* const*>(buf), k, nullptr);  // fits: room
                room -= k;
            }
        }
    }
    for (auto& n : p.nodes) {
        for (auto& u : n.units) { u->poll(now); }
    }
    for (auto& n : p.nodes) {
        for (auto& vp : n.ports) {
            if (vp->eth_tx == nullptr) { continue; }
            auto* l = vp->sp.tx_link();
            const std::size_t used = l->tx_ring_used(now);
            const std::size_t cap = l->cfg().tx_ring_size;
            const unsigned room = used >= cap ? 0u : static_cast<unsigned>(std::min<std::size_t>(cap - used, 64));
            if (room == 0) { continue; }
            const unsigned m = rte_ring_sc_dequeue_burst(vp->eth_tx, reinterpret_cast<void**>(buf), room, nullptr);
            const std::uint16_t k = vp->sp.tx_burst(now, buf, static_cast<std::uint16_t>(m));
            for (unsigned i = k; i < m; ++i) { rte_pktmbuf_free(buf[i]); }  // not expected: the room was checked
        }
    }
    p.peng->part(0).end_round();
}

nanos fabric::now() const noexcept { return _p->peng ? _p->peng->now() : nanos{0}; }

void fabric::set_threads(unsigned threads) noexcept { _p->threads = threads == 0 ? 1 : threads; }
void fabric::set_ranks(sim::sync_transport& t) noexcept { _p->tr = &t; }
unsigned fabric::rank() const noexcept { return _p->tr != nullptr ? _p->tr->rank() : 0; }
unsigned fabric::ranks() const noexcept { return _p->tr != nullptr ? _p->tr->ranks() : 1; }
unsigned fabric::port_rank(std::size_t n, int port) const noexcept {
    const auto& r = _p->nodes[n];
    if (!_p->peng || port < 0 || static_cast<std::size_t>(port) >= r.port_node.size()) { return 0; }
    return _p->peng->rank_of(_p->en_part[r.port_node[static_cast<std::size_t>(port)]]);
}
bool fabric::node_local(std::size_t n) const noexcept {
    const auto& r = _p->nodes[n];
    if (!_p->peng) { return true; }
    for (const std::uint32_t e : r.port_node) {
        if (!_p->peng->is_local(_p->en_part[e])) { return false; }
    }
    return true;
}
void fabric::set_partition(std::vector<partition_entry> entries, std::string source) {
    _p->given_parts = std::move(entries);
    _p->given_parts_src = std::move(source);
}

fabric::partition_figures fabric::partitions() const {
    partition_figures f;
    if (!_p->peng) { return f; }
    f.partitions = static_cast<unsigned>(_p->peng->partitions());
    f.lookahead = _p->cut_cables != 0 ? _p->peng->lookahead() : nanos{0};
    f.cut_cables = _p->cut_cables;
    f.windows = _p->peng->counters().windows;
    f.late = _p->peng->counters().late;
    f.thread_times = _p->peng->thread_times();
    for (const auto& n : _p->nodes) { f.node_partition.push_back(_p->en_part[n.port_node.empty() ? 0 : n.port_node[0]]); }
    return f;
}

void fabric::release_all() noexcept {
    impl& p = *_p;
    if (!p.built || p.released) { return; }
    p.released = true;
    for (auto* l : p.links) { l->drain([](rte_mbuf* m) { rte_pktmbuf_free(m); }); }
    for (auto& n : p.nodes) {
        if (n.pipe) { n.pipe->release(); }
    }
    for (auto& n : p.nodes) {
        for (auto& vp : n.ports) {
            if (vp->eth_port >= 0) {
                dpdk::port_close(static_cast<std::uint16_t>(vp->eth_port));
                vp->eth_port = -1;
            }
            for (rte_ring** r : {&vp->eth_rx, &vp->eth_tx}) {
                if (*r == nullptr) { continue; }
                void* m = nullptr;
                while (rte_ring_sc_dequeue(*r, &m) == 0) { rte_pktmbuf_free(static_cast<rte_mbuf*>(m)); }
                rte_ring_free(*r);
                *r = nullptr;
            }
        }
    }
    for (auto& t : p.taps) {
        for (pcap_dumper_t** d : {&t->tx, &t->rx}) {
            if (*d != nullptr) {
                pcap_dump_close(*d);
                *d = nullptr;
            }
        }
        if (t->dead != nullptr) {
            pcap_close(t->dead);
            t->dead = nullptr;
        }
    }
}

std::size_t fabric::node_count() const noexcept { return _p->nodes.size(); }
const std::string& fabric::node_name(std::size_t n) const noexcept { return _p->nodes[n].name; }
node_kind fabric::kind(std::size_t n) const noexcept { return _p->nodes[n].kind; }
node& fabric::node_at(std::size_t n) noexcept { return *_p->nodes[n].pipe; }
sw::switch_pipeline& fabric::switch_at(std::size_t n) noexcept {
    return static_cast<switch_node&>(*_p->nodes[n].pipe).pipe();
}
gen::gen_pipeline& fabric::gen_at(std::size_t n) noexcept { return static_cast<gen_node&>(*_p->nodes[n].pipe).pipe(); }
const switch_cfg& fabric::switch_config(std::size_t n) const noexcept { return _p->nodes[n].scfg; }
const gen_cfg& fabric::gen_config(std::size_t n) const noexcept { return _p->nodes[n].gcfg; }
node_stats fabric::stats(std::size_t n) const noexcept {
    node_stats s;  // a generator: its hosts' units summed
    for (const auto& u : _p->nodes[n].units) {
        s.polls += u->st.polls;
        s.spins += u->st.spins;
    }
    return s;
}
std::size_t fabric::port_count(std::size_t n) const noexcept { return _p->nodes[n].port_cable.size(); }
std::string fabric::port_name(std::size_t n, int port) const { return _p->port_label(n, port); }
const mbuf_engine::link_type* fabric::tx_link(std::size_t n, int port) const noexcept {
    const auto& r = _p->nodes[n];
    if (port < 0 || static_cast<std::size_t>(port) >= r.port_txlink.size() || r.port_txlink[static_cast<std::size_t>(port)] < 0) {
        return nullptr;
    }
    return _p->links[static_cast<std::size_t>(r.port_txlink[static_cast<std::size_t>(port)])];
}
const mbuf_engine::link_type* fabric::rx_link(std::size_t n, int port) const noexcept {
    const auto& r = _p->nodes[n];
    if (port < 0 || static_cast<std::size_t>(port) >= r.port_txlink.size() || r.port_txlink[static_cast<std::size_t>(port)] < 0) {
        return nullptr;
    }
    // The two directions of a cable are added together: a->b even, b->a odd.
    const std::int32_t tx = r.port_txlink[static_cast<std::size_t>(port)];
    return _p->links[static_cast<std::size_t>(tx % 2 == 0 ? tx + 1 : tx - 1)];
}

const credit_tx* fabric::credit_sender(std::size_t n, int port) const noexcept {
    const auto& r = _p->nodes[n];
    if (port < 0 || static_cast<std::size_t>(port) >= r.ports.size()) { return nullptr; }
    const credit_tx& t = r.ports[static_cast<std::size_t>(port)]->ctx;
    for (const std::uint8_t v : t.vl_of) {
        if (v != no_vl) { return &t; }
    }
    return nullptr;
}
const credit_rx* fabric::credit_receiver(std::size_t n, int port) const noexcept {
    const auto& r = _p->nodes[n];
    if (port < 0 || static_cast<std::size_t>(port) >= r.ports.size()) { return nullptr; }
    const vt_port& vp = *r.ports[static_cast<std::size_t>(port)];
    return vp.gives_credit ? &vp.crx : nullptr;
}
bool fabric::has_credit_links() const noexcept {
    for (const auto& c : _p->cables) {
        if (c.cfg.credit) { return true; }
    }
    return false;
}

int fabric::eth_port(std::size_t n, int port) const noexcept {
    const auto& r = _p->nodes[n];
    if (port < 0 || static_cast<std::size_t>(port) >= r.ports.size()) { return -1; }
    return r.ports[static_cast<std::size_t>(port)]->eth_port;
}

sim::engine_counters fabric::engine_counters() const noexcept {
    sim::engine_counters c;
    if (!_p->peng) { return c; }
    for (std::size_t i = 0; i < _p->peng->partitions(); ++i) {
        const auto& k = _p->peng->part(i).counters();
        c.events += k.events;
        c.link_events += k.link_events;
        c.node_polls += k.node_polls;
        c.instants += k.instants;
    }
    return c;
}
std::uint64_t fabric::packet_hops() const noexcept {
    std::uint64_t n = 0;
    if (!_p->peng) { return n; }
    for (std::size_t i = 0; i < _p->peng->partitions(); ++i) { n += _p->peng->part(i).items_delivered(); }
    return n;
}
std::uint64_t fabric::spins() const noexcept {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < _p->nodes.size(); ++i) { s += stats(i).spins; }
    return s;
}

}  // namespace rocelab::vt
