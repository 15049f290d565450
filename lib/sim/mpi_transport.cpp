// mpi_transport.cpp - sim/mpi_transport.hpp.
#include "sim/mpi_transport.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rocelab::sim {

namespace {
// The displacements of buffers of `counts` bytes packed end to end (an
// MPI *v call's), and their total; over INT_MAX in all (MPI counts are
// int) throws std::length_error naming `what`.
std::size_t pack_displacements(const std::vector<int>& counts, std::vector<int>& displs, const char* what) {
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        if (total + static_cast<std::size_t>(counts[r]) > static_cast<std::size_t>(INT_MAX)) {
            throw std::length_error(std::string("mpi_transport: more than INT_MAX bytes ") + what);
        }
        displs[r] = static_cast<int>(total);
        total += static_cast<std::size_t>(counts[r]);
    }
    return total;
}
}  // namespace

mpi_transport::mpi_transport(MPI_Comm comm) : _comm(comm) {
    int r = 0, n = 1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    _rank = static_cast<unsigned>(r);
    _ranks = static_cast<unsigned>(n);
    _scount.resize(_ranks);
    _sdispl.resize(_ranks);
    _rcount.resize(_ranks);
    _rdispl.resize(_ranks);
    _msg.resize(_ranks);
    _req.resize(_ranks, MPI_REQUEST_NULL);
}

nanos mpi_transport::min_next(nanos local) {
    std::int64_t in = local.v, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_MIN, _comm);
    return nanos{out};
}

void mpi_transport::exchange(const std::vector<std::vector<std::byte>>& send,
                             std::vector<std::vector<std::byte>>& recv) {
    if (send.size() != _ranks || recv.size() != _ranks) {
        throw std::invalid_argument("mpi_transport: exchange needs one buffer per rank");
    }
    // Sizes first: each rank learns how much every other sends it.
    for (unsigned r = 0; r < _ranks; ++r) {
        const std::size_t n = r == _rank ? 0 : send[r].size();
        if (n > static_cast<std::size_t>(INT_MAX)) {
            throw std::length_error("mpi_transport: more than INT_MAX bytes in one window's exchange");
        }
        _scount[r] = static_cast<int>(n);
    }
    const std::size_t total = pack_displacements(_scount, _sdispl, "in one window's exchange");
    MPI_Alltoall(_scount.data(), 1, MPI_INT, _rcount.data(), 1, MPI_INT, _comm);
    const std::size_t rtotal = pack_displacements(_rcount, _rdispl, "in one window's exchange");
    _sbuf.resize(total);
    for (unsigned r = 0; r < _ranks; ++r) {
        if (_scount[r] != 0) { std::memcpy(_sbuf.data() + _sdispl[r], send[r].data(), send[r].size()); }
    }
    _rbuf.resize(rtotal);
    // Collective: every rank calls it, even with nothing to send or receive.
    MPI_Alltoallv(_sbuf.data(), _scount.data(), _sdispl.data(), MPI_BYTE, _rbuf.data(), _rcount.data(),
                  _rdispl.data(), MPI_BYTE, _comm);
    for (unsigned r = 0; r < _ranks; ++r) {
        recv[r].resize(static_cast<std::size_t>(_rcount[r]));
        if (_rcount[r] != 0) { std::memcpy(recv[r].data(), _rbuf.data() + _rdispl[r], recv[r].size()); }
    }
}

nanos mpi_transport::exchange_min(const std::vector<std::vector<std::byte>>& send,
                                  std::vector<std::vector<std::byte>>& recv, nanos local) {
    if (send.size() != _ranks || recv.size() != _ranks) {
        throw std::invalid_argument("mpi_transport: exchange needs one buffer per rank");
    }
    constexpr int tag = 0x524c;  // the window messages' own tag ("RL")
    const std::int64_t mine = local.v;
    for (unsigned r = 0; r < _ranks; ++r) {
        _req[r] = MPI_REQUEST_NULL;
        if (r == _rank) { continue; }
        if (send[r].size() > static_cast<std::size_t>(INT_MAX) - sizeof mine) {
            throw std::length_error("mpi_transport: more than INT_MAX bytes in one window's exchange");
        }
        std::vector<std::byte>& m = _msg[r];
        m.resize(sizeof mine + send[r].size());
        std::memcpy(m.data(), &mine, sizeof mine);
        if (!send[r].empty()) { std::memcpy(m.data() + sizeof mine, send[r].data(), send[r].size()); }
        MPI_Isend(m.data(), static_cast<int>(m.size()), MPI_BYTE, static_cast<int>(r), tag, _comm, &_req[r]);
    }
    std::int64_t least = mine;
    for (unsigned r = 0; r < _ranks; ++r) {
        if (r == _rank) {
            recv[r].clear();
            continue;
        }
        MPI_Status st;
        MPI_Probe(static_cast<int>(r), tag, _comm, &st);
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n < static_cast<int>(sizeof least)) { throw std::runtime_error("mpi_transport: a window message without its header"); }
        _in.resize(static_cast<std::size_t>(n));
        MPI_Recv(_in.data(), n, MPI_BYTE, static_cast<int>(r), tag, _comm, MPI_STATUS_IGNORE);
        std::int64_t theirs = 0;
        std::memcpy(&theirs, _in.data(), sizeof theirs);
        least = std::min(least, theirs);
        recv[r].resize(_in.size() - sizeof theirs);
        if (!recv[r].empty()) { std::memcpy(recv[r].data(), _in.data() + sizeof theirs, recv[r].size()); }
    }
    MPI_Waitall(static_cast<int>(_ranks), _req.data(), MPI_STATUSES_IGNORE);
    return nanos{least};
}

std::vector<std::vector<std::byte>> mpi_transport::gather(const std::vector<std::byte>& mine) {
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) {
        throw std::length_error("mpi_transport: more than INT_MAX bytes to gather");
    }
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(_rank == 0 ? _ranks : 0), displs(_rank == 0 ? _ranks : 0);
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, _comm);
    std::vector<std::vector<std::byte>> out;
    std::vector<std::byte> all;
    if (_rank == 0) { all.resize(pack_displacements(counts, displs, "to gather")); }
    MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, _comm);
    if (_rank == 0) {
        for (unsigned r = 0; r < _ranks; ++r) {
            out.emplace_back(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
        }
    }
    return out;
}

void mpi_transport::sum(std::uint64_t* v, int n) {
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, _comm);
}

void mpi_transport::max(std::uint64_t* v, int n) {
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_MAX, _comm);
}

}  // namespace rocelab::sim
