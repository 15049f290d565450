// unmap_guard.hpp - see unmap_guard.cpp: munmap() from a control thread waits
// for the workers' grace period (quiescence.hpp).
#pragma once

namespace rocelab::runtime {
// Referenced by session::init_eal so that the object defining munmap() is
// linked into every binary that runs workers.
bool unmap_guard_linked() noexcept;
}  // namespace rocelab::runtime
