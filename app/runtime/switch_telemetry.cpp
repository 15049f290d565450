// switch_telemetry.cpp - the /rocelab/... telemetry commands (see switch_telemetry.hpp).
//
// Each command runs on DPDK's telemetry thread through runtime::served (the
// slot's mutex held, so runtime::telemetry_detach() returns only once no
// command uses the pipeline) and reads counters with relaxed loads.
#include "runtime/switch_telemetry.hpp"

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "runtime/app_common.hpp"
#include "runtime/switch_report.hpp"
#include "runtime/telemetry.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::sw {

namespace {
using slot = runtime::served<switch_pipeline, telemetry_info>;

using runtime::find_port;

int cmd_info(const switch_pipeline& p, const telemetry_info& info, const char*, rte_tel_data* d) {
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "version", info.version.c_str());
    rte_tel_data_add_dict_string(d, "config", info.config.c_str());
    rte_tel_data_add_dict_u64(d, "seed", info.seed);
    rte_tel_data_add_dict_string(d, "mode", p.mode() == fwd_mode::l2 ? "l2" : "l3");
    rte_tel_data_add_dict_u64(d, "ports", p.port_count());
    return 0;
}

int cmd_port(const switch_pipeline& p, const telemetry_info&, const char* params, rte_tel_data* d) {
    const int i = find_port(p, params);
    if (i < 0) { return -EINVAL; }
    const auto& c = p.counters(static_cast<std::size_t>(i));
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "name", p.binding(i).name.c_str());
    rte_tel_data_add_dict_u64(d, "line_rate_bps", p.binding(i).line_rate.v);
    rte_tel_data_add_dict_u64(d, "shaped", p.binding(i).shaped ? 1 : 0);
    runtime::put_port_counters(c, runtime::dict_put(d));
    for (std::size_t r = 0; r < drop_reason_count; ++r) {
        rte_tel_data_add_dict_u64(d, drop_reason_name(static_cast<drop_reason>(r)), read_counter(c.drops[r]));
    }
    for (std::size_t s = 1; s < parse_status_count; ++s) {
        const std::uint64_t v = read_counter(c.malformed[s]);
        if (v != 0) {
            const std::string k = std::string("rx_malformed_") + parse_status_name(static_cast<parse_status>(s));
            rte_tel_data_add_dict_u64(d, k.c_str(), v);
        }
    }
    return 0;
}

int cmd_queues(const switch_pipeline& p, const telemetry_info&, const char* params, rte_tel_data* d) {
    const int i = find_port(p, params);
    if (i < 0) { return -EINVAL; }
    rte_tel_data_start_dict(d);
    for (int q = 0; q < 8; ++q) {
        const queue_snapshot s = p.queue(static_cast<std::size_t>(i), q);
        rte_tel_data* qd = rte_tel_data_alloc();
        if (qd == nullptr) { return -ENOMEM; }
        rte_tel_data_start_dict(qd);
        rte_tel_data_add_dict_u64(qd, "depth_bytes", s.depth_bytes);
        rte_tel_data_add_dict_u64(qd, "depth_packets", s.depth_packets);
        rte_tel_data_add_dict_u64(qd, "max_depth_bytes", s.max_depth_bytes);
        rte_tel_data_add_dict_u64(qd, "max_depth_packets", s.max_depth_packets);
        runtime::put_queue_counters(s, runtime::dict_put(qd));
        std::string k = "q";  // (appended: "q" + to_string trips GCC 12's -Wrestrict false positive)
        k += std::to_string(q);
        rte_tel_data_add_dict_container(d, k.c_str(), qd, 0);
    }
    return 0;
}

int cmd_buffer(const switch_pipeline& p, const telemetry_info& info, const char* params, rte_tel_data* d) {
    const int i = find_port(p, params);
    if (i < 0) { return -EINVAL; }
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "accounting", p.buffer_accounting() ? 1 : 0);
    rte_tel_data_add_dict_u64(d, "pool_shared_size", p.pool_shared_size());
    rte_tel_data_add_dict_u64(d, "pool_shared_used", p.pool_shared_used());
    for (int g = 0; g < 8; ++g) {
        const pg_status st = p.pg(static_cast<std::size_t>(i), g);
        const auto& pgc = info.pgs.empty() ? pg_buffer_cfg{} : info.pgs[static_cast<std::size_t>(i)][g];
        rte_tel_data* x = rte_tel_data_alloc();
        if (x == nullptr) { return -ENOMEM; }
        rte_tel_data_start_dict(x);
        rte_tel_data_add_dict_u64(x, "lossless", st.lossless ? 1 : 0);
        rte_tel_data_add_dict_u64(x, "xoff_state", st.xoff ? 1 : 0);
        rte_tel_data_add_dict_u64(x, "use", st.use);
        rte_tel_data_add_dict_u64(x, "headroom_use", st.headroom);
        rte_tel_data_add_dict_u64(x, "threshold", st.threshold);
        rte_tel_data_add_dict_u64(x, "cfg_reserved", pgc.reserved.v);
        rte_tel_data_add_dict_u64(x, "cfg_xoff", pgc.xoff.v);
        rte_tel_data_add_dict_u64(x, "cfg_xon", pgc.xon ? pgc.xon->v : 0);
        runtime::put_pg_counters(st, runtime::dict_put(x));
        const std::string k = "pg" + std::to_string(g);
        rte_tel_data_add_dict_container(d, k.c_str(), x, 0);
    }
    return 0;
}

int cmd_pfc(const switch_pipeline& p, const telemetry_info& info, const char* params, rte_tel_data* d) {
    const int i = find_port(p, params);
    if (i < 0) { return -EINVAL; }
    const pfc_status st = p.pfc(static_cast<std::size_t>(i), info.clock->now());
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "paused_prios", st.paused_prios);
    rte_tel_data_add_dict_u64(d, "tx_pfc_frames", st.frames_sent);
    for (int pr = 0; pr < 8; ++pr) {
        rte_tel_data* x = rte_tel_data_alloc();
        if (x == nullptr) { return -ENOMEM; }
        rte_tel_data_start_dict(x);
        rte_tel_data_add_dict_u64(x, "rx_frames", st.rx_frames[pr]);
        rte_tel_data_add_dict_u64(x, "paused_ns", static_cast<std::uint64_t>(st.paused_ns[pr]));
        rte_tel_data_add_dict_u64(x, "xoff_sent", st.xoff_sent[pr]);
        rte_tel_data_add_dict_u64(x, "xon_sent", st.xon_sent[pr]);
        rte_tel_data_add_dict_u64(x, "asserted_ns", static_cast<std::uint64_t>(st.asserted_ns[pr]));
        if (st.wd_enabled[pr]) {
            rte_tel_data_add_dict_u64(x, "wd_queue_stormed", st.wd_stormed[pr] ? 1 : 0);
            rte_tel_data_add_dict_u64(x, "wd_queue_storms", st.wd_storms[pr]);
            rte_tel_data_add_dict_u64(x, "wd_queue_restores", st.wd_restores[pr]);
        }
        const std::string k = "prio" + std::to_string(pr);
        rte_tel_data_add_dict_container(d, k.c_str(), x, 0);
    }
    return 0;
}

// The L2 FDB: stations in the table, then every counter (fwd/fdb.hpp).
int cmd_fdb(const switch_pipeline& p, const telemetry_info&, const char*, rte_tel_data* d) {
    rte_tel_data_start_dict(d);
    runtime::put_fdb(p, runtime::dict_put(d));
    return 0;
}

// The neighbour table: counters, then one dict per neighbour, "n0", "n1", ...
// (telemetry names allow no '.' or ':', so the address is a value), at most
// RTE_TEL_MAX_DICT_ENTRIES entries in all: past that, "shown" < "entries".
int cmd_neigh(const switch_pipeline& p, const telemetry_info& info, const char*, rte_tel_data* d) {
    const neigh_stats ns = p.neigh_totals();
    // The workers' tables are theirs: each hands over a copy (within 1 ms).
    const auto live = p.neighbors_live(info.clock->now(), std::chrono::milliseconds(200));
    if (!live) {
        rte_tel_data_start_dict(d);
        rte_tel_data_add_dict_string(d, "error", "the workers did not hand over their neighbour tables within 200ms");
        return 0;
    }
    const auto& rows = *live;
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "dynamic", p.neigh_dynamic() ? 1 : 0);
    rte_tel_data_add_dict_u64(d, "entries", rows.size());
    rte_tel_data_add_dict_u64(d, "requests", ns.requests);
    rte_tel_data_add_dict_u64(d, "learned", ns.learned);
    rte_tel_data_add_dict_u64(d, "failed", ns.failed);
    rte_tel_data_add_dict_u64(d, "aged", ns.aged);
    rte_tel_data_add_dict_u64(d, "held", ns.held);
    rte_tel_data_add_dict_u64(d, "dropped", ns.dropped_queue_full + ns.dropped_table_full + ns.dropped_unresolved);
    constexpr std::size_t fixed = 9;  // the entries above, and "shown"
    const std::size_t shown = std::min<std::size_t>(rows.size(), RTE_TEL_MAX_DICT_ENTRIES - fixed);
    rte_tel_data_add_dict_u64(d, "shown", shown);
    for (std::size_t k = 0; k < shown; ++k) {
        const neigh_row& n = rows[k];
        rte_tel_data* x = rte_tel_data_alloc();
        if (x == nullptr) { return -ENOMEM; }
        rte_tel_data_start_dict(x);
        rte_tel_data_add_dict_string(x, "address", runtime::ip_str(n.addr, n.v6).c_str());
        rte_tel_data_add_dict_string(x, "family", n.v6 ? "IPv6" : "IPv4");
        rte_tel_data_add_dict_string(x, "port", p.binding(n.port).name.c_str());
        rte_tel_data_add_dict_string(x, "mac", runtime::mac_str(n.mac).c_str());
        rte_tel_data_add_dict_string(x, "state", n.state);
        rte_tel_data_add_dict_int(x, "confirmed_ago_ms",
                                  n.confirmed_ago_ns < 0 ? -1 : static_cast<int>(n.confirmed_ago_ns / 1000000));
        rte_tel_data_add_dict_u64(x, "hits", n.hits);
        rte_tel_data_add_dict_u64(x, "waiting", n.waiting);
        std::string key = "n";  // (not "n" + ...: GCC 12 warns a false -Wrestrict on it)
        key += std::to_string(k);
        rte_tel_data_add_dict_container(d, key.c_str(), x, 0);
    }
    return 0;
}

// The worker lcores (runtime::tel_workers) and what each handed to / took
// from the others.
int cmd_workers(const switch_pipeline& p, const telemetry_info&, const char*, rte_tel_data* d) {
    return runtime::tel_workers(p, rte_get_tsc_hz(), d, [&](rte_tel_data* x, std::size_t k) {
        runtime::put_worker_stats(p.worker_figures(k), runtime::dict_put(x));
    });
}

constexpr runtime::tel_command commands[] = {
    {"/rocelab/workers", slot::command<cmd_workers>,
     "Worker lcores: ports owned, busy cycles, loops, frames handed between workers"},
    {"/rocelab/info", slot::command<cmd_info>, "rocelab-switch version, config and seed"},
    {"/rocelab/ports", slot::port_names, "List port names"},
    {"/rocelab/port", slot::command<cmd_port>, "Port counters. Parameters: port name or index"},
    {"/rocelab/queues", slot::command<cmd_queues>, "Per-queue depth and counters. Parameters: port name or index"},
    {"/rocelab/fdb", slot::command<cmd_fdb>,
     "L2 forwarding database: entries and counters (learned, moved, aged, table_full, flushed, invalid_src, "
     "hits, misses)"},
    {"/rocelab/neigh", slot::command<cmd_neigh>,
     "L3 neighbours: static NEIGH entries and those resolved by ARP/ND (state, MAC, port, hits)"},
    {"/rocelab/buffer", slot::command<cmd_buffer>,
     "Ingress buffer per priority group (use, peaks, configured/computed xoff and xon). "
     "Parameters: port name or index"},
    {"/rocelab/pfc", slot::command<cmd_pfc>,
     "PFC per priority: received, paused time, XOFF/XON sent, watchdog. Parameters: port"},
};
}  // namespace

void telemetry_attach(const switch_pipeline* pipe, const telemetry_info& info) {
    slot::attach(pipe, info, commands, "rocelab-switch");
}

}  // namespace rocelab::sw
