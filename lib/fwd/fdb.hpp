// fdb.hpp - learning L2 forwarding database (MAC, VID) -> port.
//
// What it does
//   A fixed-capacity bucketized cuckoo hash: every key has two candidate
//   buckets of four slots, each bucket exactly one 64-byte cache line
//   (4 x 8-byte keys + 4 x 8-byte {port, last_seen}). A lookup reads at most
//   two lines; an insert that finds both buckets full searches a short
//   breadth-first cuckoo path (at most fdb::max_path_nodes nodes) and moves
//   entries along it, so a failed insert never loses an existing entry.
//   All memory is allocated in the constructor; learn/lookup/age/flush never
//   allocate, throw or log.
//
// Time
//   Clock-injected: every call takes `now` (non-negative nanos since the clock
//   owner's epoch). last_seen is stored in ticks of 1024 ns (48 bits, ~9
//   years), so aging is exact to 1.024 us: an entry expires once
//   now - last_seen > aging. A learn of a known station on the same port only
//   writes the cache line when last_seen is older than aging/8 (the hot path
//   per received frame is then read-only).
//
// Threading
//   Single owner (one lcore). Telemetry ("show fdb") must reach it through the
//   owner's control ring, or take a snapshot with for_each() from that lcore;
//   the counters alone may be read from any thread (counter64).
//
// Counters (fdb_counters)
//   learned     new stations inserted
//   moved       known stations seen on a different port (entry updated)
//   aged        entries removed because they expired (age() sweep or reuse
//               of an expired slot by learn())
//   table_full  learns refused: size() == capacity or no cuckoo path found
//   flushed     entries removed by flush_port()/flush()/remove()
//   invalid_src learns refused: multicast/broadcast or all-zero source MAC
//   hits/misses lookups (a miss includes an expired entry)
//
// Config example (switch_cfg): `fdb_aging: 300s`; capacity is a build-time
// choice of the pipeline (e.g. fdb{16384, cfg.fdb_aging, cfg.seed}).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "core/counter.hpp"
#include "core/units.hpp"
#include "proto/eth.hpp"

namespace rocelab {

// ---- MAC address classification ----

// Group bit (I/G) set: multicast or broadcast destination, invalid as a source.
inline bool is_multicast(const std::uint8_t* mac) noexcept {
    return (mac[0] & 0x01u) != 0;
}
inline bool is_broadcast(const std::uint8_t* mac) noexcept {
    return (mac[0] & mac[1] & mac[2] & mac[3] & mac[4] & mac[5]) == 0xff;
}
inline bool is_zero_mac(const std::uint8_t* mac) noexcept {
    return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0;
}
// IEEE 802.1D reserved 01:80:C2:00:00:00..0F (STP, PAUSE/PFC, LACP, LLDP...):
// never forwarded by a bridge.
inline bool is_link_local_reserved(const std::uint8_t* mac) noexcept {
    return mac[0] == 0x01 && mac[1] == 0x80 && mac[2] == 0xC2 && mac[3] == 0x00 && mac[4] == 0x00 &&
           (mac[5] & 0xF0u) == 0x00;
}

// The table's counters as two lists (core/counter.hpp's pattern), which give
// the struct, the switch's totals and every report of them, in this order:
// the writes to the table (learned, moved, aged, table_full, flushed), which
// each copy of a replicated table counts for itself, and what the frames
// looked up (invalid_src, hits, misses), which only the table the frame met
// counts. counter64: the owner lcore counts, telemetry reads meanwhile.
// clang-format off
#define ROCELAB_FDB_TABLE_COUNTERS(X) X(learned) X(moved) X(aged) X(table_full) X(flushed)
#define ROCELAB_FDB_LOOKUP_COUNTERS(X) X(invalid_src) X(hits) X(misses)
#define ROCELAB_FDB_COUNTERS(X) ROCELAB_FDB_TABLE_COUNTERS(X) ROCELAB_FDB_LOOKUP_COUNTERS(X)
// clang-format on
struct fdb_counters {
    ROCELAB_FDB_COUNTERS(ROCELAB_COUNTER64)
};

// One entry as reported to telemetry.
struct fdb_entry {
    mac_addr mac{};
    std::uint16_t vid = 0;
    std::uint16_t port = 0;
    nanos last_seen{};  // rounded down to 1024 ns
};

class fdb {
public:
    static constexpr std::size_t ways = 4;
    static constexpr std::size_t max_path_nodes = 128;
    static constexpr int tick_shift = 10;  // last_seen resolution: 1024 ns

    // capacity: maximum number of stations; aging: expiry time (0 = never).
    explicit fdb(std::size_t capacity, nanos aging, std::uint64_t seed = 0x5eed'fdb0'1234'5678ULL)
        : _seed(mix64(seed ^ 0xa0761d6478bd642fULL)), _capacity(std::max<std::size_t>(capacity, 1)) {
        // Two-choice 4-way cuckoo tables fill to ~95%; size for <= 90% load.
        const std::size_t want = (_capacity * 10 + 9 * ways - 1) / (9 * ways);
        _nbuckets = std::bit_ceil(std::max<std::size_t>(want, 2));
        _mask = _nbuckets - 1;
        _buckets.reset(new (std::align_val_t{64}) bucket[_nbuckets]);
        std::memset(static_cast<void*>(_buckets.get()), 0, sizeof(bucket) * _nbuckets);
        set_aging(aging);
    }

    fdb(const fdb&) = delete;
    fdb& operator=(const fdb&) = delete;
    fdb(fdb&&) noexcept = default;
    fdb& operator=(fdb&&) noexcept = default;

    void set_aging(nanos aging) noexcept {
        _aging = aging;
        const std::uint64_t t = aging.v <= 0 ? 0 : static_cast<std::uint64_t>(aging.v) >> tick_shift;
        _aging_ticks = aging.v <= 0 ? ~std::uint64_t{0} : t;
        _refresh_ticks = aging.v <= 0 ? (std::uint64_t{1} << 40) : t / 8;
    }
    nanos aging() const noexcept { return _aging; }

    // Learns (or refreshes, or moves) a source station. Hot path. Returns
    // true when it wrote the table (a new station, a move, or a refresh of
    // an entry older than aging/8): what a replica of the table (another
    // switch worker's) must be told to stay in step.
    bool learn(nanos now, const std::uint8_t* mac, std::uint16_t vid, std::uint16_t port) noexcept {
        if (is_multicast(mac) || is_zero_mac(mac)) [[unlikely]] {
            ++_ctr.invalid_src;
            return false;
        }
        const std::uint64_t key = make_key(mac, vid);
        const std::uint64_t now_t = ticks(now);
        std::uint32_t b[2];
        candidates(key, b);
        for (std::uint32_t c = 0; c < 2; ++c) {
            bucket& bk = _buckets[b[c]];
            for (std::size_t s = 0; s < ways; ++s) {
                if (bk.key[s] == key) [[likely]] {
                    const std::uint64_t m = bk.meta[s];
                    if (meta_port(m) != port) [[unlikely]] {
                        bk.meta[s] = make_meta(port, now_t);
                        ++_ctr.moved;
                        return true;
                    }
                    if (now_t - meta_ticks(m) > _refresh_ticks) {
                        bk.meta[s] = make_meta(port, now_t);
                        return true;
                    }
                    return false;
                }
            }
        }
        insert_new(key, port, now_t, b);
        return true;
    }

    // Port index of (mac, vid), or -1 on a miss or an expired entry.
    int lookup(nanos now, const std::uint8_t* mac, std::uint16_t vid) const noexcept {
        const std::uint64_t key = make_key(mac, vid);
        std::uint32_t b[2];
        candidates(key, b);
        for (std::uint32_t c = 0; c < 2; ++c) {
            const bucket& bk = _buckets[b[c]];
            for (std::size_t s = 0; s < ways; ++s) {
                if (bk.key[s] == key) {
                    const std::uint64_t m = bk.meta[s];
                    if (expired(m, ticks(now))) {
                        ++_ctr.misses;
                        return -1;
                    }
                    ++_ctr.hits;
                    return meta_port(m);
                }
            }
        }
        ++_ctr.misses;
        return -1;
    }

    // Incremental aging sweep: visits up to `budget` buckets from a cursor
    // that wraps around the table; removes expired entries. Returns the
    // number removed. Call it every N loops with a small budget (e.g. 4).
    std::size_t age(nanos now, std::size_t budget) noexcept {
        const std::uint64_t now_t = ticks(now);
        std::size_t removed = 0;
        budget = std::min(budget, _nbuckets);
        for (std::size_t i = 0; i < budget; ++i) {
            removed += clear_if(_buckets[_age_cursor], [&](std::uint64_t m) { return expired(m, now_t); });
            _age_cursor = (_age_cursor + 1) & _mask;
        }
        _size -= removed;
        _ctr.aged += removed;
        return removed;
    }

    // Removes every entry learned on `port` (link down). Returns the count.
    std::size_t flush_port(std::uint16_t port) noexcept {
        return remove_if([port](std::uint64_t m) { return meta_port(m) == port; });
    }
    std::size_t flush() noexcept {
        return remove_if([](std::uint64_t) { return true; });
    }
    bool remove(const std::uint8_t* mac, std::uint16_t vid) noexcept {
        const std::uint64_t key = make_key(mac, vid);
        std::uint32_t b[2];
        candidates(key, b);
        for (std::uint32_t c = 0; c < 2; ++c) {
            bucket& bk = _buckets[b[c]];
            for (std::size_t s = 0; s < ways; ++s) {
                if (bk.key[s] == key) {
                    bk.key[s] = 0;
                    bk.meta[s] = 0;
                    --_size;
                    ++_ctr.flushed;
                    return true;
                }
            }
        }
        return false;
    }

    // Calls f(const fdb_entry&) for every stored entry, expired or not (the
    // sweep may not have reached them yet; compare last_seen with aging()).
    template <typename F>
    void for_each(F&& f) const {
        for (std::size_t i = 0; i < _nbuckets; ++i) {
            const bucket& bk = _buckets[i];
            for (std::size_t s = 0; s < ways; ++s) {
                if (bk.key[s] != 0) {
                    fdb_entry e;
                    std::memcpy(e.mac.data(), &bk.key[s], 6);
                    e.vid = static_cast<std::uint16_t>((bk.key[s] >> 48) & 0xfffu);
                    e.port = meta_port(bk.meta[s]);
                    e.last_seen = nanos{static_cast<std::int64_t>(meta_ticks(bk.meta[s]) << tick_shift)};
                    f(e);
                }
            }
        }
    }

    std::size_t size() const noexcept { return _size; }
    std::size_t capacity() const noexcept { return _capacity; }
    std::size_t buckets() const noexcept { return _nbuckets; }
    const fdb_counters& counters() const noexcept { return _ctr; }

private:
    struct alignas(64) bucket {
        std::uint64_t key[ways];   // 0 = empty; else bit 63 | vid << 48 | mac48
        std::uint64_t meta[ways];  // port << 48 | last_seen ticks (48 bits)
    };
    static_assert(sizeof(bucket) == 64);

    struct bucket_delete {
        void operator()(bucket* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
    };

    static constexpr std::uint64_t ticks_mask = (std::uint64_t{1} << 48) - 1;

    static std::uint64_t make_key(const std::uint8_t* mac, std::uint16_t vid) noexcept {
        std::uint32_t lo;
        std::uint16_t hi;
        std::memcpy(&lo, mac, 4);
        std::memcpy(&hi, mac + 4, 2);
        return (std::uint64_t{1} << 63) | (std::uint64_t{vid & 0xfffu} << 48) | (std::uint64_t{hi} << 32) |
               lo;
    }
    static std::uint64_t ticks(nanos now) noexcept {
        return (static_cast<std::uint64_t>(now.v) >> tick_shift) & ticks_mask;
    }
    static std::uint64_t make_meta(std::uint16_t port, std::uint64_t t) noexcept {
        return (std::uint64_t{port} << 48) | (t & ticks_mask);
    }
    static std::uint16_t meta_port(std::uint64_t m) noexcept { return static_cast<std::uint16_t>(m >> 48); }
    static std::uint64_t meta_ticks(std::uint64_t m) noexcept { return m & ticks_mask; }
    bool expired(std::uint64_t m, std::uint64_t now_t) const noexcept {
        return ((now_t - meta_ticks(m)) & ticks_mask) > _aging_ticks;
    }

    // Murmur3/splitmix-style 64-bit finaliser: every input bit reaches every
    // output bit, so both halves can index buckets independently.
    static constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    void candidates(std::uint64_t key, std::uint32_t out[2]) const noexcept {
        const std::uint64_t h = mix64(key ^ _seed);
        out[0] = static_cast<std::uint32_t>(h & _mask);
        out[1] = static_cast<std::uint32_t>((h >> 32) & _mask);
        if (out[1] == out[0]) {
            out[1] = out[0] ^ 1u;
        }
    }
    std::uint32_t alt_bucket(std::uint64_t key, std::uint32_t b) const noexcept {
        std::uint32_t c[2];
        candidates(key, c);
        return c[0] == b ? c[1] : c[0];
    }

    void insert_new(std::uint64_t key, std::uint16_t port, std::uint64_t now_t,
                    const std::uint32_t b[2]) noexcept {
        // Reuse an expired slot in a candidate bucket first: no size change.
        for (std::uint32_t c = 0; c < 2; ++c) {
            bucket& bk = _buckets[b[c]];
            for (std::size_t s = 0; s < ways; ++s) {
                if (bk.key[s] != 0 && expired(bk.meta[s], now_t)) {
                    bk.key[s] = key;
                    bk.meta[s] = make_meta(port, now_t);
                    ++_ctr.aged;
                    ++_ctr.learned;
                    return;
                }
            }
        }
        if (_size >= _capacity) {
            ++_ctr.table_full;
            return;
        }
        // Breadth-first search for a bucket with a free slot, reachable by
        // moving entries to their alternate buckets.
        struct node {
            std::uint32_t bucket;
            std::int16_t parent;
            std::uint8_t slot;
        };
        node q[max_path_nodes];
        std::size_t qn = 0;
        q[qn++] = node{b[0], -1, 0};
        q[qn++] = node{b[1], -1, 0};
        for (std::size_t i = 0; i < qn; ++i) {
            const bucket& bk = _buckets[q[i].bucket];
            for (std::size_t s = 0; s < ways; ++s) {
                if (bk.key[s] == 0) {
                    place_along_path(q, i, static_cast<std::uint8_t>(s), key, make_meta(port, now_t));
                    ++_size;
                    ++_ctr.learned;
                    return;
                }
            }
            for (std::size_t s = 0; s < ways && qn < max_path_nodes; ++s) {
                const std::uint32_t child = alt_bucket(bk.key[s], q[i].bucket);
                bool cycle = false;
                for (int a = static_cast<int>(i); a >= 0; a = q[a].parent) {
                    if (q[a].bucket == child) {
                        cycle = true;
                        break;
                    }
                }
                if (!cycle) {
                    q[qn++] = node{child, static_cast<std::int16_t>(i), static_cast<std::uint8_t>(s)};
                }
            }
        }
        ++_ctr.table_full;
    }

    template <typename Node>
    void place_along_path(const Node* q, std::size_t at, std::uint8_t free_slot, std::uint64_t key,
                          std::uint64_t meta) noexcept {
        std::size_t cur = at;
        while (q[cur].parent >= 0) {
            const Node& n = q[cur];
            bucket& from = _buckets[q[n.parent].bucket];
            bucket& to = _buckets[n.bucket];
            to.key[free_slot] = from.key[n.slot];
            to.meta[free_slot] = from.meta[n.slot];
            free_slot = n.slot;
            cur = static_cast<std::size_t>(n.parent);
        }
        bucket& root = _buckets[q[cur].bucket];
        root.key[free_slot] = key;
        root.meta[free_slot] = meta;
    }

    // Empties the slots of `bk` whose entry's meta matches; returns how many.
    template <typename Pred>
    static std::size_t clear_if(bucket& bk, Pred pred) noexcept {
        std::size_t removed = 0;
        for (std::size_t s = 0; s < ways; ++s) {
            if (bk.key[s] != 0 && pred(bk.meta[s])) {
                bk.key[s] = 0;
                bk.meta[s] = 0;
                ++removed;
            }
        }
        return removed;
    }

    template <typename Pred>
    std::size_t remove_if(Pred pred) noexcept {
        std::size_t removed = 0;
        for (std::size_t i = 0; i < _nbuckets; ++i) {
            removed += clear_if(_buckets[i], pred);
        }
        _size -= removed;
        _ctr.flushed += removed;
        return removed;
    }

    // Hot, read-mostly.
    std::unique_ptr<bucket[], bucket_delete> _buckets;
    std::size_t _mask = 0;
    std::uint64_t _aging_ticks = 0;
    std::uint64_t _refresh_ticks = 0;
    std::uint64_t _seed = 0;
    // Cold.
    std::size_t _nbuckets = 0;
    std::size_t _capacity = 0;
    counter64 _size = 0;  // read by other threads (size())
    std::size_t _age_cursor = 0;
    nanos _aging{};
    mutable fdb_counters _ctr{};
};

}  // namespace rocelab
