// route_table_eal_env.cpp - initialises the DPDK EAL once for route_table_test
// (dpdk::lpm needs it for rte_lpm) and cleans it up at the end.
#include <rte_eal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dpdk/eal.hpp"

namespace {

class eal_environment : public ::testing::Environment {
public:
    void SetUp() override {
        const std::string prefix = "fwdtest" + std::to_string(::getpid());
        std::vector<std::string> args = {
            "fwd_test",    "--no-huge",     "-m", "256", "--no-pci", "--file-prefix", prefix,
            "--log-level", "lib.eal:error", "-l", "0"};
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        const int rc = rte_eal_init(static_cast<int>(args.size()), argv.data());
        ASSERT_GE(rc, 0) << "rte_eal_init failed";
        _up = true;
    }
    void TearDown() override {
        if (_up) {
            rocelab::dpdk::eal_cleanup();  // also removes the EAL runtime directory
            _up = false;
        }
    }

private:
    bool _up = false;
};

[[maybe_unused]] ::testing::Environment* const g_eal_env =
    ::testing::AddGlobalTestEnvironment(new eal_environment);

}  // namespace
