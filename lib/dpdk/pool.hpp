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

// nullptr on failure, with rte_errno set.
rte_mempool* pktmbuf_pool(const char* name, std::uint32_t n, std::uint32_t cache, std::uint16_t data_room,
                          int socket) noexcept;

}  // namespace rocelab::dpdk
