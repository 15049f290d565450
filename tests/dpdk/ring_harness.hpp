// ring_harness.hpp - in-process test bed: rocelab-switch ports wired to test
// "hosts" over net_ring pairs, the switch pipeline on its own worker lcore,
// and test-only paced senders built from the library's shaper.
//
//   host[i] --ring--> switch port i --ring--> host[i]
//
// Used by the DPDK tests that need exact offered rates (strict priority
// under congestion, PFC incast). Everything runs in one process with
// --no-huge; a test creates one harness and destroys it, and the mempool
// in-use count must return to zero.
#pragma once

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "config/switch_config.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port.hpp"
#include "eal_once.hpp"
#include "proto/build.hpp"
#include "proto/mac_control.hpp"
#include "qos/pause_timer.hpp"
#include "qos/shaper.hpp"
#include "runtime/worker.hpp"
#include "runtime/worker_loop.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::test {

struct host_port {
    std::uint16_t port_id = 0;
    mac_addr mac{};
};

// The built-in defaults without their buffer model and WRED (what
// BUFFER_POOL: {} and WRED_PROFILE: {} do in a file): for tests of PFC
// reaction, the watchdog and the scheduler, which must not see the switch's
// own XOFF or ECN. Apply to cfg.ports after they are filled.
inline void without_buffers_and_wred(switch_cfg& cfg) {
    cfg.pool = buffer_pool_cfg{};
    for (auto& pc : cfg.ports) {
        pc.pgs = {};
        pc.wred = {};
    }
    cfg.port_defaults.pgs = {};
    cfg.port_defaults.wred = {};
}

class ring_testbed {
public:
    // n ports; cfg.ports must have n entries (names, speeds, maps).
    // workers > 1: the switch runs on that many worker lcores (ports as
    // port_worker maps them), each yielding the CPU when idle so workers can
    // share one CPU.
    explicit ring_testbed(switch_cfg cfg, const std::string& tag, unsigned workers = 1,
                          std::vector<unsigned> port_worker = {})
        : _cfg(std::move(cfg)), _workers(workers) {
        const std::size_t n = _cfg.ports.size();
        _pool = rte_pktmbuf_pool_create(("tb_" + tag).c_str(), 32767, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        EXPECT_NE(_pool, nullptr);
        for (std::size_t i = 0; i < n; ++i) {
            const std::string a = tag + "_h2s" + std::to_string(i);
            const std::string b = tag + "_s2h" + std::to_string(i);
            rte_ring* h2s = rte_ring_create(a.c_str(), 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
            rte_ring* s2h = rte_ring_create(b.c_str(), 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
            _rings.push_back(h2s);
            _rings.push_back(s2h);
            const int sp = rte_eth_from_rings((tag + "_sw" + std::to_string(i)).c_str(), &h2s, 1, &s2h, 1, 0);
            const int hp = rte_eth_from_rings((tag + "_host" + std::to_string(i)).c_str(), &s2h, 1, &h2s, 1, 0);
            EXPECT_GE(sp, 0);
            EXPECT_GE(hp, 0);
            for (int id : {sp, hp}) {
                dpdk::port_params pp;
                pp.port_id = static_cast<std::uint16_t>(id);
                pp.pool = _pool;
                dpdk::port_info info;
                EXPECT_EQ(dpdk::port_open(pp, info), "");
            }
            _cfg.ports[i].port_id = sp;
            sw::port_binding pb;
            pb.port_id = static_cast<std::uint16_t>(sp);
            pb.name = _cfg.ports[i].name;
            pb.mac = {0x02, 0x5a, 0, 0, 0, static_cast<std::uint8_t>(i + 1)};
            pb.shaped = _cfg.ports[i].speed.has_value();
            pb.line_rate = _cfg.ports[i].speed.value_or(bits_per_sec{10'000'000'000ULL});
            _bindings.push_back(pb);
            host_port h;
            h.port_id = static_cast<std::uint16_t>(hp);
            h.mac = {0x02, 0x48, 0, 0, 0, static_cast<std::uint8_t>(i + 1)};
            hosts.push_back(h);
        }
        // As the app does: speeds the config leaves open complete the buffer
        // model (xoff: auto, e.g. the built-in RoCE defaults).
        std::vector<std::pair<int, bits_per_sec>> speeds;
        for (std::size_t i = 0; i < n; ++i) { speeds.emplace_back(static_cast<int>(i), _bindings[i].line_rate); }
        if (const std::string e = resolve_port_speeds(_cfg, speeds); !e.empty()) { ADD_FAILURE() << e; return; }
        auto r = sw::switch_pipeline::create(_cfg, _bindings, _pool, workers, port_worker);
        if (auto* e = std::get_if<std::string>(&r)) { ADD_FAILURE() << *e; return; }
        pipe = std::move(std::get<0>(r));
    }

    ~ring_testbed() {
        stop();
        for (const auto& h : hosts) { drain(h.port_id); }
        if (pipe) { pipe->release_all(); }
        for (const auto& b : _bindings) { dpdk::port_close(b.port_id); }
        for (const auto& h : hosts) { dpdk::port_close(h.port_id); }
        for (auto* r : _rings) {
            void* m = nullptr;
            while (rte_ring_dequeue(r, &m) == 0) { rte_pktmbuf_free(static_cast<rte_mbuf*>(m)); }
            rte_ring_free(r);
        }
        pipe.reset();
        rte_mempool_free(_pool);
    }

    void start() {
        if (_workers > 1) {
            for (unsigned k = 0; k < _workers; ++k) {
                auto c = std::make_unique<runtime::worker_ctl<sw::switch_pipeline::worker_view>>();
                c->pipe = &pipe->worker(k);
                c->yield_when_idle = true;
                const unsigned l = runtime::lcore_launch::nth_worker_lcore(k);
                ASSERT_LT(l, RTE_MAX_LCORE) << "the test needs " << _workers << " worker lcores";
                _view_lcores.push_back(l);
                auto* arg = new std::pair<ring_testbed*, runtime::worker_ctl<sw::switch_pipeline::worker_view>*>(this, c.get());
                _view_ctls.push_back(std::move(c));
                rte_eal_remote_launch(
                    [](void* a) -> int {
                        auto* pr = static_cast<std::pair<ring_testbed*, runtime::worker_ctl<sw::switch_pipeline::worker_view>*>*>(a);
                        dpdk::tsc_clock clk = pr->first->clock;
                        auto* ctl = pr->second;
                        delete pr;
                        runtime::run_worker(*ctl, clk);
                        return 0;
                    },
                    arg, l);
            }
            _started = true;
            return;
        }
        _ctl.pipe = pipe.get();
        const unsigned w = rte_get_next_lcore(-1, 1, 0);
        ASSERT_LT(w, RTE_MAX_LCORE) << "tests need two lcores (-l 0-1)";
        _worker = w;
        rte_eal_remote_launch(
            [](void* arg) -> int {
                auto* tb = static_cast<ring_testbed*>(arg);
                dpdk::tsc_clock clk = tb->clock;  // a copy: the testbed's epoch
                runtime::run_worker(tb->_ctl, clk);
                return 0;
            },
            this, w);
        _started = true;
    }
    void stop() {
        if (!_started) { return; }
        if (_workers > 1) {
            for (auto& c : _view_ctls) { c->stop.store(true); }
            for (unsigned l : _view_lcores) { rte_eal_wait_lcore(l); }
            _started = false;
            return;
        }
        _ctl.stop.store(true);
        rte_eal_wait_lcore(_worker);
        _started = false;
    }
    // Free whatever a host port has received; returns frames freed.
    std::size_t drain(std::uint16_t port) {
        rte_mbuf* b[64];
        std::size_t t = 0;
        for (;;) {
            const std::uint16_t n = rte_eth_rx_burst(port, 0, b, 64);
            if (n == 0) { return t; }
            rte_pktmbuf_free_bulk(b, n);
            t += n;
        }
    }
    // After stop(): free what the hosts sent that the switch never received
    // (still on the "wire", its ports' RX rings; a worker that fell behind
    // under load leaves frames there). Returns frames freed.
    std::size_t drain_switch_rx() {
        std::size_t t = 0;
        for (const auto& b : _bindings) { t += drain(b.port_id); }
        return t;
    }
    unsigned pool_in_use() const { return rte_mempool_in_use_count(_pool); }
    rte_mempool* pool() const { return _pool; }

    std::unique_ptr<sw::switch_pipeline> pipe;
    std::vector<host_port> hosts;
    // The run's one clock: the worker polls a copy; tests read pipeline
    // times (paused_time, pfc) at clock.now() on the same epoch.
    dpdk::tsc_clock clock;

private:
    switch_cfg _cfg;
    rte_mempool* _pool = nullptr;
    std::vector<rte_ring*> _rings;
    std::vector<sw::port_binding> _bindings;
    runtime::worker_ctl<sw::switch_pipeline> _ctl;
    unsigned _worker = 0;
    unsigned _workers = 1;
    std::vector<std::unique_ptr<runtime::worker_ctl<sw::switch_pipeline::worker_view>>> _view_ctls;
    std::vector<unsigned> _view_lcores;
    bool _started = false;
};

// A test's host loop (its senders and receivers, on the main lcore) timing
// its own turns within a window [w0, w1]. Its gaps over 1 ms, less what the
// kernel counted as the thread waiting for a CPU meanwhile (run_delay: the
// kernel ran something else), are time the hypervisor froze its vCPU, which
// the guest does not see (docs/testing.md, "A host that freezes its VM"):
// nothing was sent or received then, whatever the switch did.
class host_loop_gaps {
public:
    host_loop_gaps(nanos w0, nanos w1) : _w0(w0), _w1(w1) {}
    // Once per turn of the loop, with the turn's clock reading.
    void turn(nanos now) {
        if (_started && now - _prev > nanos{1'000'000} && now > _w0 && _prev < _w1) {
            const std::int64_t g = std::min(now, _w1).v - std::max(_prev, _w0).v;
            gaps_ns += g;
            longest_ns = std::max(longest_ns, g);
        }
        if (_rd0 < 0 && now >= _w0) { _rd0 = runtime::thread_run_delay_ns(); }
        if (_rd1 < 0 && now >= _w1) { _rd1 = runtime::thread_run_delay_ns(); }
        _prev = now;
        _started = true;
    }
    // After the loop (if it ended before a turn at w1).
    void finish() {
        if (_rd1 < 0) { _rd1 = runtime::thread_run_delay_ns(); }
    }
    std::int64_t waited_ns() const { return _rd0 >= 0 && _rd1 >= 0 ? _rd1 - _rd0 : -1; }
    // The frozen time: 0 when run_delay could not be read (nothing excused).
    std::int64_t frozen_ns() const {
        const std::int64_t w = waited_ns();
        return w < 0 ? 0 : std::max<std::int64_t>(0, gaps_ns - w);
    }
    std::int64_t gaps_ns = 0, longest_ns = 0;

private:
    nanos _w0, _w1, _prev{0};
    bool _started = false;
    std::int64_t _rd0 = -1, _rd1 = -1;
};

// A test-only paced RoCEv2 sender: one traffic class at a fixed wire rate,
// paced by the library's shaper against the TSC clock.
class paced_sender {
public:
    paced_sender(rte_mempool* pool, std::uint16_t port, roce_v4_params proto, std::uint32_t payload,
                 bits_per_sec rate)
        : _pool(pool), _port(port), _p(proto), _payload(payload, std::byte{0x5a}), _shp(rate, bytes{4096}) {
        _p.payload = _payload;
        _frame.resize(9216);
        _len = build_roce_v4(_frame, _p);
    }
    // Send what the shaper allows at `now`; returns frames sent.
    unsigned poll(nanos now) {
        unsigned n = 0;
        while (_shp.conforms(now)) {
            rte_mbuf* m = rte_pktmbuf_alloc(_pool);
            if (m == nullptr) { ++alloc_fail; return n; }
            char* d = rte_pktmbuf_append(m, static_cast<std::uint16_t>(_len));
            std::memcpy(d, _frame.data(), _len);
            if (rte_eth_tx_burst(_port, 0, &m, 1) != 1) {
                rte_pktmbuf_free(m);
                ++tx_fail;
                return n;
            }
            _shp.on_send(now, _len);
            ++sent;
            sent_wire_bytes += _len + 24;
            ++n;
        }
        return n;
    }
    std::uint32_t frame_len() const { return _len; }
    std::uint64_t sent = 0, sent_wire_bytes = 0, alloc_fail = 0, tx_fail = 0;

private:
    rte_mempool* _pool;
    std::uint16_t _port;
    roce_v4_params _p;
    std::vector<std::byte> _payload;
    std::vector<std::byte> _frame;
    std::uint32_t _len = 0;
    shaper _shp;
};

// A test-only host that sends one traffic class at line rate and honours
// PFC/PAUSE it receives (the library's pause_timer), like a RoCE NIC.
// It counts the XOFF/XON frames it gets per priority and keeps their bytes.
class pfc_aware_sender {
public:
    pfc_aware_sender(rte_mempool* pool, std::uint16_t port, roce_v4_params proto, std::uint32_t payload,
                     bits_per_sec rate, int prio)
        : _pool(pool), _port(port), _p(proto), _payload(payload, std::byte{0x3c}), _shp(rate, bytes{2048}),
          _rate(rate), _prio(prio) {
        _p.payload = _payload;
        _frame.resize(9216);
        _len = build_roce_v4(_frame, _p);
    }
    // Receive (PFC), then send what the shaper and the pause state allow,
    // checking for PFC again before every frame (a NIC reacts per frame).
    void poll(nanos now) {
        receive(now);
        if (!sending) { return; }
        while (_shp.conforms(now) && (_pause.paused_mask(now) >> _prio & 1u) == 0) {
            rte_mbuf* m = rte_pktmbuf_alloc(_pool);
            if (m == nullptr) { ++alloc_fail; return; }
            char* dd = rte_pktmbuf_append(m, static_cast<std::uint16_t>(_len));
            std::memcpy(dd, _frame.data(), _len);
            if (rte_eth_tx_burst(_port, 0, &m, 1) != 1) {
                rte_pktmbuf_free(m);
                ++tx_fail;
                return;
            }
            _shp.on_send(now, _len);
            ++sent;
            if (_xoff_outstanding) { ++sent_after_xoff; }
            receive(now);
        }
    }
    void receive(nanos now) {
        rte_mbuf* b[32];
        const std::uint16_t n = rte_eth_rx_burst(_port, 0, b, 32);
        for (std::uint16_t i = 0; i < n; ++i) {
            const auto* d = rte_pktmbuf_mtod(b[i], const std::byte*);
            if (rte_pktmbuf_pkt_len(b[i]) >= 60 && load_be16(d + 12) == 0x8808) {
                const mac_control_cview v(d + 14);
                if (v.opcode() == mac_control_op_pfc) {
                    const auto q = v.pfc_times();
                    for (int p = 0; p < 8; ++p) {
                        if ((v.class_enable() >> p & 1u) != 0) { ++(q[p] != 0 ? xoff_rx[p] : xon_rx[p]); }
                        if (p == _prio && (v.class_enable() >> p & 1u) != 0) { _xoff_outstanding = q[p] != 0; }
                    }
                    _pause.on_pfc(now, v.class_enable(), q, _rate);
                    if (pfc_frames.size() < 64) {
                        pfc_frames.emplace_back(d, d + rte_pktmbuf_pkt_len(b[i]));
                    }
                } else if (v.opcode() == mac_control_op_pause) {
                    ++pause_rx;
                    _pause.on_pause(now, v.pause_time(), _rate);
                }
            } else {
                ++data_rx;
            }
        }
        rte_pktmbuf_free_bulk(b, n);
    }
    nanos paused_time(nanos now) const { return _pause.paused_time(_prio, now); }
    std::uint32_t frame_len() const { return _len; }
    bool sending = true;
    std::uint64_t sent = 0, data_rx = 0, pause_rx = 0, alloc_fail = 0, tx_fail = 0;
    std::uint64_t sent_after_xoff = 0;  // frames sent while an XOFF was outstanding (must stay 0)
    std::array<std::uint64_t, 8> xoff_rx{}, xon_rx{};
    std::vector<std::vector<std::byte>> pfc_frames;

private:
    rte_mempool* _pool;
    std::uint16_t _port;
    roce_v4_params _p;
    std::vector<std::byte> _payload;
    std::vector<std::byte> _frame;
    std::uint32_t _len = 0;
    shaper _shp;
    bits_per_sec _rate;
    int _prio;
    pause_timer _pause{0xFF};
    bool _xoff_outstanding = false;
};

// The kernel's own account of how long the switch's worker thread waited,
// runnable, for a CPU (/proc/self/task/<tid>/schedstat, field 2: run_delay,
// ns). The kernel adds a whole wait at once when the thread runs again, so
// the largest increase between two samples is at least the longest single
// stall of the worker. This is measured outside the switch, and unlike the
// switch's own max_poll_gap_ns it does not grow when the data path itself
// gets slower (a slow data path is running, not waiting). Construct it after
// ring_testbed::start(); sample() from the host thread (e.g. every 1 ms).
class worker_stall_probe {
public:
    worker_stall_probe() {
        DIR* d = ::opendir("/proc/self/task");
        if (d == nullptr) { return; }
        while (dirent* e = ::readdir(d)) {
            if (e->d_name[0] == '.') { continue; }
            const std::string dir = std::string("/proc/self/task/") + e->d_name;
            char comm[64] = {};
            const int cf = ::open((dir + "/comm").c_str(), O_RDONLY);
            if (cf < 0) { continue; }
            const ssize_t n = ::read(cf, comm, sizeof comm - 1);
            ::close(cf);
            if (n > 0 && (std::strncmp(comm, "rte-worker-1\n", 13) == 0 || std::strncmp(comm, "lcore-worker-1\n", 15) == 0)) {
                _fd = ::open((dir + "/schedstat").c_str(), O_RDONLY);
                _tid = std::atoi(e->d_name);
            }
        }
        ::closedir(d);
        _last = read();
    }
    ~worker_stall_probe() {
        stop_sentinel();
        if (_fd >= 0) { ::close(_fd); }
    }
    // A second, independent measure: a thread pinned to the worker's CPU
    // that sleeps 1 ms at a time and records how late it wakes. When the
    // host takes that (virtual) CPU away - this VM loses it for 50-100 us to
    // its timer tick and now and then for milliseconds, which schedstat's
    // run_delay does not show because the kernel itself was not running -
    // the sentinel wakes late by as much as the worker was away. It also
    // counts ordinary scheduling delay of its own wakeups (it shares the
    // CPU with a busy poller), so it errs on the side of "stalled".
    // period: how long the sentinel sleeps each turn (1 ms: a stall that long
    // is seen; 10 ms: only longer ones, such as a vCPU the hypervisor froze
    // for 100 ms, and a tenth of the preemption).
    void start_sentinel(std::chrono::milliseconds period = std::chrono::milliseconds(1)) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (_tid <= 0 || ::sched_getaffinity(_tid, sizeof set, &set) != 0) { return; }
        _stop.store(false);
        _sentinel_started = true;
        _sentinel = std::thread([this, set, period] {
            ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
            using clk = std::chrono::steady_clock;
            while (!_stop.load(std::memory_order_relaxed)) {
                const auto t0 = clk::now();
                std::this_thread::sleep_for(period);
                const auto late = std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0 - period).count();
                if (late > max_wake_late_ns.load(std::memory_order_relaxed)) {
                    max_wake_late_ns.store(late, std::memory_order_relaxed);
                }
            }
        });
    }
    void stop_sentinel() {
        if (_sentinel.joinable()) {
            _stop.store(true);
            _sentinel.join();
        }
    }
    bool sentinel_ok() const { return _sentinel_started; }
    // A worker's vCPU the hypervisor froze, as a sentinel that sleeps
    // freeze_period at a time sees it: it woke more than twice that late
    // (run_delay does not see such a freeze). The tests that judge no run
    // whose worker froze (strict priority, wire rate) share the threshold.
    static constexpr std::chrono::milliseconds freeze_period{10};
    static constexpr std::int64_t frozen_late_ns = 2 * std::chrono::nanoseconds(freeze_period).count();
    static bool froze(std::int64_t wake_late_ns) { return wake_late_ns > frozen_late_ns; }
    std::atomic<std::int64_t> max_wake_late_ns{0};  // the sentinel's latest wake-up beyond its sleep
    bool ok() const { return _fd >= 0 && _last >= 0; }
    void sample() {
        const std::int64_t v = read();
        if (v < 0) { return; }
        max_stall_ns = std::max(max_stall_ns, v - _last);
        total_ns += v - _last;
        _last = v;
    }
    void reset() {
        sample();
        max_stall_ns = 0;
        total_ns = 0;
    }
    std::int64_t max_stall_ns = 0;  // the largest wait added between two samples (>= the longest stall)
    std::int64_t total_ns = 0;      // all waiting between the first and the last sample

private:
    std::int64_t read() const {
        if (_fd < 0) { return -1; }
        char buf[128] = {};
        if (::pread(_fd, buf, sizeof buf - 1, 0) <= 0) { return -1; }
        unsigned long long run = 0, wait = 0;
        if (std::sscanf(buf, "%llu %llu", &run, &wait) != 2) { return -1; }
        return static_cast<std::int64_t>(wait);
    }
    int _fd = -1;
    int _tid = -1;
    std::int64_t _last = -1;
    std::thread _sentinel;
    bool _sentinel_started = false;
    std::atomic<bool> _stop{false};
};

// Send one PFC frame (class_enable, same quanta for each enabled priority).
inline bool send_pfc(rte_mempool* pool, std::uint16_t port, const mac_addr& src, std::uint8_t cev,
                     std::uint16_t quanta) {
    std::array<std::uint16_t, 8> q{};
    for (int i = 0; i < 8; ++i) { q[i] = (cev >> i & 1u) ? quanta : 0; }
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) { return false; }
    auto* d = reinterpret_cast<std::byte*>(rte_pktmbuf_append(m, 60));
    if (d == nullptr) {
        rte_pktmbuf_free(m);
        return false;
    }
    build_pfc(d, src, cev, q);
    if (rte_eth_tx_burst(port, 0, &m, 1) != 1) {
        rte_pktmbuf_free(m);
        return false;
    }
    return true;
}

}  // namespace rocelab::test
