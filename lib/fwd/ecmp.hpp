// ecmp.hpp - 5-tuple flow hash, ECMP member selection and the next-hop /
// next-hop-group table.
//
// Flow hash
//   h = seed
//   v4: h = crc32c(h, src << 32 | dst); h = crc32c(h, proto << 32 | sport << 16 | dport)
//   v6: h = crc32c over the four 64-bit words of src and dst, then the same
//       proto/ports word
//   return fmix32(h)   (MurmurHash3 32-bit finaliser)
//   crc32c is the SSE4.2 CRC32 instruction (_mm_crc32_u64, 3 cycles latency,
//   one per cycle throughput). CRC is GF(2)-linear: flows that differ only in
//   the UDP source port (RoCEv2: the QP entropy, dport is always 4791) map
//   to distinct but structured CRC values, and the low bits would alias. The
//   fmix32 avalanche (two multiply-xorshift rounds, every input bit flips each
//   output bit with p ~ 1/2) removes the structure so the high bits that
//   ecmp_select() uses are uniform. Without SSE4.2 a 64-bit multiply-xorshift
//   (splitmix64 finaliser) is used instead; values then differ but quality is
//   equivalent. Inputs are host-order values as loaded from the wire
//   (load_be32/load_be16); the seed comes from switch_cfg.seed so every
//   switch in a fabric can hash differently (avoids ECMP polarisation).
//
// Member selection
//   ecmp_select(hash, n) = (hash * n) >> 32: a fixed-point multiply instead of
//   a modulo (no divide, uses the high, best-mixed bits, unbiased to 1/2^32).
//
// Next-hop table
//   nh_table holds up to max_nexthops `nexthop`s (egress port and rewrite MACs)
//   and up to max_groups `nh_group`s of 1..16 member indexes. Capacity is fixed
//   at construction; add_* (control path) deduplicate; select() (data path)
//   is two array reads and a multiply.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/endian.hpp"
#include "fwd/wire.hpp"

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace rocelab {

// ---- hashing ----

constexpr std::uint32_t fmix32(std::uint32_t h) noexcept {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

namespace detail {
inline std::uint32_t hash_step(std::uint32_t h, std::uint64_t v) noexcept {
#if defined(__SSE4_2__)
    return static_cast<std::uint32_t>(_mm_crc32_u64(h, v));
#else
    std::uint64_t z = (v ^ (std::uint64_t{h} << 32 | h)) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
#endif
}
inline std::uint64_t ports_word(std::uint8_t proto, std::uint16_t sport, std::uint16_t dport) noexcept {
    return (std::uint64_t{proto} << 32) | (std::uint64_t{sport} << 16) | dport;
}
}  // namespace detail

inline std::uint32_t flow_hash_v4(std::uint32_t src, std::uint32_t dst, std::uint8_t proto,
                                  std::uint16_t sport, std::uint16_t dport, std::uint32_t seed) noexcept {
    std::uint32_t h = detail::hash_step(seed, (std::uint64_t{src} << 32) | dst);
    h = detail::hash_step(h, detail::ports_word(proto, sport, dport));
    return fmix32(h);
}

// src16/dst16: the 16 address bytes in network order.
inline std::uint32_t flow_hash_v6(const std::uint8_t* src16, const std::uint8_t* dst16, std::uint8_t proto,
                                  std::uint16_t sport, std::uint16_t dport, std::uint32_t seed) noexcept {
    std::uint64_t w[4];
    std::memcpy(&w[0], src16, 8);
    std::memcpy(&w[1], src16 + 8, 8);
    std::memcpy(&w[2], dst16, 8);
    std::memcpy(&w[3], dst16 + 8, 8);
    std::uint32_t h = seed;
    h = detail::hash_step(h, w[0]);
    h = detail::hash_step(h, w[1]);
    h = detail::hash_step(h, w[2]);
    h = detail::hash_step(h, w[3]);
    h = detail::hash_step(h, detail::ports_word(proto, sport, dport));
    return fmix32(h);
}

// Hash straight from an IPv4 header (ip points at it, len = bytes available
// from ip). Ports are used only for unfragmented TCP/UDP so all fragments of
// a datagram take the same path. Returns the 3-tuple hash if truncated.
inline std::uint32_t flow_hash_ipv4_hdr(const std::byte* ip, std::size_t len, std::uint32_t seed) noexcept {
    const std::uint32_t src = load_be32(ip + wire::ip4_src);
    const std::uint32_t dst = load_be32(ip + wire::ip4_dst);
    const std::uint8_t proto = load_u8(ip + wire::ip4_proto);
    const std::size_t ihl = std::size_t{load_u8(ip) & 0x0fu} * 4;
    const bool frag = (load_be16(ip + wire::ip4_frag) & 0x3fffu) != 0;  // MF or offset
    std::uint16_t sp = 0;
    std::uint16_t dp = 0;
    if ((proto == ip_proto_udp || proto == ip_proto_tcp) && !frag && len >= ihl + 4) {
        sp = load_be16(ip + ihl);
        dp = load_be16(ip + ihl + 2);
    }
    return flow_hash_v4(src, dst, proto, sp, dp, seed);
}

// Same for IPv6 (ports only when the next header is directly TCP/UDP).
inline std::uint32_t flow_hash_ipv6_hdr(const std::byte* ip, std::size_t len, std::uint32_t seed) noexcept {
    const std::uint8_t nh = load_u8(ip + wire::ip6_next);
    std::uint16_t sp = 0;
    std::uint16_t dp = 0;
    if ((nh == ip_proto_udp || nh == ip_proto_tcp) && len >= ipv6_hdr_len + 4) {
        sp = load_be16(ip + ipv6_hdr_len);
        dp = load_be16(ip + ipv6_hdr_len + 2);
    }
    return flow_hash_v6(reinterpret_cast<const std::uint8_t*>(ip + wire::ip6_src),
                        reinterpret_cast<const std::uint8_t*>(ip + wire::ip6_dst), nh, sp, dp, seed);
}

// Index in [0, n) from a 32-bit hash: multiply-shift, no modulo.
constexpr std::uint32_t ecmp_select(std::uint32_t hash, std::uint32_t n) noexcept {
    return static_cast<std::uint32_t>((std::uint64_t{hash} * n) >> 32);
}

// ---- next hops ----

// One resolved next hop: where to send and how to rewrite the Ethernet header.
struct nexthop {
    std::uint16_t port = 0;     // port index (into switch_cfg.ports)
    std::uint16_t port_id = 0;  // DPDK port id of that port
    mac_addr dst_mac{};         // neighbour MAC
    mac_addr src_mac{};         // our MAC on that port
    bool operator==(const nexthop&) const noexcept = default;

    // A next hop resolved at run time (ARP/ND, fwd/neigh_table.hpp) rather
    // than by a static NEIGH entry: dst_mac then holds no MAC (a neighbour
    // is never multicast, so the group bit marks it) but an index into the
    // route table's dynamic hop addresses. One byte test on the data path.
    bool dynamic() const noexcept { return (dst_mac[0] & 1u) != 0; }
    std::uint32_t dynamic_index() const noexcept {
        return std::uint32_t{dst_mac[2]} << 24 | std::uint32_t{dst_mac[3]} << 16 | std::uint32_t{dst_mac[4]} << 8 |
               dst_mac[5];
    }
    static mac_addr dynamic_mark(std::uint32_t index) noexcept {
        return mac_addr{0x01, 0x00, static_cast<std::uint8_t>(index >> 24), static_cast<std::uint8_t>(index >> 16),
                        static_cast<std::uint8_t>(index >> 8), static_cast<std::uint8_t>(index)};
    }
};
static_assert(sizeof(nexthop) == 16);

inline constexpr std::size_t max_ecmp_ways = 16;

struct nh_group {
    std::uint8_t n = 0;                 // 1..max_ecmp_ways members
    std::uint32_t nh[max_ecmp_ways]{};  // indexes into nh_table nexthops
};

class nh_table {
public:
    nh_table(std::size_t max_nexthops, std::size_t max_groups)
        : _nh(new nexthop[std::max<std::size_t>(max_nexthops, 1)]),
          _groups(new nh_group[std::max<std::size_t>(max_groups, 1)]),
          _max_nh(max_nexthops),
          _max_groups(max_groups) {}

    nh_table(nh_table&&) noexcept = default;
    nh_table& operator=(nh_table&&) noexcept = default;
    nh_table(const nh_table&) = delete;
    nh_table& operator=(const nh_table&) = delete;

    // Control path: index of an equal next hop, or of a new one; none if full.
    std::optional<std::uint32_t> add_nexthop(const nexthop& nh) noexcept {
        for (std::size_t i = 0; i < _n_nh; ++i) {
            if (_nh[i] == nh) {
                return static_cast<std::uint32_t>(i);
            }
        }
        if (_n_nh >= _max_nh) {
            return std::nullopt;
        }
        _nh[_n_nh] = nh;
        return static_cast<std::uint32_t>(_n_nh++);
    }

    // Control path: a group of 1..16 next-hop indexes (sorted, duplicates
    // kept so weights can be expressed by repetition). Equal groups share an
    // id. none if full, empty, too large or an index is out of range.
    std::optional<std::uint32_t> add_group(std::span<const std::uint32_t> members) noexcept {
        if (members.empty() || members.size() > max_ecmp_ways) {
            return std::nullopt;
        }
        nh_group g;
        g.n = static_cast<std::uint8_t>(members.size());
        for (std::size_t i = 0; i < members.size(); ++i) {
            if (members[i] >= _n_nh) {
                return std::nullopt;
            }
            g.nh[i] = members[i];
        }
        std::sort(g.nh, g.nh + g.n);
        for (std::size_t i = 0; i < _n_groups; ++i) {
            if (_groups[i].n == g.n && std::equal(g.nh, g.nh + g.n, _groups[i].nh)) {
                return static_cast<std::uint32_t>(i);
            }
        }
        if (_n_groups >= _max_groups) {
            return std::nullopt;
        }
        _groups[_n_groups] = g;
        return static_cast<std::uint32_t>(_n_groups++);
    }

    // Data path: the member of `group` chosen by `hash`. group must be valid.
    const nexthop& select(std::uint32_t group, std::uint32_t hash) const noexcept {
        const nh_group& g = _groups[group];
        return _nh[g.nh[ecmp_select(hash, g.n)]];
    }
    // Same, with the hash computed by hash_fn() only for groups of more
    // than one member (ecmp_select(h, 1) is 0 for every h: same result).
    // bias: local_subgroups() of this table, or nullptr: a group with local
    // members chooses among those only (local bias); one without, among all.
    template <typename HashFn>
    const nexthop& select_lazy(std::uint32_t group, HashFn&& hash_fn, const nh_group* bias = nullptr) const noexcept {
        const nh_group* g = &_groups[group];
        if (bias != nullptr && bias[group].n != 0) { g = &bias[group]; }
        return _nh[g->nh[g->n == 1 ? 0 : ecmp_select(hash_fn(), g->n)]];
    }

    // Control path, for ECMP local bias: per group, its members whose port
    // `local(port)` accepts, in the group's order (n = 0: none). A worker
    // that owns some of a group's ports sends over those only; its flows
    // then never cross to another worker to leave (select_lazy's bias). Each
    // flow still takes one member: the frames of a flow reach one worker
    // (RSS over the 5-tuple) and that worker's choice is a function of the
    // flow hash.
    template <typename Pred>
    std::vector<nh_group> local_subgroups(Pred&& local) const {
        std::vector<nh_group> out(std::max<std::size_t>(_n_groups, 1));
        for (std::size_t i = 0; i < _n_groups; ++i) {
            const nh_group& g = _groups[i];
            for (std::uint8_t k = 0; k < g.n; ++k) {
                if (local(_nh[g.nh[k]].port)) { out[i].nh[out[i].n++] = g.nh[k]; }
            }
        }
        return out;
    }

    const nexthop& nexthop_at(std::uint32_t i) const noexcept { return _nh[i]; }
    const nh_group& group_at(std::uint32_t i) const noexcept { return _groups[i]; }
    std::size_t nexthops() const noexcept { return _n_nh; }
    std::size_t groups() const noexcept { return _n_groups; }

private:
    std::unique_ptr<nexthop[]> _nh;
    std::unique_ptr<nh_group[]> _groups;
    std::size_t _max_nh = 0;
    std::size_t _max_groups = 0;
    std::size_t _n_nh = 0;
    std::size_t _n_groups = 0;
};

}  // namespace rocelab
