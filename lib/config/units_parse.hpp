// units_parse.hpp - parse and print quantities with written-out units.
//
// Config files and command lines write every quantity with its unit, so a
// reader never has to guess whether "32" means bytes, cells or kilobytes:
//
//   rates   100Gbps  2.5Gbps  500Mbps  10Kbps  1000bps     (bps, Kbps, Mbps, Gbps, Tbps; x1000)
//   times   55us  1.5ms  200ms  2s  500ns                  (ns, us, ms, s)
//   sizes   96KiB  1MiB  9216B  2KB                        (B; KB MB GB = x1000; KiB MiB GiB = x1024)
//   percent 5%  0.5%
//
// Decimal fractions are exact (no floating point): "2.5Gbps" is 2500000000
// bits per second; a value that is not a whole number of the base unit
// ("1.5ns", "0.5B") is rejected. A bare number ("100") is rejected unless the
// caller says the unit is fixed by the field (SONiC byte counts such as
// BUFFER_PROFILE size, percent fields, fdb_aging_time in seconds).
//
// Errors are self-contained sentences that quote the text given, e.g.
//   "100" has no unit: write a rate such as 100Gbps, 500Mbps or 1000bps
//
// The formatters print the exact value with the largest unit that keeps it
// short: format_rate(bits_per_sec{100'000'000'000}) == "100Gbps",
// format_time(nanos{55'000}) == "55us", format_bytes(bytes{98304}) == "96KiB".
// parse(format(x)) == x for every value.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/result.hpp"
#include "core/units.hpp"

namespace rocelab {

// Whether a number without a unit is accepted (only where SONiC fixes the unit).
enum class bare_number : bool { rejected, accepted };

result<bits_per_sec> parse_rate(std::string_view text);

// `bare_unit`: the unit of a bare number (e.g. nanos{1'000'000'000} for a
// field in seconds); none = a bare number is rejected.
result<nanos> parse_time(std::string_view text, std::optional<nanos> bare_unit = std::nullopt);

// A bare number, when accepted, is a count of bytes.
result<bytes> parse_bytes(std::string_view text, bare_number bare = bare_number::rejected);

// "5%" -> 5.0. A bare number, when accepted, is in percent.
result<double> parse_percent(std::string_view text, bare_number bare = bare_number::rejected);

std::string format_rate(bits_per_sec rate);
std::string format_time(nanos time);
std::string format_bytes(bytes size);
// For people, not for parsing back: the largest binary unit with one
// decimal, "23.5GiB", "75.3KiB", "512B".
std::string format_bytes_approx(bytes size);

}  // namespace rocelab
