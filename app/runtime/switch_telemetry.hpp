// switch_telemetry.hpp - /rocelab/... commands for dpdk-telemetry.py.
//
//   /rocelab/info              version, config file, seed, mode, ports
//   /rocelab/ports             list of port names
//   /rocelab/port,<name|idx>   rx/tx counters, drops by reason, malformed by check
//   /rocelab/queues,<name|idx> per queue depth now/max, enq/deq/drop
//   /rocelab/buffer,<name|idx> ingress buffer per priority group, computed xoff/xon
//   /rocelab/pfc,<name|idx>    PFC per priority and the watchdog
//   /rocelab/fdb               learned stations
//
// rte_telemetry callbacks take no user pointer, so the switch being served
// is published through telemetry_attach() (runtime::served, telemetry.hpp)
// and withdrawn by runtime::telemetry_detach() (run_app, once the workers
// stopped), which waits for a command in progress; the commands only read
// counters (relaxed loads) and never touch the data path's hot state.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "config/switch_cfg.hpp"
#include "dpdk/eal.hpp"

namespace rocelab::sw {
class switch_pipeline;

struct telemetry_info {
    std::string version;
    std::string config;
    std::uint64_t seed = 0;
    std::vector<std::array<pg_buffer_cfg, 8>> pgs;  // configured/computed xoff/xon per port
    // The worker's clock: PFC times are computed at `now` on it (one epoch
    // for data path, telemetry, capture and report). Must outlive detach.
    const dpdk::tsc_clock* clock = nullptr;
};

void telemetry_attach(const switch_pipeline* pipe, const telemetry_info& info);
}  // namespace rocelab::sw
