// DEFAULT_LOSSLESS_BUFFER_PARAMETER (buffer_model dynamic):
// {AZURE: {default_dynamic_th: "0", over_subscribe_ratio: "2"}}.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {
namespace fld {

constexpr field_spec default_dynamic_th =
    dynamic_th_field("default_dynamic_th", "0", "dynamic_th of the computed lossless PGs (NULL profiles)");
constexpr field_spec over_subscribe_ratio =
    with_limit(ranged_field(field_kind::ratio, "over_subscribe_ratio", 0, 1000, "0",
                            "when the ingress pool has no `xoff`: the shared headroom pool is "
                            "the lossless PGs' xoff added up / ratio (rounded up; computed once "
                            "every port's speed is known)"),
               "0: no shared headroom pool");
constexpr field_spec all[] = {default_dynamic_th, over_subscribe_ratio};

}  // namespace fld
}  // namespace

constexpr table_spec default_lossless_buffer_parameter_table =
    keyed_table("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "a name (one entry; SONiC uses `AZURE`)",
                "the dynamic buffer model's defaults; only read with `buffer_model: dynamic`.", fld::all);

void loader::load_default_lossless(const entry& t) {
    for (const auto& k : entries(t)) {
        const auto f = fields(k, default_lossless_buffer_parameter_table);
        read(f, fld::default_dynamic_th, _cfg.default_dynamic_th);
        read(f, fld::over_subscribe_ratio, _cfg.over_subscribe_ratio);
        if (_cfg.model != buffer_model::dynamic) {
            _cfg.notes.push_back(k.path +
                                 ": only read with DEVICE_METADATA|localhost|buffer_model dynamic; "
                                 "this file uses the traditional model, so it has no effect");
            _cfg.default_dynamic_th = 0;
            _cfg.over_subscribe_ratio = 0;
        }
    }
}

}  // namespace rocelab::detail
