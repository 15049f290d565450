// rt_scale.hpp - slowing a scenario down so that it runs in real time on
// this machine (rocelab-fabric --real-time).
//
// What: a scenario written for 100 Gbps links cannot run in real time on a
// core that moves about 1 Gbps. The runner picks a factor k <= 1 (the
// fastest cable's rate becomes --rt-rate) and applies it to everything at
// once, so that the fabric behaves the same, only slower:
//   rates  x k   cables, switch port speeds, generator line/flow rates,
//                DCQCN rates (R_AI, R_HAI, min/max, first-CNP rate)
//   times  / k   cable delays, the run's duration and sampling period,
//                flow start times and open-loop arrival gaps, PFC-source
//                intervals, the generator's link delay, DCQCN timers
//                (rate-increase period, alpha period, cut monitor period),
//                CNP spacing, PFC watchdog detection/restoration/poll,
//                the ACK timeout (its exponent goes up by ceil(log2(1/k)),
//                so the timeout grows by a power of two >= 1/k)
//   lengths / k  CABLE_LENGTH (delay x rate is kept)
//   unchanged    bytes (buffers, thresholds, WRED Kmin/Kmax, headroom -
//                xoff: auto is resolved at the scenario's speeds first -
//                message sizes, DCQCN byte counter), counts, probabilities,
//                PFC quanta (512 bit times: they scale with the rate)
// Bytes in flight (rate x time) are therefore the same as in the scenario,
// and so are queue depths, PFC thresholds and marking.
//
// Expectations are judged on the scenario's own scale: a measured time is
// multiplied by k, a measured rate divided by k (metric_scale()).
//
// Pure: no DPDK, no globals.
#pragma once

#include <string>
#include <vector>

#include "config/gen_config.hpp"
#include "config/switch_cfg.hpp"
#include "fabric/topology.hpp"
#include "core/units.hpp"

namespace rocelab {

nanos rt_scale_time(nanos t, double k) noexcept;
bits_per_sec rt_scale_rate(bits_per_sec r, double k) noexcept;

// The factor that brings the fastest cable of t down to `target` (1 when
// it is already at or below it).
double rt_factor(const topology_cfg& t, bits_per_sec target) noexcept;

// Scales a switch configuration (port speeds given and defaults, cable
// lengths, watchdog times, queue sampling period).
void rt_scale_switch(switch_cfg& c, double k) noexcept;

// Scales a generator configuration after expand_gen_cfg (its flows exist):
// the flows' rates, starts, arrival gaps and ACK timeouts, the line rate,
// link delay, duration, PFC sources, CNP spacing, and the DCQCN reaction
// point, whose profile is first resolved at the unscaled line rate
// `line` and then written back as explicit, scaled overrides.
void rt_scale_gen(gen_cfg& c, double k, bits_per_sec line) noexcept;

// Scales the topology's cables, duration and sampling period, and every
// switch node's configuration. Generator nodes are scaled after their
// expansion (rt_scale_gen). Lossless headroom (xoff: auto) is computed
// first at the scenario's speeds and kept in bytes: its peer-response term
// comes from a per-speed table, not from rate x time. "" or an error.
std::string rt_scale_topology(topology_cfg& t, double k);

// What an expectation metric's value is multiplied by to be back on the
// scenario's scale: k for times (fct_*, flow_fct, collective_mean), 1/k for
// rates (goodput, goodput_fct, rate_min, rate_mean), 1 otherwise.
double rt_metric_scale(const std::string& metric, double k) noexcept;

}  // namespace rocelab
