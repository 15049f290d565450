// DEVICE_METADATA: the switch MAC and the buffer model.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view model_choices[] = {"traditional", "dynamic"};
constexpr std::string_view refused[] = {"hostname", "hwsku", "platform", "type", "bgp_asn", "deployment_id"};

namespace fld {

constexpr field_spec mac =
    a_field(field_kind::mac, "mac", "each port's own",
            "the switch (router) MAC used on every port; not set: each port uses its own MAC "
            "(PORT `mac`, else the device's)");
constexpr field_spec buffer_model =
    choice_field("buffer_model", model_choices, "`traditional`",
                 "what the buffer tables mean (see DEVICE_METADATA buffer_model below)");
constexpr field_spec all[] = {mac, buffer_model};

}  // namespace fld
}  // namespace

constexpr table_spec device_metadata_table =
    one_key_table("DEVICE_METADATA", "localhost", "the switch MAC and the buffer model.", fld::all, refused);

void loader::load_device_metadata(const entry& t) {
    with_only_key(t, device_metadata_table, [&](const field_map& f) {
        read(f, fld::mac, _cfg.switch_mac);
        if (const auto* e = find(f, fld::buffer_model)) {
            _cfg.model = get_choice(*e, fld::buffer_model) == "dynamic" ? buffer_model::dynamic
                                                                        : buffer_model::traditional;
        }
    });
}

}  // namespace rocelab::detail
