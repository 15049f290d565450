// switch_report.cpp - the switch's JSON report, final counters and status line.
#include "runtime/switch_report.hpp"

#include <cstdio>

#include "config/units_parse.hpp"
#include "core/json.hpp"
#include "runtime/app_common.hpp"

namespace rocelab::runtime {

std::uint64_t total_ecn_marked(const sw::port_counters& c) {
    std::uint64_t n = 0;
    for (int q = 0; q < 8; ++q) { n += sw::read_counter(c.ecn_marked[q]); }
    return n;
}

std::uint64_t total_drops(const sw::port_counters& c) {
    std::uint64_t d = 0;
    for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
        if (r != static_cast<std::size_t>(sw::drop_reason::pfc_disabled_prio)) { d += sw::read_counter(c.drops[r]); }
    }
    return d;
}

void switch_status::print(const sw::switch_pipeline& p, double dt, double t) {
    status_line line(t);
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const prev now{traffic_of(c), total_drops(c), total_ecn_marked(c)};
        const traffic_rates r = rates(now.traffic, _prev[i].traffic, dt);
        std::uint64_t qb = 0;
        for (int q = 0; q < 8; ++q) { qb += p.queue(i, q).depth_bytes; }
        // Line utilisation counts what the wire carries: frame + FCS + preamble + IFG.
        const double wire_bps = r.tx_bps + double(now.traffic.tx_packets - _prev[i].traffic.tx_packets) * 24 * 8 / dt;
        const double line_bps = double(p.binding(i).line_rate.v);
        char util[32] = "";
        if (line_bps > 0) { std::snprintf(util, sizeof util, " (line %.1f%%)", 100.0 * wire_bps / line_bps); }
        line.append(" | %s rx %.3fMpps %s tx %.3fMpps %s%s q %lluB pfc %llu ecn %llu drop %llu",
                    p.binding(i).name.c_str(), r.rx_mpps, rate_str(r.rx_bps).c_str(), r.tx_mpps,
                    rate_str(r.tx_bps).c_str(), util, static_cast<unsigned long long>(qb),
                    static_cast<unsigned long long>(sw::read_counter(c.rx_pfc)),
                    static_cast<unsigned long long>(now.ecn_marked - _prev[i].ecn_marked),
                    static_cast<unsigned long long>(now.drops - _prev[i].drops));
        _prev[i] = now;
    }
    append_worker_busy(line, p, _hz, dt, _prev_busy);
    line.print();
}

std::string switch_report_json(const sw::switch_pipeline& p, const switch_cfg& cfg, const run_report& r) {
    std::string out;
    json_writer j(out);
    const auto put = json_put(j);
    begin_report(j, "rocelab-switch", cfg.source, [&] {
        j.kv("seed", cfg.seed);
        j.kv("mode", cfg.mode == fwd_mode::l2 ? "l2" : "l3");
    });
    j.kv("elapsed_s", r.elapsed_s);
    j.kv("tsc_hz", r.tsc_hz);
    // One entry per worker lcore: its ports, its share of the run spent
    // busy, and what it handed to / took from the others.
    json_workers(j, p, r, [&](json_writer& jw, std::size_t k) {
        put_worker_stats(p.worker_figures(k), json_put(jw));
        json_stages(jw, p, k);  // bench builds (-Dstage_cycles=true)
    });
    j.kv("buffer_accounting", p.buffer_accounting());
    if (p.buffer_accounting()) {
        j.kv("pool_size", cfg.pool.size.v);
        j.kv("pool_shared_size", p.pool_shared_size());
    }
    if (p.mode() == fwd_mode::l2) {
        j.key("fdb");  // the FDB at the end of the run
        j.begin_object();
        put_fdb(p, put);
        j.end_object();
    }
    if (p.mode() == fwd_mode::l3) {
        // The neighbour table at the end of the run: static NEIGH entries and
        // what ARP/ND resolved (fwd/neigh_table.hpp).
        const neigh_stats ns = p.neigh_totals();
        j.key("neighbors");
        j.begin_object();
        j.kv("dynamic", p.neigh_dynamic());
#define ROCELAB_PUT_NEIGH(name) j.kv(#name, ns.name);
        ROCELAB_NEIGH_STATS(ROCELAB_PUT_NEIGH)
#undef ROCELAB_PUT_NEIGH
        j.key("entries");
        j.begin_array();
        for (const sw::neigh_row& n : p.neighbors(r.end)) {
            j.begin_object();
            j.kv("address", ip_str(n.addr, n.v6));
            j.kv("family", n.v6 ? "IPv6" : "IPv4");
            j.kv("port", p.binding(n.port).name);
            j.kv("mac", mac_str(n.mac));
            j.kv("state", n.state);
            j.kv("confirmed_ago_ns", n.confirmed_ago_ns);
            j.kv("hits", n.hits);
            j.kv("waiting", static_cast<unsigned>(n.waiting));
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.kv("mbufs_total", r.mbufs_total);
    j.kv("mbuf_pool_ops", r.mbuf_pool_ops);
    j.kv("mbufs_in_use_at_exit", r.mbufs_in_use);
    write_capture_fields(j, r);
    json_objects(j, "ports", p.port_count(), [&](std::size_t i) {
        const auto& c = p.counters(i);
        const auto& b = p.binding(i);
        write_port_head(j, b, r, i);
        j.kv("mac", mac_str(b.mac));
        j.kv("line_rate", format_rate(b.line_rate));
        j.kv("line_rate_bps", b.line_rate.v);
        j.kv("shaped", b.shaped);
        put_port_counters(c, put);
        j.key("drops");
        j.begin_object();
        for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
            j.kv(sw::drop_reason_name(static_cast<sw::drop_reason>(r)), c.drops[r]);
        }
        j.end_object();
        write_malformed(j, c.malformed);
        j.kv("tx_pfc_frames", c.tx_pfc_frames);
        const sw::pfc_status ps = p.pfc(i, r.end);
        auto arr = [&](std::string_view k, const auto& a) {
            j.key(k);
            j.begin_array();
            for (auto v : a) { j.value(static_cast<std::uint64_t>(v)); }
            j.end_array();
        };
        j.key("pfc");
        j.begin_object();
        arr("rx_frames", ps.rx_frames);
        arr("paused_ns", ps.paused_ns);
        arr("xoff_sent", ps.xoff_sent);
        arr("xon_sent", ps.xon_sent);
        arr("asserted_ns", ps.asserted_ns);
        j.key("watchdog");
        j.begin_array();
        for (int q = 0; q < 8; ++q) {
            if (!ps.wd_enabled[q]) { continue; }
            j.begin_object();
            j.kv("queue", q);
            j.kv("storms", ps.wd_storms[q]);
            j.kv("restores", ps.wd_restores[q]);
            j.kv("stormed", ps.wd_stormed[q]);
            j.kv("tx_dropped", ps.wd_tx_dropped[q]);
            j.kv("rx_dropped", ps.wd_rx_dropped[q]);
            j.end_object();
        }
        j.end_array();
        j.end_object();
        if (p.buffer_accounting()) {
            j.key("priority_groups");
            j.begin_array();
            for (int g = 0; g < 8; ++g) {
                const sw::pg_status st = p.pg(i, g);
                const auto& pgc = cfg.ports[i].pgs[g];
                if (!pgc.configured && st.peak_use == 0) { continue; }
                j.begin_object();
                j.kv("pg", g);
                j.kv("lossless", st.lossless);
                j.kv("reserved", pgc.reserved.v);
                j.kv("xoff", pgc.xoff.v);
                j.kv("xon", pgc.xon ? pgc.xon->v : 0);
                put_pg_counters(st, put);
                j.end_object();
            }
            j.end_array();
        }
        write_ethdev(j, r, i);
        j.key("queues");
        j.begin_array();
        for (int q = 0; q < 8; ++q) {
            const auto s = p.queue(i, q);
            j.begin_object();
            j.kv("queue", q);
            put_queue_counters(s, put);
            j.kv("depth_bytes", s.depth_bytes);
            j.kv("max_depth_bytes", s.max_depth_bytes);
            j.kv("max_depth_packets", static_cast<std::uint64_t>(s.max_depth_packets));
            j.end_object();
        }
        j.end_array();
    });
    return end_report(j, out);
}

std::string write_switch_report(const std::string& path, const sw::switch_pipeline& p, const switch_cfg& cfg,
                                const run_report& r) {
    return write_report_file(path, switch_report_json(p, cfg, r));
}

void print_switch_final(const sw::switch_pipeline& p, double elapsed) {
    std::printf("\n==== rocelab-switch final counters (%.2fs) ====\n", elapsed);
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const auto& b = p.binding(i);
        std::printf("%s (port %u, %s%s): rx %llu pkts %llu B, tx %llu pkts %llu B\n", b.name.c_str(), b.port_id,
                    format_rate(b.line_rate).c_str(), b.shaped ? " shaped" : "",
                    static_cast<unsigned long long>(c.rx_packets), static_cast<unsigned long long>(c.rx_bytes),
                    static_cast<unsigned long long>(c.tx_packets), static_cast<unsigned long long>(c.tx_bytes));
        for (std::size_t r = 0; r < sw::drop_reason_count; ++r) {
            if (c.drops[r] != 0) {
                std::printf("  %-24s %llu\n", sw::drop_reason_name(static_cast<sw::drop_reason>(r)),
                            static_cast<unsigned long long>(c.drops[r]));
            }
        }
        for (std::size_t s = 1; s < parse_status_count; ++s) {
            if (c.malformed[s] != 0) {
                std::printf("  rx_malformed_%-12s %llu\n", parse_status_name(static_cast<parse_status>(s)),
                            static_cast<unsigned long long>(c.malformed[s]));
            }
        }
        if (c.tx_pfc_frames != 0) {
            std::printf("  tx_pfc_frames %llu (XOFF/XON frames sent upstream)\n",
                        static_cast<unsigned long long>(c.tx_pfc_frames));
        }
        if (c.rx_mac_control != 0) {
            std::printf("  rx_mac_control %llu (pfc %llu, pause %llu)\n",
                        static_cast<unsigned long long>(c.rx_mac_control), static_cast<unsigned long long>(c.rx_pfc),
                        static_cast<unsigned long long>(c.rx_pause));
        }
        std::printf("  %-6s %12s %12s %12s %12s %12s %12s %10s\n", "queue", "tx_pkts", "tx_bytes", "drop_pkts",
                    "ecn_marked", "wred_drop", "max_depth_B", "Mbps");
        for (int q = 0; q < 8; ++q) {
            const auto s = p.queue(i, q);
            if (s.enq_packets == 0 && s.drop_packets == 0) { continue; }
            std::printf("  q%-5d %12llu %12llu %12llu %12llu %12llu %12llu %10.1f\n", q,
                        static_cast<unsigned long long>(s.deq_packets), static_cast<unsigned long long>(s.deq_bytes),
                        static_cast<unsigned long long>(s.drop_packets),
                        static_cast<unsigned long long>(s.ecn_marked), static_cast<unsigned long long>(s.wred_dropped),
                        static_cast<unsigned long long>(s.max_depth_bytes),
                        elapsed > 0 ? double(s.deq_bytes) * 8 / elapsed / 1e6 : 0.0);
        }
    }
    print_worker_stalls(p, elapsed);
    std::fflush(stdout);
}

}  // namespace rocelab::runtime
