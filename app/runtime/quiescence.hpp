// quiescence.hpp - grace periods between the worker lcores and the threads
// that free what the workers may be reading (quiescent-state-based
// reclamation, the scheme of DPDK's lib/rcu and the kernel's RCU).
//
// Why: DPDK 22.11's memif PMD handles a peer leaving in the EAL interrupt
// thread. memif_disconnect() clears the port's "connected" flag, then
// unmaps the shared regions at once, with no synchronisation with a worker
// that checked the flag a moment earlier and is still inside
// rte_eth_rx_burst()/tx_burst() on that port. On a loaded 2-core machine
// the worker can be preempted right there, and it resumes into unmapped
// memory (rocelab-switch segfaulted in librte_net_memif when a generator
// left). unmap_guard.cpp makes every munmap() called from a thread that is
// not a worker wait for a grace period first: by then every worker has
// finished the burst it was in, and any later burst sees the flag cleared.
//
// Readers (the workers' poll loops, runtime/worker_loop.hpp) report a
// quiescent state between polls: one load of a read-mostly shared word and
// one store to the worker's own cache line. A writer's synchronize() bumps
// the token and waits until every online reader has seen it (or gone
// offline). It never blocks a reader. No DPDK: unit-tested as is.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rocelab::runtime::quiescence {

inline constexpr unsigned max_readers = 128;

struct alignas(64) reader_slot {
    std::atomic<std::uint64_t> seen{0};  // the token this reader last saw while quiescent
    std::atomic<bool> online{false};
    std::atomic<bool> used{false};
};

// Process-wide by nature: munmap() has no context argument.
inline std::atomic<std::uint64_t> token{1};
inline reader_slot slots[max_readers];
inline thread_local int this_slot = -1;

// True on a thread that is a registered reader (a worker in its loop).
inline bool is_reader() noexcept { return this_slot >= 0; }

// A worker's registration, for the lifetime of its poll loop. Taking a slot
// may fail (more than max_readers readers at once): that reader then goes
// unprotected, which is the behaviour without this guard.
class reader {
public:
    reader() noexcept {
        for (unsigned i = 0; i < max_readers; ++i) {
            bool expected = false;
            if (slots[i].used.compare_exchange_strong(expected, true)) {
                _slot = static_cast<int>(i);
                break;
            }
        }
        if (_slot < 0) { return; }
        reader_slot& s = slots[_slot];
        // Online before the first token read (both seq_cst): a writer that
        // saw this reader offline bumped the token before this reader read
        // it, so everything the writer did before the bump is visible to it.
        s.online.store(true);
        s.seen.store(token.load());
        this_slot = _slot;
    }
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;
    ~reader() {
        if (_slot < 0) { return; }
        this_slot = -1;
        slots[_slot].online.store(false, std::memory_order_release);
        slots[_slot].used.store(false, std::memory_order_release);
    }
    // Between two polls: nothing read before this call is still in use.
    void quiescent() noexcept {
        if (_slot >= 0) {
            slots[_slot].seen.store(token.load(std::memory_order_acquire), std::memory_order_release);
        }
    }

private:
    int _slot = -1;
};

// Waits until every online reader other than the caller has passed a
// quiescent state that began after this call. False if `timeout` elapsed
// first (a reader that stopped polling without going offline); the caller
// then goes ahead, as it would without the guard.
inline bool synchronize(std::chrono::nanoseconds timeout) noexcept {
    const std::uint64_t t = token.fetch_add(1) + 1;
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (unsigned i = 0; i < max_readers; ++i) {
        if (static_cast<int>(i) == this_slot) { continue; }
        reader_slot& s = slots[i];
        while (s.used.load(std::memory_order_acquire) && s.online.load(std::memory_order_acquire) &&
               s.seen.load(std::memory_order_acquire) < t) {
            if (std::chrono::steady_clock::now() >= until) { return false; }
            sched_yield();  // the reader may need this CPU to get there
        }
    }
    return true;
}

// How many readers are online (tests, diagnostics).
inline unsigned online_readers() noexcept {
    unsigned n = 0;
    for (const reader_slot& s : slots) { n += s.used.load() && s.online.load() ? 1 : 0; }
    return n;
}

}  // namespace rocelab::runtime::quiescence
