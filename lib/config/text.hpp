// text.hpp - the small text helpers and value parsers lib/config's loaders
// share (private to lib/config): trim, split on a separator with each part
// trimmed, join, quote; whole numbers, MAC and IPv4 addresses. Each parser
// takes the whole text (no leading/trailing junk) and returns nullopt when
// it is not one; the caller words the error (it knows the table and field).
#pragma once

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

// "10.0.0.1" -> 0x0A000001 (host order): four decimal numbers 0..255.
inline std::optional<std::uint32_t> parse_ip4(std::string_view s) noexcept {
    std::uint32_t out = 0;
    for (int i = 0; i < 4; ++i) {
        const std::size_t dot = i < 3 ? s.find('.') : s.size();
        if (dot == std::string_view::npos || dot == 0 || dot > 3) {
            return std::nullopt;
        }
        const auto v = parse_uint(s.substr(0, dot), 0, 255);
        if (!v) {
            return std::nullopt;
        }
        out = (out << 8) | static_cast<std::uint32_t>(*v);
        s.remove_prefix(i < 3 ? dot + 1 : dot);
    }
    return out;
}

}  // namespace rocelab::detail
