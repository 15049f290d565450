// gen_pipeline.cpp - the generator's composition (see gen_pipeline.hpp; the
// stages and where each lives: gen_stages.hpp).
//
// create() builds the pipeline in steps (gen_setup.cpp). A worker's poll
// runs its stages in a fixed order: RX (gen_rx.cpp, with the responder,
// gen_responder.hpp) on each of its ports, then the flows due for service
// (the requester, gen_requester.cpp, which also runs the pacer's DCQCN
// timers, gen_pacer.cpp, and the collectives' gates, gen_collectives.cpp),
// then per port the CNPs and the TX burst (gen_tx.cpp). next_deadline asks
// each worker (gen_pacer.cpp). release_all frees every mbuf held.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>

#include "gen/gen_responder.hpp"
#include "gen/gen_stages.hpp"
#include "port_burst.hpp"

namespace rocelab::gen {

std::variant<std::unique_ptr<gen_pipeline>, std::string> gen_pipeline::create(const gen_cfg& cfg,
                                                                              std::vector<port_binding> ports,
                                                                              rte_mempool* pool,
                                                                              gen_tx_opts opts, unsigned workers,
                                                                              const std::vector<unsigned>& port_worker) {
    std::unique_ptr<gen_pipeline> p(new gen_pipeline());
    p->_cfg = cfg;
    p->_pool = pool;
    p->_opts = opts;
    p->setup_ports(ports);
    std::string err = p->setup_flows();
    if (err.empty()) {
        p->setup_collectives();
        p->setup_payload();
        err = p->setup_pools();
    }
    if (err.empty()) {
        err = p->setup_workers(workers, port_worker);
    }
    if (!err.empty()) {
        return err;
    }
    return p;
}

gen_pipeline::~gen_pipeline() {
    release_all();
    if (_pf_owned) {
        rte_mempool_free(_pf_pool);
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
    stage_clock sc;  // bench builds: cycles per stage (gen_stage)
    std::uint32_t moved = 0;
    for (const std::uint16_t i : w.ports) {
        if (_opts.tx_only) { break; }
        if (dpdk::port_rx_maybe(_ports[i].b) || _ports[i].delay_head != _ports[i].delay_tail) {
            moved += rx_port(i, now);
        }
    }
    sc.lap(w, gen_stage::rx, moved);
    [[maybe_unused]] const std::uint32_t serviced = service_flows(w, now);
    sc.lap(w, gen_stage::service, serviced);
    for (const std::uint16_t i : w.ports) {
        if (ps_has_cnps(_ports[i])) [[unlikely]] {
            [[maybe_unused]] const std::uint32_t c = tx_cnps(i, now);
            moved += c;
            sc.lap(w, gen_stage::cnps, c);
        }
        [[maybe_unused]] const std::uint32_t t = tx_port(i, now);
        moved += t;
        sc.lap(w, gen_stage::tx, t);
    }
    return moved;
}

std::vector<stage_figures> gen_pipeline::stage_cycles([[maybe_unused]] std::size_t k) const {
#ifdef ROCELAB_STAGE_CYCLES
    return stage_list(_workers[k]->stages, gen_stage_names);
#else
    return {};  // no stage is lapped outside a bench build
#endif
}

gen_pipeline::worker_view gen_pipeline::poll_totals() const noexcept { return poll_totals_of(*this, _views); }

// The earliest time at which poll() has work of its own (see the header).
nanos gen_pipeline::next_deadline(nanos now) noexcept {
    nanos d = nanos::max();
    for (std::size_t k = 0; k < _workers.size(); ++k) { d = std::min(d, next_deadline_worker(k, now)); }
    return d;
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

std::uint64_t gen_pipeline::own_mbufs_in_use() const noexcept {
    return _pf_owned ? rte_mempool_in_use_count(_pf_pool) : 0;
}

}  // namespace rocelab::gen
