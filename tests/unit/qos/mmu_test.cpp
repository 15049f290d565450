// Unit tests for qos/mmu.hpp: reserved/shared/headroom admission, XOFF and
// XON hysteresis (default, xon, xon_offset), dynamic-threshold arithmetic
// against a double reference, lossy drops, headroom overflow, cells, exact
// release, validation and telemetry.
#include "qos/mmu.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <deque>
#include <thread>
#include <vector>

#include "core/rng.hpp"

namespace rocelab {
namespace {

using pg_table = std::array<pg_buffer_cfg, 8>;

buffer_pool_cfg pool_of(std::uint64_t size, std::uint64_t cell = 0) {
    buffer_pool_cfg p;
    p.enabled = true;
    p.size = bytes{size};
    p.cell = bytes{cell};
    return p;
}

pg_buffer_cfg lossless_pg(std::uint64_t xoff, int dth = 0, std::uint64_t reserved = 0) {
    pg_buffer_cfg c;
    c.configured = true;
    c.reserved = bytes{reserved};
    c.mode = threshold_mode::dynamic_th;
    c.dynamic_th = dth;
    c.xoff = bytes{xoff};
    return c;
}

pg_buffer_cfg lossy_static_pg(std::uint64_t static_th, std::uint64_t reserved = 0) {
    pg_buffer_cfg c;
    c.configured = true;
    c.reserved = bytes{reserved};
    c.mode = threshold_mode::static_th;
    c.static_th = bytes{static_th};
    return c;
}

// Every port alike: lossless PGs 3 (alpha 1/4, 2048 B reserved) and 4
// (alpha 1/2, XON 4096 B below the threshold), lossy static PGs 0 (1024 B
// reserved) and 1; the rest unconfigured. For the random admit/release tests.
std::vector<pg_table> mixed_pg_tables(int ports) {
    std::vector<pg_table> v(static_cast<std::size_t>(ports));
    for (auto& t : v) {
        t[3] = lossless_pg(30000, -2, 2048);
        t[4] = lossless_pg(30000, -1);
        t[4].xon_offset = bytes{4096};
        t[0] = lossy_static_pg(20000, 1024);
        t[1] = lossy_static_pg(5000);
    }
    return v;
}

// A frame an MMU admitted, held until its release.
struct held {
    int port, pg;
    charge c;
};

// One port, PG 3 lossless (xoff 20000, alpha 1), pool 120000 -> shared 100000.
mmu one_lossless(pg_buffer_cfg pg3) {
    pg_table t{};
    t[3] = pg3;
    std::vector<pg_table> v{t};
    EXPECT_EQ(mmu::validate(pool_of(120000), 1, v), "");
    return mmu{pool_of(120000), 1, v};
}

// Fill PG 3 with 1000-byte packets up to XOFF and the full headroom.
std::vector<charge> fill_to_overflow(mmu& m) {
    std::vector<charge> tokens;
    for (int n = 0; n < 50; ++n) {
        const admit_result r = m.admit(0, 3, 1000);
        EXPECT_TRUE(r.ok());
        EXPECT_EQ(r.regions, region_shared) << n;
        EXPECT_FALSE(r.xoff_entered);
        tokens.push_back(r.token);
    }
    EXPECT_EQ(m.xoff_pgs(0), 0);
    // 51st: 50000 + 1000 > threshold (100000 - 50000) -> XOFF, to headroom
    admit_result r = m.admit(0, 3, 1000);
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(r.xoff_entered);
    EXPECT_EQ(r.regions, region_headroom);
    EXPECT_EQ(m.xoff_pgs(0), 0b0000'1000);
    tokens.push_back(r.token);
    for (int n = 1; n < 20; ++n) {
        r = m.admit(0, 3, 1000);
        EXPECT_TRUE(r.ok());
        EXPECT_FALSE(r.xoff_entered);
        EXPECT_EQ(r.regions, region_headroom);
        tokens.push_back(r.token);
    }
    r = m.admit(0, 3, 1000);
    EXPECT_EQ(r.verdict, admit_verdict::drop_headroom_overflow);
    EXPECT_EQ(r.token.bytes, 0u);
    const pg_snapshot s = m.snapshot(0, 3);
    EXPECT_EQ(s.shared_use, 50000u);
    EXPECT_EQ(s.headroom_use, 20000u);
    EXPECT_EQ(s.counters.drop_headroom_overflow, 1u);
    EXPECT_EQ(s.counters.xoff_transitions, 1u);
    EXPECT_EQ(s.counters.peak_headroom, 20000u);
    EXPECT_EQ(s.counters.peak_use, 70000u);
    return tokens;
}

// Releases tokens until XON; returns how many releases it took.
int releases_until_xon(mmu& m, const std::vector<charge>& tokens) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (m.release(0, 3, tokens[i])) {
            EXPECT_EQ(m.xoff_pgs(0), 0);
            return static_cast<int>(i) + 1;
        }
        EXPECT_EQ(m.xoff_pgs(0), 0b0000'1000) << i;
    }
    return -1;
}

// Credit for another worker (RSS): reserved + shared only, never headroom,
// never XOFF by itself; refused with nothing changed otherwise.
TEST(mmu, admit_credit_takes_shared_room_only_outside_xoff) {
    mmu m = one_lossless(lossless_pg(20000));
    // alpha 1: threshold = free shared = 100000 - used. 40000 fits (40000 <= 60000).
    EXPECT_TRUE(m.admit_credit(0, 3, 40000));
    EXPECT_EQ(m.use(0, 3), 40000u);
    EXPECT_EQ(m.snapshot(0, 3).shared_use, 40000u);
    EXPECT_EQ(m.snapshot(0, 3).counters.admitted, 0u) << "credit is not a frame";
    // 40000 more would need shared 80000 > threshold 100000 - 80000: refused, nothing changes.
    EXPECT_FALSE(m.admit_credit(0, 3, 40000));
    EXPECT_EQ(m.use(0, 3), 40000u);
    EXPECT_EQ(m.xoff_pgs(0), 0) << "credit never moves a PG into XOFF";
    EXPECT_EQ(m.snapshot(0, 3).counters.drop_lossy, 0u);
    // Frames go on until XOFF (41000 + 1000 > 100000 - 42000 ... at 30 frames).
    int frames = 0;
    while (m.xoff_pgs(0) == 0 && frames < 100) {
        ASSERT_TRUE(m.admit(0, 3, 1000).ok());
        ++frames;
    }
    EXPECT_EQ(m.xoff_pgs(0), 0b0000'1000);
    const std::uint64_t before = m.use(0, 3);
    EXPECT_FALSE(m.admit_credit(0, 3, 1)) << "no credit while the PG is in XOFF";
    EXPECT_EQ(m.use(0, 3), before);
    EXPECT_EQ(m.snapshot(0, 3).headroom_use, 1000u) << "only the frame that triggered XOFF is in headroom";
    // Returned credit is a release like any other.
    (void)m.release(0, 3, charge{40000});
    EXPECT_EQ(m.use(0, 3), before - 40000);
}

TEST(mmu, admit_credit_lossy_static_limit_refuses_without_a_drop) {
    pg_table t{};
    t[0] = lossy_static_pg(10000, 2000);
    std::vector<pg_table> v{t};
    mmu m{pool_of(1'000'000), 1, v};
    EXPECT_TRUE(m.admit_credit(0, 0, 12000));  // 2000 reserved + 10000 shared
    EXPECT_EQ(m.snapshot(0, 0).reserved_use, 2000u);
    EXPECT_EQ(m.snapshot(0, 0).shared_use, 10000u);
    EXPECT_FALSE(m.admit_credit(0, 0, 1));
    EXPECT_EQ(m.snapshot(0, 0).counters.drop_lossy, 0u);
    EXPECT_EQ(m.admit(0, 0, 100).verdict, admit_verdict::drop_lossy);
}

TEST(mmu, pause_trigger_headroom_use_and_overflow_verdict) {
    mmu m = one_lossless(lossless_pg(20000));
    EXPECT_EQ(m.pool().shared_size, 100000u);
    fill_to_overflow(m);
}

TEST(mmu, xon_default_hysteresis_one_jumbo) {
    mmu m = one_lossless(lossless_pg(20000));
    const auto tokens = fill_to_overflow(m);
    // 20 releases drain headroom; then shared 50000-1000k < (50000+1000k) - 9216 -> k = 5
    EXPECT_EQ(releases_until_xon(m, tokens), 25);
    EXPECT_EQ(m.snapshot(0, 3).shared_use, 45000u);
    EXPECT_EQ(m.snapshot(0, 3).counters.xon_transitions, 1u);
}

TEST(mmu, xon_absolute) {
    pg_buffer_cfg c = lossless_pg(20000);
    c.xon = bytes{10000};
    mmu m = one_lossless(c);
    const auto tokens = fill_to_overflow(m);
    // shared 50000 - 1000k < 10000 -> k = 41
    EXPECT_EQ(releases_until_xon(m, tokens), 61);
    EXPECT_EQ(m.snapshot(0, 3).shared_use, 9000u);
}

TEST(mmu, xon_offset) {
    pg_buffer_cfg c = lossless_pg(20000);
    c.xon_offset = bytes{2000};
    mmu m = one_lossless(c);
    const auto tokens = fill_to_overflow(m);
    // 50000 - 1000k < 50000 + 1000k - 2000 -> k = 2
    EXPECT_EQ(releases_until_xon(m, tokens), 22);
}

TEST(mmu, xon_needs_empty_headroom) {
    pg_buffer_cfg c = lossless_pg(20000);
    c.xon = bytes{1u << 30};  // shared is always below: only headroom gates
    mmu m = one_lossless(c);
    const auto tokens = fill_to_overflow(m);
    EXPECT_EQ(releases_until_xon(m, tokens), 20);
}

TEST(mmu, in_xoff_arrivals_go_to_headroom_and_can_retrigger) {
    pg_buffer_cfg c = lossless_pg(20000);
    c.xon_offset = bytes{2000};
    mmu m = one_lossless(c);
    auto tokens = fill_to_overflow(m);
    for (int i = 0; i < 10; ++i) {
        m.release(0, 3, tokens[static_cast<std::size_t>(i)]);
    }
    // still XOFF with 10000 headroom: arrivals go to headroom
    const admit_result r = m.admit(0, 3, 1000);
    EXPECT_EQ(r.regions, region_headroom);
    EXPECT_EQ(m.snapshot(0, 3).headroom_use, 11000u);
}

// Between XOFF and XON the shared region may have room again (hysteresis):
// an arrival still goes to headroom, not shared, until XON. admit()'s inline
// path takes shared bytes only outside XOFF.
TEST(mmu, in_xoff_with_shared_room_arrivals_still_go_to_headroom) {
    pg_buffer_cfg c = lossless_pg(20000);
    c.xon_offset = bytes{2000};
    mmu m = one_lossless(c);
    auto tokens = fill_to_overflow(m);
    // 20 releases empty the headroom, the 21st takes shared to 49000:
    // threshold 100000 - 49000 = 51000, XON below 51000 - 2000 = 49000.
    for (int i = 0; i < 21; ++i) {
        EXPECT_FALSE(m.release(0, 3, tokens[static_cast<std::size_t>(i)])) << i;
    }
    ASSERT_EQ(m.xoff_pgs(0), 0b0000'1000);
    ASSERT_EQ(m.snapshot(0, 3).shared_use, 49000u);
    ASSERT_EQ(m.snapshot(0, 3).headroom_use, 0u);
    ASSERT_GE(m.threshold(0, 3), 49000u + 1000u) << "shared has room for the frame";
    const admit_result r = m.admit(0, 3, 1000);
    EXPECT_TRUE(r.ok());
    EXPECT_FALSE(r.xoff_entered);
    EXPECT_EQ(r.regions, region_headroom);
    EXPECT_EQ(m.snapshot(0, 3).shared_use, 49000u);
    EXPECT_EQ(m.snapshot(0, 3).headroom_use, 1000u);
    EXPECT_EQ(m.snapshot(0, 3).counters.admitted, 71u);  // 50 + 20 before the overflow, and this one
}

TEST(mmu, dynamic_threshold_matches_double_reference) {
    for (int dth = mmu::min_dynamic_th; dth <= mmu::max_dynamic_th; ++dth) {
        pg_table t{};
        t[3] = lossless_pg(50000, dth);
        t[0] = pg_buffer_cfg{};  // unconfigured: pool-limited filler
        std::vector<pg_table> v{t};
        const std::uint64_t pool_size = 3'000'017;
        mmu m{pool_of(pool_size), 1, v};
        const std::uint64_t S = pool_size - 50000;
        ASSERT_EQ(m.pool().shared_size, S);
        rng r{static_cast<std::uint64_t>(dth + 100)};
        std::uint64_t used = 0;
        for (int step = 0; step < 200; ++step) {
            const double ref = std::floor(std::ldexp(static_cast<double>(S - used), dth));
            EXPECT_EQ(static_cast<double>(m.threshold(0, 3)), ref) << dth << " " << used;
            const std::uint32_t len = 64 + static_cast<std::uint32_t>(r.next() % 9000);
            if (m.admit(0, 0, len).ok()) {
                used += len;
            }
        }
        EXPECT_GT(used, 0u);
    }
}

TEST(mmu, dynamic_admission_boundary_matches_model) {
    for (int dth : {-7, -3, -1, 0, 1, 3}) {
        pg_table t{};
        t[3] = lossless_pg(1'000'000, dth);
        std::vector<pg_table> v{t};
        const std::uint64_t pool_size = 1'000'000 + 400'000;
        mmu m{pool_of(pool_size), 1, v};
        const double S = 400'000;
        // model in doubles: admit while u + c <= alpha (S - u) and u + c <= S
        const double alpha = std::ldexp(1.0, dth);
        double u = 0;
        rng r{7};
        for (;;) {
            const std::uint32_t len = 64 + static_cast<std::uint32_t>(r.next() % 1500);
            const bool model_ok = u + len <= std::floor(alpha * (S - u)) && u + len <= S;
            const admit_result a = m.admit(0, 3, len);
            ASSERT_TRUE(a.ok());
            if (!model_ok) {
                EXPECT_TRUE(a.xoff_entered) << dth;
                break;
            }
            EXPECT_EQ(a.regions, region_shared) << dth << " " << u;
            u += len;
        }
        EXPECT_EQ(static_cast<double>(m.snapshot(0, 3).shared_use), u);
        // equilibrium: u ~= alpha S / (1 + alpha)
        EXPECT_NEAR(u, alpha * S / (1 + alpha), 1600) << dth;
    }
}

TEST(mmu, lossy_static_drop_at_limit) {
    pg_table t{};
    t[1] = lossy_static_pg(10000);
    std::vector<pg_table> v{t};
    mmu m{pool_of(1'000'000), 1, v};
    for (int i = 0; i < 10; ++i) {
        EXPECT_TRUE(m.admit(0, 1, 1000).ok()) << i;
    }
    const admit_result r = m.admit(0, 1, 1);
    EXPECT_EQ(r.verdict, admit_verdict::drop_lossy);
    EXPECT_FALSE(r.xoff_entered);
    EXPECT_EQ(m.xoff_pgs(0), 0);
    EXPECT_EQ(m.snapshot(0, 1).counters.drop_lossy, 1u);
    EXPECT_EQ(m.snapshot(0, 1).counters.dropped_bytes, 1u);
    m.release(0, 1, charge{1000});
    EXPECT_TRUE(m.admit(0, 1, 1000).ok());
}

TEST(mmu, lossless_static_threshold_triggers_xoff) {
    pg_buffer_cfg c = lossless_pg(5000);
    c.mode = threshold_mode::static_th;
    c.static_th = bytes{3000};
    mmu m = one_lossless(c);
    EXPECT_TRUE(m.admit(0, 3, 3000).ok());
    const admit_result r = m.admit(0, 3, 1);
    EXPECT_TRUE(r.xoff_entered);
    EXPECT_EQ(r.regions, region_headroom);
}

TEST(mmu, unconfigured_pg_limited_by_pool_only) {
    pg_table t{};
    t[3] = lossless_pg(10000);
    std::vector<pg_table> v{t};
    mmu m{pool_of(30000), 1, v};  // shared 20000
    EXPECT_TRUE(m.admit(0, 0, 20000).ok());
    EXPECT_EQ(m.admit(0, 0, 1).verdict, admit_verdict::drop_lossy);
    // lossless PG with the pool full: straight to XOFF and headroom
    const admit_result r = m.admit(0, 3, 100);
    EXPECT_TRUE(r.xoff_entered);
    EXPECT_EQ(r.regions, region_headroom);
}

TEST(mmu, oversize_packet_at_xoff_entry_does_not_latch_xoff) {
    pg_table t{};
    t[3] = lossless_pg(4000);
    std::vector<pg_table> v{t};
    mmu m{pool_of(24000), 1, v};                 // shared 20000
    EXPECT_TRUE(m.admit(0, 0, 20000).ok());      // pool full (unconfigured PG 0)
    const admit_result r = m.admit(0, 3, 9000);  // > xoff, PG 3 holds nothing
    EXPECT_EQ(r.verdict, admit_verdict::drop_headroom_overflow);
    EXPECT_FALSE(r.xoff_entered);
    EXPECT_EQ(m.xoff_pgs(0), 0);
    EXPECT_EQ(m.snapshot(0, 3).counters.xoff_transitions, 0u);
    // a fitting packet then enters XOFF normally and its release sends XON
    const admit_result a = m.admit(0, 3, 1000);
    EXPECT_TRUE(a.xoff_entered);
    EXPECT_TRUE(m.release(0, 3, a.token));
}

TEST(mmu, reserved_first_then_split_into_shared) {
    pg_table t{};
    t[3] = lossless_pg(10000, 0, 1500);
    std::vector<pg_table> v{t};
    mmu m{pool_of(100000), 1, v};
    EXPECT_EQ(m.pool().shared_size, 100000u - 1500 - 10000);
    admit_result a = m.admit(0, 3, 1000);
    EXPECT_EQ(a.regions, region_reserved);
    admit_result b = m.admit(0, 3, 1000);
    EXPECT_EQ(b.regions, region_reserved | region_shared);
    pg_snapshot s = m.snapshot(0, 3);
    EXPECT_EQ(s.reserved_use, 1500u);
    EXPECT_EQ(s.shared_use, 500u);
    EXPECT_EQ(m.pool().shared_used, 500u);
    // drain order: headroom, shared, reserved
    m.release(0, 3, a.token);
    s = m.snapshot(0, 3);
    EXPECT_EQ(s.shared_use, 0u);
    EXPECT_EQ(s.reserved_use, 1000u);
    m.release(0, 3, b.token);
    s = m.snapshot(0, 3);
    EXPECT_EQ(s.reserved_use, 0u);
    EXPECT_EQ(m.pool().shared_used, 0u);
}

TEST(mmu, cells_rounding) {
    pg_table t{};
    t[3] = lossless_pg(10240);
    std::vector<pg_table> v{t};
    mmu m{pool_of(1'000'000, 256), 1, v};
    EXPECT_EQ(m.charge_for(1), 256u);
    EXPECT_EQ(m.charge_for(256), 256u);
    EXPECT_EQ(m.charge_for(257), 512u);
    EXPECT_EQ(m.charge_for(9216), 9216u);
    EXPECT_EQ(m.charge_for(9217), 9472u);
    const admit_result r = m.admit(0, 3, 65);
    EXPECT_EQ(r.token.bytes, 256u);
    EXPECT_EQ(m.snapshot(0, 3).shared_use, 256u);
    EXPECT_EQ(m.pool().shared_used, 256u);
    m.release(0, 3, r.token);
    EXPECT_EQ(m.pool().shared_used, 0u);
}

TEST(mmu, random_admit_release_returns_to_zero) {
    const int ports = 4;
    const std::vector<pg_table> v = mixed_pg_tables(ports);
    const buffer_pool_cfg pool = pool_of(600'000, 96);
    ASSERT_EQ(mmu::validate(pool, ports, v), "");
    mmu m{pool, ports, v};
    std::deque<held> q;
    rng r{42};
    std::uint64_t admitted = 0, dropped = 0;
    for (int step = 0; step < 200000; ++step) {
        if (q.empty() || r.next() % 100 < 55) {
            const int port = static_cast<int>(r.next() % ports);
            const int pg = static_cast<int>(std::array{0, 1, 3, 4, 5}[r.next() % 5]);
            const auto len = 64 + static_cast<std::uint32_t>(r.next() % 4000);
            const admit_result a = m.admit(port, pg, len);
            if (a.ok()) {
                ++admitted;
                q.push_back({port, pg, a.token});
            } else {
                ++dropped;
                EXPECT_EQ(a.token.bytes, 0u);
            }
        } else {
            // mostly FIFO, sometimes out of order
            std::size_t i = (r.next() % 8 == 0) ? r.next() % q.size() : 0;
            const held h = q[i];
            q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
            m.release(h.port, h.pg, h.c);
        }
        ASSERT_LE(m.pool().shared_used, m.pool().shared_size);
    }
    while (!q.empty()) {
        m.release(q.front().port, q.front().pg, q.front().c);
        q.pop_front();
    }
    EXPECT_GT(admitted, 1000u);
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(m.pool().shared_used, 0u);
    std::uint64_t xoffs = 0;
    for (int p = 0; p < ports; ++p) {
        const port_snapshot s = m.port_totals(p);
        EXPECT_EQ(s.reserved_use, 0u);
        EXPECT_EQ(s.shared_use, 0u);
        EXPECT_EQ(s.headroom_use, 0u);
        EXPECT_EQ(s.xoff_pgs, 0) << p;
        EXPECT_EQ(s.totals.xoff_transitions, s.totals.xon_transitions);
        xoffs += s.totals.xoff_transitions;
    }
    EXPECT_GT(xoffs, 0u);
}

// Two MMUs in the same state: every PG's regions and counters, the XOFF
// bits, the pool's use and peak (the differential tests below).
void same_mmu_state(const mmu& a, const mmu& b, int ports, int step) {
    for (int p = 0; p < ports; ++p) {
        ASSERT_EQ(a.xoff_pgs(p), b.xoff_pgs(p)) << "step " << step;
        for (int g = 0; g < 8; ++g) {
            const pg_snapshot x = a.snapshot(p, g), y = b.snapshot(p, g);
            ASSERT_EQ(x.reserved_use, y.reserved_use) << "step " << step << " port " << p << " pg " << g;
            ASSERT_EQ(x.shared_use, y.shared_use) << "step " << step << " port " << p << " pg " << g;
            ASSERT_EQ(x.headroom_use, y.headroom_use) << "step " << step << " port " << p << " pg " << g;
#define ROCELAB_PG_SAME(name) ASSERT_EQ(x.counters.name, y.counters.name) << #name << " step " << step;
            ROCELAB_PG_COUNTERS(ROCELAB_PG_SAME)
#undef ROCELAB_PG_SAME
        }
    }
    ASSERT_EQ(a.pool().shared_used, b.pool().shared_used) << "step " << step;
    ASSERT_EQ(a.pool().peak_shared_used, b.pool().peak_shared_used) << "step " << step;
}

// Release one held frame from both MMUs (the oldest, or one in 8 times
// one at random); their XON answers must agree. True on XON.
bool release_same(mmu& a, mmu& b, std::deque<held>& q, rng& r, int step) {
    const std::size_t i = (r.next() % 8 == 0) ? r.next() % q.size() : 0;
    const held h = q[i];
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
    const bool xa = a.release(h.port, h.pg, h.c);
    EXPECT_EQ(xa, b.release(h.port, h.pg, h.c)) << "step " << step;
    return xa;
}

// admit() decides inline for most frames and hands the rest to admit_slow.
// Two MMUs with the same configuration take the same random sequence of
// arrivals and releases, one through admit(), the other through admit_slow()
// alone (the whole decision): every verdict, region set, XOFF entry and
// token, every XON, and every PG's state and counters after every step must
// be the same. Cells of 96 B, reserved bytes, static and dynamic thresholds,
// an unconfigured PG, and XOFF hysteresis with both XON kinds are exercised.
TEST(mmu, inline_admit_decides_as_the_whole_decision) {
    const int ports = 3;
    std::vector<pg_table> v = mixed_pg_tables(ports);
    for (auto& t : v) {  // and an absolute XON level
        t[5] = lossless_pg(20000, 0, 4096);
        t[5].xon = bytes{8000};
    }
    const buffer_pool_cfg pool = pool_of(400'000, 96);
    ASSERT_EQ(mmu::validate(pool, ports, v), "");
    mmu a{pool, ports, v};
    mmu b{pool, ports, v};
    std::deque<held> q;
    rng r{7};
    std::uint64_t inline_ok = 0, xoffs = 0, drops = 0, xons = 0;
    const auto same_state = [&](int step) { same_mmu_state(a, b, ports, step); };
    for (int step = 0; step < 100000; ++step) {
        // Bursts of arrivals and of releases, so PGs go into XOFF and out.
        const bool arrive = q.empty() || ((step / 500) % 2 == 0 ? r.next() % 100 < 70 : r.next() % 100 < 35);
        if (arrive) {
            const int port = static_cast<int>(r.next() % ports);
            const int pg = static_cast<int>(std::array{0, 1, 2, 3, 4, 5}[r.next() % 6]);
            const auto len = 60 + static_cast<std::uint32_t>(r.next() % 4000);
            const bool fast_path = a.xoff_pgs(port) == 0;  // a rough count only
            const admit_result x = a.admit(port, pg, len);
            const admit_result y = b.admit_slow(port, pg, len);
            ASSERT_EQ(x.verdict, y.verdict) << "step " << step;
            ASSERT_EQ(x.regions, y.regions) << "step " << step;
            ASSERT_EQ(x.xoff_entered, y.xoff_entered) << "step " << step;
            ASSERT_EQ(x.token.bytes, y.token.bytes) << "step " << step;
            if (x.ok()) {
                q.push_back({port, pg, x.token});
                inline_ok += fast_path ? 1 : 0;
            } else {
                ++drops;
            }
            xoffs += x.xoff_entered ? 1 : 0;
        } else {
            xons += release_same(a, b, q, r, step) ? 1 : 0;
        }
        same_state(step);
        if (::testing::Test::HasFailure()) { return; }
    }
    // The sequence reached every branch: many plain admissions, XOFF and XON, drops.
    EXPECT_GT(inline_ok, 10000u);
    EXPECT_GT(xoffs, 20u);
    EXPECT_GT(xons, 20u);
    EXPECT_GT(drops, 100u);
}

// admit_in_run() admits a burst's frames in runs, one per PG, and applies
// them when they settle (mmu.hpp, "runs"). Two MMUs with the same
// configuration take the same random bursts (one port's frames of up to
// three PGs, interleaved): one through admit_in_run(), settling at random
// burst ends (or implicitly: another port's frame, a spent budget, a release),
// the other frame by frame through admit(). Every verdict, region set, XOFF
// entry and token must be the same, and after every settle, release and at
// the end, every PG's state and counters and the pool. Thresholds of every
// kind: dynamic with alpha 1/4, 1/2, 1 and 4, static, an unconfigured PG
// (pool only), reserved bytes and cells of 96 B; the pool fills often
// enough that runs end at their budget, frames go to headroom and drop.
TEST(mmu, runs_decide_as_admit_frame_by_frame) {
    const int ports = 3;
    std::vector<pg_table> v = mixed_pg_tables(ports);
    for (auto& t : v) {
        t[5] = lossless_pg(20000, 0, 4096);  // alpha 1
        t[5].xon = bytes{8000};
        t[6] = lossless_pg(20000, 2, 1000);  // alpha 4
        t[7].configured = false;             // the pool alone
    }
    for (const std::uint64_t cell : {std::uint64_t{96}, std::uint64_t{0}}) {
        const buffer_pool_cfg pool = pool_of(500'000, cell);
        ASSERT_EQ(mmu::validate(pool, ports, v), "");
        mmu a{pool, ports, v};
        mmu b{pool, ports, v};
        std::deque<held> q;
        rng r{11 + cell};
        std::uint64_t frames = 0, drops = 0, xoffs = 0, xons = 0, settles = 0;
        const auto same_state = [&](int step) { same_mmu_state(a, b, ports, step); };
        for (int step = 0; step < 20000; ++step) {
            const bool arrive = q.empty() || ((step / 200) % 2 == 0 ? r.next() % 100 < 70 : r.next() % 100 < 35);
            if (arrive) {
                // A burst of 1..32 frames of one port, as an RX burst: one to
                // three PGs, interleaved at random (runs of several PGs open).
                const int port = static_cast<int>(r.next() % ports);
                const std::array<int, 3> pgs{static_cast<int>(r.next() % 8), static_cast<int>(r.next() % 8),
                                             static_cast<int>(r.next() % 8)};
                const auto npg = 1 + r.next() % 3;
                const auto n = 1 + static_cast<int>(r.next() % 32);
                for (int k = 0; k < n; ++k) {
                    const int pg = pgs[r.next() % npg];
                    const auto len = 60 + static_cast<std::uint32_t>(r.next() % 4000);
                    const admit_result x = a.admit_in_run(port, pg, len);
                    const admit_result y = b.admit(port, pg, len);
                    ASSERT_EQ(x.verdict, y.verdict) << "step " << step << " frame " << k;
                    ASSERT_EQ(x.regions, y.regions) << "step " << step << " frame " << k;
                    ASSERT_EQ(x.xoff_entered, y.xoff_entered) << "step " << step << " frame " << k;
                    ASSERT_EQ(x.token.bytes, y.token.bytes) << "step " << step << " frame " << k;
                    ++frames;
                    if (x.ok()) {
                        q.push_back({port, pg, x.token});
                    } else {
                        ++drops;
                    }
                    xoffs += x.xoff_entered ? 1 : 0;
                }
                if (r.next() % 2 == 0) {
                    a.settle();
                    ++settles;
                    same_state(step);
                }
            } else {
                // A drain of up to 32 frames, mostly in arrival order.
                for (int k = 1 + static_cast<int>(r.next() % 32); k > 0 && !q.empty(); --k) {
                    xons += release_same(a, b, q, r, step) ? 1 : 0;
                    same_state(step);
                }
            }
            if (::testing::Test::HasFailure()) { return; }
        }
        a.settle();
        same_state(-1);
        std::printf("cell %llu: %llu frames, %llu in runs, %llu drops, %llu XOFF, %llu XON, %llu settles\n",
                    static_cast<unsigned long long>(cell), static_cast<unsigned long long>(frames),
                    static_cast<unsigned long long>(a.run_frames()), static_cast<unsigned long long>(drops),
                    static_cast<unsigned long long>(xoffs), static_cast<unsigned long long>(xons),
                    static_cast<unsigned long long>(settles));
        // Runs carried many frames, and the sequence reached every branch.
        EXPECT_GT(a.run_frames(), frames / 3) << "cell " << cell;
        EXPECT_LT(a.run_frames(), frames) << "cell " << cell;
        EXPECT_GT(settles, 1000u);
        EXPECT_GT(xoffs, 20u) << "cell " << cell;
        EXPECT_GT(xons, 20u) << "cell " << cell;
        EXPECT_GT(drops, 100u) << "cell " << cell;
    }
}

// With several workers, admit_in_run() is admit(): nothing is held back.
TEST(mmu, runs_are_single_writer_only) {
    std::vector<pg_table> v = mixed_pg_tables(2);
    mmu m{pool_of(500'000), 2, v};
    m.set_workers({0, 1}, 2);
    for (int k = 0; k < 10; ++k) { ASSERT_TRUE(m.admit_in_run(0, 3, 1000).ok()); }
    EXPECT_EQ(m.use(0, 3), 10000u);
    EXPECT_EQ(m.snapshot(0, 3).counters.admitted, 10u);
    EXPECT_EQ(m.run_frames(), 0u);
    // One worker: the run is applied by settle() (and not before).
    mmu one{pool_of(500'000), 2, v};
    for (int k = 0; k < 10; ++k) { ASSERT_TRUE(one.admit_in_run(0, 3, 1000).ok()); }
    EXPECT_EQ(one.use(0, 3), 0u);
    one.settle();
    EXPECT_EQ(one.use(0, 3), 10000u);
    EXPECT_EQ(one.snapshot(0, 3).counters.admitted, 10u);
    EXPECT_EQ(one.run_frames(), 10u);
}

TEST(mmu, validate_reports_errors) {
    std::vector<pg_table> v(2);
    v[0][3] = lossless_pg(60000);
    v[1][3] = lossless_pg(60000);
    EXPECT_EQ(mmu::validate(pool_of(120000), 2, v), "");
    const std::string e = mmu::validate(pool_of(100000), 2, v);
    EXPECT_NE(e.find("BUFFER_POOL.size"), std::string::npos) << e;
    v[1][3].dynamic_th = 9;
    EXPECT_NE(mmu::validate(pool_of(1 << 20), 2, v).find("dynamic_th 9"), std::string::npos);
    v[1][3].dynamic_th = 0;
    EXPECT_NE(mmu::validate(pool_of(1 << 20), 3, v), "");                      // 2 tables for 3 ports
    EXPECT_EQ(mmu::validate(pool_of(1 << 20), 3, std::span(v).first(1)), "");  // one for all
    v[0][3].xon = bytes{1};
    v[0][3].xon_offset = bytes{1};
    EXPECT_NE(mmu::validate(pool_of(1 << 20), 2, v), "");
    buffer_pool_cfg off;
    EXPECT_EQ(mmu::validate(off, 2, v), "");
}

TEST(mmu, pool_disabled_never_drops_or_pauses) {
    std::vector<pg_table> v(1);
    v[0][3] = lossless_pg(1000);
    mmu m{buffer_pool_cfg{}, 1, v};
    for (int i = 0; i < 10000; ++i) {
        const admit_result r = m.admit(0, 3, 9000);
        ASSERT_TRUE(r.ok());
        ASSERT_FALSE(r.xoff_entered);
    }
    EXPECT_EQ(m.snapshot(0, 3).shared_use, 90'000'000u);
    EXPECT_FALSE(m.lossless(0, 3));
}

TEST(mmu, per_port_totals_and_isolation) {
    std::vector<pg_table> v(2);
    for (auto& t : v) {
        t[3] = lossless_pg(20000);
        t[1] = lossy_static_pg(1000);
    }
    mmu m{pool_of(200000), 2, v};
    m.admit(1, 3, 500);
    m.admit(1, 1, 1000);
    m.admit(1, 1, 1000);  // drop
    const port_snapshot p1 = m.port_totals(1);
    EXPECT_EQ(p1.shared_use, 1500u);
    EXPECT_EQ(p1.totals.admitted, 2u);
    EXPECT_EQ(p1.totals.drop_lossy, 1u);
    EXPECT_EQ(m.port_totals(0).totals.admitted, 0u);
    EXPECT_EQ(m.pool().headroom_total, 40000u);
    EXPECT_TRUE(m.lossless(0, 3));
    EXPECT_FALSE(m.lossless(0, 1));
}

// Several switch workers: each admits and releases for its own ingress port
// while the others do the same, sharing the pool (set_workers: each takes
// shared bytes from the pool in 64 KiB credits with a compare-and-swap).
// Two threads hammer one PG each with a dynamic threshold over one pool: the
// pool is never exceeded, and once everything is released every counter and
// the pool's use are back at zero.
TEST(mmu, concurrent_workers_share_the_pool_exactly) {
    pg_table t{};
    t[0] = lossy_static_pg(0);
    t[0].mode = threshold_mode::dynamic_th;
    t[0].dynamic_th = 1;  // alpha 2: two PGs together could ask for 4x the free pool
    std::vector<pg_table> v{t, t};
    ASSERT_EQ(mmu::validate(pool_of(200000), 2, v), "");
    mmu m{pool_of(200000), 2, v};
    m.set_workers({0, 1}, 2);
    const std::uint64_t size = m.pool().shared_size;
    std::atomic<bool> over{false};
    std::atomic<std::uint64_t> admitted{0};
    auto work = [&](int port) {
        rng r(0xC0FFEEu + static_cast<std::uint64_t>(port));
        std::deque<charge> held;
        for (int i = 0; i < 400000; ++i) {
            if (r.next_u32() % 3 != 0 || held.empty()) {
                const admit_result a = m.admit(port, 0, 64 + r.next_u32() % 1400);
                if (a.ok()) {
                    held.push_back(a.token);
                    admitted.fetch_add(1, std::memory_order_relaxed);
                }
            } else {
                m.release(port, 0, held.front());
                held.pop_front();
            }
            if (m.pool().shared_used > size) { over.store(true); }
        }
        while (!held.empty()) {
            m.release(port, 0, held.front());
            held.pop_front();
        }
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    EXPECT_FALSE(over.load()) << "the pool's shared use went above its size";
    EXPECT_GT(admitted.load(), 100000u);
    EXPECT_EQ(m.pool().shared_used, 0u);
    EXPECT_LE(m.pool().peak_shared_used, size);
    EXPECT_GT(m.pool().peak_shared_used, size / 2) << "the test must have filled the pool";
    for (int p = 0; p < 2; ++p) {
        const pg_snapshot s = m.snapshot(p, 0);
        EXPECT_EQ(s.reserved_use + s.shared_use + s.headroom_use, 0u) << "port " << p;
        EXPECT_GT(s.counters.drop_lossy, 0u) << "port " << p << " never met its threshold";
    }
}

// charge_for rounds up to cells by a multiply (no division instruction):
// the same as the division for every cell from 0 to 64 KiB in the ranges
// that matter (every length up to 10 KiB for cells to 300; powers of two
// and their neighbours; the largest lengths), against the formula written
// with /.
TEST(mmu, charge_for_equals_rounding_up_by_division) {
    auto expect = [](std::uint64_t cell, std::uint64_t len) -> std::uint64_t {
        return cell <= 1 ? len : (len + cell - 1) / cell * cell;
    };
    std::vector<std::uint32_t> cells;
    for (std::uint32_t c = 0; c <= 300; ++c) { cells.push_back(c); }
    for (std::uint32_t b = 512; b <= 65536; b *= 2) {
        cells.insert(cells.end(), {b - 1, b, b + 1});
    }
    cells.insert(cells.end(), {1000, 4095, 9216, 65535});
    std::vector<std::uint32_t> lens;
    for (std::uint32_t l = 0; l <= 10240; ++l) { lens.push_back(l); }
    for (std::uint32_t l : {65535u, 65536u, 1u << 20, 0x7FFFFFFFu, 0xFFFF0000u - 1}) { lens.push_back(l); }
    rng r{7};
    for (int i = 0; i < 20000; ++i) { lens.push_back(static_cast<std::uint32_t>(r.next() % 0xFFFF0000u)); }
    std::uint64_t checked = 0;
    for (const std::uint32_t cell : cells) {
        const pg_table pgs{};
        std::vector<pg_table> v(1, pgs);
        const mmu m{pool_of(1 << 20, cell), 1, v};
        for (const std::uint32_t len : lens) {
            ASSERT_EQ(m.charge_for(len), expect(cell, len)) << "cell " << cell << " len " << len;
            ++checked;
        }
    }
    EXPECT_GT(checked, 9'000'000u);
}

}  // namespace
}  // namespace rocelab
