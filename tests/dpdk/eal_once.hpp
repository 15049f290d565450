// eal_once.hpp - EAL initialised once per DPDK test binary (no hugepages,
// no PCI, its own --file-prefix), cleaned up at exit.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "dpdk/eal.hpp"

namespace rocelab::test {

// lcores: EAL's -l list, or an --lcores map when it has '@' (several
// workers: "0@0,1@1,2@1" puts two workers on CPU 1).
inline void init_eal_once(const char* prog, const char* lcores = "0-1") {
    static bool done = false;
    if (done) { return; }
    done = true;
    std::string prefix = std::string("--file-prefix=") + prog + std::to_string(::getpid());
    const bool map = std::strchr(lcores, '@') != nullptr;
    std::vector<std::string> args = {prog, "--no-huge", "-m", "512", "--no-pci", map ? "--lcores" : "-l", lcores, prefix,
                                     "--log-level=lib.eal:error", "--no-telemetry"};
    std::vector<char*> argv;
    for (auto& a : args) { argv.push_back(a.data()); }
    auto r = dpdk::eal_init(static_cast<int>(argv.size()), argv.data());
    ASSERT_TRUE(std::holds_alternative<int>(r)) << std::get<std::string>(r);
    std::atexit([] { dpdk::eal_cleanup(); });  // leaves no /var/run/dpdk/<prefix> behind
}

}  // namespace rocelab::test
