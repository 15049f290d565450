#include "dpdk/pool.hpp"
#include "dpdk/tsan.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace rocelab::dpdk {

namespace {
#ifdef ROCELAB_TSAN
// A multi-producer/multi-consumer rte_ring, like DPDK's ring_mp_mc handler,
// with every object annotated as it goes in (release) and out (acquire).
int tsan_alloc(rte_mempool* mp) {
    char name[RTE_RING_NAMESIZE];
    std::snprintf(name, sizeof name, "tsan_%.20s", mp->name);
    rte_ring* r = rte_ring_create(name, rte_align32pow2(mp->size + 1), mp->socket_id, 0);
    if (r == nullptr) { return -rte_errno; }
    mp->pool_data = r;
    return 0;
}
void tsan_free(rte_mempool* mp) { rte_ring_free(static_cast<rte_ring*>(mp->pool_data)); }
ROCELAB_NO_TSAN int tsan_enqueue(rte_mempool* mp, void* const* objs, unsigned n) {
    tsan_release_n(objs, n);
    return rte_ring_enqueue_bulk(static_cast<rte_ring*>(mp->pool_data), objs, n, nullptr) == 0 ? -ENOBUFS : 0;
}
ROCELAB_NO_TSAN int tsan_dequeue(rte_mempool* mp, void** objs, unsigned n) {
    if (rte_ring_dequeue_bulk(static_cast<rte_ring*>(mp->pool_data), objs, n, nullptr) == 0) { return -ENOENT; }
    tsan_acquire_n(objs, n);
    return 0;
}
ROCELAB_NO_TSAN unsigned tsan_count(const rte_mempool* mp) { return rte_ring_count(static_cast<const rte_ring*>(mp->pool_data)); }
RTE_INIT(register_tsan_handler) {
    register_mempool_handler({"rocelab_tsan", tsan_alloc, tsan_free, tsan_enqueue, tsan_dequeue, tsan_count});
}
#endif

void unmap_region(rte_mempool_memhdr* hdr, void*) { ::munmap(hdr->addr, hdr->len); }

// Every object of the pool, packed, in one region of private anonymous
// memory outside EAL's (EAL's own --no-huge memory is a memfd, shared
// memory in 4 KiB pages, which the kernel backs with huge pages only where
// shmem_enabled allows, and Debian's default is never). The region is
// 2 MiB-aligned and advised MADV_HUGEPAGE, so where transparent huge pages
// are enabled (Debian: enabled=madvise) it is mapped in 2 MiB pages, and
// its pages are faulted in with one madvise(MADV_POPULATE_WRITE) (Linux
// 5.14; both are hints, ignored where unsupported). Without hugepages no
// secondary process can attach and no device DMAs into the mbufs (their
// IOVA is RTE_BAD_IOVA), so nothing needs the memory to be EAL's.
// Measured here (a VM whose every first touch of a 4 KiB page traps to
// the hypervisor): the default switch pool of 147,456 mbufs, 349 MB, took
// 0.7 s to fault in 4 KiB pages of EAL memory and 0.05 s in 2 MiB pages.
// 0 or a negative errno.
int populate_packed(rte_mempool* mp, std::uint32_t n) {
    const std::size_t need = std::size_t{n} * (mp->header_size + mp->elt_size + mp->trailer_size);
    const std::size_t len = huge_round(need);
    auto* const base = static_cast<char*>(map_huge_anon(need, false));
    if (base == nullptr) { return -errno; }
    populate_write(base, len);
    const int added = rte_mempool_populate_iova(mp, base, RTE_BAD_IOVA, len, unmap_region, nullptr);
    if (added < 0) {
        ::munmap(base, len);
        return added;
    }
    return static_cast<std::uint32_t>(added) == n ? 0 : -ENOMEM;
}
}  // namespace

void register_mempool_handler(const mempool_handler& h) noexcept {
    rte_mempool_ops ops{};
    std::snprintf(ops.name, sizeof ops.name, "%s", h.name);
    ops.alloc = h.alloc;
    ops.free = h.free;
    ops.enqueue = h.enqueue;
    ops.dequeue = h.dequeue;
    ops.get_count = h.get_count;
    rte_mempool_register_ops(&ops);  // copies it
}

void populate_write(void* p, std::size_t len) noexcept {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto lo = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
    const auto hi = reinterpret_cast<std::uintptr_t>(p) + len;
    (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, 23 /* MADV_POPULATE_WRITE */);
}

void* map_huge_anon(std::size_t len, bool noreserve) noexcept {
    len = huge_round(len);
    // Reserve 2 MiB more, then trim to a 2 MiB-aligned start.
    void* const a = ::mmap(nullptr, len + thp_size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0), -1, 0);
    if (a == MAP_FAILED) { return nullptr; }
    const auto lo = reinterpret_cast<std::uintptr_t>(a);
    const std::uintptr_t start = (lo + thp_size - 1) & ~(thp_size - 1);
    if (start != lo) { ::munmap(a, start - lo); }
    if (const std::size_t tail = lo + thp_size - start; tail != 0) {
        ::munmap(reinterpret_cast<void*>(start + len), tail);
    }
    (void)::madvise(reinterpret_cast<void*>(start), len, MADV_HUGEPAGE);
    return reinterpret_cast<void*>(start);
}

namespace {

// Two worker lcores whose CPU sets overlap (--lcores 1@1,2@1): the
// scheduler preempts one for the other.
bool workers_share_cpus() noexcept {
    unsigned a = 0;
    RTE_LCORE_FOREACH_WORKER(a) {
        unsigned b = 0;
        RTE_LCORE_FOREACH_WORKER(b) {
            if (b <= a) { continue; }
            rte_cpuset_t x = rte_lcore_cpuset(a);
            const rte_cpuset_t y = rte_lcore_cpuset(b);
            CPU_AND(&x, &x, &y);
            if (CPU_COUNT(&x) != 0) { return true; }
        }
    }
    return false;
}

bool ops_registered(const char* name) noexcept {
    for (unsigned i = 0; i < rte_mempool_ops_table.num_ops; ++i) {
        if (std::strcmp(rte_mempool_ops_table.ops[i].name, name) == 0) { return true; }
    }
    return false;
}

}  // namespace

const char* mbuf_pool_ops() noexcept {
    if (tsan_build) { return "rocelab_tsan"; }
    // A ring-based pool makes a thread that enqueues or dequeues wait,
    // spinning, for the threads that started before it to finish. On a
    // shared CPU a worker preempted inside a cache flush or refill holds the
    // other one in that spin for the rest of its time slice (perf, two
    // switch workers on one CPU, every frame crossing: 36 % of their
    // samples on that wait in librte_mempool_ring). The lock-free stack
    // never waits for another thread; with a CPU per worker the ring stays.
    if (workers_share_cpus() && ops_registered("lf_stack")) { return "lf_stack"; }
    return rte_mbuf_best_mempool_ops();
}

rte_mempool* pktmbuf_pool(const char* name, std::uint32_t n, std::uint32_t cache, std::uint16_t data_room,
                          int socket) noexcept {
    if (rte_eal_has_hugepages() != 0) {
        return rte_pktmbuf_pool_create_by_ops(name, n, cache, 0, data_room, socket, mbuf_pool_ops());
    }
    rte_mempool* mp = rte_mempool_create_empty(name, n, sizeof(rte_mbuf) + data_room, cache,
                                               sizeof(rte_pktmbuf_pool_private), socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (mp == nullptr) { return nullptr; }
    int err = rte_mempool_set_ops_byname(mp, mbuf_pool_ops(), nullptr);
    if (err == 0) {
        rte_pktmbuf_pool_private priv{};
        priv.mbuf_data_room_size = data_room;
        priv.mbuf_priv_size = 0;
        rte_pktmbuf_pool_init(mp, &priv);
        err = populate_packed(mp, n);
    }
    if (err != 0) {
        rte_mempool_free(mp);
        rte_errno = -err;
        return nullptr;
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
    return mp;
}

}  // namespace rocelab::dpdk
