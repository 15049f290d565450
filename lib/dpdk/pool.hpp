// pool.hpp - the mbuf pool of a DPDK process (rocelab-switch, rocelab-gen).
//
// pktmbuf_pool(): rte_pktmbuf_pool_create(), except without hugepages
// (--no-huge: virtual devices only, no DMA, no secondary process) where the
// objects are packed (RTE_MEMPOOL_F_NO_IOVA_CONTIG) in private anonymous
// memory of the process's own, advised for transparent huge pages. EAL's
// --no-huge memory is a memfd in 4 KiB pages: a normal pool there keeps
// every object inside one page, so a 2368-byte mbuf (2176 B data room)
// takes a whole page, and every page is a fault at start-up. Packed, the
// default switch pool of 147,456 mbufs takes 349 MB instead of 604 MB, and
// in 2 MiB pages it is faulted in about 0.6 s faster than in 4 KiB pages
// on this machine's VM. That memory is outside EAL's -m. With hugepages (a
// real NIC may DMA into the mbufs) the normal pool is used.
#pragma once

#include <cstddef>
#include <cstdint>

struct rte_mempool;

namespace rocelab::dpdk {

// Faults in the pages under [p, p + len) with one madvise(MADV_POPULATE_WRITE)
// (Linux 5.14; a hint, ignored where unsupported) instead of one trap per
// 4 KiB page as the memory is first written.
void populate_write(void* p, std::size_t len) noexcept;

// `len` bytes (rounded up to 2 MiB) of private anonymous memory, starting on
// a 2 MiB boundary and advised MADV_HUGEPAGE, so that where transparent huge
// pages are enabled the kernel maps it in 2 MiB pages. noreserve: address
// space only (MAP_NORESERVE), committed as it is written. nullptr with errno
// set on failure; release with munmap(p, huge_round(len)).
inline constexpr std::size_t thp_size = std::size_t{2} << 20;
constexpr std::size_t huge_round(std::size_t len) noexcept { return (len + thp_size - 1) & ~(thp_size - 1); }
void* map_huge_anon(std::size_t len, bool noreserve) noexcept;

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
