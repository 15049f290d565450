// local_addr.hpp - the switch's own IPv4/IPv6 interface addresses.
//
// What it does
//   A small fixed-capacity table (no allocation at all) of the addresses
//   configured on the switch's ports (SONiC INTERFACE "Ethernet0|10.0.0.1/31"),
//   each with its port index and the MAC the switch answers with on that port.
//   The data path uses it to tell packets addressed to the switch itself
//   (ARP requests, IPv6 neighbour solicitations, ICMP echo) from transit
//   traffic; the ARP/ND responders in arp_nd.hpp take their answers from it.
//   The route table (route_table.hpp) fills it from the ports' addresses;
//   tests fill it by hand.
//
// Lookups are a linear scan over at most max_local_addrs entries, which is
// fine for the control-plane slow path (ARP/ND/ICMP are rare). The data
// path's transit frames are classified by the route table's lookup (each
// address is a local host route there: route_local), except on an RSS queue
// of another worker, which must tell the owner's frames before any lookup
// (rss_owner_only in switch_pipeline.cpp): is_local_v4/v6 ask a 1024-bit
// filter of the addresses' hashes first, so an address that is not ours is
// almost always answered without the scan (a set bit still scans: the
// answer is the scan's).
//
// Addresses: IPv4 in host order, IPv6 as 16 network-order bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "proto/eth.hpp"

namespace rocelab {

inline constexpr std::size_t max_local_addrs = 64;

struct local_v4 {
    std::uint32_t addr = 0;  // host order
    std::uint8_t len = 32;   // prefix length of the connected subnet
    std::uint16_t port = 0;  // port index
    mac_addr mac{};
};

struct local_v6 {
    std::array<std::uint8_t, 16> addr{};
    std::uint8_t len = 128;
    std::uint16_t port = 0;
    mac_addr mac{};
};

// ff02::1:ffXX:XXXX for the low 24 bits of addr (RFC 4291 section 2.7.1).
inline bool is_solicited_node_of(const std::uint8_t* dst16, const std::uint8_t* addr16) noexcept {
    static constexpr std::uint8_t prefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
    return std::memcmp(dst16, prefix, 13) == 0 && std::memcmp(dst16 + 13, addr16 + 13, 3) == 0;
}

class local_addrs {
public:
    // any_port: match whatever the ingress port is.
    static constexpr int any_port = -1;

    bool add_v4(std::uint32_t addr, std::uint8_t len, std::uint16_t port, const mac_addr& mac) noexcept {
        if (_n4 >= max_local_addrs) {
            return false;
        }
        _v4[_n4++] = local_v4{addr, len, port, mac};
        set(_f4, slot_v4(addr));
        return true;
    }
    bool add_v6(const std::uint8_t* addr16, std::uint8_t len, std::uint16_t port,
                const mac_addr& mac) noexcept {
        if (_n6 >= max_local_addrs) {
            return false;
        }
        local_v6& e = _v6[_n6++];
        std::memcpy(e.addr.data(), addr16, 16);
        e.len = len;
        e.port = port;
        e.mac = mac;
        set(_f6, slot_v6(addr16));
        return true;
    }

    const local_v4* find_v4(std::uint32_t addr, int port = any_port) const noexcept {
        for (std::size_t i = 0; i < _n4; ++i) {
            if (_v4[i].addr == addr && (port < 0 || _v4[i].port == port)) {
                return &_v4[i];
            }
        }
        return nullptr;
    }
    const local_v6* find_v6(const std::uint8_t* addr16, int port = any_port) const noexcept {
        for (std::size_t i = 0; i < _n6; ++i) {
            if (std::memcmp(_v6[i].addr.data(), addr16, 16) == 0 && (port < 0 || _v6[i].port == port)) {
                return &_v6[i];
            }
        }
        return nullptr;
    }
    // One of our addresses whose solicited-node multicast group is dst16.
    const local_v6* find_v6_solicited(const std::uint8_t* dst16, int port = any_port) const noexcept {
        for (std::size_t i = 0; i < _n6; ++i) {
            if (is_solicited_node_of(dst16, _v6[i].addr.data()) && (port < 0 || _v6[i].port == port)) {
                return &_v6[i];
            }
        }
        return nullptr;
    }

    bool is_local_v4(std::uint32_t addr) const noexcept {
        return has(_f4, slot_v4(addr)) && find_v4(addr) != nullptr;
    }
    bool is_local_v6(const std::uint8_t* addr16) const noexcept {
        return has(_f6, slot_v6(addr16)) && find_v6(addr16) != nullptr;
    }

    // The filter's slot of an address (0..1023): the top 10 bits of a
    // multiplicative hash (Fibonacci hashing; IPv6 folded to 64 bits first).
    // With 64 addresses, about 6 % of other addresses find their bit set.
    static unsigned slot_v4(std::uint32_t addr) noexcept { return (addr * 0x9E3779B1u) >> 22; }
    static unsigned slot_v6(const std::uint8_t* addr16) noexcept {
        std::uint64_t hi = 0;
        std::uint64_t lo = 0;
        std::memcpy(&hi, addr16, 8);
        std::memcpy(&lo, addr16 + 8, 8);
        return static_cast<unsigned>(((hi * 0x9E3779B97F4A7C15u) ^ lo) * 0xC2B2AE3D27D4EB4Fu >> 54);
    }

    std::span<const local_v4> v4() const noexcept { return {_v4.data(), _n4}; }
    std::span<const local_v6> v6() const noexcept { return {_v6.data(), _n6}; }

private:
    using filter = std::array<std::uint64_t, 16>;  // a bit per slot
    static void set(filter& f, unsigned slot) noexcept { f[slot >> 6] |= std::uint64_t{1} << (slot & 63); }
    static bool has(const filter& f, unsigned slot) noexcept { return (f[slot >> 6] >> (slot & 63) & 1u) != 0; }

    filter _f4{};
    filter _f6{};
    std::array<local_v4, max_local_addrs> _v4{};
    std::array<local_v6, max_local_addrs> _v6{};
    std::size_t _n4 = 0;
    std::size_t _n6 = 0;
};

}  // namespace rocelab
