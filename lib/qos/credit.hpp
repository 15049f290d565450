// credit.hpp - InfiniBand-style link-level flow control by credits (IBTA
// vol. 1, 7.9 "Flow control"), for a link run in credit mode instead of PFC.
//
// What: per virtual lane (VL), the receiver advertises how much buffer it
// has, and the sender transmits a frame only while it holds credits for all
// of it. Credits are counted in blocks (IB: 64 bytes; here the receiver's
// accounting cell when it has one, so a block is exactly what a frame's
// charge is counted in). The IB quantities, all cumulative and per VL:
//   FCTBS  (sender)    total blocks sent;
//   ABR    (receiver)  adjusted blocks received: every block that arrived,
//                      kept or not (a frame the receiver drops or consumes
//                      frees its credit at once);
//   FCCL   (receiver -> sender)  flow-control credit limit,
//                      FCCL = ABR + free blocks of the VL's buffer.
// The sender may send a frame of b blocks while FCTBS + b <= FCCL. Since the
// frames in flight are counted in FCTBS but not yet in ABR, the buffer can
// never overflow: at any time the bytes held plus the bytes in flight are at
// most the VL's buffer. Credit updates travel back over the cable (the
// fabric delays them by the cable's delay plus a minimum frame's wire time,
// the time an IB flow-control packet needs).
//
// Here: VL = traffic class (0..7) as the receiver classifies the frame. A
// sender schedules per class of its own (a switch: egress queue; a host:
// 802.1p priority) and maps it to the receiver's VL with vl_of (the fabric
// checks at set-up that both ends agree). Only the receiver's lossless
// classes are credited; other classes are lossy, as on Ethernet, and never
// wait for credits.
//
// credit_tx: the sender's side of one link (FCTBS, the last FCCL received).
// credit_rx: the receiver's side (ABR, the VL's buffer, the last FCCL sent).
// Pure: no DPDK, no time (the fabric carries updates over its cables).
//
// Example (a 100 Gbps cable, 64 KiB per VL, 96-byte cells):
//   credit_rx rx; rx.block = 96; rx.limit[3] = 65536; rx.credited = 1u << 3;
//   credit_tx tx; tx.block = 96; tx.vl_of[3] = 3;
//   tx.on_update(3, rx.fccl(3, 0));          // 682 blocks
//   if (tx.can_send(3, 1082)) tx.on_send(3, 1082);   // 12 blocks
#pragma once

#include <array>
#include <cstdint>

#include "qos/qos_maps.hpp"

namespace rocelab {

inline constexpr std::uint8_t no_vl = 0xFF;

struct credit_tx {
    std::array<std::uint64_t, 8> fctbs{};  // blocks sent, per VL
    std::array<std::uint64_t, 8> fccl{};   // the credit limit last received, per VL
    std::array<std::uint8_t, 8> vl_of{no_vl, no_vl, no_vl, no_vl, no_vl, no_vl, no_vl, no_vl};  // sender class -> VL
    std::uint32_t block = 64;      // bytes per credit (the receiver's)
    std::uint32_t max_frame = 0;   // the sender's largest frame (a host gates on it)
    bool news = false;             // an update arrived since take_news()
    std::uint64_t updates = 0;     // updates received
    std::uint64_t waits = 0;       // times a class had a frame but no credit for it

    std::uint64_t blocks(std::uint32_t len) const noexcept { return (len + block - 1) / block; }
    // Credits the sender holds on VL vl (FCCL >= FCTBS always holds).
    std::uint64_t avail(int vl) const noexcept { return fccl[vl & 7] - fctbs[vl & 7]; }
    // May class c send a frame of len bytes now?
    bool can_send(int c, std::uint32_t len) const noexcept {
        const std::uint8_t vl = vl_of[c & 7];
        return vl == no_vl || blocks(len) <= avail(vl);
    }
    void on_send(int c, std::uint32_t len) noexcept {
        const std::uint8_t vl = vl_of[c & 7];
        if (vl != no_vl) { fctbs[vl] += blocks(len); }
    }
    // Classes (bit c) that cannot send a frame of len bytes now.
    std::uint8_t blocked_mask(std::uint32_t len) const noexcept {
        std::uint8_t m = 0;
        for (int c = 0; c < 8; ++c) {
            if (!can_send(c, len)) { m = static_cast<std::uint8_t>(m | (1u << c)); }
        }
        return m;
    }
    // An update from the receiver. They arrive in order and FCCL never falls,
    // so a smaller value (none is sent) would be stale; it is ignored.
    void on_update(int vl, std::uint64_t limit) noexcept {
        if (limit > fccl[vl & 7]) { fccl[vl & 7] = limit; }
        news = true;
        ++updates;
    }
    bool take_news() noexcept {
        const bool n = news;
        news = false;
        return n;
    }
};

struct credit_rx {
    std::array<std::uint64_t, 8> abr{};         // blocks arrived, per VL
    std::array<std::uint64_t, 8> limit{};       // the VL's buffer, bytes
    std::array<std::uint64_t, 8> advertised{};  // the FCCL last sent, per VL
    std::array<std::uint8_t, 8> pg_of_vl{};     // the receiver's priority group holding the VL
    std::uint32_t block = 64;
    std::uint8_t credited = 0;  // VLs under credit control (bit per VL)
    // How the receiver classifies a frame (its port's trust and maps).
    qos_maps maps{};
    trust_mode trust = trust_mode::dscp;
    std::uint64_t overruns = 0;  // a VL held more than its buffer (a bug if ever non-zero)

    std::uint64_t blocks(std::uint32_t len) const noexcept { return (len + block - 1) / block; }
    // A frame of len bytes arrived on VL vl (whatever became of it).
    void on_arrival(int vl, std::uint32_t len) noexcept {
        if (vl >= 0 && (credited >> vl & 1u) != 0) { abr[static_cast<std::size_t>(vl)] += blocks(len); }
    }
    // FCCL for VL vl while its buffer holds `use` bytes.
    std::uint64_t fccl(int vl, std::uint64_t use) noexcept {
        const auto v = static_cast<std::size_t>(vl & 7);
        if (use > limit[v]) {
            ++overruns;
            return abr[v];
        }
        return abr[v] + (limit[v] - use) / block;
    }
    // The frame's VL as this receiver classifies it (-1: not a frame it
    // classifies, e.g. MAC Control). `p` is the frame from its first byte.
    int vl_of_frame(const std::uint8_t* p, std::uint32_t len) const noexcept {
        if (len < 14) { return -1; }
        std::uint32_t off = 12;
        int pcp = -1;
        std::uint16_t et = static_cast<std::uint16_t>(p[off] << 8 | p[off + 1]);
        if (et == 0x8100 || et == 0x88A8) {
            if (len < 18) { return -1; }
            pcp = p[14] >> 5;
            off += 4;
            et = static_cast<std::uint16_t>(p[off] << 8 | p[off + 1]);
        }
        if (et == 0x8808) { return -1; }  // MAC Control (PAUSE, PFC): not a data class
        off += 2;
        int dscp = -1;
        if (et == 0x0800 && len >= off + 2) {
            dscp = p[off + 1] >> 2;
        } else if (et == 0x86DD && len >= off + 2) {
            dscp = ((p[off] & 0x0F) << 2) | (p[off + 1] >> 6);
        }
        return maps.classify(trust, dscp, pcp);
    }
};

}  // namespace rocelab
