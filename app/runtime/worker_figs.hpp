// worker_figs.hpp - one worker lcore's figures, as the report, the final
// output and telemetry read them (report_common.hpp, telemetry.hpp).
//
// poll_figs(p, k): worker k's busy cycles, loops, longest poll gap, stalls
// and stalled time (worker_loop.hpp): its view's counters, or, with one
// worker (which poll() may drive directly: virtual time, in-process tests),
// the pipeline's poll_totals(). worker_ports(p, k, sep): the names of the
// ports worker k owns, joined by sep. Control path only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/counter.hpp"

namespace rocelab::runtime {

struct worker_poll_figs {
    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    std::int64_t max_poll_gap_ns = 0;
    std::uint64_t stalls = 0;
    std::int64_t stalled_ns = 0;
};

// From `tot` (the pipeline's poll_totals()) and `v`, worker k's view.
template <typename Figs, typename View>
worker_poll_figs poll_figs(const Figs& tot, const View& v, bool one) {
    if (one) { return {tot.busy_cycles, tot.loops, tot.max_poll_gap_ns, tot.stalls, tot.stalled_ns}; }
    return {read_counter(v.busy_cycles), read_counter(v.loops), read_counter(v.max_poll_gap_ns), read_counter(v.stalls),
            read_counter(v.stalled_ns)};
}

template <typename Pipeline>
std::string worker_ports(const Pipeline& p, std::size_t k, const char* sep) {
    std::string s;
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        if (p.port_worker(i) != k) { continue; }
        if (!s.empty()) { s += sep; }
        s += p.binding(i).name;
    }
    return s;
}

}  // namespace rocelab::runtime
