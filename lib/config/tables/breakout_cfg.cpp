// BREAKOUT_CFG: port breakout - one physical port, by its lanes, used as
// several ports ({Ethernet0: {brkout_mode: 2x200G}}). The ports are ordinary
// PORT entries; this table checks that they are what the mode makes.
// Descriptor and loading code (config/schema.hpp, config/loader.hpp).
#include "config/loader.hpp"
#include "config/tables/tables.hpp"
#include "config/units_parse.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rocelab::detail {
namespace {

using namespace literals;

namespace fld {
constexpr field_spec brkout_mode = noun_field(
    field_kind::text, "brkout_mode", "a breakout mode such as 1x400G, 2x200G or 4x100G[40G]", "- (required)",
    "`<n>x<speed>G`, n 1, 2, 4 or 8, then optional other speeds the ports may run at in brackets "
    "(`4x100G[40G]`): the port's lanes split into n ports of equal lanes");
constexpr field_spec lane_speed =
    ranged_field(field_kind::rate, "lane_speed", (1_Gbps).v, 400'000'000'000, "`50Gbps`",
                 "rocelab's: what one lane carries (SONiC takes it from the platform): "
                 "50Gbps for 400G ports of 8 lanes, 25Gbps for 100G ports of 4, 100Gbps "
                 "for 800G ports of 8");
constexpr field_spec all[] = {brkout_mode, lane_speed};
}  // namespace fld

struct parsed_mode {
    unsigned count = 0;
    bits_per_sec speed{};
    std::vector<bits_per_sec> alt;
};

// "4x100G[40G,25G]" -> {4, 100G, {40G, 25G}}; nullopt when malformed.
std::optional<parsed_mode> parse_mode(const std::string& m) {
    const auto gbps = [](std::string_view t) -> std::optional<bits_per_sec> {
        if (t.size() < 2 || t.back() != 'G' || t.size() > 5) { return std::nullopt; }
        t.remove_suffix(1);
        if (t.find_first_not_of("0123456789") != std::string_view::npos) { return std::nullopt; }
        const std::uint64_t g = std::stoull(std::string(t));
        if (g == 0) { return std::nullopt; }
        return bits_per_sec{g * 1'000'000'000};
    };
    const auto x = m.find('x');
    if (x == std::string::npos || x == 0) { return std::nullopt; }
    const std::string n = m.substr(0, x);
    if (n != "1" && n != "2" && n != "4" && n != "8") { return std::nullopt; }
    parsed_mode out;
    out.count = static_cast<unsigned>(std::stoul(n));
    std::string rest = m.substr(x + 1);
    std::string alts;
    if (const auto b = rest.find('['); b != std::string::npos) {
        if (rest.back() != ']') { return std::nullopt; }
        alts = rest.substr(b + 1, rest.size() - b - 2);
        rest = rest.substr(0, b);
        if (alts.empty()) { return std::nullopt; }
    }
    const auto s = gbps(rest);
    if (!s) { return std::nullopt; }
    out.speed = *s;
    std::size_t at = 0;
    while (!alts.empty() && at <= alts.size()) {
        const std::size_t c = std::min(alts.find(',', at), alts.size());
        const auto a = gbps(std::string_view(alts).substr(at, c - at));
        if (!a) { return std::nullopt; }
        out.alt.push_back(*a);
        at = c + 1;
    }
    return out;
}

std::string lane_range(std::uint32_t first, std::uint32_t n) {
    return n == 1 ? "lane " + std::to_string(first)
                  : "lanes " + std::to_string(first) + "-" + std::to_string(first + n - 1);
}

}  // namespace

constexpr table_spec breakout_cfg_table{
    .name = "BREAKOUT_CFG",
    .key = "the breakout's first port (its lowest lanes), a PORT entry with `lanes`",
    .doc = "port breakout: a physical port, by its lanes, used as several ports, each a PORT entry.",
    .fields = fld::all,
};

void loader::load_breakout(const entry& t) {
    std::map<std::string, std::string> taken;  // port -> the breakout that made it
    for (const auto& k : entries(t)) {
        const std::string& path = k.path;
        const auto f = fields(k, breakout_cfg_table);
        const entry& m =
            required(k, f, fld::brkout_mode, "no brkout_mode: give one such as brkout_mode: 2x200G");
        breakout_cfg b;
        b.port = k.key;
        b.mode = get_text(m, fld::brkout_mode);
        const auto pm = parse_mode(b.mode);
        if (!pm) {
            fail_value(m, fld::brkout_mode.noun);
        }
        b.count = pm->count;
        b.speed = pm->speed;
        b.alt_speeds = pm->alt;
        b.lane_speed = 50_Gbps;
        read(f, fld::lane_speed, b.lane_speed);
        const auto first_it =
            std::find_if(_cfg.ports.begin(), _cfg.ports.end(), [&](const port_cfg& p) { return p.name == k.key; });
        if (first_it == _cfg.ports.end() || first_it->lanes.empty()) {
            fail(k.key_node.Mark(), path,
                 first_it == _cfg.ports.end()
                     ? "no PORT " + k.key + ": the key names the breakout's first port, a PORT entry with lanes"
                     : "PORT " + k.key + " has no lanes: give them (lanes: \"0,1,2,3\"), the breakout splits them");
        }
        // The physical port: count x the first port's lanes, from its lowest.
        const auto per_port = static_cast<std::uint32_t>(first_it->lanes.size());
        const std::uint32_t first = *std::min_element(first_it->lanes.begin(), first_it->lanes.end());
        const std::uint32_t total = per_port * b.count;
        for (std::uint32_t l = 0; l < total; ++l) { b.lanes.push_back(first + l); }
        // "A breakout mode the port's speed cannot hold."
        const bits_per_sec capacity{b.lane_speed.v * total};
        if (b.speed.v * b.count > capacity.v) {
            fail(mark_of(m), m.path,
                 b.mode + " needs " + format_rate(bits_per_sec{b.speed.v * b.count}) + ", but the port's " +
                     std::to_string(total) + " lanes (" + std::to_string(b.count) + " x the " +
                     std::to_string(per_port) + " of PORT|" + k.key + ") at " + format_rate(b.lane_speed) +
                     " (lane_speed) hold " + format_rate(capacity));
        }
        // Each port of the breakout: the next per_port lanes, in order.
        for (unsigned i = 0; i < b.count; ++i) {
            const std::uint32_t lo = first + i * per_port;
            port_cfg* found = nullptr;
            for (auto& p : _cfg.ports) {
                if (p.lanes.empty()) { continue; }
                const auto [mn, mx] = std::minmax_element(p.lanes.begin(), p.lanes.end());
                const bool inside = *mn >= first && *mx < first + total;
                if (!inside) { continue; }
                std::vector<std::uint32_t> sorted = p.lanes;
                std::sort(sorted.begin(), sorted.end());
                std::vector<std::uint32_t> want(per_port);
                for (std::uint32_t l = 0; l < per_port; ++l) { want[l] = lo + l; }
                if (*mn >= lo && *mn < lo + per_port) {
                    if (sorted != want) {
                        fail(k.key_node.Mark(), path,
                             b.mode + " splits " + lane_range(first, total) + " into " + std::to_string(b.count) +
                                 " ports of " + std::to_string(per_port) + " lanes; PORT " + p.name +
                                 " has lanes " + [&] {
                                     std::string s;
                                     for (auto l : p.lanes) {
                                         if (!s.empty()) { s += ','; }
                                         s += std::to_string(l);
                                     }
                                     return s;
                                 }() + ", not " + lane_range(lo, per_port));
                    }
                    found = &p;
                }
            }
            if (found == nullptr) {
                fail(k.key_node.Mark(), path,
                     b.mode + " makes " + std::to_string(b.count) + " ports of " + std::to_string(per_port) +
                         " lanes from " + lane_range(first, total) + ": no PORT has " + lane_range(lo, per_port));
            }
            if (const auto [it, inserted] = taken.emplace(found->name, k.key); !inserted) {
                fail(k.key_node.Mark(), path, "PORT " + found->name + " is already in BREAKOUT_CFG|" + it->second);
            }
            if (!found->speed) {
                found->speed = b.speed;
            } else if (*found->speed != b.speed &&
                       std::find(b.alt_speeds.begin(), b.alt_speeds.end(), *found->speed) == b.alt_speeds.end()) {
                std::string allowed = format_rate(b.speed);
                for (const auto a : b.alt_speeds) { allowed += " or " + format_rate(a); }
                fail(k.key_node.Mark(), path,
                     "PORT " + found->name + " has speed " + format_rate(*found->speed) + ", but " + b.mode +
                         " runs its ports at " + allowed);
            }
            b.ports.push_back(found->name);
        }
        _cfg.breakouts.push_back(std::move(b));
    }
}

}  // namespace rocelab::detail
