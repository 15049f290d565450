// rte_intr_instance_alloc and its setters are "experimental" in 22.11 (the
// interrupt handle became opaque in 21.11); they are the only way to register
// an interrupt source.
#define ALLOW_EXPERIMENTAL_API 1
#include "dpdk/eal.hpp"
#include "dpdk/tsan.hpp"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>

#include <pthread.h>
#include <sched.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace rocelab::dpdk {

namespace {
// The CPUs the process could use before EAL pinned its main thread.
cpu_set_t g_pre_eal_cpus;
bool g_pre_eal_known = false;
}  // namespace

std::variant<int, std::string> eal_init(int argc, char** argv) {
    CPU_ZERO(&g_pre_eal_cpus);
    g_pre_eal_known = sched_getaffinity(0, sizeof g_pre_eal_cpus, &g_pre_eal_cpus) == 0;
    int ret = 0;
    if constexpr (tsan_build) {
        // ThreadSanitizer builds (tools/tsan.sh) run EAL without its
        // multi-process channel: its rte_mp_handle thread is cancelled at
        // exit inside a libc call made from uninstrumented DPDK, which TSan
        // (ignore_noninstrumented_modules) reports as a thread finishing
        // with ignores enabled. Nothing multi-process is tested under TSan.
        std::vector<char*> args(argv, argv + argc);
        static char no_shconf[] = "--no-shconf";
        args.insert(args.begin() + 1, no_shconf);
        ret = rte_eal_init(argc + 1, args.data());
        if (ret > 0) { --ret; }
    } else {
        ret = rte_eal_init(argc, argv);
    }
    if (ret < 0) {
        return std::string("EAL initialisation failed: ") + rte_strerror(rte_errno) +
               " (check the EAL options before '--'; on a machine without hugepages use --no-huge -m 1024)";
    }
    return ret;
}

namespace {
// The parked state lives as long as the process: the parked callback never
// returns.
std::atomic<bool> g_parked{false};
std::atomic<bool> g_park_requested{false};
rte_intr_handle* g_park_handle = nullptr;  // lives as long as the process (and stays reachable)

void hold_interrupt_thread(void*) {
    g_parked.store(true, std::memory_order_release);
    for (;;) { ::pause(); }  // until the process exits
}

// An interrupt source of our own (an eventfd made readable at once) rather
// than an alarm: rte_eal_cleanup() unregisters the alarm source and waits
// while its callback runs, which would be forever. The handle is a private
// instance (libc memory), so it outlives rte_eal_cleanup()'s unmapping.
bool request_park() noexcept {
    const int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd < 0) { return false; }
    rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
    if (h == nullptr || rte_intr_fd_set(h, efd) != 0 || rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) != 0 ||
        rte_intr_callback_register(h, hold_interrupt_thread, nullptr) != 0) {
        rte_intr_instance_free(h);
        ::close(efd);
        return false;
    }
    g_park_handle = h;
    const std::uint64_t one = 1;
    return ::write(efd, &one, sizeof one) == static_cast<ssize_t>(sizeof one);
}
}  // namespace

bool park_interrupt_thread(unsigned timeout_ms) noexcept {
    if (g_parked.load(std::memory_order_acquire)) { return true; }
    if (!g_park_requested.exchange(true) && !request_park()) {
        g_park_requested.store(false);
        return false;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!g_parked.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() >= until) { return false; }
        rte_delay_us_sleep(100);
    }
    return true;
}

namespace {
std::atomic<bool> g_exiting{false};
}  // namespace

void eal_exiting() noexcept { g_exiting.store(true); }
bool eal_is_exiting() noexcept { return g_exiting.load(); }

void eal_cleanup() noexcept {
    // After rte_eal_cleanup() DPDK's memory is unmapped, yet DPDK 22.11 leaves
    // the interrupt thread running: an event arriving then (a memif peer
    // leaving at the same moment) made it read a source's handle there and
    // segfault. Hold it first.
    park_interrupt_thread(1000);
    // EAL leaves its runtime directory (/var/run/dpdk/<file-prefix>: config,
    // fbarrays, mp and telemetry sockets) behind; every run has its own
    // prefix, so a primary process removes it once nothing can attach.
    const std::string dir = rte_eal_get_runtime_dir();
    const bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
    rte_eal_cleanup();
    if (primary && !dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);  // best effort: nothing to report at exit
    }
}

bool eal_no_huge() noexcept { return rte_eal_has_hugepages() == 0; }

namespace {
cpu_set_t extra_thread_set(unsigned k) noexcept {
    const unsigned main_lcore = rte_get_main_lcore();
    const rte_cpuset_t main_set = rte_lcore_cpuset(main_lcore);
    // 1. the k-th worker lcore EAL was given
    unsigned nth = 0;
    for (unsigned lc = 0; lc < RTE_MAX_LCORE; ++lc) {
        if (lc == main_lcore || !rte_lcore_is_enabled(lc)) { continue; }
        if (++nth == k) { return rte_lcore_cpuset(lc); }
    }
    // 2. a CPU of the process's own that is not the main lcore's
    unsigned n_free = 0;
    for (int c = 0; g_pre_eal_known && c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &g_pre_eal_cpus) && !CPU_ISSET(c, &main_set)) { ++n_free; }
    }
    if (n_free == 0 || k == 0) { return main_set; }  // 3. one CPU: share it
    unsigned pick = (k - 1) % n_free;
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &g_pre_eal_cpus) && !CPU_ISSET(c, &main_set) && pick-- == 0) {
            CPU_SET(c, &s);
            break;
        }
    }
    return s;
}

std::string cpu_list(const cpu_set_t& s) {
    std::string out;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &s)) { continue; }
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &s)) { ++e; }
        if (!out.empty()) { out += ','; }
        out += std::to_string(c);
        if (e > c) { out += '-' + std::to_string(e); }
        c = e;
    }
    return out;
}
}  // namespace

std::string extra_thread_cpus(unsigned k) { return cpu_list(extra_thread_set(k)); }

bool pin_extra_thread(unsigned k, std::string* where) noexcept {
    cpu_set_t s = extra_thread_set(k);
    if (where != nullptr) {
        try {
            *where = cpu_list(s);
        } catch (...) {  // out of memory for a short string: the pinning still matters
        }
    }
    // rte_thread_set_affinity also records the set as the thread's lcore
    // cpuset (what rte_thread_get_affinity and EAL's logs report).
    return rte_thread_set_affinity(&s) == 0;
}

namespace {
std::uint64_t checked_tsc_hz() noexcept {
    const std::uint64_t hz = rte_get_tsc_hz();
    if (hz == 0) {
        // Only before rte_eal_init(): a programming error, not a run-time condition.
        std::fprintf(stderr, "rocelab: tsc_clock used before rte_eal_init()\n");
        std::abort();
    }
    return hz;
}
}  // namespace

tsc_clock::tsc_clock() noexcept
    : _hz(checked_tsc_hz()),
      _base(read_tsc()),
      _mult(static_cast<std::uint64_t>((static_cast<unsigned __int128>(1000000000ULL) << 32) / _hz)) {}

}  // namespace rocelab::dpdk
