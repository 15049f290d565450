// topology.hpp - the virtual-time runner's topology file (rocelab-fabric).
//
// What: a small YAML file naming the nodes of a fabric (each a
// rocelab-switch or rocelab-gen configuration, in its own file or inline),
// the cables between their ports and how long to run, in fabric time.
// docs/fabric.md describes the format; conf/fabric/ holds examples.
//
//   duration: 10ms                 # fabric time (default 10ms; --duration overrides)
//   link: {rate: 100Gbps, delay: 25ns}   # defaults for every cable below
//   nodes:
//     - {name: leaf0, switch: ../leaf-9x100g.yaml}        # a rocelab-switch config file
//     - {name: hosts, gen: {pattern: incast, senders: 8}} # a rocelab-gen config, inline
//   links:
//     - {a: hosts:0..8, b: leaf0:0..8}    # ranges pair up one by one
//     - {a: hosts:9, b: leaf0:Ethernet9, rate: 40Gbps, delay: 1us, loss: 0.1%}
//
// Scenario form (docs/scenarios.md): instead of `nodes`, name the
// `switches` ({name, config: FILE|{...}}), the `hosts` ("h0..h8", or a list
// of names or of {name, mac, ip}) and the `traffic` (a rocelab-gen config
// without hosts: its flows name the hosts); a link end may be a host name
// or range (h3, h0..h7). `expect` (both forms) lists expectations
// (fabric/expect.hpp) checked at the end; `name`, `description` and
// `sample_interval` (time series period) are optional.
//
// Ports: a switch port by its PORT name (Ethernet4) or its index in the
// PORT table (4); a generator port by index (its hosts' `port`). Paths are
// relative to the topology file. A switch's PORT entries need no port_id
// or device in virtual time (a port is its cable); given ones are ignored.
// Cable keys: rate (> 0), delay (>= 0, propagation), loss (0..100 %,
// per direction, seeded), loss_seed, tx_ring_size / rx_ring_size
// (descriptors, 1..65536), flow_control (pfc | credit: InfiniBand-style
// link-level credits instead of PFC, docs/fabric.md "Credit flow control"),
// credits (with credit: the buffer a switch port gives per lossless class;
// default its priority group's reserved + headroom bytes).
// Errors name the file, the field and what is accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/expect.hpp"
#include "config/gen_config.hpp"
#include "config/result.hpp"
#include "config/switch_cfg.hpp"
#include "core/units.hpp"

namespace rocelab {

struct topo_cable {
    bits_per_sec rate{100'000'000'000ULL};
    nanos delay{25};  // 5 m of fibre, SONiC's default CABLE_LENGTH
    double loss = 0.0;
    std::uint64_t loss_seed = 1;
    std::uint32_t tx_ring_size = 256;
    std::uint32_t rx_ring_size = 1024;
    bool credit = false;             // flow_control: credit (InfiniBand-style credits instead of PFC)
    std::uint64_t credit_bytes = 0;  // credits: buffer per lossless class; 0 = its PG's guaranteed bytes
};

struct topo_node {
    enum class kind_t : std::uint8_t { switch_node, gen_node } kind{};
    std::string name;
    std::string config_source;  // file path, or "<topology>:nodes[i]" when inline
    switch_cfg sw;              // kind == switch_node
    gen_cfg gen;                // kind == gen_node
};

struct topo_link {
    std::size_t a = 0, b = 0;  // node indices
    int pa = 0, pb = 0;        // port indices
    topo_cable cable;
    std::string where;  // "links[3]" (error messages, reports)
};

struct topology_cfg {
    std::string source;
    std::string name;         // scenario name (default: the file's stem)
    std::string description;  // what it shows (free text)
    nanos duration{10'000'000};
    nanos sample_interval{0};  // time series period; 0 = duration / 200, at least 1us
    std::vector<topo_node> nodes;
    std::vector<topo_link> links;
    // Scenario form: the hosts (one generator node holds them all; host i
    // is that node's port i) and the expectations checked at the end.
    std::vector<std::string> hosts;
    std::size_t hosts_node = SIZE_MAX;  // index in nodes, SIZE_MAX = none
    std::vector<expectation> expect;
};

result<topology_cfg> load_topology(const std::string& path) noexcept;
result<topology_cfg> load_topology_from_string(const std::string& yaml, const std::string& source,
                                               const std::string& base_dir) noexcept;

}  // namespace rocelab
