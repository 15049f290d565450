// BUFFER_PG: ingress profiles bound to priority groups (and, in the dynamic
// model, the lossless PGs SONiC's buffer manager would add).
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr field_spec fields_pg[] = {reference_field(
    "profile", "BUFFER_PROFILE", "a BUFFER_PROFILE name such as pg_lossless_100000_5m_profile, or NULL",
    "required (optional with `buffer_model: dynamic`)",
    "an ingress profile; `NULL`: no buffer for the PG (traditional model) or a lossless PG whose headroom "
    "is computed (dynamic model)",
    true, "or `NULL`")};

}  // namespace

constexpr table_spec buffer_pg_table = keyed_table(
    "BUFFER_PG",
    "`\"<ports>|<priority groups>\"`: ports a port, a comma list or `global`; PGs `\"3\"`, `\"3-4\"`, "
    "`\"0,3-4\"`",
    "ingress buffer profiles bound to priority groups; needs a BUFFER_POOL table.", fields_pg);

// A profile resolved for one port. xoff: auto computes xoff/xon (and
// reserved when no size is given) now if the port has a PORT speed, else
// leaves the PG pending for resolve_port_speeds() (probed ports, or a port
// whose speed comes from the driver).
pg_buffer_cfg loader::resolve_profile(const buffer_profile& b, const std::string& name, const port_cfg& p,
                                      const entry& at, const std::string& path) const {
    pg_buffer_cfg pg = b.pg;
    pg.configured = true;
    pg.reserved = b.size.value_or(bytes{0});
    pg.reserved_auto = b.pg.xoff_auto && !b.size;
    if (!b.pg.xoff_auto || !p.speed) {
        return pg;
    }
    const std::string problem = apply_auto_headroom(pg, p, _cfg.asic);
    if (!problem.empty()) {
        fail(mark_of(at), path, "profile " + name + ": " + problem);
    }
    return pg;
}

// SONiC's dynamic model: a lossless PG whose headroom the buffer manager
// computes from the port's speed and cable length ("NULL" profile).
buffer_profile loader::computed_lossless_profile() const {
    buffer_profile b;
    b.pool = _pool_name;
    b.pg.mode = threshold_mode::dynamic_th;
    b.pg.dynamic_th = _cfg.default_dynamic_th;
    b.pg.xoff_auto = true;
    b.headroom_dynamic = true;
    return b;
}

// BUFFER_PG: {"Ethernet0|3-4": {profile: pg_lossless_100000_5m_profile}, "global|0": {profile: lossy}}.
// "NULL": traditional model: no buffer for the PG (SONiC removes it);
// dynamic model: a lossless PG whose headroom is computed.
void loader::load_buffer_pg(const entry& t) {
    const bool dynamic = _cfg.model == buffer_model::dynamic;
    const buffer_profile computed = computed_lossless_profile();
    const buffer_binding pgs{
        buffer_pg_table,  "priority groups",
        "priority group", "\"Ethernet0|3-4\", \"Ethernet0,Ethernet4|0\" or \"global|3-4\"",
        num_pgs,          true,
        dynamic};
    bind_buffer_profiles(t, pgs, [&](const entry& k, const profile_entry* ref, std::size_t target, int pg) {
        const std::string fpath = k.path + "|profile";
        for_target(target, [&](port_cfg& p, bool) {
            auto& slot = p.pgs[static_cast<std::size_t>(pg)];
            if (ref != nullptr) {
                slot = resolve_profile(ref->second, ref->first, p, k, fpath);
            } else if (dynamic) {
                slot = resolve_profile(computed, "NULL (computed)", p, k, fpath);
            } else {
                slot = pg_buffer_cfg{};  // SONiC: the PG's buffer is removed
            }
        });
        if (target != all_ports) {
            _pg_given.insert({target, pg});
        }
    });
    if (dynamic) {
        add_dynamic_lossless_pgs();
    }
}

// Dynamic model: SONiC's buffer manager creates the lossless PGs of the
// PFC-enabled priorities itself; a port whose BUFFER_PG does not give
// them gets a computed one (headroom from speed and cable length).
void loader::add_dynamic_lossless_pgs() {
    const buffer_profile computed = computed_lossless_profile();
    entry none{"", YAML::Node(), YAML::Node()};
    std::vector<std::string> added;
    for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
        port_cfg& p = _cfg.ports[i];
        std::string pgs;
        for (int pg = 0; pg < num_pgs; ++pg) {
            if ((p.pfc_enable & (1u << pg)) == 0 || _pg_given.count({i, pg}) != 0 ||
                p.pgs[static_cast<std::size_t>(pg)].configured) {
                continue;
            }
            p.pgs[static_cast<std::size_t>(pg)] = resolve_profile(
                computed, "computed", p, none, "BUFFER_PG|" + p.name + "|" + std::to_string(pg));
            if (!pgs.empty()) {
                pgs += ',';
            }
            pgs += std::to_string(pg);
        }
        if (!pgs.empty()) {
            added.push_back(p.name + "|" + pgs);
        }
    }
    if (!added.empty()) {
        _cfg.notes.push_back(
            "BUFFER_PG: buffer_model dynamic: lossless priority groups of the PFC-enabled "
            "priorities with no BUFFER_PG entry get a computed headroom (as SONiC's buffer "
            "manager): " +
            join(added));
    }
}

}  // namespace rocelab::detail
