// tsan.hpp - ThreadSanitizer annotations for synchronisation that happens
// inside Debian's DPDK libraries, which are not instrumented.
//
// TSan sees only instrumented code: when an object passes from one thread to
// another through an rte_ring, an rte_mempool or an EAL lcore launch/wait,
// the hand-over is invisible to it and the next thread's accesses look like
// a race with the previous thread's. Each such hand-over point in our code
// says what it passes: tsan_release(p) before giving p away, tsan_acquire(p)
// after taking it (a happens-before edge through that one object, not a
// global one, so real races elsewhere still show). In other builds these
// compile to nothing. tools/tsan.sh builds and runs the multi-worker tests
// under TSan (docs/testing.md, "ThreadSanitizer").
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ROCELAB_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ROCELAB_TSAN)
#define ROCELAB_TSAN 1
#endif

// For a function whose body calls DPDK's inline ring code across threads:
// those rings synchronise with plain loads and barriers that TSan cannot
// follow, so such calls are left uninstrumented and the objects they pass
// are annotated explicitly instead.
#if defined(__clang__) || defined(__GNUC__)
#define ROCELAB_NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define ROCELAB_NO_TSAN
#endif

#ifdef ROCELAB_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace rocelab::dpdk {

#ifdef ROCELAB_TSAN
inline constexpr bool tsan_build = true;
inline void tsan_acquire(const void* p) noexcept { __tsan_acquire(const_cast<void*>(p)); }
inline void tsan_release(const void* p) noexcept { __tsan_release(const_cast<void*>(p)); }
#else
inline constexpr bool tsan_build = false;
inline void tsan_acquire(const void*) noexcept {}
inline void tsan_release(const void*) noexcept {}
#endif

// The same for n objects (ring and mempool bursts).
inline void tsan_acquire_n(void* const* objs, unsigned n) noexcept {
    if constexpr (tsan_build) {
        for (unsigned i = 0; i < n; ++i) { tsan_acquire(objs[i]); }
    }
}
inline void tsan_release_n(void* const* objs, unsigned n) noexcept {
    if constexpr (tsan_build) {
        for (unsigned i = 0; i < n; ++i) { tsan_release(objs[i]); }
    }
}

// Name of the mempool handler for mbuf pools: in a TSan build a ring-based
// handler whose enqueue/dequeue annotate each object ("rocelab_tsan",
// pool.cpp), so an mbuf freed by one lcore and allocated by another - by
// our code or inside a PMD - carries the hand-over; when worker lcores
// share a CPU, the lock-free stack ("lf_stack": no thread ever waits for a
// preempted one); otherwise DPDK's best.
const char* mbuf_pool_ops() noexcept;

}  // namespace rocelab::dpdk
