// mbuf_meta.hpp - a per-frame metadata area inside every rte_mbuf.
//
// What: registers (once per process; later calls return the same offset)
// DPDK's mbuf dynamic field `rocelab_frame_meta`, `size` bytes aligned to
// `align`, in the rte_mbuf's second cache line (dynfield1, 36 bytes shared
// with what the PMDs register, e.g. net_pcap's 8-byte RX timestamp). The
// pipelines keep what a queued frame needs there (the link to the next
// frame of its queue, its length, its buffer charge), so their queues are
// linked through the frames and hold whatever the buffer model admitted
// (docs/architecture.md, "Lossless containers").
//
// Returns the field's byte offset in rte_mbuf, or a one-line error (no room
// left: the PMDs of this process registered too much). Needs EAL.
#pragma once

#include <cstddef>
#include <string>
#include <variant>

namespace rocelab::dpdk {

std::variant<int, std::string> frame_meta_offset(std::size_t size, std::size_t align);

}  // namespace rocelab::dpdk
