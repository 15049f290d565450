// worker.hpp - launches run_worker() (worker_loop.hpp) on a worker lcore.
//
// worker runs run_worker(ctl, <copy of clock>, <copy of hook>) on the first
// worker lcore (or on a thread beside the control loop when EAL was given
// one lcore) and joins it; the copies live on the worker's stack, and a copy
// of a clock has the same epoch as the original.
//
//   runtime::worker_ctl<sw::switch_pipeline> ctl;
//   ctl.pipe = pipe.get();
//   runtime::worker w(ctl, clock.tsc, "rocelab-switch", sampler);
//   ...  ctl.stop.store(true); w.join();
#pragma once

#include <rte_launch.h>
#include <rte_lcore.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>

#include "dpdk/tsan.hpp"
#include "core/clock.hpp"
#include "runtime/worker_loop.hpp"

namespace rocelab::runtime {

// The calling thread's run_delay so far (ns runnable but not running, the
// second field of /proc/thread-self/schedstat), or -1 when the kernel does
// not give it (no schedstats). Called by a worker as it starts and as it
// returns, never in its loop.
inline std::int64_t thread_run_delay_ns() noexcept {
    const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) { return -1; }
    char buf[96] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    unsigned long long run = 0, wait = 0;
    if (n <= 0 || std::sscanf(buf, "%llu %llu", &run, &wait) != 2) { return -1; }
    return static_cast<std::int64_t>(wait);
}

// Runs fn(arg) on the first worker lcore, or - when EAL was given a single
// lcore - on a thread beside the control loop (with a warning).
class lcore_launch {
public:
    // nth: which worker lcore (0 = the first after the main lcore).
    lcore_launch(int (*fn)(void*), void* arg, const char* prog, unsigned nth = 0) : _lcore(nth_worker_lcore(nth)) {
        if (_lcore < RTE_MAX_LCORE) {
            // EAL's launch and wait synchronise inside librte_eal (not
            // instrumented): say so to ThreadSanitizer (dpdk/tsan.hpp); the
            // launched function acquires/releases arg at its start and end.
            dpdk::tsan_release(arg);
            _arg = arg;
            rte_eal_remote_launch(fn, arg, _lcore);
        } else {
            std::fprintf(stderr, "%s: only one lcore given; the worker shares CPU with control "
                                 "(use -l 0-1 for a dedicated worker lcore)\n", prog);
            _thread = std::thread([fn, arg] { fn(arg); });
        }
    }
    static unsigned nth_worker_lcore(unsigned nth) {
        unsigned l = rte_get_next_lcore(-1, 1, 0);
        for (unsigned i = 0; i < nth && l < RTE_MAX_LCORE; ++i) { l = rte_get_next_lcore(l, 1, 0); }
        return l;
    }
    lcore_launch(const lcore_launch&) = delete;
    lcore_launch& operator=(const lcore_launch&) = delete;
    ~lcore_launch() { join(); }
    // Wait for fn to return (the caller has asked it to stop).
    void join() {
        if (_lcore < RTE_MAX_LCORE) {
            if (!_joined) {
                rte_eal_wait_lcore(_lcore);
                dpdk::tsan_acquire(_arg);
            }
        } else if (_thread.joinable()) {
            _thread.join();
        }
        _joined = true;
    }

private:
    unsigned _lcore;
    void* _arg = nullptr;
    std::thread _thread;
    bool _joined = false;
};

// run_worker(ctl, <copy of clock>, <copy of hook>) on a worker lcore.
class worker {
public:
    template <typename Pipeline, clock_source Clock, typename Hook = no_hook>
    worker(worker_ctl<Pipeline>& ctl, const Clock& clock, const char* prog, Hook hook = {}, unsigned nth = 0)
        : _job(std::make_unique<job<Pipeline, Clock, Hook>>(ctl, clock, hook)),
          _launch(&job<Pipeline, Clock, Hook>::entry, _job.get(), prog, nth) {}
    void join() { _launch.join(); }

private:
    struct job_base {
        virtual ~job_base() = default;
    };
    template <typename Pipeline, typename Clock, typename Hook>
    struct job final : job_base {
        job(worker_ctl<Pipeline>& c, const Clock& k, const Hook& h) : ctl(c), clock(k), hook(h) {}
        static int entry(void* arg) {
            dpdk::tsan_acquire(arg);
            auto* j = static_cast<job*>(arg);
            Clock clock = j->clock;
            Hook hook = j->hook;
            const std::int64_t d0 = thread_run_delay_ns();
            run_worker(j->ctl, clock, hook);
            const std::int64_t d1 = thread_run_delay_ns();
            j->ctl.run_delay_ns = d0 >= 0 && d1 >= d0 ? d1 - d0 : -1;
            dpdk::tsan_release(arg);
            return 0;
        }
        worker_ctl<Pipeline>& ctl;
        Clock clock;
        Hook hook;
    };
    std::unique_ptr<job_base> _job;
    lcore_launch _launch;
};

// A per-loop hook for a pipeline's worker view (switch_pipeline::worker_view):
// calls the pipeline's hook with the pipeline the view belongs to.
template <typename Hook>
struct view_hook {
    Hook h;
    template <typename View>
    void operator()(View& v, nanos now) noexcept { h(*v.pipe, now); }
};

// Pipelines that run on several worker lcores (one worker_view each).
template <typename Pipeline>
concept multi_worker = requires(Pipeline& p) {
    { p.worker_count() } -> std::convertible_to<std::size_t>;
    p.worker(std::size_t{0}).poll(nanos{0});
};

}  // namespace rocelab::runtime
