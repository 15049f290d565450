// dpdk::growing_pool (lib/dpdk/growing_pool.hpp): memory added in chunks as
// mbufs are needed, and the free mbufs as a stack - the mbuf freed last is
// handed out first, so a fabric's frames reuse the few warm mbufs instead of
// cycling through every mbuf the pool ever populated (a FIFO ring's order).
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <string>
#include <variant>
#include <vector>

#include "dpdk/growing_pool.hpp"
#include "vt_harness.hpp"

namespace rocelab::test {
namespace {

std::unique_ptr<dpdk::growing_pool> make_pool(const char* name, std::uint32_t capacity, std::uint32_t initial,
                                              std::uint32_t chunk, std::uint32_t cache) {
    init_vt_eal("vt_fabric_test");
    dpdk::growing_pool::params p;
    p.name = name;
    p.capacity = capacity;
    p.initial = initial;
    p.chunk = chunk;
    p.data_room = 2048 + RTE_PKTMBUF_HEADROOM;
    p.cache = cache;
    auto r = dpdk::growing_pool::create(p);
    if (auto* e = std::get_if<std::string>(&r)) {
        ADD_FAILURE() << *e;
        return nullptr;
    }
    return std::move(std::get<0>(r));
}

TEST(growing_pool, the_mbuf_freed_last_is_handed_out_first) {
    // No lcore cache, so every alloc and free goes to the pool's handler.
    auto g = make_pool("gp_lifo", 1024, 256, 256, 0);
    ASSERT_NE(g, nullptr);
    EXPECT_STREQ(rte_mempool_get_ops(g->get()->ops_index)->name, "rocelab_lifo");
    std::vector<rte_mbuf*> m(8);
    for (auto& x : m) {
        x = rte_pktmbuf_alloc(g->get());
        ASSERT_NE(x, nullptr);
    }
    for (rte_mbuf* x : m) { rte_pktmbuf_free(x); }  // freed 0, 1, ..., 7
    for (std::size_t i = m.size(); i-- > 0;) {       // back as 7, 6, ..., 0
        rte_mbuf* x = rte_pktmbuf_alloc(g->get());
        EXPECT_EQ(x, m[i]) << "allocation " << m.size() - 1 - i;
        rte_pktmbuf_free(x);
        x = rte_pktmbuf_alloc(g->get());  // the one just freed again, held: the next is m[i - 1]
        EXPECT_EQ(x, m[i]);
    }
    // A burst: the newest first, as single frees left them.
    rte_mbuf* b[3] = {};
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(g->get(), b, 3), 0);
    for (rte_mbuf* x : b) { rte_pktmbuf_free(x); }
    rte_mbuf* again[3] = {};
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(g->get(), again, 3), 0);
    EXPECT_EQ(again[0], b[2]);
    EXPECT_EQ(again[1], b[1]);
    EXPECT_EQ(again[2], b[0]);
    for (rte_mbuf* x : again) { rte_pktmbuf_free(x); }
    for (rte_mbuf* x : m) { rte_pktmbuf_free(x); }  // held since the loop above
    EXPECT_EQ(g->free_count(), g->populated());
    EXPECT_EQ(rte_mempool_avail_count(g->get()), g->populated());  // DPDK's own count agrees
}

TEST(growing_pool, grows_in_chunks_up_to_its_capacity_and_no_further) {
    auto g = make_pool("gp_grow", 1000, 256, 256, 32);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->populated(), 256u);
    EXPECT_EQ(g->free_count(), 256u);
    std::vector<rte_mbuf*> held;
    for (int i = 0; i < 200; ++i) { held.push_back(rte_pktmbuf_alloc(g->get())); }
    EXPECT_EQ(g->free_count(), 56u);  // the stack's count plus this lcore's cache
    EXPECT_TRUE(g->top_up(100));      // below 100 free: one chunk of 256
    EXPECT_EQ(g->populated(), 512u);
    EXPECT_EQ(g->free_count(), 312u);
    EXPECT_FALSE(g->top_up(1000));    // 1000 free cannot be had at capacity 1000 with 200 held
    EXPECT_EQ(g->populated(), 1000u);
    EXPECT_EQ(g->free_count(), 800u);
    for (rte_mbuf* x : held) { rte_pktmbuf_free(x); }
    EXPECT_EQ(g->free_count(), 1000u);
    EXPECT_EQ(rte_mempool_avail_count(g->get()), 1000u);  // DPDK's own count agrees
}

}  // namespace
}  // namespace rocelab::test
