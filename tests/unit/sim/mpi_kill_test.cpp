// A rank killed mid-run under mpirun (issue 21 item 3): the other ranks are
// blocked in the window's collectives (sim/mpi_transport.hpp), so the run
// must end because mpirun ends the job, not hang. Rank 1 runs one toy run
// (sim/parallel.hpp over ranks) with rank 0, then kills itself; rank 0
// starts a second run, whose first collective can never complete, and says
// so on stdout first. tests/unit/sim/test_mpi_kill.py runs it and checks
// the exit status, the time it took and mpirun's line naming the rank.
#include <mpi.h>

#include <csignal>
#include <cstdio>

#include "sim/mpi_transport.hpp"
#include "toy_ring.hpp"

int main(int argc, char** argv) {
    using namespace rocelab;
    MPI_Init(&argc, &argv);
    sim::mpi_transport t;
    const std::vector<unsigned> part_of = {0, 1, 0, 1, 0, 1, 0};
    const std::vector<unsigned> part_rank = {0, 1};
    const sim::toy::result r = sim::toy::run_rank(t, 7, nanos{100'000}, part_of, part_rank, 1);
    if (t.rank() == 0) { std::printf("mpi_kill_test: first run done on both ranks: %llu events\n", (unsigned long long)r.events); }
    std::fflush(stdout);
    if (t.rank() == 1) { std::raise(SIGKILL); }
    std::printf("mpi_kill_test: rank 0 in the second run's collectives\n");
    std::fflush(stdout);
    (void)sim::toy::run_rank(t, 7, nanos{100'000'000}, part_of, part_rank, 1);
    std::printf("mpi_kill_test: rank 0 finished a run without rank 1 (a bug)\n");
    MPI_Finalize();
    return 0;
}
