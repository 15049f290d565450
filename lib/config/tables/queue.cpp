// QUEUE: scheduler, limits and WRED profile per egress queue ("global"
// first, then per-port entries on top).
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"

#include <map>
#include <tuple>

namespace rocelab::detail {
namespace {

using namespace literals;

// One QUEUE entry's fields.
struct queue_override {
    std::optional<queue_sched> sched;
    std::optional<wred_cfg> wred;
    std::optional<bytes> max_bytes;
    std::optional<std::uint32_t> max_packets;
};

constexpr std::string_view refused[] = {"buffer_profile"};

namespace fld {

constexpr field_spec scheduler =
    reference_field("scheduler", "SCHEDULER", "a SCHEDULER name such as scheduler.0", "see SCHEDULER",
                    "how the queue is served");
constexpr field_spec max_bytes =
    size_field("max_bytes", 64, (1024_MiB).v, "`1MiB`",
               "**rocelab extension**: a packet that would take the queue above this many "
               "bytes is tail-dropped");
constexpr field_spec max_packets =
    count_field("max_packets", 1, 16777216, "a packet count", "1024",
                "**rocelab extension**: the same limit in packets. Queues are linked "
                "through the frames (no ring), so the only bound is the number of packet "
                "buffers",
                "at most ROCELAB `mbufs` (147456 by default)");
constexpr field_spec wred_profile =
    reference_field("wred_profile", "WRED_PROFILE", "a WRED_PROFILE name such as AZURE_LOSSLESS",
                    "AZURE_LOSSLESS on queues 3 and 4, none elsewhere",
                    "WRED/ECN marking of the queue, see WRED_PROFILE", true);
constexpr field_spec all[] = {scheduler, max_bytes, max_packets, wred_profile};

}  // namespace fld
}  // namespace

constexpr table_spec queue_table = keyed_table(
    "QUEUE",
    "`\"<ports>|<queues>\"`: ports as in PORT_QOS_MAP (`global`, a port, or a comma list), queues a "
    "number, a range or a list (`\"3\"`, `\"3-4\"`, `\"0-2,5,7\"`)",
    "per egress queue: scheduler, limits and WRED profile; `global` first, then per-port entries.", fld::all,
    refused);

void loader::load_queues(const entry& t) {
    const auto all = entries(t);
    const auto order = global_first(all, [](const entry& e) {
        const auto bar = e.key.rfind('|');
        const auto ports = trim(std::string_view(e.key).substr(0, bar == std::string::npos ? 0 : bar));
        return ports == "global" || ports == "*";
    });
    // (port, queue, field) -> key that set it, for non-global keys.
    std::map<std::tuple<std::size_t, int, std::string>, std::string> set_by;
    for (const entry* kp : order) {
        const entry& k = *kp;
        const std::string& path = k.path;
        const auto bar = k.key.rfind('|');
        if (bar == std::string::npos) {
            fail(k.key_node.Mark(), path,
                 "a QUEUE key is \"<ports>|<queues>\", such as \"Ethernet0|3\", "
                 "\"Ethernet0,Ethernet4|3-4\" or "
                 "\"global|6\"");
        }
        const auto targets = port_list(std::string_view(k.key).substr(0, bar), k.key_node.Mark(), path);
        const auto queues = parse_number_set(std::string_view(k.key).substr(bar + 1), 7);
        if (!queues || *queues == 0) {
            fail(k.key_node.Mark(), path,
                 "queues " + quote(std::string_view(k.key).substr(bar + 1)) +
                     " are not valid: expected queue numbers 0..7 such as \"3\", \"3-4\" or \"0-2,5\"");
        }
        const auto f = fields(k, queue_table);
        queue_override o;
        if (const auto* e = find(f, fld::wred_profile)) {
            o.wred = wred_cfg::from_profile(
                named(_wred_profiles, get_ref(*e, fld::wred_profile), *e, "WRED_PROFILE", "WRED_PROFILE"));
        }
        if (const auto* e = find(f, fld::scheduler)) {
            o.sched = named(_schedulers, get_ref(*e, fld::scheduler), *e, "scheduler", "SCHEDULER");
        }
        read(f, fld::max_bytes, o.max_bytes);
        if (const auto* e = find(f, fld::max_packets)) {
            // Egress queues are linked through the frames (no ring): a
            // queue can hold at most every mbuf of the switch.
            o.max_packets = static_cast<std::uint32_t>(get_uint(
                *e, fld::max_packets, _cfg.mbufs,
                std::string(fld::max_packets.noun) + " (at most ROCELAB|mbufs " + std::to_string(_cfg.mbufs) +
                    ": a queue cannot hold more frames than there are mbufs)"));
        }
        for (const std::size_t target : targets) {
            for (int q = 0; q < num_queues; ++q) {
                if ((*queues & (1u << q)) == 0) {
                    continue;
                }
                if (o.max_bytes) {
                    _queue_bytes_set.insert({target, q});
                }
                if (target != all_ports) {
                    for (const auto& [name, e] : f) {
                        const auto [it, inserted] = set_by.emplace(std::tuple{target, q, name}, k.key);
                        if (!inserted) {
                            fail(e.key_node.Mark(), e.path,
                                 "queue " + std::to_string(q) + " of port " + _cfg.ports[target].name +
                                     " already gets " + name + " from key " + quote(it->second));
                        }
                    }
                }
                const auto apply = [&](port_cfg& p) {
                    const auto qi = static_cast<std::size_t>(q);
                    set_if(p.sched.queues[qi], o.sched);
                    set_if(p.limits[qi].max_bytes, o.max_bytes);
                    set_if(p.limits[qi].max_packets, o.max_packets);
                    set_if(p.wred[qi], o.wred);
                };
                for_target(target, [&](port_cfg& p, bool) { apply(p); });
            }
        }
    }
}

}  // namespace rocelab::detail
