// test_vectors.hpp - reference frames (reference/vectors.json, sec. 1.6 and
// 2.1) as hex, plus small helpers shared by the proto tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rocelab::test {

struct ref_vector {
    const char* name;
    const char* hex;   // frame without FCS
    const char* tail;  // ICRC wire bytes (RoCE) or FCS wire bytes (MAC control)
    bool ipv6;
    bool confirmed;
};

inline constexpr ref_vector vec_a{
    "A_rc_send_only_ipv4",
    "02000000000202000000000108004502003c123440004011a527c0a80101c0a80102c00012b7002800000400ffff000000118000"
    "0000000102030405060708090a0b0c0d0e0faeb3d1bf",
    "aeb3d1bf", false, true};
inline constexpr ref_vector vec_b{
    "B_rc_write_only_reth",
    "02000000000202000000000108004502004c123540004011a516c0a80101c0a80102c00112b7003800000a00ffff000000118000"
    "000100007f00000010000000123400000010000102030405060708090a0b0c0d0e0f531ffe7a",
    "531ffe7a", false, true};
inline constexpr ref_vector vec_c{
    "C_ack",
    "020000000002020000000001080045020030000140004011b766c0a80102c0a80101c00212b7001c00001100ffff000000220000"
    "00011f000001494ce181",
    "494ce181", false, true};
inline constexpr ref_vector vec_d{
    "D_nak_psn_seq_err",
    "020000000002020000000001080045020030000240004011b765c0a80102c0a80101c00212b7001c00001100ffff000000220000"
    "000560000001b846a694",
    "b846a694", false, true};
inline constexpr ref_vector vec_e{
    "E_cnp",
    "020000000001020000000002080045c0003c000340004011b69ac0a80102c0a80101c00312b7002800008100ffff400000220000"
    "000000000000000000000000000000000000022bd462",
    "022bd462", false, true};
inline constexpr ref_vector vec_f{
    "F_send_only_ipv6_unconfirmed",
    "02000000000202000000000186dd6021234500281140fe800000000000000000000000000001fe80000000000000000000000000"
    "0002c00012b7002800000400ffff0000001180000000000102030405060708090a0b0c0d0e0f2e72f5ee",
    "2e72f5ee", true, false};
inline constexpr ref_vector vec_pfc_xoff{
    "PFC_xoff_prio3_ffff",
    "0180c20000010200000000aa880801010008000000000000ffff000000000000000000000000000000000000000000000000000000"
    "00000000000000",
    "0fe081dc", false, true};
inline constexpr ref_vector vec_pause{
    "PAUSE_ffff",
    "0180c20000010200000000aa88080001ffff00000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000",
    "622e1ae0", false, true};

inline constexpr ref_vector roce_vectors[] = {vec_a, vec_b, vec_c, vec_d, vec_e, vec_f};

inline std::vector<std::byte> from_hex(std::string_view h) {
    auto nib = [](char c) -> unsigned {
        if (c >= '0' && c <= '9') {
            return static_cast<unsigned>(c - '0');
        }
        return static_cast<unsigned>((c | 0x20) - 'a' + 10);
    };
    std::vector<std::byte> v;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
        v.push_back(std::byte((nib(h[i]) << 4) | nib(h[i + 1])));
    }
    return v;
}

inline std::vector<std::byte> seq_payload(std::size_t n) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = std::byte(i);
    }
    return v;
}

}  // namespace rocelab::test
