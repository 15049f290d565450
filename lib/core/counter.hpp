// counter.hpp - a statistics counter written by one thread and read by others.
//
// The data path counts with plain increments; the control thread (status
// line, telemetry, reports) reads the same words while the workers run. A
// plain write racing with a read is a data race in the C++ memory model
// (ThreadSanitizer reports it: tools/tsan.sh), even though an aligned 64-bit
// store cannot tear on x86. counter64 makes both sides relaxed atomics: the
// single writer loads, adds and stores (no lock prefix, the same instructions
// as `++x`), readers load. Only one thread may write a given counter.
#pragma once

#include <cstdint>
#include <type_traits>

namespace rocelab {

struct counter64 {
    std::uint64_t v = 0;

    // Trivially copyable: copy construction is plain (a snapshot of a set of
    // counters, a message between ranks: take it from the writer's thread,
    // or after it stopped). Copy assignment is deleted: assigning into a
    // live counter must be a store (`c = x.load()`, `c = 0u`), or a reader
    // may race a plain write, as `k.peak = std::max(k.peak, x)` of two
    // counter64 once did. Never pass one to printf-style varargs: convert it
    // (load()) first.
    constexpr counter64() noexcept = default;
    constexpr counter64(std::uint64_t x) noexcept : v(x) {}  // NOLINT: implicit, like the integer it replaces
    constexpr counter64(const counter64&) noexcept = default;
    counter64& operator=(std::uint64_t x) noexcept { return store(x); }
    counter64& operator=(const counter64&) = delete;

    std::uint64_t load() const noexcept { return __atomic_load_n(&v, __ATOMIC_RELAXED); }
    counter64& store(std::uint64_t x) noexcept {
        __atomic_store_n(&v, x, __ATOMIC_RELAXED);
        return *this;
    }
    operator std::uint64_t() const noexcept { return load(); }  // NOLINT: reads as the integer

    counter64& operator+=(std::uint64_t d) noexcept { return store(load() + d); }
    counter64& operator-=(std::uint64_t d) noexcept { return store(load() - d); }
    counter64& operator++() noexcept { return store(load() + 1); }
    counter64& operator--() noexcept { return store(load() - 1); }
    std::uint64_t operator++(int) noexcept {
        const std::uint64_t old = load();
        store(old + 1);
        return old;
    }
};
static_assert(sizeof(counter64) == 8);
static_assert(std::is_trivially_copyable_v<counter64>);
static_assert(!std::is_copy_assignable_v<counter64>);  // a live counter is stored, never copied over

// A counter (or any figure one thread writes and others read) read from
// another thread: a relaxed atomic load, on x86-64 a plain mov that never
// tears an aligned 64-bit value.
template <typename T>
inline T read_counter(const T& c) noexcept {
    return __atomic_load_n(&c, __ATOMIC_RELAXED);
}
inline std::uint64_t read_counter(const counter64& c) noexcept {
    return c.load();
}

}  // namespace rocelab

// A counter set written once, as an X-macro list of its names, gives both its
// struct and every report that lists the whole set, so that a new counter
// cannot be declared and left out of them:
//
//   #define ROCELAB_FOO_COUNTERS(X) X(rx_packets) X(rx_bytes)
//   struct foo_counters { ROCELAB_FOO_COUNTERS(ROCELAB_U64_COUNTER) };
//   #define PUT(name) put(#name, c.name);
//   ROCELAB_FOO_COUNTERS(PUT)
//
// Plain uint64_t members, in list order: the struct is the one a hand-written
// declaration would give.
#define ROCELAB_U64_COUNTER(name) std::uint64_t name = 0;
// The same with counter64 members (a set the data path counts and other threads read).
#define ROCELAB_COUNTER64(name) ::rocelab::counter64 name = 0;

// The plain snapshot of a live set, both declared from one LIST (counter64
// members and uint64_t members): defines `Plain snapshot(const Live&)`,
// which loads each counter (relaxed). Use it at namespace scope:
//
//   struct foo_counters { ROCELAB_FOO_COUNTERS(ROCELAB_COUNTER64) };
//   struct foo_counts { ROCELAB_FOO_COUNTERS(ROCELAB_U64_COUNTER) };
//   ROCELAB_COUNTER_SNAPSHOT(ROCELAB_FOO_COUNTERS, foo_counters, foo_counts)
#define ROCELAB_SNAPSHOT_LOAD(name) snap_.name = live_.name.load();
#define ROCELAB_COUNTER_SNAPSHOT(LIST, Live, Plain)     \
    inline Plain snapshot(const Live& live_) noexcept { \
        Plain snap_;                                    \
        LIST(ROCELAB_SNAPSHOT_LOAD)                     \
        return snap_;                                   \
    }
