// line_vector.hpp - a std::vector whose storage has cache lines of its own.
//
// Why: small per-worker arrays that a worker writes at every poll are a few
// bytes each. Allocated one after the other by the control path, two
// workers' arrays land on one 64-byte line, and each write by one worker
// takes the line from the other (perf: 86 % of the generator's
// update_ready samples on its one load of the ready bitmap, with two
// workers). Users: the generator's ready and service bitmaps and timer
// heaps, the switch's owed-credit tables. line_allocator starts every
// allocation on a line and rounds its size up to whole lines.
//
//   line_vector<std::uint64_t> ready;   // ready.assign(words, 0): nothing else on its lines
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace rocelab {

inline constexpr std::size_t cache_line = 64;

template <typename T>
struct line_allocator {
    using value_type = T;
    line_allocator() noexcept = default;
    template <typename U>
    line_allocator(const line_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        const std::size_t bytes = (n * sizeof(T) + cache_line - 1) / cache_line * cache_line;
        return static_cast<T*>(::operator new(bytes, std::align_val_t{cache_line}));
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{cache_line}); }
    template <typename U>
    bool operator==(const line_allocator<U>&) const noexcept {
        return true;
    }
};

template <typename T>
using line_vector = std::vector<T, line_allocator<T>>;

}  // namespace rocelab
