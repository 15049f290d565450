// gen_telemetry.cpp - the /rocelab_gen/... telemetry commands (see gen_telemetry.hpp).
//
// Every command runs on DPDK's telemetry thread through runtime::served (the
// slot's mutex held), so runtime::telemetry_detach() returns only once no
// command uses the pipeline. Counters are read with gen::read_counter (relaxed loads
// of the words the worker writes); names, hosts and QPNs come from the pipeline's immutable config.
#include "runtime/gen_telemetry.hpp"

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dpdk/eal.hpp"
#include "gen/gen_pipeline.hpp"
#include "runtime/app_common.hpp"
#include "runtime/gen_report.hpp"
#include "runtime/telemetry.hpp"

namespace rocelab::gen {

namespace {
using slot = runtime::served<gen_pipeline, telemetry_info>;

constexpr std::size_t flows_per_page = 64;  // keeps a reply well under the socket's 16 KiB

int cmd_info(const gen_pipeline& p, const telemetry_info& info, const char*, rte_tel_data* d) {
    const gen_cfg& cfg = p.cfg();
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "version", info.version.c_str());
    rte_tel_data_add_dict_string(d, "config", cfg.source.c_str());
    rte_tel_data_add_dict_u64(d, "seed", cfg.seed);
    rte_tel_data_add_dict_string(d, "pattern", gen_pattern_name(cfg.pattern));
    rte_tel_data_add_dict_u64(d, "ports", p.port_count());
    rte_tel_data_add_dict_u64(d, "flows", p.flow_count());
    rte_tel_data_add_dict_u64(d, "tx_only", p.tx_opts().tx_only ? 1 : 0);
    rte_tel_data_add_dict_string(d, "tx_payload", tx_payload_name(p.tx_opts().payload));
    return 0;
}

int cmd_port(const gen_pipeline& p, const telemetry_info& info, const char* params, rte_tel_data* d) {
    const long i = runtime::find_port(p, params);
    if (i < 0) { return -EINVAL; }
    const auto pi = static_cast<std::size_t>(i);
    const gen_port_counters& c = p.counters(pi);
    const pause_timer& pt = p.pauses(pi);
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "name", p.binding(pi).name.c_str());
    rte_tel_data_add_dict_u64(d, "port_id", p.binding(pi).port_id);
    rte_tel_data_add_dict_u64(d, "line_rate_bps", p.binding(pi).line_rate.v);
    runtime::put_port_counters(c, runtime::dict_put(d));

    rte_tel_data* mal = rte_tel_data_alloc();
    if (mal == nullptr) { return -ENOMEM; }
    rte_tel_data_start_dict(mal);
    for (std::size_t s = 1; s < parse_status_count; ++s) {
        rte_tel_data_add_dict_u64(mal, parse_status_name(static_cast<parse_status>(s)), read_counter(c.malformed[s]));
    }
    rte_tel_data_add_dict_container(d, "malformed", mal, 0);

    // The report's "pause" object, flattened (telemetry nests one level only).
    const pause_stats& ps = pt.stats();
#define ROCELAB_TEL_PAUSE(name) rte_tel_data_add_dict_u64(d, #name, read_counter(ps.name));
    ROCELAB_PAUSE_FRAME_COUNTERS(ROCELAB_TEL_PAUSE)
#undef ROCELAB_TEL_PAUSE
    rte_tel_data* xoff = runtime::u64_array(ps.xoff_frames);
    rte_tel_data* xon = runtime::u64_array(ps.xon_frames);
    rte_tel_data* paused = rte_tel_data_alloc();
    if (xoff == nullptr || xon == nullptr || paused == nullptr) {
        rte_tel_data_free(xoff);
        rte_tel_data_free(xon);
        rte_tel_data_free(paused);
        return -ENOMEM;
    }
    rte_tel_data_add_dict_container(d, "xoff_frames", xoff, 0);
    rte_tel_data_add_dict_container(d, "xon_frames", xon, 0);
    // pause_timer::paused_time() reads the settled total and the open
    // interval's bounds with three relaxed loads (not one snapshot): a read
    // racing a PFC frame on this port may miss or double that frame's last
    // interval once.
    const nanos now = info.clock->now();
    rte_tel_data_start_array(paused, RTE_TEL_U64_VAL);
    for (int prio = 0; prio < 8; ++prio) {
        rte_tel_data_add_array_u64(paused, static_cast<std::uint64_t>(pt.paused_time(prio, now).v));
    }
    rte_tel_data_add_dict_container(d, "paused_ns", paused, 0);
    return 0;
}

int cmd_flows(const gen_pipeline& p, const telemetry_info&, const char* params, rte_tel_data* d) {
    const gen_cfg& cfg = p.cfg();
    std::size_t first = 0;
    if (params != nullptr && *params != '\0') {
        char* end = nullptr;
        const long v = std::strtol(params, &end, 10);
        if (end == params || *end != '\0' || v < 0) { return -EINVAL; }
        first = static_cast<std::size_t>(v);
    }
    rte_tel_data_start_dict(d);
    for (std::size_t i = first; i < p.flow_count() && i < first + flows_per_page; ++i) {
        const flow_state& f = p.flow(i);
        rte_tel_data* x = rte_tel_data_alloc();
        if (x == nullptr) { return -ENOMEM; }
        rte_tel_data_start_dict(x);
        rte_tel_data_add_dict_string(x, "name", f.cfg.name.c_str());
        rte_tel_data_add_dict_string(x, "src", cfg.hosts[static_cast<std::size_t>(f.cfg.src_host)].name.c_str());
        rte_tel_data_add_dict_string(x, "dst", cfg.hosts[static_cast<std::size_t>(f.cfg.dst_host)].name.c_str());
        rte_tel_data_add_dict_string(x, "src_port", p.binding(f.src_port).name.c_str());
        rte_tel_data_add_dict_string(x, "dst_port", p.binding(f.dst_port).name.c_str());
        rte_tel_data_add_dict_container(d, std::to_string(i).c_str(), x, 0);
    }
    return 0;
}

int cmd_flow(const gen_pipeline& p, const telemetry_info&, const char* params, rte_tel_data* d) {
    const long i = runtime::find_index(params, p.flow_count(),
                              [&](std::size_t k) -> const std::string& { return p.flow(k).cfg.name; });
    if (i < 0) { return -EINVAL; }
    const flow_state& f = p.flow(static_cast<std::size_t>(i));
    const requester_counters& rc = f.rq.counters();
    const responder_counters& sc = f.rs.counters();
    const gen_cfg& cfg = p.cfg();
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "index", static_cast<std::uint64_t>(i));
    rte_tel_data_add_dict_string(d, "name", f.cfg.name.c_str());
    rte_tel_data_add_dict_string(d, "src", cfg.hosts[static_cast<std::size_t>(f.cfg.src_host)].name.c_str());
    rte_tel_data_add_dict_string(d, "dst", cfg.hosts[static_cast<std::size_t>(f.cfg.dst_host)].name.c_str());
    rte_tel_data_add_dict_string(d, "src_port", p.binding(f.src_port).name.c_str());
    rte_tel_data_add_dict_string(d, "dst_port", p.binding(f.dst_port).name.c_str());
    rte_tel_data_add_dict_u64(d, "src_qpn", f.cfg.qp.src_qpn);
    rte_tel_data_add_dict_u64(d, "dst_qpn", f.cfg.qp.dst_qpn);
    // Every requester and responder counter, by its field name, except
    // retx_packets: "retransmissions", as the report calls it.
    const auto u = [d](std::string_view k, std::uint64_t v) {
        rte_tel_data_add_dict_u64(d, k == "retx_packets" ? "retransmissions" : k.data(), v);
    };
#define ROCELAB_TEL_RQ(name) u(#name, read_counter(rc.name));
#define ROCELAB_TEL_RS(name) u(#name, read_counter(sc.name));
    ROCELAB_REQUESTER_COUNTERS(ROCELAB_TEL_RQ)
    u("fct_samples_dropped", read_counter(f.fct_dropped));
    ROCELAB_RESPONDER_COUNTERS(ROCELAB_TEL_RS)
#undef ROCELAB_TEL_RQ
#undef ROCELAB_TEL_RS
    return 0;
}

// DPDK accepts only [A-Za-z0-9_/] in command names, hence rocelab_gen.
// The worker lcores (runtime::tel_workers).
int cmd_workers(const gen_pipeline& p, const telemetry_info&, const char*, rte_tel_data* d) {
    return runtime::tel_workers(p, rte_get_tsc_hz(), d, [](rte_tel_data*, std::size_t) {});
}

constexpr runtime::tel_command commands[] = {
    {"/rocelab_gen/workers", slot::command<cmd_workers>, "Worker lcores: ports owned, busy cycles, loops"},
    {"/rocelab_gen/info", slot::command<cmd_info>,
     "rocelab-gen version, config, seed, pattern, number of ports and flows"},
    {"/rocelab_gen/ports", slot::port_names, "List port names"},
    {"/rocelab_gen/port", slot::command<cmd_port>,
     "Port counters, PFC/PAUSE received, paused ns per priority. Parameters: port name or index"},
    {"/rocelab_gen/flows", slot::command<cmd_flows>,
     "Up to 64 flows by index: name, src/dst host and port. Parameters: first index"},
    {"/rocelab_gen/flow", slot::command<cmd_flow>,
     "Requester and responder counters of a flow. Parameters: flow index or name"},
};
}  // namespace

void telemetry_attach(const gen_pipeline* pipe, const telemetry_info& info) {
    slot::attach(pipe, info, commands, "rocelab-gen");
}

}  // namespace rocelab::gen
