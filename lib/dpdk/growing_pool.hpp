// growing_pool.hpp - an mbuf pool whose memory grows with what is in use.
//
// What: an rte_mempool of pktmbufs with a fixed capacity (its ring holds
// that many pointers) whose objects are added in chunks, on demand, from
// one virtual reservation (mmap MAP_NORESERVE, outside EAL memory): memory
// is touched, and counted in the process's RSS, only for the chunks that
// were needed. A chunk is added from the control path (top_up) when fewer
// than `low` mbufs are free; the data path only ever sees a normal mempool.
//
// Why: rocelab-fabric must back every byte its switches' buffers may admit
// (the whole buffer pool in minimum-size frames, docs/fabric.md "Memory"),
// which for a few 32 MB pools is hundreds of thousands of mbufs; touching
// all of them at start-up cost most of a small scenario's wall time (page
// faults) and RSS. With a growing pool the capacity is sized from the
// scenario and the memory follows the frames actually held.
//
// Threads: top_up() may be called from several threads (one grows the pool
// at a time, under a mutex) while others take and return mbufs: a chunk's
// objects are initialised before the pool can hand them out. Objects carry
// no IOVA (virtual devices and simulated ports only: not for a real NIC's
// DMA).
//
// Parameters: capacity (objects at most), initial (populated at create),
// chunk (objects per top-up), data_room (bytes, incl. headroom), and an
// optional per-mbuf init run once when its chunk is added (after
// rte_pktmbuf_init; e.g. the generator's prefilled payload).
//
// Order: the free mbufs are a stack ("rocelab_lifo", growing_pool.cpp): the
// mbuf freed last is handed out first, so the memory in use stays the few
// recently freed mbufs, warm in the cache, rather than every mbuf ever
// populated in turn as with DPDK's FIFO rings. (TSan builds keep the
// annotated ring handler.)
//
// Counters: populated(), peak free-count checks are the caller's.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

struct rte_mempool;
struct rte_mbuf;
struct rte_mempool_objhdr;

namespace rocelab::dpdk {

class growing_pool {
public:
    using init_fn = void (*)(void* arg, rte_mbuf* m);
    struct params {
        std::string name;
        std::uint32_t capacity = 0;
        std::uint32_t initial = 0;
        std::uint32_t chunk = 8192;
        std::uint16_t data_room = 0;
        std::uint32_t cache = 256;
        init_fn init = nullptr;
        void* arg = nullptr;
    };

    static std::variant<std::unique_ptr<growing_pool>, std::string> create(const params& p);
    ~growing_pool();
    growing_pool(const growing_pool&) = delete;
    growing_pool& operator=(const growing_pool&) = delete;

    rte_mempool* get() const noexcept { return _mp; }
    // While fewer than `low` mbufs are free, add a chunk (up to capacity).
    // False when still fewer than `low` are free at capacity.
    bool top_up(std::uint32_t low) noexcept;
    // Free mbufs: the backing ring plus this lcore's cache (cheap).
    std::uint32_t free_count() const noexcept;
    std::uint32_t populated() const noexcept;
    std::uint32_t capacity() const noexcept { return _capacity; }
    std::uint64_t object_bytes() const noexcept { return _elt; }  // memory per mbuf, headers included
    // The objects were where add_chunk initialised them (checked after each
    // chunk; false would be a DPDK layout this code does not expect).
    bool layout_ok() const noexcept { return _layout_ok; }

private:
    growing_pool() = default;
    bool add_chunk() noexcept;

    rte_mempool* _mp = nullptr;
    std::byte* _base = nullptr;       // the reservation
    std::size_t _reserved = 0;        // its length
    std::size_t _used = 0;            // bytes of it handed to the mempool
    std::uint64_t _elt = 0;           // header + object + trailer
    std::uint32_t _capacity = 0;
    std::uint32_t _chunk = 0;
    rte_mempool_objhdr* _last = nullptr;  // the newest object already initialised
    init_fn _init = nullptr;
    void* _arg = nullptr;
    bool _ring_ops = false;  // a ring_* mempool handler (free_count reads its ring)
    bool _lifo = false;      // the stack handler (growing_pool.cpp): free_count reads its count
    bool _layout_ok = true;
    std::mutex _grow;
};

}  // namespace rocelab::dpdk
