// neigh_table.hpp - the L3 leaf's dynamic neighbour table (ARP / IPv6 ND).
//
// What it does
//   Maps an IPv4 or IPv6 address (a connected host, or a route's next hop in
//   a connected subnet) to the neighbour's MAC on a port, learnt from ARP and
//   neighbour discovery, with the life cycle of RFC 4861 section 7.3 (which
//   Linux uses for ARP too), simplified to what a forwarding plane needs:
//
//     incomplete  resolution under way: `probes` requests (ARP broadcast,
//                 NS to the solicited-node group) `retrans` apart; frames
//                 for it wait in a small per-neighbour queue. No answer
//                 after the last one: the entry is removed and its waiting
//                 frames are dropped (on_drop).
//     reachable   confirmed less than `reachable` ago: used as is.
//     stale       older than that: still used; the first use starts a probe.
//     probe       a unicast request every `retrans`, up to `probes`; no
//                 answer: removed (the next frame starts a new resolution).
//   An answer (learn()) makes any entry reachable and releases its waiting
//   frames (on_release) with the MAC. Stale entries unused for `gc` are
//   removed (aging).
//
// Learning (learn): from ARP requests and replies, NS (source link-layer
// option) and NA (target link-layer option). `create` says whether an
// unknown address may get an entry: as in Linux (arp_process, RFC 4861
// 7.2.3/7.2.5), only the sender of a request addressed to us gets a new
// entry; replies, NAs and gratuitous ARP only update an existing one, which
// resolve() created when a frame needed it. The caller decides which
// addresses are eligible (connected subnet of the ingress port, no static
// NEIGH entry: static entries win because the route table resolves them
// before this table is consulted).
//
// Data path: resolve() and learn() are O(1) (open addressing with linear
// probing over a power-of-two array, at most half full; removal by backward
// shift, so there are no tombstones), allocation-free and noexcept. poll()
// times requests and failures exactly: the entries being resolved
// (incomplete, probe) are listed apart and every poll visits all of them,
// so a retransmission is late by at most one poll interval and their cost
// is proportional to the neighbours under resolution. Aging (reachable ->
// stale -> removed, timers of seconds) runs over `scan` slots per call (a
// cursor), so its cost per call is bounded whatever the table size. Pure: time is an argument, no
// DPDK types; `Held` is whatever the caller parks (an mbuf and its metadata).
//
// Addresses: neigh_key holds 16 bytes; IPv4 in the first 4 in network order.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "core/counter.hpp"
#include "core/endian.hpp"
#include "core/units.hpp"
#include "proto/eth.hpp"

namespace rocelab {

struct neigh_key {
    std::array<std::uint8_t, 16> addr{};
    bool v6 = false;

    static neigh_key v4(std::uint32_t host_order) noexcept {
        neigh_key k;
        store_be32(reinterpret_cast<std::byte*>(k.addr.data()), host_order);
        return k;
    }
    static neigh_key v6_from(const std::uint8_t* a16) noexcept {
        neigh_key k;
        std::memcpy(k.addr.data(), a16, 16);
        k.v6 = true;
        return k;
    }
    std::uint32_t v4_host() const noexcept { return load_be32(reinterpret_cast<const std::byte*>(addr.data())); }
    bool operator==(const neigh_key&) const noexcept = default;
};

enum class neigh_state : std::uint8_t { incomplete, reachable, stale, probe };
// By enum value.
inline constexpr const char* neigh_state_names[] = {"incomplete", "reachable", "stale", "probe"};

inline const char* to_string(neigh_state s) noexcept {
    const auto i = static_cast<std::size_t>(s);
    return i < std::size(neigh_state_names) ? neigh_state_names[i] : "?";
}

struct neigh_params {
    std::size_t capacity = 4096;       // entries (the array holds twice as many slots)
    nanos reachable{30'000'000'000};   // confirmed entries are used as is this long
    nanos retrans{1'000'000'000};      // between requests
    std::uint8_t probes = 3;           // requests before giving up
    nanos gc{60'000'000'000};          // a stale entry unused this long is removed
    std::uint8_t queue = 4;            // frames waiting per unresolved neighbour (0..max_queue)
    std::size_t scan = 64;             // slots the aging sweep visits per poll()
    static constexpr std::uint8_t max_queue = 8;
};

// One entry as a listing gives it (neigh_table::list).
struct neigh_listed {
    neigh_key key{};
    std::uint16_t port = 0;
    mac_addr mac{};
    neigh_state state = neigh_state::incomplete;
    std::int64_t confirmed_ns = 0;
    std::uint64_t hits = 0;
    std::uint8_t n_held = 0;
};

// What the caller must send now for a neighbour.
enum class neigh_request : std::uint8_t {
    none,
    multicast,  // ARP broadcast / NS to the solicited-node group (resolution)
    unicast,    // ARP / NS to the known MAC (reconfirming a stale entry)
};

enum class neigh_verdict : std::uint8_t {
    forward,     // use mac
    held,        // parked; released by learn() or dropped by poll()
    queue_full,  // the neighbour's queue is full: the caller drops the frame
    table_full,  // no room for a new entry: the caller drops the frame
};

// The table's counters, one list for the struct, the totals over several
// tables and the switch report's "neighbors" object, in the report's order
// (core/counter.hpp). mac_changes: a resolved entry learned another MAC.
// clang-format off
#define ROCELAB_NEIGH_STATS(X) \
    X(created) X(learned) X(resolved) X(mac_changes) \
    X(requests) X(failed) X(aged) X(held) X(released) \
    X(dropped_queue_full) X(dropped_table_full) X(dropped_unresolved)
// clang-format on
struct neigh_stats {
    ROCELAB_NEIGH_STATS(ROCELAB_COUNTER64)
};

template <typename Held>
class neigh_table {
public:
    static constexpr std::uint32_t no_pend = ~std::uint32_t{0};
    struct entry {
        neigh_key key{};
        bool used = false;
        neigh_state state = neigh_state::incomplete;
        std::uint16_t port = 0;
        mac_addr mac{};
        std::uint8_t probes_sent = 0;
        std::uint8_t n_held = 0;
        std::int64_t confirmed_ns = 0;  // last answer
        std::int64_t used_ns = 0;       // last frame forwarded with it
        std::int64_t next_ns = 0;       // next request (incomplete, probe)
        std::uint32_t pend = no_pend;   // its place in the list of entries under resolution
        std::uint64_t hits = 0;         // frames forwarded with it
        std::array<Held, neigh_params::max_queue> held{};
    };

    struct result {
        neigh_verdict verdict = neigh_verdict::forward;
        neigh_request request = neigh_request::none;
        const entry* e = nullptr;  // forward: e->mac; a request: whom to ask (e->key, e->port, e->mac)
    };

    explicit neigh_table(const neigh_params& p)
        : _p(p),
          _slots(std::bit_ceil(std::max<std::size_t>(2 * p.capacity, 8))),
          _e(new entry[_slots]),
          _pend(new neigh_key[p.capacity]) {
        _p.queue = std::min(_p.queue, neigh_params::max_queue);
        _p.scan = std::max<std::size_t>(_p.scan, 1);
    }

    // A frame for `k`, reachable through `port`. forward: e->mac is the
    // neighbour's MAC. held: `h` was parked. queue_full/table_full: not
    // parked, the caller drops it. request != none: send that request now
    // (for e->key on e->port; unicast to e->mac).
    result resolve(const neigh_key& k, std::uint16_t port, nanos now, const Held& h) noexcept {
        std::size_t i = find(k);
        if (i != npos) {
            entry& e = _e[i];
            if (e.state != neigh_state::incomplete) {
                e.used_ns = now.v;
                ++e.hits;
                result r{neigh_verdict::forward, neigh_request::none, &e};
                if (e.state == neigh_state::reachable && now.v - e.confirmed_ns >= _p.reachable.v) {
                    e.state = neigh_state::stale;
                }
                if (e.state == neigh_state::stale) {  // first use after it went stale: reconfirm
                    e.state = neigh_state::probe;
                    e.probes_sent = 1;
                    e.next_ns = now.v + _p.retrans.v;
                    pend_add(e);
                    ++_st.requests;
                    r.request = neigh_request::unicast;
                }
                return r;
            }
            if (e.n_held >= _p.queue) {
                ++_st.dropped_queue_full;
                return {neigh_verdict::queue_full, neigh_request::none, &e};
            }
            e.held[e.n_held++] = h;
            ++_st.held;
            return {neigh_verdict::held, neigh_request::none, &e};
        }
        if (_n >= _p.capacity) {
            ++_st.dropped_table_full;
            return {neigh_verdict::table_full, neigh_request::none, nullptr};
        }
        i = insert(k);
        entry& e = _e[i];
        e.port = port;
        e.state = neigh_state::incomplete;
        e.probes_sent = 1;
        e.next_ns = now.v + _p.retrans.v;
        e.used_ns = now.v;
        pend_add(e);
        ++_st.created;
        ++_st.requests;
        result r{neigh_verdict::held, neigh_request::multicast, &e};
        if (_p.queue == 0) {
            ++_st.dropped_queue_full;
            r.verdict = neigh_verdict::queue_full;
        } else {
            e.held[e.n_held++] = h;
            ++_st.held;
        }
        return r;
    }

    // An answer from (or about) `k`: its MAC, seen on `port`. Creates the
    // entry only if `create`. Waiting frames go to on_release(held, mac,
    // port) in arrival order. Returns whether the table holds k now.
    template <typename OnRelease>
    bool learn(const neigh_key& k, std::uint16_t port, const mac_addr& mac, nanos now, bool create,
               OnRelease&& on_release) noexcept {
        if ((mac[0] & 1u) != 0) { return false; }  // never a multicast/broadcast neighbour
        std::size_t i = find(k);
        if (i == npos) {
            if (!create || _n >= _p.capacity) { return false; }
            i = insert(k);
            _e[i].used_ns = now.v;
            ++_st.created;
        }
        entry& e = _e[i];
        if (e.state != neigh_state::incomplete && e.mac != mac) { ++_st.mac_changes; }
        if (e.state == neigh_state::incomplete && e.n_held + e.probes_sent > 0) { ++_st.resolved; }
        e.mac = mac;
        e.port = port;
        e.state = neigh_state::reachable;
        e.confirmed_ns = now.v;
        e.probes_sent = 0;
        pend_remove(e);
        ++_st.learned;
        const std::uint8_t n = e.n_held;
        e.n_held = 0;
        for (std::uint8_t j = 0; j < n; ++j) {
            ++_st.released;
            on_release(e.held[j], e.mac, e.port);
        }
        return true;
    }

    // Timers. Every entry under resolution (incomplete, probe) whose time
    // has come: its next request (on_request(entry, kind)), or, after
    // `probes` requests, its failure (waiting frames to on_drop(held)).
    // Then aging over the next `scan` slots.
    template <typename OnRequest, typename OnDrop>
    void poll(nanos now, OnRequest&& on_request, OnDrop&& on_drop) noexcept {
        for (std::size_t k = 0; k < _n_pend;) {
            const std::size_t i = find(_pend[k]);
            entry& e = _e[i];
            if (now.v < e.next_ns) {
                ++k;
                continue;
            }
            if (e.probes_sent < _p.probes) {
                ++e.probes_sent;
                e.next_ns = now.v + _p.retrans.v;
                ++_st.requests;
                on_request(static_cast<const entry&>(e),
                           e.state == neigh_state::probe ? neigh_request::unicast : neigh_request::multicast);
                ++k;
                continue;
            }
            ++_st.failed;
            for (std::uint8_t j = 0; j < e.n_held; ++j) {
                ++_st.dropped_unresolved;
                on_drop(e.held[j]);
            }
            e.n_held = 0;
            erase(i);  // takes it off the list: the last one moves into place k
        }
        for (std::size_t s = 0; s < _p.scan && _n != 0; ++s) {
            const std::size_t i = _cursor;
            _cursor = (_cursor + 1) & (_slots - 1);
            entry& e = _e[i];
            if (!e.used) { continue; }
            if (e.state == neigh_state::reachable) {
                if (now.v - e.confirmed_ns >= _p.reachable.v) { e.state = neigh_state::stale; }
            } else if (e.state == neigh_state::stale) {
                if (now.v - std::max(e.used_ns, e.confirmed_ns) >= _p.gc.v) {
                    ++_st.aged;
                    erase(i);
                    _cursor = i;  // erase() may have shifted a later entry into slot i: visit it
                }
            }
        }
    }

    // Drops every waiting frame (shutdown) through on_drop.
    template <typename OnDrop>
    void drop_all_held(OnDrop&& on_drop) noexcept {
        for (std::size_t i = 0; i < _slots; ++i) {
            entry& e = _e[i];
            for (std::uint8_t j = 0; j < e.n_held; ++j) { on_drop(e.held[j]); }
            e.n_held = 0;
        }
    }

    // Removes every entry on `port` (link down), dropping their waiting frames.
    template <typename OnDrop>
    std::size_t flush_port(std::uint16_t port, OnDrop&& on_drop) noexcept {
        std::size_t n = 0;
        for (std::size_t i = 0; i < _slots;) {
            entry& e = _e[i];
            if (e.used && e.port == port) {
                for (std::uint8_t j = 0; j < e.n_held; ++j) { on_drop(e.held[j]); }
                e.n_held = 0;
                erase(i);  // a later entry may move into slot i: look at it again
                ++n;
                continue;
            }
            ++i;
        }
        return n;
    }

    const entry* lookup(const neigh_key& k) const noexcept {
        const std::size_t i = find(k);
        return i == npos ? nullptr : &_e[i];
    }

    // Every entry, from the thread that owns the table (the entries are
    // plain fields: another thread takes a copy from list(), made by the
    // owner; see switch_pipeline::neighbors_live).
    template <typename Fn>
    void for_each(Fn&& fn) const noexcept {
        for (std::size_t i = 0; i < _slots; ++i) {
            if (_e[i].used) { fn(static_cast<const entry&>(_e[i])); }
        }
    }
    // The entries copied into out, at most out.size() of them (capacity()
    // holds them all); returns how many. No allocation.
    std::size_t list(std::span<neigh_listed> out) const noexcept {
        std::size_t k = 0;
        for (std::size_t i = 0; i < _slots && k < out.size(); ++i) {
            const entry& e = _e[i];
            if (!e.used) { continue; }
            out[k++] = listed(e);
        }
        return k;
    }
    static neigh_listed listed(const entry& e) noexcept {
        return neigh_listed{e.key, e.port, e.mac, e.state, e.confirmed_ns, e.hits, e.n_held};
    }
    std::size_t capacity() const noexcept { return _p.capacity; }

    std::size_t size() const noexcept { return _n; }
    std::size_t under_resolution() const noexcept { return _n_pend; }
    const neigh_stats& stats() const noexcept { return _st; }
    const neigh_params& params() const noexcept { return _p; }

private:
    static constexpr std::size_t npos = ~std::size_t{0};

    // The list of entries under resolution, by key (entries move when
    // another is erased; a key does not): e.pend is e's place in it.
    void pend_add(entry& e) noexcept {
        if (e.pend != no_pend) { return; }
        e.pend = static_cast<std::uint32_t>(_n_pend);
        _pend[_n_pend++] = e.key;
    }
    void pend_remove(entry& e) noexcept {
        if (e.pend == no_pend) { return; }
        const std::size_t k = e.pend;
        e.pend = no_pend;
        if (k != --_n_pend) {
            _pend[k] = _pend[_n_pend];
            _e[find(_pend[k])].pend = static_cast<std::uint32_t>(k);
        }
    }

    std::size_t home(const neigh_key& k) const noexcept {
        // FNV-1a over the address bytes, then a multiplicative mix.
        std::uint64_t h = 1469598103934665603ULL ^ (k.v6 ? 0x9E37u : 0u);
        const std::size_t n = k.v6 ? 16 : 4;
        for (std::size_t i = 0; i < n; ++i) {
            h = (h ^ k.addr[i]) * 1099511628211ULL;
        }
        h ^= h >> 29;
        return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ULL >> 17) & (_slots - 1);
    }

    std::size_t find(const neigh_key& k) const noexcept {
        for (std::size_t i = home(k);; i = (i + 1) & (_slots - 1)) {
            if (!_e[i].used) { return npos; }
            if (_e[i].key == k) { return i; }
        }
    }

    // k is not present and _n < capacity (so a free slot exists).
    std::size_t insert(const neigh_key& k) noexcept {
        std::size_t i = home(k);
        while (_e[i].used) { i = (i + 1) & (_slots - 1); }
        entry& e = _e[i];
        e = entry{};
        e.key = k;
        e.used = true;
        ++_n;
        return i;
    }

    // Backward-shift deletion (linear probing without tombstones).
    void erase(std::size_t i) noexcept {
        pend_remove(_e[i]);
        _e[i].used = false;
        --_n;
        std::size_t j = i;
        for (;;) {
            j = (j + 1) & (_slots - 1);
            if (!_e[j].used) { return; }
            const std::size_t h = home(_e[j].key);
            // Move e[j] to the hole at i when its home is not in (i, j] (cyclically).
            const bool in_range = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (in_range) { continue; }
            _e[i] = _e[j];
            _e[j].used = false;
            _e[j].n_held = 0;
            i = j;
        }
    }

    neigh_params _p;
    std::size_t _slots;
    std::unique_ptr<entry[]> _e;
    counter64 _n = 0;  // read by other threads (size())
    std::unique_ptr<neigh_key[]> _pend;  // keys of the entries under resolution
    std::size_t _n_pend = 0;
    std::size_t _cursor = 0;
    neigh_stats _st{};
};

}  // namespace rocelab
