// headroom.hpp - lossless PG headroom sizing (xoff / xon / size) from port
// speed and cable length, the "well-known formula" of SONiC's dynamic buffer
// calculation (ROCE_REFERENCE.md 2.3). Control path only (uses double).
//
// What: how many bytes can still arrive on an ingress PG after the switch
// decides to send XOFF, and therefore how much headroom to reserve.
//
// Parameters (headroom_asic_cfg, qos/buffer_cfg.hpp; ROCELAB.headroom):
//   cell                   accounting cell of the buffer (96 B example ASIC)
//   pipeline_latency       XON level (18 KiB)
//   mac_phy_delay_bytes    bytes in our own egress MAC/PHY when XOFF goes out
//   small_packet_percent   share of minimum-size (64 B) packets, 0..100
//   lossless_mtu           largest lossless packet (1500)
//   port_mtu               port MTU (9100)
//   propagation_m_per_s    signal speed in the cable (1.98e8 m/s)
// plus headroom_options: gearbox delay, 8-lane port, shared headroom pool,
// and the SONiC Lua compatibility mode.
//
// Derivation (all in bytes, rate_Bps = speed_bps / 8, i.e. Gb/s x 1e9 / 8):
//   cable_rt     = 2 x cable_m / v x rate_Bps               (round trip)
//   gearbox      = gearbox_delay_s x rate_Bps               (one way)
//   peer         = quanta(speed) x 512 / 8                  (802.3 31B.3.7)
//   propagation  = port_mtu + cable_rt + 2 x gearbox + mac_phy + peer
//   wcf          = cell / 64            if cell > 128
//                = 2 cell / (1 + cell)  otherwise
//   occupancy    = (100 - small% + small% x wcf) / 100
//   xoff         = ceil_1KiB(lossless_mtu + propagation x occupancy)
//   xon          = ceil_1KiB(pipeline_latency)       (8-lane: 2 x pipeline - 1 KiB)
//   size         = ceil_1KiB(xoff + xon (+ port_mtu on 8-lane ports))
//                  (shared headroom pool: size = xon only)
//
// Peer response quanta per speed (802.3 31B.3.7, as SONiC's table):
//   100M 1, 1G 2, 10G 67, 25G 80, 40G 118, 50G 147, 100G 394, 200G 453,
//   400G 905, 800G 905 (SONiC reuses the 400G value).
// A speed between rows takes the NEXT HIGHER row (e.g. 20G -> the 25G row,
// 80 quanta): a faster MAC has a larger quanta budget in this table, so this
// is the conservative choice. Faster than 800G uses the 800G row.
// (SONiC instead falls back to the ASIC's peer_response_time.)
//
// sonic_lua_rounding: reproduces sonic-swss buffer_headroom_mellanox.lua,
// which converts the Mb/s speed with 1e9/1024 instead of 1e6 in the cable
// term (2.3 % fewer bytes) and divides the gearbox term by 8 x 1024 instead
// of 8 x 1000. Only use it to match a SONiC switch byte for byte.
//
// Worked values (example ASIC above; reference 2.3 table):
//   100G / 5 m   -> xoff 72704,  xon 18432, size 91136
//   100G / 40 m  -> xoff 81920,  xon 18432, size 100352  (Lua mode: xoff 80896)
//   100G / 300 m -> xoff 146432, xon 18432, size 164864  (Lua mode: 144384)
//   400G / 40 m  -> xoff 176128, xon 18432, size 194560  (Lua mode: 175104)
//
// Config example:
//   ROCELAB: { headroom: { cell: 96B, pipeline_latency: 18KiB } }
//   headroom_result h = compute_headroom(100_Gbps, 40.0, cfg.asic);
//   pg.xoff = h.xoff;  pg.xon = h.xon;
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "qos/buffer_cfg.hpp"
#include "core/units.hpp"

namespace rocelab {

struct headroom_result {
    bytes xoff{0};                 // headroom reserved above the XOFF point
    bytes xon{0};                  // XON level (pipeline latency)
    bytes size{0};                 // total headroom for the PG
    double propagation_bytes = 0;  // propagation term before cell inflation
    double cell_occupancy = 1.0;   // inflation factor for small packets
};

struct headroom_options {
    bool sonic_lua_rounding = false;    // reproduce SONiC Lua's 1e9/1024 factor
    bool eight_lane = false;            // 8-lane port: xon = 2 x pipeline - 1 KiB, size += port MTU
    bool shared_headroom_pool = false;  // only xon is reserved per PG: size = xon
    nanos gearbox_delay{0};             // one-way gearbox delay, counted in both directions
};

// 802.3 Annex 31B.3.7 response budget in pause quanta for a link speed.
// Speeds between rows take the next higher row; above 800G, the 800G row.
constexpr std::uint16_t peer_response_quanta(bits_per_sec speed) noexcept {
    struct row {
        std::uint64_t bps;
        std::uint16_t quanta;
    };
    constexpr std::array<row, 10> table{{
        {100'000'000ULL, 1},
        {1'000'000'000ULL, 2},
        {10'000'000'000ULL, 67},
        {25'000'000'000ULL, 80},
        {40'000'000'000ULL, 118},
        {50'000'000'000ULL, 147},
        {100'000'000'000ULL, 394},
        {200'000'000'000ULL, 453},
        {400'000'000'000ULL, 905},
        {800'000'000'000ULL, 905},
    }};
    for (const row& r : table) {
        if (speed.v <= r.bps) {
            return r.quanta;
        }
    }
    return table.back().quanta;
}

// Round a non-negative byte amount up to a multiple of 1024.
inline bytes ceil_to_kib(double b) noexcept {
    if (b <= 0) {
        return bytes{0};
    }
    return bytes{static_cast<std::uint64_t>(std::ceil(b / 1024.0)) * 1024u};
}

inline headroom_result compute_headroom(bits_per_sec speed, double cable_length_m,
                                        const headroom_asic_cfg& asic,
                                        const headroom_options& opt = {}) noexcept {
    constexpr double min_packet = 64.0;
    const double speed_bps = static_cast<double>(speed.v);
    const double v = asic.propagation_m_per_s > 0 ? asic.propagation_m_per_s : 1.98e8;

    double cable_rt = 0;  // round trip, bytes
    double gearbox = 0;   // one way, bytes
    const double gearbox_ns = static_cast<double>(opt.gearbox_delay.v);
    if (opt.sonic_lua_rounding) {
        // Lua: speed in Mb/s; 2 x len x speed x 1e9 / v / (8 x 1024);
        //      gearbox: speed x delay / (8 x 1024).
        const double speed_mbps = speed_bps / 1e6;
        cable_rt = 2.0 * cable_length_m * speed_mbps * 1e9 / v / (8.0 * 1024.0);
        gearbox = speed_mbps * gearbox_ns / (8.0 * 1024.0);
    } else {
        const double rate_Bps = speed_bps / 8.0;
        cable_rt = 2.0 * cable_length_m / v * rate_Bps;
        gearbox = gearbox_ns * 1e-9 * rate_Bps;
    }
    const double peer = static_cast<double>(peer_response_quanta(speed)) * 512.0 / 8.0;

    const double cell = static_cast<double>(asic.cell.v);
    double wcf = 1.0;
    if (cell > 2.0 * min_packet) {
        wcf = cell / min_packet;
    } else if (cell > 0) {
        wcf = 2.0 * cell / (1.0 + cell);
    }
    const double small = asic.small_packet_percent;
    const double occupancy = (100.0 - small + small * wcf) / 100.0;

    const double propagation =
        static_cast<double>(asic.port_mtu.v) + cable_rt + 2.0 * gearbox + asic.mac_phy_delay_bytes + peer;

    headroom_result r;
    r.propagation_bytes = propagation;
    r.cell_occupancy = occupancy;
    r.xoff = ceil_to_kib(static_cast<double>(asic.lossless_mtu.v) + propagation * occupancy);
    double xon = static_cast<double>(asic.pipeline_latency.v);
    double overhead = 0;
    if (opt.eight_lane) {
        xon = 2.0 * xon - 1024.0;
        overhead = static_cast<double>(asic.port_mtu.v);
    }
    r.xon = ceil_to_kib(xon);
    if (opt.shared_headroom_pool) {
        r.size = ceil_to_kib(static_cast<double>(r.xon.v));
    } else {
        r.size = ceil_to_kib(static_cast<double>(r.xoff.v + r.xon.v) + overhead);
    }
    return r;
}

}  // namespace rocelab
