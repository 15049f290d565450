// crc32_test.cpp - CRC-32 engines and crc32_combine.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/rng.hpp"
#include "proto/crc32.hpp"

namespace rocelab {
namespace {

std::vector<std::byte> random_bytes(rng& r, std::size_t n) {
    std::vector<std::byte> v(n);
    for (auto& b : v) {
        b = std::byte(r.next_u32());
    }
    return v;
}

TEST(ProtoCrc32, CheckValue) {
    const char* s = "123456789";
    const auto* p = reinterpret_cast<const std::byte*>(s);
    EXPECT_EQ(crc32(0, p, 9), 0xCBF43926u);
    EXPECT_EQ(crc32_portable(0, p, 9), 0xCBF43926u);
    EXPECT_EQ(crc32(0, p, 0), 0u);
}

TEST(ProtoCrc32, IcrcPrefixState) {
    const std::byte ff[8] = {std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF},
                             std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}};
    EXPECT_EQ(crc32_raw(0xFFFFFFFFu, ff, 8), 0xDEBB20E3u);
}

TEST(ProtoCrc32, AcceleratedEqualsPortable) {
    std::printf("crc32 engine: %s\n", crc32_accelerated() ? "pclmulqdq" : "slicing-by-8");
    rng r(99);
    const auto buf = random_bytes(r, 10000);
    for (int i = 0; i < 3000; ++i) {
        const std::size_t off = r.next_u32() % 64;
        const std::size_t n = (i < 300) ? static_cast<std::size_t>(i) : r.next_u32() % (buf.size() - off);
        const std::uint32_t seed = (i & 1) ? r.next_u32() : 0;
        ASSERT_EQ(crc32(seed, buf.data() + off, n), crc32_portable(seed, buf.data() + off, n)) << n;
    }
}

// crc32_raw2 over head || tail equals the table engine over the two strings
// in a row: heads of 16..96 bytes (the folding engines run on from the head
// into the tail), other head lengths (the table fallback), tails of every
// engine's range (table, 128-bit, 512-bit).
TEST(ProtoCrc32, TwoStringsEqualTheirConcatenation) {
    rng r(17);
    const auto buf = random_bytes(r, 4000);
    for (int i = 0; i < 3000; ++i) {
        const std::size_t nh = (i % 4 == 3) ? r.next_u32() % 97 : 16 * (1 + r.next_u32() % 6);
        const std::size_t n = (i < 600) ? static_cast<std::size_t>(i) : r.next_u32() % 3000;
        const std::size_t off = r.next_u32() % 64;
        const std::byte* head = buf.data() + off;
        const std::byte* tail = buf.data() + 100 + off;
        const std::uint32_t reg = (i & 1) ? r.next_u32() : 0xFFFFFFFFu;
        const std::uint32_t want = ~crc32_portable(crc32_portable(~reg, head, nh), tail, n);
        ASSERT_EQ(crc32_raw2(reg, head, nh, tail, n), want) << nh << " + " << n;
    }
}

TEST(ProtoCrc32, ChainingEqualsOneShot) {
    rng r(5);
    const auto buf = random_bytes(r, 3000);
    for (int i = 0; i < 500; ++i) {
        const std::size_t n = r.next_u32() % buf.size();
        const std::size_t k = n ? r.next_u32() % n : 0;
        const std::uint32_t a = crc32(0, buf.data(), k);
        EXPECT_EQ(crc32(a, buf.data() + k, n - k), crc32(0, buf.data(), n));
    }
}

TEST(ProtoCrc32, CombineEqualsDirect) {
    rng r(11);
    const auto buf = random_bytes(r, 5000);
    for (int i = 0; i < 500; ++i) {
        const std::size_t n = r.next_u32() % buf.size();
        const std::size_t k = n ? r.next_u32() % (n + 1) : 0;
        const std::uint32_t c1 = crc32(0, buf.data(), k);
        const std::uint32_t c2 = crc32(0, buf.data() + k, n - k);
        ASSERT_EQ(crc32_combine(c1, c2, n - k), crc32(0, buf.data(), n)) << k << " " << n;
        ASSERT_EQ(crc32_combine_op(c1, c2, crc32_combine_gen(n - k)), crc32(0, buf.data(), n));
    }
    // len2 = 0 is the identity.
    EXPECT_EQ(crc32_combine(0x12345678u, 0, 0), 0x12345678u);
}

TEST(ProtoCrc32, Residue) {
    rng r(3);
    for (int i = 0; i < 100; ++i) {
        auto v = random_bytes(r, 1 + r.next_u32() % 300);
        const std::uint32_t c = crc32(0, v.data(), v.size());
        v.resize(v.size() + 4);
        crc_store_le(v.data() + v.size() - 4, c);
        EXPECT_EQ(crc32(0, v.data(), v.size()), crc32_residue);
    }
}

}  // namespace
}  // namespace rocelab
