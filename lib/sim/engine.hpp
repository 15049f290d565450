// engine.hpp - the virtual-time engine: nodes, links, one event queue, and
// the clock they all share.
//
// What: runs a fabric of nodes (switch or generator pipelines later, test
// nodes now) joined by modelled links (sim/link.hpp) in virtual time. Each
// node is polled when it has work and tells the engine when it next will:
//
//   class sim_node { virtual nanos poll(nanos now) noexcept = 0; };
//
// poll() returns the next time the node has work of its own (a shaper
// conforming, a timer, a pacer slot, refused frames: the TX ring's next free
// slot), nanos::max() when only an arrival can give it work. A deadline
// <= now means "poll me again at this time" (e.g. more than a burst waiting).
//
// Loop (run_until(end)):
//   1. t = the earliest pending event: every node's deadline and every
//      link's next arrival, kept in one event_queue (one slot per node and
//      per link, ordered by (time, seq)); stop if t > end.
//   2. clock.now = t (time jumps over idle periods: nothing is polled in
//      between).
//   3. pop every event at t: a node wake-up marks the node due; a link
//      arrival moves the frames that arrived by t into the receiver's RX ring
//      (loss, RX-full drops) and, when any went in, marks the receiver due;
//      the link's slot moves to its next arrival.
//   4. poll the due nodes in node-index order (fixed, never by address);
//      each poll's result becomes the node's new wake-up, and the node's
//      outgoing links that took frames in the poll reschedule their next
//      arrival (a frame put on an idle link creates one); each such link
//      flags itself in its sender's bitmap, so the others are not visited.
//   5. repeat; at the end now = end.
// A link arrival is always later than the tx_burst that caused it (a frame
// takes >= 1 ns to serialise), so a poll never makes another node due at
// the same time; a node that returns <= now is polled again at now.
//
// Cost per event: O(log(nodes + links)) for the queue, one virtual call per
// node poll (a whole burst), no allocation: all storage is set up by
// add_node/add_link.
//
// Counters (engine_counters): events (queue pops), link_events, node_polls,
// instants (distinct times visited); items moved per link are the links'
// `delivered` (items_delivered() sums them).
//
// Example:
//   engine<frame> e;
//   auto a = e.add_node(src); auto b = e.add_node(sink);
//   auto l = e.add_link(a, b, link_cfg{.rate = 100_Gbps, .prop_delay = 500_ns});
//   src.port = e.port(l, engine<frame>::no_link);
//   sink.port = e.port(engine<frame>::no_link, l);
//   e.run_until(1_ms);
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/units.hpp"
#include "sim/event_queue.hpp"
#include "sim/link.hpp"
#include "sim/sim_port.hpp"
#include "sim/virtual_clock.hpp"

namespace rocelab::sim {

class sim_node {
public:
    virtual ~sim_node() = default;
    // Does the work due at `now`; returns when the node next has work of its
    // own, nanos::max() when none.
    virtual nanos poll(nanos now) noexcept = 0;
};

struct engine_counters {
    std::uint64_t events = 0;       // events popped from the queue
    std::uint64_t link_events = 0;  // of which link arrivals
    std::uint64_t node_polls = 0;   // sim_node::poll calls
    std::uint64_t instants = 0;     // distinct times at which something ran
};

template <typename Item, typename Traits = item_traits<Item>>
class engine {
public:
    using link_type = sim_link<Item, Traits>;
    using port_type = sim_port<Item, Traits>;
    static constexpr std::uint32_t no_link = UINT32_MAX;

    explicit engine(nanos start = nanos{0}) : _clock(start) {}
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    // ---- set-up (allocates; throws std::invalid_argument on misuse) ----

    // The node is polled first at the current time. The engine keeps a
    // reference: the node must outlive it.
    std::uint32_t add_node(sim_node& n) {
        const auto id = static_cast<std::uint32_t>(_nodes.size());
        _nodes.push_back(node_rec{&n, add_slot(slot_kind::node, id), {}});
        _due.resize((_nodes.size() + 63) / 64, 0);
        _q.schedule(_nodes.back().slot, _clock.now());
        return id;
    }

    // A link from node `from` (its sender) to node `to` (its receiver).
    std::uint32_t add_link(std::uint32_t from, std::uint32_t to, const link_cfg& cfg, Traits traits = {}) {
        if (from >= _nodes.size() || to >= _nodes.size()) {
            throw std::invalid_argument("sim engine: add_link names a node that was not added");
        }
        const auto id = static_cast<std::uint32_t>(_links.size());
        _owned.push_back(std::make_unique<link_type>(cfg, traits));
        _links.push_back(link_rec{_owned.back().get(), from, to, add_slot(slot_kind::link, id)});
        _nodes[from].out_links.push_back(id);
        set_notify();
        return id;
    }
    // A split link (link.hpp) whose sender is a node of another engine (a
    // partition of sim/parallel.hpp), owned by the caller: this engine
    // schedules its arrivals and wakes `to`. After the link's transfer()
    // the caller calls sync_in(id).
    std::uint32_t add_link_in(std::uint32_t to, link_type& l) {
        if (to >= _nodes.size()) {
            throw std::invalid_argument("sim engine: add_link_in names a node that was not added");
        }
        const auto id = static_cast<std::uint32_t>(_links.size());
        _links.push_back(link_rec{&l, no_node, to, add_slot(slot_kind::link, id)});
        return id;
    }
    void sync_in(std::uint32_t id) noexcept { sync_link(_links[id]); }

    static constexpr std::uint32_t no_node = UINT32_MAX;

    // A port transmitting on link `tx` and receiving from link `rx` (either
    // may be no_link).
    port_type port(std::uint32_t tx, std::uint32_t rx) {
        if ((tx != no_link && tx >= _links.size()) || (rx != no_link && rx >= _links.size())) {
            throw std::invalid_argument("sim engine: port names a link that was not added");
        }
        if (tx != no_link && rx != no_link && _links[tx].from != _links[rx].to) {
            throw std::invalid_argument("sim engine: a port's TX link and RX link belong to different nodes");
        }
        return port_type{tx == no_link ? nullptr : _links[tx].l,
                         rx == no_link ? nullptr : _links[rx].l};
    }

    // ---- run ----

    // Runs every event with time <= end, then sets now = end (if later).
    void run_until(nanos end) noexcept {
        while (!_q.empty()) {
            const nanos t = _q.next_time();
            if (t > end) {
                break;
            }
            run_instant(t);
        }
        _clock.advance_to(end);
    }

    // Runs the next instant (all events at the earliest pending time);
    // false when nothing is pending.
    bool step() noexcept {
        if (_q.empty()) {
            return false;
        }
        run_instant(_q.next_time());
        return true;
    }

    // ---- real time ----
    // One round of a real-time run (the same nodes and links, driven by a
    // wall clock instead of the event queue): now = t, every link moves
    // what has arrived by t into its receiver's RX ring, then every node is
    // polled at t (poll-mode, as lcores are: deadlines are not consulted).
    // A fabric runs either this way or with run_until/step, not both: the
    // event queue is not kept up to date here.
    void poll_all(nanos t) noexcept {
        deliver_all(t);
        for (auto& nr : _nodes) {
            ++_c.node_polls;
            (void)nr.n->poll(t);
        }
        end_round();
    }
    // The same round in parts, for a driver that moves frames between the
    // links and something else (ethdev rings) around the node polls:
    // deliver_all(t), then the driver's polls, then end_round().
    void deliver_all(nanos t) noexcept {
        _clock.advance_to(t);
        ++_c.instants;
        for (auto& lr : _links) { lr.l->deliver(t); }
    }
    void end_round() noexcept {
        for (auto& lr : _links) { (void)lr.l->take_tx_since_sync(); }
    }

    // ---- inspection ----

    const virtual_clock& clock() const noexcept { return _clock; }
    nanos now() const noexcept { return _clock.now(); }
    nanos next_event_time() const noexcept { return _q.next_time(); }
    const engine_counters& counters() const noexcept { return _c; }
    std::size_t node_count() const noexcept { return _nodes.size(); }
    std::size_t link_count() const noexcept { return _links.size(); }
    link_type& link(std::uint32_t i) noexcept { return *_links[i].l; }
    const link_type& link(std::uint32_t i) const noexcept { return *_links[i].l; }
    // Items moved by all links into RX rings (item-hops).
    std::uint64_t items_delivered() const noexcept {
        std::uint64_t n = 0;
        for (const auto& l : _links) {
            n += l.l->counters().delivered;
        }
        return n;
    }

private:
    enum class slot_kind : std::uint8_t { node, link };
    struct slot_rec {
        slot_kind kind;
        std::uint32_t index;
    };
    struct node_rec {
        sim_node* n;
        std::uint32_t slot;
        std::vector<std::uint32_t> out_links;
        std::uint32_t tx_word = 0;   // its words in _tx_sent: bit k, out_links[k] accepted a
        std::uint32_t tx_words = 0;  // frame since the last sync (set_notify)
    };
    // Gives every link its flag bit in its sender's words of _tx_sent (at
    // each add_link, so the run never allocates: O(links) per link added).
    void set_notify() {
        std::size_t words = 0;
        for (auto& nr : _nodes) {
            nr.tx_word = static_cast<std::uint32_t>(words);
            nr.tx_words = static_cast<std::uint32_t>((nr.out_links.size() + 63) / 64);
            words += nr.tx_words;
        }
        _tx_sent.assign(words, 0);
        for (auto& nr : _nodes) {
            for (std::size_t k = 0; k < nr.out_links.size(); ++k) {
                _links[nr.out_links[k]].l->notify_tx(&_tx_sent[nr.tx_word + k / 64], std::uint64_t{1} << (k % 64));
            }
        }
    }
    struct link_rec {
        link_type* l;
        std::uint32_t from;  // no_node: a link in from another engine
        std::uint32_t to;
        std::uint32_t slot;
    };

    std::uint32_t add_slot(slot_kind k, std::uint32_t index) {
        const auto s = static_cast<std::uint32_t>(_slots.size());
        _slots.push_back(slot_rec{k, index});
        _q.reserve(_slots.size());
        return s;
    }

    void mark_due(std::uint32_t node) noexcept { _due[node >> 6] |= std::uint64_t{1} << (node & 63); }

    void sync_link(const link_rec& lr) noexcept {
        const nanos next = lr.l->next_wire_arrival();
        if (next != _q.time_of(lr.slot)) {
            if (next == nanos::max()) {
                _q.cancel(lr.slot);
            } else {
                _q.schedule(lr.slot, next);
            }
        }
    }

    void run_instant(nanos t) noexcept {
        _clock.advance_to(t);
        ++_c.instants;
        // 3. every event at t
        while (!_q.empty() && _q.next_time() == t) {
            ++_c.events;
            const slot_rec s = _slots[_q.top().slot];
            if (s.kind == slot_kind::node) {
                _q.pop();
                mark_due(s.index);
            } else {
                ++_c.link_events;
                link_rec& lr = _links[s.index];
                if (lr.l->deliver(t) > 0) {
                    mark_due(lr.to);
                }
                // Every frame due by t is delivered, so the next arrival is
                // later: the event moves in place (one sift) or goes.
                sync_link(lr);
            }
        }
        // 4. the due nodes, in index order
        for (std::size_t w = 0; w < _due.size(); ++w) {
            while (_due[w] != 0) {
                const auto bit = static_cast<std::uint32_t>(std::countr_zero(_due[w]));
                _due[w] &= _due[w] - 1;
                const auto i = static_cast<std::uint32_t>(w * 64 + bit);
                node_rec& nr = _nodes[i];
                ++_c.node_polls;
                const nanos d = nr.n->poll(t);
                if (d == nanos::max()) {
                    _q.cancel(nr.slot);
                } else {
                    _q.schedule(nr.slot, d < t ? t : d);
                }
                // Only a frame put on a link changes its next arrival here
                // (arrivals up to t were all delivered above). The links
                // flag themselves in tx_sent; visited in out_links order.
                std::uint64_t* const sent = _tx_sent.data() + nr.tx_word;
                for (std::size_t tw = 0; tw < nr.tx_words; ++tw) {
                    for (std::uint64_t bits = sent[tw]; bits != 0; bits &= bits - 1) {
                        link_rec& lr = _links[nr.out_links[tw * 64 + static_cast<std::size_t>(std::countr_zero(bits))]];
                        (void)lr.l->take_tx_since_sync();
                        sync_link(lr);
                    }
                    sent[tw] = 0;
                }
            }
        }
    }

    virtual_clock _clock;
    event_queue _q;
    std::vector<slot_rec> _slots;
    std::vector<node_rec> _nodes;
    std::vector<link_rec> _links;
    std::vector<std::unique_ptr<link_type>> _owned;
    std::vector<std::uint64_t> _due;  // bitmap of nodes due at the current instant
    std::vector<std::uint64_t> _tx_sent;  // per node's out links, flagged by the links (set_notify)
    engine_counters _c;
};

}  // namespace rocelab::sim
