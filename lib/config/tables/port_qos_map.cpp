// PORT_QOS_MAP: maps and PFC bound to ports ("global" first, then per-port
// entries on top).
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <map>

namespace rocelab::detail {
namespace {

// Per-port overrides parsed once from a PORT_QOS_MAP entry.
struct qos_override {
    std::optional<std::array<std::uint8_t, 64>> dscp_to_tc;
    std::optional<std::array<std::uint8_t, 8>> pcp_to_tc;
    std::optional<std::array<std::uint8_t, 8>> tc_to_queue;
    std::optional<std::array<std::uint8_t, 8>> tc_to_pg;
    std::optional<std::array<std::uint8_t, 8>> pfc_prio_to_queue;
    std::optional<std::uint8_t> pfc_enable;
    std::optional<std::uint8_t> pfcwd_queues;
    std::optional<flow_ctrl_mode> fc_mode;
    std::optional<std::uint16_t> pfc_quanta;
};

constexpr std::string_view pfc_mode_choices[] = {"pfc", "pause"};
constexpr std::string_view refused[] = {"pfc_to_pg_map", "scheduler", "pfc_asym"};

namespace fld {

// A *_map field: the name of a map of `table` (AZURE by default).
constexpr field_spec map_field(std::string_view name, std::string_view noun, std::string_view table,
                               std::string_view doc) {
    return reference_field(name, table, noun, "`AZURE`", doc);
}

constexpr field_spec dscp_to_tc_map =
    map_field("dscp_to_tc_map", "the name of a DSCP_TO_TC_MAP such as AZURE", "DSCP_TO_TC_MAP",
              "classifies frames of ports with `trust: dscp`");
constexpr field_spec dot1p_to_tc_map =
    map_field("dot1p_to_tc_map", "the name of a DOT1P_TO_TC_MAP such as AZURE", "DOT1P_TO_TC_MAP",
              "classifies frames of ports with `trust: pcp`");
constexpr field_spec tc_to_queue_map =
    map_field("tc_to_queue_map", "the name of a TC_TO_QUEUE_MAP such as AZURE", "TC_TO_QUEUE_MAP",
              "the egress queue of each traffic class");
constexpr field_spec tc_to_pg_map =
    map_field("tc_to_pg_map", "the name of a TC_TO_PRIORITY_GROUP_MAP such as AZURE",
              "TC_TO_PRIORITY_GROUP_MAP", "the ingress priority group of each traffic class");
constexpr field_spec pfc_to_queue_map =
    map_field("pfc_to_queue_map", "the name of a MAP_PFC_PRIORITY_TO_QUEUE such as AZURE",
              "MAP_PFC_PRIORITY_TO_QUEUE", "the egress queue each received PFC priority pauses");

constexpr std::string_view azure_3_4 = "`\"3,4\"` (SONiC AZURE)";
constexpr field_spec pfc_enable =
    number_set_field("pfc_enable", 7, "priorities", azure_3_4, "priorities that send and honour PFC");
constexpr field_spec pfcwd_sw_enable =
    number_set_field("pfcwd_sw_enable", 7, "queues", azure_3_4,
                     "the egress queues the PFC watchdog guards, on ports that have a PFC_WD entry");
constexpr field_spec pfc_mode =
    choice_field("pfc_mode", pfc_mode_choices, "`pfc`",
                 "**rocelab extension**: `pause` sends and honours 802.3x PAUSE (whole link) "
                 "instead of 802.1Qbb PFC; the lossless PGs and `pfc_enable` still decide when");
constexpr field_spec pfc_quanta =
    count_field("pfc_quanta", 1, 65535, "a pause time in quanta of 512 bit times", "65535",
                "**rocelab extension**: pause time put in each XOFF frame, in quanta of "
                "512 bit times (65535 = 335.5us at 100Gbps); XON (time 0) ends a pause "
                "early");
constexpr field_spec all[] = {dscp_to_tc_map,  dot1p_to_tc_map,  tc_to_queue_map,
                              tc_to_pg_map,    pfc_to_queue_map, pfc_enable,
                              pfcwd_sw_enable, pfc_mode,         pfc_quanta};

}  // namespace fld
}  // namespace

constexpr table_spec port_qos_map_table = keyed_table(
    "PORT_QOS_MAP",
    "a port, a comma list `\"Ethernet0,Ethernet4\"`, or `global` (also written `\"*\"`) for every port",
    "binds maps and PFC to ports: built-in defaults, then the `global` entry, then per-port entries.",
    fld::all, refused);

// The map a *_map field names.
template <std::size_t N>
std::array<std::uint8_t, N> loader::map_ref(const entry& e, const field_spec& f,
                                            const named_maps<N>& maps) const {
    return named(maps, get_text(e, f), e, "map name", f.ref_table);
}

void loader::load_port_qos_map(const entry& t) {
    const auto no_own_key = [](const entry&) { return false; };
    walk_port_keys(t, port_qos_map_table, no_own_key, [&](const entry&, const field_map& f) {
        qos_override o;
        if (const auto* e = find(f, fld::dscp_to_tc_map)) {
            o.dscp_to_tc = map_ref(*e, fld::dscp_to_tc_map, _dscp_maps);
        }
        if (const auto* e = find(f, fld::dot1p_to_tc_map)) {
            o.pcp_to_tc = map_ref(*e, fld::dot1p_to_tc_map, _dot1p_maps);
        }
        if (const auto* e = find(f, fld::tc_to_queue_map)) {
            o.tc_to_queue = map_ref(*e, fld::tc_to_queue_map, _tc_queue_maps);
        }
        if (const auto* e = find(f, fld::tc_to_pg_map)) {
            o.tc_to_pg = map_ref(*e, fld::tc_to_pg_map, _tc_pg_maps);
        }
        if (const auto* e = find(f, fld::pfc_to_queue_map)) {
            o.pfc_prio_to_queue = map_ref(*e, fld::pfc_to_queue_map, _pfc_queue_maps);
        }
        read(f, fld::pfc_enable, o.pfc_enable);
        read(f, fld::pfcwd_sw_enable, o.pfcwd_queues);
        if (const auto* e = find(f, fld::pfc_mode)) {
            o.fc_mode = get_choice(*e, fld::pfc_mode) == "pfc" ? flow_ctrl_mode::pfc : flow_ctrl_mode::pause;
        }
        read(f, fld::pfc_quanta, o.pfc_quanta);
        const auto apply = [o](port_cfg& p) {
            set_if(p.maps.dscp_to_tc, o.dscp_to_tc);
            set_if(p.maps.pcp_to_tc, o.pcp_to_tc);
            set_if(p.maps.tc_to_queue, o.tc_to_queue);
            set_if(p.maps.tc_to_pg, o.tc_to_pg);
            set_if(p.maps.pfc_prio_to_queue, o.pfc_prio_to_queue);
            set_if(p.pfc_enable, o.pfc_enable);
            set_if(p.pfcwd_queues, o.pfcwd_queues);
            set_if(p.fc_mode, o.fc_mode);
            set_if(p.pfc_quanta, o.pfc_quanta);
        };
        return
            [this, apply](std::size_t target) { for_target(target, [&](port_cfg& p, bool) { apply(p); }); };
    });
}

}  // namespace rocelab::detail
