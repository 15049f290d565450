// switch_control.cpp - the switch pipeline's control side: create() (ports,
// workers, tables, buffer model from the configuration) and what the control
// thread, the reports and the telemetry read (counters, queues, PGs, PFC,
// neighbours, events, link state). Nothing here runs per frame; the data
// path is switch_pipeline.cpp.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "dpdk/mbuf_meta.hpp"
#include "switch/switch_rt.hpp"

namespace rocelab::sw {

switch_pipeline::switch_pipeline(std::unique_ptr<impl> p) noexcept : _p(std::move(p)) {}
switch_pipeline::~switch_pipeline() { release_all(); }

std::variant<std::unique_ptr<switch_pipeline>, std::string> switch_pipeline::create(
    const switch_cfg& cfg, const std::vector<port_binding>& ports, rte_mempool* pool, unsigned workers,
    const std::vector<unsigned>& port_worker) {
    if (ports.empty()) { return std::string("no ports: give --vdev=... or bind a NIC to DPDK"); }
    if (workers == 0) { workers = 1; }
    if (workers > ports.size()) {
        return "workers: " + std::to_string(workers) + " worker lcores for " + std::to_string(ports.size()) +
               " ports; each worker owns at least one port (give at most " + std::to_string(ports.size()) +
               " worker lcores)";
    }
    if (workers > 64) { return std::string("workers: at most 64 worker lcores"); }
    if (!port_worker.empty() && port_worker.size() != ports.size()) {
        return "port-worker map: " + std::to_string(port_worker.size()) + " entries for " +
               std::to_string(ports.size()) + " ports";
    }
    if (ports.size() > 64) { return std::string("at most 64 ports per switch"); }
    if (cfg.ports.size() != ports.size()) {
        return std::string("internal: port config and bindings differ in count");
    }
    auto p = std::make_unique<impl>();
    {
        auto off = dpdk::frame_meta_offset(sizeof(frame_meta), alignof(frame_meta));
        if (auto* e = std::get_if<std::string>(&off)) { return *e; }
        p->link = mbuf_link{std::get<int>(off)};
    }
    p->mode = cfg.mode;
    p->burst = std::clamp<std::uint16_t>(cfg.burst, 1, max_burst);
    p->max_frame = cfg.max_frame;
    p->pool = pool;
    p->ecmp_seed = static_cast<std::uint32_t>(cfg.seed * 0x9E3779B1u);
    p->wred_at_enqueue = cfg.wred_at_enqueue;
    p->icmp_on = cfg.icmp_errors && cfg.mode == fwd_mode::l3;
    p->icmp_interval = 1'000'000'000 / std::max<std::int64_t>(1, cfg.icmp_rate);
    p->icmp_tau = 49 * p->icmp_interval;
    for (std::size_t i = 0; i < ports.size(); ++i) {
        p->ports.push_back(std::make_unique<port_rt>(cfg.ports[i], ports[i], static_cast<std::uint16_t>(i), p->link));
        p->ports.back()->wred_rng.reseed(cfg.seed * 0x9E3779B97F4A7C15ULL + i);
        p->all_ports_mask |= 1ULL << i;
        const unsigned ow = port_worker.empty() ? static_cast<unsigned>(i % workers) : port_worker[i];
        if (ow >= workers) {
            return "port-worker map: port " + ports[i].name + " to worker " + std::to_string(ow) + ", accepted range 0.." +
                   std::to_string(workers - 1);
        }
        p->ports.back()->owner = static_cast<std::uint16_t>(ow);
    }
    p->multi = workers > 1;
    for (std::size_t i = 0; i < ports.size(); ++i) {
        const unsigned nq = std::max<unsigned>(1, ports[i].rx_queues);
        if (nq > workers) {
            return "port " + ports[i].name + ": " + std::to_string(nq) + " RX queues for " + std::to_string(workers) +
                   " worker(s); each RX queue of a port is polled by its own worker (give at most " +
                   std::to_string(workers) + " RX queues, or more worker lcores)";
        }
        if (nq > 1 && ports[i].io.ops != nullptr) {
            return "port " + ports[i].name + ": several RX queues need an ethdev port";
        }
    }
    p->track = !p->multi && std::all_of(ports.begin(), ports.end(),
                                        [](const dpdk::port_binding& b) { return b.io.rx_pending != nullptr; });
    p->eg_active.assign((ports.size() + 63) / 64, 0);
    for (std::size_t i = 0; i < ports.size(); ++i) { p->eg_active[i >> 6] |= std::uint64_t{1} << (i & 63); }
    p->eg_timers.reserve(ports.size());
    for (unsigned k = 0; k < workers; ++k) {
        auto w = std::make_unique<worker_rt>();
        w->id = static_cast<std::uint16_t>(k);
        for (std::size_t i = 0; i < ports.size(); ++i) {
            if (p->ports[i]->owner == k) { w->ports.push_back(static_cast<std::uint16_t>(i)); }
        }
        if (w->ports.empty()) { return "port-worker map: worker " + std::to_string(k) + " owns no port"; }
        w->rss_of_port.assign(ports.size(), -1);
        for (std::size_t i = 0; i < ports.size(); ++i) {  // RSS: queue q of port i on worker (owner + q) % workers
            for (std::uint16_t q = 1; q < std::max<std::uint16_t>(1, ports[i].rx_queues); ++q) {
                if ((p->ports[i]->owner + q) % workers != k) { continue; }
                if (p->ports[i]->owner == k) {
                    w->extra_rx.emplace_back(static_cast<std::uint16_t>(i), q);
                } else {
                    w->rss_of_port[i] = static_cast<std::int16_t>(w->rss.size());
                    w->rss.emplace_back();
                    w->rss.back().port = static_cast<std::uint16_t>(i);
                    w->rss.back().queue = q;
                    w->polls_rss = true;
                }
            }
        }
        w->c.resize(ports.size());
        w->table = std::make_unique<fdb>(64 * 1024, cfg.fdb_aging);
        if (workers > 1) {
            w->peers.resize(workers);
            for (unsigned j = 0; j < workers; ++j) {
                if (j == k) { continue; }
                auto& pr = w->peers[j];
                pr.frames = std::make_unique<spsc_queue<handoff, worker_rt::handoff_slots>>();
                pr.credits = std::make_unique<spsc_queue<credit, worker_rt::credit_slots>>();
                pr.learns = std::make_unique<spsc_queue<learn_msg, worker_rt::learn_slots>>();
                pr.rss_req = std::make_unique<spsc_queue<credit, worker_rt::rss_slots>>();
                pr.rss_grant = std::make_unique<spsc_queue<credit, worker_rt::rss_slots>>();
            }
            w->owed.assign(ports.size() * 8, 0);
            w->owed_list.reserve(ports.size() * 8);
        }
        p->workers.push_back(std::move(w));
        auto v = std::make_unique<worker_view>();
        p->views.push_back(std::move(v));
    }
    if (workers > 1) {
        for (auto& w : p->workers) {
            w->inbound.assign(workers, nullptr);
            for (unsigned j = 0; j < workers; ++j) {
                if (j != w->id) { w->inbound[j] = &p->workers[j]->peers[w->id]; }
            }
        }
    }
    // A port without an address of a family answers with the switch's first one.
    for (auto& a : p->ports) {
        for (auto& b : p->ports) {
            if (!a->has_src4 && b->has_src4) {
                a->icmp_src4 = b->icmp_src4;
                a->has_src4 = true;
            }
            if (!a->has_src6 && b->has_src6) {
                a->icmp_src6 = b->icmp_src6;
                a->has_src6 = true;
            }
        }
    }
    if (cfg.pool.enabled) {
        std::vector<std::array<pg_buffer_cfg, 8>> pgs;
        for (const auto& pc : cfg.ports) { pgs.push_back(pc.pgs); }
        const std::string err = mmu::validate(cfg.pool, static_cast<int>(pgs.size()), pgs);
        if (!err.empty()) { return "BUFFER_POOL: " + err; }
        p->buf = std::make_unique<mmu>(cfg.pool, static_cast<int>(pgs.size()), pgs);
        std::vector<std::uint16_t> owners;
        for (const auto& pr : p->ports) { owners.push_back(pr->owner); }
        p->buf->set_workers(owners, workers);
        p->rss_chunk_charge = p->buf->charge_for(worker_rt::rss_chunk);
        // Lossless traffic is limited by ingress accounting (XOFF before the
        // headroom runs out), never by egress tail drop: lift the egress limits
        // of every queue a lossless PG's traffic class maps to. The queues are
        // linked through the frames, so a lifted queue holds whatever the
        // buffer admitted (docs/architecture.md, "Lossless containers").
        for (auto& eg : p->ports) {
            for (const auto& pc : cfg.ports) {
                for (int tc = 0; tc < 8; ++tc) {
                    if (pc.pgs[pc.maps.tc_to_pg[tc]].lossless()) {
                        eg->eq.set_limits(eg->maps.tc_to_queue[tc], queue_limits{bytes{~0ULL >> 1}, ~0u});
                    }
                }
            }
        }
    }
    if (cfg.mode == fwd_mode::l3) {
        std::vector<route_port> rports;
        for (std::size_t i = 0; i < ports.size(); ++i) {
            rports.push_back(route_port{cfg.ports[i].name, cfg.ports[i].addresses, ports[i].mac, ports[i].port_id});
        }
        auto rt = dpdk::route_table::build(route_sources{rports, cfg.neighbors, cfg.routes, cfg.neigh.dynamic});
        if (auto* e = std::get_if<std::string>(&rt)) { return *e; }
        p->routes = std::make_unique<dpdk::route_table>(std::move(std::get<dpdk::route_table>(rt)));
        if (cfg.ecmp_local_bias && p->workers.size() > 1) {
            for (auto& w : p->workers) {
                const std::uint16_t id = w->id;
                w->ecmp_local = p->routes->nexthops().local_subgroups(
                    [&](std::uint16_t port) { return p->ports[port]->owner == id; });
                w->ecmp_bias = w->ecmp_local.data();
            }
        }
        p->static_neigh = cfg.neighbors;
        if (cfg.neigh.dynamic) {
            neigh_params np;
            np.capacity = cfg.neigh.max;
            np.reachable = cfg.neigh.reachable;
            np.retrans = cfg.neigh.retrans;
            np.probes = cfg.neigh.probes;
            np.gc = cfg.neigh.gc;
            np.queue = cfg.neigh.queue;
            // poll_neigh() runs every neigh_poll_interval (1 ms). Requests
            // and failures are timed per entry at each poll (within 1 ms of
            // retrans, >= 10 ms); the aging sweep covers the slots in at most
            // 64 ms, against reachable and gc times of seconds.
            np.scan = std::max<std::size_t>(64, std::bit_ceil(std::max<std::size_t>(2 * np.capacity, 8)) / 64);
            // One table per worker, for the neighbours behind its own ports
            // (neigh_max each).
            for (auto& w : p->workers) {
                w->neigh = std::make_unique<neigh_table<held_frame>>(np);
                w->neigh_list.rows.resize(w->neigh->capacity());
            }
        }
    }
    auto sp = std::unique_ptr<switch_pipeline>(new switch_pipeline(std::move(p)));
    for (std::size_t k = 0; k < sp->_p->views.size(); ++k) {
        sp->_p->views[k]->pipe = sp.get();
        sp->_p->views[k]->id = static_cast<std::uint16_t>(k);
    }
    return sp;
}

std::size_t switch_pipeline::port_count() const noexcept { return _p->ports.size(); }
const port_binding& switch_pipeline::binding(std::size_t i) const noexcept { return _p->ports[i]->b; }
port_counters switch_pipeline::counters(std::size_t i) const noexcept {
    // Every field is a uint64_t: sum them as such, each read relaxed.
    static_assert(sizeof(port_counters) % sizeof(std::uint64_t) == 0);
    constexpr std::size_t nw = sizeof(port_counters) / sizeof(std::uint64_t);
    port_counters out;
    auto* o = reinterpret_cast<std::uint64_t*>(&out);
    for (const auto& w : _p->workers) {
        const auto* c = reinterpret_cast<const std::uint64_t*>(&w->c[i]);
        for (std::size_t k = 0; k < nw; ++k) { o[k] += read_counter(c[k]); }
    }
    return out;
}
std::size_t switch_pipeline::fdb_size() const noexcept { return _p->workers[0]->table->size(); }
fdb_counters switch_pipeline::fdb_totals() const noexcept {
    // Every worker's copy of the table learns every station (its own learns
    // and the others' replayed): the writes are one copy's, worker 0's, as
    // fdb_size(); a frame is looked up by one worker only: those are summed.
    fdb_counters t;
    const fdb_counters& first = _p->workers[0]->table->counters();
#define ROCELAB_FDB_ONE(name) t.name = read_counter(first.name);
    ROCELAB_FDB_TABLE_COUNTERS(ROCELAB_FDB_ONE)
#undef ROCELAB_FDB_ONE
    for (const auto& w : _p->workers) {
        const fdb_counters& c = w->table->counters();
#define ROCELAB_FDB_ADD(name) t.name += read_counter(c.name);
        ROCELAB_FDB_LOOKUP_COUNTERS(ROCELAB_FDB_ADD)
#undef ROCELAB_FDB_ADD
    }
    return t;
}
std::size_t switch_pipeline::worker_count() const noexcept { return _p->workers.size(); }
switch_pipeline::worker_view& switch_pipeline::worker(std::size_t k) noexcept { return *_p->views[k]; }
const switch_pipeline::worker_view& switch_pipeline::worker(std::size_t k) const noexcept { return *_p->views[k]; }
std::uint16_t switch_pipeline::port_worker(std::size_t port) const noexcept { return _p->ports[port]->owner; }
std::uint16_t switch_pipeline::rx_queue_worker(std::size_t port, std::uint16_t q) const noexcept {
    return static_cast<std::uint16_t>((_p->ports[port]->owner + q) % _p->workers.size());
}
bool switch_pipeline::worker_waits(std::size_t k) const noexcept { return _p->workers[k]->waits_on_peer; }
switch_pipeline::worker_view switch_pipeline::poll_totals() const noexcept { return poll_totals_of(*this, _p->views); }

std::vector<stage_figures> switch_pipeline::stage_cycles([[maybe_unused]] std::size_t k) const {
#ifdef ROCELAB_STAGE_CYCLES
    return stage_list(_p->workers[k]->stages, stage_names);
#else
    return {};  // no stage is lapped outside a bench build
#endif
}

worker_stats switch_pipeline::worker_figures(std::size_t k) const noexcept {
    const worker_counters& s = _p->workers[k]->st;
    worker_stats o;
#define ROCELAB_WORKER_READ(name) o.name = read_counter(s.name);
    ROCELAB_WORKER_STATS(ROCELAB_WORKER_READ)
#undef ROCELAB_WORKER_READ
    return o;
}
fwd_mode switch_pipeline::mode() const noexcept { return _p->mode; }

queue_snapshot switch_pipeline::queue(std::size_t port, int q) const noexcept {
    const auto& pr = *_p->ports[port];
    const auto& st = pr.eq.stats(q);
    queue_snapshot s;
    const auto depth = pr.eq.observed_depth(q);
    s.depth_bytes = depth.b.v;
    s.depth_packets = depth.packets;
    s.max_depth_bytes = read_counter(st.depth_max_bytes);
    s.max_depth_packets = static_cast<std::uint32_t>(read_counter(st.depth_max_packets));
    s.enq_packets = read_counter(st.enq_packets);
    s.enq_bytes = read_counter(st.enq_bytes);
    s.deq_packets = read_counter(st.deq_packets);
    s.deq_bytes = read_counter(st.deq_bytes);
    s.drop_packets = read_counter(st.drop_tail_packets);
    s.drop_bytes = read_counter(st.drop_tail_bytes);
    s.flushed_packets = read_counter(st.drop_flush_packets);
    s.flushed_bytes = read_counter(st.drop_flush_bytes);
    const port_counters c = counters(port);
    s.ecn_marked = c.ecn_marked[q];
    s.wred_dropped = c.wred_dropped[q];
    s.wred = (pr.wred_mask >> q & 1u) != 0;
    s.wred_kmin = pr.wred[q].kmin.v;
    s.wred_kmax = pr.wred[q].kmax.v;
    return s;
}

std::uint64_t switch_pipeline::queued_bytes(std::size_t port, int q) const noexcept {
    return _p->ports[port]->eq.observed_depth(q).b.v;
}

std::uint8_t switch_pipeline::paused_queues(std::size_t port, nanos now) const noexcept {
    const auto& pr = *_p->ports[port];
    // paused_mask() settles expired timers; reading from another thread
    // must not do that, so compare the deadlines directly.
    std::uint8_t prio = 0;
    for (int i = 0; i < 8; ++i) {
        if (pr.pause.paused_until(i) > now) { prio |= static_cast<std::uint8_t>(1u << i); }
    }
    return pfc_paused_queues(prio, pr.maps.pfc_prio_to_queue);
}

bool switch_pipeline::buffer_accounting() const noexcept { return _p->buf != nullptr; }

pg_status switch_pipeline::pg(std::size_t port, int pgi) const noexcept {
    pg_status st;
    if (!_p->buf) { return st; }
    const pg_snapshot s = _p->buf->snapshot(static_cast<int>(port), pgi);
    st.lossless = s.lossless;
    st.xoff = s.xoff;
    st.use = s.reserved_use + s.shared_use + s.headroom_use;
    st.headroom = s.headroom_use;
    st.threshold = s.threshold;
#define ROCELAB_PG_COPY(name) st.name = s.counters.name;
    ROCELAB_SW_PG_COUNTERS(ROCELAB_PG_COPY)
#undef ROCELAB_PG_COPY
    return st;
}

std::uint64_t switch_pipeline::pg_use(std::size_t port, int pgi) const noexcept {
    return _p->buf ? _p->buf->use(static_cast<int>(port), pgi) : 0;
}
std::uint64_t switch_pipeline::pg_guaranteed(std::size_t port, int pgi) const noexcept {
    return _p->buf ? _p->buf->guaranteed(static_cast<int>(port), pgi) : 0;
}
std::uint32_t switch_pipeline::buffer_cell() const noexcept { return _p->buf ? _p->buf->cell() : 0; }
bool switch_pipeline::shared_headroom_pool() const noexcept { return _p->buf && _p->buf->shared_headroom(); }

std::uint64_t switch_pipeline::pfc_frames_sent(std::size_t port) const noexcept {
    std::uint64_t n = 0;
    for (const auto& w : _p->workers) { n += read_counter(w->c[port].tx_pfc_frames); }
    return n;
}

pfc_status switch_pipeline::pfc(std::size_t port, nanos now) const noexcept {
    const port_rt& pr = *_p->ports[port];
    const port_counters c = counters(port);
    pfc_status st;
    for (int i = 0; i < 8; ++i) {
        st.rx_frames[i] = c.rx_pfc_prio[i];
        st.paused_ns[i] = pr.pause.paused_time(i, now).v;
        if (pr.pause.paused_until(i) > now) { st.paused_prios |= static_cast<std::uint8_t>(1u << i); }
        st.xoff_sent[i] = read_counter(pr.pfc_gen.stats().xoff_sent[i]);
        st.xon_sent[i] = read_counter(pr.pfc_gen.stats().xon_sent[i]);
        st.asserted_ns[i] = pr.pfc_gen.asserted_time(i, now).v;
        if (pr.wd[i]) {
            st.wd_enabled[i] = true;
            st.wd_stormed[i] = pr.wd[i]->stormed();
            st.wd_storms[i] = pr.wd[i]->stats().storms_detected;
            st.wd_restores[i] = pr.wd[i]->stats().storms_restored;
            st.wd_tx_dropped[i] = pr.wd[i]->stats().tx_dropped;
            st.wd_rx_dropped[i] = pr.wd[i]->stats().rx_dropped;
        }
    }
    st.frames_sent = c.tx_pfc_frames;
    return st;
}

std::uint64_t switch_pipeline::pool_shared_used() const noexcept { return _p->buf ? _p->buf->pool().shared_used : 0; }
std::uint64_t switch_pipeline::pool_shared_size() const noexcept { return _p->buf ? _p->buf->pool().shared_size : 0; }
switch_pipeline::pool_figures switch_pipeline::buffer_pool() const noexcept {
    if (!_p->buf) { return {}; }
    const pool_snapshot ps = _p->buf->pool();
    pool_figures f;
#define ROCELAB_POOL_COPY(name) f.name = ps.name;
    ROCELAB_POOL_FIGURES(ROCELAB_POOL_COPY)
#undef ROCELAB_POOL_COPY
    return f;
}
bool switch_pipeline::pop_event(switch_event& e) noexcept {
    const std::size_t n = _p->workers.size();
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = (_p->event_rr + i) % n;
        if (_p->workers[k]->events.pop(e)) {
            _p->event_rr = k + 1;
            return true;
        }
    }
    return false;
}

void switch_pipeline::set_link(std::size_t port, bool up) noexcept {
    __atomic_store_n(&_p->ports[port]->link_req, static_cast<std::uint8_t>(up ? 1 : 0), __ATOMIC_RELAXED);
    __atomic_fetch_add(&_p->link_seq, 1u, __ATOMIC_RELEASE);
}

bool switch_pipeline::link_up(std::size_t port) const noexcept {
    return !__atomic_load_n(&_p->ports[port]->link_down, __ATOMIC_RELAXED);
}

std::size_t switch_pipeline::poll_link_states() noexcept {
    std::size_t changed = 0;
    for (auto& pp : _p->ports) {
        port_rt& pr = *pp;
        if (pr.b.io.ops != nullptr) { continue; }  // not an ethdev (virtual time)
        rte_eth_link l{};
        if (rte_eth_link_get_nowait(pr.b.port_id, &l) != 0) { continue; }
        const bool up = l.link_status == RTE_ETH_LINK_UP;
        if (up) { pr.seen_up = true; }
        if (!pr.seen_up) { continue; }  // never connected yet: taken as up
        const bool was = __atomic_load_n(&pr.link_req, __ATOMIC_RELAXED) != 0;
        if (was != up) {
            set_link(pr.idx, up);
            ++changed;
        }
    }
    return changed;
}

bool switch_pipeline::neigh_dynamic() const noexcept { return _p->workers[0]->neigh != nullptr; }

neigh_stats switch_pipeline::neigh_totals() const noexcept {
    neigh_stats t;
    for (const auto& w : _p->workers) {
        if (!w->neigh) { continue; }
        // The worker's own counters, live: read each, do not copy them.
        const neigh_stats& s = w->neigh->stats();
#define ROCELAB_NEIGH_ADD(name) t.name += read_counter(s.name);
        ROCELAB_NEIGH_STATS(ROCELAB_NEIGH_ADD)
#undef ROCELAB_NEIGH_ADD
    }
    return t;
}

namespace {
neigh_row dynamic_row(const neigh_listed& e, nanos reachable, nanos now) {
    neigh_row r;
    r.v6 = e.key.v6;
    r.addr = e.key.addr;
    r.port = e.port;
    r.mac = e.mac;
    neigh_state st = e.state;
    if (st == neigh_state::reachable && now.v - e.confirmed_ns >= reachable.v) { st = neigh_state::stale; }
    r.state = to_string(st);
    r.confirmed_ago_ns = e.state == neigh_state::incomplete ? -1 : now.v - e.confirmed_ns;
    r.hits = e.hits;
    r.waiting = e.n_held;
    return r;
}
}  // namespace

std::optional<std::vector<neigh_row>> switch_pipeline::neighbors_live(nanos now,
                                                                      std::chrono::milliseconds timeout) const {
    // One listing at a time: a box's rows are the answer to its last req.
    const std::lock_guard<std::mutex> lock(_p->neigh_list_mu);
    std::vector<neigh_row> out = neighbors_static();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (const auto& w : _p->workers) {
        if (!w->neigh) { continue; }
        auto& box = w->neigh_list;
        const std::uint32_t req = __atomic_add_fetch(&box.req, 1u, __ATOMIC_RELAXED);
        while (__atomic_load_n(&box.done, __ATOMIC_ACQUIRE) != req) {
            if (std::chrono::steady_clock::now() >= deadline) { return std::nullopt; }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        for (std::size_t i = 0; i < box.n; ++i) {
            out.push_back(dynamic_row(box.rows[i], w->neigh->params().reachable, now));
        }
    }
    return out;
}

std::vector<neigh_row> switch_pipeline::neighbors_static() const {
    std::vector<neigh_row> out;
    for (const neigh_cfg& n : _p->static_neigh) {
        neigh_row r;
        r.v6 = n.addr.v6;
        std::memcpy(r.addr.data(), n.addr.addr.data(), 16);
        for (std::size_t i = 0; i < _p->ports.size(); ++i) {
            if (_p->ports[i]->b.name == n.ifname) { r.port = static_cast<std::uint16_t>(i); }
        }
        r.mac = n.mac;
        r.state = "permanent";
        out.push_back(r);
    }
    return out;
}

std::vector<neigh_row> switch_pipeline::neighbors(nanos now) const {
    std::vector<neigh_row> out = neighbors_static();
    for (const auto& w : _p->workers) {
        if (!w->neigh) { continue; }
        const nanos reachable = w->neigh->params().reachable;
        w->neigh->for_each([&](const neigh_table<held_frame>::entry& e) {
            out.push_back(dynamic_row(neigh_table<held_frame>::listed(e), reachable, now));
        });
    }
    return out;
}

nanos switch_pipeline::paused_time(std::size_t port, int prio, nanos now) const noexcept {
    return _p->ports[port]->pause.paused_time(prio, now);
}

// release_all() is in switch_pipeline.cpp (it drains the workers' queues).

}  // namespace rocelab::sw
