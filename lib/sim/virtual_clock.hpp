// virtual_clock.hpp - the simulator's clock: `now` owned by the sim engine.
//
// What: a clock_source (core/clock.hpp) whose time only moves when the
// engine (sim/engine.hpp) advances it to the next event. Code templated on a
// Clock (the switch and generator runners read clock.now() once per loop)
// runs unchanged against it. Besides now() it offers what tsc_clock offers
// for accounting, with one virtual "cycle" per nanosecond: hz() = 1e9 and
// to_nanos(cycles) = cycles. It deliberately has no read_tsc(): nothing in
// virtual time may read the TSC or the wall clock.
//
// Only the engine advances it (advance_to is private; the engine is a
// friend); nodes get a const reference. Time never goes backwards.
//
// Counters: none.
//
// Example:
//   engine<frame> e;
//   const virtual_clock& clk = e.clock();
//   my_runner.poll(clk.now());
#pragma once

#include <cstdint>

#include "core/clock.hpp"
#include "core/units.hpp"

namespace rocelab::sim {

template <typename Item, typename Traits>
class engine;

class virtual_clock {
public:
    virtual_clock() noexcept = default;
    explicit virtual_clock(nanos start) noexcept : _now(start) {}

    nanos now() const noexcept { return _now; }
    static constexpr std::uint64_t hz() noexcept { return 1'000'000'000ULL; }
    static constexpr nanos to_nanos(std::uint64_t cycles) noexcept {
        return nanos{static_cast<std::int64_t>(cycles)};
    }

private:
    template <typename Item, typename Traits>
    friend class engine;

    // Moves time forward to t; an earlier t is ignored (returns false).
    bool advance_to(nanos t) noexcept {
        if (t < _now) {
            return false;
        }
        _now = t;
        return true;
    }

    nanos _now{0};
};
static_assert(clock_source<virtual_clock>);
static_assert(clock_source<const virtual_clock>);

}  // namespace rocelab::sim
