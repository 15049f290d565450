// Unit tests for the parallel engine's synchronisation seam
// (sim/sync_transport.hpp) and its distributed mode (sim/parallel.hpp,
// "Over ranks"), on a deterministic toy model (toy_ring.hpp): the trace
// hash of one engine equals that of the parallel engine on 1-3 threads, and
// over 1-3 ranks of the in-process transport (threads standing for
// processes). The MPI runs are mpi_sync_test.cpp (mpirun, meson test
// sim_mpi_np2 / sim_mpi_np3).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sim/parallel.hpp"
#include "sim/sync_transport.hpp"
#include "toy_ring.hpp"

namespace rocelab::sim {
namespace {

using namespace rocelab::literals;
using toy::result;

constexpr std::uint32_t toy_nodes = 7;
constexpr nanos toy_end{500'000};

const result& one_engine() {
    static const result r = toy::run_one(toy_nodes, toy_end);
    return r;
}

// Every rank of an in-process hub on a thread of its own; rank 0's result.
result run_ranks(const std::vector<unsigned>& part_of, const std::vector<unsigned>& part_rank, unsigned ranks,
                 unsigned threads) {
    inproc_hub hub(ranks);
    std::vector<result> res(ranks);
    std::vector<std::string> err(ranks);
    std::vector<std::thread> ts;
    for (unsigned r = 0; r < ranks; ++r) {
        ts.emplace_back([&hub, &res, &err, &part_of, &part_rank, r, threads] {
            try {
                res[r] = toy::run_rank(hub.transport(r), toy_nodes, toy_end, part_of, part_rank, threads);
            } catch (const std::exception& e) {
                err[r] = e.what();
            }
        });
    }
    for (auto& t : ts) { t.join(); }
    for (unsigned r = 0; r < ranks; ++r) { EXPECT_EQ(err[r], "") << "rank " << r; }
    for (unsigned r = 1; r < ranks; ++r) { EXPECT_EQ(res[r].windows, res[0].windows) << "rank " << r; }
    for (unsigned r = 0; r < ranks; ++r) { EXPECT_EQ(res[r].late, 0u) << "rank " << r; }
    return res[0];
}

TEST(sim_toy, the_model_is_busy_and_replays) {
    const result& a = one_engine();
    EXPECT_GT(a.events, 15'000u);
    EXPECT_GT(a.credits, 5'000u);
    const result b = toy::run_one(toy_nodes, toy_end);
    EXPECT_EQ(a.hash, b.hash);
    // a different model gives a different hash (the hash sees the trace)
    EXPECT_NE(toy::run_one(toy_nodes, nanos{toy_end.v - 1000}).hash, a.hash);
}

TEST(sim_toy, threads_give_the_one_engine_trace) {
    const result& one = one_engine();
    const std::vector<std::vector<unsigned>> layouts{
        {0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0}, {0, 1, 2, 0, 1, 2, 0}, {0, 0, 1, 1, 2, 2, 3}};
    for (const auto& part_of : layouts) {
        for (unsigned threads : {1u, 2u, 3u}) {
            const result r = toy::run_parallel(toy_nodes, toy_end, part_of, threads);
            EXPECT_EQ(r.hash, one.hash) << "layout " << part_of[1] << part_of[2] << part_of[6] << ", " << threads
                                        << " threads";
            EXPECT_EQ(r.events, one.events);
            EXPECT_EQ(r.late, 0u);
        }
    }
}

// Where the threads' time goes (parallel_engine::thread_times): one entry
// per thread; with one thread nobody waits; every thread's busy and wait
// time lie inside the span of the run_until calls (they are taken at the
// barrier's edges, so they cannot add up to more than its wall time);
// and measuring them leaves the trace as it was.
TEST(sim_toy, thread_times_lie_within_the_run_and_change_nothing) {
    const result& one = one_engine();
    for (unsigned threads : {1u, 2u}) {
        toy::model m(toy_nodes);
        const std::vector<unsigned> part_of{0, 1, 0, 1, 0, 1, 0};
        toy::tparallel pe(2);
        pe.set_lookahead(toy::build(m, pe, part_of));
        // Several runs, as the fabric's control loop does; a worker's wait
        // runs on between them, so the span is from the first to the last.
        const auto a = std::chrono::steady_clock::now();
        for (nanos t{100'000}; t <= toy_end; t.v += 100'000) { pe.run_until(t, threads); }
        const std::int64_t wall =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - a).count();
        EXPECT_EQ(m.hash(), one.hash) << threads << " threads";
        const std::vector<thread_time> tt = pe.thread_times();
        ASSERT_EQ(tt.size(), threads);
        EXPECT_GT(pe.counters().windows, 100u);
        for (unsigned k = 0; k < threads; ++k) {
            EXPECT_GT(tt[k].busy_ns, 0) << "thread " << k;
            EXPECT_GE(tt[k].wait_ns, 0) << "thread " << k;
            EXPECT_LE(tt[k].busy_ns + tt[k].wait_ns, wall) << "thread " << k << " of " << threads;
        }
        if (threads == 1) { EXPECT_EQ(tt[0].wait_ns, 0); }
    }
}

// The seam with one rank: the distributed mode on solo_transport runs every
// partition itself, as the one-process mode does.
TEST(sim_toy, one_rank_through_the_seam_gives_the_one_engine_trace) {
    const result& one = one_engine();
    solo_transport solo;
    for (unsigned threads : {1u, 2u}) {
        const result r = toy::run_rank(solo, toy_nodes, toy_end, {0, 1, 2, 0, 1, 2, 0}, {0, 0, 0}, threads);
        EXPECT_EQ(r.hash, one.hash) << threads << " threads";
        EXPECT_EQ(r.events, one.events);
        EXPECT_EQ(r.credits, one.credits);
        EXPECT_GT(r.windows, 100u);
    }
}

TEST(sim_toy, ranks_of_the_in_process_transport_give_the_one_engine_trace) {
    const result& one = one_engine();
    struct run_case {
        std::vector<unsigned> part_of, part_rank;
        unsigned ranks, threads;
    };
    const std::vector<run_case> cases{
        {{0, 1, 0, 1, 0, 1, 0}, {0, 1}, 2, 1},
        {{0, 1, 2, 3, 0, 1, 2}, {0, 1, 0, 1}, 2, 2},        // two partitions per rank, two threads each
        {{0, 1, 2, 0, 1, 2, 0}, {0, 1, 2}, 3, 1},
        {{0, 0, 1, 1, 2, 2, 3}, {2, 0, 1, 0}, 3, 1},        // ranks not in partition order
        {{0, 1, 0, 1, 0, 1, 0}, {0, 2}, 3, 1},              // rank 1 runs no partition
        {{0, 0, 0, 1, 1, 1, 1}, {1, 1}, 2, 2},              // rank 0 runs none, gathers
    };
    for (const auto& c : cases) {
        const result r = run_ranks(c.part_of, c.part_rank, c.ranks, c.threads);
        EXPECT_EQ(r.hash, one.hash) << c.ranks << " ranks, " << c.threads << " threads, rank of partition 0: "
                                    << c.part_rank[0];
        EXPECT_EQ(r.events, one.events);
        EXPECT_EQ(r.credits, one.credits);
    }
}

// A cross link between ranks needs a propagation delay (the lookahead):
// refused when it is added, with the link named. On one rank, or with
// threads, the same link is accepted as before.
TEST(sim_toy, a_zero_delay_link_between_ranks_is_refused) {
    toy::model m(4, 3, /*zero_delay_link0=*/true);
    inproc_hub hub(2);
    toy::tparallel pe({0, 1}, hub.transport(0));
    try {
        (void)toy::build(m, pe, {0, 1, 0, 1});  // link 0: node 0 (rank 0) -> node 1 (rank 1), 0 ns
        FAIL() << "a zero-delay link between ranks was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("cross link 0 (partition 0 on rank 0 -> partition 1 on rank 1) has no "
                                             "propagation delay"),
                  std::string::npos)
            << e.what();
    }
    toy::model m1(4, 3, true);
    toy::tparallel same_rank({0, 0}, hub.transport(0));
    EXPECT_NO_THROW((void)toy::build(m1, same_rank, {0, 1, 0, 1}));
    toy::model m2(4, 3, true);
    toy::tparallel threads(2);
    EXPECT_NO_THROW((void)toy::build(m2, threads, {0, 1, 0, 1}));
}

// A transport that loses the records of the first windows: the run over
// ranks no longer equals the one-engine run (the comparisons above can
// fail).
struct lossy_transport final : sync_transport {
    sync_transport& t;
    unsigned seen = 0;
    explicit lossy_transport(sync_transport& inner) : t(inner) {}
    unsigned rank() const noexcept override { return t.rank(); }
    unsigned ranks() const noexcept override { return t.ranks(); }
    nanos min_next(nanos local) override { return t.min_next(local); }
    void exchange(const std::vector<std::vector<std::byte>>& send, std::vector<std::vector<std::byte>>& recv) override {
        t.exchange(send, recv);
        if (++seen >= 10 && seen < 13) {  // windows 10-12 (the run has hundreds)
            for (auto& b : recv) { b.clear(); }
        }
    }
};

TEST(sim_toy, a_transport_that_loses_records_is_seen) {
    const result& one = one_engine();
    inproc_hub hub(2);
    std::vector<result> res(2);
    std::vector<std::string> err(2);
    std::vector<std::thread> ts;
    for (unsigned r = 0; r < 2; ++r) {
        ts.emplace_back([&hub, &res, &err, r] {
            lossy_transport lt(hub.transport(r));
            try {
                res[r] = toy::run_rank(lt, toy_nodes, toy_end, {0, 1, 0, 1, 0, 1, 0}, {0, 1}, 1);
            } catch (const std::exception& e) {
                err[r] = e.what();
            }
        });
    }
    for (auto& t : ts) { t.join(); }
    EXPECT_EQ(err[0], "");
    EXPECT_EQ(err[1], "");
    EXPECT_NE(res[0].hash, one.hash);
}

}  // namespace
}  // namespace rocelab::sim
