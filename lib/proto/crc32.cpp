// crc32.cpp - table and PCLMULQDQ engines for CRC-32; see crc32.hpp.
#include "proto/crc32.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rocelab {

namespace {

constexpr std::uint64_t poly_normal = 0x104C11DB7ull;  // with the x^32 term

using table_t = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr table_t make_tables() noexcept {
    table_t t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        t[0][i] = crc32_table_entry(i);
    }
    for (std::size_t s = 1; s < 8; ++s) {
        for (std::uint32_t i = 0; i < 256; ++i) {
            const std::uint32_t prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][prev & 0xFFu];
        }
    }
    return t;
}

constexpr table_t tables = make_tables();

std::uint32_t raw_table(std::uint32_t s, const std::byte* p, std::size_t n) noexcept {
    while (n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        w ^= s;
        s = tables[7][w & 0xFFu] ^ tables[6][(w >> 8) & 0xFFu] ^ tables[5][(w >> 16) & 0xFFu] ^
            tables[4][(w >> 24) & 0xFFu] ^ tables[3][(w >> 32) & 0xFFu] ^ tables[2][(w >> 40) & 0xFFu] ^
            tables[1][(w >> 48) & 0xFFu] ^ tables[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n != 0) {
        s = (s >> 8) ^ tables[0][(s ^ std::to_integer<std::uint32_t>(*p)) & 0xFFu];
        ++p;
        --n;
    }
    return s;
}

// x^e mod P in the normal (non-reflected) representation.
constexpr std::uint32_t xpow_mod(unsigned e) noexcept {
    std::uint64_t r = 1;
    for (unsigned i = 0; i < e; ++i) {
        r <<= 1;
        if (r & (1ull << 32)) {
            r ^= poly_normal;
        }
    }
    return static_cast<std::uint32_t>(r);
}

constexpr std::uint32_t reflect32(std::uint32_t v) noexcept {
    std::uint32_t r = 0;
    for (int i = 0; i < 32; ++i) {
        r = (r << 1) | ((v >> i) & 1u);
    }
    return r;
}

// Below this the table engine is as fast as the fold + 16-byte table tail.
constexpr std::size_t pclmul_min_len = 32;

// Folding constant for distance-T folds, see crc32.hpp.
constexpr std::uint64_t fold_k(unsigned e) noexcept { return std::uint64_t(reflect32(xpow_mod(e))) << 1; }

constexpr std::uint64_t k_512_lo = fold_k(512 + 32);
constexpr std::uint64_t k_512_hi = fold_k(512 - 32);
constexpr std::uint64_t k_1024_lo = fold_k(1024 + 32);
constexpr std::uint64_t k_1024_hi = fold_k(1024 - 32);
constexpr std::uint64_t k_128_lo = fold_k(128 + 32);
constexpr std::uint64_t k_128_hi = fold_k(128 - 32);

// Barrett reduction (below): mu = floor(x^64 / P), and both it and P as
// 33-bit reflected operands (bit i = the coefficient of x^(32 - i)).
constexpr std::uint64_t poly_div_x64() noexcept {
    unsigned __int128 r = static_cast<unsigned __int128>(1) << 64;
    std::uint64_t q = 0;
    for (int i = 64; i >= 32; --i) {
        if (((r >> i) & 1u) != 0) {
            r ^= static_cast<unsigned __int128>(poly_normal) << (i - 32);
            q |= std::uint64_t{1} << (i - 32);
        }
    }
    return q;
}
constexpr std::uint64_t reflect33(std::uint64_t v) noexcept {
    std::uint64_t r = 0;
    for (int i = 0; i <= 32; ++i) {
        if (((v >> i) & 1u) != 0) { r |= std::uint64_t{1} << (32 - i); }
    }
    return r;
}
constexpr std::uint64_t k_mu = reflect33(poly_div_x64());
constexpr std::uint64_t k_poly = reflect33(poly_normal);
static_assert(k_poly == 0x1DB710641ull);

#if defined(__x86_64__)
#define ROCELAB_CRC_PCLMUL 1

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k) noexcept {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

// Fold constants for T = 128 j bits, j = 1..6 (index 0 unused): merge()
// folds each of up to 7 blocks straight to the last one's place.
constexpr std::array<std::uint64_t, 7> make_kt(int offset) noexcept {
    std::array<std::uint64_t, 7> t{};
    for (int j = 1; j < 7; ++j) { t[static_cast<std::size_t>(j)] = fold_k(static_cast<unsigned>(128 * j + offset)); }
    return t;
}
constexpr std::array<std::uint64_t, 7> kt_lo = make_kt(+32);  // as k_128_lo, k_512_lo: T + 32
constexpr std::array<std::uint64_t, 7> kt_hi = make_kt(-32);

__attribute__((target("pclmul,sse4.1"))) inline __m128i load16(const std::byte* q) noexcept {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
}

// The remainder of c lanes v[] (16-byte blocks in a row, v[0] first) and
// the m whole blocks at p after them (c + m <= 7): each block but the last
// folded once, straight to the last one's place, so the folds run side by
// side instead of one after another (a chain of c + m - 1 folds before).
__attribute__((target("pclmul,sse4.1"))) inline __m128i merge(const __m128i* v, unsigned c, const std::byte* p,
                                                               unsigned m) noexcept {
    const unsigned total = c + m;
    __m128i acc = m == 0 ? v[c - 1] : load16(p + 16 * (m - 1));
    for (unsigned i = 0; i + 1 < total; ++i) {
        const __m128i b = i < c ? v[i] : load16(p + 16 * (i - c));
        const unsigned j = total - 1 - i;
        acc = _mm_xor_si128(acc, fold(b, _mm_set_epi64x(static_cast<long long>(kt_hi[j]),
                                                        static_cast<long long>(kt_lo[j]))));
    }
    return acc;
}

// The register after 16 bytes from state 0 whose 128-bit remainder is x
// (what raw_table(0, x's bytes, 16) gives), without tables. With B the
// 16 bytes as a polynomial (first bit x^127), the register is B x^32 mod P:
//   U = B0 (x^96 mod P) + B1 x^32, B0 the first 8 bytes, B1 the last (deg U < 96);
//   V = U0 (x^64 mod P) + U1, U0 = U's top 32 coefficients (deg V < 64);
//   Barrett: q = floor(floor(V / x^32) mu / x^32), R = V + q P (deg R < 32).
// Each product is one carry-less multiply of reflected operands, whose
// result lands one bit low; the fold constants' "<< 1" (fold_k) and the
// 33-bit operands of mu and P absorb it.
__attribute__((target("pclmul,sse4.1"))) inline std::uint32_t reduce128(__m128i x) noexcept {
    const __m128i k = _mm_set_epi64x(static_cast<long long>(fold_k(64)), static_cast<long long>(fold_k(96)));
    const __m128i mp = _mm_set_epi64x(static_cast<long long>(k_poly), static_cast<long long>(k_mu));
    const __m128i low32 = _mm_set_epi64x(0, 0xFFFFFFFFll);
    const __m128i y = _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_srli_si128(x, 8));  // U x^32
    // V x^32 in bits 32..95 (U0, still in bits 0..31, is not read again).
    const __m128i y2 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_slli_epi64(y, 32), k, 0x10), y);
    const __m128i v = _mm_srli_si128(y2, 4);  // V, reflected, in the low 64 bits
    __m128i c = _mm_clmulepi64_si128(_mm_and_si128(v, low32), mp, 0x00);  // floor(V / x^32) mu
    c = _mm_clmulepi64_si128(_mm_and_si128(c, low32), mp, 0x10);          // q P
    return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(v, c), 1));
}

// n >= 32 (one 128-bit lane below 64 bytes, four lanes from 64). `init` is
// XORed into the first 16 bytes: the 32-bit register in its low bits, or the
// remainder of bytes before p folded forward by 128 bits (crc32_raw2).
__attribute__((target("pclmul,sse4.1"))) std::uint32_t raw_pclmul(__m128i init, const std::byte* p,
                                                                   std::size_t n) noexcept {
    __m128i x = _mm_xor_si128(load16(p), init);
    if (n >= 64) {
        __m128i x0 = x;
        __m128i x1 = load16(p + 16);
        __m128i x2 = load16(p + 32);
        __m128i x3 = load16(p + 48);
        p += 64;
        n -= 64;
        const __m128i k4 = _mm_set_epi64x(static_cast<long long>(k_512_hi), static_cast<long long>(k_512_lo));
        while (n >= 64) {
            x0 = _mm_xor_si128(fold(x0, k4), load16(p));
            x1 = _mm_xor_si128(fold(x1, k4), load16(p + 16));
            x2 = _mm_xor_si128(fold(x2, k4), load16(p + 32));
            x3 = _mm_xor_si128(fold(x3, k4), load16(p + 48));
            p += 64;
            n -= 64;
        }
        const __m128i v[4] = {x0, x1, x2, x3};
        const auto m = static_cast<unsigned>(n / 16);
        x = merge(v, 4, p, m);
        p += 16 * m;
        n -= 16 * m;
    } else {
        const auto m = static_cast<unsigned>((n - 16) / 16);
        x = merge(&x, 1, p + 16, m);
        p += 16 * (m + 1);
        n -= 16 * (m + 1);
    }
    return raw_table(reduce128(x), p, n);
}

// From this length the 512-bit engine: 8 lanes (two registers of four)
// folded by T = 1024 bits per 128 bytes, then merged into the four lanes of
// the 128-bit engine (T = 512) and finished by it.
constexpr std::size_t vpclmul_min_len = 256;

__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"))) std::uint32_t raw_vpclmul(
    __m128i init, const std::byte* p, std::size_t n) noexcept {
    auto load = [](const std::byte* q) { return _mm512_loadu_si512(q); };
    const auto hi8 = static_cast<long long>(k_1024_hi), lo8 = static_cast<long long>(k_1024_lo);
    const auto hi4 = static_cast<long long>(k_512_hi), lo4 = static_cast<long long>(k_512_lo);
    const __m512i k8 = _mm512_set_epi64(hi8, lo8, hi8, lo8, hi8, lo8, hi8, lo8);
    const __m512i k4 = _mm512_set_epi64(hi4, lo4, hi4, lo4, hi4, lo4, hi4, lo4);
    auto fold512 = [](__m512i x, __m512i k) {
        return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11));
    };
    __m512i x0 = _mm512_xor_si512(load(p), _mm512_maskz_broadcast_i32x4(0xF, init));
    __m512i x1 = load(p + 64);
    p += 128;
    n -= 128;
    while (n >= 128) {
        x0 = _mm512_xor_si512(fold512(x0, k8), load(p));
        x1 = _mm512_xor_si512(fold512(x1, k8), load(p + 64));
        p += 128;
        n -= 128;
    }
    __m512i x = _mm512_xor_si512(x1, fold512(x0, k4));  // x0's lanes are 64 bytes before x1's
    if (n >= 64) {
        x = _mm512_xor_si512(fold512(x, k4), load(p));
        p += 64;
        n -= 64;
    }
    // Four 128-bit lanes, 16 bytes apart, and the whole blocks left: merged
    // as the 128-bit engine does.
    const __m128i v[4] = {_mm512_maskz_extracti32x4_epi32(0xF, x, 0), _mm512_maskz_extracti32x4_epi32(0xF, x, 1),
                          _mm512_maskz_extracti32x4_epi32(0xF, x, 2), _mm512_maskz_extracti32x4_epi32(0xF, x, 3)};
    const auto m = static_cast<unsigned>(n / 16);
    const __m128i a = merge(v, 4, p, m);
    p += 16 * m;
    n -= 16 * m;
    return raw_table(reduce128(a), p, n);
}

// Decided once at load time, not behind a function-local static's guard on
// the data path.
bool detect_vpclmul() noexcept {
    __builtin_cpu_init();  // may run before libgcc's own constructor has
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul");
}
const bool vpclmul_ok = detect_vpclmul();

bool have_vpclmul() noexcept { return vpclmul_ok; }

bool have_pclmul() noexcept {
#if defined(__PCLMUL__) && defined(__SSE4_1__)
    return true;
#else
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}
#endif

// Polynomial product mod P, reflected representation (bit 31 = x^0).
constexpr std::uint32_t multmodp(std::uint32_t a, std::uint32_t b) noexcept {
    std::uint32_t m = 1u << 31;
    std::uint32_t p = 0;
    while (m != 0) {
        if (a & m) {
            p ^= b;
        }
        m >>= 1;
        b = (b & 1u) ? (b >> 1) ^ crc32_poly_reflected : b >> 1;
    }
    return p;
}

// x2n[k] = x^(2^k) mod P, reflected.
constexpr std::array<std::uint32_t, 64> make_x2n() noexcept {
    std::array<std::uint32_t, 64> t{};
    std::uint32_t p = 1u << 30;  // x^1
    t[0] = p;
    for (std::size_t k = 1; k < t.size(); ++k) {
        p = multmodp(p, p);
        t[k] = p;
    }
    return t;
}
constexpr std::array<std::uint32_t, 64> x2n = make_x2n();

// x^(n * 2^k) mod P.
constexpr std::uint32_t x2nmodp(std::uint64_t n, unsigned k) noexcept {
    std::uint32_t p = 1u << 31;  // x^0
    while (n != 0) {
        if (n & 1u) {
            p = multmodp(x2n[k & 63u], p);
        }
        n >>= 1;
        ++k;
    }
    return p;
}

}  // namespace

#if defined(ROCELAB_CRC_PCLMUL)
namespace {

// The best engine for n >= pclmul_min_len bytes from a 128-bit start.
__attribute__((target("pclmul,sse4.1"))) std::uint32_t raw_folding(__m128i init, const std::byte* p,
                                                                    std::size_t n) noexcept {
    return n >= vpclmul_min_len && have_vpclmul() ? raw_vpclmul(init, p, n) : raw_pclmul(init, p, n);
}

__attribute__((target("pclmul,sse4.1"))) std::uint32_t raw2_pclmul(std::uint32_t reg, const std::byte* head,
                                                                    std::size_t nh, const std::byte* p,
                                                                    std::size_t n) noexcept {
    const __m128i k1 = _mm_set_epi64x(static_cast<long long>(k_128_hi), static_cast<long long>(k_128_lo));
    __m128i x = _mm_xor_si128(load16(head), _mm_cvtsi32_si128(static_cast<int>(reg)));
    for (std::size_t i = 16; i < nh; i += 16) { x = _mm_xor_si128(fold(x, k1), load16(head + i)); }
    if (n >= pclmul_min_len) { return raw_folding(fold(x, k1), p, n); }  // head's remainder: data 16 bytes before p
    const auto m = static_cast<unsigned>(n / 16);
    x = merge(&x, 1, p, m);
    return raw_table(reduce128(x), p + 16 * m, n - 16 * m);
}

}  // namespace
#endif

std::uint32_t crc32_raw(std::uint32_t reg, const std::byte* p, std::size_t n) noexcept {
#if defined(ROCELAB_CRC_PCLMUL)
    if (n >= pclmul_min_len && have_pclmul()) {
        return raw_folding(_mm_cvtsi32_si128(static_cast<int>(reg)), p, n);
    }
#endif
    return raw_table(reg, p, n);
}

std::uint32_t crc32_raw2(std::uint32_t reg, const std::byte* head, std::size_t nh, const std::byte* p,
                         std::size_t n) noexcept {
#if defined(ROCELAB_CRC_PCLMUL)
    if (nh != 0 && nh % 16 == 0 && have_pclmul()) {
        return raw2_pclmul(reg, head, nh, p, n);
    }
#endif
    return raw_table(raw_table(reg, head, nh), p, n);
}

std::uint32_t crc32(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
    return ~crc32_raw(~crc, p, n);
}

std::uint32_t crc32_portable(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
    return ~raw_table(~crc, p, n);
}

std::uint32_t crc32_combine(std::uint32_t crc1, std::uint32_t crc2, std::uint64_t len2) noexcept {
    return multmodp(x2nmodp(len2, 3), crc1) ^ crc2;
}

std::uint32_t crc32_combine_gen(std::uint64_t len2) noexcept { return x2nmodp(len2, 3); }

std::uint32_t crc32_combine_op(std::uint32_t crc1, std::uint32_t crc2, std::uint32_t op) noexcept {
    return multmodp(op, crc1) ^ crc2;
}

bool crc32_accelerated() noexcept {
#if defined(ROCELAB_CRC_PCLMUL)
    return have_pclmul();
#else
    return false;
#endif
}

}  // namespace rocelab
