// BUFFER_QUEUE: egress profiles bound to queues, and what they mean for the
// queues' limits (apply_egress_buffers).
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace rocelab::detail {
namespace {

constexpr field_spec fields_queue[] = {reference_field(
    "profile", "BUFFER_PROFILE", "a BUFFER_PROFILE name such as pg_lossless_100000_5m_profile, or NULL",
    "required", "an egress profile (in an egress pool), or `NULL` for none", true, "or `NULL`")};

}  // namespace

constexpr table_spec buffer_queue_table = keyed_table(
    "BUFFER_QUEUE", "`\"<ports>|<queues>\"` as BUFFER_PG (ports or `global`, then queues 0..7)",
    "egress buffer profiles bound to queues (kept per queue; see below for what rocelab does with them).",
    fields_queue);

// BUFFER_QUEUE: {"Ethernet0|3-4": {profile: egress_lossless_profile}, "Ethernet0|0-2": {profile:
// q_lossy_profile}}.
void loader::load_buffer_queue(const entry& t) {
    const buffer_binding queues{buffer_queue_table,
                                "queues",
                                "queue",
                                "\"Ethernet0|3-4\", \"Ethernet0,Ethernet4|0-2\" or \"global|5-6\"",
                                num_queues,
                                false,
                                false};
    bind_buffer_profiles(t, queues, [&](const entry&, const profile_entry* ref, std::size_t target, int q) {
        queue_buffer_cfg qb;
        if (ref != nullptr) {
            const buffer_profile& b = ref->second;
            qb.configured = true;
            qb.profile = ref->first;
            qb.pool = b.pool;
            qb.size = b.size.value_or(bytes{0});
            qb.mode = b.pg.mode;
            qb.dynamic_th = b.pg.dynamic_th;
            qb.static_th = b.pg.static_th;
        }
        for_target(target, [&](port_cfg& p, bool) { p.egress_buffers[static_cast<std::size_t>(q)] = qb; });
    });
}

// After PORT_QOS_MAP, QUEUE and BUFFER_QUEUE: a lossy queue whose
// egress profile has a static_th gets QUEUE max_bytes = size + static_th
// (unless QUEUE gives max_bytes); a lossless queue whose egress profile
// could hold less than the ingress pool may admit for it is warned
// about (one line per profile, naming the queues).
void loader::apply_egress_buffers() {
    std::map<std::string, std::vector<std::pair<std::string, std::uint8_t>>>
        warned;  // profile -> (port, queues)
    std::map<std::string, std::string> why;
    std::vector<std::string> dynamic_lossy;
    const auto lossless_queues = [](const port_cfg& p) {
        std::uint8_t m = 0;
        for (int prio = 0; prio < 8; ++prio) {
            if ((p.pfc_enable & (1u << prio)) != 0) {
                m = static_cast<std::uint8_t>(
                    m | (1u << p.maps.pfc_prio_to_queue[static_cast<std::size_t>(prio)]));
            }
        }
        return m;
    };
    const auto visit = [&](port_cfg& p, std::size_t index) {
        const std::uint8_t lossless = lossless_queues(p);
        for (int q = 0; q < num_queues; ++q) {
            const auto& qb = p.egress_buffers[static_cast<std::size_t>(q)];
            if (!qb.configured) {
                continue;
            }
            const std::string name =
                (p.name.empty() ? std::string("global") : p.name) + "|" + std::to_string(q);
            if ((lossless & (1u << q)) == 0) {
                if (qb.mode == threshold_mode::static_th) {
                    if (_queue_bytes_set.count({index, q}) == 0 &&
                        _queue_bytes_set.count({all_ports, q}) == 0) {
                        p.limits[static_cast<std::size_t>(q)].max_bytes =
                            bytes{std::min<std::uint64_t>(qb.size.v + qb.static_th.v, 1ULL << 30)};
                    }
                } else if (std::find(dynamic_lossy.begin(), dynamic_lossy.end(), qb.profile) ==
                           dynamic_lossy.end()) {
                    dynamic_lossy.push_back(qb.profile);
                }
                continue;
            }
            if (!_cfg.pool.enabled) {
                continue;
            }
            const std::uint64_t ingress = _cfg.pool.size.v;
            std::uint64_t egress = 0;
            std::string how;
            if (qb.mode == threshold_mode::static_th) {
                egress = qb.size.v + qb.static_th.v;
                how = "size + static_th = " + std::to_string(egress) + " bytes";
            } else {
                const sonic_pool_cfg* sp = find_pool(qb.pool);
                if (sp == nullptr || !sp->size) {
                    continue;  // a computed egress pool: nothing to compare
                }
                // One queue alone in the pool settles where its use
                // equals alpha x (pool - use): use = pool x alpha / (1 + alpha).
                // dynamic_th 7 and above is SAI's "infinity": the whole pool.
                if (qb.dynamic_th >= 7) {
                    egress = qb.size.v + sp->size->v;
                    how = "size + " + sp->name + " " + std::to_string(sp->size->v) + " (dynamic_th " +
                          std::to_string(qb.dynamic_th) +
                          ": no limit but the pool) = " + std::to_string(egress) + " bytes";
                } else {
                    const double alpha = std::ldexp(1.0, qb.dynamic_th);
                    egress =
                        qb.size.v + static_cast<std::uint64_t>(double(sp->size->v) * alpha / (1.0 + alpha));
                    how = "size + " + sp->name + " " + std::to_string(sp->size->v) +
                          " x alpha/(1+alpha) with "
                          "dynamic_th " +
                          std::to_string(qb.dynamic_th) + " = " + std::to_string(egress) + " bytes";
                }
            }
            if (egress < ingress) {
                auto& list = warned[qb.profile];
                const std::string port_name = p.name.empty() ? std::string("every probed port") : p.name;
                if (list.empty() || list.back().first != port_name) {
                    list.push_back({port_name, 0});
                }
                list.back().second = static_cast<std::uint8_t>(list.back().second | (1u << q));
                why[qb.profile] = how;
            }
        }
    };
    if (_cfg.ports.empty()) {
        visit(_cfg.port_defaults, all_ports);
    }
    for (std::size_t i = 0; i < _cfg.ports.size(); ++i) {
        visit(_cfg.ports[i], i);
    }
    for (const auto& [profile, ports] : warned) {
        // Ports with the same queues together: "queues 3-4 of Ethernet0, Ethernet4, ..., Ethernet124 (32
        // ports)".
        std::vector<std::string> parts;
        std::vector<bool> done(ports.size(), false);
        for (std::size_t i = 0; i < ports.size(); ++i) {
            if (done[i]) {
                continue;
            }
            std::vector<std::string> names;
            for (std::size_t j = i; j < ports.size(); ++j) {
                if (!done[j] && ports[j].second == ports[i].second) {
                    names.push_back(ports[j].first);
                    done[j] = true;
                }
            }
            std::string qs;
            for (int q = 0; q < num_queues; ++q) {
                if ((ports[i].second & (1u << q)) != 0) {
                    if (!qs.empty()) {
                        qs += ',';
                    }
                    qs += std::to_string(q);
                }
            }
            std::string list;
            if (names.size() <= 4) {
                list = join(names);
            } else {
                list = join({names[0], names[1], names[2], "..."});
                list += ", ";
                list += names.back();
                list += " (";
                list += std::to_string(names.size());
                list += " ports)";
            }
            std::string part = "queues ";
            part += qs;
            part += " of ";
            part += list;
            parts.push_back(part);
        }
        _cfg.notes.push_back("warning: BUFFER_QUEUE: lossless " + join(parts, "; ") + " use egress profile " +
                             profile + ", which holds at most " + why[profile] + ", less than the " +
                             std::to_string(_cfg.pool.size.v) + " bytes ingress pool " + _cfg.pool.name +
                             " may admit for one queue: a switch enforcing it could drop frames the ingress "
                             "admitted (rocelab never tail-drops a lossless queue)");
    }
    for (const auto& profile : dynamic_lossy) {
        _cfg.notes.push_back("BUFFER_PROFILE|" + profile +
                             "|dynamic_th: egress dynamic thresholds are not "
                             "modelled: its lossy queues keep their QUEUE max_bytes/max_packets");
    }
}

}  // namespace rocelab::detail
