// units_parse.cpp - see units_parse.hpp.
#include "config/units_parse.hpp"
#include "config/text.hpp"

#include <array>
#include <cstdio>
#include <cctype>
#include <cstdint>
#include <limits>

namespace rocelab {
namespace {

using u128 = unsigned __int128;

struct unit_def {
    std::string_view name;
    std::uint64_t scale;
};

constexpr std::array<unit_def, 6> rate_units{{
    {"bps", 1},
    {"Kbps", 1'000},
    {"kbps", 1'000},
    {"Mbps", 1'000'000},
    {"Gbps", 1'000'000'000},
    {"Tbps", 1'000'000'000'000},
}};
constexpr std::array<unit_def, 5> time_units{{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
}};
constexpr std::array<unit_def, 8> size_units{{
    {"B", 1},
    {"KB", 1'000},
    {"kB", 1'000},
    {"KiB", 1ULL << 10},
    {"MB", 1'000'000},
    {"MiB", 1ULL << 20},
    {"GB", 1'000'000'000},
    {"GiB", 1ULL << 30},
}};
// The binary size units, largest first: what format_bytes and
// format_bytes_approx write.
constexpr std::array<unit_def, 3> binary_units_desc{{
    {"GiB", 1ULL << 30},
    {"MiB", 1ULL << 20},
    {"KiB", 1ULL << 10},
}};

struct kind {
    std::string_view noun;       // "rate"
    std::string_view base_unit;  // "bits per second"
    std::string_view examples;   // "100Gbps, 500Mbps or 1000bps"
    std::string_view unit_list;  // "bps, Kbps, Mbps, Gbps, Tbps"
};

constexpr kind rate_kind{"rate", "bits per second", "100Gbps, 500Mbps or 1000bps",
                         "bps, Kbps, Mbps, Gbps, Tbps"};
constexpr kind time_kind{"time", "nanoseconds", "55us, 1.5ms or 2s", "ns, us, ms, s"};
constexpr kind size_kind{"size", "bytes", "9216B, 96KiB or 1MiB", "B, KB, KiB, MB, MiB, GB, GiB"};

using detail::quote;

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return s;
}

// A non-negative decimal: mantissa / 10^frac_digits, followed by `unit`.
struct decimal {
    u128 mantissa = 0;
    int frac_digits = 0;
    std::string_view unit;
};

std::optional<decimal> split_number(std::string_view s) {
    decimal d;
    std::size_t i = 0;
    int digits = 0;
    bool dot = false;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (c >= '0' && c <= '9') {
            // 20 significant digits hold any 64-bit value (format_* prints up to 20).
            if (digits >= 20) {
                return std::nullopt;
            }
            // Leading zeros do not count towards the digit limit.
            if (d.mantissa != 0 || c != '0') {
                ++digits;
            }
            d.mantissa = d.mantissa * 10 + static_cast<unsigned>(c - '0');
            // At most 30 decimals (leading zeros included): 10^frac_digits must fit 128 bits.
            if (dot && ++d.frac_digits > 30) {
                return std::nullopt;
            }
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    // Need at least one digit before the unit ("." alone is not a number).
    const std::string_view num = s.substr(0, i);
    if (num.empty() || num == "." || num.front() == '.' || num.back() == '.') {
        return std::nullopt;
    }
    d.unit = trim(s.substr(i));
    return d;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

template <std::size_t N>
std::string suggest_unit(std::string_view number, std::string_view unit,
                         const std::array<unit_def, N>& units) {
    const std::string lu = lower(unit);
    // Exact case-insensitive match first ("gbps" -> Gbps, "kib" -> KiB).
    for (const auto& u : units) {
        if (lower(u.name) == lu) {
            return "; did you mean " + std::string(number) + std::string(u.name) + "?";
        }
    }
    // Then a unit that starts with what was written ("G" -> Gbps, "Mi" -> MiB).
    for (const auto& u : units) {
        if (!lu.empty() && lower(u.name).starts_with(lu)) {
            return "; did you mean " + std::string(number) + std::string(u.name) + "?";
        }
    }
    return {};
}

// Parse `text` as number+unit into the base unit. `bare_scale` = 0 rejects a
// bare number, otherwise multiplies it.
template <std::size_t N>
result<std::uint64_t> parse_quantity(std::string_view text, const std::array<unit_def, N>& units,
                                     const kind& k, std::uint64_t bare_scale, std::uint64_t max) {
    const std::string_view s = trim(text);
    const auto d = split_number(s);
    if (!d) {
        if (!s.empty() && s.front() == '-') {
            return config_error{quote(text) + " is negative: expected a " + std::string(k.noun) +
                                " such as " + std::string(k.examples)};
        }
        return config_error{quote(text) + " is not a " + std::string(k.noun) +
                            ": expected a number with a unit, such as " + std::string(k.examples) +
                            " (units " + std::string(k.unit_list) + ")"};
    }
    const std::string_view number = s.substr(0, s.size() - d->unit.size());
    std::uint64_t scale = 0;
    if (d->unit.empty()) {
        if (bare_scale == 0) {
            return config_error{quote(text) + " has no unit: write a " + std::string(k.noun) + " such as " +
                                std::string(k.examples) + " (units " + std::string(k.unit_list) + ")"};
        }
        scale = bare_scale;
    } else {
        for (const auto& u : units) {
            if (u.name == d->unit) {
                scale = u.scale;
                break;
            }
        }
        if (scale == 0) {
            return config_error{quote(text) + " has an unknown unit " + quote(d->unit) + ": expected a " +
                                std::string(k.noun) + " such as " + std::string(k.examples) + " (units " +
                                std::string(k.unit_list) + ")" + suggest_unit(trim(number), d->unit, units)};
        }
    }
    u128 pow10 = 1;
    for (int i = 0; i < d->frac_digits; ++i) {
        pow10 *= 10;
    }
    const u128 scaled = d->mantissa * scale;
    if (scaled % pow10 != 0) {
        return config_error{quote(text) + " is not a whole number of " + std::string(k.base_unit)};
    }
    const u128 v = scaled / pow10;
    if (v > max) {
        return config_error{quote(text) + " is too large"};
    }
    return static_cast<std::uint64_t>(v);
}

// Exact decimal v / unit with trailing zeros trimmed ("2.5", "100").
std::string exact_decimal(std::uint64_t v, std::uint64_t unit) {
    std::string out = std::to_string(v / unit);
    std::uint64_t frac = v % unit;
    if (frac == 0) {
        return out;
    }
    int width = 0;
    for (std::uint64_t u = unit; u > 1; u /= 10) {
        ++width;
    }
    std::string f = std::to_string(frac);
    f.insert(0, static_cast<std::size_t>(width) - f.size(), '0');
    while (!f.empty() && f.back() == '0') {
        f.pop_back();
    }
    return out + "." + f;
}

}  // namespace

result<bits_per_sec> parse_rate(std::string_view text) {
    auto r = parse_quantity(text, rate_units, rate_kind, 0, std::numeric_limits<std::uint64_t>::max());
    if (!r) {
        return r.error();
    }
    return bits_per_sec{*r};
}

result<nanos> parse_time(std::string_view text, std::optional<nanos> bare_unit) {
    const std::uint64_t bare = bare_unit ? static_cast<std::uint64_t>(bare_unit->v) : 0;
    auto r = parse_quantity(text, time_units, time_kind, bare,
                            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    if (!r) {
        return r.error();
    }
    return nanos{static_cast<std::int64_t>(*r)};
}

result<bytes> parse_bytes(std::string_view text, bare_number bare) {
    auto r = parse_quantity(text, size_units, size_kind, bare == bare_number::accepted ? 1 : 0,
                            std::numeric_limits<std::uint64_t>::max());
    if (!r) {
        return r.error();
    }
    return bytes{*r};
}

result<double> parse_percent(std::string_view text, bare_number bare) {
    const std::string_view s = trim(text);
    const auto d = split_number(s);
    const bool has_pct = d && d->unit == "%";
    const bool is_bare = d && d->unit.empty();
    if (!has_pct && !(is_bare && bare == bare_number::accepted)) {
        if (is_bare) {
            return config_error{quote(text) + " has no unit: write a percentage such as 5% or 0.5%"};
        }
        return config_error{quote(text) +
                            " is not a percentage: expected a number followed by %, such as 5% or 0.5%"};
    }
    double v = static_cast<double>(d->mantissa);
    for (int i = 0; i < d->frac_digits; ++i) {
        v /= 10.0;
    }
    return v;
}

std::string format_rate(bits_per_sec rate) {
    static constexpr std::array<unit_def, 5> units{{
        {"Tbps", 1'000'000'000'000},
        {"Gbps", 1'000'000'000},
        {"Mbps", 1'000'000},
        {"Kbps", 1'000},
        {"bps", 1},
    }};
    for (const auto& u : units) {
        if (rate.v >= u.scale) {
            return exact_decimal(rate.v, u.scale) + std::string(u.name);
        }
    }
    return "0bps";
}

std::string format_time(nanos time) {
    static constexpr std::array<unit_def, 4> units{{
        {"s", 1'000'000'000},
        {"ms", 1'000'000},
        {"us", 1'000},
        {"ns", 1},
    }};
    const bool neg = time.v < 0;
    // Magnitude as unsigned so INT64_MIN does not overflow.
    const std::uint64_t mag =
        neg ? 0 - static_cast<std::uint64_t>(time.v) : static_cast<std::uint64_t>(time.v);
    for (const auto& u : units) {
        if (mag >= u.scale) {
            std::string out(neg ? "-" : "");
            out += exact_decimal(mag, u.scale);
            out += u.name;
            return out;
        }
    }
    return "0ns";
}

std::string format_bytes(bytes size) {
    for (const auto& u : binary_units_desc) {
        if (size.v != 0 && size.v % u.scale == 0) {
            return std::to_string(size.v / u.scale) + std::string(u.name);
        }
    }
    return std::to_string(size.v) + "B";
}

std::string format_bytes_approx(bytes size) {
    for (const auto& u : binary_units_desc) {
        if (size.v >= u.scale) {
            char buf[48];
            std::snprintf(buf, sizeof buf, "%.1f%s", double(size.v) / double(u.scale), std::string(u.name).c_str());
            return buf;
        }
    }
    return std::to_string(size.v) + "B";
}

}  // namespace rocelab
