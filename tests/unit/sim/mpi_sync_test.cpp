// The parallel engine over MPI ranks (sim/mpi_transport.hpp): run under
// mpirun (meson test sim_mpi_np2 / sim_mpi_np3). Every rank runs its share
// of the toy model (toy_ring.hpp); rank 0 gathers the trace hash and
// compares it with the one-engine run it computes itself. Also: the
// transport's two collectives and their fused step, and the refusal of a zero-delay link
// between ranks. Only rank 0 prints gtest's report.
#include <mpi.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sim/mpi_transport.hpp"
#include "toy_ring.hpp"

namespace rocelab::sim {
namespace {

using namespace rocelab::literals;

constexpr std::uint32_t toy_nodes = 7;
constexpr nanos toy_end{500'000};

TEST(sim_mpi, min_next_exchange_and_exchange_min) {
    mpi_transport t;
    const unsigned me = t.rank(), n = t.ranks();
    ASSERT_GE(n, 2u) << "run under mpirun -np 2 or more";
    EXPECT_EQ(t.min_next(nanos{1000 - static_cast<std::int64_t>(me)}), nanos{1000 - static_cast<std::int64_t>(n - 1)});
    EXPECT_EQ(t.min_next(nanos::max()), nanos::max());
    // rank s sends rank r (s + 1) * 10 + r bytes of value s ^ r, none to rank s + 1
    std::vector<std::vector<std::byte>> send(n), recv(n);
    for (int round = 0; round < 3; ++round) {
        for (unsigned r = 0; r < n; ++r) {
            const std::size_t len = r == (me + 1) % n ? 0 : (me + 1) * 10 + r + static_cast<unsigned>(round);
            send[r].assign(len, static_cast<std::byte>(me ^ r));
        }
        // Rounds 0 and 2 through exchange; round 1 through exchange_min
        // (one message per rank pair, the minimum with it), whose minimum
        // is a different rank's each time.
        if (round == 1) {
            const nanos mine{5000 + static_cast<std::int64_t>((me + 1) % n)};
            EXPECT_EQ(t.exchange_min(send, recv, mine), nanos{5000});
        } else {
            t.exchange(send, recv);
        }
        for (unsigned s = 0; s < n; ++s) {
            const std::size_t want = s == me || me == (s + 1) % n ? 0 : (s + 1) * 10 + me + static_cast<unsigned>(round);
            EXPECT_EQ(recv[s].size(), want) << "from rank " << s;
            for (const std::byte b : recv[s]) { EXPECT_EQ(b, static_cast<std::byte>(s ^ me)); }
        }
    }
    // exchange_min back to back: a rank pair's messages are not mixed
    // across windows, and nothing to send still carries the minimum.
    for (auto& b : send) { b.clear(); }
    for (int w = 0; w < 4; ++w) {
        if (me != 0) { send[0].assign(static_cast<std::size_t>(w + 1), static_cast<std::byte>(w)); }
        EXPECT_EQ(t.exchange_min(send, recv, me == static_cast<unsigned>(w) % n ? nanos{w} : nanos::max()), nanos{w});
        for (unsigned s = 1; me == 0 && s < n; ++s) {
            ASSERT_EQ(recv[s].size(), static_cast<std::size_t>(w + 1));
            EXPECT_EQ(recv[s][0], static_cast<std::byte>(w));
        }
    }
    EXPECT_EQ(t.exchange_min(send, recv, nanos::max()), nanos::max());
}

TEST(sim_mpi, ranks_give_the_one_engine_trace) {
    mpi_transport t;
    const unsigned n = t.ranks();
    toy::result one;
    if (t.rank() == 0) { one = toy::run_one(toy_nodes, toy_end); }
    struct layout {
        std::vector<unsigned> part_of, part_rank;
    };
    std::vector<layout> layouts;
    {
        layout a;  // one partition per rank, nodes dealt round-robin
        for (std::uint32_t i = 0; i < toy_nodes; ++i) { a.part_of.push_back(i % n); }
        for (unsigned r = 0; r < n; ++r) { a.part_rank.push_back(r); }
        layouts.push_back(a);
        layout b;  // n + 1 contiguous partitions, the last on rank 0 with the first
        for (std::uint32_t i = 0; i < toy_nodes; ++i) { b.part_of.push_back(i * (n + 1) / toy_nodes); }
        for (unsigned p = 0; p <= n; ++p) { b.part_rank.push_back(p % n); }
        layouts.push_back(b);
    }
    for (const auto& l : layouts) {
        for (unsigned threads : {1u, 2u}) {
            const toy::result r = toy::run_rank(t, toy_nodes, toy_end, l.part_of, l.part_rank, threads);
            EXPECT_EQ(r.late, 0u);
            if (t.rank() == 0) {
                EXPECT_EQ(r.hash, one.hash) << n << " ranks, " << l.part_rank.size() << " partitions, " << threads
                                            << " threads per rank";
                EXPECT_EQ(r.events, one.events);
                EXPECT_EQ(r.credits, one.credits);
                EXPECT_GT(r.events, 15'000u);
                std::printf("sim_mpi: %u ranks, %zu partitions, %u threads: %llu events, %llu windows, hash %016llx "
                            "(one engine %016llx)\n",
                            n, l.part_rank.size(), threads, static_cast<unsigned long long>(r.events),
                            static_cast<unsigned long long>(r.windows), static_cast<unsigned long long>(r.hash),
                            static_cast<unsigned long long>(one.hash));
            }
        }
    }
}

TEST(sim_mpi, a_zero_delay_link_between_ranks_is_refused_on_every_rank) {
    mpi_transport t;
    toy::model m(4, 3, /*zero_delay_link0=*/true);
    toy::tparallel pe({0, 1}, t);
    try {
        (void)toy::build(m, pe, {0, 1, 0, 1});
        ADD_FAILURE() << "rank " << t.rank() << " accepted a zero-delay link between ranks";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("has no propagation delay"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace rocelab::sim

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        auto& ls = ::testing::UnitTest::GetInstance()->listeners();
        delete ls.Release(ls.default_result_printer());
    }
    const int rc = RUN_ALL_TESTS();
    // Every rank's verdict: the job fails when any rank failed.
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all;
}
