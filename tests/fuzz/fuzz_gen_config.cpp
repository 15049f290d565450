// fuzz_gen_config - load_gen_cfg_from_string on arbitrary text, then
// expand_gen_cfg for 1..4 ports when it loads (what rocelab-gen does next).
// Neither may crash or let an exception out (rocelab-gen calls them without
// a try block); every failure is one error message.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/gen_config.hpp"
#include "fuzz_common.hpp"

using namespace rocelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) { return 0; }
    const int nports = 1 + data[0] % 4;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    auto r = load_gen_cfg_from_string(text, "fuzz.yaml");
    if (!r) {
        FUZZ_CHECK(!r.error().message.empty());
        return 0;
    }
    gen_cfg c = *r;
    const std::string e = expand_gen_cfg(c, nports);
    if (!e.empty()) { return 0; }
    for (const auto& f : c.flows) {
        FUZZ_CHECK(f.src_host >= 0 && static_cast<std::size_t>(f.src_host) < c.hosts.size());
        FUZZ_CHECK(f.dst_host >= 0 && static_cast<std::size_t>(f.dst_host) < c.hosts.size());
    }
    for (const auto& h : c.hosts) { FUZZ_CHECK(h.port >= 0 && h.port < nports); }
    return 0;
}
