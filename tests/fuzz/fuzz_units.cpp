// fuzz_units - the unit parsers of config/units_parse.hpp and gen_cfg_set /
// gen_flow_set (the command-line and YAML setter of rocelab-gen).
//
// Input: byte 0 selects the bare-number mode, the rest is text; for the
// setters the text is split at the first '=' into key and value.
// Invariants: no crash, no exception out (rocelab-gen calls gen_cfg_set on
// its command line without a try block); a failure has a message; and, as
// units_parse.hpp promises, parse(format(x)) == x for every parsed value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/gen_config.hpp"
#include "config/units_parse.hpp"
#include "fuzz_common.hpp"

using namespace rocelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) { return 0; }
    const bool bare_ok = (data[0] & 1u) != 0;
    const bare_number bare = bare_ok ? bare_number::accepted : bare_number::rejected;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

    if (auto r = parse_rate(text)) {
        const std::string f = format_rate(*r);
        auto back = parse_rate(f);
        FUZZ_CHECK(back && back->v == r->v);
    } else {
        FUZZ_CHECK(!r.error().message.empty());
    }
    const std::optional<nanos> unit = bare_ok ? std::optional<nanos>(nanos{1'000'000'000}) : std::nullopt;
    if (auto r = parse_time(text, unit)) {
        const std::string f = format_time(*r);
        auto back = parse_time(f);
        FUZZ_CHECK(back && back->v == r->v);
    } else {
        FUZZ_CHECK(!r.error().message.empty());
    }
    if (auto r = parse_bytes(text, bare)) {
        const std::string f = format_bytes(*r);
        auto back = parse_bytes(f);
        FUZZ_CHECK(back && back->v == r->v);
    } else {
        FUZZ_CHECK(!r.error().message.empty());
    }
    if (auto r = parse_percent(text, bare)) {
        FUZZ_CHECK(*r >= 0.0);
    } else {
        FUZZ_CHECK(!r.error().message.empty());
    }

    const std::size_t eq = text.find('=');
    if (eq != std::string::npos) {
        const std::string key = text.substr(0, eq);
        const std::string value = text.substr(eq + 1);
        gen_cfg c;
        (void)gen_cfg_set(c, key, value);
        gen_flow f;
        (void)gen_flow_set(f, key, value);
    }
    return 0;
}
