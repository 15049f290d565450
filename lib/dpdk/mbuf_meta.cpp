// mbuf_meta.cpp - see mbuf_meta.hpp.
#include "dpdk/mbuf_meta.hpp"

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include <cstdio>
#include <cstring>

namespace rocelab::dpdk {

std::variant<int, std::string> frame_meta_offset(std::size_t size, std::size_t align) {
    rte_mbuf_dynfield d{};
    std::snprintf(d.name, sizeof(d.name), "rocelab_frame_meta_%zu", size);
    d.size = size;
    d.align = align;
    d.flags = 0;
    const int off = rte_mbuf_dynfield_register(&d);
    if (off < 0) {
        return "mbuf dynamic field rocelab_frame_meta (" + std::to_string(size) + " bytes, aligned " +
               std::to_string(align) + "): " + rte_strerror(rte_errno) +
               " (the 36 bytes DPDK reserves per mbuf for dynamic fields are taken by the PMDs' own)";
    }
    return off;
}

}  // namespace rocelab::dpdk
