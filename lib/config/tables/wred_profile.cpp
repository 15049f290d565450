// WRED_PROFILE: WRED/ECN profiles by name.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

// WRED_PROFILE: {AZURE_LOSSLESS: {wred_green_enable: "true", green_min_threshold: "1048576", ...}}.
// AZURE_LOSSLESS is built in (SONiC's default); the file may redefine it.
void loader::load_wred_profiles(const entry* t) {
    _wred_profiles.clear();
    _wred_profiles["AZURE_LOSSLESS"] = azure_lossless_wred_profile();
    if (t == nullptr) {
        return;
    }
    constexpr std::uint64_t max_threshold = 1ULL << 32;
    const std::vector<std::string> colours = {"green", "yellow", "red"};
    std::vector<std::string> accepted = {"wred_green_enable", "wred_yellow_enable", "wred_red_enable", "ecn"};
    for (const auto& c : colours) {
        accepted.push_back(c + "_min_threshold");
        accepted.push_back(c + "_max_threshold");
        accepted.push_back(c + "_drop_probability");
    }
    std::vector<std::string> ecn_names;
    for (const auto n : ecn_mode_names) {
        ecn_names.emplace_back(n);
    }
    for (const auto& k : entries(t->value, t->key_node.Mark(), "WRED_PROFILE")) {
        const std::string path = "WRED_PROFILE|" + k.key;
        if (k.key.empty() || k.key.find('|') != std::string::npos) {
            fail(k.key_node.Mark(), path, "a profile name must not be empty or contain '|'");
        }
        const auto f = fields(k, path, accepted,
                              {"ecn_green_min_threshold", "ecn_green_max_threshold", "ecn_green_mark_probability",
                               "ecn_yellow_min_threshold", "ecn_yellow_max_threshold",
                               "ecn_yellow_mark_probability", "ecn_red_min_threshold", "ecn_red_max_threshold",
                               "ecn_red_mark_probability", "wred_weight"});
        wred_profile_cfg w;
        w.name = k.key;
        if (const auto* e = find(f, "ecn")) {
            w.ecn = *parse_ecn_mode(get_choice(*e, path + "|ecn", ecn_names));
        }
        for (std::size_t c = 0; c < colours.size(); ++c) {
            const std::string& col = colours[c];
            bool* enable = c == 0 ? &w.wred_green_enable : c == 1 ? &w.wred_yellow_enable : &w.wred_red_enable;
            bytes* lo = c == 0 ? &w.green_min_threshold : c == 1 ? &w.yellow_min_threshold : &w.red_min_threshold;
            bytes* hi = c == 0 ? &w.green_max_threshold : c == 1 ? &w.yellow_max_threshold : &w.red_max_threshold;
            std::uint8_t* prob = c == 0   ? &w.green_drop_probability
                                 : c == 1 ? &w.yellow_drop_probability
                                          : &w.red_drop_probability;
            const bool marks = c == 0 ? ecn_marks_green(w.ecn) : c == 1 ? ecn_marks_yellow(w.ecn) : ecn_marks_red(w.ecn);
            if (const auto* e = find(f, "wred_" + col + "_enable")) {
                *enable = get_choice(*e, path + "|wred_" + col + "_enable", {"true", "false"}) == "true";
            }
            const auto* emin = find(f, col + "_min_threshold");
            const auto* emax = find(f, col + "_max_threshold");
            if (emin != nullptr) {
                *lo = get_bytes(*emin, path + "|" + col + "_min_threshold", bytes{0}, bytes{max_threshold},
                                bare_number::accepted, true);
            }
            if (emax != nullptr) {
                const std::string mpath = path + "|" + col + "_max_threshold";
                *hi = get_bytes(*emax, mpath, bytes{0}, bytes{max_threshold}, bare_number::accepted, true);
                if (emin != nullptr && *hi < *lo) {
                    fail(mark_of(*emax), mpath,
                         quote(emax->value.Scalar()) + " is below " + col + "_min_threshold " +
                             std::to_string(lo->v) + ": accepted " + std::to_string(lo->v) + ".." +
                             std::to_string(max_threshold) + " bytes (max_threshold >= min_threshold)");
                }
            }
            if (const auto* e = find(f, col + "_drop_probability")) {
                *prob = static_cast<std::uint8_t>(
                    get_uint(*e, path + "|" + col + "_drop_probability", 0, 100, "a percentage"));
            }
            // Green is what RoCE uses: its thresholds must be written when
            // green is dropped or marked. Yellow/red are checked but unused.
            if (c == 0 && (*enable || marks) && (emin == nullptr || emax == nullptr)) {
                fail(k.key_node.Mark(), path,
                     col + "_min_threshold and " + col + "_max_threshold (bytes) are required when " +
                         (*enable ? "wred_" + col + "_enable is true" : "ecn marks " + col) +
                         "; missing: " +
                         (emin == nullptr && emax == nullptr ? col + "_min_threshold, " + col + "_max_threshold"
                          : emin == nullptr                  ? col + "_min_threshold"
                                                             : col + "_max_threshold"));
            }
        }
        _wred_profiles[k.key] = w;
    }
}

}  // namespace rocelab::detail
