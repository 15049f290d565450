// text.hpp - the small text helpers and value parsers lib/config's loaders
// share (private to lib/config): trim, split on a separator with each part
// trimmed, join, quote; whole numbers, decimal numbers, number lists
// ("3,4", "3-4"), MAC and IP addresses (units: units_parse.hpp). Each parser
// takes the whole text (no leading/trailing junk) and returns nullopt when
// it is not one; the caller words the error (it knows the table and field).
#pragma once

#include <arpa/inet.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocelab::detail {

inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) { s.remove_prefix(1); }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) { s.remove_suffix(1); }
    return s;
}

// "a, b,c" -> {"a", "b", "c"} (views into s); an empty s gives {""}.
inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(sep, start);
        out.push_back(trim(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start)));
        if (pos == std::string_view::npos) { return out; }
        start = pos + 1;
    }
}

// The same parts as strings.
inline std::vector<std::string> split_strings(std::string_view s, char sep) {
    std::vector<std::string> out;
    for (const auto v : split(s, sep)) { out.emplace_back(v); }
    return out;
}

// {"a", "b"} -> "a, b".
inline std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
    std::string out;
    for (const auto& x : v) {
        if (!out.empty()) { out += sep; }
        out += x;
    }
    return out;
}

// abc -> "abc" (how a value is shown in an error message).
inline std::string quote(std::string_view s) {
    std::string out(1, '"');
    out.append(s);
    out.push_back('"');
    return out;
}

// A whole number lo..hi: decimal digits, or with `hex` also "0x1F".
inline std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t lo, std::uint64_t hi,
                                               bool hex = false) noexcept {
    int base = 10;
    if (hex && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    if (s.empty() || s.front() == '+' || s.front() == '-') {
        return std::nullopt;
    }
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || v < lo || v > hi) {
        return std::nullopt;
    }
    return v;
}

// "02:00:00:00:01:00": six groups of two hex digits.
inline std::optional<std::array<std::uint8_t, 6>> parse_mac(std::string_view s) noexcept {
    std::array<std::uint8_t, 6> m{};
    if (s.size() != 17) {
        return std::nullopt;
    }
    for (std::size_t i = 0; i < 6; ++i) {
        const std::string_view part = s.substr(i * 3, 2);
        if ((i < 5 && s[i * 3 + 2] != ':') || !std::isxdigit(static_cast<unsigned char>(part[0])) ||
            !std::isxdigit(static_cast<unsigned char>(part[1]))) {
            return std::nullopt;
        }
        std::uint8_t v = 0;
        std::from_chars(part.data(), part.data() + 2, v, 16);  // two hex digits, checked above
        m[i] = v;
    }
    return m;
}

// An IPv4 or IPv6 address as its bytes (network order; IPv4 in the first 4).
struct ip_address {
    bool v6 = false;
    std::array<std::uint8_t, 16> bytes{};
};

// "10.0.0.1" or "fc00::1" (surrounding spaces ignored, no prefix length), as
// inet_pton reads them (an IPv4 part with a leading zero, "10.0.0.01", is
// not an address).
inline std::optional<ip_address> parse_ip_address(std::string_view text) {
    const std::string s(trim(text));
    ip_address a;
    a.v6 = s.find(':') != std::string::npos;
    if (inet_pton(a.v6 ? AF_INET6 : AF_INET, s.c_str(), a.bytes.data()) != 1) {
        return std::nullopt;
    }
    return a;
}

// A SONiC number list: "3,4", "3-4", "0,3-4" (or "" for none) -> bit mask
// of 0..max (max <= 7).
inline std::optional<std::uint8_t> parse_number_set(std::string_view text, unsigned max) {
    std::uint32_t mask = 0;
    if (trim(text).empty()) {
        return 0;
    }
    for (const auto part : split(text, ',')) {
        const auto bounds = split(part, '-');
        if (bounds.size() > 2) {
            return std::nullopt;
        }
        unsigned lo = 0;
        unsigned hi = 0;
        for (std::size_t b = 0; b < bounds.size(); ++b) {
            if (bounds[b].empty() || bounds[b].size() > 2) {
                return std::nullopt;
            }
            unsigned v = 0;
            for (const char c : bounds[b]) {
                if (c < '0' || c > '9') {
                    return std::nullopt;
                }
                v = v * 10 + static_cast<unsigned>(c - '0');
            }
            (b == 0 ? lo : hi) = v;
        }
        if (bounds.size() == 1) {
            hi = lo;
        }
        if (hi > max || lo > hi) {
            return std::nullopt;
        }
        for (unsigned v = lo; v <= hi; ++v) {
            mask |= 1u << v;
        }
    }
    return static_cast<std::uint8_t>(mask);
}

// A plain decimal number ("819.2", "5"; at most 15 digits, no sign or
// exponent); nullopt if the text is not one.
inline std::optional<double> parse_decimal(std::string_view text) {
    const std::string_view t = trim(text);
    std::size_t dots = 0;
    std::size_t digits = 0;
    for (const char c : t) {
        if (c == '.') {
            ++dots;
        } else if (c >= '0' && c <= '9') {
            ++digits;
        } else {
            return std::nullopt;
        }
    }
    if (digits == 0 || digits > 15 || dots > 1) {
        return std::nullopt;
    }
    return std::stod(std::string(t));
}

}  // namespace rocelab::detail
