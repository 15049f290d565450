// DEFAULT_LOSSLESS_BUFFER_PARAMETER (buffer_model dynamic).
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

// DEFAULT_LOSSLESS_BUFFER_PARAMETER: {AZURE: {default_dynamic_th: "0", over_subscribe_ratio: "2"}}.
void loader::load_default_lossless(const entry& t) {
    for (const auto& k : entries(t.value, t.key_node.Mark(), "DEFAULT_LOSSLESS_BUFFER_PARAMETER")) {
        const std::string path = "DEFAULT_LOSSLESS_BUFFER_PARAMETER|" + k.key;
        const auto f = fields(k, path, {"default_dynamic_th", "over_subscribe_ratio"});
        if (const auto* e = find(f, "default_dynamic_th")) {
            _cfg.default_dynamic_th = static_cast<int>(
                get_int(*e, path + "|default_dynamic_th", -8, 8, "an exponent (alpha = 2^dynamic_th)"));
        }
        if (const auto* e = find(f, "over_subscribe_ratio")) {
            const std::string expected = "a ratio 0..1000 such as 2 (0: no shared headroom pool)";
            const auto v = parse_decimal(scalar(*e, path + "|over_subscribe_ratio", expected));
            if (!v) {
                fail_value(*e, path + "|over_subscribe_ratio", expected);
            }
            if (*v > 1000.0) {
                fail(mark_of(*e), path + "|over_subscribe_ratio",
                     quote(e->value.Scalar()) + " is out of range: expected " + expected);
            }
            _cfg.over_subscribe_ratio = *v;
        }
        if (_cfg.model != buffer_model::dynamic) {
            _cfg.notes.push_back(path + ": only read with DEVICE_METADATA|localhost|buffer_model dynamic; "
                                        "this file uses the traditional model, so it has no effect");
            _cfg.default_dynamic_th = 0;
            _cfg.over_subscribe_ratio = 0;
        }
    }
}

}  // namespace rocelab::detail
