// gen_telemetry.hpp - /rocelab_gen/... commands for dpdk-telemetry.py.
//
// What: read-only views of a running rocelab-gen over the DPDK telemetry
// socket, with the field names of the JSON report (--report):
//   /rocelab_gen/info              version, config, seed, pattern, ports, flows
//   /rocelab_gen/ports             list of port names
//   /rocelab_gen/port,<name|idx>   every gen_port_counters counter, PFC/PAUSE
//                                  frames received, paused time per priority
//   /rocelab_gen/flows[,<first>]   up to 64 flows from index <first> (default
//                                  0): index, name, src/dst host and port
//   /rocelab_gen/flow,<idx|name>   requester and responder counters of a flow
//
// Interface: rte_telemetry callbacks take no user pointer, so the pipeline
// being served is registered once through telemetry_attach() (call it just
// before launching the worker) and withdrawn by runtime::telemetry_detach()
// (run_app, once the worker stopped, before the pipeline is destroyed). The
// callbacks only read counters with relaxed loads (gen::read_counter) and
// immutable config; they never touch the data path's hot state. Detaching
// waits for a callback in progress, so the pipeline may be freed as soon as
// it returns.
//
// Example:
//   dpdk-telemetry.py -f g1
//   --> /rocelab_gen/port,0
//   {"/rocelab_gen/port": {"name": "net_ring_lb0a", "tx_packets": 123456, ...}}
#pragma once

#include <string>

#include "dpdk/eal.hpp"

namespace rocelab::gen {
class gen_pipeline;

struct telemetry_info {
    std::string version;
    // The worker's clock (one epoch for the data path, telemetry and the
    // report): paused time is computed at `now` on it. Must outlive detach.
    const dpdk::tsc_clock* clock = nullptr;
};

void telemetry_attach(const gen_pipeline* pipe, const telemetry_info& info);
}  // namespace rocelab::gen
