// quiescence.hpp's grace periods: synchronize() returns only once every
// online reader has passed a quiescent state begun after the call - the
// guarantee unmap_guard.cpp's munmap() relies on (a burst that read a port's
// "connected" flag before it was cleared has finished) - never waits for
// readers that are offline or for itself, and gives up after its timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/quiescence.hpp"
#include "runtime/worker_loop.hpp"

namespace rocelab::runtime {
namespace {

using namespace std::chrono_literals;

TEST(Quiescence, NoReadersNoWait) {
    EXPECT_EQ(quiescence::online_readers(), 0u);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(quiescence::synchronize(1s));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
}

TEST(Quiescence, ReaderGoesOfflineWithItsScope) {
    {
        quiescence::reader r;
        EXPECT_EQ(quiescence::online_readers(), 1u);
        EXPECT_TRUE(quiescence::is_reader());
    }
    EXPECT_EQ(quiescence::online_readers(), 0u);
    EXPECT_FALSE(quiescence::is_reader());
}

// The writer clears a flag while the reader is inside a "burst" that read
// it set (the reader sleeps there, as a preempted lcore would): synchronize()
// must not return before that burst is over.
TEST(Quiescence, WaitsForTheBurstInProgress) {
    std::atomic<bool> connected{true};
    std::atomic<bool> inside{false};
    std::atomic<bool> stop{false};
    std::atomic<int> bursts_after_clear{0};
    std::thread worker([&] {
        quiescence::reader qs;
        while (!stop.load()) {
            qs.quiescent();
            if (connected.load(std::memory_order_relaxed)) {
                inside.store(true);
                std::this_thread::sleep_for(20ms);
                inside.store(false);
            } else {
                bursts_after_clear.fetch_add(1);
                std::this_thread::yield();
            }
        }
    });
    while (!inside.load()) { std::this_thread::yield(); }
    connected.store(false, std::memory_order_relaxed);
    EXPECT_TRUE(quiescence::synchronize(5s));
    EXPECT_FALSE(inside.load()) << "synchronize() returned during a burst that saw the port connected";
    stop.store(true);
    worker.join();
    EXPECT_GT(bursts_after_clear.load(), 0);
}

TEST(Quiescence, ReaderThatStopsPollingTimesOut) {
    std::atomic<bool> registered{false};
    std::atomic<bool> release{false};
    std::thread stuck([&] {
        quiescence::reader qs;
        registered.store(true);
        while (!release.load()) { std::this_thread::sleep_for(1ms); }  // never quiescent
    });
    while (!registered.load()) { std::this_thread::yield(); }
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(quiescence::synchronize(30ms));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 30ms);
    release.store(true);
    stuck.join();
    EXPECT_TRUE(quiescence::synchronize(1s));  // offline now
}

TEST(Quiescence, ReaderDoesNotWaitForItself) {
    quiescence::reader qs;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(quiescence::synchronize(1s));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
}

// run_worker() is a reader while it loops.
struct probe_pipe {
    worker_ctl<probe_pipe>* ctl = nullptr;
    bool reader_inside = false;
    unsigned online_inside = 0;
    std::uint64_t busy_cycles = 0;
    std::uint64_t loops = 0;
    std::uint32_t poll(nanos) {
        reader_inside = quiescence::is_reader();
        online_inside = quiescence::online_readers();
        ctl->stop.store(true);
        return 0;
    }
};

TEST(Quiescence, WorkerLoopIsAReader) {
    probe_pipe p;
    worker_ctl<probe_pipe> ctl;
    ctl.pipe = &p;
    p.ctl = &ctl;
    manual_clock clock;
    run_worker(ctl, clock);
    EXPECT_TRUE(p.reader_inside);
    EXPECT_EQ(p.online_inside, 1u);
    EXPECT_EQ(quiescence::online_readers(), 0u);
}

}  // namespace
}  // namespace rocelab::runtime
