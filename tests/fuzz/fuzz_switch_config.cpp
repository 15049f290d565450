// fuzz_switch_config - load_switch_cfg_from_string on arbitrary text.
// The loader is noexcept and must turn every bad input into one config_error
// (a throw escaping it would terminate, which libFuzzer reports). A config
// that loads must also satisfy what the pipeline relies on: ports named,
// queue limits and maps in range.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/switch_config.hpp"
#include "fuzz_common.hpp"

using namespace rocelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = load_switch_cfg_from_string(text, "fuzz.yaml");
    if (!r) {
        FUZZ_CHECK(!r.error().message.empty());
        return 0;
    }
    const switch_cfg& c = *r;
    FUZZ_CHECK(c.source == "fuzz.yaml");
    // The effective configuration (--check-config) prints any config that loads.
    FUZZ_CHECK(!describe_switch_cfg(c).empty());
    for (const auto& n : c.notes) { FUZZ_CHECK(!n.empty() && n.find('\n') == std::string::npos); }
    for (const auto& p : c.ports) {
        FUZZ_CHECK(!p.name.empty());
        for (int i = 0; i < 64; ++i) { FUZZ_CHECK(p.maps.dscp_to_tc[i] < 8); }
        FUZZ_CHECK(p.maps.default_tc < 8);
        for (int i = 0; i < 8; ++i) {
            FUZZ_CHECK(p.maps.tc_to_queue[i] < 8 && p.maps.tc_to_pg[i] < 8 && p.maps.pcp_to_tc[i] < 8 &&
                       p.maps.pfc_prio_to_queue[i] < 8);
        }
    }
    return 0;
}
