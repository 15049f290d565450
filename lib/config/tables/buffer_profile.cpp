// BUFFER_PROFILE: buffer profiles, bound to priority groups by BUFFER_PG
// and to queues by BUFFER_QUEUE.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view headroom_choices[] = {"static", "dynamic"};
constexpr std::string_view refused[] = {"packet_discard_action", "congesting_probability"};

namespace fld {

constexpr field_spec pool =
    reference_field("pool", "BUFFER_POOL", "a BUFFER_POOL name such as ingress_lossless_pool",
                    "required (optional with `headroom_type: dynamic`: the ingress pool)",
                    "ingress pool: a PG profile; egress pool: a queue profile", true);
constexpr field_spec size = byte_count_field(
    "size", 0, max_buffer_bytes, "required (optional with `xoff: auto` / `headroom_type: dynamic`)",
    "bytes reserved for each PG or queue using the profile", "at most the pool size");
constexpr field_spec dynamic_th = dynamic_th_field(
    "dynamic_th", "-", "alpha = 2^dynamic_th: the PG or queue may use alpha x the free shared bytes");
constexpr field_spec static_th =
    byte_count_field("static_th", 1, max_buffer_bytes, "-", "fixed shared limit");
constexpr field_spec xoff = byte_count_field(
    "xoff", 0, max_buffer_bytes, "0 (lossy)",
    "ingress only: headroom; > 0 (or `auto`) makes the profile lossless", "at most the pool size; or `auto`");
constexpr std::string_view xon_limit = "at most the pool size, or `static_th` with a static threshold";
constexpr field_spec xon =
    byte_count_field("xon", 0, max_buffer_bytes, "none", "XON when shared use falls below this", xon_limit);
constexpr field_spec xon_offset =
    byte_count_field("xon_offset", 0, max_buffer_bytes, "none",
                     "XON when shared use falls below threshold - xon_offset", xon_limit);
constexpr field_spec headroom_type = choice_field(
    "headroom_type", headroom_choices, "`static`",
    "`dynamic` (needs `buffer_model: dynamic`): xoff, xon and size are computed (as `xoff: auto`); the "
    "profile gives only `dynamic_th` (default: `default_dynamic_th`)");
constexpr field_spec all[] = {pool, size, dynamic_th, static_th, xoff, xon, xon_offset, headroom_type};

}  // namespace fld
}  // namespace

constexpr table_spec buffer_profile_table = keyed_table(
    "BUFFER_PROFILE", "a profile name (not `NULL`, which means \"none\" in BUFFER_PG and BUFFER_QUEUE)",
    "buffer profiles: reserved size, shared threshold and, for lossless ones, headroom.", fld::all, refused);

// The pool a profile names (plain or "[BUFFER_POOL|name]"), or fail.
const sonic_pool_cfg& loader::profile_pool(const entry& e, const field_spec& f) {
    const std::string& fpath = e.path;
    const std::string name = get_ref(e, f);
    if (const auto* p = find_pool(name)) {
        return *p;
    }
    if (_cfg.pools.empty()) {
        fail(mark_of(e), fpath,
             "unknown pool " + quote(name) + ": there is no BUFFER_POOL table; add BUFFER_POOL: {" + name +
                 ": {size: ..., type: ingress, mode: dynamic}}");
    }
    const auto names = pool_names();
    fail(
        mark_of(e), fpath,
        "unknown pool " + quote(name) + "; BUFFER_POOL names are " + join(names) + did_you_mean(name, names));
}

void loader::load_buffer_profiles(const entry& t) {
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        check_entry_name(k, "a profile name", true);
        const auto f = fields(k, buffer_profile_table);
        buffer_profile b;
        b.mark = k.key_node.Mark();
        if (const auto* e = find(f, fld::headroom_type)) {
            b.headroom_dynamic = get_choice(*e, fld::headroom_type) == "dynamic";
            if (b.headroom_dynamic && _cfg.model != buffer_model::dynamic) {
                fail(mark_of(*e), e->path,
                     "headroom_type dynamic needs DEVICE_METADATA|localhost|buffer_model dynamic (the "
                     "traditional model takes xoff and size in bytes, or rocelab's xoff: auto)");
            }
        }
        const auto* pool = find(f, fld::pool);
        if (pool != nullptr) {
            const sonic_pool_cfg& sp = profile_pool(*pool, fld::pool);
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
            fail(
                mark_of(*pool), pool->path,
                "headroom_type dynamic is for ingress (lossless) profiles; " + b.pool + " is an egress pool");
        }
        const std::uint64_t cap = b.pool_size ? b.pool_size->v : max_buffer_bytes;
        const std::string cap_text = b.pool_size ? " (the pool size)" : "";
        const auto* dyn = find(f, fld::dynamic_th);
        const auto* stat = find(f, fld::static_th);
        const std::string th_expected = "give exactly one of dynamic_th (" + range_text(fld::dynamic_th) +
                                        ", alpha = 2^dynamic_th) or static_th (bytes)";
        if (dyn != nullptr && stat != nullptr) {
            fail(stat->key_node.Mark(), stat->path,
                 "both dynamic_th and static_th are given: " + th_expected);
        }
        if (dyn == nullptr && stat == nullptr && !b.headroom_dynamic) {
            fail(k.key_node.Mark(), path, "no threshold given: " + th_expected);
        }
        if (dyn != nullptr) {
            b.pg.mode = threshold_mode::dynamic_th;
            b.pg.dynamic_th = static_cast<int>(get_int(*dyn, fld::dynamic_th));
        } else if (stat != nullptr) {
            // Either threshold on either pool mode: SONiC's own
            // ingress_lossy_profile has static_th on a dynamic pool.
            b.pg.mode = threshold_mode::static_th;
            b.pg.static_th = get_bytes(*stat, fld::static_th);
        } else {
            b.pg.mode = threshold_mode::dynamic_th;
            b.pg.dynamic_th = _cfg.default_dynamic_th;
            b.default_th = true;
        }
        // xoff, xon and size: given in bytes, or computed (headroom_type dynamic).
        const auto refuse_if_computed = [&](const entry& e) {
            if (b.headroom_dynamic) {
                fail(e.key_node.Mark(), e.path,
                     "headroom_type dynamic computes xoff, xon and size; remove them or the headroom_type");
            }
        };
        if (const auto* e = find(f, fld::xoff)) {
            if (!b.ingress) {
                fail(e->key_node.Mark(), e->path,
                     "xoff is only used by an ingress (priority group) profile; " + b.pool +
                         " is an egress pool");
            }
            refuse_if_computed(*e);
            if (e->value.IsScalar() && lower(trim(e->value.Scalar())) == "auto") {
                b.pg.xoff_auto = true;
            } else {
                b.pg.xoff = get_bytes(*e, fld::xoff, cap);
            }
        }
        if (b.headroom_dynamic) {
            b.pg.xoff_auto = true;
        }
        const bool lossless = b.pg.xoff_auto || b.pg.xoff.v > 0;
        if (const auto* e = find(f, fld::size)) {
            refuse_if_computed(*e);
            b.size = get_bytes(*e, fld::size, cap);
        } else if (!b.pg.xoff_auto) {
            fail(k.key_node.Mark(), path,
                 "size is required: the bytes reserved for each priority group or queue using this profile, "
                 "0.." +
                     std::to_string(cap) + " bytes" + cap_text +
                     "; only a profile with xoff: auto or "
                     "headroom_type dynamic may leave it out");
        }
        for (const field_spec* spec : {&fld::xon, &fld::xon_offset}) {
            const auto* e = find(f, *spec);
            if (e == nullptr) {
                continue;
            }
            const std::string name(spec->name);
            const std::string& fpath = e->path;
            if (!lossless) {
                fail(e->key_node.Mark(), fpath,
                     std::string(name) +
                         " is only used by a lossless profile: give xoff in bytes (> 0) or "
                         "xoff: auto, or remove " +
                         name);
            }
            if (b.pg.xoff_auto && spec == &fld::xon) {
                refuse_if_computed(*e);
                fail(e->key_node.Mark(), fpath,
                     "xon is computed with xoff: auto (ROCELAB headroom pipeline_latency); remove it or give "
                     "xoff in bytes");
            }
            std::uint64_t max = cap;
            if (b.pg.mode == threshold_mode::static_th) {
                max = b.pg.static_th.v;  // XON must be reachable below the XOFF threshold
            }
            const bytes v = get_bytes(*e, *spec, max);
            (spec == &fld::xon ? b.pg.xon : b.pg.xon_offset) = v;
        }
        if (b.pg.xon && b.pg.xon_offset) {
            const auto* e = find(f, fld::xon_offset);
            fail(e->key_node.Mark(), e->path,
                 "both xon and xon_offset are given: give one (xon: XON below that many shared bytes; "
                 "xon_offset: XON below threshold - xon_offset)");
        }
        _profiles[k.key] = b;
    }
}

}  // namespace rocelab::detail
