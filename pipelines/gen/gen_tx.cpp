// gen_tx.cpp - the generator's TX stage: frames built and sent.
//
// What: tx_port, per port and poll: frames a refused burst left pending go
// first (retried, never dropped: tx_retry); else the burst (tx_stage) is
// staged by named stages, in this order:
//   stage_pfc_sources: PFC-source frames that are due (MAC Control: never
//     paused; tx_pfc),
//   stage_replies: replies from the reply ring (ACK/NAK, ARP/ND: the RoCE
//     priority's data class, so PFC on it holds them; forget_reply),
//   stage_data: round robin over the port's ready QPs (port_state::ready, from
//     rr), up to max(1, max_burst / QPs) packets per QP per visit, while
//     the line cap and the QP's pacer conform (gen_pacer.cpp) and its
//     priority is not paused (or, in credit mode, short of credits); each
//     packet is the requester's next() (new or go-back-N resent), built by
//     build_data, counted into the pacer, line cap and the DCQCN reaction
//     point's byte counter; --tx-only acknowledges each QP's burst itself
//     (self_ack); then the QP's timer and ready bit (reschedule,
//     update_ready). A QP that only its pacer and the line cap can hold
//     (no credits, a reaction point that has seen no CNP) takes its packets
//     in bursts of what both shapers let go at now (shaper::frames_at,
//     requester::next_burst; visit_burst) instead of asking them before
//     each frame (visit_checked);
// then send_staged: tapped for capture and sent in one dpdk::port_tx burst.
// build_data: see gen_pipeline.hpp ("Data frames"): a template per
// (flow, opcode kind) patched per frame (PSN, IP id and checksum, AckReq,
// ICRC by the precomputed byte tables) over a prefilled mbuf's payload or a
// copy of the pattern, inline in tx_port's loop (the headers by one
// fixed-size copy: the template holds them right-aligned); other frames by
// build_data_generic (headers field by field, ICRC by CRC combination, or
// the whole frame built). make_templates
// builds the templates at create(). mbufs come from per-port stocks
// allocated in bulk (refill), so a failed allocation never consumes a packet.
// tx_cnps: the port's CNP ring in its own staging and tx_burst call, ahead of
// everything else, held only by a pause of the CNP priority (cnp_802p_prio).
// Inputs: the port's pending frames, PFC sources, reply and CNP rings, its
// ready QPs (each requester's next()), the pause timer / credits, now.
// Outputs: one tx burst per call on the port (dpdk::port_tx), the QPs'
// pacer, line cap and reaction-point byte counts, their timers and ready bits.
// Counters: tx_packets, tx_bytes, tx_pfc, tx_cnp, tx_alloc_fail, tx_retry,
// tx_prefilled / tx_copied / tx_built (data frames by payload path).
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <type_traits>

#include "dpdk/capture.hpp"
#include "gen/gen_responder.hpp"
#include "gen/gen_stages.hpp"
#include "port_burst.hpp"
#include "proto/icrc.hpp"
#include "proto/mac_control.hpp"
#include "roce/frame.hpp"

namespace rocelab::gen {

namespace {

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

}  // namespace

void gen_pipeline::make_templates(flow_state& f) {
    const qp_cfg& q = f.cfg.qp;
    if (f.cfg.sizes.kind != size_kind::fixed || f.cfg.sizes.fixed.v == 0 || f.cfg.sizes.fixed.v > (1u << 31)) {
        return;  // sizes vary: every frame takes the generic path
    }
    bool every_kind = true;  // each kind the QP sends has a template
    std::uint32_t largest = 0;
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
            every_kind = false;
            continue;  // short frames padded to 60 bytes, unusual opcodes: generic path
        }
        largest = std::max(largest, flen);
        frame_tpl& t = f.tpl[static_cast<std::size_t>(kind)];
        std::memcpy(t.hdr.data() + t.hdr.size() - hl, buf.data(), hl);  // right-aligned (build_data)
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
    if (every_kind && largest != 0) {
        f.max_frame = largest;
    }
}

// A port's stocks of mbufs. The common pool's are reset
// (rte_pktmbuf_alloc_bulk); the prefilled pool's are taken raw
// (rte_mempool_get_bulk), as their payload must stay. A
// freed mbuf is back in the raw state (refcnt 1, nb_segs 1, next NULL:
// rte_pktmbuf_prefree_seg), and every field a frame from it needs is set
// by build_data or here: data_off, data_len and pkt_len there, ol_flags
// (no offload) here, all in the mbuf's first line. rte_pktmbuf_reset would
// also write its second line (next, tx_offload) per frame.
namespace {
// n mbufs from mp into m, all or none, raw or reset.
bool take_mbufs(rte_mempool* mp, rte_mbuf** m, unsigned n, bool raw) noexcept {
    if (!raw) {
        return rte_pktmbuf_alloc_bulk(mp, m, n) == 0;
    }
    if (rte_mempool_get_bulk(mp, reinterpret_cast<void**>(m), n) != 0) {
        return false;
    }
    for (unsigned i = 0; i < n; ++i) {
        __rte_mbuf_raw_sanity_check(m[i]);
        m[i]->ol_flags = 0;
    }
    return true;
}
}  // namespace

// Once per frame from the prefilled stock: the test inline, the taking
// (once per stock_bulk frames) a call.
[[gnu::always_inline]] inline bool gen_pipeline::refill(stock& s, rte_mempool* mp, bool raw) noexcept {
    return s.n != 0 || restock(s, mp, raw);
}

bool gen_pipeline::restock(stock& s, rte_mempool* mp, bool raw) noexcept {
    const unsigned bulk = std::clamp<unsigned>(_opts.stock_bulk, 1, max_burst);
    for (const unsigned n : {bulk, 1U}) {  // a nearly empty pool: one at a time
        if (take_mbufs(mp, s.m.data(), n, raw)) {
            s.n = static_cast<std::uint16_t>(n);
            return true;
        }
    }
    return false;
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

// A data frame from its template (inline: once per data frame in tx_port's
// loop), else from build_data_generic.
[[gnu::always_inline]] inline rte_mbuf* gen_pipeline::build_data(flow_state& f, const tx_desc& d,
                                                                 port_state& ps) noexcept {
    const bool first = d.offset == 0;
    const bool last = d.offset + d.len >= d.msg_size;
    const frame_tpl& t = f.tpl[first ? (last ? 3 : 0) : (last ? 2 : 1)];
    if (t.hl != 0 && t.len == d.len && t.msg_size == d.msg_size) [[likely]] {
        rte_mbuf* m;
        std::byte* fr;
        if (_pf_pool != nullptr && d.len == _pf_len && refill(ps.pf_stk, _pf_pool, true)) {
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
        // The headers end where the payload starts: the template holds them
        // right-aligned, so a fixed-size copy (no call) ending at fr + hl
        // writes them, and before them only headroom (data_off >= 96). Its
        // last 64 bytes when they hold the headers: in a prefilled mbuf,
        // the one cache line before the payload (pf_payload_off).
        if (t.hl <= 64) [[likely]] {
            std::memcpy(fr + t.hl - 64, t.hdr.data() + sizeof(t.hdr) - 64, 64);
        } else {
            std::memcpy(fr + t.hl - sizeof(t.hdr), t.hdr.data(), sizeof(t.hdr));
        }
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
    return build_data_generic(f, d, ps);
}

// Frames without a template (sizes vary, unusual opcodes, --tx-payload build).
rte_mbuf* gen_pipeline::build_data_generic(flow_state& f, const tx_desc& d, port_state& ps) noexcept {
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
    if (hl != 0 && _pf_pool != nullptr && d.len == _pf_len && refill(ps.pf_stk, _pf_pool, true)) {
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

// The lines of a flow a tx visit reads first: its priority and the
// requester's state, its pacer and reaction point, and its MIDDLE template.
// With many QPs on a port each visit is to another flow, whose state is
// often out of L1.
static inline void prefetch_tx_lines(const flow_state& f) noexcept {
    __builtin_prefetch(&f.prio_bit);
    __builtin_prefetch(&f.rq);
    __builtin_prefetch(reinterpret_cast<const char*>(&f.rq) + 64);
    __builtin_prefetch(&f.pacer);
    __builtin_prefetch(&f.rp);
    __builtin_prefetch(&f.tpl[1]);
    __builtin_prefetch(reinterpret_cast<const char*>(&f.tpl[1]) + 64);
}

// Cyclic distance from `from` to the next set bit of bm (slots 0..n-1), n if none.
static std::uint32_t next_ready(const line_vector<std::uint64_t>& bm, std::uint32_t from, std::uint32_t n) noexcept {
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

// tx_port's stages, in the order they fill a burst (each adds to t.out and
// t.bytes, up to max_burst frames):
//   stage_pfc_sources  PFC frames the scenario asks the port to send
//   stage_replies      ACK/NAK and ARP replies
//   stage_data         the QPs' data, round robin: visit_burst or
//                      visit_checked per QP
// then send_staged hands the burst to the PMD and keeps what it refused.

// PFC source frames (never paused: MAC Control is not a data class).
[[gnu::always_inline]] inline void gen_pipeline::stage_pfc_sources(port_state& ps, tx_stage& t) noexcept {
    for (auto& s : ps.pfc) {
        if (t.n < max_burst && t.now.v >= s.next && (s.cfg.count == 0 || s.sent < s.cfg.count)) {
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
            t.out[t.n++] = m;
            t.bytes += l;
            ++s.sent;
            bump(ps.c.tx_pfc);
            s.next = s.cfg.interval.v > 0 ? std::max(s.next + s.cfg.interval.v, t.now.v) : INT64_MAX;
        }
    }
}

// Replies (ACK/NAK, ARP) travel in the data class: PFC on the RoCE priority
// holds them too. ARP replies go first either way.
[[gnu::always_inline]] inline void gen_pipeline::stage_replies(port_state& ps, tx_stage& t) noexcept {
    const bool replies_paused = (t.paused & (1u << (_cfg.priority & 7u))) != 0;
    while (t.n < max_burst && !ps.replies.empty() && !replies_paused) {
        if (t.cr != nullptr) [[unlikely]] {
            const std::uint32_t l = ps.replies.front()->pkt_len;
            if (!t.cr->can_send(static_cast<int>(_cfg.priority & 7u), l)) {
                ++t.cr->waits;
                break;
            }
            t.cr->on_send(static_cast<int>(_cfg.priority & 7u), l);
        }
        rte_mbuf* m = nullptr;
        ps.replies.pop(m);
        forget_reply(m);
        ps.line.on_send(t.now, m->pkt_len);
        t.bytes += m->pkt_len;
        t.out[t.n++] = m;
    }
}

// --tx-only: a frame staged; the visit acknowledges them all at its end
// (MSN = messages completed + the message ends sent since the last ACK).
[[gnu::always_inline]] inline void gen_pipeline::tx_ack::sent(const tx_desc& d, bool tx_only) noexcept {
    if (tx_only) {
        psn = d.psn;
        ends += d.offset + d.len >= d.msg_size ? 1u : 0u;
        unacked = true;
    }
}

// The requester's window is full. With frames of this visit unacknowledged
// (--tx-only), acknowledge them now and return true: the visit goes on.
[[gnu::always_inline]] inline bool gen_pipeline::ack_full_window(flow_state& f, nanos now, tx_ack& a) noexcept {
    if (!a.unacked) {
        return false;
    }
    self_ack(f, now, a.psn, a.ends);
    a = tx_ack{};
    return true;
}

// A QP that only its pacer and the port's line cap can hold (no credits, a
// reaction point that counts no bytes before its first CNP, so its rate
// cannot change): its frames in bursts, as many as both shapers let go at
// `now` (shaper::frames_at: what conforms() would allow frame by frame, for
// frames of the QP's largest size; asked again after them), all when
// unshaped. The requester's packets come a burst at a time (next_burst: as
// many next() calls), no more than the common stock holds: build_data falls
// back to it when the prefilled pool is empty. The same frames as
// visit_checked (gen_pacing.the_burst_loop_sends_what_the_checked_loop_sends).
[[gnu::always_inline]] inline std::uint32_t gen_pipeline::visit_burst(flow_state& f, port_state& ps, tx_stage& t,
                                                                      tx_ack& a) noexcept {
    const bool paced = f.pacer.rate().v != 0;
    const std::uint32_t max_len = f.max_frame;
    const nanos now = t.now;
    std::uint32_t q = 0;
    while (q < t.quota && t.n < max_burst) {
        const bool line_ok = !t.line_shaped || ps.line.conforms(now);
        if (!line_ok || (paced && !f.pacer.conforms(now))) {
            t.stop = !line_ok;
            break;
        }
        if (!refill(ps.stk, _pool)) {
            bump(ps.c.tx_alloc_fail);
            t.stop = true;
            break;
        }
        std::uint32_t want = std::min({t.quota - q, std::uint32_t{max_burst} - t.n, std::uint32_t{ps.stk.n}});
        if (paced && want > 1) {
            want = f.pacer.frames_at(now, max_len, want);  // >= 1: it conforms
        }
        if (t.line_shaped && want > 1) {
            want = ps.line.frames_at(now, max_len, want);
        }
        const std::uint32_t got = f.rq.next_burst(now, ps.descs.data(), want);
        if (got == 0) {
            if (ack_full_window(f, now, a)) {
                continue;
            }
            break;
        }
        for (std::uint32_t i = 0; i < got; ++i) {
            const tx_desc& d = ps.descs[i];
            rte_mbuf* m = build_data(f, d, ps);
            a.sent(d, _opts.tx_only);
            const std::uint32_t l = m->pkt_len;
            assert(l <= max_len);  // else frames_at's count is not a bound
            t.bytes += l;
            if (paced) {
                f.pacer.on_send(now, l);
            }
            if (t.line_shaped) {
                ps.line.on_send(now, l);
            }
            t.out[t.n++] = m;
        }
        q += got;
    }
    return q;
}

// Every other QP (credits, a reaction point moving its rate, or
// gen_tx_opts::per_frame_checks): the shapers, credits and the RP asked
// before each frame.
[[gnu::always_inline]] inline std::uint32_t gen_pipeline::visit_checked(flow_state& f, port_state& ps, tx_stage& t,
                                                                        tx_ack& a) noexcept {
    bool paced = f.pacer.rate().v != 0;
    credit_tx* const cr = t.cr;
    const nanos now = t.now;
    std::uint32_t q = 0;
    while (q < t.quota && t.n < max_burst) {
        const bool line_ok = !t.line_shaped || ps.line.conforms(now);
        if (!line_ok || (paced && !f.pacer.conforms(now))) {
            t.stop = !line_ok;  // the port's line cap holds every QP; a QP's pacer only this one
            break;
        }
        if (cr != nullptr && !cr->can_send(std::countr_zero(f.prio_bit), cr->max_frame)) [[unlikely]] {
            t.paused = static_cast<std::uint8_t>(t.paused | f.prio_bit);  // out of credits
            ++cr->waits;
            break;
        }
        // Peek-free: a failed allocation must not consume the packet.
        if (!refill(ps.stk, _pool)) {
            bump(ps.c.tx_alloc_fail);
            t.stop = true;
            break;
        }
        tx_desc d;
        if (!f.rq.next(now, d)) {
            if (ack_full_window(f, now, a)) {
                continue;
            }
            break;
        }
        rte_mbuf* m = build_data(f, d, ps);  // never null: ps.stk holds one
        a.sent(d, _opts.tx_only);
        const std::uint32_t l = m->pkt_len;
        t.bytes += l;
        if (cr != nullptr) [[unlikely]] {
            cr->on_send(std::countr_zero(f.prio_bit), l);
        }
        if (paced) {
            f.pacer.on_send(now, l);
        }
        if (t.line_shaped) {
            ps.line.on_send(now, l);
        }
        if (f.dcqcn) {
            // The RP's byte counter: a no-op until its first CNP (then it may
            // move its timers and rate).
            if (f.rp.counts_bytes()) {
                f.rp.on_sent(now, bytes{l});
                if (f.rp.next_deadline() < f.rp_next) {
                    f.rp_next = f.rp.next_deadline();
                }
            }
            if (f.rp.rate_changed()) {
                apply_rate(f, now);
                paced = f.pacer.rate().v != 0;
            }
        }
        t.out[t.n++] = m;
        ++q;
    }
    return q;
}

// Data: round robin over the port's QPs, a burst of up to `quota` packets
// per QP per visit (max_burst / QPs, at least 1), while the line cap allows.
// Shapers with rate 0 (unshaped) are not called.
[[gnu::always_inline]] inline void gen_pipeline::stage_data(port_state& ps, tx_stage& t) noexcept {
    const auto nq = static_cast<std::uint32_t>(ps.qps.size());
    if (nq == 0 || t.n >= max_burst) {
        return;
    }
    const nanos now = t.now;
    t.line_shaped = ps.line.rate().v != 0;
    t.quota = nq >= max_burst ? 1u : max_burst / nq;
    std::uint32_t rr = ps.rr < nq ? ps.rr : 0;
    bool progress = true;
    while (!t.stop && progress && t.n < max_burst && (!t.line_shaped || ps.line.conforms(now))) {
        progress = false;
        // One cycle over the QP slots from rr, visiting the ready ones
        // (ps.ready) only: the same order, and the same rr after it, as
        // visiting every slot and skipping those that cannot send.
        std::uint32_t visited = 0;
        while (visited < nq && t.n < max_burst) {
            const std::uint32_t dist = next_ready(ps.ready, rr, nq);
            if (dist >= nq - visited) {  // none before the cycle ends
                rr = static_cast<std::uint32_t>((rr + (nq - visited)) % nq);
                break;
            }
            const std::uint32_t slot = (rr + dist) % nq;
            visited += dist + 1;
            rr = slot + 1 == nq ? 0 : slot + 1;
            flow_state& f = *_flows[ps.qps[slot]];
            if (nq > 1) {  // the next slot's QP: its lines while this one sends
                prefetch_tx_lines(*_flows[ps.qps[rr]]);
            }
            if ((t.paused & f.prio_bit) != 0 || !f.rq.can_send(now)) {
                continue;
            }
            tx_ack a;
            const std::uint32_t q = t.cr == nullptr && !(f.dcqcn && f.rp.counts_bytes()) && !_opts.per_frame_checks
                                        ? visit_burst(f, ps, t, a)
                                        : visit_checked(f, ps, t, a);
            if (a.unacked) {
                self_ack(f, now, a.psn, a.ends);
            }
            if (q != 0) {  // its timers and window changed
                // Unless the flow is touched (self_ack that completed a
                // message, --tx-only; a frame received): then this
                // worker's next service_flows, which comes before anything
                // reads its timer, ready bit or pace key (a touched flow
                // makes the worker's deadline "now"), sets all three again
                // from the same state. Doing it here too was a third of the
                // cost per frame with many QPs (one frame per QP per visit).
                if (!req_touched(f)) {
                    reschedule(*_workers[f.req_worker], f.req_ref, now);
                    update_ready(f);
                }
            }
            progress = progress || q != 0;
            if (t.stop) {
                break;
            }
        }
    }
    ps.rr = rr;
}

// The staged burst to the PMD. Frames it refused stay staged (ps.npend) and
// go first next time; only what it took is counted.
[[gnu::always_inline]] inline std::uint32_t gen_pipeline::send_staged(std::size_t pi, port_state& ps, tx_stage& t) noexcept {
    // Capture before the driver owns the frames: after rte_eth_tx_burst a
    // PMD may already have freed (memif, pcap) or handed over (ring) them.
    // Frames retried from an earlier refused burst (the first ps.npend) were
    // captured when they were first staged.
    if (_cap != nullptr) {
        for (std::uint16_t k = ps.npend; k < t.n; ++k) {
            _cap->tap(static_cast<std::uint16_t>(pi), true, t.out[k], t.now);
        }
    }
    const std::uint16_t n = t.n;
    const std::uint16_t sent = dpdk::port_tx(ps.b, t.now, t.out, n);
    std::uint64_t bytes_out = t.bytes;
    if (sent < n) {
        for (std::uint16_t k = sent; k < n; ++k) {
            bytes_out -= t.out[k]->pkt_len;
        }
    }
    bump(ps.c.tx_packets, std::uint64_t{sent});
    bump(ps.c.tx_bytes, bytes_out);
    if (sent < n) {
        bump(ps.c.tx_retry);
        std::memmove(t.out, t.out + sent, sizeof(rte_mbuf*) * (n - sent));
    }
    ps.npend = static_cast<std::uint16_t>(n - sent);
    return sent;
}

std::uint32_t gen_pipeline::tx_port(std::size_t pi, nanos now) noexcept {
    port_state& ps = _ports[pi];
    tx_stage t{ps.pend.data(), ps.npend, 0, now, ps.b.credit, blocked_prios(ps, now)};
    // Frames retried from a refused burst are counted again here.
    for (std::uint16_t k = 0; k < t.n; ++k) {
        t.bytes += t.out[k]->pkt_len;
    }
    if (t.n == 0) {  // a refused burst goes out whole before anything new
        stage_pfc_sources(ps, t);
        stage_replies(ps, t);
        stage_data(ps, t);
    }
    if (t.n == 0) {
        return 0;
    }
    return send_staged(pi, ps, t);
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

}  // namespace rocelab::gen
