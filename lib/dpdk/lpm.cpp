// lpm.cpp - creating and filling rte_lpm / rte_lpm6 (control path; see lpm.hpp).
#include "dpdk/lpm.hpp"
#include "dpdk/eal.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wvolatile"  // DPDK 22.11 headers use volatile++
#include <rte_lpm.h>
#include <rte_lpm6.h>
#pragma GCC diagnostic pop

#include <rte_errno.h>
#include <rte_memory.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <utility>
#include <vector>

namespace rocelab::dpdk {

namespace {

std::string unique_name(const char* kind) {
    static std::atomic<unsigned> seq{0};
    char buf[RTE_LPM_NAMESIZE];
    std::snprintf(buf, sizeof buf, "rl_%s_%u", kind, seq.fetch_add(1));
    return buf;
}

std::uint32_t v4_host(const ip_prefix& p) {
    return (std::uint32_t{p.addr[0]} << 24) | (std::uint32_t{p.addr[1]} << 16) |
           (std::uint32_t{p.addr[2]} << 8) | p.addr[3];
}

// A table of one family: create(name, socket, &config) with a Config
// (rte_lpm_config, rte_lpm6_config) for `rules` rules and `tbl8s` groups;
// nullptr on failure (rte_errno).
template <typename Config, typename Create>
auto create_table(Create create, const char* family, std::uint32_t rules, std::uint32_t tbl8s) {
    Config c{};
    c.max_rules = rules;
    c.number_tbl8s = tbl8s;
    return create(unique_name(family).c_str(), SOCKET_ID_ANY, &c);
}

// add(rule) for each rule (an rte_lpm*_add() result); the first failure's message, or "".
template <typename Add>
std::string install(std::span<const lpm_rule> rules, Add add) {
    for (const lpm_rule& r : rules) {
        const int rc = add(r);
        if (rc < 0) {
            return "cannot install " + to_string(r.prefix) + ": " + std::string(rte_strerror(-rc));
        }
    }
    return "";
}

}  // namespace

lpm::lpm(lpm&& o) noexcept : _v4(std::exchange(o._v4, nullptr)), _v6(std::exchange(o._v6, nullptr)) {}

lpm& lpm::operator=(lpm&& o) noexcept {
    if (this != &o) {
        release();
        _v4 = std::exchange(o._v4, nullptr);
        _v6 = std::exchange(o._v6, nullptr);
    }
    return *this;
}

lpm::~lpm() { release(); }

void lpm::release() noexcept {
    if (eal_is_exiting()) {  // the tables go with EAL's memory (eal.hpp: eal_exiting)
        _v4 = nullptr;
        _v6 = nullptr;
        return;
    }
    if (_v4 != nullptr) {
        rte_lpm_free(_v4);
        _v4 = nullptr;
    }
    if (_v6 != nullptr) {
        rte_lpm6_free(_v6);
        _v6 = nullptr;
    }
}

std::uint32_t lpm::tbl8_groups(std::span<const lpm_rule> rules, unsigned width) {
    std::uint32_t groups = 0;
    std::vector<std::array<std::uint8_t, 16>> prefixes;
    for (unsigned b = 24; b < width; b += 8) {
        prefixes.clear();
        for (const lpm_rule& r : rules) {
            if (r.prefix.len > b) {
                std::array<std::uint8_t, 16> p{};
                std::copy_n(r.prefix.addr.begin(), b / 8, p.begin());
                prefixes.push_back(p);
            }
        }
        std::sort(prefixes.begin(), prefixes.end());
        groups += static_cast<std::uint32_t>(std::unique(prefixes.begin(), prefixes.end()) - prefixes.begin());
    }
    return groups;
}

lpm::sizes lpm::sizes_for(std::span<const lpm_rule> v4, std::span<const lpm_rule> v6) {
    sizes s;
    s.v4_rules = std::max(static_cast<std::uint32_t>(v4.size()), min_rules);
    s.v4_tbl8s = std::max(tbl8_groups(v4, 32), min_tbl8s);
    if (!v6.empty()) {
        s.v6_rules = std::max(static_cast<std::uint32_t>(v6.size()), min_rules);
        s.v6_tbl8s = std::max(tbl8_groups(v6, 128), min_tbl8s);
    }
    return s;
}

std::variant<lpm, std::string> lpm::build(std::span<const lpm_rule> v4, std::span<const lpm_rule> v6) {
    lpm t;
    const sizes sz = sizes_for(v4, v6);
    t._v4 = create_table<rte_lpm_config>(rte_lpm_create, "v4", sz.v4_rules, sz.v4_tbl8s);
    if (t._v4 == nullptr) {
        return "rte_lpm_create failed: " + std::string(rte_strerror(rte_errno)) +
               " (is the EAL initialised, with >= 64 MiB free?)";
    }
    if (!v6.empty()) {
        t._v6 = create_table<rte_lpm6_config>(rte_lpm6_create, "v6", sz.v6_rules, sz.v6_tbl8s);
        if (t._v6 == nullptr) {
            return "rte_lpm6_create failed: " + std::string(rte_strerror(rte_errno));
        }
    }
    std::string err = install(
        v4, [&](const lpm_rule& r) { return rte_lpm_add(t._v4, v4_host(r.prefix), r.prefix.len, r.value); });
    if (err.empty()) {
        err = install(v6, [&](const lpm_rule& r) {
            return rte_lpm6_add(t._v6, r.prefix.addr.data(), r.prefix.len, r.value);
        });
    }
    if (!err.empty()) {
        return err;
    }
    return std::variant<lpm, std::string>(std::in_place_index<0>, std::move(t));
}

}  // namespace rocelab::dpdk
