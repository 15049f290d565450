// toy_ring.hpp - a deterministic toy model for the parallel engine's
// determinism tests (one engine, threads, ranks: sim/parallel.hpp).
//
// What: N nodes; node i sends on a ring link i -> i+1 and a chord link
// i -> i+3 (mod N), each with its own rate, delay, loss and small rings
// (so TX refusals and RX-full drops happen). A node is a serial server:
// each token it takes waits a processing delay drawn from the node's own
// PRNG, then goes out on the ring or the chord (chosen from its payload),
// with its payload stirred and its hop count raised; after `max_hops` a
// token retires and the node makes a new one. Every send also puts a credit
// update on the link's credit channel, so the credit records cross ranks too.
// Each node hashes its whole event trace (rx, tx, credit: node, time,
// token id, payload, hops); trace_hash() folds the nodes' hashes in node
// order. Equal hashes: the same events at the same times everywhere.
//
// Runs: run_one() (one engine), run_parallel(part_of, threads) (one
// process), run_rank(t, part_of, part_rank, threads) (this rank's nodes
// only; gather_hash() folds every rank's on rank 0).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/rng.hpp"
#include "core/units.hpp"
#include "sim/engine.hpp"
#include "sim/parallel.hpp"
#include "sim/sync_transport.hpp"

namespace rocelab::sim::toy {

using namespace rocelab::literals;

struct token {
    std::uint64_t id = 0;
    std::uint64_t payload = 0;
    std::uint32_t len = 0;
    std::uint32_t hops = 0;
};

// Tokens travel between ranks as 24 bytes.
struct token_traits {
    std::uint32_t length(const token& t) const noexcept { return t.len; }
    void drop(token&) const noexcept {}
    void on_wire(const token&, std::int64_t, std::int64_t, wire_fate) const noexcept {}
    void serialize(const token& t, std::vector<std::byte>& out) const {
        const std::size_t at = out.size();
        out.resize(at + 24);
        std::memcpy(out.data() + at, &t.id, 8);
        std::memcpy(out.data() + at + 8, &t.payload, 8);
        std::memcpy(out.data() + at + 16, &t.len, 4);
        std::memcpy(out.data() + at + 20, &t.hops, 4);
    }
    token deserialize(const std::byte* p, std::size_t n) const {
        if (n != 24) { throw std::runtime_error("toy token: not 24 bytes"); }
        token t;
        std::memcpy(&t.id, p, 8);
        std::memcpy(&t.payload, p + 8, 8);
        std::memcpy(&t.len, p + 16, 4);
        std::memcpy(&t.hops, p + 20, 4);
        return t;
    }
};

using tlink = sim_link<token, token_traits>;
using tengine = engine<token, token_traits>;
using tparallel = parallel_engine<token, token_traits>;

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 31);
}

struct node final : sim_node {
    std::uint32_t idx = 0;
    tlink* out[2] = {nullptr, nullptr};  // ring, chord
    tlink* in[2] = {nullptr, nullptr};
    rng r;
    std::deque<std::pair<std::int64_t, token>> pending;  // (done at, token), serial server
    std::int64_t busy_until = 0;
    std::uint64_t made = 0;
    std::uint32_t max_hops = 12;
    std::uint64_t h = 0;
    std::uint64_t events = 0;
    std::uint64_t credits = 0;

    explicit node(std::uint32_t i, unsigned tokens) : idx(i), r(1000 + i) {
        for (unsigned k = 0; k < tokens; ++k) { make(static_cast<std::int64_t>(r.next() % 3000)); }
        h = mix(0, i);
    }
    void make(std::int64_t at) {
        token t{(static_cast<std::uint64_t>(idx) << 32) | made++, r.next(), 0, 0};
        t.len = 64 + static_cast<std::uint32_t>(t.payload % 1400);
        busy_until = std::max(busy_until, at);
        pending.emplace_back(busy_until, t);
    }
    void trace(std::uint64_t kind, nanos now, const token& t) {
        h = mix(mix(mix(mix(mix(h, kind), static_cast<std::uint64_t>(now.v)), t.id), t.payload), t.hops);
        ++events;
    }
    static void credit_sink(void* ctx, int vl, std::uint64_t fccl) noexcept {
        auto* n = static_cast<node*>(ctx);
        n->h = mix(mix(mix(n->h, 3), static_cast<std::uint64_t>(vl)), fccl);
        ++n->credits;
    }

    nanos poll(nanos now) noexcept override {
        std::array<token, 8> b;
        for (tlink* l : in) {
            if (l == nullptr) { continue; }
            std::size_t n;
            while ((n = l->rx_burst(now, b.data(), b.size())) > 0) {
                for (std::size_t k = 0; k < n; ++k) {
                    trace(1, now, b[k]);
                    busy_until = std::max(busy_until, now.v) + 50 + static_cast<std::int64_t>(r.next() % 700);
                    pending.emplace_back(busy_until, b[k]);
                }
            }
        }
        while (!pending.empty() && pending.front().first <= now.v) {
            token t = pending.front().second;
            t.payload = t.payload * 6364136223846793005ULL + idx + 1;
            ++t.hops;
            tlink* l = out[(t.payload >> 17) & 1];
            if (l->tx_burst(now, &t, 1) != 1) { return l->tx_free_time(now); }
            trace(2, now, t);
            l->send_credit(now, static_cast<int>(t.hops & 7), t.id);
            pending.pop_front();
            if (t.hops >= max_hops) { make(now.v + 100); }
        }
        return pending.empty() ? nanos::max() : nanos{pending.front().first};
    }
};

// The links: node i -> i+1 (ring, k = 0) and i -> i+3 (chord, k = 1).
struct link_spec {
    std::uint32_t from, to, k;
    link_cfg cfg;
};
inline std::vector<link_spec> links_of(std::uint32_t n, bool zero_delay_link0 = false) {
    std::vector<link_spec> v;
    for (std::uint32_t i = 0; i < n; ++i) {
        for (std::uint32_t k = 0; k < 2; ++k) {
            const std::uint32_t j = (i + (k == 0 ? 1 : 3)) % n;
            link_cfg c{.rate = bits_per_sec{(k == 0 ? 25ull : 10ull) * 1'000'000'000ull},
                       .prop_delay = nanos{300 + 97 * static_cast<std::int64_t>(i) + 410 * k},
                       .loss = (i + k) % 3 == 0 ? 0.002 : 0.0,
                       .loss_seed = 7 + i * 2 + k,
                       .tx_ring_size = 4,
                       .rx_ring_size = 6};
            if (zero_delay_link0 && i == 0 && k == 0) { c.prop_delay = nanos{0}; }
            v.push_back({i, j, k, c});
        }
    }
    return v;
}
// The smallest time a frame takes on a link: its delay + a 60 B frame's wire time.
inline nanos min_crossing(const link_cfg& c) {
    const auto wire = static_cast<std::int64_t>((c.min_frame_len + c.overhead.v) * 8ull * 1'000'000'000ull / c.rate.v);
    return nanos{c.prop_delay.v + std::max<std::int64_t>(wire, 1)};
}

struct model {
    std::uint32_t n;
    std::vector<std::unique_ptr<node>> nodes;
    std::vector<link_spec> specs;
    explicit model(std::uint32_t count, unsigned tokens = 3, bool zero_delay_link0 = false)
        : n(count), specs(links_of(count, zero_delay_link0)) {
        for (std::uint32_t i = 0; i < n; ++i) { nodes.push_back(std::make_unique<node>(i, tokens)); }
    }
    void wire(const link_spec& s, tlink& l) {
        nodes[s.from]->out[s.k] = &l;
        nodes[s.to]->in[s.k] = &l;
        l.set_credit_channel(&node::credit_sink, nodes[s.to].get(), min_crossing(s.cfg));
    }
    // Hash of every node's trace, in node order.
    std::uint64_t hash() const {
        std::uint64_t h = 0;
        for (const auto& nd : nodes) { h = mix(mix(h, nd->h), nd->events); }
        return h;
    }
    std::uint64_t events() const {
        std::uint64_t e = 0;
        for (const auto& nd : nodes) { e += nd->events; }
        return e;
    }
};

struct result {
    std::uint64_t hash = 0;
    std::uint64_t events = 0;
    std::uint64_t credits = 0;
    std::uint64_t windows = 0;
    std::uint64_t late = 0;
};

inline result run_one(std::uint32_t n, nanos end) {
    model m(n);
    tengine e;
    for (auto& nd : m.nodes) { e.add_node(*nd); }
    for (const auto& s : m.specs) { m.wire(s, e.link(e.add_link(s.from, s.to, s.cfg))); }
    e.run_until(end);
    result r{m.hash(), m.events(), 0, 0, 0};
    for (auto& nd : m.nodes) { r.credits += nd->credits; }
    return r;
}

// Builds the model into pe: node i in partition part_of[i], only the nodes
// of local partitions are added (every rank adds every cross link, in the
// same order). Returns the lookahead.
inline nanos build(model& m, tparallel& pe, const std::vector<unsigned>& part_of) {
    std::vector<std::uint32_t> local(m.n);
    std::vector<std::uint32_t> count(pe.partitions(), 0);
    for (std::uint32_t i = 0; i < m.n; ++i) {
        local[i] = count[part_of[i]]++;
        if (pe.is_local(part_of[i])) { (void)pe.part(part_of[i]).add_node(*m.nodes[i]); }
    }
    nanos look = nanos::max();
    for (const auto& s : m.specs) {
        const unsigned pa = part_of[s.from], pb = part_of[s.to];
        if (pa == pb) {
            if (!pe.is_local(pa)) { continue; }
            auto& e = pe.part(pa);
            m.wire(s, e.link(e.add_link(local[s.from], local[s.to], s.cfg)));
        } else {
            m.wire(s, pe.cross_link(pe.add_cross_link(pa, local[s.from], pb, local[s.to], s.cfg)));
            look = std::min(look, min_crossing(s.cfg));
        }
    }
    return look;
}

inline result run_parallel(std::uint32_t n, nanos end, const std::vector<unsigned>& part_of, unsigned threads) {
    model m(n);
    unsigned parts = 0;
    for (const unsigned p : part_of) { parts = std::max(parts, p + 1); }
    tparallel pe(parts);
    const nanos look = build(m, pe, part_of);
    pe.set_lookahead(look == nanos::max() ? end : look);
    pe.run_until(end, threads);
    result r{m.hash(), m.events(), 0, pe.counters().windows, pe.counters().late};
    for (auto& nd : m.nodes) { r.credits += nd->credits; }
    return r;
}

// One rank's share: the local nodes' (hash, events, credits), then folded on
// rank 0 through the transport (rank 0's result holds the total; the other
// ranks' hash is 0).
inline result run_rank(sync_transport& t, std::uint32_t n, nanos end, const std::vector<unsigned>& part_of,
                       const std::vector<unsigned>& part_rank, unsigned threads) {
    model m(n);
    tparallel pe(part_rank, t);
    const nanos look = build(m, pe, part_of);
    pe.set_lookahead(look == nanos::max() ? end : look);
    pe.run_until(end, threads);
    if (pe.now() != end) { throw std::runtime_error("toy: the clock is not at the end"); }
    // Gather (node, hash, events, credits) of the local nodes on rank 0.
    std::vector<std::vector<std::byte>> send(t.ranks()), recv(t.ranks());
    std::vector<std::array<std::uint64_t, 4>> mine;
    for (std::uint32_t i = 0; i < n; ++i) {
        if (pe.is_local(part_of[i])) { mine.push_back({i, m.nodes[i]->h, m.nodes[i]->events, m.nodes[i]->credits}); }
    }
    if (t.rank() != 0 && !mine.empty()) {  // a rank may hold no nodes: no memcpy from a null pointer
        send[0].resize(mine.size() * sizeof(mine[0]));
        std::memcpy(send[0].data(), mine.data(), send[0].size());
    }
    t.exchange(send, recv);
    result r{0, 0, 0, pe.counters().windows, pe.counters().late};
    if (t.rank() != 0) { return r; }
    for (std::uint32_t q = 1; q < t.ranks(); ++q) {
        const std::size_t k = recv[q].size() / sizeof(mine[0]);
        if (k == 0) { continue; }
        const std::size_t at = mine.size();
        mine.resize(at + k);
        std::memcpy(mine.data() + at, recv[q].data(), k * sizeof(mine[0]));
    }
    if (mine.size() != n) { throw std::runtime_error("toy: rank 0 gathered a wrong number of nodes"); }
    std::sort(mine.begin(), mine.end());
    for (const auto& x : mine) {
        r.hash = mix(mix(r.hash, x[1]), x[2]);
        r.events += x[2];
        r.credits += x[3];
    }
    return r;
}

}  // namespace rocelab::sim::toy
