// WRED_PROFILE: WRED/ECN profiles by name, bound to egress queues by QUEUE
// wred_profile. AZURE_LOSSLESS is built in (SONiC's default); the file may
// redefine it.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view true_false[] = {"true", "false"};
constexpr std::string_view refused[] = {"ecn_green_min_threshold",    "ecn_green_max_threshold",
                                        "ecn_green_mark_probability", "ecn_yellow_min_threshold",
                                        "ecn_yellow_max_threshold",   "ecn_yellow_mark_probability",
                                        "ecn_red_min_threshold",      "ecn_red_max_threshold",
                                        "ecn_red_mark_probability",   "wred_weight"};

namespace fld {

constexpr std::uint64_t max_threshold = 1ULL << 32;

constexpr field_spec enable(std::string_view name, std::string_view colour_doc) {
    return choice_field(name, true_false, "`false`", colour_doc);
}
// A colour's min_threshold, or (limit "at least min_threshold") its max_threshold.
constexpr field_spec threshold(std::string_view name, std::string_view doc, std::string_view limit = {}) {
    return byte_count_field(name, 0, max_threshold, "none", doc, limit);
}
constexpr field_spec max_threshold_of(std::string_view name, std::string_view doc) {
    return threshold(name, doc, "at least min_threshold");
}
constexpr field_spec probability(std::string_view name, std::string_view doc) {
    return count_field(name, 0, 100, "a percentage", "100", doc);
}

constexpr field_spec wred_green_enable =
    enable("wred_green_enable",
           "drop green packets with probability p(q) (Not-ECT packets; ECT ones too when `ecn` does "
           "not mark green)");
constexpr field_spec wred_yellow_enable = enable("wred_yellow_enable", "as `wred_green_enable`, for yellow");
constexpr field_spec wred_red_enable = enable("wred_red_enable", "as `wred_green_enable`, for red");
constexpr std::string_view ecn_doc = "colours whose ECN-capable packets are marked CE instead of dropped";
constexpr field_spec ecn = choice_field("ecn", ecn_mode_names, "`ecn_none`", ecn_doc);

// A colour's three fields: min_threshold, max_threshold and drop_probability.
struct colour_fields {
    field_spec min_threshold;
    field_spec max_threshold;
    field_spec drop_probability;
};
constexpr colour_fields colour_of(std::string_view min_name, std::string_view max_name,
                                  std::string_view prob_name, std::string_view min_doc,
                                  std::string_view max_doc, std::string_view prob_doc) {
    return {threshold(min_name, min_doc), max_threshold_of(max_name, max_doc),
            probability(prob_name, prob_doc)};
}
constexpr colour_fields green =
    colour_of("green_min_threshold", "green_max_threshold", "green_drop_probability",
              "Kmin: no marking/dropping at or below this queue depth",
              "Kmax: everything above it is marked/dropped", "Pmax, in percent: the probability at Kmax");
constexpr colour_fields yellow =
    colour_of("yellow_min_threshold", "yellow_max_threshold", "yellow_drop_probability",
              "Kmin for yellow (checked, unused)", "Kmax for yellow (checked, unused)",
              "Pmax for yellow (checked, unused)");
constexpr colour_fields red = colour_of("red_min_threshold", "red_max_threshold", "red_drop_probability",
                                        "Kmin for red (checked, unused)", "Kmax for red (checked, unused)",
                                        "Pmax for red (checked, unused)");

// SONiC's order: the enables, ecn, then each colour's thresholds and probability.
constexpr field_spec all[] = {
    wred_green_enable,    wred_yellow_enable,      wred_red_enable,        ecn,
    green.min_threshold,  green.max_threshold,     green.drop_probability, yellow.min_threshold,
    yellow.max_threshold, yellow.drop_probability, red.min_threshold,      red.max_threshold,
    red.drop_probability};

// One colour's fields, and where they go in wred_profile_cfg.
struct colour {
    std::string_view name;
    const field_spec& enable;
    const colour_fields& fields;
    bool wred_profile_cfg::*enable_to;
    bytes wred_profile_cfg::*min_to;
    bytes wred_profile_cfg::*max_to;
    std::uint8_t wred_profile_cfg::*drop_probability_to;
    bool (*ecn_marks)(ecn_mode) noexcept;
};

}  // namespace fld
}  // namespace

constexpr table_spec wred_profile_table = keyed_table(
    "WRED_PROFILE", "a profile name (`AZURE_LOSSLESS` is built in)",
    "WRED/ECN profiles (SONiC's fields and units: thresholds in bytes, probabilities in percent).", fld::all,
    refused);

void loader::load_wred_profiles(const entry* t) {
    _wred_profiles.clear();
    _wred_profiles["AZURE_LOSSLESS"] = azure_lossless_wred_profile();
    if (t == nullptr) {
        return;
    }
    using wp = wred_profile_cfg;
    const fld::colour colours[] = {
        {"green", fld::wred_green_enable, fld::green, &wp::wred_green_enable, &wp::green_min_threshold,
         &wp::green_max_threshold, &wp::green_drop_probability, ecn_marks_green},
        {"yellow", fld::wred_yellow_enable, fld::yellow, &wp::wred_yellow_enable, &wp::yellow_min_threshold,
         &wp::yellow_max_threshold, &wp::yellow_drop_probability, ecn_marks_yellow},
        {"red", fld::wred_red_enable, fld::red, &wp::wred_red_enable, &wp::red_min_threshold,
         &wp::red_max_threshold, &wp::red_drop_probability, ecn_marks_red},
    };
    for (const auto& k : entries(*t)) {
        const std::string& path = k.path;
        check_entry_name(k, "a profile name");
        const auto f = fields(k, wred_profile_table);
        wred_profile_cfg w;
        w.name = k.key;
        if (const auto* e = find(f, fld::ecn)) {
            w.ecn = *parse_ecn_mode(get_choice(*e, fld::ecn));
        }
        for (std::size_t c = 0; c < std::size(colours); ++c) {
            const fld::colour& cf = colours[c];
            const std::string col(cf.name);
            bool* enable = &(w.*cf.enable_to);
            bytes* lo = &(w.*cf.min_to);
            bytes* hi = &(w.*cf.max_to);
            std::uint8_t* prob = &(w.*cf.drop_probability_to);
            const bool marks = cf.ecn_marks(w.ecn);
            if (const auto* e = find(f, cf.enable)) {
                *enable = get_choice(*e, cf.enable) == "true";
            }
            const auto* emin = find(f, cf.fields.min_threshold);
            const auto* emax = find(f, cf.fields.max_threshold);
            if (emin != nullptr) {
                *lo = get_bytes(*emin, cf.fields.min_threshold);
            }
            if (emax != nullptr) {
                *hi = get_bytes(*emax, cf.fields.max_threshold);
                if (emin != nullptr && *hi < *lo) {
                    fail(mark_of(*emax), emax->path,
                         quote(emax->value.Scalar()) + " is below " + col + "_min_threshold " +
                             std::to_string(lo->v) + ": accepted " + std::to_string(lo->v) + ".." +
                             std::to_string(cf.fields.max_threshold.hi) +
                             " bytes (max_threshold >= min_threshold)");
                }
            }
            read(f, cf.fields.drop_probability, *prob);
            // Green is what RoCE uses: its thresholds must be written when
            // green is dropped or marked. Yellow/red are checked but unused.
            if (c == 0 && (*enable || marks) && (emin == nullptr || emax == nullptr)) {
                fail(k.key_node.Mark(), path,
                     col + "_min_threshold and " + col + "_max_threshold (bytes) are required when " +
                         (*enable ? "wred_" + col + "_enable is true" : "ecn marks " + col) + "; missing: " +
                         (emin == nullptr && emax == nullptr
                              ? col + "_min_threshold, " + col + "_max_threshold"
                          : emin == nullptr ? col + "_min_threshold"
                                            : col + "_max_threshold"));
            }
        }
        _wred_profiles[k.key] = w;
    }
}

}  // namespace rocelab::detail
