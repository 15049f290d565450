// gen_pipeline.cpp - see gen_pipeline.hpp.
#include "gen/gen_pipeline.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstring>

#include "dpdk/capture.hpp"
#include "proto/arp.hpp"
#include "proto/mac_control.hpp"
#include "roce/frame.hpp"

namespace rocelab::gen {

namespace {

template <typename T>
inline void bump(T& c, T by = 1) noexcept {
    // Single writer (this lcore); relaxed store so readers never see a torn value.
    __atomic_store_n(&c, c + by, __ATOMIC_RELAXED);
}

inline std::byte* mdata(rte_mbuf* m) noexcept { return rte_pktmbuf_mtod(m, std::byte*); }

}  // namespace

std::variant<std::unique_ptr<gen_pipeline>, std::string> gen_pipeline::create(const gen_cfg& cfg,
                                                                              std::vector<port_binding> ports,
                                                                              rte_mempool* pool) {
    std::unique_ptr<gen_pipeline> p(new gen_pipeline());
    p->_cfg = cfg;
    p->_pool = pool;
    p->_link_delay = cfg.link_delay;
    p->_rng.reseed(cfg.seed);
    for (std::size_t i = 0; i < p->_payload.size(); ++i) {
        p->_payload[i] = static_cast<std::byte>(i & 0xFF);
    }
    p->_ports.reserve(ports.size());
    for (std::size_t i = 0; i < ports.size(); ++i) {
        p->_ports.emplace_back();
        port_state& ps = p->_ports.back();
        ps.b = ports[i];
        ps.line = shaper(ps.b.rate, bytes{4 * 1100});
        ps.loss_rng.reseed(cfg.seed * 1000003u + i);
        ps.data_loss = loss_injector(cfg.data_loss);
        ps.ack_loss = loss_injector(cfg.ack_loss);
    }
    for (const auto& h : cfg.hosts) {
        p->_ports[static_cast<std::size_t>(h.port)].hosts.push_back(h);
        p->_ports[static_cast<std::size_t>(h.port)].hosts_ip.push_back(h.ip);
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
        const std::size_t fct_cap = f.arrivals.count != 0 ? std::min<std::uint64_t>(f.arrivals.count, 1u << 22)
                                                          : std::size_t{1} << 18;
        auto fs = std::make_unique<flow_state>(f, f.qp, rs_cfg, sizes, fct_cap);
        const gen_host& sh = cfg.hosts[static_cast<std::size_t>(f.src_host)];
        const gen_host& dh = cfg.hosts[static_cast<std::size_t>(f.dst_host)];
        fs->src_port = static_cast<std::uint16_t>(sh.port);
        fs->dst_port = static_cast<std::uint16_t>(dh.port);
        fs->prio_bit = static_cast<std::uint8_t>(1u << (f.priority & 7u));
        const bits_per_sec port_rate = p->_ports[fs->src_port].b.rate;
        fs->pacer = shaper(f.rate.v != 0 ? f.rate : port_rate, bytes{2 * 1100});
        fs->data.src_mac = sh.mac;
        fs->data.dst_mac = dh.mac;
        fs->data.src_ip = sh.ip;
        fs->data.dst_ip = dh.ip;
        fs->reply.src_mac = dh.mac;
        fs->reply.dst_mac = sh.mac;
        fs->reply.src_ip = dh.ip;
        fs->reply.dst_ip = sh.ip;
        p->_ports[fs->src_port].qpn_table[f.qp.src_qpn] = static_cast<std::int32_t>(i * 2);
        p->_ports[fs->dst_port].qpn_table[f.qp.dst_qpn] = static_cast<std::int32_t>(i * 2 + 1);
        p->_ports[fs->src_port].qps.push_back(static_cast<std::uint32_t>(i));
        all_limited = all_limited && f.arrivals.count != 0;
        p->_flows.push_back(std::move(fs));
    }
    p->_has_limit = all_limited;
    return p;
}

gen_pipeline::~gen_pipeline() { release_all(); }

void gen_pipeline::release_all() noexcept {
    for (auto& ps : _ports) {
        for (std::uint16_t i = 0; i < ps.npend; ++i) {
            rte_pktmbuf_free(ps.pend[i]);
        }
        ps.npend = 0;
        rte_mbuf* m = nullptr;
        while (ps.replies.pop(m)) {
            rte_pktmbuf_free(m);
        }
        delayed d;
        while (ps.delay.pop(d)) {
            rte_pktmbuf_free(d.m);
        }
    }
}

std::uint32_t gen_pipeline::poll(nanos now) noexcept {
    std::uint32_t moved = 0;
    for (std::size_t i = 0; i < _ports.size(); ++i) {
        moved += rx_port(i, now);
    }
    service_flows(now);
    for (std::size_t i = 0; i < _ports.size(); ++i) {
        moved += tx_port(i, now);
    }
    return moved;
}

std::uint32_t gen_pipeline::rx_port(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    rte_mbuf* pkts[max_burst];
    const std::uint16_t n = rte_eth_rx_burst(ps.b.port_id, 0, pkts, max_burst);
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
        if (!ps.delay.push(delayed{pkts[k], now.v + _link_delay.v})) {
            bump(ps.c.drop_delay_full);
            rte_pktmbuf_free(pkts[k]);
        }
    }
    std::uint32_t done = 0;
    while (!ps.delay.empty() && ps.delay.front().due <= now.v) {
        delayed d;
        ps.delay.pop(d);
        rx_frame(pi, d.m, now);
        ++done;
    }
    return n + done;
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
            ps.pt.on_pfc(now, mc.class_enable(), mc.pfc_times(), ps.b.rate);
        } else if (pf.mac_control_opcode == mac_control_op_pause) {
            bump(ps.c.rx_pause);
            ps.pt.on_pause(now, mc.pause_time(), ps.b.rate);
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
                    const std::uint32_t l = build_arp(p, arp_op_reply, sha, h.mac, h.ip, sha, spa);
                    m->data_len = static_cast<std::uint16_t>(l);
                    m->pkt_len = l;
                    if (ps.replies.push(m)) {
                        bump(ps.c.arp_replies);
                    } else {
                        bump(ps.c.drop_reply_full);
                        rte_pktmbuf_free(m);
                    }
                    return;
                }
            }
        }
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.kind != frame_kind::ipv4 || !pf.is_roce) {
        bump(ps.c.rx_non_roce);
        rte_pktmbuf_free(m);
        return;
    }
    bool local = false;
    for (std::uint32_t ip : ps.hosts_ip) {
        local = local || ip == pf.ip4_dst;
    }
    if (!local) {
        bump(ps.c.rx_not_local);
        rte_pktmbuf_free(m);
        return;
    }
    const bool is_ack = pf.opcode == roce_op::rc_ack;
    // Loss injection: what the wire lost never reaches any check.
    if (is_ack ? ps.ack_loss.drop(ps.loss_rng) : ps.data_loss.drop(ps.loss_rng)) {
        bump(is_ack ? ps.c.loss_ack : ps.c.loss_data);
        rte_pktmbuf_free(m);
        return;
    }
    if (!roce_frame_icrc_ok(p, pf)) {
        bump(ps.c.rx_bad_icrc);
        rte_pktmbuf_free(m);
        return;
    }
    if (pf.opcode == roce_op::cnp) {
        bump(ps.c.rx_cnp);
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
    if ((ep & 1) == 0) {  // requester: ACK/NAK
        if (!is_ack) {
            bump(ps.c.rx_unsupported_opcode);
        } else {
            const aeth_fields a = read_aeth(p + pf.bth_off + bth_len);
            f.rq.on_aeth(now, pf.psn, a.syndrome, a.msn);
        }
        rte_pktmbuf_free(m);
        return;
    }
    const rx_verdict v = f.rs.on_packet(now, pf.psn, pf.opcode, pf.ack_req, pf.roce_payload_len);
    if (v.status == rx_status::unsupported) {
        bump(ps.c.rx_unsupported_opcode);
    }
    if (v.reply != rx_reply::none) {
        // Reuse the received mbuf for the reply: no allocation at all.
        fill_reply_params(f.rs_cfg_, v, f.reply);
        const std::uint32_t l = build_roce_v4(std::span<std::byte>(p, static_cast<std::size_t>(m->buf_len - m->data_off)),
                                              f.reply);
        m->data_len = static_cast<std::uint16_t>(l);
        m->pkt_len = l;
        if (l != 0 && ps.replies.push(m)) {
            bump(v.reply == rx_reply::ack ? ps.c.tx_acks : ps.c.tx_naks);
            return;
        }
        bump(ps.c.drop_reply_full);
    }
    rte_pktmbuf_free(m);
}

void gen_pipeline::service_flows(nanos now) noexcept {
    bool all_done = _has_limit;
    for (auto& fp : _flows) {
        flow_state& f = *fp;
        f.rq.poll_timeout(now);
        msg_completion c;
        while (f.rq.pop_completion(c)) {
            if (f.fct_ns.size() < f.fct_ns.capacity()) {
                f.fct_ns.push_back(static_cast<std::uint64_t>(c.fct().v));
            } else {
                bump(f.fct_dropped);
            }
            f.src.on_complete();
        }
        if (now >= f.cfg.start) {
            arrival a;
            while (f.src.poll(now, _rng, a)) {
                f.rq.post_message(now < a.at || f.cfg.arrivals.kind == arrival_kind::closed_loop ? now : a.at,
                                  a.size);
                bump(f.posted);
            }
        }
        if (_has_limit && !f.finished) {
            f.finished = f.posted >= f.cfg.arrivals.count && f.rq.messages_in_flight() == 0;
        }
        all_done = all_done && f.finished;
    }
    if (all_done && !_all_finished) {
        __atomic_store_n(&_all_finished, true, __ATOMIC_RELAXED);
    }
}

std::uint32_t gen_pipeline::tx_port(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    rte_mbuf** out = ps.pend.data();
    std::uint16_t n = ps.npend;
    const std::uint8_t paused = ps.pt.paused_mask(now);
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
            rte_mbuf* m = nullptr;
            ps.replies.pop(m);
            ps.line.on_send(now, m->pkt_len);
            out[n++] = m;
        }
        // Data: one packet per QP per round while the line cap allows.
        const std::size_t nq = ps.qps.size();
        bool progress = true;
        while (nq != 0 && n < max_burst && progress && ps.line.conforms(now)) {
            progress = false;
            for (std::size_t k = 0; k < nq && n < max_burst && ps.line.conforms(now); ++k) {
                const std::uint32_t fi = ps.qps[(ps.rr + k) % nq];
                flow_state& f = *_flows[fi];
                if ((paused & f.prio_bit) != 0 || !f.pacer.conforms(now) || !f.rq.can_send(now)) {
                    continue;
                }
                tx_desc d;
                // Peek-free: allocate first so a failed allocation does not consume the packet.
                rte_mbuf* m = rte_pktmbuf_alloc(_pool);
                if (m == nullptr) {
                    bump(ps.c.tx_alloc_fail);
                    progress = false;
                    break;
                }
                if (!f.rq.next(now, d)) {
                    rte_pktmbuf_free(m);
                    continue;
                }
                fill_data_params(f.cfg.qp, d, std::span<const std::byte>(_payload.data(), d.len), f.data);
                f.data.ip_id = static_cast<std::uint16_t>(d.psn);
                const std::uint32_t room = rte_pktmbuf_data_room_size(_pool) - RTE_PKTMBUF_HEADROOM;
                const std::uint32_t l = build_roce_v4(std::span<std::byte>(mdata(m), room), f.data);
                m->data_len = static_cast<std::uint16_t>(l);
                m->pkt_len = l;
                f.pacer.on_send(now, l);
                ps.line.on_send(now, l);
                out[n++] = m;
                progress = true;
            }
            ps.rr = nq != 0 ? (ps.rr + 1) % static_cast<std::uint32_t>(nq) : 0;
        }
    }
    if (n == 0) {
        return 0;
    }
    const std::uint16_t sent = rte_eth_tx_burst(ps.b.port_id, 0, out, n);
    for (std::uint16_t k = 0; k < sent; ++k) {
        bump(ps.c.tx_packets);
        bump(ps.c.tx_bytes, static_cast<std::uint64_t>(out[k]->pkt_len));
        if (_cap != nullptr) {
            _cap->tap(static_cast<std::uint16_t>(pi), true, out[k], now);
        }
    }
    if (sent < n) {
        bump(ps.c.tx_retry);
        std::memmove(out, out + sent, sizeof(rte_mbuf*) * (n - sent));
    }
    ps.npend = static_cast<std::uint16_t>(n - sent);
    return sent;
}

}  // namespace rocelab::gen
