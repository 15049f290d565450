// mpi_transport.hpp - the parallel engine's synchronisation seam
// (sim/sync_transport.hpp) over MPI: one rank per process.
//
// What: min_next is MPI_Allreduce(MPI_MIN) of one int64; exchange is
// MPI_Alltoall of the buffer sizes (one int per rank) then MPI_Alltoallv
// of the bytes. exchange_min, the engine's step at every window's end, is
// one message from each rank to each other rank instead of those three
// collectives: the 8-byte minimum then the buffer (MPI_Isend), received
// with MPI_Probe for its size (a rank pair's messages arrive in order, so
// windows never mix). The count and displacement arrays and the message
// buffers are kept between windows; recv's vectors are resized, their
// storage reused. Buffers are limited to INT_MAX bytes per rank pair per
// window (MPI counts are int): a larger one throws std::length_error.
//
// Built only when meson finds MPI (-Dmpi=auto|enabled; dependency sim_mpi_dep).
// The caller initialises and finalises MPI (MPI_Init / MPI_Finalize); the
// communicator must outlive the transport. MPI errors abort the job
// (MPI_ERRORS_ARE_FATAL, MPI's default).
//
// Example:
//   MPI_Init(&argc, &argv);
//   {
//       sim::mpi_transport t;                // MPI_COMM_WORLD
//       sim::parallel_engine<frame, tr> pe(part_rank, t);
//       ...  build the model (the same cross links on every rank)
//       pe.run_until(end, 1);
//   }
//   MPI_Finalize();
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "sim/sync_transport.hpp"

namespace rocelab::sim {

class mpi_transport final : public sync_transport {
public:
    explicit mpi_transport(MPI_Comm comm = MPI_COMM_WORLD);

    unsigned rank() const noexcept override { return _rank; }
    unsigned ranks() const noexcept override { return _ranks; }
    nanos min_next(nanos local) override;
    void exchange(const std::vector<std::vector<std::byte>>& send, std::vector<std::vector<std::byte>>& recv) override;
    nanos exchange_min(const std::vector<std::vector<std::byte>>& send, std::vector<std::vector<std::byte>>& recv,
                       nanos local) override;

    // What a runner needs around the run (collective, every rank in the
    // same order; not used by the engine):
    //   gather(mine): rank 0 gets every rank's buffer, by rank (its own
    //     included); the other ranks get an empty vector. Limited to INT_MAX
    //     bytes in all (std::length_error).
    //   sum(v, n) / max(v, n): v[0..n) summed / maximised over the ranks, on
    //     every rank.
    std::vector<std::vector<std::byte>> gather(const std::vector<std::byte>& mine);
    void sum(std::uint64_t* v, int n);
    void max(std::uint64_t* v, int n);

private:
    MPI_Comm _comm;
    unsigned _rank = 0;
    unsigned _ranks = 1;
    std::vector<int> _scount, _sdispl, _rcount, _rdispl;
    std::vector<std::byte> _sbuf, _rbuf;  // the buffers packed end to end (Alltoallv)
    std::vector<std::vector<std::byte>> _msg;  // exchange_min: each rank's message (kept until sent)
    std::vector<MPI_Request> _req;
    std::vector<std::byte> _in;
};

}  // namespace rocelab::sim
