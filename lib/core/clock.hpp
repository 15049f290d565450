// clock.hpp - the clock concept and a manual clock for tests.
//
// Protocol logic never reads a clock: it takes `nanos now` as an argument.
// Whoever drives it owns a clock satisfying `clock_source`: the TSC clock in
// lib/dpdk (production), a virtual clock (simulator), or manual_clock (tests).
#pragma once

#include <concepts>

#include "core/units.hpp"

namespace rocelab {

template <typename C>
concept clock_source = requires(C& c) {
    { c.now() } -> std::same_as<nanos>;
};

class manual_clock {
public:
    nanos now() const noexcept { return _now; }
    void advance(nanos d) noexcept { _now += d; }
    void set(nanos t) noexcept { _now = t; }
private:
    nanos _now{0};
};
static_assert(clock_source<manual_clock>);

}  // namespace rocelab
