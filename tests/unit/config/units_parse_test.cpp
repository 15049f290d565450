// units_parse_test.cpp - written-out units: parsing, formatting, round trips.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "config/units_parse.hpp"

namespace rocelab {
namespace {

TEST(units_parse, rates) {
    const struct {
        const char* text;
        std::uint64_t bps;
    } cases[] = {
        {"100Gbps", 100'000'000'000},
        {"400Gbps", 400'000'000'000},
        {"1Gbps", 1'000'000'000},
        {"2.5Gbps", 2'500'000'000},
        {"500Mbps", 500'000'000},
        {"10Kbps", 10'000},
        {"1000bps", 1000},
        {"1.6Tbps", 1'600'000'000'000},
        {" 25Gbps ", 25'000'000'000},
        {"0.001Gbps", 1'000'000},
    };
    for (const auto& c : cases) {
        const auto r = parse_rate(c.text);
        ASSERT_TRUE(r) << c.text << ": " << r.error().message;
        EXPECT_EQ(r->v, c.bps) << c.text;
    }
}

TEST(units_parse, times) {
    const struct {
        const char* text;
        std::int64_t ns;
    } cases[] = {
        {"55us", 55'000}, {"1.5ms", 1'500'000},      {"200ms", 200'000'000}, {"2s", 2'000'000'000},
        {"500ns", 500},   {"300s", 300'000'000'000}, {"0.5us", 500},
    };
    for (const auto& c : cases) {
        const auto r = parse_time(c.text);
        ASSERT_TRUE(r) << c.text << ": " << r.error().message;
        EXPECT_EQ(r->v, c.ns) << c.text;
    }
}

TEST(units_parse, sizes) {
    const struct {
        const char* text;
        std::uint64_t b;
    } cases[] = {
        {"96KiB", 96 * 1024}, {"1MiB", 1 << 20},    {"9216B", 9216},        {"2KB", 2000},
        {"3MB", 3'000'000},   {"1GiB", 1ULL << 30}, {"2GB", 2'000'000'000}, {"1.5KiB", 1536},
    };
    for (const auto& c : cases) {
        const auto r = parse_bytes(c.text);
        ASSERT_TRUE(r) << c.text << ": " << r.error().message;
        EXPECT_EQ(r->v, c.b) << c.text;
    }
}

TEST(units_parse, percent) {
    EXPECT_DOUBLE_EQ(*parse_percent("5%"), 5.0);
    EXPECT_DOUBLE_EQ(*parse_percent("0.5%"), 0.5);
    EXPECT_FALSE(parse_percent("5"));
    EXPECT_DOUBLE_EQ(*parse_percent("5", bare_number::accepted), 5.0);
    EXPECT_FALSE(parse_percent("five%"));
}

TEST(units_parse, bare_numbers_need_units_unless_the_field_fixes_them) {
    const auto rate = parse_rate("100");
    ASSERT_FALSE(rate);
    EXPECT_NE(rate.error().message.find("\"100\" has no unit"), std::string::npos) << rate.error().message;
    EXPECT_NE(rate.error().message.find("100Gbps"), std::string::npos);

    EXPECT_FALSE(parse_time("55"));
    EXPECT_FALSE(parse_bytes("1500"));
    const auto size = parse_bytes("1500", bare_number::accepted);
    ASSERT_TRUE(size);
    EXPECT_EQ(size->v, 1500u);
    const auto secs = parse_time("300", nanos{1'000'000'000});
    ASSERT_TRUE(secs);
    EXPECT_EQ(secs->v, 300'000'000'000);
}

TEST(units_parse, rejects_bad_text) {
    for (const char* t :
         {"", "Gbps", "-1Gbps", "1..5Gbps", ".5Gbps", "5.Gbps", "1e9bps", "100 G", "100gbit"}) {
        EXPECT_FALSE(parse_rate(t)) << t;
    }
    EXPECT_FALSE(parse_time("1.5ns"));  // not a whole number of nanoseconds
    EXPECT_FALSE(parse_bytes("0.5B"));
    EXPECT_FALSE(parse_bytes("1KiBB"));
    EXPECT_FALSE(parse_rate("99999999999Tbps"));  // does not fit 64 bits
    EXPECT_FALSE(parse_time("10000000000s"));     // does not fit int64 nanoseconds
}

TEST(units_parse, unknown_unit_suggests_the_right_one) {
    const auto r = parse_rate("100G");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("did you mean 100Gbps?"), std::string::npos) << r.error().message;
    const auto s = parse_bytes("96kib");
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("did you mean 96KiB?"), std::string::npos) << s.error().message;
}

TEST(units_parse, format) {
    EXPECT_EQ(format_rate(bits_per_sec{100'000'000'000}), "100Gbps");
    EXPECT_EQ(format_rate(bits_per_sec{2'500'000'000}), "2.5Gbps");
    EXPECT_EQ(format_rate(bits_per_sec{1'600'000'000'000}), "1.6Tbps");
    EXPECT_EQ(format_rate(bits_per_sec{1000}), "1Kbps");
    EXPECT_EQ(format_rate(bits_per_sec{999}), "999bps");
    EXPECT_EQ(format_rate(bits_per_sec{0}), "0bps");
    EXPECT_EQ(format_time(nanos{55'000}), "55us");
    EXPECT_EQ(format_time(nanos{1'500'000}), "1.5ms");
    EXPECT_EQ(format_time(nanos{300'000'000'000}), "300s");
    EXPECT_EQ(format_time(nanos{-2'000}), "-2us");
    EXPECT_EQ(format_time(nanos{0}), "0ns");
    EXPECT_EQ(format_bytes(bytes{96 * 1024}), "96KiB");
    EXPECT_EQ(format_bytes(bytes{1 << 20}), "1MiB");
    EXPECT_EQ(format_bytes(bytes{9216}), "9KiB");
    EXPECT_EQ(format_bytes(bytes{9100}), "9100B");
    EXPECT_EQ(format_bytes(bytes{0}), "0B");
}

TEST(units_parse, round_trips) {
    // parse(format(x)) == x over a spread of awkward values.
    std::uint64_t x = 1;
    for (int i = 0; i < 200; ++i) {
        x = x * 7 + static_cast<std::uint64_t>(i);  // wraps; values of every magnitude
        const std::uint64_t v = x % 10'000'000'000'000ULL;
        const auto r = parse_rate(format_rate(bits_per_sec{v}));
        ASSERT_TRUE(r) << format_rate(bits_per_sec{v});
        EXPECT_EQ(r->v, v);
        const auto t = parse_time(format_time(nanos{static_cast<std::int64_t>(v)}));
        ASSERT_TRUE(t) << format_time(nanos{static_cast<std::int64_t>(v)});
        EXPECT_EQ(static_cast<std::uint64_t>(t->v), v);
        const auto b = parse_bytes(format_bytes(bytes{v}));
        ASSERT_TRUE(b) << format_bytes(bytes{v});
        EXPECT_EQ(b->v, v);
    }
}

// Regressions found by fuzz_units. (1) A fraction with 128 or more decimals
// made 10^decimals wrap to 0 in 128 bits and the exactness check divided by
// zero (SIGFPE, e.g. rocelab-gen --rate 0.000...0Gbps). (2) Values of 10^19 or
// more (reachable through a unit: 10260000001021MB) were formatted with 20
// digits, which the parser refused: parse(format(x)) failed.
TEST(units_parse, many_decimals_are_an_error_not_a_crash) {
    const std::string zeros(130, '0');
    EXPECT_FALSE(parse_rate("0." + zeros + "Gbps"));
    EXPECT_FALSE(parse_time("0." + zeros + "1s"));
    EXPECT_FALSE(parse_bytes("1." + zeros + "KiB"));
    EXPECT_FALSE(parse_percent("0." + zeros + "%"));
    EXPECT_EQ(parse_time("0.000000000000000000000000000000s")->v, 0);  // 30 decimals still parse
}

TEST(units_parse, round_trips_up_to_the_largest_value) {
    for (const std::uint64_t v : {10'260'000'001'021'000'000ULL, ~0ULL, ~0ULL - 1023}) {
        const auto b = parse_bytes(format_bytes(bytes{v}));
        ASSERT_TRUE(b) << format_bytes(bytes{v});
        EXPECT_EQ(b->v, v);
        const auto r = parse_rate(format_rate(bits_per_sec{v}));
        ASSERT_TRUE(r) << format_rate(bits_per_sec{v});
        EXPECT_EQ(r->v, v);
    }
    EXPECT_EQ(parse_bytes("10260000001021MB")->v, 10'260'000'001'021'000'000ULL);
    EXPECT_FALSE(parse_bytes("18446744073709551616B"));  // 2^64: too large, not wrapped
    EXPECT_FALSE(parse_bytes("100000000000000000000B"));  // 21 digits
}

}  // namespace
}  // namespace rocelab
