// thread_pin_test.cpp - dpdk::pin_extra_thread: a thread of our own beside
// the main lcore (a virtual-time partition's worker) gets a CPU of its own,
// not the main lcore's that it inherits. Without it, `rocelab-fabric
// --threads 2` ran both threads on one CPU, at 0.55-0.66x one thread.
//
// EAL starts once per process, so the lcore options come from the
// environment (ROCELAB_PIN_EAL_LCORES, default "-l 0"); meson runs this
// binary once with "-l 0" and once with "--lcores 0@0,1@0".
// The oracle is the kernel's view: sched_getaffinity of the new thread.
#include <gtest/gtest.h>
#include <rte_lcore.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dpdk/eal.hpp"

namespace {

cpu_set_t g_before;       // the process's CPUs before EAL
std::string g_lcores;     // the EAL lcore options used

std::vector<int> cpus_of(const cpu_set_t& s) {
    std::vector<int> v;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &s)) { v.push_back(c); }
    }
    return v;
}

cpu_set_t self_affinity() {
    cpu_set_t s;
    CPU_ZERO(&s);
    EXPECT_EQ(sched_getaffinity(0, sizeof s, &s), 0);
    return s;
}

// Starts a thread that registers with EAL and pins itself as extra thread
// k; returns the CPUs the kernel then allows it, and what pin said.
std::vector<int> pinned_thread_cpus(unsigned k, std::string* where, bool* ok) {
    std::vector<int> got;
    std::thread t([&] {
        (void)rte_thread_register();
        *ok = rocelab::dpdk::pin_extra_thread(k, where);
        got = cpus_of(self_affinity());
        rte_thread_unregister();
    });
    t.join();
    return got;
}

std::string list(const std::vector<int>& v) {
    std::ostringstream o;
    for (std::size_t i = 0; i < v.size(); ++i) { o << (i ? "," : "") << v[i]; }
    return o.str();
}

TEST(thread_pin, main_lcore_is_pinned_by_eal) {
    // The premise: EAL pins the main thread to lcore 0's CPU (CPU 0), and a
    // thread it starts inherits exactly that.
    EXPECT_EQ(cpus_of(self_affinity()), std::vector<int>{0});
    std::vector<int> inherited;
    std::thread t([&] { inherited = cpus_of(self_affinity()); });
    t.join();
    EXPECT_EQ(inherited, std::vector<int>{0});
}

TEST(thread_pin, extra_threads_get_cpus_of_their_own) {
    const std::vector<int> before = cpus_of(g_before);
    const std::vector<int> main_cpus = cpus_of(self_affinity());
    for (unsigned k = 1; k <= 3; ++k) {
        std::string where;
        bool ok = false;
        const std::vector<int> got = pinned_thread_cpus(k, &where, &ok);
        SCOPED_TRACE("extra thread " + std::to_string(k) + ", EAL " + g_lcores + ", process CPUs " + list(before));
        EXPECT_TRUE(ok);
        EXPECT_EQ(where, list(got));                       // what it says is what the kernel has
        EXPECT_EQ(rocelab::dpdk::extra_thread_cpus(k), where);
        ASSERT_EQ(got.size(), 1u);
        if (k == 1 && g_lcores.find("1@0") != std::string::npos) {
            // --lcores 0@0,1@0: the user put lcore 1 on CPU 0; it is honoured
            // (threads past the lcores given fall back to the rule below).
            EXPECT_EQ(got, std::vector<int>{0}) << "lcore 1 was given CPU 0";
            continue;
        }
        std::vector<int> others;
        for (int c : before) {
            if (c != 0) { others.push_back(c); }
        }
        if (others.empty()) {
            EXPECT_EQ(got, main_cpus) << "one CPU: the extra thread shares it";
        } else {
            // Round-robin over the process's CPUs that are not the main lcore's.
            EXPECT_EQ(got.front(), others[(k - 1) % others.size()]);
            EXPECT_NE(got.front(), 0);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    CPU_ZERO(&g_before);
    if (sched_getaffinity(0, sizeof g_before, &g_before) != 0) { return 1; }
    const char* env = std::getenv("ROCELAB_PIN_EAL_LCORES");
    g_lcores = env != nullptr ? env : "-l 0";
    std::string prefix = "--file-prefix=threadpin" + std::to_string(::getpid());
    std::vector<std::string> args = {"thread_pin_test", "--no-huge", "-m", "256", "--no-pci"};
    std::istringstream words(g_lcores);
    for (std::string w; words >> w;) { args.push_back(w); }
    args.insert(args.end(), {prefix, "--log-level=lib.eal:error", "--no-telemetry"});
    std::vector<char*> eal_argv;
    for (auto& a : args) { eal_argv.push_back(a.data()); }
    auto r = rocelab::dpdk::eal_init(static_cast<int>(eal_argv.size()), eal_argv.data());
    if (!std::holds_alternative<int>(r)) {
        std::fprintf(stderr, "EAL: %s\n", std::get<std::string>(r).c_str());
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rocelab::dpdk::eal_cleanup();
    return rc;
}
