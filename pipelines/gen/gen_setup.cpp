// gen_setup.cpp - the steps of gen_pipeline::create() (control path: it
// allocates, and explains a configuration it refuses in one message).
//
// create() (gen_pipeline.cpp) runs, in order: setup_ports, setup_flows,
// setup_collectives, setup_payload, setup_pools, setup_workers; the first
// step that refuses the configuration ends it with its message (flow sizes
// file, DCQCN without a rate, frames in flight the pools cannot hold,
// prefilled pool, worker map, planes on several workers). Also here: the
// prefilled pool's layout (prefilled_data_room, max_pmtu_of, prefill) and
// the --tx-payload names.
// Inputs: the expanded gen_cfg, the port bindings, the common mbuf pool,
// gen_tx_opts, the worker count and port -> worker map. Outputs: every
// table, ring, pool and heap the data path uses, sized here (the data path
// never allocates). Counters: none.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <atomic>

#include "config/units_parse.hpp"
#include "dpdk/tsan.hpp"
#include "gen/gen_stages.hpp"
#include "proto/icrc.hpp"
#include "roce/frame.hpp"

namespace rocelab::gen {

namespace {

// With a link delay, the frames in flight sit in this process's delay lines,
// each holding an mbuf until it is received: a window the pools cannot back
// cannot be used (the ACKs that do not fit are lost and the QP waits for its
// ACK timeout). Estimate the frames in flight per flow as
//   min(window, messages it may have outstanding x packets per message,
//       flow rate x link_delay / frame bits + 2 bursts)
// (the last term only when the rate is known), at most one ACK per data
// frame, and refuse a configuration the pools cannot hold, naming --mbufs.
std::string check_in_flight(const gen_cfg& cfg, const std::vector<bits_per_sec>& rates,
                            std::uint64_t common, std::uint64_t pf, const gen_tx_opts& opts) {
    if (cfg.link_delay.v <= 0 || opts.tx_only) {
        return {};
    }
    std::uint64_t data = 0;
    std::uint64_t acks = 0;
    std::uint32_t max_window = 0;
    for (const auto& f : cfg.flows) {
        const qp_cfg& q = f.qp;
        std::uint64_t pk = q.window;  // sizes vary: assume the window can fill
        if (f.sizes.kind == size_kind::fixed) {
            pk = packets_of(f.sizes.fixed.v, q.pmtu);
        } else if (f.sizes.kind == size_kind::uniform) {
            pk = packets_of(f.sizes.hi.v, q.pmtu);
        }
        const std::uint64_t msgs = f.arrivals.kind == arrival_kind::closed_loop ? f.arrivals.outstanding : 1024;
        std::uint64_t eff = std::min<std::uint64_t>(q.window, msgs * pk);
        const bits_per_sec r = f.rate.v != 0 ? f.rate : rates[static_cast<std::size_t>(cfg.hosts[static_cast<std::size_t>(f.src_host)].port)];
        if (r.v != 0) {
            const double frame_bits = 8.0 * (q.pmtu + 82 + 24);
            const double bdp = static_cast<double>(r.v) * static_cast<double>(cfg.link_delay.v) / 1e9 / frame_bits;
            eff = std::min<std::uint64_t>(eff, static_cast<std::uint64_t>(bdp) + 2 * max_burst);
        }
        data += eff;
        acks += (eff + q.ack_coalesce - 1) / q.ack_coalesce;
        max_window = std::max(max_window, q.window);
    }
    // Left for rx bursts, tx bursts, stocks, replies and pending frames.
    const std::uint64_t reserve = 256 + 4 * max_burst * rates.size();
    std::uint64_t need = 0;  // --mbufs needed
    if (pf != 0) {
        need = std::max(data + 64, acks + reserve);  // data from the prefilled pool, ACKs from the common one
        if (data + 64 <= pf && acks + reserve <= common) {
            return {};
        }
    } else {
        need = data + acks + reserve;
        if (need <= common) {
            return {};
        }
    }
    return "window " + std::to_string(max_window) + " with link_delay " + format_time(cfg.link_delay) + ": up to " +
           std::to_string(data) + " data frames and " + std::to_string(acks) +
           " ACKs are in flight in this process's delay lines, more than the mbuf pools hold (mbufs " +
           std::to_string(cfg.mbufs) + "); accepted: mbufs >= " + std::to_string(need) +
           " (raise --mbufs and -m), or a smaller window, outstanding or link_delay";
}

}  // namespace

const char* tx_payload_name(tx_payload m) noexcept {
    switch (m) {
        case tx_payload::build:
            return "build";
        case tx_payload::copy:
            return "copy";
        case tx_payload::prefilled:
            return "prefilled";
        case tx_payload::no_icrc:
            return "no-icrc";
    }
    return "?";
}

bool tx_payload_parse(const std::string& s, tx_payload& out) noexcept {
    for (tx_payload m : {tx_payload::build, tx_payload::copy, tx_payload::prefilled, tx_payload::no_icrc}) {
        if (s == tx_payload_name(m)) {
            out = m;
            return true;
        }
    }
    return false;
}

std::uint16_t gen_pipeline::prefilled_data_room(std::uint32_t pmtu) noexcept {
    return static_cast<std::uint16_t>(pf_payload_off + pmtu + icrc_len);
}

std::uint32_t gen_pipeline::max_pmtu_of(const gen_cfg& cfg) noexcept {
    std::uint32_t m = 256;
    for (const auto& f : cfg.flows) { m = std::max(m, f.qp.pmtu); }
    return std::min<std::uint32_t>(m, 4096);
}

// The payload pattern every generator sends (byte i = i mod 256, as
// create() fills _payload), at pf_payload_off.
void gen_pipeline::prefill(void* pmtu, rte_mbuf* m) noexcept {
    const auto len = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(pmtu));
    auto* d = static_cast<std::byte*>(m->buf_addr) + pf_payload_off;
    for (std::uint32_t i = 0; i < len; ++i) { d[i] = static_cast<std::byte>(i & 0xFF); }
}

// Ports: each port's line cap, CNP limiter, loss injectors, hosts, PFC
// sources and QPN table; the payload pattern and the DCQCN NP config.
void gen_pipeline::setup_ports(const std::vector<port_binding>& ports) {
    _room = static_cast<std::uint16_t>(rte_pktmbuf_data_room_size(_pool) - RTE_PKTMBUF_HEADROOM);
    _link_delay = _cfg.link_delay;
    for (std::size_t i = 0; i < _payload.size(); ++i) {
        _payload[i] = static_cast<std::byte>(i & 0xFF);
    }
    _ports.reserve(ports.size());
    _np_cfg = resolve_dcqcn_np(_cfg);
    for (std::size_t i = 0; i < ports.size(); ++i) {
        _ports.emplace_back();
        port_state& ps = _ports.back();
        ps.b = ports[i];
        if (_np_cfg.mode == dcqcn_np_mode::per_port) {
            ps.cnp_limiter = std::make_unique<dcqcn_cnp_limiter>(_np_cfg.min_time_between_cnps);
        }
        ps.line = shaper(ps.b.line_rate, bytes{4 * 1100}, shaper::default_overhead, _opts.pace_ahead);
        ps.loss_rng.reseed(_cfg.seed * 1000003u + i);
        ps.data_loss = loss_injector(_cfg.data_loss);
        ps.ack_loss = loss_injector(_cfg.ack_loss);
    }
    for (const auto& h : _cfg.hosts) {
        port_state& ps = _ports[static_cast<std::size_t>(h.port)];
        ps.hosts.push_back(h);
        if (h.v6) {
            ps.hosts_ip6.push_back(h.ip6);
        } else {
            ps.hosts_ip.push_back(h.ip);
        }
    }
    for (const auto& s : _cfg.pfc_sources) {
        _ports[static_cast<std::size_t>(s.port)].pfc.push_back(pfc_src_state{s, s.start.v, 0});
    }
    std::uint32_t max_qpn = 0;
    for (const auto& f : _cfg.flows) {
        max_qpn = std::max({max_qpn, f.qp.src_qpn, f.qp.dst_qpn});
    }
    for (auto& ps : _ports) {
        ps.qpn_table.assign(max_qpn + 1, -1);
    }
}

// Flows: per flow its QP (requester and responder), message source, pacer,
// DCQCN ends, addresses of both directions, CNP and QPN table entries.
std::string gen_pipeline::setup_flows() {
    _cdfs.reserve(_cfg.flows.size());
    bool all_limited = true;
    for (std::size_t i = 0; i < _cfg.flows.size(); ++i) {
        const gen_flow& f = _cfg.flows[i];
        size_dist sizes = size_dist::fixed(f.sizes.fixed);
        if (f.sizes.kind == size_kind::uniform) {
            sizes = size_dist::uniform(f.sizes.lo, f.sizes.hi);
        } else if (f.sizes.kind == size_kind::empirical) {
            std::string err;
            auto c = empirical_cdf::load(f.sizes.cdf_file, err);
            if (!c) {
                return err;
            }
            _cdfs.push_back(std::move(*c));
            sizes = size_dist::empirical(_cdfs.back());
        }
        qp_cfg rs_cfg = f.qp;
        std::swap(rs_cfg.src_qpn, rs_cfg.dst_qpn);
        // FCT samples kept per flow (reserved up front: the data path never
        // grows them; later completions count in fct_samples_dropped): the
        // flow's arrival count, else 2^18, and at most an equal share of 2^24
        // over all flows (at least 4096). Without the share the seed
        // cluster's 4032 flows reserved 8 GB of address space (2 MiB each);
        // with it, 128 MB at most.
        const std::size_t fct_share = std::max<std::size_t>(4096, (std::size_t{1} << 24) / _cfg.flows.size());
        const std::size_t fct_cap =
            std::min<std::size_t>(fct_share, f.arrivals.count != 0 ? std::min<std::uint64_t>(f.arrivals.count, 1u << 22)
                                                                   : std::size_t{1} << 18);
        const gen_host& sh = _cfg.hosts[static_cast<std::size_t>(f.src_host)];
        const gen_host& dh = _cfg.hosts[static_cast<std::size_t>(f.dst_host)];
        const bits_per_sec port_rate = _ports[static_cast<std::size_t>(sh.port)].b.line_rate;
        const bits_per_sec flow_line = f.rate.v != 0 ? f.rate : port_rate;
        // DCQCN's reaction point paces the QP below its line rate, so it
        // needs one (--rate or the driver's speed). Benchmark mode (tx-only,
        // nothing to react to) runs it on an unpaced QP to measure its cost.
        const dcqcn_cfg rp_cfg = resolve_dcqcn(_cfg, flow_line);
        if (rp_cfg.enabled && flow_line.v == 0 && !_opts.tx_only) {
            return "flow " + f.name + ": DCQCN (" + dcqcn_profile_name(_cfg.dcqcn) +
                   ") needs a line rate to pace the QP, and the port's driver reports none: give --rate "
                   "(e.g. --rate 10Gbps), or --dcqcn off";
        }
        // The requester's message table and completion ring: what can be
        // outstanding (message_slots). A collective's flows post a handful of
        // messages each: the seed cluster's 4032 flows took 280 MiB of
        // tables they never used; its closed loops (4 outstanding each) then
        // took 560 MiB and 0.5 s of set-up for 1024 slots each.
        const std::uint32_t msg_cap = message_slots(_cfg, f);
        auto fs = std::make_unique<flow_state>(f, f.qp, rs_cfg, sizes, fct_cap, rp_cfg, _np_cfg,
                                               _ports[static_cast<std::size_t>(dh.port)].cnp_limiter.get(), msg_cap);
        fs->src_port = static_cast<std::uint16_t>(sh.port);
        fs->dst_port = static_cast<std::uint16_t>(dh.port);
        fs->prio_bit = static_cast<std::uint8_t>(1u << (f.priority & 7u));
        fs->pacer = shaper(flow_line, bytes{2 * 1100}, shaper::default_overhead, _opts.pace_ahead);
        if (fs->dcqcn && !_cfg.dcqcn_trace.empty()) {
            fs->trace_store.resize(std::size_t{1} << 18);
            fs->trace = std::make_unique<dcqcn_trace_buf>(std::span<dcqcn_trace_rec>(fs->trace_store));
            fs->rp.set_trace(fs->trace.get());
        }
        // Addresses of both directions (data: source -> destination host;
        // reply: back), for the host's family.
        // A host with a gateway (an L3 switch's router MAC) sends there.
        auto ends = [&](auto& data, auto& reply, const auto& sip, const auto& dip) {
            data.src_mac = sh.mac;
            data.dst_mac = sh.gateway ? *sh.gateway : dh.mac;
            data.src_ip = sip;
            data.dst_ip = dip;
            reply.src_mac = dh.mac;
            reply.dst_mac = dh.gateway ? *dh.gateway : sh.mac;
            reply.src_ip = dip;
            reply.dst_ip = sip;
        };
        fs->v6 = sh.v6;
        if (sh.v6) {
            ends(fs->data6, fs->reply6, sh.ip6, dh.ip6);
        } else {
            ends(fs->data, fs->reply, sh.ip, dh.ip);
        }
        if (!sh.v6) {  // the replies' template: their fields but PSN, syndrome and MSN
            roce_v4_params r = fs->reply;
            fill_reply_params(rs_cfg, rx_verdict{}, r);
            if (!fs->ack.init(r)) { return "flow " + std::to_string(i) + ": cannot build its ACK template"; }
        }
        // The CNP goes from the responder's host to the requester's QP
        // (reference 1.4): DSCP cnp_dscp, Not-ECT, BECN, 16 reserved bytes.
        fs->cnp4 = make_cnp_v4(fs->reply.dst_mac, fs->reply.src_mac, fs->reply.src_ip, fs->reply.dst_ip,
                               rs_cfg.dst_qpn, _np_cfg.cnp_dscp);
        fs->cnp6 = make_cnp_v6(fs->reply6.dst_mac, fs->reply6.src_mac, fs->reply6.src_ip, fs->reply6.dst_ip,
                               rs_cfg.dst_qpn, _np_cfg.cnp_dscp);
        fs->cnp4.sport = fs->cnp6.sport = qp_udp_sport(rs_cfg);
        fs->cnp4.pcp = fs->cnp6.pcp = _np_cfg.cnp_802p_prio;
        _ports[fs->src_port].qpn_table[f.qp.src_qpn] = static_cast<std::int32_t>(i * 2);
        _ports[fs->dst_port].qpn_table[f.qp.dst_qpn] = static_cast<std::int32_t>(i * 2 + 1);
        _ports[fs->src_port].qps.push_back(static_cast<std::uint32_t>(i));
        all_limited = all_limited && f.arrivals.count != 0;
        _flows.push_back(std::move(fs));
    }
    _has_limit = all_limited;
    return {};
}

// Collectives: rings (one per plane) or alltoall, and each flow's message
// records.
void gen_pipeline::setup_collectives() {
    const std::uint32_t coll_h = _cfg.ring_hosts;
    const bool a2a = _cfg.pattern == gen_pattern::alltoall;
    const std::uint32_t planes = std::max<std::uint32_t>(_cfg.planes, 1);
    if (is_collective(_cfg.pattern) && coll_h >= 2 &&
        _cfg.flows.size() == (a2a ? std::size_t{coll_h} * (coll_h - 1) : std::size_t{coll_h} * planes)) {
        _ring = true;
        _a2a = a2a;
        _ring_steps = _cfg.ring_steps;
        _ring_servers = coll_h;
        _ring_chunk = _cfg.ring_chunk;
        _ring_limit = _cfg.ring_collectives * _cfg.ring_steps;
        _a2a_peers = coll_h - 1;
        if (!a2a) {
            // One ring per plane: plane k's flows are k * coll_h + i, server i -> i + 1.
            for (std::uint32_t k = 0; k < planes; ++k) {
                const std::uint32_t b = k * coll_h;
                for (std::uint32_t i = 0; i < coll_h; ++i) {
                    _flows[b + i]->ring_pred = b + (i + coll_h - 1) % coll_h;  // flow i-1 goes host i-1 -> host i
                    _flows[b + (i + coll_h - 1) % coll_h]->ring_succ = b + i;   // ... whose arrivals open flow i's gate
                    _flows[b + i]->plane = k;
                    _flows[b + i]->server = i;
                }
            }
            if (planes > 1) {
                _planes = planes;
                _weighted = _cfg.striping_weighted;
                _servers.resize(coll_h);
                for (auto& sv : _servers) { sv.size.assign(planes, _cfg.ring_chunk); }
            }
        }
        // Message records: every message of a limited run, else as many
        // collectives as 2^22 records over all flows hold (at least 16).
        const std::uint64_t per_flow_cap =
            std::max<std::uint64_t>(std::uint64_t{16} * _cfg.ring_steps, (std::uint64_t{1} << 22) / _flows.size());
        const std::uint64_t recs = _ring_limit != 0 ? std::min(_ring_limit, per_flow_cap) : per_flow_cap;
        for (auto& fs : _flows) {
            fs->coll_post.assign(recs, 0);
            fs->coll_done.assign(recs, 0);
        }
    }
}

// Payload tables (per length: CRC, combine operator, the hot lengths'
// combine tables) and each flow's frame templates (gen_tx.cpp).
void gen_pipeline::setup_payload() {
    // Payload CRC and combine operator per payload length (control path).
    const std::uint32_t max_pmtu = max_pmtu_of(_cfg);
    _pcrc.resize(max_pmtu + 1);
    _pop.resize(max_pmtu + 1);
    std::uint32_t run = 0;  // CRC of pattern[0..L)
    const std::byte zeros[4]{};
    for (std::uint32_t l = 0; l <= max_pmtu; ++l) {
        if (l != 0) {
            run = crc32(run, &_payload[l - 1], 1);
        }
        _pcrc[l] = crc32(run, zeros, pad_of(l));
        _pop[l] = crc32_combine_gen(l + pad_of(l));
    }
    _ctab_of.assign(max_pmtu + 1, -1);
    auto add_table = [&](std::uint32_t l) {
        if (l > max_pmtu || _ctab_of[l] >= 0 || _ctab.size() >= 16) {
            return;
        }
        combine_table t{};
        for (std::uint32_t j = 0; j < 4; ++j) {
            for (std::uint32_t v = 0; v < 256; ++v) {
                t[j][v] = crc32_combine_op(v << (8 * j), 0, _pop[l]);
            }
        }
        _ctab_of[l] = static_cast<std::int16_t>(_ctab.size());
        _ctab.push_back(t);
    };
    for (const auto& f : _cfg.flows) {
        add_table(f.qp.pmtu);
        if (f.sizes.kind == size_kind::fixed && f.sizes.fixed.v % f.qp.pmtu != 0) {
            add_table(static_cast<std::uint32_t>(f.sizes.fixed.v % f.qp.pmtu));
        }
    }
    for (auto& f : _flows) {
        f->max_frame = f->cfg.qp.pmtu + max_data_overhead;  // make_templates may know better
        if (_opts.payload != tx_payload::build) {
            make_templates(*f);
        }
    }
}

// mbufs: the frames in flight the pools must hold (check_in_flight), the
// delay lines, the prefilled pool (own or shared).
std::string gen_pipeline::setup_pools() {
    const std::uint32_t max_pmtu = max_pmtu_of(_cfg);
    const bool prefilled = _opts.payload == tx_payload::prefilled || _opts.payload == tx_payload::no_icrc;
    rte_mempool* const shared_pf = prefilled ? _opts.prefilled_pool : nullptr;
    const std::uint32_t pf_n = !prefilled ? 0 : shared_pf != nullptr ? shared_pf->size : std::max<std::uint32_t>(_cfg.mbufs, 2048);
    std::vector<bits_per_sec> rates;
    for (const auto& ps : _ports) {
        rates.push_back(ps.b.line_rate);
    }
    if (auto e = check_in_flight(_cfg, rates, _pool->size, pf_n, _opts); !e.empty()) {
        return e;
    }
    if (_cfg.link_delay.v > 0) {
        // Every frame in a delay line holds one of our mbufs: a line as large
        // as both pools never overflows.
        std::size_t cap = 1;
        while (cap < std::size_t{_pool->size} + pf_n) {
            cap <<= 1;
        }
        for (auto& ps : _ports) {
            ps.delay.resize(cap);
            ps.delay_mask = cap - 1;
        }
    }
    if (shared_pf != nullptr) {
        if (rte_pktmbuf_data_room_size(shared_pf) < prefilled_data_room(max_pmtu)) {
            return "the shared prefilled mbuf pool's data room (" + std::to_string(rte_pktmbuf_data_room_size(shared_pf)) +
                   " B) is smaller than pmtu " + std::to_string(max_pmtu) + " needs (" +
                   std::to_string(prefilled_data_room(max_pmtu)) + " B)";
        }
        _pf_pool = shared_pf;
        _pf_len = max_pmtu;
    } else if (prefilled) {
        // Frames of max_pmtu payload bytes: payload at pf_payload_off, ICRC after it.
        const std::uint32_t room = prefilled_data_room(max_pmtu);
        const std::uint32_t n = pf_n;
        // Several generators may share a process (virtual time): unique names.
        static std::atomic<unsigned> pools{0};
        std::string pool_name = "rocelab_gen_pf";
        pool_name += std::to_string(pools.fetch_add(1));
        // The handler every mbuf pool takes (dpdk/tsan.hpp: lock-free when
        // workers share a CPU): the requester's worker allocates, the
        // responder's frees.
        _pf_pool = rte_pktmbuf_pool_create_by_ops(pool_name.c_str(), n, 256, 0, static_cast<std::uint16_t>(room),
                                                  static_cast<int>(rte_socket_id()), dpdk::mbuf_pool_ops());
        if (_pf_pool == nullptr) {
            return "cannot create the prefilled mbuf pool (" + std::to_string(n) + " mbufs): raise -m, lower "
                   "--mbufs or use --tx-payload copy";
        }
        _pf_owned = true;
        _pf_len = max_pmtu;
        rte_mempool_obj_iter(
            _pf_pool,
            [](rte_mempool*, void* arg, void* obj, unsigned) { prefill(arg, static_cast<rte_mbuf*>(obj)); },
            reinterpret_cast<void*>(static_cast<std::uintptr_t>(max_pmtu)));
    }
    return {};
}

// Workers: ports partitioned, each side of a flow served by the worker
// that owns its port; scheduling state; the ports' ready sets.
std::string gen_pipeline::setup_workers(unsigned workers, const std::vector<unsigned>& port_worker) {
    // Workers: ports partitioned, each side of a flow served by the owner of its port.
    if (workers == 0) { workers = 1; }
    if (workers > _ports.size()) {
        return std::to_string(workers) + " worker lcores for " + std::to_string(_ports.size()) +
               " ports: each worker owns at least one port (give at most " + std::to_string(_ports.size()) +
               " worker lcores)";
    }
    if (!port_worker.empty() && port_worker.size() != _ports.size()) {
        return "port-worker map: " + std::to_string(port_worker.size()) + " entries for " +
               std::to_string(_ports.size()) + " ports";
    }
    for (std::size_t i = 0; i < _ports.size(); ++i) {
        const unsigned ow = port_worker.empty() ? static_cast<unsigned>(i % workers) : port_worker[i];
        if (ow >= workers) {
            return "port-worker map: port " + std::to_string(i) + " to worker " + std::to_string(ow) +
                   ", accepted range 0.." + std::to_string(workers - 1);
        }
        _owner.push_back(static_cast<std::uint16_t>(ow));
    }
    for (unsigned k = 0; k < workers; ++k) {
        auto w = std::make_unique<worker_state>();
        w->id = static_cast<std::uint16_t>(k);
        // Worker 0 draws what one worker always drew.
        w->arrivals_rng.reseed(_cfg.seed + 0x9E3779B97F4A7C15ULL * k);
        for (std::size_t i = 0; i < _ports.size(); ++i) {
            if (_owner[i] == k) { w->ports.push_back(static_cast<std::uint16_t>(i)); }
        }
        if (w->ports.empty()) { return "port-worker map: worker " + std::to_string(k) + " owns no port"; }
        for (std::size_t fi = 0; fi < _flows.size(); ++fi) {
            const flow_state& f = *_flows[fi];
            flow_ref r{static_cast<std::uint32_t>(fi), _owner[f.src_port] == k, _owner[f.dst_port] == k};
            if (r.req || r.resp) { w->flows.push_back(r); }
        }
        _workers.push_back(std::move(w));
        auto v = std::make_unique<worker_view>();
        v->pipe = this;
        v->id = static_cast<std::uint16_t>(k);
        _views.push_back(std::move(v));
    }
    // Scheduling state: each side's ref, the QP slots; the first poll
    // services every flow (as every poll once did).
    for (auto& wp : _workers) {
        worker_state& w = *wp;
        w.timers.reserve(w.flows.size());
        w.svc.assign((w.flows.size() + 63) / 64, 0);
        for (std::uint32_t r = 0; r < w.flows.size(); ++r) {
            flow_state& f = *_flows[w.flows[r].flow];
            if (w.flows[r].req) {
                f.req_ref = r;
                f.req_worker = w.id;
                w.unfinished += _has_limit ? 1u : 0u;
            }
            if (w.flows[r].resp) {
                f.resp_ref = r;
                f.resp_worker = w.id;
            }
            w.svc[r >> 6] |= std::uint64_t{1} << (r & 63);
        }
    }
    // Planes: a server's flows are read together at its gates (its
    // requesters, and the responders of the flows that feed them), so one
    // worker must own all of its ports.
    for (std::uint32_t i = 0; i < _servers.size(); ++i) {
        const std::uint32_t n = _ring_servers;
        const unsigned w0 = _owner[_flows[i]->src_port];
        for (std::uint32_t k = 0; k < _planes; ++k) {
            const flow_state& b = *_flows[k * n + i];
            if (_owner[b.src_port] != w0 || _owner[_flows[b.ring_pred]->dst_port] != w0) {
                return "planes " + std::to_string(_planes) + ": server " + std::to_string(i) +
                       "'s NIC ports are on different workers; one worker must own all of a server's ports";
            }
        }
    }
    for (auto& ps : _ports) {
        ps.ready.assign((ps.qps.size() + 63) / 64, 0);
        ps.pace.reserve(ps.qps.size());
        for (std::uint32_t slot = 0; slot < ps.qps.size(); ++slot) {
            _flows[ps.qps[slot]]->qp_slot = slot;
            ps.qp_prios |= _flows[ps.qps[slot]]->prio_bit;
        }
    }
    return {};
}

}  // namespace rocelab::gen
