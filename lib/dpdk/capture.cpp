#include "dpdk/capture.hpp"
#include "dpdk/tsan.hpp"

#include <pcap/pcap.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <sys/stat.h>

namespace rocelab::dpdk {

namespace {
// The workers' ring to the writer thread, outside TSan's view (dpdk/tsan.hpp):
// the captured mbufs are annotated instead.
ROCELAB_NO_TSAN int ring_put(rte_ring* r, rte_mbuf* c) noexcept { return rte_ring_enqueue(r, c); }
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
};

capture::~capture() {
    if (_ring != nullptr) {
        while (drain() != 0) {
        }
    }
    if (_impl) {
        for (auto* d : _impl->dumpers) {
            if (d != nullptr) { pcap_dump_close(d); }
        }
        if (_impl->dead != nullptr) { pcap_close(_impl->dead); }
    }
    if (_ring != nullptr) { rte_ring_free(_ring); }
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
    c->_ring = rte_ring_create(("capr_" + tag).c_str(), rte_align32pow2(n + 1), SOCKET_ID_ANY,
                               RING_F_SC_DEQ);  // several switch workers tap (multi-producer)
    if (c->_ring == nullptr) { return std::string("capture ring: ") + rte_strerror(rte_errno); }
    return c;
}

void capture::tap(std::uint16_t port_idx, bool tx, const rte_mbuf* m, nanos now) noexcept {
    const std::uint32_t len = std::min<std::uint32_t>(rte_pktmbuf_pkt_len(m), _snaplen);
    rte_mbuf* c = rte_pktmbuf_alloc(_pool);
    if (c == nullptr) {
        __atomic_fetch_add(&_dropped, 1, __ATOMIC_RELAXED);
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
    if (ring_put(_ring, c) != 0) {
        rte_pktmbuf_free(c);
        __atomic_fetch_add(&_dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&_captured, 1, __ATOMIC_RELAXED);
}

std::size_t capture::drain(std::size_t budget) {
    void* objs[64];
    std::size_t total = 0;
    while (total < budget) {
        const unsigned n = ring_take(_ring, objs, 64);
        if (n == 0) { break; }
        tsan_acquire_n(objs, n);
        for (unsigned i = 0; i < n; ++i) {
            auto* c = static_cast<rte_mbuf*>(objs[i]);
            const auto* meta = static_cast<const cap_meta*>(rte_mbuf_to_priv(c));
            const std::size_t idx = std::size_t(meta->port) * 2 + meta->tx;
            if (idx < _impl->dumpers.size()) {
                pcap_pkthdr h{};
                const std::int64_t t = _impl->wall_at_zero + meta->ns;
                h.ts.tv_sec = t / 1000000000;
                h.ts.tv_usec = t % 1000000000;  // nanosecond-precision file
                h.caplen = rte_pktmbuf_data_len(c);
                h.len = meta->orig_len;
                pcap_dump(reinterpret_cast<u_char*>(_impl->dumpers[idx]), &h,
                          rte_pktmbuf_mtod(c, const u_char*));
            }
            rte_pktmbuf_free(c);
        }
        total += n;
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
