// growing_pool.cpp - see growing_pool.hpp.
#include "dpdk/growing_pool.hpp"
#include "dpdk/pool.hpp"
#include "dpdk/tsan.hpp"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <cstring>

namespace rocelab::dpdk {

std::variant<std::unique_ptr<growing_pool>, std::string> growing_pool::create(const params& p) {
    if (p.capacity == 0) { return "mbuf pool " + p.name + ": capacity 0"; }
    std::unique_ptr<growing_pool> g(new growing_pool());
    const unsigned priv = RTE_ALIGN(0, RTE_MBUF_PRIV_ALIGN);
    const unsigned elt = sizeof(rte_mbuf) + priv + p.data_room;
    g->_mp = rte_mempool_create_empty(p.name.c_str(), p.capacity, elt, std::min<std::uint32_t>(p.cache, 512),
                                      sizeof(rte_pktmbuf_pool_private), static_cast<int>(rte_socket_id()),
                                      RTE_MEMPOOL_F_NO_IOVA_CONTIG);  // packed: objects may cross pages
    if (g->_mp == nullptr) {
        return "mbuf pool " + p.name + " (" + std::to_string(p.capacity) + " mbufs): " + rte_strerror(rte_errno);
    }
    if (rte_mempool_set_ops_byname(g->_mp, mbuf_pool_ops(), nullptr) != 0) {
        return "mbuf pool " + p.name + ": no mempool handler " + mbuf_pool_ops();
    }
    rte_pktmbuf_pool_private mbp{};
    mbp.mbuf_data_room_size = p.data_room;
    mbp.mbuf_priv_size = static_cast<std::uint16_t>(priv);
    rte_pktmbuf_pool_init(g->_mp, &mbp);
    g->_ring_ops = std::strncmp(rte_mempool_get_ops(g->_mp->ops_index)->name, "ring_", 5) == 0;
    g->_elt = g->_mp->header_size + g->_mp->elt_size + g->_mp->trailer_size;
    g->_capacity = p.capacity;
    g->_chunk = std::max<std::uint32_t>(p.chunk, 64);
    g->_init = p.init;
    g->_arg = p.arg;
    // One virtual reservation for every object (plus a page per chunk of
    // slack for alignment); pages are committed only when written.
    const std::size_t chunks = (p.capacity + g->_chunk - 1) / g->_chunk;
    g->_reserved = g->_elt * std::size_t{p.capacity} + (chunks + 1) * 4096;
    void* a = ::mmap(nullptr, g->_reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) {
        g->_reserved = 0;
        return "mbuf pool " + p.name + ": cannot reserve " + std::to_string(g->_elt * p.capacity >> 20) +
               " MiB of address space";
    }
    g->_base = static_cast<std::byte*>(a);
    // Transparent huge pages where the kernel gives them (enabled=madvise on
    // Debian): fewer faults and TLB misses as chunks are added; RSS then
    // grows in 2 MiB steps.
    (void)::madvise(a, g->_reserved, MADV_HUGEPAGE);
    while (g->populated() < std::min(p.initial, p.capacity)) {
        if (!g->add_chunk()) { return "mbuf pool " + p.name + ": cannot add objects: " + rte_strerror(rte_errno); }
    }
    return g;
}

growing_pool::~growing_pool() {
    if (_mp != nullptr) { rte_mempool_free(_mp); }
    if (_base != nullptr) { ::munmap(_base, _reserved); }
}

std::uint32_t growing_pool::populated() const noexcept { return _mp->populated_size; }

std::uint32_t growing_pool::free_count() const noexcept {
    if (!_ring_ops) { return rte_mempool_avail_count(_mp); }
    // The ring handlers keep their rte_ring in pool_data: its count plus
    // this lcore's cache, without avail_count's walk over every lcore.
    std::uint32_t n = rte_ring_count(static_cast<const rte_ring*>(_mp->pool_data));
    const unsigned l = rte_lcore_id();
    if (_mp->cache_size != 0 && l < RTE_MAX_LCORE) { n += _mp->local_cache[l].len; }
    return n;
}

bool growing_pool::add_chunk() noexcept {
    const std::uint32_t want = std::min(_chunk, _capacity - populated());
    if (want == 0) { return false; }
    std::size_t len = _elt * want;
    if (_used + len > _reserved) { len = (_reserved - _used) / _elt * _elt; }
    if (len == 0) { return false; }
    // The objects go, header first, at _elt strides from the chunk's start
    // (RTE_MEMPOOL_F_NO_IOVA_CONTIG: nothing is skipped at page ends).
    // Initialise them before the pool can hand them out: populate puts each
    // object in the pool as it adds it, and another thread may be taking
    // mbufs from it meanwhile.
    std::byte* const base = _base + _used;
    const std::size_t n = len / _elt;
    populate_write(base, len);  // one call, not a trap per page as the loop below writes
    for (std::size_t i = 0; i < n; ++i) {
        void* obj = base + i * _elt + _mp->header_size;
        rte_pktmbuf_init(_mp, nullptr, obj, 0);
        if (_init != nullptr) { _init(_arg, static_cast<rte_mbuf*>(obj)); }
    }
    const int added = rte_mempool_populate_iova(_mp, reinterpret_cast<char*>(base), RTE_BAD_IOVA, len, nullptr, nullptr);
    if (added <= 0) {
        rte_errno = added < 0 ? -added : ENOSPC;
        return false;
    }
    // Check the layout assumed above against where populate put them.
    rte_mempool_objhdr* h = _last == nullptr ? STAILQ_FIRST(&_mp->elt_list) : STAILQ_NEXT(_last, next);
    for (std::size_t i = 0; h != nullptr; h = STAILQ_NEXT(h, next), ++i) {
        if (reinterpret_cast<std::byte*>(h) + sizeof(*h) != base + i * _elt + _mp->header_size) { _layout_ok = false; }
        _last = h;
    }
    _used += len;
    return true;
}

bool growing_pool::top_up(std::uint32_t low) noexcept {
    std::lock_guard<std::mutex> g(_grow);  // one thread grows the pool at a time
    while (free_count() < low) {
        if (!add_chunk()) { return false; }
    }
    return true;
}

}  // namespace rocelab::dpdk
