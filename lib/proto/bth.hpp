// bth.hpp - RoCEv2 transport headers: BTH, opcode table, RETH, AETH, DETH,
// ImmDt/IETH, AtomicETH, AtomicAckETH and the CNP.
//
// BTH (12 bytes, big-endian; reference sec. 1.2):
//   0 opcode | 1 SE:1 M:1 PadCnt:2 TVer:4 | 2..3 P_Key |
//   4 FECN:1 BECN:1 resv:6 | 5..7 DestQP | 8 AckReq:1 resv:7 | 9..11 PSN
// Opcode bits 7..5 select the transport (000 RC, 001 UC, 010 RD, 011 UD,
// 100 CNP family), bits 4..0 the operation.
//
// Extended headers follow the BTH in this order (IBTA ch. 9):
//   DETH(8) RETH(16)/FETH(4)+RETH(16) AtomicETH(28) AETH(4) AtomicAckETH(8)
//   ImmDt(4) IETH(4); a CNP carries 16 reserved bytes.
// roce_opcode_lookup() returns, for each of the 256 opcodes, whether it is
// known, which extended headers it has and their total length. Opcodes not
// in the table (RD transport, reserved codes, 0x82+) are reported as unknown.
// FLUSH (0x1C) and ATOMIC_WRITE (0x1D) are the IBTA 1.5 additions as carried
// by Linux rxe [recall: FETH before RETH].
//
// AETH syndrome (reference sec. 1.3): bits 6..5 type: 00 ACK (4..0 credit
// count; 0x1F = "no credit info", the plain ACK), 01 RNR NAK (4..0 timer
// code), 10 reserved, 11 NAK (4..0 code: 0 PSN sequence error, 1 invalid
// request, 2 remote access error, 3 remote operational error, 4 invalid RD
// request). Counters: none.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/endian.hpp"
#include "proto/header_view.hpp"
#include "proto/psn.hpp"

namespace rocelab {

inline constexpr std::uint32_t bth_len = 12;
inline constexpr std::uint32_t reth_len = 16;
inline constexpr std::uint32_t aeth_len = 4;
inline constexpr std::uint32_t deth_len = 8;
inline constexpr std::uint32_t immdt_len = 4;
inline constexpr std::uint32_t ieth_len = 4;
inline constexpr std::uint32_t feth_len = 4;
inline constexpr std::uint32_t atomic_eth_len = 28;
inline constexpr std::uint32_t atomic_ack_eth_len = 8;
inline constexpr std::uint32_t cnp_reserved_len = 16;
inline constexpr std::uint32_t icrc_len = 4;
inline constexpr std::uint16_t default_pkey = 0xFFFF;

// Opcode values (RC unless prefixed; UC = RC low bits | 0x20, UD = 0x60 | ...).
namespace roce_op {
inline constexpr std::uint8_t rc_send_first = 0x00;
inline constexpr std::uint8_t rc_send_middle = 0x01;
inline constexpr std::uint8_t rc_send_last = 0x02;
inline constexpr std::uint8_t rc_send_last_imm = 0x03;
inline constexpr std::uint8_t rc_send_only = 0x04;
inline constexpr std::uint8_t rc_send_only_imm = 0x05;
inline constexpr std::uint8_t rc_write_first = 0x06;
inline constexpr std::uint8_t rc_write_middle = 0x07;
inline constexpr std::uint8_t rc_write_last = 0x08;
inline constexpr std::uint8_t rc_write_last_imm = 0x09;
inline constexpr std::uint8_t rc_write_only = 0x0A;
inline constexpr std::uint8_t rc_write_only_imm = 0x0B;
inline constexpr std::uint8_t rc_read_request = 0x0C;
inline constexpr std::uint8_t rc_read_response_first = 0x0D;
inline constexpr std::uint8_t rc_read_response_middle = 0x0E;
inline constexpr std::uint8_t rc_read_response_last = 0x0F;
inline constexpr std::uint8_t rc_read_response_only = 0x10;
inline constexpr std::uint8_t rc_ack = 0x11;
inline constexpr std::uint8_t rc_atomic_ack = 0x12;
inline constexpr std::uint8_t rc_compare_swap = 0x13;
inline constexpr std::uint8_t rc_fetch_add = 0x14;
inline constexpr std::uint8_t rc_send_last_inv = 0x16;
inline constexpr std::uint8_t rc_send_only_inv = 0x17;
inline constexpr std::uint8_t rc_flush = 0x1C;
inline constexpr std::uint8_t rc_atomic_write = 0x1D;
inline constexpr std::uint8_t uc_base = 0x20;
inline constexpr std::uint8_t ud_send_only = 0x64;
inline constexpr std::uint8_t ud_send_only_imm = 0x65;
inline constexpr std::uint8_t cnp = 0x81;
}  // namespace roce_op

enum class roce_transport : std::uint8_t { rc = 0, uc = 1, rd = 2, ud = 3, cnp = 4, other = 5 };

// Extended-header bits in roce_opcode_info::hdrs.
namespace roce_hdr {
inline constexpr std::uint16_t deth = 1u << 0;
inline constexpr std::uint16_t feth = 1u << 1;
inline constexpr std::uint16_t reth = 1u << 2;
inline constexpr std::uint16_t atomic_eth = 1u << 3;
inline constexpr std::uint16_t aeth = 1u << 4;
inline constexpr std::uint16_t atomic_ack_eth = 1u << 5;
inline constexpr std::uint16_t immdt = 1u << 6;
inline constexpr std::uint16_t ieth = 1u << 7;
inline constexpr std::uint16_t cnp_resv = 1u << 8;
}  // namespace roce_hdr

struct roce_opcode_info {
    bool known = false;
    bool has_payload = false;   // may carry a data payload
    std::uint8_t ext_len = 0;   // bytes of extended headers after the BTH
    std::uint16_t hdrs = 0;     // roce_hdr bits
    const char* name = "unknown";
};

namespace detail {

constexpr std::uint8_t ext_len_of(std::uint16_t h) noexcept {
    std::uint32_t n = 0;
    n += (h & roce_hdr::deth) ? deth_len : 0;
    n += (h & roce_hdr::feth) ? feth_len : 0;
    n += (h & roce_hdr::reth) ? reth_len : 0;
    n += (h & roce_hdr::atomic_eth) ? atomic_eth_len : 0;
    n += (h & roce_hdr::aeth) ? aeth_len : 0;
    n += (h & roce_hdr::atomic_ack_eth) ? atomic_ack_eth_len : 0;
    n += (h & roce_hdr::immdt) ? immdt_len : 0;
    n += (h & roce_hdr::ieth) ? ieth_len : 0;
    n += (h & roce_hdr::cnp_resv) ? cnp_reserved_len : 0;
    return static_cast<std::uint8_t>(n);
}

constexpr std::array<roce_opcode_info, 256> make_opcode_table() noexcept {
    std::array<roce_opcode_info, 256> t{};
    auto set = [&t](std::uint8_t op, std::uint16_t h, bool payload, const char* name) {
        t[op] = roce_opcode_info{true, payload, ext_len_of(h), h, name};
    };
    using namespace roce_hdr;
    // Sends and RDMA writes: the same twelve opcodes in RC and, with 0x20 set, in UC
    // (UC has nothing else).
    struct send_write_op {
        std::uint16_t h;
        const char* rc;
        const char* uc;
    };
    constexpr send_write_op send_write[] = {
        {0, "RC_SEND_FIRST", "UC_SEND_FIRST"},
        {0, "RC_SEND_MIDDLE", "UC_SEND_MIDDLE"},
        {0, "RC_SEND_LAST", "UC_SEND_LAST"},
        {immdt, "RC_SEND_LAST_WITH_IMMEDIATE", "UC_SEND_LAST_WITH_IMMEDIATE"},
        {0, "RC_SEND_ONLY", "UC_SEND_ONLY"},
        {immdt, "RC_SEND_ONLY_WITH_IMMEDIATE", "UC_SEND_ONLY_WITH_IMMEDIATE"},
        {reth, "RC_RDMA_WRITE_FIRST", "UC_RDMA_WRITE_FIRST"},
        {0, "RC_RDMA_WRITE_MIDDLE", "UC_RDMA_WRITE_MIDDLE"},
        {0, "RC_RDMA_WRITE_LAST", "UC_RDMA_WRITE_LAST"},
        {immdt, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE"},
        {reth, "RC_RDMA_WRITE_ONLY", "UC_RDMA_WRITE_ONLY"},
        {reth | immdt, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"},
    };
    for (std::uint8_t i = 0; i < std::size(send_write); ++i) {
        set(i, send_write[i].h, true, send_write[i].rc);
        set(static_cast<std::uint8_t>(roce_op::uc_base | i), send_write[i].h, true, send_write[i].uc);
    }
    // RC only
    set(0x0C, reth, false, "RC_RDMA_READ_REQUEST");
    set(0x0D, aeth, true, "RC_RDMA_READ_RESPONSE_FIRST");
    set(0x0E, 0, true, "RC_RDMA_READ_RESPONSE_MIDDLE");
    set(0x0F, aeth, true, "RC_RDMA_READ_RESPONSE_LAST");
    set(0x10, aeth, true, "RC_RDMA_READ_RESPONSE_ONLY");
    set(0x11, aeth, false, "RC_ACKNOWLEDGE");
    set(0x12, aeth | atomic_ack_eth, false, "RC_ATOMIC_ACKNOWLEDGE");
    set(0x13, atomic_eth, false, "RC_COMPARE_SWAP");
    set(0x14, atomic_eth, false, "RC_FETCH_ADD");
    set(0x16, ieth, true, "RC_SEND_LAST_WITH_INVALIDATE");
    set(0x17, ieth, true, "RC_SEND_ONLY_WITH_INVALIDATE");
    set(0x1C, feth | reth, false, "RC_FLUSH");
    set(0x1D, reth, true, "RC_ATOMIC_WRITE");
    // UD
    set(0x64, deth, true, "UD_SEND_ONLY");
    set(0x65, deth | immdt, true, "UD_SEND_ONLY_WITH_IMMEDIATE");
    // RoCEv2 congestion notification
    set(0x81, cnp_resv, false, "CNP");
    return t;
}

inline constexpr std::array<roce_opcode_info, 256> opcode_table = make_opcode_table();

}  // namespace detail

constexpr const roce_opcode_info& roce_opcode_lookup(std::uint8_t op) noexcept { return detail::opcode_table[op]; }
constexpr bool roce_opcode_known(std::uint8_t op) noexcept { return detail::opcode_table[op].known; }
constexpr const char* roce_opcode_name(std::uint8_t op) noexcept { return detail::opcode_table[op].name; }
constexpr roce_transport roce_transport_of(std::uint8_t op) noexcept {
    const unsigned c = op >> 5;
    return c <= 4 ? static_cast<roce_transport>(c) : roce_transport::other;
}

// Offset of an extended header from the end of the BTH, or -1 if absent.
constexpr int roce_ext_offset(std::uint8_t op, std::uint16_t which) noexcept {
    const std::uint16_t h = detail::opcode_table[op].hdrs;
    if ((h & which) == 0) {
        return -1;
    }
    // Headers are laid out in the bit order of roce_hdr; sum the ones before.
    return detail::ext_len_of(static_cast<std::uint16_t>(h & (which - 1u)));
}

static_assert(roce_opcode_lookup(roce_op::rc_write_only_imm).ext_len == 20);
static_assert(roce_ext_offset(roce_op::rc_write_only_imm, roce_hdr::immdt) == 16);
static_assert(roce_opcode_lookup(roce_op::cnp).ext_len == 16);
static_assert(!roce_opcode_known(0x15));
static_assert(roce_opcode_lookup(roce_op::uc_base | roce_op::rc_write_only_imm).ext_len == 20);

// BTH fields, for writers.
struct bth_fields {
    std::uint8_t opcode = roce_op::rc_send_only;
    bool se = false;
    bool migreq = false;
    std::uint8_t pad_count = 0;  // 0..3
    std::uint8_t tver = 0;
    std::uint16_t pkey = default_pkey;
    bool fecn = false;
    bool becn = false;
    std::uint32_t dest_qpn = 0;  // 24 bits
    bool ack_req = false;
    std::uint32_t psn = 0;       // 24 bits
};

inline std::uint32_t write_bth(std::byte* p, const bth_fields& f) noexcept {
    p[0] = std::byte{f.opcode};
    p[1] = std::byte((f.se ? 0x80u : 0u) | (f.migreq ? 0x40u : 0u) | ((f.pad_count & 3u) << 4) | (f.tver & 0x0Fu));
    store_be16(p + 2, f.pkey);
    store_be32(p + 4, (f.fecn ? 0x80000000u : 0u) | (f.becn ? 0x40000000u : 0u) | (f.dest_qpn & psn_mask));
    store_be32(p + 8, (f.ack_req ? 0x80000000u : 0u) | (f.psn & psn_mask));
    return bth_len;
}

template <typename B>
class basic_bth_view : public header_view<B> {
public:
    using header_view<B>::header_view;
    std::uint8_t opcode() const noexcept { return load_u8(_p); }
    bool se() const noexcept { return (load_u8(_p + 1) & 0x80u) != 0; }
    bool migreq() const noexcept { return (load_u8(_p + 1) & 0x40u) != 0; }
    std::uint8_t pad_count() const noexcept { return (load_u8(_p + 1) >> 4) & 3u; }
    std::uint8_t tver() const noexcept { return load_u8(_p + 1) & 0x0Fu; }
    std::uint16_t pkey() const noexcept { return load_be16(_p + 2); }
    bool fecn() const noexcept { return (load_u8(_p + 4) & 0x80u) != 0; }
    bool becn() const noexcept { return (load_u8(_p + 4) & 0x40u) != 0; }
    std::uint32_t dest_qpn() const noexcept { return load_be32(_p + 4) & psn_mask; }
    bool ack_req() const noexcept { return (load_u8(_p + 8) & 0x80u) != 0; }
    std::uint32_t psn() const noexcept { return load_be32(_p + 8) & psn_mask; }
    bth_fields fields() const noexcept {
        return bth_fields{opcode(), se(), migreq(), pad_count(), tver(), pkey(),
                          fecn(), becn(), dest_qpn(), ack_req(), psn()};
    }

    void set_fecn(bool v) const noexcept requires(!std::is_const_v<B>) { set_bit(4, 0x80u, v); }
    void set_becn(bool v) const noexcept requires(!std::is_const_v<B>) { set_bit(4, 0x40u, v); }
    void set_ack_req(bool v) const noexcept requires(!std::is_const_v<B>) { set_bit(8, 0x80u, v); }
    void set_psn(std::uint32_t psn) const noexcept requires(!std::is_const_v<B>) {
        store_be24(_p + 9, psn & psn_mask);
    }
    void set_dest_qpn(std::uint32_t qpn) const noexcept requires(!std::is_const_v<B>) {
        store_be24(_p + 5, qpn & psn_mask);
    }

private:
    void set_bit(int off, unsigned m, bool v) const noexcept {
        const unsigned b = load_u8(_p + off);
        _p[off] = std::byte(v ? (b | m) : (b & ~m));
    }
    using header_view<B>::_p;
};
using bth_view = basic_bth_view<std::byte>;
using bth_cview = basic_bth_view<const std::byte>;

// RETH: virtual address (64), R_Key (32), DMA length (32).
struct reth_fields {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t dma_len = 0;
};
inline reth_fields read_reth(const std::byte* p) noexcept {
    return reth_fields{load_be64(p), load_be32(p + 8), load_be32(p + 12)};
}
inline std::uint32_t write_reth(std::byte* p, const reth_fields& r) noexcept {
    store_be64(p, r.va);
    store_be32(p + 8, r.rkey);
    store_be32(p + 12, r.dma_len);
    return reth_len;
}

// DETH: Q_Key (32), reserved (8), source QP (24).
struct deth_fields {
    std::uint32_t qkey = 0;
    std::uint32_t src_qp = 0;
};
inline deth_fields read_deth(const std::byte* p) noexcept {
    return deth_fields{load_be32(p), load_be32(p + 4) & psn_mask};
}
inline std::uint32_t write_deth(std::byte* p, const deth_fields& d) noexcept {
    store_be32(p, d.qkey);
    store_be32(p + 4, d.src_qp & psn_mask);
    return deth_len;
}

// AETH: syndrome (8) + MSN (24).
enum class aeth_type : std::uint8_t { ack = 0, rnr_nak = 1, reserved = 2, nak = 3 };
enum class nak_code : std::uint8_t {
    psn_seq_error = 0,
    invalid_request = 1,
    remote_access_error = 2,
    remote_op_error = 3,
    invalid_rd_request = 4,
};
inline constexpr std::uint8_t aeth_credits_invalid = 0x1F;

constexpr std::uint8_t aeth_syndrome_ack(std::uint8_t credits = aeth_credits_invalid) noexcept {
    return credits & 0x1Fu;
}
constexpr std::uint8_t aeth_syndrome_rnr_nak(std::uint8_t timer) noexcept {
    return static_cast<std::uint8_t>(0x20u | (timer & 0x1Fu));
}
constexpr std::uint8_t aeth_syndrome_nak(nak_code c) noexcept {
    return static_cast<std::uint8_t>(0x60u | (static_cast<std::uint8_t>(c) & 0x1Fu));
}
constexpr aeth_type aeth_type_of(std::uint8_t syndrome) noexcept {
    return static_cast<aeth_type>((syndrome >> 5) & 3u);
}
constexpr std::uint8_t aeth_value_of(std::uint8_t syndrome) noexcept { return syndrome & 0x1Fu; }
constexpr bool aeth_is_ack(std::uint8_t s) noexcept { return aeth_type_of(s) == aeth_type::ack; }
constexpr bool aeth_is_nak(std::uint8_t s) noexcept { return aeth_type_of(s) == aeth_type::nak; }
constexpr bool aeth_is_rnr_nak(std::uint8_t s) noexcept { return aeth_type_of(s) == aeth_type::rnr_nak; }
static_assert(aeth_syndrome_ack() == 0x1F);
static_assert(aeth_syndrome_nak(nak_code::psn_seq_error) == 0x60);
static_assert(aeth_syndrome_nak(nak_code::remote_op_error) == 0x63);

struct aeth_fields {
    std::uint8_t syndrome = aeth_credits_invalid;
    std::uint32_t msn = 0;  // 24 bits
};
inline aeth_fields read_aeth(const std::byte* p) noexcept {
    const std::uint32_t w = load_be32(p);
    return aeth_fields{static_cast<std::uint8_t>(w >> 24), w & psn_mask};
}
inline std::uint32_t write_aeth(std::byte* p, const aeth_fields& a) noexcept {
    store_be32(p, (std::uint32_t(a.syndrome) << 24) | (a.msn & psn_mask));
    return aeth_len;
}

// AtomicETH: VA (64), R_Key (32), swap/add (64), compare (64).
struct atomic_eth_fields {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint64_t swap_add = 0;
    std::uint64_t compare = 0;
};
inline std::uint32_t write_atomic_eth(std::byte* p, const atomic_eth_fields& a) noexcept {
    store_be64(p, a.va);
    store_be32(p + 8, a.rkey);
    store_be64(p + 12, a.swap_add);
    store_be64(p + 20, a.compare);
    return atomic_eth_len;
}

// CNP BTH as NICs send it (reference sec. 1.4): opcode 0x81, P_Key 0xFFFF,
// BECN=1, DestQP = the reaction point's QP, PSN 0, A=0.
constexpr bth_fields cnp_bth(std::uint32_t dest_qpn) noexcept {
    bth_fields f{};
    f.opcode = roce_op::cnp;
    f.becn = true;
    f.dest_qpn = dest_qpn;
    return f;
}

}  // namespace rocelab
