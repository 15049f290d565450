// unmap_guard.cpp - munmap() waits for the workers' grace period when a
// thread other than a worker calls it (quiescence.hpp says why: DPDK 22.11's
// memif PMD unmaps a leaving peer's regions in the EAL interrupt thread while
// a worker may be inside a burst on that port).
//
// The executable's definition comes before libc's in the dynamic symbol
// lookup, so the memif PMD (a plugin dlopen'ed by EAL) binds to it; the
// binaries export it explicitly (app/meson.build). glibc's own calls (malloc
// returning memory) do not go through the symbol and are unaffected.
// Workers calling it do not wait (nothing waits on itself), and with no
// worker online it costs one token increment. Sanitizer runtimes intercept
// munmap too: their interceptor, when there is one, does the unmapping.
#include "runtime/unmap_guard.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>

#include "runtime/quiescence.hpp"

extern "C" int __interceptor_munmap(void* addr, std::size_t len) __attribute__((weak));

extern "C" int munmap(void* addr, std::size_t len) noexcept {
    using namespace rocelab::runtime;
    if (!quiescence::is_reader()) {
        // A worker that stopped polling without leaving its loop would hold
        // this forever; 200 ms is far beyond one poll.
        quiescence::synchronize(std::chrono::milliseconds(200));
    }
    if (__interceptor_munmap != nullptr) { return __interceptor_munmap(addr, len); }
    return static_cast<int>(syscall(SYS_munmap, addr, len));
}

namespace rocelab::runtime {
bool unmap_guard_linked() noexcept { return true; }
}  // namespace rocelab::runtime
