// mmu.hpp - shared-buffer ingress accounting per (port, priority group), with
// lossless XOFF/XON and headroom (SONiC BUFFER_POOL / BUFFER_PROFILE /
// BUFFER_PG, SAI ingress PG semantics; ROCE_REFERENCE.md 2.3).
//
// What: every received packet is charged to its ingress (port, PG) before it
// is queued, and released when it leaves the switch (sent or dropped
// later). Each PG owns three regions:
//   reserved   guaranteed bytes (`size` of the profile, cfg.reserved)
//   shared     bytes taken from the pool's shared part, limited by a
//              threshold (dynamic: alpha x free shared; static: static_th)
//   headroom   lossless PGs only: bytes that arrive after XOFF (<= cfg.xoff)
//
// Admission order for a packet of `len` bytes (charge = len rounded up to
// whole cells when pool.cell > 0):
//   1. reserved, up to cfg.reserved (a packet may be split: the part that
//      fits goes to reserved, the rest continues);
//   2. unless the PG is in XOFF: shared, if pg.shared + rest <= threshold and
//      pool.shared_used + rest <= pool.shared_size;
//   3. lossy PG: drop (verdict drop_lossy, nothing charged);
//      lossless PG: the PG enters XOFF (if not already) and the rest goes to
//      headroom if pg.headroom + rest <= cfg.xoff; else drop
//      (drop_headroom_overflow - the headroom is too small for the link, a
//      misconfiguration, never normal congestion).
//   While a PG is in XOFF all arrivals beyond reserved go to headroom: the
//   peer has been told to stop, and what still arrives is in-flight data.
//   A dropped packet charges nothing (the token is zero).
//
// Release: the caller keeps the admit token (charge, 4 bytes) with the packet
// and returns it. The PG's bytes drain headroom first, then shared, then
// reserved, whatever region the packet itself was charged to (as HPCC's
// SwitchMmu and ASICs that keep one occupancy counter per region). Totals
// are exact: every region returns to zero when every admitted token has been
// released. Draining headroom first makes XON possible as soon as the PG's
// occupancy falls, not only when the packets charged last leave.
//
// XON: checked on release. A PG in XOFF leaves it when its headroom is
// empty and its shared use is 0 or below the XON level:
//   cfg.xon set         xon level = xon (absolute shared bytes)
//   cfg.xon_offset set  xon level = threshold - xon_offset (saturating)
//   neither             xon level = threshold - default_xon_hysteresis
//                       (9216 B, one jumbo frame; HPCC uses 3 KB)
// where threshold is the PG's current shared limit.
//
// Pool partition: pool shared size = pool.size - sum(reserved) - sum(xoff)
// over all (port, PG): headroom is reserved per PG. With a shared headroom
// pool (pool.shared_headroom > 0, SONiC BUFFER_POOL xoff) it is
// pool.size - sum(reserved) - shared_headroom instead: a lossless PG's
// headroom bytes are taken from that pool (at most cfg.xoff per PG, and
// drop_headroom_overflow when the shared headroom pool is full), so the
// PGs' xoff may add up to more than the pool (over-subscription). validate()
// reports a negative remainder. Note that SONiC
// lossless profiles set `size` = xoff + xon; a profile copied verbatim
// therefore reserves its headroom twice here (conservative, never lossy).
//
// Threshold: dynamic_th = k gives alpha = 2^k; threshold = free << k for
// k >= 0 and free >> -k for k < 0, free = pool shared size - pool shared
// used (integer shifts, no division). Supported k: -8..8 (SAI/SONiC range;
// SONiC profiles typically use -7..3). static_th: threshold = static_th.
// An unconfigured PG (configured == false) is lossy and limited by the
// pool alone. With pool.enabled == false accounting is still kept (for
// telemetry) but nothing is ever dropped or paused.
//
// Counters (pg_counters, cold, per (port, PG); port totals by summing):
//   peak_use, peak_headroom (bytes), drop_lossy, drop_headroom_overflow
//   (packets), dropped_bytes, xoff_transitions, xon_transitions,
//   admitted (packets)
//
// Config example (SONiC names):
//   BUFFER_POOL:    { ingress_lossless_pool: { size: 12MiB } }
//   BUFFER_PROFILE: { pg_lossless_100000_40m: { size: 0, dynamic_th: -2,
//                      xoff: 80KiB, xon: 18KiB } }
//   BUFFER_PG:      { "Ethernet0|3-4": pg_lossless_100000_40m }
//   ->  mmu m{cfg.pool, nports, per_port_pgs};
//       admit_result r = m.admit(port, pg, len); ... m.release(port, pg, r.token);
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "qos/buffer_cfg.hpp"
#include "core/counter.hpp"
#include "core/units.hpp"
#include "qos/qos_maps.hpp"

namespace rocelab {

enum class admit_verdict : std::uint8_t { admitted, drop_lossy, drop_headroom_overflow };

// Bit flags: which regions an admitted packet was charged to.
enum mmu_region : std::uint8_t { region_reserved = 1, region_shared = 2, region_headroom = 4 };

// What the caller keeps with the packet to release it: the charged bytes.
struct charge {
    std::uint32_t bytes = 0;
};

struct admit_result {
    admit_verdict verdict = admit_verdict::admitted;
    std::uint8_t regions = 0;   // mmu_region bits charged
    bool xoff_entered = false;  // this PG just went into XOFF (send PFC)
    charge token{};             // 0 when dropped
    bool ok() const noexcept { return verdict == admit_verdict::admitted; }
};

// The counter list gives both the struct and the port totals (port_totals()
// sums every one). peak_use: max reserved + shared + headroom; peak_headroom:
// max headroom.
// clang-format off
#define ROCELAB_PG_COUNTERS(X) \
    X(admitted) X(drop_lossy) X(drop_headroom_overflow) X(dropped_bytes) \
    X(xoff_transitions) X(xon_transitions) X(peak_use) X(peak_headroom)
// clang-format on

struct pg_counters {  // a snapshot (pg_snapshot, port_snapshot)
    ROCELAB_PG_COUNTERS(ROCELAB_U64_COUNTER)
};
// The live counters: the worker that owns the port counts, telemetry reads
// them while it runs (relaxed atomics, core/counter.hpp).
struct pg_live_counters {
    ROCELAB_PG_COUNTERS(ROCELAB_COUNTER64)
};
ROCELAB_COUNTER_SNAPSHOT(ROCELAB_PG_COUNTERS, pg_live_counters, pg_counters)

struct pg_snapshot {
    std::uint64_t reserved_use = 0;
    std::uint64_t shared_use = 0;
    std::uint64_t headroom_use = 0;
    std::uint64_t threshold = 0;  // current shared limit
    std::uint64_t xon_level = 0;  // current XON level (shared bytes)
    bool lossless = false;
    bool xoff = false;
    pg_counters counters{};
};

struct port_snapshot {
    std::uint64_t reserved_use = 0;
    std::uint64_t shared_use = 0;
    std::uint64_t headroom_use = 0;
    std::uint8_t xoff_pgs = 0;
    pg_counters totals{};  // sums; peak_* are sums of per-PG peaks
};

// The pool's figures that reports give (size, shared part, shared bytes in
// use now and at most): one list for the snapshot below and the switch
// pipeline's pool_figures, and its copy (core/counter.hpp).
// clang-format off
#define ROCELAB_POOL_FIGURES(X) X(size) X(shared_size) X(shared_used) X(peak_shared_used)
// clang-format on
struct pool_snapshot {
    ROCELAB_POOL_FIGURES(ROCELAB_U64_COUNTER)
    std::uint64_t reserved_total = 0;
    std::uint64_t headroom_total = 0;
};

class mmu {
public:
    static constexpr std::uint64_t default_xon_hysteresis = 9216;
    static constexpr int min_dynamic_th = -8;
    static constexpr int max_dynamic_th = 8;

    // Empty string when (pool, pgs) is usable; otherwise one message naming
    // the port/PG and field. pgs holds one entry per port, or one entry that
    // applies to every port.
    static std::string validate(const buffer_pool_cfg& pool, int num_ports,
                                std::span<const std::array<pg_buffer_cfg, 8>> pgs) {
        if (num_ports <= 0) {
            return "mmu: number of ports must be > 0";
        }
        if (pgs.size() != 1 && pgs.size() != static_cast<std::size_t>(num_ports)) {
            return "mmu: BUFFER_PG must give one PG table per port (" + std::to_string(num_ports) +
                   ") or one for all ports, got " + std::to_string(pgs.size());
        }
        if (!pool.enabled) {
            return {};
        }
        if (pool.cell.v > 65536) {
            return "BUFFER_POOL.cell: " + std::to_string(pool.cell.v) + " bytes, accepted range 0..64KiB";
        }
        std::uint64_t reserved = 0;
        for (int p = 0; p < num_ports; ++p) {
            const auto& tbl = pgs.size() == 1 ? pgs[0] : pgs[static_cast<std::size_t>(p)];
            for (int g = 0; g < num_pgs; ++g) {
                const pg_buffer_cfg& c = tbl[static_cast<std::size_t>(g)];
                if (!c.configured) {
                    continue;
                }
                const std::string where = "BUFFER_PG port " + std::to_string(p) + " pg " + std::to_string(g);
                if (c.mode == threshold_mode::dynamic_th &&
                    (c.dynamic_th < min_dynamic_th || c.dynamic_th > max_dynamic_th)) {
                    return where + ": dynamic_th " + std::to_string(c.dynamic_th) + ", accepted range -8..8";
                }
                if (c.xon && c.xon_offset) {
                    return where + ": give xon or xon_offset, not both";
                }
                reserved += c.reserved.v + (pool.shared_headroom.v > 0 ? 0 : c.xoff.v);
            }
        }
        reserved += pool.shared_headroom.v;
        if (reserved > pool.size.v) {
            return "BUFFER_POOL.size " + std::to_string(pool.size.v) + " bytes is smaller than the " +
                   std::to_string(reserved) + " bytes reserved by BUFFER_PG (" +
                   (pool.shared_headroom.v > 0 ? "size of every PG and the shared headroom pool"
                                               : "size + xoff of every PG") + ")";
        }
        return {};
    }

    // Precondition: validate(...) returned "". Allocates here only.
    mmu(const buffer_pool_cfg& pool, int num_ports, std::span<const std::array<pg_buffer_cfg, 8>> pgs)
        : _num_ports(num_ports > 0 ? num_ports : 0),
          _cell(pool.enabled ? static_cast<std::uint32_t>(pool.cell.v) : 0),
          _cell_magic(_cell >= 2 ? ~std::uint64_t{0} / _cell + 1 : 0),
          _pgs(static_cast<std::size_t>(_num_ports) * num_pgs),
          _counters(static_cast<std::size_t>(_num_ports) * num_pgs),
          _xoff(static_cast<std::size_t>(_num_ports), xoff_mask{}) {
        std::uint64_t reserved = 0;
        std::uint64_t headroom = 0;
        for (int p = 0; p < _num_ports; ++p) {
            const std::size_t src = pgs.size() == 1 ? 0 : static_cast<std::size_t>(p);
            for (int g = 0; g < num_pgs; ++g) {
                pg_state& s = _pgs[index(p, g)];
                const pg_buffer_cfg* c = src < pgs.size() ? &pgs[src][static_cast<std::size_t>(g)] : nullptr;
                if (!pool.enabled || c == nullptr || !c->configured) {
                    s.mode = mode_pool_only;
                    continue;
                }
                s.reserved_limit = c->reserved.v;
                s.headroom_limit = c->xoff.v;
                if (c->mode == threshold_mode::static_th) {
                    s.mode = mode_static;
                    s.static_th = c->static_th.v;
                } else {
                    s.mode = mode_dynamic;
                    s.shift =
                        static_cast<std::int8_t>(std::clamp(c->dynamic_th, min_dynamic_th, max_dynamic_th));
                }
                if (c->xon) {
                    s.xon_kind = xon_absolute;
                    s.xon_value = c->xon->v;
                } else if (c->xon_offset) {
                    s.xon_kind = xon_offset;
                    s.xon_value = c->xon_offset->v;
                } else {
                    s.xon_kind = xon_offset;
                    s.xon_value = default_xon_hysteresis;
                }
                reserved += s.reserved_limit;
                headroom += s.headroom_limit;
            }
        }
        _pool_size = pool.size.v;
        _reserved_total = reserved;
        _shp_size = pool.enabled ? pool.shared_headroom.v : 0;
        if (_shp_size > 0) {
            headroom = _shp_size;  // the PGs' xoff are caps within it, not reservations
        }
        _headroom_total = headroom;
        if (!pool.enabled) {
            _pool_shared_size = UINT64_C(1) << 62;  // accounting only, never full
        } else {
            _pool_shared_size = pool.size.v > reserved + headroom ? pool.size.v - reserved - headroom : 0;
        }
    }

    int num_ports() const noexcept { return _num_ports; }
    bool lossless(int port, int pg) const noexcept { return _pgs[index(port, pg)].headroom_limit > 0; }
    // Bytes (port, pg) holds now, in all its regions.
    std::uint64_t use(int port, int pg) const noexcept {
        const pg_state& s = _pgs[index(port, pg)];
        return s.reserved_use + s.shared_use + s.headroom_use;
    }
    // Bytes (port, pg) can always hold, whatever the pool's state: its
    // reserved bytes plus its headroom (credit mode advertises these).
    std::uint64_t guaranteed(int port, int pg) const noexcept {
        const pg_state& s = _pgs[index(port, pg)];
        return s.reserved_limit + s.headroom_limit;
    }
    std::uint32_t cell() const noexcept { return _cell; }
    bool shared_headroom() const noexcept { return _shp_size != 0; }

    // Bytes a packet of `len` bytes is charged (len rounded up to cells).
    // Per frame, so no division instruction (a 32-bit div was most of
    // charge's cycles at 74 B, perf): the quotient by the cell is a multiply
    // by _cell_magic = ceil(2^64 / cell), exact for every 32-bit dividend
    // and cell >= 2 (Lemire, Kaser and Kurz, "Faster remainder by direct
    // computation", 2019). Cell <= 64 KiB (validate) and len < 4 GiB - cell.
    std::uint32_t charge_for(std::uint32_t len) const noexcept { return cells{_cell, _cell_magic}(len); }

    // charge_for as a value: a loop over many frames keeps the cell and its
    // magic in registers (through the mmu, both were read again per frame).
    struct cells {
        std::uint32_t cell = 0;
        std::uint64_t magic = 0;
        std::uint32_t operator()(std::uint32_t len) const noexcept {
            if (cell <= 1) {
                return len;
            }
            const std::uint32_t n = len + cell - 1;
            const auto q = static_cast<std::uint32_t>((static_cast<unsigned __int128>(magic) * n) >> 64);
            return q * cell;
        }
    };
    cells charger() const noexcept { return {_cell, _cell_magic}; }

    // Per frame, so the common case is inline: the PG is not in XOFF (or
    // the frame fits in what is left of its reserved bytes) and the shared
    // bytes it needs are there. The rest (a lossy drop, XOFF, headroom)
    // takes admit_slow, which decides the same frame from the start. The
    // out-of-line call and its register saves were a third of admit's
    // cycles at 74 B (perf, RoCE default profile).
    [[gnu::always_inline]] admit_result admit(int port, int pg, std::uint32_t len) noexcept {
        if (_run_mask != 0) [[unlikely]] { settle(); }
        const std::size_t i = index(port, pg);
        pg_state& s = _pgs[i];
        const std::uint64_t c = charge_for(len);
        const std::uint64_t room = s.reserved_limit - s.reserved_use;
        const std::uint64_t to_res = room < c ? room : c;
        const std::uint64_t rest = c - to_res;
        admit_result r;
        if (rest != 0) {
            // take_shared changes nothing when it fails, so admit_slow sees the same state.
            if ((_xoff[static_cast<std::size_t>(port)] >> pg & 1u) != 0 || !take_shared(s, port, rest)) [[unlikely]] {
                return admit_slow(port, pg, len);
            }
            r.regions = region_shared;
        }
        if (to_res != 0) {
            s.reserved_use += to_res;
            r.regions |= region_reserved;
        }
        pg_live_counters& k = _counters[i];
        ++k.admitted;
        const std::uint64_t u = s.reserved_use + s.shared_use + s.headroom_use;
        if (u > k.peak_use) { k.peak_use = u; }
        r.token.bytes = static_cast<std::uint32_t>(c);
        return r;
    }

    // admit() for any frame: the same decision, with the drops, the move
    // into XOFF and the headroom.
    [[gnu::noinline]] admit_result admit_slow(int port, int pg, std::uint32_t len) noexcept {
        settle();
        const std::size_t i = index(port, pg);
        pg_state& s = _pgs[i];
        pg_live_counters& k = _counters[i];
        admit_result r;
        const std::uint64_t c = charge_for(len);
        std::uint64_t rest = c;

        std::uint64_t to_res = s.reserved_limit - s.reserved_use;
        to_res = to_res < rest ? to_res : rest;
        rest -= to_res;

        const std::uint8_t bit = static_cast<std::uint8_t>(1u << pg);
        xoff_mask& xmask = _xoff[static_cast<std::size_t>(port)];
        if (rest != 0) {
            if ((xmask & bit) == 0) {
                if (take_shared(s, port, rest)) {
                    r.regions = region_shared;
                    rest = 0;
                } else if (s.headroom_limit == 0) {
                    r.verdict = admit_verdict::drop_lossy;
                    ++k.drop_lossy;
                    k.dropped_bytes += c;
                    return r;
                } else {
                    xmask |= bit;
                    ++k.xoff_transitions;
                    r.xoff_entered = true;
                }
            }
            if (rest != 0) {
                // Only lossless PGs get here (a lossy PG never enters XOFF).
                if (s.headroom_use + rest > s.headroom_limit || !take_shared_headroom(rest)) {
                    if (r.xoff_entered && s.headroom_use == 0 && xon_ok(s)) {
                        // The packet alone exceeds xoff and nothing is held that
                        // a release could later use to send XON: do not stay in
                        // XOFF (it would never clear).
                        xmask &= static_cast<std::uint8_t>(~bit);
                        --k.xoff_transitions;
                        r.xoff_entered = false;
                    }
                    r.verdict = admit_verdict::drop_headroom_overflow;
                    ++k.drop_headroom_overflow;
                    k.dropped_bytes += c;
                    return r;
                }
                s.headroom_use += rest;
                r.regions = region_headroom;
                k.peak_headroom = std::max<std::uint64_t>(k.peak_headroom, s.headroom_use);  // a load and a relaxed store (std::max of two counter64 returned one, copied plainly: a race with telemetry)
            }
        }
        if (to_res != 0) {
            s.reserved_use += to_res;
            r.regions |= region_reserved;
        }
        ++k.admitted;
        k.peak_use = std::max<std::uint64_t>(k.peak_use, s.reserved_use + s.shared_use + s.headroom_use);
        r.token.bytes = static_cast<std::uint32_t>(c);
        return r;
    }

    // ---- runs: a burst's frames admitted with one compare each ----
    //
    // Most of a switch's RX burst is a few (port, PG) far from every limit,
    // yet admit() reads and writes the PG, the pool and two counters per
    // frame. admit_in_run() is admit() for such bursts. The first frame of a
    // PG opens a run for it: from the state then, a budget of bytes such that
    // every sequence of that PG's frames adding up to at most the budget
    // passes admit()'s inline checks frame by frame (reserved room first,
    // then shared bytes under the PG's threshold and within the pool, the PG
    // not in XOFF), whatever frames the other open runs admit in between.
    // A frame within its run's budget only adds to the run. Runs are open
    // for the PGs of one port at a time (a switch's RX burst is one port's).
    //
    // The runs reach the PGs' state when they settle: at the first call that
    // is not a frame within an open run's budget (admit_in_run for another
    // port or beyond a budget, admit, admit_slow, admit_credit and release
    // all settle first), or at settle(). So every verdict, region set and
    // token is the one admit() gives the same frame, and the state after
    // settling is the state after the same frames through admit() (peak_use
    // and the pool's peak are the values at settling: use only grows while
    // runs are open). tests/unit/qos/mmu_test.cpp checks this against admit()
    // over random sequences.
    //
    // The budgets (run_open): each run j takes reserved room r_j and x_j
    // shared bytes. While runs are open the pool's use grows by at most
    // X = sum of x_j, so run j's frames all pass if pg.shared + x_j is within
    // the threshold the pool gives with X more bytes used: the threshold only
    // falls as the pool fills, and the PG's shared use only grows. Each run
    // records the most the pool may grow with its frames still passing (its
    // tolerance); a run opens with x no larger than what every open run
    // tolerates. Dynamic threshold (F - X - x) << k >= shared + x holds for
    // x <= ((F - X) << k - shared) / (2^k + 1), F = the pool's free shared
    // bytes: the budget takes >> (k + 1) for the division (a lower bound;
    // frames beyond a budget are decided by admit(), exactly). For k < 0,
    // floor((F - X - x) / 2^m) >= shared + x <=> F - X - x >= (shared + x) 2^m.
    //
    // Single writer only: with several workers (set_workers) every frame
    // goes through admit(). The readers that do not settle (snapshot,
    // port_totals, pool, use, threshold: telemetry reads them from another
    // thread) see the state without the open runs, so the caller settles at
    // the end of each poll (the switch: switch_pipeline::poll_worker).
    [[gnu::always_inline]] admit_result admit_in_run(int port, int pg, std::uint32_t len) noexcept {
        const std::uint64_t c = charge_for(len);
        pg_run& r = _runs[static_cast<std::size_t>(pg)];
        if (port == _run_port && c < r.left) [[likely]] { return run_take(r, c); }  // a closed run's `left` is 0
        return run_open(port, pg, len);
    }

    // Apply the open runs (if any) to their PGs' state; then none is open.
    void settle() noexcept {
        if (_run_mask == 0) { return; }
        std::uint64_t cur = _pool_shared_used.load(std::memory_order_relaxed);
        for (std::uint8_t m = _run_mask; m != 0; m = static_cast<std::uint8_t>(m & (m - 1))) {
            const int pg = std::countr_zero(m);
            pg_run& r = _runs[static_cast<std::size_t>(pg)];
            const std::size_t i = index(_run_port, pg);
            pg_state& s = _pgs[i];
            const std::uint64_t bytes = r.budget + 1 - r.left;
            const std::uint64_t room = s.reserved_limit - s.reserved_use;  // = r.room: nothing else wrote s
            const std::uint64_t to_res = room < bytes ? room : bytes;
            const std::uint64_t rest = bytes - to_res;
            cur += rest;
            s.shared_use += rest;
            s.reserved_use += to_res;
            pg_live_counters& k = _counters[i];
            k.admitted += r.frames;
            const std::uint64_t u = s.reserved_use + s.shared_use + s.headroom_use;
            if (u > k.peak_use) { k.peak_use = u; }
            _run_frames += r.frames;
            r = pg_run{};
        }
        _pool_shared_used.store(cur, std::memory_order_relaxed);
        if (cur > _peak_pool_shared.load(std::memory_order_relaxed)) {
            _peak_pool_shared.store(cur, std::memory_order_relaxed);
        }
        _run_mask = 0;
        _run_port = -1;
        _run_x = 0;
        _run_tol = ~std::uint64_t{0};
    }

    // Frames admitted within runs so far (settled ones): a statistic for tests and benchmarks.
    std::uint64_t run_frames() const noexcept { return _run_frames; }

    // Credit for another worker that receives this port's frames (RSS,
    // pipelines/switch): `bytes` charged to (port, pg) now, from its reserved
    // and shared regions only, for frames that arrive later and draw on it
    // (their release returns it, as any frame's). Succeeds only when the PG
    // is not in XOFF and the bytes fit under its shared threshold and the
    // pool, so credit never takes headroom nor moves the PG into XOFF by
    // itself; otherwise nothing changes and it returns false. Counted in the
    // PG's use (and peak) like frames, but not as admitted frames.
    bool admit_credit(int port, int pg, std::uint32_t bytes) noexcept {
        settle();
        const std::size_t i = index(port, pg);
        pg_state& s = _pgs[i];
        const std::uint8_t bit = static_cast<std::uint8_t>(1u << pg);
        if ((_xoff[static_cast<std::size_t>(port)] & bit) != 0) { return false; }
        const std::uint64_t c = charge_for(bytes);
        const std::uint64_t room = s.reserved_limit - s.reserved_use;
        const std::uint64_t to_res = room < c ? room : c;
        if (c - to_res != 0 && !take_shared(s, port, c - to_res)) { return false; }
        s.reserved_use += to_res;
        pg_live_counters& k = _counters[i];
        k.peak_use = std::max<std::uint64_t>(k.peak_use, s.reserved_use + s.shared_use + s.headroom_use);
        return true;
    }

    // Return a token from admit(). Drains headroom, then shared, then
    // reserved. Returns true when this PG just left XOFF (send XON).
    bool release(int port, int pg, charge token) noexcept {
        if (_run_mask != 0) [[unlikely]] { settle(); }
        const std::size_t i = index(port, pg);
        pg_state& s = _pgs[i];
        std::uint64_t rest = token.bytes;
        const std::uint64_t from_h = std::min<std::uint64_t>(s.headroom_use, rest);
        s.headroom_use -= from_h;
        rest -= from_h;
        if (_shp_size != 0 && from_h != 0) {
            _shp_used.fetch_sub(from_h, std::memory_order_relaxed);
        }
        const std::uint64_t from_s = std::min<std::uint64_t>(s.shared_use, rest);
        s.shared_use -= from_s;
        if (from_s != 0) {
            if (_concurrent) {
                // Back into the owner's credit; beyond two chunks, the excess to the pool.
                counter64& c = _credit[_slot_of_port[static_cast<std::size_t>(port)]].bytes;
                c += from_s;
                if (c > 2 * _chunk) {
                    const std::uint64_t give = c - _chunk;
                    c -= give;
                    _pool_shared_used.fetch_sub(give, std::memory_order_relaxed);
                }
            } else {
                _pool_shared_used.store(_pool_shared_used.load(std::memory_order_relaxed) - from_s,
                                        std::memory_order_relaxed);
            }
        }
        rest -= from_s;
        s.reserved_use -= std::min<std::uint64_t>(rest, s.reserved_use);

        const std::uint8_t bit = static_cast<std::uint8_t>(1u << pg);
        xoff_mask& xmask = _xoff[static_cast<std::size_t>(port)];
        if ((xmask & bit) != 0 && s.headroom_use == 0 && xon_ok(s)) {
            xmask &= static_cast<std::uint8_t>(~bit);
            ++_counters[i].xon_transitions;
            return true;
        }
        return false;
    }

    // PGs of `port` in XOFF (bit n = PG n).
    std::uint8_t xoff_pgs(int port) const noexcept { return _xoff[static_cast<std::size_t>(port)]; }

    // Current shared limit of (port, pg), bytes.
    std::uint64_t threshold(int port, int pg) const noexcept { return threshold(_pgs[index(port, pg)]); }

    // ---- telemetry (control path) ----
    pg_snapshot snapshot(int port, int pg) const noexcept {
        const std::size_t i = index(port, pg);
        const pg_state& s = _pgs[i];
        pg_snapshot o;
        o.reserved_use = s.reserved_use;
        o.shared_use = s.shared_use;
        o.headroom_use = s.headroom_use;
        o.threshold = threshold(s);
        o.xon_level = xon_level(s);
        o.lossless = s.headroom_limit > 0;
        o.xoff = (_xoff[static_cast<std::size_t>(port)] >> pg) & 1u;
        o.counters = rocelab::snapshot(_counters[i]);  // the free one, not this member
        return o;
    }

    port_snapshot port_totals(int port) const noexcept {
        port_snapshot o;
        o.xoff_pgs = _xoff[static_cast<std::size_t>(port)];
        for (int g = 0; g < num_pgs; ++g) {
            const pg_state& s = _pgs[index(port, g)];
            const pg_live_counters& k = _counters[index(port, g)];
            o.reserved_use += s.reserved_use;
            o.shared_use += s.shared_use;
            o.headroom_use += s.headroom_use;
#define ROCELAB_PG_ADD(name) o.totals.name += k.name;
            ROCELAB_PG_COUNTERS(ROCELAB_PG_ADD)
#undef ROCELAB_PG_ADD
        }
        return o;
    }

    pool_snapshot pool() const noexcept {
        std::uint64_t held = 0;  // taken from the pool by workers, not yet used
        for (const auto& c : _credit) { held += c.bytes.load(); }
        const std::uint64_t used = _pool_shared_used.load(std::memory_order_relaxed);
        return pool_snapshot{_pool_size,
                             _pool_shared_size,
                             used > held ? used - held : 0,
                             _peak_pool_shared.load(std::memory_order_relaxed),
                             _reserved_total,
                             _headroom_total};
    }

    // Several switch workers: each admits and releases for the ingress ports
    // it owns (a PG's state has one writer), and they share the pool. A
    // worker takes shared-pool bytes in chunks (credit_chunk, 64 KiB, or
    // 1/16 of its share of a small pool) with a
    // compare-and-swap and serves its frames from that credit; a release
    // goes back into the owner's credit, and beyond two chunks the excess to
    // the pool. So a frame costs no atomic, the pool is never exceeded (the
    // credits are taken from it), and the pool's count that the dynamic
    // thresholds read includes the unused credits: thresholds are
    // conservative by at most workers x 2 chunks, and one worker may find
    // the pool full while another holds up to 2 chunks of credit.
    // port_worker: each port's worker (0..workers-1). Set before any admit().
    // With one worker (or never called) the pool is a plain count.
    static constexpr std::uint64_t credit_chunk = 64 * 1024;
    void set_workers(const std::vector<std::uint16_t>& port_worker, unsigned workers) {
        settle();
        _concurrent = workers > 1;
        // A small pool is not hoarded: a chunk is at most 1/16 of a worker's share.
        _chunk = std::clamp<std::uint64_t>(_pool_shared_size / (16 * std::max(1u, workers)), 1, credit_chunk);
        _credit = std::vector<credit_slot>(_concurrent ? workers : 0);  // before the workers start
        _slot_of_port = port_worker;
        _slot_of_port.resize(static_cast<std::size_t>(_num_ports), 0);
    }
    bool concurrent() const noexcept { return _concurrent; }

private:
    enum : std::uint8_t { mode_pool_only, mode_dynamic, mode_static };
    enum : std::uint8_t { xon_absolute, xon_offset };

    // Hot per-PG state and its precomputed config, 64 bytes.
    struct alignas(64) pg_state {
        // Written by the port's worker, read by telemetry (snapshot,
        // port_totals) while it runs: relaxed atomics.
        counter64 reserved_use = 0;
        counter64 shared_use = 0;
        counter64 headroom_use = 0;
        std::uint64_t reserved_limit = 0;
        std::uint64_t headroom_limit = 0;  // xoff; > 0 = lossless
        std::uint64_t static_th = 0;
        std::uint64_t xon_value = 0;
        std::int8_t shift = 0;
        std::uint8_t mode = mode_pool_only;
        std::uint8_t xon_kind = xon_offset;
    };

    std::size_t index(int port, int pg) const noexcept {
        return static_cast<std::size_t>(port) * num_pgs + static_cast<std::size_t>(pg);
    }

    // Take `rest` shared bytes for s (of `port`) if its threshold and the pool allow.
    bool take_shared(pg_state& s, int port, std::uint64_t rest) noexcept {
        std::uint64_t cur = _pool_shared_used.load(std::memory_order_relaxed);
        if (!_concurrent) {
            if (s.shared_use + rest > threshold_at(s, cur) || cur + rest > _pool_shared_size) { return false; }
            _pool_shared_used.store(cur + rest, std::memory_order_relaxed);
            s.shared_use += rest;
            if (cur + rest > _peak_pool_shared.load(std::memory_order_relaxed)) {
                _peak_pool_shared.store(cur + rest, std::memory_order_relaxed);
            }
            return true;
        }
        if (s.shared_use + rest > threshold_at(s, cur)) { return false; }
        counter64& c = _credit[_slot_of_port[static_cast<std::size_t>(port)]].bytes;
        if (c < rest) {  // a chunk from the pool (or what is left of it, if that covers the frame)
            const std::uint64_t need = rest - c;
            for (;;) {
                const std::uint64_t avail = _pool_shared_size - cur;
                if (avail < need) { return false; }
                const std::uint64_t take = std::max(need, std::min(_chunk, avail));
                if (_pool_shared_used.compare_exchange_weak(cur, cur + take, std::memory_order_relaxed)) {
                    c += take;
                    cur += take;
                    break;
                }
            }
            // The peak counts what the workers took from the pool (a statistic).
            if (cur > _peak_pool_shared.load(std::memory_order_relaxed)) {
                _peak_pool_shared.store(cur, std::memory_order_relaxed);
            }
        }
        c -= rest;
        s.shared_use += rest;
        return true;
    }

    // Headroom bytes from the shared headroom pool (if any). Only PGs in
    // XOFF get here (rare), so one atomic per packet is acceptable.
    bool take_shared_headroom(std::uint64_t rest) noexcept {
        if (_shp_size == 0) {
            return true;
        }
        std::uint64_t cur = _shp_used.load(std::memory_order_relaxed);
        do {
            if (cur + rest > _shp_size) {
                return false;
            }
        } while (!_shp_used.compare_exchange_weak(cur, cur + rest, std::memory_order_relaxed));
        return true;
    }

    std::uint64_t threshold(const pg_state& s) const noexcept {
        return threshold_at(s, _pool_shared_used.load(std::memory_order_relaxed));
    }
    std::uint64_t threshold_at(const pg_state& s, std::uint64_t used) const noexcept {
        const std::uint64_t free = _pool_shared_size - used;
        switch (s.mode) {
            case mode_dynamic:
                return s.shift >= 0 ? free << s.shift : free >> -s.shift;
            case mode_static:
                return s.static_th;
            default:
                return UINT64_MAX;  // pool limit applies
        }
    }

    bool xon_ok(const pg_state& s) const noexcept { return s.shared_use == 0 || s.shared_use < xon_level(s); }

    std::uint64_t xon_level(const pg_state& s) const noexcept {
        if (s.xon_kind == xon_absolute) {
            return s.xon_value;
        }
        const std::uint64_t t = threshold(s);
        return t > s.xon_value ? t - s.xon_value : 0;
    }

    // An open run (admit_in_run) of one PG: its budget, what is left of it
    // plus one (0: no run, so one compare decides), the reserved room it
    // found and its frames.
    struct pg_run {
        std::uint64_t left = 0;
        std::uint64_t budget = 0;
        std::uint64_t room = 0;
        std::uint64_t frames = 0;
    };

    // A frame of c bytes (c < r.left: within the budget) taken by run r:
    // the regions and token admit() gives it.
    [[gnu::always_inline]] static admit_result run_take(pg_run& r, std::uint64_t c) noexcept {
        admit_result res;
        res.regions = run_regions(r.budget + 1 - r.left, c, r.room);
        res.token.bytes = static_cast<std::uint32_t>(c);
        r.left -= c;
        ++r.frames;
        return res;
    }

    // The regions admit() charges a frame of c bytes that finds `before`
    // bytes of its run charged, the run having found `room` reserved bytes.
    static std::uint8_t run_regions(std::uint64_t before, std::uint64_t c, std::uint64_t room) noexcept {
        if (c == 0) { return 0; }
        std::uint8_t r = before < room ? region_reserved : 0;
        if (before + c > room) { r |= region_shared; }
        return r;
    }

    // admit_in_run's frame that is not within an open run (every frame with
    // several workers: admit() decides it): settle the runs
    // if it is another port's or its own run's budget is spent, then open a
    // run for its PG if the frame fits the budget (see "runs" above), else
    // admit() decides the frame alone.
    [[gnu::noinline]] admit_result run_open(int port, int pg, std::uint32_t len) noexcept {
        if (_concurrent) { return admit(port, pg, len); }  // several workers: no runs
        const auto bit = static_cast<std::uint8_t>(1u << pg);
        if (port != _run_port || (_run_mask & bit) != 0) {
            settle();
            _run_port = port;
        }
        const pg_state& s = _pgs[index(port, pg)];
        const std::uint64_t c = charge_for(len);
        const std::uint64_t room = s.reserved_limit - s.reserved_use;
        std::uint64_t x = 0;
        std::uint64_t tol = ~std::uint64_t{0};  // no shared bytes: nothing to tolerate
        if ((_xoff[static_cast<std::size_t>(port)] >> pg & 1u) == 0) {
            const std::uint64_t used = _pool_shared_used.load(std::memory_order_relaxed);
            const std::uint64_t f = _pool_shared_size > used ? _pool_shared_size - used : 0;  // F
            const std::uint64_t fx = f > _run_x ? f - _run_x : 0;                             // F - X
            const std::uint64_t sh = s.shared_use;
            switch (s.mode) {
                case mode_dynamic:
                    if (s.shift >= 0) {
                        const std::uint64_t g = fx << s.shift;
                        x = g > sh ? (g - sh) >> (s.shift + 1) : 0;
                    } else {
                        const std::uint64_t need = sh << -s.shift;
                        x = fx > need ? (fx - need) >> (1 - s.shift) : 0;
                    }
                    break;
                case mode_static:
                    x = s.static_th > sh ? std::min(s.static_th - sh, fx) : 0;
                    break;
                default:
                    x = fx;
                    break;
            }
            x = std::min(x, _run_tol - _run_x);  // what every open run tolerates
            if (x != 0) {
                // The most the pool may grow with this run's frames passing:
                // within F, and (dynamic) the threshold at F - T above shared + x.
                tol = f;
                if (s.mode == mode_dynamic) {
                    tol = s.shift >= 0 ? f - ((sh + x + (std::uint64_t{1} << s.shift) - 1) >> s.shift)
                                       : f - ((sh + x) << -s.shift);
                }
            }
        }
        if (c > room + x) { return admit(port, pg, len); }  // admit() settles the other runs first
        pg_run& r = _runs[static_cast<std::size_t>(pg)];
        r.budget = room + x;
        r.left = r.budget + 1;  // nothing taken yet
        r.room = room;
        r.frames = 0;
        _run_mask = static_cast<std::uint8_t>(_run_mask | bit);
        _run_x += x;
        _run_tol = std::min(_run_tol, tol);
        return run_take(r, c);
    }

    int _num_ports = 0;
    std::uint32_t _cell = 0;
    std::uint64_t _cell_magic = 0;  // ceil(2^64 / _cell), for charge_for
    std::uint64_t _pool_shared_size = 0;
    alignas(64) std::atomic<std::uint64_t> _pool_shared_used{0};  // with workers: taken from the pool, incl. credits
    std::atomic<std::uint64_t> _peak_pool_shared{0};
    bool _concurrent = false;
    // A port's XOFF bits: written by the worker that owns the port, read by
    // telemetry while it runs, so relaxed atomic loads and stores.
    struct xoff_mask {
        std::uint8_t v = 0;
        std::uint8_t load() const noexcept { return __atomic_load_n(&v, __ATOMIC_RELAXED); }
        operator std::uint8_t() const noexcept { return load(); }  // NOLINT: reads as the byte
        xoff_mask& operator|=(std::uint8_t b) noexcept {
            __atomic_store_n(&v, static_cast<std::uint8_t>(load() | b), __ATOMIC_RELAXED);
            return *this;
        }
        xoff_mask& operator&=(std::uint8_t b) noexcept {
            __atomic_store_n(&v, static_cast<std::uint8_t>(load() & b), __ATOMIC_RELAXED);
            return *this;
        }
    };
    struct alignas(64) credit_slot {
        counter64 bytes = 0;  // shared-pool bytes a worker holds for its ports (written by that worker, read by pool())
    };
    std::vector<credit_slot> _credit;
    std::vector<std::uint16_t> _slot_of_port;
    std::uint64_t _chunk = credit_chunk;
    std::uint64_t _pool_size = 0;
    std::uint64_t _reserved_total = 0;
    std::uint64_t _headroom_total = 0;
    std::uint64_t _shp_size = 0;                 // shared headroom pool; 0 = headroom per PG
    alignas(64) std::atomic<std::uint64_t> _shp_used{0};
    // The open runs (admit_in_run), for the PGs of port _run_port (-1:
    // none) in _run_mask (pg_run each); the shared bytes the runs may take
    // (X) and the least any of them tolerates.
    alignas(64) std::array<pg_run, num_pgs> _runs{};
    int _run_port = -1;
    std::uint8_t _run_mask = 0;
    std::uint64_t _run_x = 0;
    std::uint64_t _run_tol = ~std::uint64_t{0};
    std::uint64_t _run_frames = 0;
    std::vector<pg_state> _pgs;
    std::vector<pg_live_counters> _counters;  // cold
    std::vector<xoff_mask> _xoff;        // per port, bit n = PG n in XOFF
};

}  // namespace rocelab
