// gen_collectives.cpp - the generator's collectives: step gates, plane
// striping and the collective figures.
//
// What (gen_cfg pattern ring-allreduce, all-gather, reduce-scatter,
// alltoall; sized at create(), only indexed on the data path): a flow's
// message k is its collective k / steps, step k % steps. coll_post (from
// service_flows) posts message k once the flow's message k-1 is ACKed and
// its host has what step k needs: rings, the predecessor flow's message k-1
// arrived (its responder's messages_rx, a relaxed atomic); alltoall, every
// message of iteration k-1 to and from the host (the port's a2a_acked /
// a2a_arrived). With planes, a server starts a collective once it finished
// the previous one on every plane (plane_gate), and each plane carries its
// share of the chunk (plane_chunk: even, or weighted by the planes'
// throughput in the previous collective). coll_completed (completions) and
// coll_arrived (respond(), a message in) record and open gates: they touch
// the flows whose gate may have opened. Every gate reads only its own
// host's state. collectives() (control path, allocates) derives collective
// and step times from the flows' post/completion records.
// Inputs: the flows' completions and their responders' messages_rx, the
// ports' alltoall counts, now. Outputs: posted messages (requester
// post_message), touched flows, the per-flow records.
// Counters: the records (coll_post, coll_done, coll_recs) per flow.
#include <algorithm>

#include "gen/gen_stages.hpp"

namespace rocelab::gen {

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
    if (!_ring || _flows.empty() || _ring_steps == 0) {
        return {};
    }
    std::vector<coll_flow_records> r;
    r.reserve(_flows.size());
    for (const auto& fp : _flows) {
        r.push_back({__atomic_load_n(&fp->coll_recs, __ATOMIC_ACQUIRE), read_counter(fp->rq.counters().messages_completed),
                     fp->coll_post.data(), fp->coll_done.data()});
    }
    return collective_figures_of(_ring_steps, r);
}

gen_pipeline::collective_figures gen_pipeline::collective_figures_of(std::uint64_t steps,
                                                                     const std::vector<coll_flow_records>& flows) {
    collective_figures out;
    if (flows.empty() || steps == 0) {
        return out;
    }
    std::uint64_t recs = UINT64_MAX;  // messages every flow has completed and recorded
    std::uint64_t done_msgs = UINT64_MAX;
    for (const auto& f : flows) {
        recs = std::min(recs, f.recs);
        done_msgs = std::min(done_msgs, f.completed);
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
            for (const auto& f : flows) { start = std::min(start, f.post[k]); }
            prev = start;
        }
        std::int64_t end = INT64_MIN;
        for (const auto& f : flows) { end = std::max(end, f.done[k]); }
        out.step_sum_ns[s] += static_cast<std::uint64_t>(std::max<std::int64_t>(end - prev, 0));
        ++out.step_n[s];
        prev = end;
        if (s + 1 == steps) {
            out.ns.push_back(static_cast<std::uint64_t>(std::max<std::int64_t>(end - start, 0)));
        }
    }
    return out;
}

}  // namespace rocelab::gen
