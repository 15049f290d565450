// BUFFER_PROFILE.
// Part of the switch loader (config/loader.hpp).
#include "config/loader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace rocelab::detail {

// The pool a profile names (plain or "[BUFFER_POOL|name]"), or fail.
const sonic_pool_cfg& loader::profile_pool(const entry& e, const std::string& fpath) {
    const std::string name =
        strip_ref(scalar(e, fpath, "a BUFFER_POOL name such as ingress_lossless_pool"), "BUFFER_POOL");
    if (const auto* p = find_pool(name)) {
        return *p;
    }
    if (_cfg.pools.empty()) {
        fail(mark_of(e), fpath,
             "unknown pool " + quote(name) + ": there is no BUFFER_POOL table; add BUFFER_POOL: {" + name +
                 ": {size: ..., type: ingress, mode: dynamic}}");
    }
    const auto names = pool_names();
    fail(mark_of(e), fpath,
         "unknown pool " + quote(name) + "; BUFFER_POOL names are " + join(names) + did_you_mean(name, names));
}

void loader::load_buffer_profiles(const entry& t) {
    constexpr std::uint64_t max_bytes = 1ULL << 36;
    for (const auto& k : entries(t.value, t.key_node.Mark(), "BUFFER_PROFILE")) {
        const std::string path = "BUFFER_PROFILE|" + k.key;
        if (k.key.empty() || k.key.find('|') != std::string::npos || k.key == "NULL") {
            fail(k.key_node.Mark(), path, "a profile name must not be empty, NULL or contain '|'");
        }
        const auto f = fields(
            k, path, {"pool", "size", "dynamic_th", "static_th", "xoff", "xon", "xon_offset", "headroom_type"},
            {"packet_discard_action", "congesting_probability"});
        buffer_profile b;
        b.mark = k.key_node.Mark();
        if (const auto* e = find(f, "headroom_type")) {
            b.headroom_dynamic =
                get_choice(*e, path + "|headroom_type", {"static", "dynamic"}) == "dynamic";
            if (b.headroom_dynamic && _cfg.model != buffer_model::dynamic) {
                fail(mark_of(*e), path + "|headroom_type",
                     "headroom_type dynamic needs DEVICE_METADATA|localhost|buffer_model dynamic (the "
                     "traditional model takes xoff and size in bytes, or rocelab's xoff: auto)");
            }
        }
        const auto* pool = find(f, "pool");
        if (pool != nullptr) {
            const sonic_pool_cfg& sp = profile_pool(*pool, path + "|pool");
            b.pool = sp.name;
            b.ingress = sp.ingress;
            b.pool_size = sp.size;
        } else if (b.headroom_dynamic && _cfg.pool.enabled) {
            b.pool = _pool_name;  // SONiC: handled by the buffer manager in the lossless pool
        } else {
            fail(k.key_node.Mark(), path,
                 "pool is required: the BUFFER_POOL name, such as ingress_lossless_pool" +
                     std::string(b.headroom_dynamic ? " (there is no ingress pool to take it from)" : ""));
        }
        if (b.headroom_dynamic && !b.ingress) {
            fail(mark_of(*pool), path + "|pool", "headroom_type dynamic is for ingress (lossless) profiles; " +
                                                     b.pool + " is an egress pool");
        }
        const std::uint64_t cap = b.pool_size ? b.pool_size->v : max_bytes;
        const std::string cap_text = b.pool_size ? " (the pool size)" : "";
        const auto* dyn = find(f, "dynamic_th");
        const auto* stat = find(f, "static_th");
        const std::string th_expected =
            "give exactly one of dynamic_th (-8..8, alpha = 2^dynamic_th) or static_th (bytes)";
        if (dyn != nullptr && stat != nullptr) {
            fail(stat->key_node.Mark(), path + "|static_th",
                 "both dynamic_th and static_th are given: " + th_expected);
        }
        if (dyn == nullptr && stat == nullptr && !b.headroom_dynamic) {
            fail(k.key_node.Mark(), path, "no threshold given: " + th_expected);
        }
        if (dyn != nullptr) {
            b.mode = threshold_mode::dynamic_th;
            b.dynamic_th = static_cast<int>(
                get_int(*dyn, path + "|dynamic_th", -8, 8, "an exponent (alpha = 2^dynamic_th)"));
        } else if (stat != nullptr) {
            // Either threshold on either pool mode: SONiC's own
            // ingress_lossy_profile has static_th on a dynamic pool.
            b.mode = threshold_mode::static_th;
            b.static_th = get_bytes(*stat, path + "|static_th", bytes{1}, bytes{max_bytes},
                                    bare_number::accepted, true);
        } else {
            b.mode = threshold_mode::dynamic_th;
            b.dynamic_th = _cfg.default_dynamic_th;
            b.default_th = true;
        }
        if (const auto* e = find(f, "xoff")) {
            if (!b.ingress) {
                fail(e->key_node.Mark(), path + "|xoff",
                     "xoff is only used by an ingress (priority group) profile; " + b.pool + " is an egress pool");
            }
            if (b.headroom_dynamic) {
                fail(e->key_node.Mark(), path + "|xoff",
                     "headroom_type dynamic computes xoff, xon and size; remove them or the headroom_type");
            }
            if (e->value.IsScalar() && lower(trim(e->value.Scalar())) == "auto") {
                b.xoff_auto = true;
            } else {
                b.xoff = get_bytes(*e, path + "|xoff", bytes{0}, bytes{cap}, bare_number::accepted, true);
            }
        }
        if (b.headroom_dynamic) {
            b.xoff_auto = true;
        }
        const bool lossless = b.xoff_auto || b.xoff.v > 0;
        if (const auto* e = find(f, "size")) {
            if (b.headroom_dynamic) {
                fail(e->key_node.Mark(), path + "|size",
                     "headroom_type dynamic computes xoff, xon and size; remove them or the headroom_type");
            }
            b.size = get_bytes(*e, path + "|size", bytes{0}, bytes{cap}, bare_number::accepted, true);
        } else if (!b.xoff_auto) {
            fail(k.key_node.Mark(), path,
                 "size is required: the bytes reserved for each priority group or queue using this profile, "
                 "0.." + std::to_string(cap) + " bytes" + cap_text + "; only a profile with xoff: auto or "
                 "headroom_type dynamic may leave it out");
        }
        for (const char* name : {"xon", "xon_offset"}) {
            const auto* e = find(f, name);
            if (e == nullptr) {
                continue;
            }
            const std::string fpath = path + "|" + name;
            if (!lossless) {
                fail(e->key_node.Mark(), fpath,
                     std::string(name) +
                         " is only used by a lossless profile: give xoff in bytes (> 0) or "
                         "xoff: auto, or remove " +
                         name);
            }
            if (b.xoff_auto && std::string_view(name) == "xon") {
                fail(e->key_node.Mark(), fpath,
                     b.headroom_dynamic ? std::string("headroom_type dynamic computes xoff, xon and size; remove "
                                                      "them or the headroom_type")
                                        : std::string("xon is computed with xoff: auto (ROCELAB headroom "
                                                      "pipeline_latency); remove it or give xoff in bytes"));
            }
            bytes max{cap};
            if (b.mode == threshold_mode::static_th) {
                max = b.static_th;  // XON must be reachable below the XOFF threshold
            }
            const bytes v = get_bytes(*e, fpath, bytes{0}, max, bare_number::accepted, true);
            (std::string_view(name) == "xon" ? b.xon : b.xon_offset) = v;
        }
        if (b.xon && b.xon_offset) {
            const auto* e = find(f, "xon_offset");
            fail(e->key_node.Mark(), path + "|xon_offset",
                 "both xon and xon_offset are given: give one (xon: XON below that many shared bytes; "
                 "xon_offset: XON below threshold - xon_offset)");
        }
        _profiles[k.key] = b;
    }
}

}  // namespace rocelab::detail
