// sim_port.hpp - what a node sees of a simulated port: the RX side of one
// link and the TX side of another, with rte_eth_rx_burst/tx_burst-shaped
// calls that take `now`.
//
// What: rx_burst(now, out, n) returns up to n frames whose arrival time is
// <= now, in arrival order; tx_burst(now, in, n) puts frames on the TX ring
// and returns how many it took (the caller keeps the rest and retries, as
// with a NIC); next_arrival() is the arrival time of the next frame not yet
// taken; tx_free_time(now, k) is when k TX slots will be free (a node with
// refused frames returns it as its deadline). Either side may be absent
// (a pure source or sink): rx_burst then returns 0, tx_burst refuses all.
//
// A port is a pair of pointers into links owned by the engine; copying it
// is cheap. The TX link's sender and the RX link's receiver are the node
// that owns the port (engine::add_link(from, to, ...)).
//
// Counters: the links' (sim/link.hpp).
//
// Example:
//   auto p = e.port(/*tx*/ l_out, /*rx*/ l_in);
//   std::uint16_t n = p.rx_burst(now, burst, 32);
//   std::uint16_t sent = p.tx_burst(now, burst, n);
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "sim/link.hpp"

namespace rocelab::sim {

template <typename Item, typename Traits = item_traits<Item>>
class sim_port {
public:
    using link_type = sim_link<Item, Traits>;

    sim_port() noexcept = default;
    sim_port(link_type* tx, link_type* rx) noexcept : _tx(tx), _rx(rx) {}

    std::uint16_t rx_burst(nanos now, Item* out, std::uint16_t n) noexcept {
        return _rx == nullptr ? 0 : static_cast<std::uint16_t>(_rx->rx_burst(now, out, n));
    }
    std::uint16_t tx_burst(nanos now, const Item* in, std::uint16_t n) noexcept {
        return _tx == nullptr ? 0 : static_cast<std::uint16_t>(_tx->tx_burst(now, in, n));
    }
    // Arrival time of the next frame not yet taken; nanos::max() when none.
    nanos next_arrival() const noexcept { return _rx == nullptr ? nanos::max() : _rx->next_arrival(); }
    // When k TX slots are free (now if they are); nanos::max() without TX.
    nanos tx_free_time(nanos now, std::size_t k = 1) noexcept {
        return _tx == nullptr ? nanos::max() : _tx->tx_free_time(now, k);
    }

    link_type* tx_link() const noexcept { return _tx; }
    link_type* rx_link() const noexcept { return _rx; }

private:
    link_type* _tx = nullptr;
    link_type* _rx = nullptr;
};

}  // namespace rocelab::sim
