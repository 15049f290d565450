// rng.hpp - small, fast, seedable PRNG (xoshiro256** seeded by splitmix64).
// Passed by reference into anything random so every run can be replayed.
#pragma once

#include <cstdint>

namespace rocelab {

class rng {
public:
    explicit constexpr rng(std::uint64_t seed = 1) noexcept { reseed(seed); }
    constexpr void reseed(std::uint64_t seed) noexcept {
        for (auto& w : _s) { w = splitmix(seed); }
    }
    constexpr std::uint64_t next() noexcept {
        const std::uint64_t r = rotl(_s[1] * 5, 7) * 9;
        const std::uint64_t t = _s[1] << 17;
        _s[2] ^= _s[0]; _s[3] ^= _s[1]; _s[1] ^= _s[2]; _s[0] ^= _s[3];
        _s[2] ^= t; _s[3] = rotl(_s[3], 45);
        return r;
    }
    // Uniform in [0, 1).
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform 32-bit value; compare against p * 2^32 for a cheap Bernoulli draw.
    constexpr std::uint32_t next_u32() noexcept { return static_cast<std::uint32_t>(next() >> 32); }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    static constexpr std::uint64_t splitmix(std::uint64_t& x) noexcept {
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::uint64_t _s[4]{};
};

// A probability as a threshold for `next_u32() < threshold` (control path):
// 0 never, 2^32 always.
constexpr std::uint64_t probability_threshold(double p) noexcept {
    if (!(p > 0.0)) {
        return 0;
    }
    if (p >= 1.0) {
        return std::uint64_t{1} << 32;
    }
    return static_cast<std::uint64_t>(p * 4294967296.0 + 0.5);
}

}  // namespace rocelab
