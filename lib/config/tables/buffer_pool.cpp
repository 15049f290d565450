// BUFFER_POOL, and the pool checks once every buffer table is read.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

namespace rocelab::detail {
namespace {

constexpr std::string_view type_choices[] = {"ingress", "egress"};
constexpr std::string_view mode_choices[] = {"dynamic", "static"};

namespace fld {

constexpr field_spec type =
    choice_field("type", type_choices, "required",
                 "an ingress pool holds the priority groups' buffers; egress pools are kept and "
                 "shown (rocelab has no egress pool accounting)");
constexpr field_spec mode =
    choice_field("mode", mode_choices, "`dynamic`",
                 "SONiC's pool mode (kept and shown); a profile may use either threshold");
constexpr field_spec size =
    byte_count_field("size", 1024, max_buffer_bytes, "required with `buffer_model: traditional`",
                     "the pool, the shared headroom pool (`xoff`) included");
constexpr field_spec xoff = byte_count_field("xoff", 0, max_buffer_bytes, "0",
                                             "ingress only: SONiC's **shared headroom pool** (below)");
constexpr field_spec cell =
    byte_count_field("cell", 0, 16384, "0",
                     "**rocelab extension**, ingress only: accounting cell; 0 = exact bytes. Each "
                     "packet is charged in whole cells");
constexpr field_spec percentage =
    sonic_only(count_field("percentage", 1, 100, "a percentage", "-", "SONiC's dynamic pool sizing"));
constexpr field_spec all[] = {type, mode, size, xoff, cell, percentage};

}  // namespace fld
}  // namespace

constexpr table_spec buffer_pool_table =
    keyed_table("BUFFER_POOL", "a pool name (`ingress_lossless_pool`, `egress_lossless_pool`, ...)",
                "the buffer pools; the MMU models one ingress pool (below).", fld::all);

// BUFFER_POOL: every pool is kept (cfg.pools); the ingress pool named
// ingress_lossless_pool (else the first ingress pool) is the one the MMU
// models (cfg.pool), with any other ingress pool's size added to it.
void loader::load_buffer_pool(const entry& t) {
    std::optional<bytes> cell;
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        check_entry_name(k, "a pool name");
        const auto f = fields(k, buffer_pool_table);
        const entry& type = required(k, f, fld::type, "type is required: ingress or egress");
        sonic_pool_cfg sp;
        sp.name = k.key;
        sp.ingress = get_choice(type, fld::type) == "ingress";
        if (const auto* e = find(f, fld::mode)) {
            sp.mode = get_choice(*e, fld::mode) == "dynamic" ? threshold_mode::dynamic_th
                                                             : threshold_mode::static_th;
        }
        if (const auto* e = find(f, fld::size)) {
            sp.size = get_bytes(*e, fld::size);
            _pool_size_texts[k.key] = show(e->value);
            _pool_marks[k.key + "|size"] = mark_of(*e);
        } else if (_cfg.model != buffer_model::dynamic) {
            fail(k.key_node.Mark(), path,
                 "size is required: the pool's bytes, such as 12766208 or 12MiB (only "
                 "DEVICE_METADATA|localhost|buffer_model dynamic computes pool sizes)");
        }
        if (const auto* e = find(f, fld::xoff)) {
            if (!sp.ingress) {
                fail(e->key_node.Mark(), e->path,
                     "xoff (the shared headroom pool) is only used on an ingress pool");
            }
            sp.xoff = get_bytes(*e, fld::xoff);
        }
        if (const auto* e = find(f, fld::cell)) {
            if (!sp.ingress) {
                fail(e->key_node.Mark(), e->path, "cell is only used on an ingress pool");
            }
            cell = get_bytes(*e, fld::cell);
        }
        if (const auto* e = find(f, fld::percentage)) {
            get_uint(*e, fld::percentage);
            _cfg.notes.push_back(e->path + ": not modelled (SONiC's dynamic pool sizing); the pool size is " +
                                 std::string(sp.size ? "the size given" : "computed as below"));
        }
        _pool_marks[k.key] = k.key_node.Mark();
        _cfg.pools.push_back(sp);
    }
    // The modelled ingress pool.
    const sonic_pool_cfg* main = nullptr;
    for (const auto& p : _cfg.pools) {
        if (p.ingress && (main == nullptr || p.name == "ingress_lossless_pool")) {
            main = &p;
        }
    }
    if (main == nullptr) {
        return;  // egress pools only: BUFFER_PG reports the missing ingress pool
    }
    _pool_name = main->name;
    _cfg.pool.enabled = true;
    _cfg.pool.name = main->name;
    _cfg.pool.mode = main->mode;
    if (cell) {
        _cfg.pool.cell = *cell;
    }
    _pool_size_mark = _pool_marks[main->name];
    std::uint64_t size = 0;
    if (main->size) {
        size = main->size->v;
        _pool_size_text = _pool_size_texts[main->name];
        _pool_size_mark = _pool_marks[main->name + "|size"];
    } else {
        // Dynamic model: SONiC's buffer manager sizes the pool as the
        // ASIC's memory minus the reservations; the MMU subtracts the
        // reservations itself, so the pool is the memory. On Mellanox
        // the egress lossless pool spans the whole memory.
        const sonic_pool_cfg* egress_lossless = nullptr;
        for (const auto& p : _cfg.pools) {
            if (!p.ingress && p.size && (egress_lossless == nullptr || p.name == "egress_lossless_pool")) {
                egress_lossless = &p;
            }
        }
        if (egress_lossless != nullptr) {
            size = egress_lossless->size->v;
            _cfg.notes.push_back("BUFFER_POOL|" + main->name +
                                 "|size: not given (buffer_model dynamic): the "
                                 "pool is the ASIC's buffer, taken as " +
                                 egress_lossless->name + " size " + std::to_string(size) +
                                 " bytes, minus the reservations (as SONiC's buffer "
                                 "manager computes it)");
        } else {
            size = default_buffer_pool().size.v;
            _cfg.notes.push_back("BUFFER_POOL|" + main->name +
                                 "|size: not given (buffer_model dynamic) and no "
                                 "egress pool gives the ASIC's buffer size: the pool is rocelab's default " +
                                 std::to_string(size) + " bytes, minus the reservations");
        }
        _pool_size_text = std::to_string(size) + " bytes (computed)";
    }
    for (const auto& p : _cfg.pools) {
        if (p.ingress && &p != main) {
            const std::uint64_t add = p.size ? p.size->v : 0;
            size += add;
            _cfg.notes.push_back(
                "BUFFER_POOL|" + p.name +
                ": rocelab models one ingress pool: the priority "
                "groups of its profiles are accounted in " +
                main->name +
                (add > 0 ? ", which gets its " + std::to_string(add) + " bytes" : std::string()));
        }
    }
    if (main->xoff.v > 0) {
        // Shared headroom pool, carved out of the pool's size: Broadcom's
        // sizes include it (TH3: size 66394076 with xoff 27200352 on a
        // 64 MB ASIC); Mellanox's may not, which then models xoff bytes
        // less buffer than the ASIC has (never more).
        _cfg.pool.shared_headroom = main->xoff;
    }
    _cfg.pool.size = bytes{size};
}

// Dynamic model with over_subscribe_ratio and no pool xoff: the shared
// headroom pool is the lossless PGs' xoff / ratio (carved out of the pool).
void loader::apply_over_subscription() {
    if (_cfg.model == buffer_model::dynamic && _cfg.over_subscribe_ratio > 0 && _cfg.pool.enabled) {
        const sonic_pool_cfg* main = find_pool(_pool_name);
        if (main != nullptr && main->xoff.v == 0) {
            _cfg.pool.over_subscribe_ratio = _cfg.over_subscribe_ratio;
            size_shared_headroom(_cfg);
        }
    }
}

// Every port's reserved + xoff bytes must fit the ingress pool (pending
// xoff: auto PGs count once resolve_port_speeds() has computed them).
void loader::check_pool_fit() const {
    const std::string problem = pool_fit_problem(_cfg);
    if (!problem.empty()) {
        fail(_pool_size_mark, "BUFFER_POOL|" + _pool_name + "|size", _pool_size_text + problem);
    }
}

// The built-in buffers (no BUFFER_* table): compute xoff: auto for the
// ports that PORT gives a speed (CABLE_LENGTH and ROCELAB headroom are
// loaded by now) and check that they fit the built-in pool.
void loader::resolve_default_buffers() {
    for (auto& p : _cfg.ports) {
        if (!p.speed) {
            continue;
        }
        for (auto& pg : p.pgs) {
            if (pg.configured && pg.xoff_auto) {
                const std::string problem = apply_auto_headroom(pg, p, _cfg.asic);
                if (!problem.empty()) {
                    fail(YAML::Mark::null_mark(), "PORT|" + p.name, problem);
                }
            }
        }
    }
    const std::string problem = pool_fit_problem(_cfg);
    if (!problem.empty()) {
        fail(YAML::Mark::null_mark(), "BUFFER_POOL|" + _cfg.pool.name + "|size",
             format_bytes(_cfg.pool.size) + " (the built-in default pool)" + problem +
                 "; give BUFFER_POOL, BUFFER_PROFILE and BUFFER_PG tables to size the buffers");
    }
}

}  // namespace rocelab::detail
