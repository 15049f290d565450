// SWITCH: FDB aging.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

using namespace literals;

constexpr std::string_view refused[] = {"ecmp_hash_seed", "lag_hash_seed", "fdb_unicast_miss_packet_action"};

namespace fld {

// SONiC gives this in seconds, so a bare number is accepted.
constexpr field_spec fdb_aging_time = time_field("fdb_aging_time", (1_s).v, (1000000_s).v, (1_s).v, "`300s`",
                                                 "an FDB entry not refreshed for this long is removed");
constexpr field_spec all[] = {fdb_aging_time};

}  // namespace fld
}  // namespace

constexpr table_spec switch_table =
    one_key_table("SWITCH", "switch", "switch-wide settings: FDB aging.", fld::all, refused);

void loader::load_switch(const entry& t) {
    with_only_key(t, switch_table, [&](const field_map& f) { read(f, fld::fdb_aging_time, _cfg.fdb_aging); });
}

}  // namespace rocelab::detail
