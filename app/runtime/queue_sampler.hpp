// queue_sampler.hpp - egress queue depths of a switch_pipeline as a CSV time series.
//
// depth_sampler is run_worker()'s per-loop hook for the switch: every
// `interval` of the worker's clock it pushes one depth_sample per port into
// an SPSC ring (a full ring counts `dropped`; the data path never waits).
// The control thread drains the ring with queue_csv::drain() into
//   time_s,port,queue,depth_bytes,paused,pfc_tx
// (time_s on the run clock; one row per queue, paused = PFC-paused bit,
// pfc_tx = PFC/PAUSE frames the switch has sent on the port so far, the
// same on each of the port's rows).
#pragma once

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "core/spsc_ring.hpp"
#include "core/units.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::runtime {

struct depth_sample {
    std::int64_t ns = 0;
    std::uint16_t port = 0;
    std::uint8_t paused = 0;  // queue mask paused by PFC at sample time
    std::uint64_t pfc_tx = 0;  // PFC frames sent on the port so far
    std::array<std::uint32_t, 8> depth_bytes{};
};

using depth_ring = spsc_ring<depth_sample, 16384>;

struct queue_samples {
    depth_ring ring;
    std::atomic<std::uint64_t> dropped{0};  // samples that did not fit the ring
};

// run_worker() hook: with a null `out` it samples nothing.
struct depth_sampler {
    queue_samples* out = nullptr;
    nanos interval{1000000};
    nanos next{0};

    void operator()(const sw::switch_pipeline& pipe, nanos now) noexcept {
        if (out == nullptr || now < next) { return; }
        for (std::size_t p = 0; p < pipe.port_count(); ++p) {
            depth_sample s;
            s.ns = now.v;
            s.port = static_cast<std::uint16_t>(p);
            s.paused = pipe.paused_queues(p, now);
            s.pfc_tx = pipe.pfc_frames_sent(p);
            for (int q = 0; q < 8; ++q) { s.depth_bytes[q] = static_cast<std::uint32_t>(pipe.queued_bytes(p, q)); }
            if (!out->ring.push(s)) { out->dropped.fetch_add(1, std::memory_order_relaxed); }
        }
        next += interval;
        if (next < now) { next = now + interval; }
    }
};

// Control side: the CSV file and the ring the worker fills.
class queue_csv {
public:
    // Empty string on success, else why the file cannot be written.
    std::string open(const std::string& path) {
        _f = std::fopen(path.c_str(), "w");
        if (_f == nullptr) { return std::string(std::strerror(errno)); }
        std::fprintf(_f, "time_s,port,queue,depth_bytes,paused,pfc_tx\n");
        _samples = std::make_unique<queue_samples>();
        return "";
    }
    bool is_open() const noexcept { return _f != nullptr; }
    depth_sampler sampler(nanos interval, nanos start) noexcept { return {_samples.get(), interval, start}; }
    // Write every sample queued so far.
    void drain(const sw::switch_pipeline& pipe) {
        if (_f == nullptr) { return; }
        depth_sample s;
        while (_samples->ring.pop(s)) {
            for (int q = 0; q < 8; ++q) {
                std::fprintf(_f, "%.6f,%s,%d,%u,%d,%llu\n", double(s.ns) / 1e9, pipe.binding(s.port).name.c_str(), q,
                             s.depth_bytes[q], (s.paused >> q) & 1, static_cast<unsigned long long>(s.pfc_tx));
            }
        }
    }
    void close(const sw::switch_pipeline& pipe) {
        if (_f == nullptr) { return; }
        drain(pipe);
        std::fclose(_f);
        _f = nullptr;
    }

private:
    std::FILE* _f = nullptr;
    std::unique_ptr<queue_samples> _samples;
};

}  // namespace rocelab::runtime
