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
#include <atomic>
#include <cerrno>
#include <memory>
#include <new>
#include <mutex>
#include <cstring>

namespace rocelab::dpdk {

namespace {
// "rocelab_lifo": the free mbufs as a stack (last freed, first handed out)
// behind a spin lock. DPDK's ring handlers are FIFO: past the lcore cache
// an allocation takes the mbuf freed longest ago, so a fabric cycles
// through every mbuf its pool ever populated (tens of MB at 64 hosts) and
// each frame built or read misses the cache. With a stack the mbufs in use
// are the few recently freed ones. Which mbuf a frame gets changes no
// output: nothing depends on mbuf addresses. The lock is taken once per
// cache refill or flush (a burst), not per mbuf.
struct lifo_stack {
    std::atomic<bool> busy{false};
    std::atomic<std::uint32_t> n{0};  // written under the lock; read alone by get_count
    std::uint32_t cap = 0;
    std::unique_ptr<void*[]> objs;    // cap entries
    void lock() noexcept {
        while (busy.exchange(true, std::memory_order_acquire)) {
            while (busy.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
        }
    }
    void unlock() noexcept { busy.store(false, std::memory_order_release); }
};
int lifo_alloc(rte_mempool* mp) {  // control path (rte_mempool_set_ops_byname / first populate)
    auto* st = new (std::nothrow) lifo_stack();
    if (st == nullptr) { return -ENOMEM; }
    st->objs.reset(new (std::nothrow) void*[std::max<std::uint32_t>(mp->size, 1)]);
    if (!st->objs) {
        delete st;
        return -ENOMEM;
    }
    st->cap = mp->size;
    mp->pool_data = st;
    return 0;
}
void lifo_free(rte_mempool* mp) {
    delete static_cast<lifo_stack*>(mp->pool_data);
    mp->pool_data = nullptr;
}
int lifo_enqueue(rte_mempool* mp, void* const* objs, unsigned k) {
    auto* st = static_cast<lifo_stack*>(mp->pool_data);
    st->lock();
    const std::uint32_t n = st->n.load(std::memory_order_relaxed);
    if (k > st->cap - n) {
        st->unlock();
        return -ENOBUFS;
    }
    for (unsigned i = 0; i < k; ++i) { st->objs[n + i] = objs[i]; }
    st->n.store(n + k, std::memory_order_relaxed);
    st->unlock();
    return 0;
}
int lifo_dequeue(rte_mempool* mp, void** objs, unsigned k) {
    auto* st = static_cast<lifo_stack*>(mp->pool_data);
    st->lock();
    const std::uint32_t n = st->n.load(std::memory_order_relaxed);
    if (k > n) {
        st->unlock();
        return -ENOENT;
    }
    for (unsigned i = 0; i < k; ++i) { objs[i] = st->objs[n - 1 - i]; }  // the newest first
    st->n.store(n - k, std::memory_order_relaxed);
    st->unlock();
    return 0;
}
unsigned lifo_count(const rte_mempool* mp) {
    return static_cast<const lifo_stack*>(mp->pool_data)->n.load(std::memory_order_relaxed);
}
RTE_INIT(register_lifo_handler) {
    register_mempool_handler({"rocelab_lifo", lifo_alloc, lifo_free, lifo_enqueue, lifo_dequeue, lifo_count});
}
}  // namespace


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
    // A stack (lifo_ops above), except in a TSan build, whose handler
    // annotates each hand-over (tsan.hpp).
    // (Should DPDK's table of handlers be full, RTE_MEMPOOL_MAX_OPS_IDX,
    // the stack was not registered: DPDK's handler then, in FIFO order.)
    const char* ops = tsan_build ? mbuf_pool_ops() : "rocelab_lifo";
    if (rte_mempool_set_ops_byname(g->_mp, ops, nullptr) != 0) {
        ops = mbuf_pool_ops();
        if (rte_mempool_set_ops_byname(g->_mp, ops, nullptr) != 0) {
            return "mbuf pool " + p.name + ": no mempool handler " + ops;
        }
    }
    rte_pktmbuf_pool_private mbp{};
    mbp.mbuf_data_room_size = p.data_room;
    mbp.mbuf_priv_size = static_cast<std::uint16_t>(priv);
    rte_pktmbuf_pool_init(g->_mp, &mbp);
    const char* const got = rte_mempool_get_ops(g->_mp->ops_index)->name;
    g->_ring_ops = std::strncmp(got, "ring_", 5) == 0;
    g->_lifo = std::strcmp(got, "rocelab_lifo") == 0;
    g->_elt = g->_mp->header_size + g->_mp->elt_size + g->_mp->trailer_size;
    g->_capacity = p.capacity;
    g->_chunk = std::max<std::uint32_t>(p.chunk, 64);
    g->_init = p.init;
    g->_arg = p.arg;
    // One virtual reservation for every object (plus a page per chunk of
    // slack for alignment); pages are committed only when written.
    const std::size_t chunks = (p.capacity + g->_chunk - 1) / g->_chunk;
    g->_reserved = g->_elt * std::size_t{p.capacity} + (chunks + 1) * 4096;
    // Transparent huge pages where the kernel gives them (enabled=madvise on
    // Debian): fewer faults and TLB misses as chunks are added; RSS then
    // grows in 2 MiB steps.
    void* a = map_huge_anon(g->_reserved, true);
    if (a == nullptr) {
        g->_reserved = 0;
        return "mbuf pool " + p.name + ": cannot reserve " + std::to_string(g->_elt * p.capacity >> 20) +
               " MiB of address space";
    }
    g->_reserved = huge_round(g->_reserved);
    g->_base = static_cast<std::byte*>(a);
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
    if (!_ring_ops && !_lifo) { return rte_mempool_avail_count(_mp); }
    // The ring handlers keep their rte_ring in pool_data, the stack its
    // count: that plus this lcore's cache, without avail_count's walk over
    // every lcore.
    std::uint32_t n = _lifo ? lifo_count(_mp) : rte_ring_count(static_cast<const rte_ring*>(_mp->pool_data));
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
