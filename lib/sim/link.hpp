// link.hpp - one direction of a modelled Ethernet link: TX descriptor ring,
// serialisation at line rate, propagation delay, optional i.i.d. loss, and
// the receiver's RX descriptor ring.
//
// What: the sender puts frames on the TX ring (tx_burst); the link drains it
// back to back at `rate`; each frame arrives at the peer `prop_delay` after
// its last bit left; on arrival it is lost (i.i.d. with probability `loss`)
// or pushed into the RX ring, or dropped when the RX ring is full (like a
// NIC's imissed); the receiver takes frames with rx_burst.
//
//   tx_burst(now)  -> [ TX ring: tx_ring_size ] -> wire -> [ RX ring: rx_ring_size ] -> rx_burst(now)
//                     accepted or refused          loss     rx_ring_full drop
//
// Timing, exact (the arithmetic of qos/shaper.hpp). Frame i of len_i bytes
// costs w_i = (len_i + overhead) x 8 x 1e9 / rate ns of wire time (overhead
// 24 B: preamble+SFD+IFG 20, FCS 4; DPDK frames carry neither). The time the
// line frees up is held as
//   free = _free_ns + _free_rem / R,   0 <= _free_rem < R   (R = rate, bit/s)
// and a frame accepted at `now` departs (its last bit leaves) at
//   depart_exact = max(now, free) + w_i,  free := depart_exact
// where w_i is added as q = floor(bits x 1e9 / R) ns plus the remainder
// r = (bits x 1e9) mod R carried into _free_rem, so after any number of
// frames `free` equals the exact rational sum: no drift. Events happen at
// integer ns: a frame has departed at depart = ceil(depart_exact) (the first
// ns at which all of it is on the wire) and arrives at
//   arrive = depart + prop_delay.
// Departures are in TX order and prop_delay is fixed, so arrivals are too.
//
// TX ring: a frame holds its TX slot until it departs, as a NIC descriptor
// is held until the frame is sent; tx_burst refuses frames when all
// tx_ring_size slots are held (the caller keeps them, as with
// rte_eth_tx_burst). tx_free_time(now, k) says when k slots will be free.
//
// Lazy and exact: the link does its bookkeeping when called. Each call
// (tx_burst, rx_burst, deliver) first retires departures and moves every
// frame with arrive <= now into the RX ring in arrival order. Since nothing
// reads the RX ring between two calls, the RX occupancy each frame finds is
// the same as if it had been moved at its exact arrival time; the loss draws
// are taken in arrival order. The engine calls deliver(t) at each arrival
// time t to wake the receiver. Calls must come with non-decreasing `now`.
//
// Storage is allocated in the constructor and never again: the TX ring plus
// the frames on the wire (at most prop_delay / wire time of a
// min_frame_len frame, + 2) share one FIFO; the RX ring is another. A frame
// shorter than min_frame_len can exhaust the wire storage on a long link;
// it is then refused like a full TX ring and counted (tx_refused_wire_full).
//
// Split (set_split(), before use): the sender and the receiver run on two
// threads (partitions of a parallel engine, sim/parallel.hpp). The sender's
// calls (tx_burst, tx_free_time, tx_ring_used, take_tx_since_sync) touch
// only the TX side: frames it accepts go to an outbox with their departure
// and arrival times, and it keeps their departures to know its TX ring. The
// receiver's calls (rx_burst, deliver, next_wire_arrival, next_arrival)
// touch only the wire and RX side. transfer(), called while neither runs
// (between the engine's windows), moves the outbox onto the wire. Since a
// frame arrives at least prop_delay + a minimum frame's wire time after it
// was accepted, and a window is no longer than that, every frame is
// transferred before its arrival time comes: the run is the same, event for
// event, as with one thread.
//
// Items: a frame handle (plain struct with `len`, or rte_mbuf*). Traits
// gives length(item) and drop(item) (called on a frame the link drops, so
// the DPDK layer can free the mbuf); the default reads `item.len` and does
// nothing on drop. Frames still held when the link is destroyed are not
// dropped: drain them first (rx_burst) if they own memory.
//
// Parameters (link_cfg): rate, prop_delay, loss (probability, 0 = none),
// loss_seed, tx_ring_size, rx_ring_size, overhead (24 B), min_frame_len (60,
// storage sizing only). link_cfg_error() checks them (control path).
//
// Counters (link_counters): tx_accepted, tx_bytes, tx_refused (TX ring
// full), tx_refused_wire_full, lost, rx_ring_full, delivered (moved into
// the RX ring: the link's item-hops), arrived / arrived_bytes (left the
// wire, whatever their fate: what the line carried), rx_taken.
//
// Config example:
//   link_cfg c{.rate = 100_Gbps, .prop_delay = 1_us, .loss = 1e-4, .loss_seed = 7,
//              .tx_ring_size = 256, .rx_ring_size = 1024};
//   sim_link<frame> l{c};
//   n = l.tx_burst(now, frames, 32);       // frames[n..] are still the caller's
//   m = l.rx_burst(now, out, 32);          // only frames with arrive <= now
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/rng.hpp"
#include "core/units.hpp"
#include "core/wire_time.hpp"
#include "sim/fifo.hpp"

namespace rocelab::sim {

struct link_cfg {
    bits_per_sec rate{0};
    nanos prop_delay{0};
    double loss = 0.0;                 // i.i.d. loss probability per frame, [0, 1]
    std::uint64_t loss_seed = 1;       // seeds this link's own rng stream
    std::uint32_t tx_ring_size = 256;  // TX descriptors (frames not yet departed)
    std::uint32_t rx_ring_size = 1024; // RX descriptors (arrived, not yet taken)
    bytes overhead{24};                // wire bytes per frame not in the item
    std::uint32_t min_frame_len = 60;  // sizes the wire storage only
};

// Empty when the config is usable, else what is wrong (control path).
inline std::string link_cfg_error(const link_cfg& c) {
    if (c.rate.v == 0) {
        return "link rate must be > 0 bit/s";
    }
    if (c.rate.v > (std::uint64_t{1} << 57)) {
        return "link rate must be <= 2^57 bit/s";
    }
    if (c.prop_delay.v < 0) {
        return "link prop_delay must be >= 0";
    }
    if (!(c.loss >= 0.0 && c.loss <= 1.0)) {
        return "link loss must be a probability in [0, 1]";
    }
    if (c.tx_ring_size == 0 || c.rx_ring_size == 0) {
        return "link tx_ring_size and rx_ring_size must be >= 1";
    }
    if (c.overhead.v + c.min_frame_len == 0) {
        return "link overhead + min_frame_len must be >= 1 byte";
    }
    return {};
}

// How the link sees an item. Specialise (or pass another Traits) for
// rte_mbuf*: length = pkt_len, drop = rte_pktmbuf_free.
//
// on_wire(item, depart, arrive, fate) is called once per frame as it leaves
// the wire, in arrival order, before it is delivered, lost or dropped (so
// the item is still whole): a capture point in fabric time (depart = its
// last bit left the sender, arrive = its last bit reached the receiver).
//
// Over ranks (sim/parallel.hpp's distributed mode), a Traits also gives
//   void serialize(const Item&, std::vector<std::byte>& out) const;  // appends the item's bytes
//   Item deserialize(const std::byte* p, std::size_t n) const;        // the item from exactly those bytes
// (optional: only a link between ranks needs them).
enum class wire_fate : std::uint8_t { delivered, lost, rx_ring_full };

template <typename Item>
struct item_traits {
    std::uint32_t length(const Item& it) const noexcept { return static_cast<std::uint32_t>(it.len); }
    void drop(Item&) const noexcept {}
    void on_wire(const Item&, std::int64_t, std::int64_t, wire_fate) const noexcept {}
    void on_credit() const noexcept {}  // a credit update reached the receiver (credit channel; optional)
};

// The sender's counters and the receiver's on cache lines of their own: a
// link between two partitions (sim/parallel.hpp) is written by two threads.
struct link_counters {
    alignas(64) std::uint64_t tx_accepted = 0;  // frames put on the TX ring
    std::uint64_t tx_bytes = 0;              // their bytes (without overhead)
    std::uint64_t tx_refused = 0;            // refused: TX ring full (still the caller's)
    std::uint64_t tx_refused_wire_full = 0;  // refused: wire storage full (runts on a long link)
    alignas(64) std::uint64_t lost = 0;      // dropped by the i.i.d. loss model
    std::uint64_t rx_ring_full = 0;          // dropped at arrival: RX ring full
    std::uint64_t delivered = 0;             // moved into the RX ring
    std::uint64_t arrived = 0;               // left the wire by now (delivered, lost or dropped)
    std::uint64_t arrived_bytes = 0;         // their bytes (without overhead)
    std::uint64_t rx_taken = 0;              // returned by rx_burst
    std::uint64_t credit_updates = 0;        // credit updates handed to the sink (credit channel)
};

// One credit update on its way (the credit channel, below).
struct credit_update {
    std::int64_t arrive = 0;
    std::uint64_t fccl = 0;
    std::uint8_t vl = 0;
};

template <typename Item, typename Traits = item_traits<Item>>
class sim_link {
public:
    using item_type = Item;

    // Set-up: allocates the rings. Throws std::invalid_argument on a bad cfg.
    explicit sim_link(const link_cfg& cfg, Traits traits = {})
        : _cfg(checked(cfg)),
          _traits(traits),
          _loss_threshold(probability_threshold(cfg.loss)),
          _wire(cfg.tx_ring_size + wire_slots(cfg)),
          _rx(cfg.rx_ring_size),
          _rng(cfg.loss_seed) {}

    sim_link(const sim_link&) = delete;
    sim_link& operator=(const sim_link&) = delete;

    // Puts in[0..n) on the TX ring in order until it is full; returns how
    // many were taken. The caller still owns in[ret..n).
    std::size_t tx_burst(nanos now, const Item* in, std::size_t n) noexcept {
        advance_tx(now);
        std::size_t i = 0;
        for (; i < n; ++i) {
            if (tx_held() >= _cfg.tx_ring_size) {
                _c.tx_refused += n - i;
                break;
            }
            if (_split ? _out.full() : _wire.full()) {
                _c.tx_refused_wire_full += n - i;
                break;
            }
            const std::uint32_t len = _traits.length(in[i]);
            if (now.v > _free_ns) {  // line idle since `free`: start now
                _free_ns = now.v;
                _free_rem = 0;
            }
            add_wire_time(len + _cfg.overhead.v);
            _tx_since_sync = true;
            if (_tx_word != nullptr) { *_tx_word |= _tx_bit; }
            const std::int64_t depart = _free_ns + (_free_rem != 0 ? 1 : 0);
            if (_split) {
                _out.push(wire_entry{in[i], depart, depart + _cfg.prop_delay.v, len});
                _txdep.push(depart);
            } else {
                _wire.push(wire_entry{in[i], depart, depart + _cfg.prop_delay.v, len});
            }
            ++_c.tx_accepted;
            _c.tx_bytes += len;
        }
        return i;
    }

    // Takes up to n frames that have arrived by `now`, in arrival order.
    std::size_t rx_burst(nanos now, Item* out, std::size_t n) noexcept {
        advance(now);
        std::size_t i = 0;
        while (i < n && !_rx.empty() && _rx.front().arrive <= now.v) {
            out[i++] = _rx.front().item;
            _rx.pop();
        }
        _c.rx_taken += i;
        return i;
    }

    // Moves the frames that have arrived by `now` into the RX ring (loss and
    // RX-full drops counted); returns how many went into the RX ring.
    // Credit updates handed to the sink count too (the receiver has work).
    std::size_t deliver(nanos now) noexcept {
        const std::uint64_t before = _c.delivered + _c.credit_updates;
        advance(now);
        return static_cast<std::size_t>(_c.delivered + _c.credit_updates - before);
    }

    // True once (then false) after tx_burst accepted a frame: the engine
    // reschedules the link's arrival event only then.
    bool take_tx_since_sync() noexcept {
        const bool t = _tx_since_sync;
        _tx_since_sync = false;
        return t;
    }
    // Also set bit `bit` of *word when tx_burst accepts a frame (the sending
    // node's bitmap of links to sync, kept by the engine): after a poll the
    // engine visits only the links that were sent on, not every link of the
    // node (each a cache line of its own).
    void notify_tx(std::uint64_t* word, std::uint64_t bit) noexcept {
        _tx_word = word;
        _tx_bit = bit;
    }

    // ---- the credit channel (credit mode: qos/credit.hpp) ----
    // The cable's other direction carries this link's receiver's credit
    // updates back; here, this link carries to its receiver the updates for
    // the link in the other direction. set_credit_channel(sink, delay) (set
    // up, before use): updates sent at `now` arrive at now + delay and are
    // handed, in order, to sink(vl, fccl) on the receiver's side (in the
    // same calls that deliver frames); they take no room on the wire (an IB
    // flow-control packet is 6 bytes; `delay` includes its wire time).
    // Updates sent at one instant for one VL are merged (the last one
    // counts); storage is bounded by (delay + 1) x 8 updates, and when full
    // the newest update of the VL is raised in place (never lost).
    using credit_sink = void (*)(void* ctx, int vl, std::uint64_t fccl) noexcept;
    void set_credit_channel(credit_sink sink, void* ctx, nanos delay) {
        _csink = sink;
        _cctx = ctx;
        _cdelay = delay.v;
        const std::size_t cap = static_cast<std::size_t>(std::min<std::int64_t>((delay.v + 1) * 8 + 16, 65536));
        _cred = fifo<credit_update>(cap);
        if (_split) { _cout = fifo<credit_update>(cap); }
    }
    bool has_credit_channel() const noexcept { return _csink != nullptr; }
    // The sender's side: an update for VL vl (the limit FCCL), sent at now.
    void send_credit(nanos now, int vl, std::uint64_t fccl) noexcept {
        fifo<credit_update>& q = _split ? _cout : _cred;
        const std::int64_t t = now.v + _cdelay;
        const auto v = static_cast<std::uint8_t>(vl);
        for (std::size_t i = q.size(); i-- > 0;) {  // merge: same instant, or full
            credit_update& u = q[i];
            if (u.arrive != t && !q.full()) { break; }
            if (u.vl == v) {
                u.fccl = fccl;
                return;
            }
        }
        if (q.full()) { return; }  // full of other VLs' updates at this instant: cannot happen (8 per instant)
        q.push(credit_update{t, fccl, v});
        _tx_since_sync = true;
        if (_tx_word != nullptr) { *_tx_word |= _tx_bit; }
    }

    // Arrival time of the next frame still on the link (TX ring or wire),
    // or of the next credit update, not yet delivered; nanos::max() when
    // none. The engine's link event.
    nanos next_wire_arrival() const noexcept {
        const nanos w = _wire.empty() ? nanos::max() : nanos{_wire.front().arrive};
        if (_cred.empty()) { return w; }
        return std::min(w, nanos{_cred.front().arrive});
    }
    // Arrival time of the oldest frame not yet taken by rx_burst (in the RX
    // ring, else on the link); nanos::max() when none.
    nanos next_arrival() const noexcept { return _rx.empty() ? next_wire_arrival() : nanos{_rx.front().arrive}; }

    // When at least k TX slots are free: `now` if they already are,
    // nanos::max() if k > tx_ring_size.
    nanos tx_free_time(nanos now, std::size_t k = 1) noexcept {
        if (k > _cfg.tx_ring_size) {
            return nanos::max();
        }
        advance_tx(now);
        const std::size_t held = tx_held();
        const std::size_t free = _cfg.tx_ring_size - held;
        if (free >= k) {
            return now;
        }
        const std::size_t j = (k - free) - 1;
        return nanos{_split ? _txdep[j] : _wire[_departed + j].depart};
    }
    // Frames holding TX slots at `now`.
    std::size_t tx_ring_used(nanos now) noexcept {
        advance_tx(now);
        return tx_held();
    }

    // ---- split (see above) ----
    // Set-up, before the first frame: the sender and the receiver will run
    // on different threads.
    void set_split() {
        _split = true;
        _out = fifo<wire_entry>(_wire.capacity());
        _txdep = fifo<std::int64_t>(_wire.capacity());
        if (_csink != nullptr) { _cout = fifo<credit_update>(_cred.capacity()); }
    }
    bool split() const noexcept { return _split; }
    // Arrival time of the first frame or credit update in the outbox (what
    // transfer() or take_outbox() will move; each queue is in arrival
    // order); nanos::max() when it is empty.
    nanos outbox_first_arrival() const noexcept {
        const nanos w = _out.empty() ? nanos::max() : nanos{_out.front().arrive};
        return _cout.empty() ? w : std::min(w, nanos{_cout.front().arrive});
    }
    // Between windows (neither side running): the outbox onto the wire, in
    // order. True when frames moved (the receiver's next arrival may be new).
    bool transfer() noexcept {
        bool moved = false;
        while (!_cout.empty()) {
            _cred.push(_cout.front());  // fits: the same bound
            _cout.pop();
            moved = true;
        }
        if (_out.empty()) {
            return moved;
        }
        while (!_out.empty()) {
            _wire.push(_out.front());  // fits: the wire and the outbox share one bound
            _out.pop();
        }
        return true;
    }
    // Over ranks (sim/parallel.hpp, "Over ranks"): the link exists on both
    // ranks; the sender's rank runs only its sending side, the receiver's
    // rank only its receiving side. Instead of transfer(), the sender's rank
    // takes the outbox (take_outbox: f(item, depart, arrive, len) for each
    // frame and g(credit_update) for each credit update, in order; the
    // outbox is then empty and the items are forgotten here), and the
    // receiver's rank puts what it received on the wire in the same order
    // (push_wire, push_credit; false when the wire storage is full: a
    // message the sender's link could not have produced).
    template <typename F, typename G>
    bool take_outbox(F&& f, G&& g) {
        bool moved = false;
        while (!_cout.empty()) {
            g(static_cast<const credit_update&>(_cout.front()));
            _cout.pop();
            moved = true;
        }
        while (!_out.empty()) {
            const wire_entry& e = _out.front();
            f(static_cast<const Item&>(e.item), e.depart, e.arrive, e.len);
            _out.pop();
            moved = true;
        }
        return moved;
    }
    bool push_wire(const Item& it, std::int64_t depart, std::int64_t arrive, std::uint32_t len) noexcept {
        if (_wire.full()) { return false; }
        _wire.push(wire_entry{it, depart, arrive, len});
        return true;
    }
    bool push_credit(const credit_update& u) noexcept {
        if (_cred.full()) { return false; }
        _cred.push(u);
        return true;
    }
    const Traits& traits() const noexcept { return _traits; }

    std::size_t rx_ring_used() const noexcept { return _rx.size(); }
    // Frames accepted but not yet delivered (TX ring + wire).
    std::size_t on_link() const noexcept { return _wire.size(); }

    // The exact time the line frees up: free_ns + free_rem / rate.
    std::int64_t line_free_ns() const noexcept { return _free_ns; }
    std::uint64_t line_free_rem() const noexcept { return _free_rem; }

    const link_cfg& cfg() const noexcept { return _cfg; }
    const link_counters& counters() const noexcept { return _c; }

    // Teardown: hands every item the link still holds (TX ring, wire, RX
    // ring) to f, uncounted, and empties the link.
    template <typename F>
    void drain(F&& f) {
        while (!_out.empty()) {
            f(_out.front().item);
            _out.pop();
        }
        while (!_txdep.empty()) { _txdep.pop(); }
        while (!_wire.empty()) {
            f(_wire.front().item);
            _wire.pop();
        }
        _departed = 0;
        while (!_rx.empty()) {
            f(_rx.front().item);
            _rx.pop();
        }
    }

private:
    struct wire_entry {
        Item item{};
        std::int64_t depart = 0;  // ceil of the exact departure, ns
        std::int64_t arrive = 0;  // depart + prop_delay
        std::uint32_t len = 0;    // length(item), read at TX while the item is hot: not again at arrival
    };
    struct rx_entry {
        Item item{};
        std::int64_t arrive = 0;
    };
    static constexpr std::uint64_t ns_per_s = 1'000'000'000ULL;

    static const link_cfg& checked(const link_cfg& c) {
        const std::string err = link_cfg_error(c);
        if (!err.empty()) {
            throw std::invalid_argument(err);
        }
        return c;
    }
    // Most frames that can be on the wire at once (departed, not arrived):
    // their exact departures lie in (now - prop_delay - 1, now] and are at
    // least one min_frame_len wire time apart.
    static std::size_t wire_slots(const link_cfg& c) {
        const unsigned __int128 min_bits_ns =
            static_cast<unsigned __int128>(c.min_frame_len + c.overhead.v) * 8u * ns_per_s;
        const unsigned __int128 n =
            static_cast<unsigned __int128>(c.prop_delay.v + 1) * c.rate.v / min_bits_ns;
        return static_cast<std::size_t>(n) + 2;
    }
    // Loss probability as a 33-bit threshold for a u32 draw (as roce/loss.hpp).

    void add_wire_time(std::uint64_t wire_bytes) noexcept {
        rocelab::add_wire_time(_free_ns, _free_rem, wire_bytes, _cfg.rate.v);
    }

    // Frames holding TX slots (accepted, not yet departed).
    std::size_t tx_held() const noexcept { return _split ? _txdep.size() : _wire.size() - _departed; }
    // The sender's side: retires departures up to `now` (unsplit: and
    // delivers arrivals, as before).
    void advance_tx(nanos now) noexcept {
        if (!_split) {
            advance(now);
            return;
        }
        while (!_txdep.empty() && _txdep.front() <= now.v) { _txdep.pop(); }
    }
    // Retires departures and delivers arrivals up to `now`, in order. Split:
    // the receiver's side only (every frame on the wire has departed: the
    // sender keeps its TX ring).
    void advance(nanos now) noexcept {
        if (!_split) {
            while (_departed < _wire.size() && _wire[_departed].depart <= now.v) {
                ++_departed;
            }
        }
        if (!_cred.empty() && _cred.front().arrive <= now.v) [[unlikely]] {
            do {
                _csink(_cctx, _cred.front().vl, _cred.front().fccl);
                _cred.pop();
                ++_c.credit_updates;
            } while (!_cred.empty() && _cred.front().arrive <= now.v);
            if constexpr (requires { _traits.on_credit(); }) { _traits.on_credit(); }
        }
        while (!_wire.empty() && _wire.front().arrive <= now.v) {
            wire_entry& e = _wire.front();
            ++_c.arrived;
            _c.arrived_bytes += e.len;
            if (_loss_threshold != 0 && _rng.next_u32() < _loss_threshold) {
                ++_c.lost;
                _traits.on_wire(e.item, e.depart, e.arrive, wire_fate::lost);
                _traits.drop(e.item);
            } else if (_rx.full()) {
                ++_c.rx_ring_full;
                _traits.on_wire(e.item, e.depart, e.arrive, wire_fate::rx_ring_full);
                _traits.drop(e.item);
            } else {
                _traits.on_wire(e.item, e.depart, e.arrive, wire_fate::delivered);
                _rx.push(rx_entry{e.item, e.arrive});
                ++_c.delivered;
            }
            _wire.pop();
            if (!_split) {
                --_departed;  // arrive >= depart: the front had departed
            }
        }
    }

    // Set up once.
    link_cfg _cfg;
    [[no_unique_address]] Traits _traits;
    bool _split = false;
    std::uint64_t _loss_threshold;
    // The sender's (split: written by the sending partition's thread).
    alignas(64) fifo<wire_entry> _out{0};  // split: accepted since the last transfer
    fifo<std::int64_t> _txdep{0};          // split: departures of the frames holding TX slots
    std::int64_t _free_ns = INT64_MIN / 4;
    std::uint64_t _free_rem = 0;
    bool _tx_since_sync = false;
    std::uint64_t* _tx_word = nullptr;  // notify_tx()
    std::uint64_t _tx_bit = 0;
    fifo<credit_update> _cout{0};  // split: credit updates sent since the last transfer
    std::int64_t _cdelay = 0;
    // The receiver's (unsplit: everything is one thread's).
    alignas(64) fifo<wire_entry> _wire;  // [0, _departed): on the wire; [_departed, size): TX ring (split: all on the wire)
    std::size_t _departed = 0;
    fifo<rx_entry> _rx;
    fifo<credit_update> _cred{0};  // credit updates on their way, in arrival order
    credit_sink _csink = nullptr;
    void* _cctx = nullptr;
    rng _rng;
    link_counters _c;
};

}  // namespace rocelab::sim
