// gen_stages.hpp - what the generator's stage files share (private to
// pipelines/gen/; nothing outside includes it).
//
// The generator is one class, gen_pipeline (gen_pipeline.hpp), whose member
// functions are split by stage over these files:
//   gen_pipeline.cpp     composition: create() in steps, poll_worker (one
//                        worker's loop: rx, service, CNP tx, tx), deadlines,
//                        release
//   gen_setup.cpp        create()'s steps (control path: ports, flows,
//                        collectives, payload tables and pools, workers)
//   gen_rx.cpp           RX: burst, delay line, parse, MAC Control, ARP/ND,
//                        checks (locality, loss, ICRC, QPN), dispatch
//   gen_responder.hpp/.cpp  responder: data in -> ACK/NAK on the reply ring,
//                        the DCQCN notification point and its CNPs
//   gen_requester.cpp    requester: per-flow service (ACK timeouts, go-back-N
//                        via roce/requester, completions and FCTs, message
//                        posting), its timers
//   gen_pacer.cpp        pacer: DCQCN reaction point -> pacer rate, the ready
//                        set and pace heap, next_deadline_worker
//   gen_tx.cpp           TX: frame templates and data frames, the per-port
//                        TX burst (PFC sources, replies, data round robin),
//                        CNP TX
//   gen_collectives.cpp  collectives: step gates, plane striping, figures
//
// Build note: there is no LTO. The per-frame calls between stages are either
// inline here (bump, mdata, touch, blocked_prios) or in a stage's own private
// header (gen_responder.hpp), or were out-of-line calls already when the
// generator was one file (rx_frame, build_data, restock, icrc_of, apply_rate,
// update_ready, reschedule, send_cnp, self_ack, the collective gates): the
// split does not add a call on any per-frame path.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "gen/gen_pipeline.hpp"
#include "qos/credit.hpp"

namespace rocelab::gen {

// Counters: a single writer (this lcore); a relaxed store so readers (the
// control thread, read_counter) never see a torn value.
template <typename T>
inline void bump(T& c, T by = 1) noexcept {
    __atomic_store_n(&c, c + by, __ATOMIC_RELAXED);
}

inline std::byte* mdata(rte_mbuf* m) noexcept { return rte_pktmbuf_mtod(m, std::byte*); }

// BTH pad count: payload bytes to the next multiple of 4.
constexpr std::uint32_t pad_of(std::uint32_t payload) noexcept { return (4u - (payload & 3u)) & 3u; }

// Buffer offset of the payload in a prefilled mbuf: headroom + room for the
// largest data header (Ethernet + 802.1Q + IPv6 + UDP + BTH + RETH + ImmDt =
// 98), on a cache line (buf_addr is on one), so that headers of up to 64
// bytes (IPv4 MIDDLE and LAST frames, 54 B, 58 with a VLAN tag) fill the
// one line before it: the frame's headers and its ICRC are two lines to
// write, not three (build_data; perf had 12 % of tx_port on the store
// after the header copy when it spanned two lines).
constexpr std::uint32_t pf_payload_off = RTE_PKTMBUF_HEADROOM + 128;
static_assert(pf_payload_off % 64 == 0);
// The most a data frame carries besides its payload: Ethernet + 802.1Q +
// IPv6 + UDP + BTH + RETH + ImmDt, pad and ICRC (frames shorter than 60
// bytes are padded to 60, still below PMTU 256 + this).
constexpr std::uint32_t max_data_overhead = 14 + 4 + 40 + 8 + 12 + 16 + 4 + 3 + 4;
// build_data writes a template's headers with a fixed 96-byte copy that
// ends where the payload starts; from a fresh mbuf's data start (headroom
// behind it) that stays inside the buffer.
static_assert(RTE_PKTMBUF_HEADROOM >= 96, "frame_tpl's fixed-size header copy needs 96 bytes of headroom");

// The priorities port ps may not send on now: paused by PFC/PAUSE, or, in
// credit mode (qos/credit.hpp), without credits for the port's largest frame
// (a host gates on that: it builds a frame only once it may send it).
// (A template: gen_pipeline::port_state is private.)
template <typename PortState>
inline std::uint8_t blocked_prios(PortState& ps, nanos now) noexcept {
    std::uint8_t m = ps.pt.paused_mask(now);
    if (const credit_tx* cr = ps.b.credit; cr != nullptr) [[unlikely]] {
        m = static_cast<std::uint8_t>(m | cr->blocked_mask(cr->max_frame));
    }
    return m;
}

// A side of a flow needs service at the next poll (a frame, a send or a
// completion changed it): its bit in the owning worker's svc set.
inline void gen_pipeline::touch(flow_state& f, bool req_side) noexcept {
    const std::uint32_t r = req_side ? f.req_ref : f.resp_ref;
    worker_state& w = *_workers[req_side ? f.req_worker : f.resp_worker];
    w.svc[r >> 6] |= std::uint64_t{1} << (r & 63);
}
// Whether the requester side of f is touched (serviced at the next poll).
inline bool gen_pipeline::req_touched(const flow_state& f) const noexcept {
    const worker_state& w = *_workers[f.req_worker];
    return (w.svc[f.req_ref >> 6] >> (f.req_ref & 63) & 1u) != 0;
}

}  // namespace rocelab::gen
