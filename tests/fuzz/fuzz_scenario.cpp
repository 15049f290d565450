// fuzz_scenario - the rocelab-fabric inputs: load_topology_from_string on
// arbitrary text (both forms: nodes, or switches/hosts/traffic with
// expectations), and parse_expectation + evaluate on arbitrary text (first
// byte selects). Nothing may crash or let an exception out; every failure is
// one non-empty error message; a loaded topology is consistent (every link
// names existing nodes and ports in range, every host its own port).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fabric/expect.hpp"
#include "fabric/topology.hpp"
#include "fuzz_common.hpp"

using namespace rocelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) { return 0; }
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1) == 0) {
        // Config files named in the text resolve under a directory that does
        // not exist: they fail to open (one error), never read this machine.
        auto r = load_topology_from_string(text, "fuzz.yaml", "/nonexistent-rocelab-fuzz");
        if (!r) {
            FUZZ_CHECK(!r.error().message.empty());
            return 0;
        }
        const topology_cfg& t = *r;
        FUZZ_CHECK(!t.nodes.empty());
        FUZZ_CHECK(t.duration.v > 0);
        for (const auto& l : t.links) {
            FUZZ_CHECK(l.a < t.nodes.size() && l.b < t.nodes.size());
            FUZZ_CHECK(l.pa >= 0 && l.pb >= 0);
            for (auto [n, p] : {std::pair{l.a, l.pa}, std::pair{l.b, l.pb}}) {
                if (t.nodes[n].kind == topo_node::kind_t::switch_node) {
                    FUZZ_CHECK(static_cast<std::size_t>(p) < t.nodes[n].sw.ports.size());
                } else {
                    FUZZ_CHECK(p < 1024);
                }
            }
            FUZZ_CHECK(l.cable.rate.v > 0 && l.cable.delay.v >= 0 && l.cable.loss >= 0 && l.cable.loss <= 1);
        }
        if (t.hosts_node != SIZE_MAX) {
            FUZZ_CHECK(t.hosts_node < t.nodes.size());
            FUZZ_CHECK(t.hosts.size() >= 2 && t.hosts.size() <= 1024);
        }
        return 0;
    }
    auto e = parse_expectation(text);
    if (!e) {
        FUZZ_CHECK(!e.error().message.empty());
        return 0;
    }
    int calls = 0;
    const expect_result r = evaluate(*e, [&](const expect_metric& m, std::string& err) -> std::optional<double> {
        ++calls;
        if (m.name.size() % 3 == 0) {
            err = "no such metric";
            return std::nullopt;
        }
        return double(m.name.size()) - 2.0;
    });
    FUZZ_CHECK(!r.detail.empty());
    FUZZ_CHECK(static_cast<std::size_t>(calls) <= metrics_of(*e).size());
    return 0;
}
