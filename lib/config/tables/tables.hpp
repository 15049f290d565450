// tables.hpp - the descriptor of every table of the switch configuration
// (config/schema.hpp), each defined as a constant in its own file in this
// folder next to the table's loading code (private to lib/config).
#pragma once

#include "config/schema.hpp"

namespace rocelab::detail {

extern const table_spec rocelab_table;          // rocelab.cpp
extern const table_spec headroom_table;         // rocelab.cpp: ROCELAB|headroom
extern const table_spec device_metadata_table;  // device_metadata.cpp
extern const table_spec switch_table;           // switch.cpp
extern const table_spec port_table;             // port.cpp
extern const table_spec breakout_cfg_table;     // breakout_cfg.cpp
extern const table_spec dscp_to_tc_map_table;   // maps.cpp (the five maps)
extern const table_spec dot1p_to_tc_map_table;
extern const table_spec tc_to_queue_map_table;
extern const table_spec tc_to_priority_group_map_table;
extern const table_spec map_pfc_priority_to_queue_table;
extern const table_spec scheduler_table;                          // scheduler.cpp
extern const table_spec wred_profile_table;                       // wred_profile.cpp
extern const table_spec port_qos_map_table;                       // port_qos_map.cpp
extern const table_spec queue_table;                              // queue.cpp
extern const table_spec cable_length_table;                       // cable_length.cpp
extern const table_spec default_lossless_buffer_parameter_table;  // default_lossless.cpp
extern const table_spec buffer_pool_table;                        // buffer_pool.cpp
extern const table_spec buffer_profile_table;                     // buffer_profile.cpp
extern const table_spec buffer_pg_table;                          // buffer_pg.cpp
extern const table_spec buffer_queue_table;                       // buffer_queue.cpp
extern const table_spec pfc_wd_table;                             // pfc_wd.cpp
extern const table_spec pfc_wd_global_table;                      // pfc_wd.cpp: PFC_WD|GLOBAL
extern const table_spec interface_table;                          // interface.cpp
extern const table_spec route_table;                              // route.cpp
extern const table_spec neigh_table;                              // neigh.cpp

// The largest size a BUFFER_POOL or BUFFER_PROFILE byte field accepts (64 GiB).
inline constexpr std::uint64_t max_buffer_bytes = 1ULL << 36;

// An exponent -8..8: alpha = 2^value of a dynamic threshold (BUFFER_PROFILE
// dynamic_th, DEFAULT_LOSSLESS_BUFFER_PARAMETER default_dynamic_th).
constexpr field_spec dynamic_th_field(std::string_view name, std::string_view dflt, std::string_view doc) {
    field_spec f = ranged_field(field_kind::integer, name, -8, 8, dflt, doc);
    f.noun = "an exponent (alpha = 2^dynamic_th)";
    return f;
}

}  // namespace rocelab::detail
