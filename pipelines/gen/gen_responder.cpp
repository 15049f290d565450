// gen_responder.cpp - the responder stage's CNP generation (see
// gen_responder.hpp for the stage: the per-frame part is inline there).
//
// send_cnp: the notification point decided a CNP (at a CE-marked frame in
// respond(), or a deferred one when the flow is serviced): built from the
// flow's CNP template (cnp4/cnp6: responder host -> requester QP, DSCP and
// 802.1p from the NP config, BECN) in a fresh mbuf of the common pool, onto
// the responder port's CNP ring, which tx_cnps (gen_tx.cpp) sends ahead of
// everything else. Counters: port tx_alloc_fail, drop_cnp_full; flow cnp_tx,
// cnp_tx_fail.
#include <rte_mbuf.h>

#include "gen/gen_stages.hpp"
#include "proto/build.hpp"

namespace rocelab::gen {

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

}  // namespace rocelab::gen
