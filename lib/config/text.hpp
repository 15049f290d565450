// text.hpp - the small text helpers lib/config's loaders share (private to
// lib/config): trim, split on a separator with each part trimmed.
#pragma once

#include <cctype>
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

}  // namespace rocelab::detail
