// buffer_cfg.hpp - validated configuration of the lossless-class state
// machines: ingress buffer accounting (mmu.hpp), the headroom formula
// (headroom.hpp), PFC/PAUSE generation (pfc_tx.hpp) and the PFC watchdog
// (pfc_watchdog.hpp).
//
// These structs live with the QoS code that reads them; lib/config fills
// them from SONiC's BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / CABLE_LENGTH /
// PFC_WD tables (config/switch_cfg.hpp includes this header), so lib/qos never
// includes lib/config (tests/layering.py checks it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/units.hpp"

namespace rocelab {

// ---- lossless classes (BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / PFC_WD) ----

enum class threshold_mode : std::uint8_t { dynamic_th, static_th };

// One ingress priority group's buffer profile, resolved (SONiC BUFFER_PROFILE
// bound by BUFFER_PG). A PG is lossless when xoff > 0 or xoff_auto.
//
// xoff: auto (and the built-in default's lossless PGs 3 and 4) computes xoff,
// xon and - when the profile gives no size - reserved from the port's speed
// and cable length (qos/headroom.hpp). The loader does it when PORT gives a
// speed; otherwise the PG stays pending (xoff 0) until resolve_port_speeds()
// (config/switch_config.hpp) fills in the driver's speed at start-up.
struct pg_buffer_cfg {
    bool configured = false;     // false: no BUFFER_PG entry -> lossy, pool-limited only
    bytes reserved{0};           // `size`: guaranteed bytes before the shared pool is used
    threshold_mode mode = threshold_mode::dynamic_th;
    int dynamic_th = 0;          // alpha = 2^dynamic_th (SONiC range -8..8)
    bytes static_th{0};          // static shared limit (bytes) when mode == static_th
    bytes xoff{0};               // headroom reserved for this PG; > 0 = lossless
    std::optional<bytes> xon;         // XON when the PG's shared use falls below this level
    std::optional<bytes> xon_offset;  // ... or below (threshold - xon_offset)
    bool xoff_auto = false;      // xoff/xon from the headroom formula at the port's speed
    bool reserved_auto = false;  // xoff_auto and no `size`: reserved = formula size - xoff
    bool lossless() const noexcept { return xoff.v > 0 || xoff_auto; }
    // xoff: auto not yet computed (the port's speed is not known yet).
    bool headroom_pending() const noexcept { return xoff_auto && xoff.v == 0; }
};

// Built-in default (no BUFFER_* table in the file): ingress_lossless_pool,
// 12MiB, 96-byte cells, dynamic (default_switch_cfg()).
struct buffer_pool_cfg {
    bool enabled = false;        // false: buffer accounting off (e.g. BUFFER_POOL: {})
    std::string name;            // the BUFFER_POOL key, for messages
    bytes size{0};               // shared ingress pool, bytes (SONiC BUFFER_POOL size)
    bytes cell{0};               // accounting cell; 0 = exact bytes
    threshold_mode mode = threshold_mode::dynamic_th;  // BUFFER_POOL mode (profiles may use either threshold)
    // Shared headroom pool (SONiC BUFFER_POOL xoff, or the lossless PGs'
    // xoff / over_subscribe_ratio): > 0 = the headroom of every lossless PG
    // is taken from this many bytes, each PG still capped at its own xoff,
    // instead of being reserved per PG. Carved out of `size`: shared part =
    // size - sum(reserved) - shared_headroom.
    bytes shared_headroom{0};
    double over_subscribe_ratio = 0;  // > 0: shared_headroom was computed from it
};

// Inputs of the headroom formula (reference 2.3), SONiC's example ASIC values.
struct headroom_asic_cfg {
    bytes cell{96};
    bytes pipeline_latency{18 * 1024};   // XON
    double mac_phy_delay_bytes = 819.2;  // 0.8 KiB
    double small_packet_percent = 100.0;
    bytes lossless_mtu{1500};
    bytes port_mtu{9100};
    double propagation_m_per_s = 1.98e8;
};

enum class pfc_wd_action : std::uint8_t { drop, forward, alert };

struct pfc_wd_cfg {
    bool enabled = false;
    nanos detection_time{200'000'000};    // 200ms
    nanos restoration_time{200'000'000};  // 200ms
    pfc_wd_action action = pfc_wd_action::drop;
    nanos poll_interval{10'000'000};      // 10ms (rocelab polls in software; SONiC 100..1000ms)
};

enum class flow_ctrl_mode : std::uint8_t { pfc, pause };

}  // namespace rocelab
