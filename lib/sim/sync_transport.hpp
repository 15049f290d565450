// sync_transport.hpp - what the parallel engine (sim/parallel.hpp) needs
// from the ranks it is spread over: the synchronisation seam.
//
// What: a parallel engine whose partitions live on several ranks (processes,
// MPI ranks) runs the same windows as on one process (sim/parallel.hpp).
// Per window it needs two collective steps, and nothing else:
//   (a) min_next(local): the global minimum of every rank's earliest
//       pending event (an all-reduce with min); the window starts there;
//   (b) exchange(send, recv): at the window's end, a personalised exchange
//       of byte buffers, send[r] to rank r; recv[r] gets what rank r sent
//       this rank. The buffers carry the records of the cross links whose
//       receiving partition is on another rank (format: sim/parallel.hpp,
//       "Over ranks").
// Every rank calls them in the same order (they are collective). recv's
// vectors are resized, never shrunk: their storage is reused window after
// window.
//   (a+b) exchange_min(send, recv, local): both in one step, (b) then (a):
//       the engine calls it at each window's end with the earliest event
//       this rank will have once the exchange is in (its partitions'
//       events and the arrivals of every frame it sends), so the next
//       window's start travels with the frames. The default runs the two
//       steps; mpi_transport sends one message per rank pair instead.
//
// Implementations: solo_transport (one rank: both steps are identities),
// inproc_hub (N ranks as N threads of one process: tests the seam and the
// distributed mode without MPI), mpi_transport (sim/mpi_transport.hpp,
// built only with MPI).
//
// Example:
//   inproc_hub hub(2);
//   std::thread t([&] { run_rank(hub.transport(1)); });
//   run_rank(hub.transport(0));
//   t.join();
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/units.hpp"

namespace rocelab::sim {

class sync_transport {
public:
    virtual ~sync_transport() = default;
    virtual unsigned rank() const noexcept = 0;
    virtual unsigned ranks() const noexcept = 0;
    // The minimum of `local` over every rank (collective).
    virtual nanos min_next(nanos local) = 0;
    // send.size() == recv.size() == ranks() (collective). send[rank()] is
    // not sent; recv[rank()] is left empty.
    virtual void exchange(const std::vector<std::vector<std::byte>>& send,
                          std::vector<std::vector<std::byte>>& recv) = 0;
    // exchange(send, recv), then the minimum of `local` over every rank (collective).
    virtual nanos exchange_min(const std::vector<std::vector<std::byte>>& send,
                               std::vector<std::vector<std::byte>>& recv, nanos local) {
        exchange(send, recv);
        return min_next(local);
    }
};

// One rank: nothing to synchronise with.
class solo_transport final : public sync_transport {
public:
    unsigned rank() const noexcept override { return 0; }
    unsigned ranks() const noexcept override { return 1; }
    nanos min_next(nanos local) override { return local; }
    void exchange(const std::vector<std::vector<std::byte>>&, std::vector<std::vector<std::byte>>& recv) override {
        for (auto& r : recv) { r.clear(); }
    }
};

// N ranks on N threads of one process: each thread takes transport(r) and
// runs its rank. A blocking barrier (mutex + condition variable) per step:
// for tests, not for speed.
class inproc_hub {
public:
    explicit inproc_hub(unsigned ranks) : _n(ranks), _mins(ranks), _sends(ranks, nullptr) {
        if (ranks == 0) { throw std::invalid_argument("inproc_hub: no rank"); }
        for (unsigned r = 0; r < ranks; ++r) { _ends.push_back(std::make_unique<end>(*this, r)); }
    }
    inproc_hub(const inproc_hub&) = delete;
    inproc_hub& operator=(const inproc_hub&) = delete;

    sync_transport& transport(unsigned r) { return *_ends.at(r); }
    unsigned ranks() const noexcept { return _n; }

private:
    class end final : public sync_transport {
    public:
        end(inproc_hub& h, unsigned r) : _h(h), _r(r) {}
        unsigned rank() const noexcept override { return _r; }
        unsigned ranks() const noexcept override { return _h._n; }
        nanos min_next(nanos local) override {
            _h._mins[_r] = local;
            _h.barrier();
            nanos m = nanos::max();
            for (const nanos v : _h._mins) { m = std::min(m, v); }
            _h.barrier();  // nobody writes _mins again before all have read them
            return m;
        }
        void exchange(const std::vector<std::vector<std::byte>>& send,
                      std::vector<std::vector<std::byte>>& recv) override {
            if (send.size() != _h._n || recv.size() != _h._n) {
                throw std::invalid_argument("inproc_hub: exchange needs one buffer per rank");
            }
            _h._sends[_r] = &send;
            _h.barrier();
            for (unsigned s = 0; s < _h._n; ++s) {
                if (s == _r) {
                    recv[s].clear();
                    continue;
                }
                const std::vector<std::byte>& b = (*_h._sends[s])[_r];
                recv[s].assign(b.begin(), b.end());
            }
            _h.barrier();  // the senders' buffers stay untouched until all have copied
        }

    private:
        inproc_hub& _h;
        unsigned _r;
    };

    void barrier() {
        std::unique_lock<std::mutex> lk(_m);
        const std::uint64_t gen = _gen;
        if (++_arrived == _n) {
            _arrived = 0;
            ++_gen;
            _cv.notify_all();
            return;
        }
        _cv.wait(lk, [this, gen] { return _gen != gen; });
    }

    unsigned _n;
    std::vector<nanos> _mins;
    std::vector<const std::vector<std::vector<std::byte>>*> _sends;
    std::vector<std::unique_ptr<end>> _ends;
    std::mutex _m;
    std::condition_variable _cv;
    unsigned _arrived = 0;
    std::uint64_t _gen = 0;
};

}  // namespace rocelab::sim
