// gen_telemetry.cpp - the /rocelab_gen/... telemetry commands (see gen_telemetry.hpp).
//
// Every command runs on DPDK's telemetry thread through runtime::served (the
// slot's mutex held), so telemetry_detach() returns only once no command
// uses the pipeline. Counters are read with gen::read_counter (relaxed loads
// of the words the worker writes); names, hosts and QPNs come from the pipeline's immutable config.
#include "runtime/gen_telemetry.hpp"

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dpdk/eal.hpp"
#include "gen/gen_pipeline.hpp"
#include "runtime/app_common.hpp"
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

int cmd_ports(const gen_pipeline& p, const telemetry_info&, const char*, rte_tel_data* d) {
    rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        rte_tel_data_add_array_string(d, p.binding(i).name.c_str());
    }
    return 0;
}

int cmd_port(const gen_pipeline& p, const telemetry_info& info, const char* params, rte_tel_data* d) {
    const long i = runtime::find_index(params, p.port_count(),
                              [&](std::size_t k) -> const std::string& { return p.binding(k).name; });
    if (i < 0) { return -EINVAL; }
    const auto pi = static_cast<std::size_t>(i);
    const gen_port_counters& c = p.counters(pi);
    const pause_timer& pt = p.pauses(pi);
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "name", p.binding(pi).name.c_str());
    rte_tel_data_add_dict_u64(d, "port_id", p.binding(pi).port_id);
    rte_tel_data_add_dict_u64(d, "line_rate_bps", p.binding(pi).line_rate.v);
    // Field name = report key (the report calls rx_malformed_total "rx_malformed").
#define ROCELAB_TEL_PORT(field) rte_tel_data_add_dict_u64(d, #field, read_counter(c.field))
    ROCELAB_TEL_PORT(rx_packets);
    ROCELAB_TEL_PORT(rx_bytes);
    ROCELAB_TEL_PORT(tx_packets);
    ROCELAB_TEL_PORT(tx_bytes);
    ROCELAB_TEL_PORT(tx_acks);
    ROCELAB_TEL_PORT(tx_naks);
    ROCELAB_TEL_PORT(rx_mac_control);
    ROCELAB_TEL_PORT(rx_pfc);
    ROCELAB_TEL_PORT(rx_pause);
    ROCELAB_TEL_PORT(tx_pfc);
    ROCELAB_TEL_PORT(rx_arp);
    ROCELAB_TEL_PORT(arp_replies);
    ROCELAB_TEL_PORT(rx_nd);
    ROCELAB_TEL_PORT(nd_replies);
    ROCELAB_TEL_PORT(rx_bad_icrc);
    ROCELAB_TEL_PORT(rx_unknown_qpn);
    ROCELAB_TEL_PORT(rx_not_local);
    ROCELAB_TEL_PORT(rx_non_roce);
    ROCELAB_TEL_PORT(rx_cnp);
    ROCELAB_TEL_PORT(rx_unsupported_opcode);
    ROCELAB_TEL_PORT(rx_multiseg);
    ROCELAB_TEL_PORT(loss_data);
    ROCELAB_TEL_PORT(loss_ack);
    ROCELAB_TEL_PORT(drop_delay_full);
    ROCELAB_TEL_PORT(drop_reply_full);
    ROCELAB_TEL_PORT(replies_coalesced);
    ROCELAB_TEL_PORT(tx_alloc_fail);
    ROCELAB_TEL_PORT(tx_retry);
    ROCELAB_TEL_PORT(tx_prefilled);
    ROCELAB_TEL_PORT(tx_copied);
    ROCELAB_TEL_PORT(tx_built);
#undef ROCELAB_TEL_PORT
    rte_tel_data_add_dict_u64(d, "rx_malformed", read_counter(c.rx_malformed_total));

    rte_tel_data* mal = rte_tel_data_alloc();
    if (mal == nullptr) { return -ENOMEM; }
    rte_tel_data_start_dict(mal);
    for (std::size_t s = 1; s < parse_status_count; ++s) {
        rte_tel_data_add_dict_u64(mal, parse_status_name(static_cast<parse_status>(s)), read_counter(c.malformed[s]));
    }
    rte_tel_data_add_dict_container(d, "malformed", mal, 0);

    // The report's "pause" object, flattened (telemetry nests one level only).
    const pause_stats& ps = pt.stats();
    rte_tel_data_add_dict_u64(d, "pfc_frames", read_counter(ps.pfc_frames));
    rte_tel_data_add_dict_u64(d, "pause_frames", read_counter(ps.pause_frames));
    rte_tel_data_add_dict_u64(d, "pfc_ignored", read_counter(ps.pfc_ignored));
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
    auto u = [d](const char* k, std::uint64_t v) { rte_tel_data_add_dict_u64(d, k, v); };
    // Requester (names as in the report; counters the report omits keep their field name).
    u("tx_packets", read_counter(rc.tx_packets));
    u("tx_bytes", read_counter(rc.tx_bytes));
    u("messages_posted", read_counter(rc.messages_posted));
    u("messages_completed", read_counter(rc.messages_completed));
    u("bytes_completed", read_counter(rc.bytes_completed));
    u("post_rejected", read_counter(rc.post_rejected));
    u("completions_dropped", read_counter(rc.completions_dropped));
    u("fct_samples_dropped", read_counter(f.fct_dropped));
    u("fct_sum_ns", read_counter(rc.fct_sum_ns));
    u("fct_max_ns", read_counter(rc.fct_max_ns));
    u("acks_rx", read_counter(rc.acks_rx));
    u("acks_dup", read_counter(rc.acks_dup));
    u("acks_invalid", read_counter(rc.acks_invalid));
    u("msn_mismatch", read_counter(rc.msn_mismatch));
    u("naks_rx", read_counter(rc.naks_rx));
    u("naks_seq", read_counter(rc.naks_seq));
    u("naks_rnr", read_counter(rc.naks_rnr));
    u("naks_fatal", read_counter(rc.naks_fatal));
    u("naks_stale", read_counter(rc.naks_stale));
    u("naks_invalid", read_counter(rc.naks_invalid));
    u("retransmissions", read_counter(rc.retx_packets));
    u("retx_bytes", read_counter(rc.retx_bytes));
    u("timeouts", read_counter(rc.timeouts));
    u("retry_exceeded", read_counter(rc.retry_exceeded));
    // Responder.
    u("rx_packets", read_counter(sc.rx_packets));
    u("rx_bytes", read_counter(sc.rx_bytes));
    u("messages_rx", read_counter(sc.messages_rx));
    u("acks_tx", read_counter(sc.acks_tx));
    u("naks_tx", read_counter(sc.naks_tx));
    u("naks_seq_tx", read_counter(sc.naks_seq_tx));
    u("out_of_sequence", read_counter(sc.out_of_sequence));
    u("duplicates", read_counter(sc.duplicates));
    u("invalid_requests", read_counter(sc.invalid_requests));
    u("icrc_errors", read_counter(sc.icrc_errors));
    u("unsupported_opcode", read_counter(sc.unsupported_opcode));
    u("drop_qp_error", read_counter(sc.drop_qp_error));
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
    {"/rocelab_gen/ports", slot::command<cmd_ports>, "List port names"},
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

void telemetry_detach() { slot::detach(); }

}  // namespace rocelab::gen
