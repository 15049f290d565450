// pool.hpp - the mbuf pool of a DPDK process (rocelab-switch, rocelab-gen).
//
// pktmbuf_pool(): rte_pktmbuf_pool_create(), except without hugepages
// (--no-huge: virtual devices only, no DMA) where the objects are packed
// (RTE_MEMPOOL_F_NO_IOVA_CONTIG): EAL memory then comes in 4 KiB pages, and
// a normal pool keeps every object inside one page, so a 2368-byte mbuf
// (2176 B data room) takes a whole page. Packed, the default switch pool of
// 147,456 mbufs touches 349 MB instead of 604 MB, and start-up takes
// ~150,000 fewer page faults' worth of time. With hugepages (a real NIC may
// DMA into the mbufs) the normal pool is used.
#pragma once

#include <cstddef>
#include <cstdint>

struct rte_mempool;

namespace rocelab::dpdk {

// Faults in the pages under [p, p + len) with one madvise(MADV_POPULATE_WRITE)
// (Linux 5.14; a hint, ignored where unsupported) instead of one trap per
// 4 KiB page as the memory is first written.
void populate_write(void* p, std::size_t len) noexcept;

// A mempool handler rocelab writes ("rocelab_lifo" in growing_pool.cpp,
// "rocelab_tsan" in pool.cpp): its name and the five callbacks, of DPDK's types
// (rte_mempool_alloc_t ... rte_mempool_get_count) spelled out.
struct mempool_handler {
    const char* name;
    int (*alloc)(rte_mempool*);
    void (*free)(rte_mempool*);
    int (*enqueue)(rte_mempool*, void* const*, unsigned);
    int (*dequeue)(rte_mempool*, void**, unsigned);
    unsigned (*get_count)(const rte_mempool*);
};

// Registers `h` with DPDK (rte_mempool_register_ops()), the optional
// callbacks left to DPDK's defaults. Call it from an RTE_INIT constructor,
// as RTE_MEMPOOL_REGISTER_OPS() would.
void register_mempool_handler(const mempool_handler& h) noexcept;

// nullptr on failure, with rte_errno set.
rte_mempool* pktmbuf_pool(const char* name, std::uint32_t n, std::uint32_t cache, std::uint16_t data_room,
                          int socket) noexcept;

}  // namespace rocelab::dpdk
