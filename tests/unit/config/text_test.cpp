// text_test.cpp - the value parsers the switch loader, config_db.cpp,
// gen_config.cpp and units_parse.cpp share (config/text.hpp).
#include <gtest/gtest.h>

#include "config/text.hpp"

namespace rocelab::detail {
namespace {

TEST(text, parse_uint) {
    EXPECT_EQ(parse_uint("0", 0, 10), 0u);
    EXPECT_EQ(parse_uint("18446744073709551615", 0, UINT64_MAX), UINT64_MAX);
    EXPECT_FALSE(parse_uint("18446744073709551616", 0, UINT64_MAX));  // overflow
    EXPECT_FALSE(parse_uint("11", 0, 10));
    EXPECT_FALSE(parse_uint("4", 5, 10));
    for (const char* bad : {"", "-1", "+1", "1 ", " 1", "1.5", "1e3", "0x10", "x"}) {
        EXPECT_FALSE(parse_uint(bad, 0, 1000)) << bad;
    }
    EXPECT_EQ(parse_uint("0x1F", 0, 1000, true), 31u);
    EXPECT_EQ(parse_uint("0X1f", 0, 1000, true), 31u);
    EXPECT_FALSE(parse_uint("0x", 0, 1000, true));
    EXPECT_FALSE(parse_uint("0x-1", 0, 1000, true));
}

TEST(text, parse_mac) {
    const auto m = parse_mac("02:aB:00:10:fe:FF");
    ASSERT_TRUE(m);
    EXPECT_EQ(*m, (std::array<std::uint8_t, 6>{0x02, 0xab, 0x00, 0x10, 0xfe, 0xff}));
    for (const char* bad : {"", "2:0:0:0:0:1", "02:00:00:00:00", "02:00:00:00:00:01:02", "02-00-00-00-00-01",
                            "02:00:00:00:00:0g", "0200.0000.0001", "02:00:00:00:00:01 "}) {
        EXPECT_FALSE(parse_mac(bad)) << bad;
    }
}

TEST(text, parse_ip_address) {
    const auto v4 = parse_ip_address("10.0.0.1");
    ASSERT_TRUE(v4);
    EXPECT_FALSE(v4->v6);
    EXPECT_EQ(v4->bytes, (std::array<std::uint8_t, 16>{10, 0, 0, 1}));
    EXPECT_EQ(parse_ip_address(" 255.255.255.255 ")->bytes[3], 0xFF);  // surrounding spaces are ignored
    const auto v6 = parse_ip_address("fc00::1:2");
    ASSERT_TRUE(v6);
    EXPECT_TRUE(v6->v6);
    EXPECT_EQ(v6->bytes, (std::array<std::uint8_t, 16>{0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2}));
    for (const char* bad : {"", "10.0.0", "10.0.0.1.2", "256.0.0.1", "10..0.1", "10.0.0.", "a.b.c.d", "10.0.0.1/31",
                            "-1.0.0.1", "1000.0.0.1", "10.0.0.01", "fc00::zz", "fc00::1/64", "1:2:3:4:5:6:7:8:9",
                            "fc00:::1"}) {
        EXPECT_FALSE(parse_ip_address(bad)) << bad;
    }
}

TEST(text, parse_number_set) {
    EXPECT_EQ(parse_number_set("3,4", 7), 0x18);
    EXPECT_EQ(parse_number_set(" 0-2, 5 ", 7), 0x27);
    EXPECT_EQ(parse_number_set("", 7), 0);
    for (const char* bad : {"8", "3,", "4-3", "1-2-3", "x", "-1", "3;4", "100"}) {
        EXPECT_FALSE(parse_number_set(bad, 7)) << bad;
    }
}

TEST(text, parse_decimal) {
    EXPECT_EQ(parse_decimal("819.2"), 819.2);
    EXPECT_EQ(parse_decimal(" 5 "), 5.0);
    for (const char* bad : {"", ".", "1.2.3", "-1", "+1", "1e3", "1,5", "5m", "1234567890123456"}) {
        EXPECT_FALSE(parse_decimal(bad)) << bad;
    }
}

TEST(text, quote_trim_split_join) {
    EXPECT_EQ(quote("a b"), "\"a b\"");
    EXPECT_EQ(trim("  x \t"), "x");
    EXPECT_EQ(split_strings(" a, b ,c", ','), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(join({"a", "b"}), "a, b");
}

}  // namespace
}  // namespace rocelab::detail
