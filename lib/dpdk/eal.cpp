#include "dpdk/eal.hpp"
#include "dpdk/tsan.hpp"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace rocelab::dpdk {

std::variant<int, std::string> eal_init(int argc, char** argv) {
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

void eal_cleanup() noexcept {
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
