// eal.hpp - EAL start-up and the TSC clock (the production clock_source).
//
// eal_init() wraps rte_eal_init(): it returns how many argv entries EAL took
// (the application's own options follow "--"), or a one-line error.
// tsc_clock converts rte_rdtsc() to nanos with a 128-bit multiply; it is the
// only clock the data path uses in production. Protocol logic never calls it:
// the pipeline reads it once per loop and passes `now` down.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "core/clock.hpp"
#include "core/units.hpp"

namespace rocelab::dpdk {

std::variant<int, std::string> eal_init(int argc, char** argv);
// rte_eal_cleanup(), then (primary process) remove the EAL runtime directory.
void eal_cleanup() noexcept;
// Holds the EAL interrupt thread for the rest of the process: a callback of
// our own interrupt source that never returns. The thread first finishes the callback it is
// in (a memif peer's disconnect: link down first, then its regions and
// control channel freed), then handles nothing more, so stopping and closing
// ports cannot race it (memif's stop and close disconnect too: the same
// memory freed twice, "EAL: Error: Invalid memory"), and nothing reads
// DPDK memory after rte_eal_cleanup() unmaps it. Call it once the workers
// have stopped, when no further link events are wanted. False if the thread
// did not get there within `timeout_ms` (it is then parked later, or never).
bool park_interrupt_thread(unsigned timeout_ms) noexcept;
// Process teardown: after eal_exiting(), what is freed before
// eal_cleanup() unmaps EAL's memory may be left to it. rte_free zero-fills
// what it frees (so that free memory stays clean), so freeing an rte_lpm
// writes its 64 MiB first level, untouched until then: a fabric of 200 L3
// switches wrote 12.8 GB and took a minute at exit. dpdk::lpm leaves its
// tables to eal_cleanup() once this is set. Control path only; call it
// after the last lookup, before the teardown.
void eal_exiting() noexcept;
bool eal_is_exiting() noexcept;
// True when EAL runs without hugepages (secondary processes cannot attach).
bool eal_no_huge() noexcept;

// The CPUs for a thread of our own beside the main lcore (k = 1, 2, ...),
// e.g. a virtual-time partition's worker. EAL pins the main thread to its
// lcore's CPU, and a thread it starts inherits that: without this, every
// such thread would share the main lcore's CPU with it. The rule:
//   1. the k-th EAL worker lcore's CPUs, when `-l`/`--lcores` names one
//      (so `--lcores '0@0,1@0'` asks for one CPU, and gets it);
//   2. otherwise a CPU the process could use before EAL started that is not
//      the main lcore's, round-robin over them;
//   3. otherwise (one CPU) the main lcore's CPUs.
// Returns the CPU list as text ("1", "0-1") in `where` when given.
// Call pin_extra_thread(k) on the new thread itself, after
// rte_thread_register(); false if the kernel refused the affinity.
bool pin_extra_thread(unsigned k, std::string* where = nullptr) noexcept;
// The CPU list extra thread k would get, without pinning anything.
std::string extra_thread_cpus(unsigned k);

class tsc_clock {
public:
    tsc_clock() noexcept;
    nanos now() const noexcept {
        const std::uint64_t c = read_tsc() - _base;
        return nanos{static_cast<std::int64_t>((static_cast<unsigned __int128>(c) * _mult) >> 32)};
    }
    std::uint64_t hz() const noexcept { return _hz; }
    static std::uint64_t read_tsc() noexcept { return __builtin_ia32_rdtsc(); }
    // Cycles -> nanos for a duration (e.g. busy-cycle accounting).
    nanos to_nanos(std::uint64_t cycles) const noexcept {
        return nanos{static_cast<std::int64_t>((static_cast<unsigned __int128>(cycles) * _mult) >> 32)};
    }

private:
    std::uint64_t _hz;
    std::uint64_t _base;
    std::uint64_t _mult;  // (1e9 << 32) / hz
};
static_assert(clock_source<tsc_clock>);

}  // namespace rocelab::dpdk
