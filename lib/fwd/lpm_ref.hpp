// lpm_ref.hpp - a reference longest-prefix match: the rules in a list, a
// lookup scans them all.
//
// What it is for
//   The specification of the lpm_table interface (fwd/lpm.hpp) in the fewest
//   lines that can be checked by eye, and the LPM of the route table's unit
//   tests (tests/unit/fwd: no EAL). tests/dpdk checks dpdk::lpm (rte_lpm /
//   rte_lpm6) against it on random rule sets. O(rules) per lookup: never on
//   the data path.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "fwd/lpm.hpp"

namespace rocelab {

class lpm_ref {
public:
    static std::variant<lpm_ref, std::string> build(std::span<const lpm_rule> v4, std::span<const lpm_rule> v6) {
        lpm_ref t;
        if (auto e = add_all(t._v4, v4, 32); !e.empty()) { return e; }
        if (auto e = add_all(t._v6, v6, 128); !e.empty()) { return e; }
        return std::variant<lpm_ref, std::string>(std::in_place_index<0>, std::move(t));
    }

    bool lookup_v4(std::uint32_t dst, std::uint32_t* value) const noexcept {
        const std::uint8_t a[4] = {static_cast<std::uint8_t>(dst >> 24), static_cast<std::uint8_t>(dst >> 16),
                                   static_cast<std::uint8_t>(dst >> 8), static_cast<std::uint8_t>(dst)};
        return find(_v4, a, value);
    }
    bool lookup_v6(const std::uint8_t* dst16, std::uint32_t* value) const noexcept { return find(_v6, dst16, value); }
    void lookup_v4_bulk(const std::uint32_t* dst, std::uint32_t* value, unsigned n) const noexcept {
        for (unsigned i = 0; i < n; ++i) {
            if (!lookup_v4(dst[i], &value[i])) { value[i] = lpm_miss; }
        }
    }
    void lookup_v6_bulk(const ip6_addr* dst, std::uint32_t* value, unsigned n) const noexcept {
        for (unsigned i = 0; i < n; ++i) {
            if (!lookup_v6(dst[i], &value[i])) { value[i] = lpm_miss; }
        }
    }

    std::size_t rules_v4() const noexcept { return _v4.size(); }
    std::size_t rules_v6() const noexcept { return _v6.size(); }

private:
    // Do the first `depth` bits of a and b agree?
    static bool same_bits(const std::uint8_t* a, const std::uint8_t* b, unsigned depth) noexcept {
        const unsigned whole = depth / 8;
        const unsigned rest = depth % 8;
        if (std::memcmp(a, b, whole) != 0) { return false; }
        if (rest == 0) { return true; }
        const auto mask = static_cast<std::uint8_t>(0xffu << (8 - rest));
        return ((a[whole] ^ b[whole]) & mask) == 0;
    }

    static std::string add_all(std::vector<lpm_rule>& to, std::span<const lpm_rule> rules, unsigned max_depth) {
        for (const lpm_rule& r : rules) {
            const unsigned depth = r.prefix.len;
            if (depth < 1 || depth > max_depth || r.value >= lpm_value_limit) {
                return "lpm: " + to_string(r.prefix) + " -> " + std::to_string(r.value) + ": depth 1.." +
                       std::to_string(max_depth) + " and value below " + std::to_string(lpm_value_limit) +
                       " accepted";
            }
            bool replaced = false;
            for (lpm_rule& x : to) {
                if (x.prefix.len == depth && same_bits(x.prefix.addr.data(), r.prefix.addr.data(), depth)) {
                    x.value = r.value;
                    replaced = true;
                }
            }
            if (!replaced) { to.push_back(r); }
        }
        return {};
    }

    static bool find(const std::vector<lpm_rule>& rules, const std::uint8_t* a, std::uint32_t* value) noexcept {
        const lpm_rule* best = nullptr;
        for (const lpm_rule& r : rules) {
            if ((best == nullptr || r.prefix.len > best->prefix.len) && same_bits(r.prefix.addr.data(), a, r.prefix.len)) {
                best = &r;
            }
        }
        if (best == nullptr) { return false; }
        *value = best->value;
        return true;
    }

    std::vector<lpm_rule> _v4;
    std::vector<lpm_rule> _v6;
};

}  // namespace rocelab
