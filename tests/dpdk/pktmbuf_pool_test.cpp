// dpdk::pktmbuf_pool (lib/dpdk/pool.hpp) without hugepages: every mbuf
// packed in one 2 MiB-aligned region of the process's own anonymous memory
// (not EAL's memfd), backed by transparent huge pages where the kernel has
// them, and unmapped when the pool is freed. The oracles are the kernel's:
// /proc/self/smaps (AnonHugePages of the region) and mincore() (is the
// region still mapped), and DPDK's own view of the pool and its memory.
#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_mempool.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "dpdk/pool.hpp"
#include "vt_harness.hpp"

namespace rocelab::test {
namespace {

constexpr std::uint16_t data_room = 2048 + RTE_PKTMBUF_HEADROOM;
constexpr std::uintptr_t two_mib = std::uintptr_t{2} << 20;

rte_mempool_memhdr* only_chunk(rte_mempool* mp) {
    EXPECT_EQ(mp->nb_mem_chunks, 1u);
    return STAILQ_FIRST(&mp->mem_list);
}

// The kB of AnonHugePages of the mapping that contains `addr`, from
// /proc/self/smaps; -1 when no mapping contains it.
long anon_huge_kb(const void* addr) {
    std::ifstream f("/proc/self/smaps");
    const auto a = reinterpret_cast<std::uintptr_t>(addr);
    std::string line;
    bool in = false;
    while (std::getline(f, line)) {
        std::uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
            in = lo <= a && a < hi;
            continue;
        }
        if (in && line.rfind("AnonHugePages:", 0) == 0) { return std::stol(line.substr(14)); }
    }
    return -1;
}

bool thp_off() {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    std::getline(f, s);
    return s.empty() || s.find("[never]") != std::string::npos;
}

TEST(pktmbuf_pool, without_hugepages_packs_every_mbuf_in_one_aligned_region_of_its_own) {
    init_vt_eal("vt_fabric_test");
    ASSERT_EQ(rte_eal_has_hugepages(), 0) << "the test's EAL runs with --no-huge";
    constexpr std::uint32_t n = 5000;
    rte_mempool* mp = dpdk::pktmbuf_pool("pp_packed", n, 32, data_room, SOCKET_ID_ANY);
    ASSERT_NE(mp, nullptr) << rte_strerror(rte_errno);
    EXPECT_EQ(mp->populated_size, n);
    EXPECT_EQ(rte_mempool_avail_count(mp), n);
    EXPECT_EQ(rte_pktmbuf_data_room_size(mp), data_room);
    rte_mempool_memhdr* h = only_chunk(mp);
    ASSERT_NE(h, nullptr);
    const auto lo = reinterpret_cast<std::uintptr_t>(h->addr);
    EXPECT_EQ(lo % two_mib, 0u) << "the region starts on a 2 MiB boundary";
    EXPECT_EQ(h->len % two_mib, 0u);
    const std::uint64_t elt = mp->header_size + mp->elt_size + mp->trailer_size;
    EXPECT_GE(h->len, n * elt);
    EXPECT_LT(h->len, n * elt + two_mib) << "packed: no object skips a page end";
    // Not EAL memory: DPDK knows no memory segment there.
    EXPECT_EQ(rte_mem_virt2memseg(h->addr, nullptr), nullptr);
    // Every mbuf inside the region and ready to use.
    struct seen {
        std::uintptr_t lo, hi;
        std::uint32_t inside = 0, ok = 0;
    } s{lo, lo + h->len};
    rte_mempool_obj_iter(
        mp,
        [](rte_mempool* pool, void* arg, void* obj, unsigned) {
            auto* v = static_cast<seen*>(arg);
            auto* m = static_cast<rte_mbuf*>(obj);
            const auto a = reinterpret_cast<std::uintptr_t>(obj);
            if (a >= v->lo && a + pool->elt_size <= v->hi) { ++v->inside; }
            if (m->pool == pool && m->buf_len == data_room && rte_mbuf_refcnt_read(m) == 1) { ++v->ok; }
        },
        &s);
    EXPECT_EQ(s.inside, n);
    EXPECT_EQ(s.ok, n);
    // A frame's bytes can be written to the last byte of the last mbuf's room.
    rte_mbuf* m[n];
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, m, n), 0);
    for (rte_mbuf* x : m) { std::memset(x->buf_addr, 0xa5, x->buf_len); }
    rte_pktmbuf_free_bulk(m, n);
    EXPECT_EQ(rte_mempool_avail_count(mp), n);
    // Freed with the pool: the region is no longer mapped.
    void* const region = h->addr;
    rte_mempool_free(mp);
    unsigned char vec = 0;
    EXPECT_EQ(mincore(region, 4096, &vec), -1);
    EXPECT_EQ(errno, ENOMEM) << "mincore on an unmapped page";
}

TEST(pktmbuf_pool, without_hugepages_the_region_is_in_transparent_huge_pages) {
    if (thp_off()) { GTEST_SKIP() << "transparent huge pages are off on this machine ([never])"; }
    init_vt_eal("vt_fabric_test");
    // 4096 mbufs of 2368 B: 9.5 MiB, so at least four whole 2 MiB pages.
    rte_mempool* mp = dpdk::pktmbuf_pool("pp_thp", 4096, 32, data_room, SOCKET_ID_ANY);
    ASSERT_NE(mp, nullptr) << rte_strerror(rte_errno);
    rte_mempool_memhdr* h = only_chunk(mp);
    ASSERT_NE(h, nullptr);
    const long kb = anon_huge_kb(h->addr);
    EXPECT_GE(kb, 4 * 2048) << "AnonHugePages of the pool's mapping in /proc/self/smaps";
    rte_mempool_free(mp);
}

}  // namespace
}  // namespace rocelab::test
