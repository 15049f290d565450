// Unit tests for core/line_vector.hpp: storage starts on a cache line and no
// two vectors' storage shares a line, however small they are and in
// whatever order the control path allocates them.
#include "core/line_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

namespace rocelab {
namespace {

template <typename V>
std::set<std::uintptr_t> lines_of(const V& v) {
    std::set<std::uintptr_t> s;
    const auto a = reinterpret_cast<std::uintptr_t>(v.data());
    const std::size_t bytes = v.capacity() * sizeof(typename V::value_type);
    for (std::uintptr_t l = a / cache_line; l <= (a + bytes - 1) / cache_line; ++l) { s.insert(l); }
    return s;
}

TEST(line_vector, small_vectors_never_share_a_line) {
    // Interleaved as the set-up code does it: a bitmap per worker, a list per
    // port, each a few bytes.
    std::vector<std::unique_ptr<line_vector<std::uint64_t>>> words;
    std::vector<std::unique_ptr<line_vector<std::uint16_t>>> shorts;
    for (int i = 0; i < 64; ++i) {
        words.push_back(std::make_unique<line_vector<std::uint64_t>>(1 + i % 9, 0));
        shorts.push_back(std::make_unique<line_vector<std::uint16_t>>(1 + i % 5, 0));
    }
    std::set<std::uintptr_t> seen;
    auto check = [&](const auto& v) {
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % cache_line, 0u);
        for (const std::uintptr_t l : lines_of(v)) { EXPECT_TRUE(seen.insert(l).second) << "line shared"; }
    };
    for (const auto& v : words) { check(*v); }
    for (const auto& v : shorts) { check(*v); }
}

TEST(line_vector, growth_and_reserve_stay_aligned) {
    line_vector<std::uint32_t> v;
    v.reserve(3);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % cache_line, 0u);
    for (std::uint32_t i = 0; i < 1000; ++i) {
        v.push_back(i);
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % cache_line, 0u);
    }
    for (std::uint32_t i = 0; i < 1000; ++i) { ASSERT_EQ(v[i], i); }
    line_vector<std::uint32_t> w = v;  // copies allocate the same way
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data()) % cache_line, 0u);
    EXPECT_EQ(w, v);
}

}  // namespace
}  // namespace rocelab
