// session.cpp - EAL, mbuf pool, ports and capture of one app run (app_runtime.hpp).
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <chrono>
#include <variant>

#include "dpdk/pool.hpp"
#include "runtime/app_runtime.hpp"
#include "runtime/unmap_guard.hpp"

namespace rocelab::runtime {

run_clock::run_clock()
    : wall_ns_at_zero(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count() -
                      tsc.now().v) {}

std::string joined_command_line(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        if (i != 0) { s += ' '; }
        s += argv[i];
    }
    return s;
}

void session::init_eal(int eal_argc, char** argv) {
    [[maybe_unused]] volatile bool guard = unmap_guard_linked();  // quiescence.hpp
    auto r = dpdk::eal_init(eal_argc, argv);
    if (auto* e = std::get_if<std::string>(&r)) { die(_prog, 2, *e); }
    _eal = true;
}

void session::fail(int code, const std::string& msg) {
    if (_eal && !_open.empty()) { dpdk::park_interrupt_thread(1000); }
    for (std::uint16_t id : _open) { dpdk::port_close(id); }
    _open.clear();
    if (_eal) { dpdk::eal_cleanup(); }
    die(_prog, code, msg);
}

void session::create_pool(const pool_spec& spec) {
    _pool = dpdk::pktmbuf_pool(spec.name, spec.mbufs, 256, spec.data_room, static_cast<int>(rte_socket_id()));
    if (_pool == nullptr) {
        fail(1, "cannot create mbuf pool of " + std::to_string(spec.mbufs) + " mbufs: " + rte_strerror(rte_errno) +
                    " " + spec.hint);
    }
    _pool_size = spec.mbufs;
}

std::string session::pool_ops() const {
    return _pool != nullptr ? rte_mempool_get_ops(_pool->ops_index)->name : "";
}

void session::open_ports(std::vector<port_request> ports) {
    _infos.resize(ports.size());
    for (std::size_t i = 0; i < ports.size(); ++i) {
        ports[i].params.pool = _pool;
        if (auto e = dpdk::port_open(ports[i].params, _infos[i]); !e.empty()) { fail(1, ports[i].label + ": " + e); }
        _open.push_back(ports[i].params.port_id);
    }
}

void session::open_capture(const std::string& dir, const std::vector<std::string>& port_names,
                           std::uint32_t snaplen, const run_clock& clock, const char* tag) {
    auto c = dpdk::capture::open(dir, port_names, snaplen, clock.wall_ns_at_zero, tag);
    if (auto* e = std::get_if<std::string>(&c)) { fail(2, *e); }
    _capture = std::move(std::get<0>(c));
}

std::vector<ethdev_stats> session::stop_ports() {
    // The workers have stopped: no link event matters any more. The EAL
    // interrupt thread finishes what it is doing (a memif peer's disconnect)
    // and is held, so stop and close do not race it (dpdk::park_interrupt_thread).
    if (!_open.empty()) { dpdk::park_interrupt_thread(1000); }
    std::vector<ethdev_stats> out;
    for (std::uint16_t id : _open) {
        rte_eth_stats es{};
        rte_eth_dev_stop(id);
        rte_eth_stats_get(id, &es);
        out.push_back({es.ipackets, es.opackets, es.imissed, es.ierrors, es.oerrors, es.rx_nombuf});
    }
    return out;
}

void session::close_ports() noexcept {
    for (std::uint16_t id : _open) { rte_eth_dev_close(id); }
    _open.clear();
}

void session::flush_capture() {
    if (_capture) { _capture->flush(); }
}

std::uint64_t session::pool_in_use() const noexcept {
    return _pool != nullptr ? rte_mempool_in_use_count(_pool) : 0;
}

void session::cleanup() noexcept {
    _capture.reset();
    rte_mempool_free(_pool);
    _pool = nullptr;
    if (_eal) { dpdk::eal_cleanup(); }
    _eal = false;
}

}  // namespace rocelab::runtime
