// gen_pipeline.cpp - see gen_pipeline.hpp.
#include "gen/gen_pipeline.hpp"
#include "qos/credit.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "config/units_parse.hpp"
#include "dpdk/capture.hpp"
#include "port_burst.hpp"
#include "fwd/arp_nd.hpp"
#include "proto/arp.hpp"
#include "proto/icrc.hpp"
#include "proto/mac_control.hpp"
#include "roce/frame.hpp"

namespace rocelab::gen {

namespace {

// An unpaced QP's key in its port's pace heap: it may send whenever the line
// lets it, so it sorts before every paced one.
constexpr nanos unpaced_key{INT64_MIN / 2};

template <typename T>
inline void bump(T& c, T by = 1) noexcept {
    // Single writer (this lcore); relaxed store so readers never see a torn value.
    __atomic_store_n(&c, c + by, __ATOMIC_RELAXED);
}

inline std::byte* mdata(rte_mbuf* m) noexcept { return rte_pktmbuf_mtod(m, std::byte*); }

constexpr std::uint32_t pad_of(std::uint32_t payload) noexcept { return (4u - (payload & 3u)) & 3u; }

// Buffer offset of the payload in a prefilled mbuf: headroom + room for the
// largest data header (Ethernet + 802.1Q + IPv4 + UDP + BTH + RETH + ImmDt = 82).
constexpr std::uint32_t pf_payload_off = RTE_PKTMBUF_HEADROOM + 96;

// Ethernet [+ VLAN] | IPv4 or IPv6 | UDP | BTH | extended headers of a data
// packet; returns the header length, or 0 for opcodes with headers other
// than RETH/ImmDt.
template <class Params>
std::uint32_t data_hdr_len(const Params& p) noexcept {
    const std::uint16_t h = roce_opcode_lookup(p.bth.opcode).hdrs;
    if ((h & ~(roce_hdr::reth | roce_hdr::immdt)) != 0) {
        return 0;
    }
    constexpr std::uint32_t ip = std::is_same_v<Params, roce_v6_params> ? ipv6_hdr_len : ipv4_min_hdr_len;
    return eth_hdr_len + (p.vlan_id >= 0 ? vlan_tag_len : 0) + ip + udp_hdr_len + bth_len +
           roce_opcode_lookup(p.bth.opcode).ext_len;
}

void write_data_hdrs(std::byte* out, const roce_v4_params& p, std::uint32_t hdr_len, std::uint32_t len) noexcept {
    const std::uint32_t l2 = eth_hdr_len + (p.vlan_id >= 0 ? vlan_tag_len : 0);
    const auto udp_len = static_cast<std::uint16_t>(hdr_len - l2 - ipv4_min_hdr_len + len + pad_of(len) + icrc_len);
    std::byte* q = write_roce_v4_hdrs(out, p, udp_len);
    bth_fields bth = p.bth;
    bth.pad_count = static_cast<std::uint8_t>(pad_of(len));
    q += write_bth(q, bth);
    const std::uint16_t hs = roce_opcode_lookup(p.bth.opcode).hdrs;
    if (hs & roce_hdr::reth) {
        q += write_reth(q, p.ext.reth);
    }
    if (hs & roce_hdr::immdt) {
        store_be32(q, p.ext.immdt);
    }
}

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

std::variant<std::unique_ptr<gen_pipeline>, std::string> gen_pipeline::create(const gen_cfg& cfg,
                                                                              std::vector<port_binding> ports,
                                                                              rte_mempool* pool,
                                                                              gen_tx_opts opts, unsigned workers,
                                                                              const std::vector<unsigned>& port_worker) {
    std::unique_ptr<gen_pipeline> p(new gen_pipeline());
    p->_cfg = cfg;
    p->_pool = pool;
    p->_opts = opts;
    p->_room = static_cast<std::uint16_t>(rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM);
    p->_link_delay = cfg.link_delay;
    for (std::size_t i = 0; i < p->_payload.size(); ++i) {
        p->_payload[i] = static_cast<std::byte>(i & 0xFF);
    }
    p->_ports.reserve(ports.size());
    p->_np_cfg = resolve_dcqcn_np(cfg);
    for (std::size_t i = 0; i < ports.size(); ++i) {
        p->_ports.emplace_back();
        port_state& ps = p->_ports.back();
        ps.b = ports[i];
        if (p->_np_cfg.mode == dcqcn_np_mode::per_port) {
            ps.cnp_limiter = std::make_unique<dcqcn_cnp_limiter>(p->_np_cfg.min_time_between_cnps);
        }
        ps.line = shaper(ps.b.line_rate, bytes{4 * 1100});
        ps.loss_rng.reseed(cfg.seed * 1000003u + i);
        ps.data_loss = loss_injector(cfg.data_loss);
        ps.ack_loss = loss_injector(cfg.ack_loss);
    }
    for (const auto& h : cfg.hosts) {
        port_state& ps = p->_ports[static_cast<std::size_t>(h.port)];
        ps.hosts.push_back(h);
        if (h.v6) {
            ps.hosts_ip6.push_back(h.ip6);
        } else {
            ps.hosts_ip.push_back(h.ip);
        }
    }
    for (const auto& s : cfg.pfc_sources) {
        p->_ports[static_cast<std::size_t>(s.port)].pfc.push_back(pfc_src_state{s, s.start.v, 0});
    }
    std::uint32_t max_qpn = 0;
    for (const auto& f : cfg.flows) {
        max_qpn = std::max({max_qpn, f.qp.src_qpn, f.qp.dst_qpn});
    }
    for (auto& ps : p->_ports) {
        ps.qpn_table.assign(max_qpn + 1, -1);
    }
    p->_cdfs.reserve(cfg.flows.size());
    bool all_limited = true;
    for (std::size_t i = 0; i < cfg.flows.size(); ++i) {
        const gen_flow& f = cfg.flows[i];
        size_dist sizes = size_dist::fixed(f.sizes.fixed);
        if (f.sizes.kind == size_kind::uniform) {
            sizes = size_dist::uniform(f.sizes.lo, f.sizes.hi);
        } else if (f.sizes.kind == size_kind::empirical) {
            std::string err;
            auto c = empirical_cdf::load(f.sizes.cdf_file, err);
            if (!c) {
                return err;
            }
            p->_cdfs.push_back(std::move(*c));
            sizes = size_dist::empirical(p->_cdfs.back());
        }
        qp_cfg rs_cfg = f.qp;
        std::swap(rs_cfg.src_qpn, rs_cfg.dst_qpn);
        // FCT samples kept per flow (reserved up front: the data path never
        // grows them; later completions count in fct_samples_dropped): the
        // flow's arrival count, else 2^18, and at most an equal share of 2^24
        // over all flows (at least 4096). Without the share the seed
        // cluster's 4032 flows reserved 8 GB of address space (2 MiB each);
        // with it, 128 MB at most.
        const std::size_t fct_share = std::max<std::size_t>(4096, (std::size_t{1} << 24) / cfg.flows.size());
        const std::size_t fct_cap =
            std::min<std::size_t>(fct_share, f.arrivals.count != 0 ? std::min<std::uint64_t>(f.arrivals.count, 1u << 22)
                                                                   : std::size_t{1} << 18);
        const gen_host& sh = cfg.hosts[static_cast<std::size_t>(f.src_host)];
        const gen_host& dh = cfg.hosts[static_cast<std::size_t>(f.dst_host)];
        const bits_per_sec port_rate = p->_ports[static_cast<std::size_t>(sh.port)].b.line_rate;
        const bits_per_sec flow_line = f.rate.v != 0 ? f.rate : port_rate;
        // DCQCN's reaction point paces the QP below its line rate, so it
        // needs one (--rate or the driver's speed). Benchmark mode (tx-only,
        // nothing to react to) runs it on an unpaced QP to measure its cost.
        const dcqcn_cfg rp_cfg = resolve_dcqcn(cfg, flow_line);
        if (rp_cfg.enabled && flow_line.v == 0 && !opts.tx_only) {
            return "flow " + f.name + ": DCQCN (" + dcqcn_profile_name(cfg.dcqcn) +
                   ") needs a line rate to pace the QP, and the port's driver reports none: give --rate "
                   "(e.g. --rate 10Gbps), or --dcqcn off";
        }
        auto fs = std::make_unique<flow_state>(f, f.qp, rs_cfg, sizes, fct_cap, rp_cfg, p->_np_cfg,
                                               p->_ports[static_cast<std::size_t>(dh.port)].cnp_limiter.get());
        fs->src_port = static_cast<std::uint16_t>(sh.port);
        fs->dst_port = static_cast<std::uint16_t>(dh.port);
        fs->prio_bit = static_cast<std::uint8_t>(1u << (f.priority & 7u));
        fs->pacer = shaper(flow_line, bytes{2 * 1100});
        if (fs->dcqcn && !cfg.dcqcn_trace.empty()) {
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
        // The CNP goes from the responder's host to the requester's QP
        // (reference 1.4): DSCP cnp_dscp, Not-ECT, BECN, 16 reserved bytes.
        fs->cnp4 = make_cnp_v4(fs->reply.dst_mac, fs->reply.src_mac, fs->reply.src_ip, fs->reply.dst_ip,
                               rs_cfg.dst_qpn, p->_np_cfg.cnp_dscp);
        fs->cnp6 = make_cnp_v6(fs->reply6.dst_mac, fs->reply6.src_mac, fs->reply6.src_ip, fs->reply6.dst_ip,
                               rs_cfg.dst_qpn, p->_np_cfg.cnp_dscp);
        fs->cnp4.sport = fs->cnp6.sport = qp_udp_sport(rs_cfg);
        fs->cnp4.pcp = fs->cnp6.pcp = p->_np_cfg.cnp_802p_prio;
        p->_ports[fs->src_port].qpn_table[f.qp.src_qpn] = static_cast<std::int32_t>(i * 2);
        p->_ports[fs->dst_port].qpn_table[f.qp.dst_qpn] = static_cast<std::int32_t>(i * 2 + 1);
        p->_ports[fs->src_port].qps.push_back(static_cast<std::uint32_t>(i));
        all_limited = all_limited && f.arrivals.count != 0;
        p->_flows.push_back(std::move(fs));
    }
    p->_has_limit = all_limited;
    const std::uint32_t coll_h = cfg.ring_hosts;
    const bool a2a = cfg.pattern == gen_pattern::alltoall;
    const std::uint32_t planes = std::max<std::uint32_t>(cfg.planes, 1);
    if (is_collective(cfg.pattern) && coll_h >= 2 &&
        cfg.flows.size() == (a2a ? std::size_t{coll_h} * (coll_h - 1) : std::size_t{coll_h} * planes)) {
        p->_ring = true;
        p->_a2a = a2a;
        p->_ring_steps = cfg.ring_steps;
        p->_ring_servers = coll_h;
        p->_ring_chunk = cfg.ring_chunk;
        p->_ring_limit = cfg.ring_collectives * cfg.ring_steps;
        p->_a2a_peers = coll_h - 1;
        if (!a2a) {
            // One ring per plane: plane k's flows are k * coll_h + i, server i -> i + 1.
            for (std::uint32_t k = 0; k < planes; ++k) {
                const std::uint32_t b = k * coll_h;
                for (std::uint32_t i = 0; i < coll_h; ++i) {
                    p->_flows[b + i]->ring_pred = b + (i + coll_h - 1) % coll_h;  // flow i-1 goes host i-1 -> host i
                    p->_flows[b + (i + coll_h - 1) % coll_h]->ring_succ = b + i;   // ... whose arrivals open flow i's gate
                    p->_flows[b + i]->plane = k;
                    p->_flows[b + i]->server = i;
                }
            }
            if (planes > 1) {
                p->_planes = planes;
                p->_weighted = cfg.striping_weighted;
                p->_servers.resize(coll_h);
                for (auto& sv : p->_servers) { sv.size.assign(planes, cfg.ring_chunk); }
            }
        }
        // Message records: every message of a limited run, else as many
        // collectives as 2^22 records over all flows hold (at least 16).
        const std::uint64_t per_flow_cap =
            std::max<std::uint64_t>(std::uint64_t{16} * cfg.ring_steps, (std::uint64_t{1} << 22) / p->_flows.size());
        const std::uint64_t recs = p->_ring_limit != 0 ? std::min(p->_ring_limit, per_flow_cap) : per_flow_cap;
        for (auto& fs : p->_flows) {
            fs->coll_post.assign(recs, 0);
            fs->coll_done.assign(recs, 0);
        }
    }

    // Payload CRC and combine operator per payload length (control path).
    const std::uint32_t max_pmtu = max_pmtu_of(cfg);
    p->_pcrc.resize(max_pmtu + 1);
    p->_pop.resize(max_pmtu + 1);
    std::uint32_t run = 0;  // CRC of pattern[0..L)
    const std::byte zeros[4]{};
    for (std::uint32_t l = 0; l <= max_pmtu; ++l) {
        if (l != 0) {
            run = crc32(run, &p->_payload[l - 1], 1);
        }
        p->_pcrc[l] = crc32(run, zeros, pad_of(l));
        p->_pop[l] = crc32_combine_gen(l + pad_of(l));
    }
    p->_ctab_of.assign(max_pmtu + 1, -1);
    auto add_table = [&](std::uint32_t l) {
        if (l > max_pmtu || p->_ctab_of[l] >= 0 || p->_ctab.size() >= 16) {
            return;
        }
        combine_table t{};
        for (std::uint32_t j = 0; j < 4; ++j) {
            for (std::uint32_t v = 0; v < 256; ++v) {
                t[j][v] = crc32_combine_op(v << (8 * j), 0, p->_pop[l]);
            }
        }
        p->_ctab_of[l] = static_cast<std::int16_t>(p->_ctab.size());
        p->_ctab.push_back(t);
    };
    for (const auto& f : cfg.flows) {
        add_table(f.qp.pmtu);
        if (f.sizes.kind == size_kind::fixed && f.sizes.fixed.v % f.qp.pmtu != 0) {
            add_table(static_cast<std::uint32_t>(f.sizes.fixed.v % f.qp.pmtu));
        }
    }
    if (opts.payload != tx_payload::build) {
        for (auto& f : p->_flows) {
            p->make_templates(*f);
        }
    }
    const bool prefilled = opts.payload == tx_payload::prefilled || opts.payload == tx_payload::no_icrc;
    rte_mempool* const shared_pf = prefilled ? opts.prefilled_pool : nullptr;
    const std::uint32_t pf_n = !prefilled ? 0 : shared_pf != nullptr ? shared_pf->size : std::max<std::uint32_t>(cfg.mbufs, 2048);
    std::vector<bits_per_sec> rates;
    for (const auto& ps : p->_ports) {
        rates.push_back(ps.b.line_rate);
    }
    if (auto e = check_in_flight(cfg, rates, pool->size, pf_n, opts); !e.empty()) {
        return e;
    }
    if (cfg.link_delay.v > 0) {
        // Every frame in a delay line holds one of our mbufs: a line as large
        // as both pools never overflows.
        std::size_t cap = 1;
        while (cap < std::size_t{pool->size} + pf_n) {
            cap <<= 1;
        }
        for (auto& ps : p->_ports) {
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
        p->_pf_pool = shared_pf;
        p->_pf_len = max_pmtu;
    } else if (prefilled) {
        // Frames of max_pmtu payload bytes: payload at pf_payload_off, ICRC after it.
        const std::uint32_t room = prefilled_data_room(max_pmtu);
        const std::uint32_t n = pf_n;
        // Several generators may share a process (virtual time): unique names.
        static std::atomic<unsigned> pools{0};
        std::string pool_name = "rocelab_gen_pf";
        pool_name += std::to_string(pools.fetch_add(1));
        p->_pf_pool = rte_pktmbuf_pool_create(pool_name.c_str(), n, 256, 0, static_cast<std::uint16_t>(room),
                                              static_cast<int>(rte_socket_id()));
        if (p->_pf_pool == nullptr) {
            return "cannot create the prefilled mbuf pool (" + std::to_string(n) + " mbufs): raise -m, lower "
                   "--mbufs or use --tx-payload copy";
        }
        p->_pf_owned = true;
        p->_pf_len = max_pmtu;
        rte_mempool_obj_iter(
            p->_pf_pool,
            [](rte_mempool*, void* arg, void* obj, unsigned) { prefill(arg, static_cast<rte_mbuf*>(obj)); },
            reinterpret_cast<void*>(static_cast<std::uintptr_t>(max_pmtu)));
    }
    // Workers: ports partitioned, each side of a flow served by the owner of its port.
    if (workers == 0) { workers = 1; }
    if (workers > ports.size()) {
        return std::to_string(workers) + " worker lcores for " + std::to_string(ports.size()) +
               " ports: each worker owns at least one port (give at most " + std::to_string(ports.size()) +
               " worker lcores)";
    }
    if (!port_worker.empty() && port_worker.size() != ports.size()) {
        return "port-worker map: " + std::to_string(port_worker.size()) + " entries for " +
               std::to_string(ports.size()) + " ports";
    }
    for (std::size_t i = 0; i < ports.size(); ++i) {
        const unsigned ow = port_worker.empty() ? static_cast<unsigned>(i % workers) : port_worker[i];
        if (ow >= workers) {
            return "port-worker map: port " + std::to_string(i) + " to worker " + std::to_string(ow) +
                   ", accepted range 0.." + std::to_string(workers - 1);
        }
        p->_owner.push_back(static_cast<std::uint16_t>(ow));
    }
    for (unsigned k = 0; k < workers; ++k) {
        auto w = std::make_unique<worker_state>();
        w->id = static_cast<std::uint16_t>(k);
        // Worker 0 draws what one worker always drew.
        w->arrivals_rng.reseed(cfg.seed + 0x9E3779B97F4A7C15ULL * k);
        for (std::size_t i = 0; i < ports.size(); ++i) {
            if (p->_owner[i] == k) { w->ports.push_back(static_cast<std::uint16_t>(i)); }
        }
        if (w->ports.empty()) { return "port-worker map: worker " + std::to_string(k) + " owns no port"; }
        for (std::size_t fi = 0; fi < p->_flows.size(); ++fi) {
            const flow_state& f = *p->_flows[fi];
            flow_ref r{static_cast<std::uint32_t>(fi), p->_owner[f.src_port] == k, p->_owner[f.dst_port] == k};
            if (r.req || r.resp) { w->flows.push_back(r); }
        }
        p->_workers.push_back(std::move(w));
        auto v = std::make_unique<worker_view>();
        v->pipe = p.get();
        v->id = static_cast<std::uint16_t>(k);
        p->_views.push_back(std::move(v));
    }
    // Scheduling state: each side's ref, the QP slots; the first poll
    // services every flow (as every poll once did).
    for (auto& wp : p->_workers) {
        worker_state& w = *wp;
        w.timers.reserve(w.flows.size());
        w.svc.assign((w.flows.size() + 63) / 64, 0);
        for (std::uint32_t r = 0; r < w.flows.size(); ++r) {
            flow_state& f = *p->_flows[w.flows[r].flow];
            if (w.flows[r].req) {
                f.req_ref = r;
                f.req_worker = w.id;
                w.unfinished += p->_has_limit ? 1u : 0u;
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
    for (std::uint32_t i = 0; i < p->_servers.size(); ++i) {
        const std::uint32_t n = p->_ring_servers;
        const unsigned w0 = p->_owner[p->_flows[i]->src_port];
        for (std::uint32_t k = 0; k < p->_planes; ++k) {
            const flow_state& b = *p->_flows[k * n + i];
            if (p->_owner[b.src_port] != w0 || p->_owner[p->_flows[b.ring_pred]->dst_port] != w0) {
                return "planes " + std::to_string(p->_planes) + ": server " + std::to_string(i) +
                       "'s NIC ports are on different workers; one worker must own all of a server's ports";
            }
        }
    }
    for (auto& ps : p->_ports) {
        ps.ready.assign((ps.qps.size() + 63) / 64, 0);
        ps.pace.reserve(ps.qps.size());
        for (std::uint32_t slot = 0; slot < ps.qps.size(); ++slot) {
            p->_flows[ps.qps[slot]]->qp_slot = slot;
            ps.qp_prios |= p->_flows[ps.qps[slot]]->prio_bit;
        }
    }
    return p;
}

gen_pipeline::~gen_pipeline() {
    release_all();
    if (_pf_owned) {
        rte_mempool_free(_pf_pool);
    }
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

void gen_pipeline::make_templates(flow_state& f) {
    const qp_cfg& q = f.cfg.qp;
    if (f.cfg.sizes.kind != size_kind::fixed || f.cfg.sizes.fixed.v == 0 || f.cfg.sizes.fixed.v > (1u << 31)) {
        return;  // sizes vary: every frame takes the generic path
    }
    const auto msg = static_cast<std::uint32_t>(f.cfg.sizes.fixed.v);
    const std::uint32_t last_len = msg % q.pmtu != 0 ? msg % q.pmtu : q.pmtu;
    std::vector<std::byte> buf(8192);
    std::vector<std::byte> zeros(8192);
    for (int kind = 0; kind < 4; ++kind) {
        const bool first = kind == 0 || kind == 3;
        const bool last = kind >= 2;
        if ((msg <= q.pmtu) != (kind == 3)) {
            continue;  // ONLY exactly when the message fits one packet
        }
        tx_desc d;
        d.msg_size = msg;
        d.len = last ? last_len : q.pmtu;
        d.psn = 0;
        d.opcode = rc_opcode(q.family, first, last);
        d.ack_req = false;
        roce_v4_params prm = f.data;
        fill_data_params(q, d, std::span<const std::byte>(_payload.data(), d.len), prm);
        prm.ip_id = 0;
        std::uint32_t hl;
        std::uint32_t flen;
        const std::uint32_t ipl = f.v6 ? ipv6_hdr_len : ipv4_min_hdr_len;
        if (f.v6) {
            roce_v6_params p6 = f.data6;
            fill_data_params(q, d, std::span<const std::byte>(_payload.data(), d.len), p6);
            hl = data_hdr_len(p6);
            flen = build_roce_v6(std::span<std::byte>(buf.data(), buf.size()), p6);
        } else {
            hl = data_hdr_len(prm);
            flen = build_roce_v4(std::span<std::byte>(buf.data(), buf.size()), prm);
        }
        const std::uint32_t covered = hl + d.len + pad_of(d.len);  // Ethernet .. pad
        if (hl == 0 || hl > 96 || d.len >= _pcrc.size() || flen != covered + icrc_len) {
            continue;  // short frames padded to 60 bytes, unusual opcodes: generic path
        }
        frame_tpl& t = f.tpl[static_cast<std::size_t>(kind)];
        std::memcpy(t.hdr.data(), buf.data(), hl);
        t.l2 = static_cast<std::uint8_t>(prm.vlan_id < 0 ? eth_hdr_len : eth_hdr_len + vlan_tag_len);
        t.len = d.len;
        t.msg_size = msg;
        t.icrc0 = icrc_load(buf.data() + covered);
        t.ipl = static_cast<std::uint8_t>(ipl);
        t.csum0 = f.v6 ? 0 : load_be16(buf.data() + t.l2 + 10);
        if (f.v6) {
            std::vector<std::byte> z(buf.begin(), buf.begin() + flen);
            std::memset(z.data() + covered, 0, icrc_len);  // PSN and AckReq are 0 already
            t.usum = static_cast<std::uint16_t>(~ipv6_udp_checksum(z.data() + t.l2));
        }
        // Contribution of byte value v at `pos` (frame offset) to the ICRC:
        // the CRC is affine over a fixed length, so it is the CRC of v followed
        // by the bytes up to the ICRC, xor the CRC of as many zeros.
        auto contrib = [&](std::uint32_t pos, std::uint32_t v) {
            const std::uint32_t dist = covered - pos;
            zeros[0] = std::byte(v);
            const std::uint32_t a = crc32(0, zeros.data(), dist);
            zeros[0] = std::byte{0};
            return a ^ crc32(0, zeros.data(), dist);
        };
        const std::uint32_t bth = t.l2 + ipl + udp_hdr_len;
        t.ackc = contrib(bth + 8, 0x80);
        const std::pair<std::uint32_t, std::uint32_t> key{hl | (f.v6 ? 0x10000u : 0u), d.len};
        std::size_t ti = 0;
        while (ti < _ptab_key.size() && _ptab_key[ti] != key) {
            ++ti;
        }
        if (ti == _ptab_key.size()) {
            // PSN bytes at BTH+9..11; the IPv4 id (PSN & 0xFFFF) at IP+4..5
            // (IPv6 has no id: the PSN alone).
            psn_table pt{};
            const std::uint32_t id_hi = f.v6 ? 0 : t.l2 + 4u;
            const std::uint32_t id_lo = f.v6 ? 0 : t.l2 + 5u;
            const std::uint32_t pos[3][2] = {{bth + 9, 0}, {bth + 10, id_hi}, {bth + 11, id_lo}};
            for (std::size_t b = 0; b < 3; ++b) {
                std::uint32_t bit[8];
                for (std::uint32_t k = 0; k < 8; ++k) {
                    bit[k] = contrib(pos[b][0], 1u << k) ^ (pos[b][1] != 0 ? contrib(pos[b][1], 1u << k) : 0);
                }
                for (std::uint32_t v = 0; v < 256; ++v) {
                    std::uint32_t x = 0;
                    for (std::uint32_t k = 0; k < 8; ++k) {
                        x ^= (v >> k) & 1u ? bit[k] : 0;
                    }
                    pt[b][v] = x;
                }
            }
            _ptab.push_back(pt);
            _ptab_key.push_back(key);
        }
        t.tab = static_cast<std::uint16_t>(ti);
        t.hl = static_cast<std::uint8_t>(hl);
    }
}

bool gen_pipeline::refill(stock& s, rte_mempool* mp) noexcept {
    if (s.n != 0) {
        return true;
    }
    if (rte_pktmbuf_alloc_bulk(mp, s.m.data(), max_burst) == 0) {
        s.n = max_burst;
        return true;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(mp);  // nearly empty pool: one at a time
    if (m == nullptr) {
        return false;
    }
    s.m[0] = m;
    s.n = 1;
    return true;
}

std::uint32_t gen_pipeline::icrc_of(const std::byte* l3, std::uint32_t hdr_len, std::uint32_t len) const noexcept {
    const std::int16_t t = _ctab_of[len];
    if (t < 0) {
        return roce_icrc_with_payload_crc_op(l3, hdr_len, false, _pcrc[len], _pop[len]);
    }
    const combine_table& c = _ctab[static_cast<std::size_t>(t)];
    const std::uint32_t h = roce_icrc(l3, hdr_len, false);
    return c[0][h & 0xFF] ^ c[1][(h >> 8) & 0xFF] ^ c[2][(h >> 16) & 0xFF] ^ c[3][h >> 24] ^ _pcrc[len];
}

// The received frame's ICRC, checked. A data frame whose payload is the
// pattern every generator sends (checked byte for byte, pad included) has
// the payload's CRC known (_pcrc), so only its headers are run through the
// CRC and combined with it, as at TX: the same verdict as a CRC over the
// whole datagram (CRC is linear), for ~60 bytes instead of the PMTU. Any
// other frame (an ACK, a CNP, another payload) takes the full CRC.
bool gen_pipeline::icrc_ok(const std::byte* frame, const parsed_frame& pf) const noexcept {
    const std::uint32_t len = pf.roce_payload_len;
    if (len == 0 || len >= _pcrc.size() || pf.kind != frame_kind::ipv4 ||
        !roce_payload_is(frame, pf, std::span<const std::byte>(_payload.data(), len))) {
        return roce_frame_icrc_ok(frame, pf);
    }
    const std::uint32_t got = icrc_load(frame + pf.l4_off + pf.l4_len - icrc_len);
    return icrc_of(frame + pf.l3_off, static_cast<std::uint32_t>(pf.roce_payload_off - pf.l3_off), len) == got;
}

std::uint64_t gen_pipeline::own_mbufs_in_use() const noexcept {
    return _pf_owned ? rte_mempool_in_use_count(_pf_pool) : 0;
}

rte_mbuf* gen_pipeline::build_data(flow_state& f, const tx_desc& d, port_state& ps) noexcept {
    const bool first = d.offset == 0;
    const bool last = d.offset + d.len >= d.msg_size;
    const frame_tpl& t = f.tpl[first ? (last ? 3 : 0) : (last ? 2 : 1)];
    if (t.hl != 0 && t.len == d.len && t.msg_size == d.msg_size) {
        rte_mbuf* m;
        std::byte* fr;
        if (_pf_pool != nullptr && d.len == _pf_len && refill(ps.pf_stk, _pf_pool)) {
            // Payload already in place at pf_payload_off: headers before it, ICRC after it.
            m = ps.pf_stk.m[--ps.pf_stk.n];
            m->data_off = static_cast<std::uint16_t>(pf_payload_off - t.hl);
            fr = mdata(m);
            bump(ps.c.tx_prefilled);
        } else {
            m = ps.stk.m[--ps.stk.n];
            fr = mdata(m);
            std::memcpy(fr + t.hl, _payload.data(), d.len);
            std::memset(fr + t.hl + d.len, 0, pad_of(d.len));
            bump(ps.c.tx_copied);
        }
        std::memcpy(fr, t.hdr.data(), t.hl);
        if (t.ipl == ipv4_min_hdr_len) {
            const auto id = static_cast<std::uint16_t>(d.psn);
            std::uint32_t sum = static_cast<std::uint16_t>(~t.csum0) + std::uint32_t{id};  // RFC 1624
            sum = (sum & 0xFFFF) + (sum >> 16);
            store_be16(fr + t.l2 + 4, id);
            store_be16(fr + t.l2 + 10, static_cast<std::uint16_t>(~sum));
        }
        const std::uint32_t bth = t.l2 + t.ipl + udp_hdr_len;
        store_be32(fr + bth + 8, (d.ack_req ? 0x80000000u : 0u) | (d.psn & psn_mask));
        const psn_table& pt = _ptab[t.tab];
        const std::uint32_t icrc = _opts.payload == tx_payload::no_icrc
                                       ? 0
                                       : t.icrc0 ^ pt[0][(d.psn >> 16) & 0xFF] ^ pt[1][(d.psn >> 8) & 0xFF] ^
                                             pt[2][d.psn & 0xFF] ^ (d.ack_req ? t.ackc : 0);
        const std::uint32_t covered = t.hl + d.len + pad_of(d.len);
        icrc_store(fr + covered, icrc);
        if (t.ipl == ipv6_hdr_len) {  // UDP checksum: the template's sum + PSN word pair + ICRC
            std::uint32_t u = std::uint32_t{t.usum} + ((d.ack_req ? 0x8000u : 0u) | ((d.psn >> 16) & 0xFFu)) +
                              (d.psn & 0xFFFFu) + load_be16(fr + covered) + load_be16(fr + covered + 2);
            u = (u & 0xFFFF) + (u >> 16);
            u = (u & 0xFFFF) + (u >> 16);
            const auto c = static_cast<std::uint16_t>(~u);
            store_be16(fr + t.l2 + ipv6_hdr_len + 6, c == 0 ? 0xFFFF : c);
        }
        m->data_len = static_cast<std::uint16_t>(covered + icrc_len);
        m->pkt_len = covered + icrc_len;
        return m;
    }
    if (f.v6) {
        // IPv6 without a template (sizes vary, unusual opcodes): the whole
        // frame built and its ICRC computed by build_roce_v6.
        fill_data_params(f.cfg.qp, d, std::span<const std::byte>(_payload.data(), d.len), f.data6);
        rte_mbuf* m = ps.stk.m[--ps.stk.n];
        const std::uint32_t l = build_roce_v6(std::span<std::byte>(mdata(m), _room), f.data6);
        m->data_len = static_cast<std::uint16_t>(l);
        m->pkt_len = l;
        bump(ps.c.tx_built);
        return m;
    }
    // Generic path: headers written field by field, ICRC by CRC combination.
    fill_data_params(f.cfg.qp, d, std::span<const std::byte>(_payload.data(), d.len), f.data);
    f.data.ip_id = static_cast<std::uint16_t>(d.psn);
    const std::uint32_t hl = _opts.payload == tx_payload::build || d.len >= _pcrc.size() ? 0 : data_hdr_len(f.data);
    if (hl != 0 && _pf_pool != nullptr && d.len == _pf_len && refill(ps.pf_stk, _pf_pool)) {
        // Payload already in place at pf_payload_off: headers before it, ICRC after it.
        rte_mbuf* m = ps.pf_stk.m[--ps.pf_stk.n];
        m->data_off = static_cast<std::uint16_t>(pf_payload_off - hl);
        std::byte* fr = mdata(m);
        write_data_hdrs(fr, f.data, hl, d.len);
        const std::uint32_t l2 = f.data.vlan_id < 0 ? eth_hdr_len : eth_hdr_len + vlan_tag_len;
        const std::uint32_t icrc = _opts.payload == tx_payload::no_icrc
                                       ? 0
                                       : icrc_of(fr + l2, hl - l2, d.len);
        icrc_store(fr + hl + d.len, icrc);
        const std::uint32_t l = hl + d.len + icrc_len;  // >= 60: PMTU >= 256, pad 0
        m->data_len = static_cast<std::uint16_t>(l);
        m->pkt_len = l;
        bump(ps.c.tx_prefilled);
        return m;
    }
    rte_mbuf* m = ps.stk.m[--ps.stk.n];
    std::byte* fr = mdata(m);
    if (hl == 0) {
        const std::uint32_t l = build_roce_v4(std::span<std::byte>(fr, _room), f.data);
        m->data_len = static_cast<std::uint16_t>(l);
        m->pkt_len = l;
        bump(ps.c.tx_built);
        return m;
    }
    write_data_hdrs(fr, f.data, hl, d.len);
    const std::uint32_t pad = pad_of(d.len);
    std::memcpy(fr + hl, _payload.data(), d.len);
    std::memset(fr + hl + d.len, 0, pad);
    const std::uint32_t l2 = f.data.vlan_id < 0 ? eth_hdr_len : eth_hdr_len + vlan_tag_len;
    icrc_store(fr + hl + d.len + pad,
               icrc_of(fr + l2, hl - l2, d.len));
    std::uint32_t l = hl + d.len + pad + icrc_len;
    if (l < eth_min_frame_len) {
        std::memset(fr + l, 0, eth_min_frame_len - l);
        l = eth_min_frame_len;
    }
    m->data_len = static_cast<std::uint16_t>(l);
    m->pkt_len = l;
    bump(ps.c.tx_copied);
    return m;
}

void gen_pipeline::release_all() noexcept {
    for (auto& ps : _ports) {
        for (stock* s : {&ps.stk, &ps.pf_stk}) {
            for (std::uint16_t i = 0; i < s->n; ++i) {
                rte_pktmbuf_free(s->m[i]);
            }
            s->n = 0;
        }
        for (std::uint16_t i = 0; i < ps.npend; ++i) {
            rte_pktmbuf_free(ps.pend[i]);
        }
        ps.npend = 0;
        for (std::uint16_t i = 0; i < ps.n_cnp_pend; ++i) {
            rte_pktmbuf_free(ps.cnp_pend[i]);
        }
        ps.n_cnp_pend = 0;
        for (rte_mbuf* c = nullptr; ps.cnps.pop(c);) {
            rte_pktmbuf_free(c);
        }
        rte_mbuf* m = nullptr;
        while (ps.replies.pop(m)) {
            forget_reply(m);
            rte_pktmbuf_free(m);
        }
        for (; ps.delay_head != ps.delay_tail; ++ps.delay_head) {
            rte_pktmbuf_free(ps.delay[ps.delay_head & ps.delay_mask].m);
        }
    }
}

namespace {
template <typename P>
inline bool ps_has_cnps(const P& ps) noexcept {
    return ps.n_cnp_pend != 0 || !ps.cnps.empty();
}
}  // namespace

std::uint32_t gen_pipeline::poll(nanos now) noexcept { return poll_worker(0, now); }

std::uint32_t gen_pipeline::poll_worker(std::size_t k, nanos now) noexcept {
    worker_state& w = *_workers[k];
    std::uint32_t moved = 0;
    for (const std::uint16_t i : w.ports) {
        if (_opts.tx_only) { break; }
        if (dpdk::port_rx_maybe(_ports[i].b) || _ports[i].delay_head != _ports[i].delay_tail) {
            moved += rx_port(i, now);
        }
    }
    service_flows(w, now);
    for (const std::uint16_t i : w.ports) {
        if (ps_has_cnps(_ports[i])) [[unlikely]] {
            moved += tx_cnps(i, now);
        }
        moved += tx_port(i, now);
    }
    return moved;
}

gen_pipeline::worker_view gen_pipeline::poll_totals() const noexcept { return poll_totals_of(*this, _views); }

// The earliest time at which poll() has work of its own (see the header).
nanos gen_pipeline::next_deadline(nanos now) noexcept {
    nanos d = nanos::max();
    for (std::size_t k = 0; k < _workers.size(); ++k) { d = std::min(d, next_deadline_worker(k, now)); }
    return d;
}

// Worker k's share: its flows' timers (ACK timeouts, RNR waits, DCQCN
// timers, deferred CNPs, starts, arrivals: the timer heap's top), a flow
// touched since its last service, the QPs of its ports that may send (the
// ready ones: when their pacer and the port's line cap conform, or their
// pause ends), and its ports' own work (CNPs and replies waiting, PFC
// sources, the delay line). Flows with nothing to do are not visited.
// The priorities port ps may not send on now: paused by PFC/PAUSE, or, in
// credit mode (qos/credit.hpp), without credits for the port's largest frame
// (a host gates on that: it builds a frame only once it may send it).
template <typename PortState>
static std::uint8_t blocked_prios(PortState& ps, nanos now) noexcept {
    std::uint8_t m = ps.pt.paused_mask(now);
    if (const credit_tx* cr = ps.b.credit; cr != nullptr) [[unlikely]] {
        m = static_cast<std::uint8_t>(m | cr->blocked_mask(cr->max_frame));
    }
    return m;
}

nanos gen_pipeline::next_deadline_worker(std::size_t k, nanos now) noexcept {
    const worker_state& w = *_workers[k];
    nanos d = w.timers.top_time();
    for (const std::uint64_t word : w.svc) {
        if (word != 0) {
            d = now;
            break;
        }
    }
    for (const std::uint16_t pi : w.ports) {
        port_state& ps = _ports[pi];
        if (!ps.cnps.empty() && (blocked_prios(ps, now) >> (_np_cfg.cnp_802p_prio & 7u) & 1u) == 0) { d = now; }
        if (ps.delay_head != ps.delay_tail) {
            d = std::min(d, nanos{ps.delay[ps.delay_head & ps.delay_mask].due});
        }
        if (ps.npend != 0) { continue; }
        for (const auto& src : ps.pfc) {
            if (src.cfg.count == 0 || src.sent < src.cfg.count) { d = std::min(d, nanos{src.next}); }
        }
        if (!ps.replies.empty()) {
            const bool paused = (blocked_prios(ps, now) & (1u << (_cfg.priority & 7u))) != 0;
            d = std::min(d, paused ? ps.pt.next_deadline(now) : now);
        }
        // With one PFC priority on the port, the first QP that may send
        // settles it when it is paused (every QP waits for the same pause) or
        // unpaced (it sends when the line lets it, and no QP sooner).
        const bool one_prio = std::has_single_bit(ps.qp_prios);
        if (one_prio && !ps.pace.empty()) {
            // The ready QP whose pacer frees first: when it has started and
            // its window lets it send now (the usual case), it gives the
            // walk's answer, since max(now, pacer, line) is smallest for the
            // smallest pacer time, and every QP shares the one pause.
            const flow_state& f = *_flows[ps.qps[ps.pace.top_id()]];
            if (now >= f.cfg.start && f.rq.can_send(now)) {
                if ((blocked_prios(ps, now) & f.prio_bit) != 0) {
                    d = std::min(d, ps.pt.next_deadline(now));  // nanos::max() for credits: their arrival wakes the host
                    continue;
                }
                nanos t = std::max(now, ps.pace.top_time());
                if (ps.line.rate().v != 0) { t = std::max(t, ps.line.next_send_time()); }
                d = std::min(d, t);
                continue;
            }
        }
        bool settled = false;
        for (std::size_t b = 0; b < ps.ready.size() && !settled; ++b) {
            for (std::uint64_t word = ps.ready[b]; word != 0 && !settled; word &= word - 1) {
                flow_state& f = *_flows[ps.qps[b * 64 + static_cast<std::size_t>(std::countr_zero(word))]];
                if (now < f.cfg.start || !f.rq.can_send(now)) { continue; }
                if ((blocked_prios(ps, now) & f.prio_bit) != 0) {
                    d = std::min(d, ps.pt.next_deadline(now));
                    settled = one_prio;
                    continue;
                }
                nanos t = now;
                if (f.pacer.rate().v != 0) { t = std::max(t, f.pacer.next_send_time()); }
                if (ps.line.rate().v != 0) { t = std::max(t, ps.line.next_send_time()); }
                d = std::min(d, t);
                settled = one_prio && f.pacer.rate().v == 0;
            }
        }
    }
    return std::max(d, now);
}

std::uint32_t gen_pipeline::rx_port(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    rte_mbuf* pkts[max_burst];
    const std::uint16_t n = dpdk::port_rx(ps.b, now, pkts, max_burst);
    for (std::uint16_t k = 0; k < n; ++k) {
        bump(ps.c.rx_packets);
        bump(ps.c.rx_bytes, static_cast<std::uint64_t>(rte_pktmbuf_pkt_len(pkts[k])));
        if (_cap != nullptr) {
            _cap->tap(static_cast<std::uint16_t>(pi), false, pkts[k], now);
        }
    }
    if (_link_delay.v == 0) {
        for (std::uint16_t k = 0; k < n; ++k) {
            rx_frame(pi, pkts[k], now);
        }
        return n;
    }
    for (std::uint16_t k = 0; k < n; ++k) {
        if (ps.delay_tail - ps.delay_head == ps.delay.size()) {  // cannot happen: sized to every mbuf
            bump(ps.c.drop_delay_full);
            rte_pktmbuf_free(pkts[k]);
            continue;
        }
        ps.delay[ps.delay_tail++ & ps.delay_mask] = delayed{pkts[k], now.v + _link_delay.v};
    }
    // Release what is due, but no more than the reply ring can take: after a
    // long stall (the OS took the CPU) thousands of frames fall due at once,
    // and each data frame needs room for its ACK. What waits here is queued,
    // not lost.
    std::uint32_t done = 0;
    while (ps.delay_head != ps.delay_tail && ps.delay[ps.delay_head & ps.delay_mask].due <= now.v &&
           ps.replies.free_space() != 0) {
        rx_frame(pi, ps.delay[ps.delay_head++ & ps.delay_mask].m, now);
        ++done;
    }
    return n + done;
}

// A reply leaves the ring (sent or freed): its QP's waiting reply, if it
// was this one, is gone.
void gen_pipeline::forget_reply(rte_mbuf* m) noexcept {
    const std::uint32_t u = m->hash.usr;
    if (u != 0 && u <= _flows.size() && _flows[u - 1]->queued_reply == m) { _flows[u - 1]->queued_reply = nullptr; }
}

// An ARP reply or neighbour advertisement written in place into m (len
// bytes): onto the port's reply ring, counted in `sent`, or dropped and
// counted when the ring is full.
void gen_pipeline::queue_reply(port_state& ps, rte_mbuf* m, std::uint32_t len, std::uint64_t& sent) noexcept {
    m->data_len = static_cast<std::uint16_t>(len);
    m->pkt_len = len;
    m->hash.usr = 0;  // no QP's reply (the RX hash shares the field)
    if (ps.replies.push(m)) {
        bump(sent);
    } else {
        bump(ps.c.drop_reply_full);
        rte_pktmbuf_free(m);
    }
}

void gen_pipeline::rx_frame(std::size_t pi, rte_mbuf* m, nanos now) noexcept {
    port_state& ps = _ports[pi];
    if (m->nb_segs != 1) {
        bump(ps.c.rx_multiseg);
        rte_pktmbuf_free(m);
        return;
    }
    std::byte* p = mdata(m);
    const std::uint32_t len = rte_pktmbuf_data_len(m);
    const parsed_frame pf = parse_frame(p, len);
    if (!pf.ok()) {
        bump(ps.c.malformed[static_cast<std::size_t>(pf.status)]);
        bump(ps.c.rx_malformed_total);
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind == frame_kind::mac_control) {
        bump(ps.c.rx_mac_control);
        const mac_control_cview mc(p + pf.l3_off);
        if (pf.mac_control_opcode == mac_control_op_pfc) {
            bump(ps.c.rx_pfc);
            ps.pt.on_pfc(now, mc.class_enable(), mc.pfc_times(), ps.b.line_rate);
        } else if (pf.mac_control_opcode == mac_control_op_pause) {
            bump(ps.c.rx_pause);
            ps.pt.on_pause(now, mc.pause_time(), ps.b.line_rate);
        }
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind == frame_kind::arp) {
        bump(ps.c.rx_arp);
        const arp_cview a(p + pf.l3_off);
        if (a.oper() == arp_op_request) {
            for (const auto& h : ps.hosts) {
                if (h.ip == a.tpa()) {
                    const mac_addr sha = a.sha();
                    const std::uint32_t spa = a.spa();
                    queue_reply(ps, m, build_arp(p, arp_op_reply, sha, h.mac, h.ip, sha, spa), ps.c.arp_replies);
                    return;
                }
            }
        }
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind == frame_kind::ipv6 && !pf.is_roce && nd_is_solicitation(p, pf.l3_off, len)) {
        bump(ps.c.rx_nd);
        const std::uint8_t* target = nd_target(p, pf.l3_off);
        for (const auto& h : ps.hosts) {
            if (h.v6 && std::memcmp(h.ip6.data(), target, 16) == 0) {
                if (nd_make_advert(p, len, pf.l3_off, h.mac.data(), false)) {
                    queue_reply(ps, m, static_cast<std::uint32_t>(nd_na_frame_len(pf.l3_off)), ps.c.nd_replies);
                    return;
                }
                break;
            }
        }
        rte_pktmbuf_free(m);
        return;
    }
    if ((pf.kind != frame_kind::ipv4 && pf.kind != frame_kind::ipv6) || !pf.is_roce) {
        bump(ps.c.rx_non_roce);
        rte_pktmbuf_free(m);
        return;
    }
    bool local = false;
    if (pf.kind == frame_kind::ipv4) {
        for (std::uint32_t ip : ps.hosts_ip) {
            local = local || ip == pf.ip4_dst;
        }
    } else {
        for (const auto& ip : ps.hosts_ip6) {
            local = local || std::memcmp(ip.data(), p + pf.ip6_dst_off, 16) == 0;
        }
    }
    if (!local) {
        bump(ps.c.rx_not_local);
        rte_pktmbuf_free(m);
        return;
    }
    const bool is_ack = pf.opcode == roce_op::rc_ack;
    const bool is_cnp = pf.opcode == roce_op::cnp;
    // Loss injection: what the wire lost never reaches any check. (It
    // models data and ACK loss; CNPs are not subject to it.)
    if (!is_cnp && (is_ack ? ps.ack_loss.drop(ps.loss_rng) : ps.data_loss.drop(ps.loss_rng))) {
        bump(is_ack ? ps.c.loss_ack : ps.c.loss_data);
        rte_pktmbuf_free(m);
        return;
    }
    if (!icrc_ok(p, pf)) {
        bump(ps.c.rx_bad_icrc);
        rte_pktmbuf_free(m);
        return;
    }
    const std::int32_t ep = pf.dest_qpn < ps.qpn_table.size() ? ps.qpn_table[pf.dest_qpn] : -1;
    if (ep < 0) {
        bump(ps.c.rx_unknown_qpn);
        rte_pktmbuf_free(m);
        return;
    }
    flow_state& f = *_flows[static_cast<std::size_t>(ep >> 1)];
    if (is_cnp) {  // reaction point: only a requester's QP takes CNPs (rx_cnp)
        if ((ep & 1) == 0) {
            bump(ps.c.rx_cnp);
            bump(f.cnp_rx);
            if (f.dcqcn) {
                f.rp.on_cnp(now);
                f.rp_next = f.rp.next_deadline();
                apply_rate(f, now);
                touch(f, true);
            }
        } else {
            bump(ps.c.rx_unsupported_opcode);
        }
        rte_pktmbuf_free(m);
        return;
    }
    if ((ep & 1) == 0) {  // requester: ACK/NAK
        if (!is_ack) {
            bump(ps.c.rx_unsupported_opcode);
        } else {
            const aeth_fields a = read_aeth(p + pf.bth_off + bth_len);
            f.rq.on_aeth(now, pf.psn, a.syndrome, a.msn);
            touch(f, true);
        }
        rte_pktmbuf_free(m);
        return;
    }
    // Notification point: a CE-marked data packet may trigger a CNP.
    if (pf.ecn == ecn_ce) [[unlikely]] {
        bump(ps.c.rx_ce);
        if (f.np.on_ce(now)) {
            send_cnp(f, ps);
        }
    }
    const std::uint64_t msgs_before = f.rs.counters().messages_rx;
    const rx_verdict v = f.rs.on_packet(now, pf.psn, pf.opcode, pf.ack_req, pf.roce_payload_len);
    touch(f, false);  // its notification point may have a CNP to defer
    if (_ring && f.rs.counters().messages_rx != msgs_before) {  // a message in: a gate may open
        coll_arrived(f);
    }
    if (v.status == rx_status::unsupported) {
        bump(ps.c.rx_unsupported_opcode);
    }
    if (v.reply != rx_reply::none) {
        // Reuse the received mbuf for the reply: no allocation at all.
        if (f.v6) {
            fill_reply_params(f.rs_cfg_, v, f.reply6);
        } else {
            fill_reply_params(f.rs_cfg_, v, f.reply);
        }
        if (m->pool == _pf_pool) {
            // Never write into a prefilled mbuf's payload area: reply from the common pool.
            rte_pktmbuf_free(m);
            m = rte_pktmbuf_alloc(_pool);
            if (m == nullptr) {
                bump(ps.c.tx_alloc_fail);
                return;
            }
            p = mdata(m);
        }
        const std::span<std::byte> room(p, static_cast<std::size_t>(m->buf_len - m->data_off));
        const std::uint32_t l = f.v6 ? build_roce_v6(room, f.reply6) : build_roce_v4(room, f.reply);
        m->data_len = static_cast<std::uint16_t>(l);
        m->pkt_len = l;
        if (l != 0) {
            m->hash.usr = static_cast<std::uint32_t>(static_cast<std::size_t>(ep >> 1) + 1);  // whose reply (tx clears)
            if (ps.replies.push(m)) {
                f.queued_reply = m;
                bump(v.reply == rx_reply::ack ? ps.c.tx_acks : ps.c.tx_naks);
                return;
            }
            // The ring is full: the port has been paused (PFC on the RoCE
            // priority holds replies) while data kept arriving. As an RC
            // responder does, the newest ACK/NAK of a QP stands for the
            // ones before it (both are cumulative: they carry the expected
            // PSN), so it overwrites the QP's reply still waiting instead of
            // being dropped (a dropped ACK costs the requester an ACK timeout).
            if (rte_mbuf* q = f.queued_reply; q != nullptr && l <= static_cast<std::uint32_t>(q->buf_len - q->data_off)) {
                std::memcpy(mdata(q), p, l);
                q->data_len = static_cast<std::uint16_t>(l);
                q->pkt_len = l;
                bump(ps.c.replies_coalesced);
                rte_pktmbuf_free(m);
                return;
            }
        }
        bump(ps.c.drop_reply_full);
    }
    rte_pktmbuf_free(m);
}

// A side of a flow needs service at the next poll (a frame, a send or a
// completion changed it).
void gen_pipeline::touch(flow_state& f, bool req_side) noexcept {
    const std::uint32_t r = req_side ? f.req_ref : f.resp_ref;
    worker_state& w = *_workers[req_side ? f.req_worker : f.resp_worker];
    w.svc[r >> 6] |= std::uint64_t{1} << (r & 63);
}

// When ref r next needs service without any input (timer_heap).
void gen_pipeline::reschedule(worker_state& w, std::uint32_t r, nanos now) noexcept {
    const flow_ref& ref = w.flows[r];
    flow_state& f = *_flows[ref.flow];
    nanos d = nanos::max();
    if (ref.resp && f.np.pending()) { d = std::min(d, f.np.next_due()); }
    if (ref.req) {
        d = std::min(d, f.rq.next_deadline());
        if (f.dcqcn) { d = std::min(d, f.rp_next); }
        if (now < f.cfg.start) {
            d = std::min(d, f.cfg.start);
        } else if (!_ring) {
            d = std::min(d, f.src.next_deadline());
        }
    }
    w.timers.set(r, d);
}

// The QP's bit in its port's ready set: it has a packet its window allows.
// Called after every change of the QP's window, posted data or pacer
// (tx_port after it sends, service_flows after ACKs, CNPs and DCQCN timers),
// so the port's pace heap holds each ready QP at its pacer's current time.
void gen_pipeline::update_ready(flow_state& f) noexcept {
    port_state& ps = _ports[f.src_port];
    auto& word = ps.ready[f.qp_slot >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (f.qp_slot & 63);
    if (f.rq.can_send(nanos::max())) {
        word |= bit;
        ps.pace.set(f.qp_slot, f.pacer.rate().v != 0 ? f.pacer.next_send_time() : unpaced_key);
    } else {
        word &= ~bit;
        ps.pace.clear(f.qp_slot);
    }
}

void gen_pipeline::service_flows(worker_state& w, nanos now) noexcept {
    w.timers.pop_due(now, [&](std::uint32_t r) noexcept { w.svc[r >> 6] |= std::uint64_t{1} << (r & 63); });
    // The refs due or touched, in flow order (the order every ref once was).
    for (std::size_t b = 0; b < w.svc.size(); ++b) {
        while (w.svc[b] != 0) {
            const auto r = static_cast<std::uint32_t>(b * 64 + static_cast<std::size_t>(std::countr_zero(w.svc[b])));
            w.svc[b] &= w.svc[b] - 1;
            const flow_ref& ref = w.flows[r];
            flow_state& f = *_flows[ref.flow];
            if (!ref.req) {  // only the responder side is this worker's
                if (f.np.pending() && f.np.poll(now)) [[unlikely]] {
                    send_cnp(f, _ports[f.dst_port]);
                }
                reschedule(w, r, now);
                continue;
            }
            f.rq.poll_timeout(now);
            if (f.dcqcn && now >= f.rp_next) [[unlikely]] {
                f.rp_next = f.rp.advance(now);
                apply_rate(f, now);
            }
            if (ref.resp && f.np.pending() && f.np.poll(now)) [[unlikely]] {
                send_cnp(f, _ports[f.dst_port]);
            }
            msg_completion c;
            while (f.rq.pop_completion(c)) {
                if (f.fct_ns.size() < f.fct_ns.capacity()) {
                    f.fct_ns.push_back(static_cast<std::uint64_t>(c.fct().v));
                } else {
                    bump(f.fct_dropped);
                }
                if (f.first_posted.v < 0) { f.first_posted = c.posted; }
                f.last_done = c.completed;
                f.src.on_complete();
                if (_ring) {
                    coll_completed(f, c);
                }
            }
            if (_ring) {
                if (now >= f.cfg.start) {
                    coll_post(f, now);
                }
            } else if (now >= f.cfg.start) {
                arrival a;
                while (f.src.poll(now, w.arrivals_rng, a)) {
                    f.rq.post_message(now < a.at || f.cfg.arrivals.kind == arrival_kind::closed_loop ? now : a.at,
                                      a.size);
                    bump(f.posted);
                }
            }
            if (_has_limit && !f.finished) {
                f.finished = f.posted >= f.cfg.arrivals.count && f.rq.messages_in_flight() == 0;
                if (f.finished) { --w.unfinished; }
            }
            reschedule(w, r, now);
            update_ready(f);
        }
    }
    const bool all_done = _has_limit && w.unfinished == 0;
    if (all_done != __atomic_load_n(&w.done, __ATOMIC_RELAXED)) {
        __atomic_store_n(&w.done, all_done, __ATOMIC_RELAXED);
    }
    if (all_done && !__atomic_load_n(&_all_finished, __ATOMIC_RELAXED)) {
        bool every = true;
        for (const auto& o : _workers) { every = every && __atomic_load_n(&o->done, __ATOMIC_RELAXED); }
        if (every) { __atomic_store_n(&_all_finished, true, __ATOMIC_RELAXED); }
    }
}

// Collectives: message k (k / steps = collective, k % steps = step) leaves
// once the flow's message k-1 is ACKed and its host has what step k needs:
// rings, the predecessor's message k-1 (the responder of flow ring_pred is
// at this host); alltoall, every message of iteration k-1 to and from this
// host. Only this host's state is read.
void gen_pipeline::coll_post(flow_state& f, nanos now) noexcept {
    const std::uint64_t k = f.posted;
    if ((_ring_limit != 0 && k >= _ring_limit) || f.rq.messages_in_flight() != 0 ||
        f.rq.counters().messages_completed < k) {
        return;
    }
    if (_a2a) {
        const port_state& ps = _ports[f.src_port];
        const std::uint64_t need = k * _a2a_peers;
        if (ps.a2a_acked < need || ps.a2a_arrived < need) {
            return;
        }
    } else if (read_counter(_flows[f.ring_pred]->rs.counters().messages_rx) < k) {
        return;
    }
    std::uint64_t chunk = _ring_chunk;
    if (_planes > 1) [[unlikely]] {
        if (k % _ring_steps == 0 && k != 0 && !plane_gate(f, k)) { return; }
        chunk = plane_chunk(f, k);
    }
    if (!f.rq.post_message(now, bytes{chunk})) {
        return;
    }
    if (k < f.coll_post.size()) {
        f.coll_post[k] = now.v;
    }
    bump(f.posted);
}

// Planes: a server starts collective k / steps once it has finished the
// previous one on every plane (each of its flows ACKed, and received from
// its predecessor, message k - 1). Only the server's own state is read.
bool gen_pipeline::plane_gate(const flow_state& f, std::uint64_t k) const noexcept {
    const std::uint32_t n = _ring_servers;
    for (std::uint32_t j = 0; j < _planes; ++j) {
        const flow_state& g = *_flows[j * n + f.server];
        if (g.rq.counters().messages_completed < k || read_counter(_flows[g.ring_pred]->rs.counters().messages_rx) < k) {
            return false;
        }
    }
    return true;
}

// Planes: the bytes flow f's message k carries. Static: the chunk striped
// evenly. Weighted: at each collective, the server's chunk (planes x the even
// share) goes to the planes in proportion to the throughput each gave it in
// the previous collective (its bytes over the time from its first post to
// its last ACK there), at least 1/64 of the even share each, in multiples of
// 4 bytes. Every flow of the server reads the same records: one split.
std::uint64_t gen_pipeline::plane_chunk(flow_state& f, std::uint64_t k) noexcept {
    server_state& sv = _servers[f.server];
    const std::uint64_t c = k / _ring_steps;
    if (_weighted && c != 0 && sv.coll != c) {
        const std::uint32_t n = _ring_servers;
        const std::uint64_t first = (c - 1) * _ring_steps;  // the previous collective's first and last messages
        const std::uint64_t last = c * _ring_steps - 1;
        double thr[64]{};
        double sum = 0;
        bool ok = true;
        for (std::uint32_t j = 0; j < _planes && ok; ++j) {
            const flow_state& g = *_flows[j * n + f.server];
            ok = last < g.coll_done.size() && g.coll_done[last] > g.coll_post[first];
            if (ok) {
                thr[j] = double(sv.size[j]) / double(g.coll_done[last] - g.coll_post[first]);
                sum += thr[j];
            }
        }
        if (ok && sum > 0) {
            const std::uint64_t total = _ring_chunk * _planes;
            const std::uint64_t floor_b = std::max<std::uint64_t>((_ring_chunk / 64) & ~std::uint64_t{3}, 4);
            std::uint64_t given = 0;
            std::uint32_t big = 0;
            for (std::uint32_t j = 0; j < _planes; ++j) {
                const auto b = static_cast<std::uint64_t>(double(total) * thr[j] / sum);
                sv.size[j] = std::max<std::uint64_t>(b & ~std::uint64_t{3}, floor_b);
                given += sv.size[j];
                if (sv.size[j] > sv.size[big]) { big = j; }
            }
            if (given < total) {
                sv.size[big] += (total - given) & ~std::uint64_t{3};  // the rounding to the largest
            } else if (given > total && sv.size[big] > (given - total) + floor_b) {
                sv.size[big] -= (given - total + 3) & ~std::uint64_t{3};
            }
        }
        sv.coll = c;
    }
    return sv.size[f.plane];
}

// Message completions of flow f (in order): record when, and for alltoall
// count them at the host; its last of an iteration may open its flows' gates.
void gen_pipeline::coll_completed(flow_state& f, const msg_completion& c) noexcept {
    const std::uint64_t k = f.coll_recs;
    if (k < f.coll_done.size()) {
        f.coll_done[k] = c.completed.v;
        __atomic_store_n(&f.coll_recs, k + 1, __ATOMIC_RELEASE);
    }
    if (_a2a) {
        port_state& ps = _ports[f.src_port];
        if (++ps.a2a_acked % _a2a_peers == 0) {
            for (const std::uint32_t q : ps.qps) { touch(*_flows[q], true); }
        }
    }
    if (_planes > 1 && (k + 1) % _ring_steps == 0) [[unlikely]] {  // its server's gate may open
        touch_server(f.server);
    }
}

void gen_pipeline::touch_server(std::uint32_t server) noexcept {
    const std::uint32_t n = _ring_servers;
    for (std::uint32_t j = 0; j < _planes; ++j) { touch(*_flows[j * n + server], true); }
}

// A message of flow f arrived at its destination host.
void gen_pipeline::coll_arrived(flow_state& f) noexcept {
    if (!_a2a) {
        if (f.ring_succ != UINT32_MAX) {
            flow_state& g = *_flows[f.ring_succ];
            touch(g, true);
            if (_planes > 1 && read_counter(f.rs.counters().messages_rx) % _ring_steps == 0) [[unlikely]] {
                touch_server(g.server);
            }
        }
        return;
    }
    port_state& ps = _ports[f.dst_port];
    if (++ps.a2a_arrived % _a2a_peers == 0) {
        for (const std::uint32_t q : ps.qps) { touch(*_flows[q], true); }
    }
}

gen_pipeline::collective_figures gen_pipeline::collectives() const {
    collective_figures out;
    if (!_ring || _flows.empty() || _ring_steps == 0) {
        return out;
    }
    const std::uint64_t steps = _ring_steps;
    std::uint64_t recs = UINT64_MAX;  // messages every flow has completed and recorded
    std::uint64_t done_msgs = UINT64_MAX;
    for (const auto& fp : _flows) {
        recs = std::min(recs, __atomic_load_n(&fp->coll_recs, __ATOMIC_ACQUIRE));
        done_msgs = std::min(done_msgs, read_counter(fp->rq.counters().messages_completed));
    }
    out.done = done_msgs / steps;
    const std::uint64_t timed = recs / steps;
    out.dropped = out.done > timed ? out.done - timed : 0;
    out.ns.reserve(timed);
    out.step_sum_ns.assign(steps, 0);
    out.step_n.assign(steps, 0);
    // Every step every flow has completed, the unfinished collective's too.
    std::int64_t start = 0;
    std::int64_t prev = 0;
    for (std::uint64_t k = 0; k < recs; ++k) {
        const std::uint64_t s = k % steps;
        if (s == 0) {
            start = INT64_MAX;
            for (const auto& fp : _flows) { start = std::min(start, fp->coll_post[k]); }
            prev = start;
        }
        std::int64_t end = INT64_MIN;
        for (const auto& fp : _flows) { end = std::max(end, fp->coll_done[k]); }
        out.step_sum_ns[s] += static_cast<std::uint64_t>(std::max<std::int64_t>(end - prev, 0));
        ++out.step_n[s];
        prev = end;
        if (s + 1 == steps) {
            out.ns.push_back(static_cast<std::uint64_t>(std::max<std::int64_t>(end - start, 0)));
        }
    }
    return out;
}

// The reaction point changed the QP's rate: re-set the pacer (keeping the
// committed backlog) and account the old rate's time for the mean.
void gen_pipeline::apply_rate(flow_state& f, nanos now) noexcept {
    if (!f.rp.take_rate_changed()) {
        return;
    }
    if (f.rate_t0.v < 0) {
        f.rate_t0 = f.rate_t = now;
    }
    f.rate_area_bits += double(f.pacer.rate().v) * double((now - f.rate_t).v) / 1e9;
    f.rate_t = now;
    if (f.rp.rate().v != 0) {
        f.pacer.set_rate(f.rp.rate(), now);
    }
}

// A CNP for flow f's requester QP, in its own mbuf, onto the responder
// port's CNP ring (sent ahead of everything else by tx_cnps).
void gen_pipeline::send_cnp(flow_state& f, port_state& ps) noexcept {
    rte_mbuf* m = rte_pktmbuf_alloc(_pool);
    if (m == nullptr) {
        bump(ps.c.tx_alloc_fail);
        bump(f.cnp_tx_fail);
        return;
    }
    const std::span<std::byte> room(mdata(m), static_cast<std::size_t>(m->buf_len - m->data_off));
    const std::uint32_t l = f.v6 ? build_roce_v6(room, f.cnp6) : build_roce_v4(room, f.cnp4);
    m->data_len = static_cast<std::uint16_t>(l);
    m->pkt_len = l;
    if (l == 0 || !ps.cnps.push(m)) {
        bump(ps.c.drop_cnp_full);
        bump(f.cnp_tx_fail);
        rte_pktmbuf_free(m);
        return;
    }
    bump(f.cnp_tx);
}

// CNPs of port pi: their own staging and tx_burst call, before any data or
// reply, held only by a pause of their own priority (cnp_802p_prio).
std::uint32_t gen_pipeline::tx_cnps(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    if ((ps.pt.paused_mask(now) >> (_np_cfg.cnp_802p_prio & 7u) & 1u) != 0) {
        return 0;
    }
    credit_tx* const cr = ps.b.credit;
    const int cnp_prio = static_cast<int>(_np_cfg.cnp_802p_prio & 7u);
    const std::uint16_t old = ps.n_cnp_pend;
    std::uint16_t n = old;
    while (n < max_burst && !ps.cnps.empty()) {
        if (cr != nullptr) [[unlikely]] {
            const std::uint32_t l = ps.cnps.front()->pkt_len;
            if (!cr->can_send(cnp_prio, l)) {
                ++cr->waits;
                break;
            }
            cr->on_send(cnp_prio, l);
        }
        ps.cnps.pop(ps.cnp_pend[n]);
        ps.line.on_send(now, ps.cnp_pend[n]->pkt_len);
        ++n;
    }
    if (n == 0) {
        return 0;
    }
    std::uint64_t bytes_out = 0;
    for (std::uint16_t k = 0; k < n; ++k) {
        bytes_out += ps.cnp_pend[k]->pkt_len;
    }
    if (_cap != nullptr) {
        for (std::uint16_t k = old; k < n; ++k) {
            _cap->tap(static_cast<std::uint16_t>(pi), true, ps.cnp_pend[k], now);
        }
    }
    const std::uint16_t sent = dpdk::port_tx(ps.b, now, ps.cnp_pend.data(), n);
    for (std::uint16_t k = sent; k < n; ++k) {
        bytes_out -= ps.cnp_pend[k]->pkt_len;
    }
    bump(ps.c.tx_cnp, std::uint64_t{sent});
    bump(ps.c.tx_packets, std::uint64_t{sent});
    bump(ps.c.tx_bytes, bytes_out);
    if (sent < n) {
        bump(ps.c.tx_retry);
        std::memmove(ps.cnp_pend.data(), ps.cnp_pend.data() + sent, sizeof(rte_mbuf*) * (n - sent));
    }
    ps.n_cnp_pend = static_cast<std::uint16_t>(n - sent);
    return sent;
}

void gen_pipeline::self_ack(flow_state& f, nanos now, std::uint32_t psn, std::uint32_t ends) noexcept {
    // No receiver (--tx-only): acknowledge cumulatively up to psn with the MSN
    // a responder would return after it.
    f.rq.on_ack(now, psn, static_cast<std::uint32_t>(f.rq.counters().messages_completed + ends));
    touch(f, true);  // completions to take
}

// Cyclic distance from `from` to the next set bit of bm (slots 0..n-1), n if none.
static std::uint32_t next_ready(const std::vector<std::uint64_t>& bm, std::uint32_t from, std::uint32_t n) noexcept {
    const auto scan = [&](std::uint32_t lo, std::uint32_t hi) noexcept -> std::uint32_t {  // first set in [lo, hi)
        std::uint32_t i = lo;
        while (i < hi) {
            const std::uint64_t w = bm[i >> 6] >> (i & 63);
            if (w != 0) {
                const std::uint32_t j = i + static_cast<std::uint32_t>(std::countr_zero(w));
                return j < hi ? j : hi;
            }
            i = (i | 63) + 1;
        }
        return hi;
    };
    const std::uint32_t a = scan(from, n);
    if (a < n) { return a - from; }
    const std::uint32_t b = scan(0, from);
    return b < from ? n - from + b : n;
}

std::uint32_t gen_pipeline::tx_port(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    rte_mbuf** out = ps.pend.data();
    std::uint16_t n = ps.npend;
    credit_tx* const cr = ps.b.credit;  // credit mode: a priority without credits waits as if paused
    std::uint8_t paused = blocked_prios(ps, now);
    if (n == 0) {
        // PFC source frames (never paused: MAC Control is not a data class).
        for (auto& s : ps.pfc) {
            if (n < max_burst && now.v >= s.next && (s.cfg.count == 0 || s.sent < s.cfg.count)) {
                rte_mbuf* m = rte_pktmbuf_alloc(_pool);
                if (m == nullptr) {
                    bump(ps.c.tx_alloc_fail);
                    break;
                }
                std::array<std::uint16_t, 8> q{};
                for (int k = 0; k < 8; ++k) {
                    q[k] = (s.cfg.class_enable >> k) & 1u ? s.cfg.quanta : 0;
                }
                const mac_addr src = ps.hosts.empty() ? mac_addr{0x02, 0, 0, 0, 0, 0xFE} : ps.hosts[0].mac;
                const std::uint32_t l = build_pfc(mdata(m), src, s.cfg.class_enable, q);
                m->data_len = static_cast<std::uint16_t>(l);
                m->pkt_len = l;
                out[n++] = m;
                ++s.sent;
                bump(ps.c.tx_pfc);
                s.next = s.cfg.interval.v > 0 ? std::max(s.next + s.cfg.interval.v, now.v) : INT64_MAX;
            }
        }
        // Replies (ACK/NAK, ARP) travel in the data class: PFC on the RoCE
        // priority holds them too. ARP replies go first either way.
        const bool replies_paused = (paused & (1u << (_cfg.priority & 7u))) != 0;
        while (n < max_burst && !ps.replies.empty() && !replies_paused) {
            if (cr != nullptr) [[unlikely]] {
                const std::uint32_t l = ps.replies.front()->pkt_len;
                if (!cr->can_send(static_cast<int>(_cfg.priority & 7u), l)) {
                    ++cr->waits;
                    break;
                }
                cr->on_send(static_cast<int>(_cfg.priority & 7u), l);
            }
            rte_mbuf* m = nullptr;
            ps.replies.pop(m);
            forget_reply(m);
            ps.line.on_send(now, m->pkt_len);
            out[n++] = m;
        }
        // Data: round robin over the port's QPs, a burst of up to `quota`
        // packets per QP per visit (max_burst / QPs, at least 1), while the
        // line cap allows. Shapers with rate 0 (unshaped) are not called.
        const auto nq = static_cast<std::uint32_t>(ps.qps.size());
        if (nq != 0 && n < max_burst) {
            const bool line_shaped = ps.line.rate().v != 0;
            const std::uint32_t quota = nq >= max_burst ? 1u : max_burst / nq;
            std::uint32_t rr = ps.rr < nq ? ps.rr : 0;
            bool progress = true;
            bool stop = false;
            while (!stop && progress && n < max_burst && (!line_shaped || ps.line.conforms(now))) {
                progress = false;
                // One cycle over the QP slots from rr, visiting the ready ones
                // (ps.ready) only: the same order, and the same rr after it, as
                // visiting every slot and skipping those that cannot send.
                std::uint32_t visited = 0;
                while (visited < nq && n < max_burst) {
                    const std::uint32_t dist = next_ready(ps.ready, rr, nq);
                    if (dist >= nq - visited) {  // none before the cycle ends
                        rr = static_cast<std::uint32_t>((rr + (nq - visited)) % nq);
                        break;
                    }
                    const std::uint32_t slot = (rr + dist) % nq;
                    visited += dist + 1;
                    rr = slot + 1 == nq ? 0 : slot + 1;
                    flow_state& f = *_flows[ps.qps[slot]];
                    if ((paused & f.prio_bit) != 0 || !f.rq.can_send(now)) {
                        continue;
                    }
                    bool paced = f.pacer.rate().v != 0;
                    std::uint32_t q = 0;
                    // --tx-only: the burst is acknowledged once, cumulatively,
                    // at its end (or when the window fills): MSN = messages
                    // completed + the message ends sent since the last ACK.
                    std::uint32_t ack_psn = 0;
                    std::uint32_t ends = 0;
                    bool unacked = false;
                    while (q < quota && n < max_burst) {
                        if ((paced && !f.pacer.conforms(now)) || (line_shaped && !ps.line.conforms(now))) {
                            stop = line_shaped && !ps.line.conforms(now);
                            break;
                        }
                        if (cr != nullptr && !cr->can_send(std::countr_zero(f.prio_bit), cr->max_frame)) [[unlikely]] {
                            paused = static_cast<std::uint8_t>(paused | f.prio_bit);  // out of credits
                            ++cr->waits;
                            break;
                        }
                        // Peek-free: a failed allocation must not consume the packet.
                        if (!refill(ps.stk, _pool)) {
                            bump(ps.c.tx_alloc_fail);
                            stop = true;
                            break;
                        }
                        tx_desc d;
                        if (!f.rq.next(now, d)) {
                            if (unacked) {  // the window is full: acknowledge and go on
                                self_ack(f, now, ack_psn, ends);
                                unacked = false;
                                ends = 0;
                                continue;
                            }
                            break;
                        }
                        rte_mbuf* m = build_data(f, d, ps);  // never null: ps.stk holds one
                        if (cr != nullptr) [[unlikely]] { cr->on_send(std::countr_zero(f.prio_bit), m->pkt_len); }
                        if (_opts.tx_only) {
                            ack_psn = d.psn;
                            ends += d.offset + d.len >= d.msg_size ? 1u : 0u;
                            unacked = true;
                        }
                        if (paced || line_shaped) {
                            const std::uint32_t l = m->pkt_len;
                            if (paced) {
                                f.pacer.on_send(now, l);
                            }
                            if (line_shaped) {
                                ps.line.on_send(now, l);
                            }
                        }
                        if (f.dcqcn) {  // the RP's byte counter
                            f.rp.on_sent(now, bytes{m->pkt_len});
                            if (f.rp.next_deadline() < f.rp_next) {
                                f.rp_next = f.rp.next_deadline();
                            }
                            apply_rate(f, now);
                            paced = f.pacer.rate().v != 0;
                        }
                        out[n++] = m;
                        ++q;
                    }
                    if (unacked) {
                        self_ack(f, now, ack_psn, ends);
                    }
                    if (q != 0) {  // its timers and window changed
                        reschedule(*_workers[f.req_worker], f.req_ref, now);
                        update_ready(f);
                    }
                    progress = progress || q != 0;
                    if (stop) {
                        break;
                    }
                }
            }
            ps.rr = rr;
        }
    }
    if (n == 0) {
        return 0;
    }
    std::uint64_t bytes_out = 0;  // read before the PMD owns the mbufs
    for (std::uint16_t k = 0; k < n; ++k) {
        bytes_out += out[k]->pkt_len;
    }
    // Capture before the driver owns the frames: after rte_eth_tx_burst a
    // PMD may already have freed (memif, pcap) or handed over (ring) them.
    // Frames retried from an earlier refused burst (the first ps.npend) were
    // captured when they were first staged.
    if (_cap != nullptr) {
        for (std::uint16_t k = ps.npend; k < n; ++k) {
            _cap->tap(static_cast<std::uint16_t>(pi), true, out[k], now);
        }
    }
    const std::uint16_t sent = dpdk::port_tx(ps.b, now, out, n);
    if (sent < n) {
        for (std::uint16_t k = sent; k < n; ++k) {
            bytes_out -= out[k]->pkt_len;
        }
    }
    bump(ps.c.tx_packets, std::uint64_t{sent});
    bump(ps.c.tx_bytes, bytes_out);
    if (sent < n) {
        bump(ps.c.tx_retry);
        std::memmove(out, out + sent, sizeof(rte_mbuf*) * (n - sent));
    }
    ps.npend = static_cast<std::uint16_t>(n - sent);
    return sent;
}

}  // namespace rocelab::gen
