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
    return {.name = name,
            .kind = field_kind::choice,
            .choices = true_false,
            .dflt = "`false`",
            .doc = colour_doc};
}
constexpr field_spec min_threshold(std::string_view name, std::string_view doc) {
    return {.name = name,
            .kind = field_kind::bytes,
            .lo = 0,
            .hi = max_threshold,
            .bare_unit = 1,
            .in_bytes = true,
            .dflt = "none",
            .doc = doc};
}
constexpr field_spec max_threshold_of(std::string_view name, std::string_view doc) {
    return {.name = name,
            .kind = field_kind::bytes,
            .lo = 0,
            .hi = max_threshold,
            .bare_unit = 1,
            .in_bytes = true,
            .limit = "at least min_threshold",
            .dflt = "none",
            .doc = doc};
}
constexpr field_spec probability(std::string_view name, std::string_view doc) {
    return {.name = name,
            .kind = field_kind::uint,
            .lo = 0,
            .hi = 100,
            .noun = "a percentage",
            .dflt = "100",
            .doc = doc};
}

constexpr field_spec wred_green_enable =
    enable("wred_green_enable",
           "drop green packets with probability p(q) (Not-ECT packets; ECT ones too when `ecn` does "
           "not mark green)");
constexpr field_spec wred_yellow_enable = enable("wred_yellow_enable", "as `wred_green_enable`, for yellow");
constexpr field_spec wred_red_enable = enable("wred_red_enable", "as `wred_green_enable`, for red");
constexpr std::string_view ecn_doc = "colours whose ECN-capable packets are marked CE instead of dropped";
constexpr field_spec ecn = choice_field("ecn", ecn_mode_names, "`ecn_none`", ecn_doc);
constexpr field_spec green_min_threshold =
    min_threshold("green_min_threshold", "Kmin: no marking/dropping at or below this queue depth");
constexpr field_spec green_max_threshold =
    max_threshold_of("green_max_threshold", "Kmax: everything above it is marked/dropped");
constexpr field_spec green_drop_probability =
    probability("green_drop_probability", "Pmax, in percent: the probability at Kmax");
constexpr field_spec yellow_min_threshold =
    min_threshold("yellow_min_threshold", "Kmin for yellow (checked, unused)");
constexpr field_spec yellow_max_threshold =
    max_threshold_of("yellow_max_threshold", "Kmax for yellow (checked, unused)");
constexpr field_spec yellow_drop_probability =
    probability("yellow_drop_probability", "Pmax for yellow (checked, unused)");
constexpr field_spec red_min_threshold = min_threshold("red_min_threshold", "Kmin for red (checked, unused)");
constexpr field_spec red_max_threshold =
    max_threshold_of("red_max_threshold", "Kmax for red (checked, unused)");
constexpr field_spec red_drop_probability =
    probability("red_drop_probability", "Pmax for red (checked, unused)");

// SONiC's order: the enables, ecn, then each colour's thresholds and probability.
constexpr field_spec all[] = {
    wred_green_enable,    wred_yellow_enable,      wred_red_enable,        ecn,
    green_min_threshold,  green_max_threshold,     green_drop_probability, yellow_min_threshold,
    yellow_max_threshold, yellow_drop_probability, red_min_threshold,      red_max_threshold,
    red_drop_probability};

// One colour's fields.
struct colour {
    std::string_view name;
    const field_spec& enable;
    const field_spec& min_threshold;
    const field_spec& max_threshold;
    const field_spec& drop_probability;
};

}  // namespace fld
}  // namespace

constexpr table_spec wred_profile_table{
    .name = "WRED_PROFILE",
    .key = "a profile name (`AZURE_LOSSLESS` is built in)",
    .doc = "WRED/ECN profiles (SONiC's fields and units: thresholds in bytes, probabilities in percent).",
    .fields = fld::all,
    .refused = refused,
};

void loader::load_wred_profiles(const entry* t) {
    _wred_profiles.clear();
    _wred_profiles["AZURE_LOSSLESS"] = azure_lossless_wred_profile();
    if (t == nullptr) {
        return;
    }
    const fld::colour colours[] = {
        {"green", fld::wred_green_enable, fld::green_min_threshold, fld::green_max_threshold,
         fld::green_drop_probability},
        {"yellow", fld::wred_yellow_enable, fld::yellow_min_threshold, fld::yellow_max_threshold,
         fld::yellow_drop_probability},
        {"red", fld::wred_red_enable, fld::red_min_threshold, fld::red_max_threshold,
         fld::red_drop_probability},
    };
    for (const auto& k : entries(*t)) {
        const std::string& path = k.path;
        if (k.key.empty() || k.key.find('|') != std::string::npos) {
            fail(k.key_node.Mark(), path, "a profile name must not be empty or contain '|'");
        }
        const auto f = fields(k, wred_profile_table);
        wred_profile_cfg w;
        w.name = k.key;
        if (const auto* e = find(f, fld::ecn)) {
            w.ecn = *parse_ecn_mode(get_choice(*e, fld::ecn));
        }
        for (std::size_t c = 0; c < std::size(colours); ++c) {
            const fld::colour& cf = colours[c];
            const std::string col(cf.name);
            bool* enable = c == 0   ? &w.wred_green_enable
                           : c == 1 ? &w.wred_yellow_enable
                                    : &w.wred_red_enable;
            bytes* lo = c == 0   ? &w.green_min_threshold
                        : c == 1 ? &w.yellow_min_threshold
                                 : &w.red_min_threshold;
            bytes* hi = c == 0   ? &w.green_max_threshold
                        : c == 1 ? &w.yellow_max_threshold
                                 : &w.red_max_threshold;
            std::uint8_t* prob = c == 0   ? &w.green_drop_probability
                                 : c == 1 ? &w.yellow_drop_probability
                                          : &w.red_drop_probability;
            const bool marks = c == 0   ? ecn_marks_green(w.ecn)
                               : c == 1 ? ecn_marks_yellow(w.ecn)
                                        : ecn_marks_red(w.ecn);
            if (const auto* e = find(f, cf.enable)) {
                *enable = get_choice(*e, cf.enable) == "true";
            }
            const auto* emin = find(f, cf.min_threshold);
            const auto* emax = find(f, cf.max_threshold);
            if (emin != nullptr) {
                *lo = get_bytes(*emin, cf.min_threshold);
            }
            if (emax != nullptr) {
                *hi = get_bytes(*emax, cf.max_threshold);
                if (emin != nullptr && *hi < *lo) {
                    fail(mark_of(*emax), emax->path,
                         quote(emax->value.Scalar()) + " is below " + col + "_min_threshold " +
                             std::to_string(lo->v) + ": accepted " + std::to_string(lo->v) + ".." +
                             std::to_string(cf.max_threshold.hi) + " bytes (max_threshold >= min_threshold)");
                }
            }
            read(f, cf.drop_probability, *prob);
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
