// gen_report.cpp - the generator's JSON report, DCQCN trace, final lines and status line.
#include "runtime/gen_report.hpp"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "config/units_parse.hpp"
#include "core/json.hpp"
#include "runtime/app_common.hpp"

namespace rocelab::runtime {

namespace {

// DCQCN counts summed over every flow: the report's "totals" and the final "dcqcn total" line.
struct dcqcn_totals {
    std::uint64_t cnp_tx = 0;
    std::uint64_t cnp_rx = 0;
    std::uint64_t ce_rx = 0;
    std::uint64_t cuts = 0;
};

dcqcn_totals sum_dcqcn(const gen_figs& x) {
    dcqcn_totals t;
    for (std::size_t i = 0; i < x.req.size(); ++i) {
        t.cnp_tx += x.resp[i].cnp_tx;
        t.cnp_rx += x.req[i].cnp_rx;
        t.ce_rx += x.resp[i].ce_rx;
        t.cuts += x.req[i].rp.cuts;
    }
    return t;
}

}  // namespace

void gen_status::print(const gen::gen_pipeline& p, double dt, double t) {
    status_line line(t);
    for (std::size_t i = 0; i < p.port_count(); ++i) {
        const auto& c = p.counters(i);
        const port_traffic now = traffic_of(c);
        const traffic_rates r = rates(now, _prev[i], dt);
        line.append(" | %s tx %s %.3fMpps rx %s %.3fMpps", p.binding(i).name.c_str(), rate_str(r.tx_bps).c_str(),
                    r.tx_mpps, rate_str(r.rx_bps).c_str(), r.rx_mpps);
        _prev[i] = now;
    }
    std::uint64_t naks = 0, retx = 0, timeouts = 0, done = 0;
    for (std::size_t f = 0; f < p.flow_count(); ++f) {
        const auto& rc = p.flow(f).rq.counters();
        naks += gen::read_counter(rc.naks_rx);
        retx += gen::read_counter(rc.retx_packets);
        timeouts += gen::read_counter(rc.timeouts);
        done += gen::read_counter(rc.messages_completed);
    }
    line.append(" | msgs %llu naks %llu retx %llu timeouts %llu", (unsigned long long)done, (unsigned long long)naks,
                (unsigned long long)retx, (unsigned long long)timeouts);
    append_worker_busy(line, p, _hz, dt, _prev_busy);
    line.print();
}

void append_fct_rows(std::string& out, const gen::flow_state& fl, double scale) {
    for (const std::uint64_t v : fl.fct_ns) {
        const auto x = scale == 1.0 ? v : static_cast<std::uint64_t>(std::llround(static_cast<double>(v) * scale));
        char num[24];
        out += fl.cfg.name;
        out += ',';
        out.append(num, std::to_chars(num, num + sizeof num, x).ptr);
        out += '\n';
    }
}

bool write_fct_rows(std::FILE* out, const gen::gen_pipeline& p, double scale) {
    std::string rows;
    for (std::size_t i = 0; i < p.flow_count(); ++i) {
        rows.clear();
        append_fct_rows(rows, p.flow(i), scale);
        if (std::fwrite(rows.data(), 1, rows.size(), out) != rows.size()) {
            return false;
        }
    }
    return true;
}

std::string write_fct_csv(const std::string& path, const gen::gen_pipeline& p) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        return "--fct-csv " + path + ": " + std::strerror(errno);
    }
    const bool ok = std::fputs("flow,fct_ns\n", f) >= 0 && write_fct_rows(f, p);
    if (std::fclose(f) != 0 || !ok) {
        return "--fct-csv " + path + ": write failed";
    }
    return "";
}

std::string write_dcqcn_trace(const std::string& path, const gen::gen_pipeline& p) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        return "--dcqcn-trace " + path + ": " + std::strerror(errno);
    }
    std::fprintf(f, "time_s,flow,event,rc_bps,rt_bps,alpha\n");
    std::uint64_t dropped = 0;
    for (std::size_t i = 0; i < p.flow_count(); ++i) {
        const auto& fl = p.flow(i);
        if (!fl.trace) {
            continue;
        }
        for (const auto& r : fl.trace->records()) {
            std::fprintf(f, "%.9f,%s,%s,%.0f,%.0f,%.6f\n", double(r.t.v) / 1e9, fl.cfg.name.c_str(),
                         dcqcn_event_name(r.ev), r.rc_bps, r.rt_bps, r.alpha);
        }
        dropped += fl.trace->dropped();
    }
    std::fclose(f);
    if (dropped != 0) {
        return "--dcqcn-trace " + path + ": " + std::to_string(dropped) +
               " events did not fit the per-QP trace buffer (262144 events) and are missing at the end";
    }
    return "";
}

gen_req_figs gen_req_figs_of(const gen::flow_state& f, const gen_cfg& cfg, nanos end) {
    gen_req_figs x;
    x.rq = snapshot(f.rq.counters());
    x.rp = f.rp.counters();
    x.cnp_rx = f.cnp_rx;
    x.pacing_bps = f.pacer.rate().v;
    x.fct_dropped = f.fct_dropped;
    x.flow_fct_ns = gen::flow_fct(f).v;
    x.goodput_fct_bps = gen::goodput_over_fct(f);
    x.rate_mean_bps = gen::mean_pacing_rate(f, cfg, end);
    x.rate_min_bps = f.dcqcn ? f.rp.counters().min_rate_seen_bps : double(f.pacer.rate().v);
    x.ready = f.rq.state() == qp_state::ready;
    return x;
}

gen_resp_figs gen_resp_figs_of(const gen::flow_state& f) {
    return {snapshot(f.rs.counters()), f.np.counters().ce_rx, f.cnp_tx, f.cnp_tx_fail};
}

gen_port_figs gen_port_figs_of(const gen::gen_pipeline& p, std::size_t i) {
    gen_port_figs x;
    x.c = p.counters(i);
    x.pause = snapshot(p.pauses(i).stats());
    for (int q = 0; q < 8; ++q) { x.paused_ns[static_cast<std::size_t>(q)] = p.pauses(i).paused_time(q, nanos{INT64_MAX / 2}).v; }
    return x;
}

gen::gen_pipeline::worker_view gen_worker_figs_of(const gen::gen_pipeline::worker_view& v) {
    gen::gen_pipeline::worker_view x;
    x.busy_cycles = read_counter(v.busy_cycles);
    x.loops = read_counter(v.loops);
    x.max_poll_gap_ns = read_counter(v.max_poll_gap_ns);
    x.stalls = read_counter(v.stalls);
    x.stalled_ns = read_counter(v.stalled_ns);
    return x;
}

gen_figs gen_figs_of(const gen::gen_pipeline& p, const gen_cfg& cfg, nanos end) {
    gen_figs x;
    for (std::size_t i = 0; i < p.flow_count(); ++i) {
        const auto& f = p.flow(i);
        x.req.push_back(gen_req_figs_of(f, cfg, end));
        x.resp.push_back(gen_resp_figs_of(f));
        x.fct.push_back(f.fct_ns);
    }
    for (std::size_t i = 0; i < p.port_count(); ++i) { x.ports.push_back(gen_port_figs_of(p, i)); }
    x.totals = gen_worker_figs_of(p.poll_totals());
    for (std::size_t k = 0; k < p.worker_count(); ++k) { x.workers.push_back(gen_worker_figs_of(p.worker(k))); }
    x.all_finished = p.all_finished();
    if (p.ring()) { x.coll = p.collectives(); }
    return x;
}

std::string gen_report_json(const gen::gen_pipeline& p, const gen_cfg& cfg, const run_report& r) {
    return gen_report_json(p, cfg, r, gen_figs_of(p, cfg, r.end));
}

std::string gen_report_json(const gen::gen_pipeline& p, const gen_cfg& cfg, const run_report& r, const gen_figs& x) {
    const double elapsed = r.elapsed_s;
    std::string out;
    json_writer j(out);
    begin_report(j, "rocelab-gen", cfg.source, [&] {
        j.kv("command_line", r.command_line);
        j.kv("seed", cfg.seed);
        j.kv("pattern", gen_pattern_name(cfg.pattern));
        j.kv("data_loss", cfg.data_loss.p);
        j.kv("ack_loss", cfg.ack_loss.p);
        j.kv("link_delay_ns", cfg.link_delay.v);
        j.kv("tx_only", p.tx_opts().tx_only);
        j.kv("tx_payload", gen::tx_payload_name(p.tx_opts().payload));
    });
    // DCQCN as resolved (every flow shares it but for its line rate).
    j.key("dcqcn");
    j.begin_object();
    j.kv("profile", dcqcn_profile_name(cfg.dcqcn));
    if (p.flow_count() != 0) {
        const dcqcn_cfg& d = p.flow(0).rp.cfg();
        j.kv("line_rate_bps", d.line_rate.v);
        j.kv("rpg_time_reset_ns", d.rpg_time_reset.v);
        j.kv("rpg_byte_reset_bytes", d.rpg_byte_reset.v);
        j.kv("rpg_threshold", static_cast<std::uint64_t>(d.rpg_threshold));
        j.kv("rpg_ai_rate_bps", d.rpg_ai_rate.v);
        j.kv("rpg_hai_rate_bps", d.rpg_hai_rate.v);
        j.kv("rpg_min_rate_bps", d.rpg_min_rate.v);
        j.kv("rpg_max_rate_bps", d.rpg_max_rate.v);
        j.kv("rpg_gd", static_cast<std::uint64_t>(d.rpg_gd));
        j.kv("rpg_min_dec_fac_percent", static_cast<std::uint64_t>(d.rpg_min_dec_fac));
        j.kv("dce_tcp_g", d.dce_tcp_g);
        j.kv("dce_tcp_rtt_ns", d.dce_tcp_rtt.v);
        j.kv("initial_alpha_value", d.initial_alpha_value);
        j.kv("rate_reduce_monitor_period_ns", d.rate_reduce_monitor_period.v);
        j.kv("rate_to_set_on_first_cnp_bps", d.rate_to_set_on_first_cnp.v);
        j.kv("clamp_tgt_rate", d.clamp_tgt_rate);
        j.kv("clamp_tgt_rate_after_time_inc", d.clamp_tgt_rate_after_time_inc);
    }
    const dcqcn_np_cfg& np = p.np_cfg();
    j.kv("cnp_enabled", np.enabled);
    j.kv("cnp_mode", np.mode == dcqcn_np_mode::per_qp ? "per_qp" : "per_port");
    j.kv("cnp_interval_ns", np.cnp_interval.v);
    j.kv("min_time_between_cnps_ns", np.min_time_between_cnps.v);
    j.kv("cnp_dscp", static_cast<std::uint64_t>(np.cnp_dscp));
    j.kv("cnp_802p_prio", static_cast<std::uint64_t>(np.cnp_802p_prio));
    j.end_object();
    {
        const auto [ctx, crx, ce, cuts] = sum_dcqcn(x);
        double rmin = 0, rmean = 0;
        for (std::size_t i = 0; i < p.flow_count(); ++i) {
            const double m = x.req[i].rate_min_bps;
            rmin = i == 0 ? m : std::min(rmin, m);
            rmean += x.req[i].rate_mean_bps / double(p.flow_count());
        }
        j.key("totals");
        j.begin_object();
        j.kv("cnp_tx", ctx);
        j.kv("cnp_rx", crx);
        j.kv("ce_rx", ce);
        j.kv("rate_cuts", cuts);
        j.kv("rate_min_bps", rmin);
        j.kv("rate_mean_bps", rmean);
        j.end_object();
    }
    j.kv("elapsed_s", elapsed);
    json_workers(j, p, r, x.totals, [&x](std::size_t k) -> const auto& { return x.workers[k]; },
                 [&p](json_writer& jw, std::size_t k) { json_stages(jw, p, k); });  // bench builds
    j.kv("tsc_hz", r.tsc_hz);
    j.kv("mbufs_total", r.mbufs_total);
    j.kv("mbuf_pool_ops", r.mbuf_pool_ops);
    j.kv("mbufs_in_use_at_exit", r.mbufs_in_use);
    j.kv("all_finished", x.all_finished);
    write_capture_fields(j, r);
    if (p.ring()) {
        // Collectives: one sample per completed collective; nccl-tests'
        // algbw = S / t and busbw = algbw x collective_bus_factor at the mean.
        const auto& cf = x.coll;
        std::vector<std::uint64_t> ct = cf.ns;
        std::sort(ct.begin(), ct.end());
        std::uint64_t sum = 0;
        for (auto v : cf.ns) {
            sum += v;
        }
        const double mean = ct.empty() ? 0.0 : double(sum) / double(ct.size());
        const collective_bw bw = collective_bandwidth(cfg.pattern, cfg.ring_hosts, cfg.sizes.fixed, mean);
        j.key("collective");
        j.begin_object();
        j.kv("kind", gen_pattern_name(cfg.pattern));
        j.kv("hosts", static_cast<std::uint64_t>(cfg.ring_hosts));
        j.kv("steps", static_cast<std::uint64_t>(cfg.ring_steps));
        j.kv("msg_size", cfg.sizes.fixed.v);
        j.kv("chunk_bytes", cfg.ring_chunk);
        j.kv("collectives", cfg.ring_collectives);
        j.kv("collectives_completed", cf.done);
        write_sample_stats(j, "collective", ct, cf.dropped, mean, true);
        j.kv("algbw_gbps", bw.algbw_gbps);
        j.kv("busbw_gbps", bw.busbw_gbps);
        j.kv("bus_factor", collective_bus_factor(cfg.pattern, cfg.ring_hosts));
        j.key("collective_times_ns");  // in completion order (at most 1000)
        j.begin_array();
        for (std::size_t k = 0; k < cf.ns.size() && k < 1000; ++k) {
            j.value(cf.ns[k]);
        }
        j.end_array();
        j.key("step_mean_ns");  // by step index (all-reduce: reduce-scatter 0..H-2, all-gather H-1..2H-3)
        j.begin_array();
        for (std::size_t k = 0; k < cf.step_sum_ns.size(); ++k) {
            const std::uint64_t n = cf.step_n[k];
            j.value(n ? double(cf.step_sum_ns[k]) / double(n) : 0.0);
        }
        j.end_array();
        j.end_object();
    }
    json_objects(j, "flows", p.flow_count(), [&](std::size_t i) {
        const auto& f = p.flow(i);
        const auto& q = x.req[i];
        const auto& rc = q.rq;
        const auto& sc = x.resp[i].rs;
        std::vector<std::uint64_t> fct = x.fct[i];
        std::sort(fct.begin(), fct.end());
        j.kv("name", f.cfg.name);
        j.kv("src", cfg.hosts[f.cfg.src_host].name);
        j.kv("dst", cfg.hosts[f.cfg.dst_host].name);
        j.kv("src_port", p.binding(f.src_port).name);
        j.kv("dst_port", p.binding(f.dst_port).name);
        j.kv("src_qpn", f.cfg.qp.src_qpn);
        j.kv("dst_qpn", f.cfg.qp.dst_qpn);
        j.kv("pmtu", f.cfg.qp.pmtu);
        j.kv("window", f.cfg.qp.window);
        j.kv("ack_timeout_code", static_cast<unsigned>(f.cfg.qp.ack_timeout));
        j.kv("ack_timeout_ns", ack_timeout_of(f.cfg.qp.ack_timeout).v);
        j.kv("pacing_rate", format_rate(bits_per_sec{q.pacing_bps}));
        j.kv("pacing_rate_bps", q.pacing_bps);
        j.kv("state", q.ready ? "ready" : "error");
        j.kv("tx_packets", rc.tx_packets);
        j.kv("tx_bytes", rc.tx_bytes);
        j.kv("rx_packets", sc.rx_packets);
        j.kv("rx_bytes", sc.rx_bytes);
        j.kv("goodput_bps", elapsed > 0 ? double(sc.rx_bytes) * 8 / elapsed : 0.0);
        j.kv("messages_posted", rc.messages_posted);
        j.kv("messages_completed", rc.messages_completed);
        j.kv("messages_rx", sc.messages_rx);
        j.kv("bytes_completed", rc.bytes_completed);
        write_sample_stats(
            j, "fct", fct, q.fct_dropped,
            rc.messages_completed ? double(rc.fct_sum_ns) / double(rc.messages_completed) : 0.0, false);
        // The flow's completion time (its first message's post to its last message's
        // completion) and the goodput over it: completed bits / flow_fct.
        j.kv("flow_fct_ns", q.flow_fct_ns);
        j.kv("goodput_fct_bps", q.goodput_fct_bps);
        j.kv("acks_rx", rc.acks_rx);
        j.kv("acks_dup", rc.acks_dup);
        j.kv("naks_rx", rc.naks_rx);
        j.kv("acks_tx", sc.acks_tx);
        j.kv("naks_tx", sc.naks_tx);
        j.kv("retransmissions", rc.retx_packets);
        j.kv("retx_bytes", rc.retx_bytes);
        j.kv("timeouts", rc.timeouts);
        j.kv("retry_exceeded", rc.retry_exceeded);
        j.kv("out_of_sequence", sc.out_of_sequence);
        j.kv("duplicates", sc.duplicates);
        j.kv("invalid_requests", sc.invalid_requests);
        // DCQCN (OTG result names: CNPs sent and received).
        const auto& rk = q.rp;
        j.kv("dcqcn", f.dcqcn ? dcqcn_profile_name(cfg.dcqcn) : "off");
        j.kv("cnp_tx", x.resp[i].cnp_tx);
        j.kv("cnp_tx_failed", x.resp[i].cnp_tx_fail);
        j.kv("cnp_rx", q.cnp_rx);
        j.kv("ce_rx", x.resp[i].ce_rx);
        j.kv("rate_cuts", rk.cuts);
        j.kv("rate_increases", rk.fast_recovery + rk.additive_increase + rk.hyper_increase);
        j.kv("rate_min_bps", q.rate_min_bps);
        j.kv("rate_mean_bps", q.rate_mean_bps);
        j.kv("rate_end_bps", q.pacing_bps);
    });
    json_objects(j, "ports", p.port_count(), [&](std::size_t i) {
        const auto& c = x.ports[i].c;
        const auto& b = p.binding(i);
        const auto& ps = x.ports[i].pause;
        write_port_head(j, b, r, i);
        j.kv("line_rate", b.line_rate.v ? format_rate(b.line_rate) : std::string("unknown"));
        j.kv("line_rate_bps", b.line_rate.v);
        put_port_counters(c, json_put(j));
        write_malformed(j, c.malformed);
        j.key("pause");
        j.begin_object();
        j.kv("pfc_frames", ps.pfc_frames);
        j.kv("pause_frames", ps.pause_frames);
        j.key("xoff_frames");
        j.begin_array();
        for (auto v : ps.xoff_frames) {
            j.value(v);
        }
        j.end_array();
        j.key("paused_ns");
        j.begin_array();
        for (auto v : x.ports[i].paused_ns) {
            j.value(v);
        }
        j.end_array();
        j.end_object();
        write_ethdev(j, r, i);
    });
    return end_report(j, out);
}

std::string write_gen_report(const std::string& path, const gen::gen_pipeline& p, const gen_cfg& cfg,
                             const run_report& r) {
    return write_report_file(path, gen_report_json(p, cfg, r));
}

void print_gen_final(const gen::gen_pipeline& p, const gen_cfg& cfg, double elapsed, nanos end_now) {
    std::printf("\n==== rocelab-gen final (%.2fs) ====\n", elapsed);
    for (std::size_t f = 0; f < p.flow_count(); ++f) {
        const auto& fl = p.flow(f);
        const auto& rc = fl.rq.counters();
        const auto& sc = fl.rs.counters();
        std::printf("%s: tx %llu pkts, goodput %s, messages %llu/%llu, naks %llu, retx %llu, timeouts %llu, "
                    "out_of_sequence %llu\n",
                    fl.cfg.name.c_str(), (unsigned long long)rc.tx_packets,
                    rate_str(elapsed > 0 ? double(sc.rx_bytes) * 8 / elapsed : 0).c_str(),
                    (unsigned long long)rc.messages_completed, (unsigned long long)rc.messages_posted,
                    (unsigned long long)rc.naks_rx, (unsigned long long)rc.retx_packets,
                    (unsigned long long)rc.timeouts, (unsigned long long)sc.out_of_sequence);
    }
    if (cfg.dcqcn != dcqcn_profile::off) {
        const gen_figs x = gen_figs_of(p, cfg, end_now);
        for (std::size_t f = 0; f < p.flow_count(); ++f) {
            const gen_req_figs& q = x.req[f];
            std::printf("%s: dcqcn %s: cnp_rx %llu, rate_cuts %llu, rate min %s mean %s now %s; ce_rx %llu, cnp_tx %llu\n",
                        p.flow(f).cfg.name.c_str(), dcqcn_profile_name(cfg.dcqcn), (unsigned long long)q.cnp_rx,
                        (unsigned long long)q.rp.cuts, rate_str(q.rate_min_bps).c_str(),
                        rate_str(q.rate_mean_bps).c_str(), rate_str(double(q.pacing_bps)).c_str(),
                        (unsigned long long)x.resp[f].ce_rx, (unsigned long long)x.resp[f].cnp_tx);
        }
        const dcqcn_totals t = sum_dcqcn(x);
        std::printf("dcqcn total: ce_rx %llu, cnp_tx %llu, cnp_rx %llu, rate_cuts %llu\n",
                    (unsigned long long)t.ce_rx, (unsigned long long)t.cnp_tx, (unsigned long long)t.cnp_rx,
                    (unsigned long long)t.cuts);
    }
    print_worker_stalls(p, elapsed);
    std::fflush(stdout);
}

}  // namespace rocelab::runtime
