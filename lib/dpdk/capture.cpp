#include "dpdk/capture.hpp"
#include "dpdk/tsan.hpp"

#include <pcap/pcap.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace rocelab::dpdk {

namespace {
// The lanes, outside TSan's view (dpdk/tsan.hpp): the captured mbufs are
// annotated instead.
ROCELAB_NO_TSAN int ring_put_sp(rte_ring* r, rte_mbuf* c) noexcept { return rte_ring_sp_enqueue(r, c); }
ROCELAB_NO_TSAN int ring_put_mp(rte_ring* r, rte_mbuf* c) noexcept { return rte_ring_mp_enqueue(r, c); }
ROCELAB_NO_TSAN unsigned ring_take(rte_ring* r, void** objs, unsigned n) noexcept {
    return rte_ring_sc_dequeue_burst(r, objs, n, nullptr);
}
}  // namespace

namespace {
struct cap_meta {
    std::int64_t ns;
    std::uint32_t orig_len;
    std::uint16_t port;
    std::uint8_t tx;
};
// The capture buffers frames between the lcore that taps them and the
// control thread that writes them. Its pool's mbufs hold up to snaplen
// bytes each, so the frame count follows the snaplen: as many frames as
// fit in about 32 MiB, at least 8191 (full frames: ~78 MB with 9 KiB
// snaplen, as before; 32767 x 4 KiB frames did not fit rocelab-gen's
// default -m), at most 65535 (a 128 B snaplen: ~30 MB, about 36 ms of four
// 1 Gbps hosts' traffic, both directions, while the control thread waits
// for a CPU).
unsigned cap_pool_size(std::uint32_t room) noexcept {
    const std::uint64_t per = room + 256u;  // data room + mbuf header, private area, mempool overhead
    return static_cast<unsigned>(std::clamp<std::uint64_t>((32ull << 20) / per, 8191, 65535));
}
}  // namespace

struct capture::impl {
    pcap_t* dead = nullptr;
    std::vector<pcap_dumper_t*> dumpers;  // [port*2 + tx]
    std::int64_t wall_at_zero = 0;
    std::vector<unsigned char> buf;
    std::array<std::uint16_t, RTE_MAX_LCORE> lane_of{};  // lcore id -> lane (EAL lcores)
};

// One producer's ring to the writer, with that producer's counters, on
// cache lines of their own; the writer's side (what drain() has taken from
// the ring and not written yet) on lines of its own too.
struct alignas(64) capture::lane {
    rte_ring* ring = nullptr;
    bool shared = false;  // the lane of threads that are no EAL lcore: several producers
    std::uint64_t captured = 0;
    std::uint64_t dropped = 0;
    struct alignas(64) staged {
        void* objs[64];
        unsigned n = 0;
        unsigned at = 0;
    } w;
};

namespace {
// A lane's counter: its one producer stores (relaxed) what it alone
// increments; the shared lane's producers add atomically.
inline void count(const bool shared, std::uint64_t& c) noexcept {
    if (shared) [[unlikely]] {
        __atomic_fetch_add(&c, 1, __ATOMIC_RELAXED);
    } else {
        __atomic_store_n(&c, c + 1, __ATOMIC_RELAXED);
    }
}
}  // namespace

capture::~capture() {
    if (_lanes != nullptr) {
        while (drain() != 0) {
        }
    }
    if (_impl) {
        for (auto* d : _impl->dumpers) {
            if (d != nullptr) { pcap_dump_close(d); }
        }
        if (_impl->dead != nullptr) { pcap_close(_impl->dead); }
    }
    if (_lanes != nullptr) {
        for (unsigned k = 0; k <= _n_lanes; ++k) { rte_ring_free(_lanes[k].ring); }
        delete[] _lanes;
    }
    if (_pool != nullptr) { rte_mempool_free(_pool); }
}

std::variant<std::unique_ptr<capture>, std::string> capture::open(const std::string& dir,
                                                                 const std::vector<std::string>& port_names,
                                                                 std::uint32_t snaplen, std::int64_t wall_ns_at_zero,
                                                                 const std::string& tag) {
    std::unique_ptr<capture> c(new capture());
    c->_impl = std::make_unique<impl>();
    c->_snaplen = snaplen;
    c->_impl->wall_at_zero = wall_ns_at_zero;
    c->_impl->buf.resize(65536);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        return "--pcap-out " + dir + ": cannot create directory: " + std::strerror(errno);
    }
    c->_impl->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    for (const auto& name : port_names) {
        for (const char* d : {"rx", "tx"}) {
            const std::string path = dir + "/" + name + "-" + d + ".pcap";
            pcap_dumper_t* dd = pcap_dump_open(c->_impl->dead, path.c_str());
            if (dd == nullptr) {
                return "--pcap-out: cannot open " + path + ": " + pcap_geterr(c->_impl->dead);
            }
            c->_impl->dumpers.push_back(dd);
        }
    }
    const std::uint16_t room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + std::min<std::uint32_t>(snaplen, 9216));
    const unsigned n = cap_pool_size(room);
    c->_pool = rte_pktmbuf_pool_create_by_ops(("cap_" + tag).c_str(), n, 256, sizeof(cap_meta) + 8, room,
                                              SOCKET_ID_ANY, mbuf_pool_ops());
    if (c->_pool == nullptr) { return std::string("capture pool: ") + rte_strerror(rte_errno); }
    // A lane per EAL lcore (its rings single-producer), and the shared one
    // (multi-producer) for any other thread. Each holds the whole pool.
    c->_n_lanes = rte_lcore_count();
    c->_lanes = new lane[c->_n_lanes + 1];
    c->_impl->lane_of.fill(static_cast<std::uint16_t>(c->_n_lanes));
    for (unsigned id = 0; id < RTE_MAX_LCORE; ++id) {
        const int li = rte_lcore_index(static_cast<int>(id));
        if (li >= 0 && static_cast<unsigned>(li) < c->_n_lanes) { c->_impl->lane_of[id] = static_cast<std::uint16_t>(li); }
    }
    for (unsigned k = 0; k <= c->_n_lanes; ++k) {
        lane& l = c->_lanes[k];
        l.shared = k == c->_n_lanes;
        const std::string name = "capr" + std::to_string(k) + "_" + tag;
        l.ring = rte_ring_create(name.c_str(), rte_align32pow2(n + 1), SOCKET_ID_ANY,
                                 l.shared ? RING_F_SC_DEQ : RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (l.ring == nullptr) { return "capture ring " + name + ": " + rte_strerror(rte_errno); }
    }
    return c;
}

capture::lane& capture::my_lane() noexcept {
    const unsigned id = rte_lcore_id();  // LCORE_ID_ANY for a thread that is no EAL lcore
    return _lanes[id < RTE_MAX_LCORE ? _impl->lane_of[id] : _n_lanes];
}

void capture::tap(std::uint16_t port_idx, bool tx, const rte_mbuf* m, nanos now) noexcept {
    lane& l = my_lane();
    const std::uint32_t len = std::min<std::uint32_t>(rte_pktmbuf_pkt_len(m), _snaplen);
    rte_mbuf* c = rte_pktmbuf_alloc(_pool);
    if (c == nullptr) {
        count(l.shared, l.dropped);
        return;
    }
    const std::uint32_t room = rte_pktmbuf_tailroom(c);
    const std::uint32_t n = std::min(len, room);
    char* dst = rte_pktmbuf_append(c, static_cast<std::uint16_t>(n));
    const void* src = rte_pktmbuf_read(m, 0, n, dst);
    if (src != dst && src != nullptr) { std::memcpy(dst, src, n); }
    auto* meta = static_cast<cap_meta*>(rte_mbuf_to_priv(c));
    meta->ns = now.v;
    meta->orig_len = rte_pktmbuf_pkt_len(m);
    meta->port = port_idx;
    meta->tx = tx ? 1 : 0;
    tsan_release(c);  // to the writer thread (dpdk/tsan.hpp)
    if ((l.shared ? ring_put_mp(l.ring, c) : ring_put_sp(l.ring, c)) != 0) {
        rte_pktmbuf_free(c);
        count(l.shared, l.dropped);
        return;
    }
    count(l.shared, l.captured);
}

std::uint64_t capture::captured() const noexcept {
    std::uint64_t t = 0;
    for (unsigned k = 0; k <= _n_lanes; ++k) { t += __atomic_load_n(&_lanes[k].captured, __ATOMIC_RELAXED); }
    return t;
}

std::uint64_t capture::dropped() const noexcept {
    std::uint64_t t = 0;
    for (unsigned k = 0; k <= _n_lanes; ++k) { t += __atomic_load_n(&_lanes[k].dropped, __ATOMIC_RELAXED); }
    return t;
}

void capture::write(rte_mbuf* c) {
    const auto* meta = static_cast<const cap_meta*>(rte_mbuf_to_priv(c));
    const std::size_t idx = std::size_t(meta->port) * 2 + meta->tx;
    if (idx < _impl->dumpers.size()) {
        pcap_pkthdr h{};
        const std::int64_t t = _impl->wall_at_zero + meta->ns;
        h.ts.tv_sec = t / 1000000000;
        h.ts.tv_usec = t % 1000000000;  // nanosecond-precision file
        h.caplen = rte_pktmbuf_data_len(c);
        h.len = meta->orig_len;
        pcap_dump(reinterpret_cast<u_char*>(_impl->dumpers[idx]), &h, rte_pktmbuf_mtod(c, const u_char*));
    }
    rte_pktmbuf_free(c);
}

// Oldest first across the lanes: each lane's next frame is compared by its
// time and the earliest is written. A lane found empty is not asked again
// in this call (its ring's producer index is another core's line), so a
// frame it receives meanwhile waits for the next call.
std::size_t capture::drain(std::size_t budget) {
    std::size_t total = 0;
    std::uint64_t dry = 0;  // lanes found empty in this call (at most 64 are asked)
    while (total < budget) {
        lane* best = nullptr;
        std::int64_t best_ns = 0;
        for (unsigned k = 0; k <= _n_lanes; ++k) {
            lane::staged& s = _lanes[k].w;
            if (s.at == s.n) {
                if (_lanes[k].ring == nullptr) { continue; }  // open() failed before making it
                if (k < 64 && ((dry >> k) & 1u) != 0) { continue; }
                s.n = ring_take(_lanes[k].ring, s.objs, 64);
                s.at = 0;
                if (s.n == 0) {
                    if (k < 64) { dry |= std::uint64_t{1} << k; }
                    continue;
                }
                tsan_acquire_n(s.objs, s.n);
            }
            const std::int64_t ns = static_cast<const cap_meta*>(rte_mbuf_to_priv(static_cast<rte_mbuf*>(s.objs[s.at])))->ns;
            if (best == nullptr || ns < best_ns) {
                best = &_lanes[k];
                best_ns = ns;
            }
        }
        if (best == nullptr) { break; }
        write(static_cast<rte_mbuf*>(best->w.objs[best->w.at++]));
        ++total;
    }
    _written += total;
    return total;
}

void capture::flush() {
    while (drain() != 0) {
    }
    for (auto* d : _impl->dumpers) { pcap_dump_flush(d); }
}

}  // namespace rocelab::dpdk
