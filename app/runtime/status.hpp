// status.hpp - the once-a-second status line both apps print.
//
//   [    3.0s] | <port> <what changed since the last line> | ... | <totals>
//
// status_line builds one line ("[%7.1fs]" then " | ..." parts) and prints it
// to stdout, flushed. port_traffic holds a port's packet/byte totals at the
// last line; rates() turns two of them into per-second figures.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/counter.hpp"

namespace rocelab::runtime {

struct port_traffic {
    std::uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
};

// The four totals of a port's counters (the switch's or the generator's:
// any struct with rx/tx_packets and rx/tx_bytes), read with relaxed loads.
template <typename Counters>
port_traffic traffic_of(const Counters& c) {
    return {read_counter(c.rx_packets), read_counter(c.tx_packets), read_counter(c.rx_bytes),
            read_counter(c.tx_bytes)};
}

struct traffic_rates {
    double rx_mpps = 0, tx_mpps = 0, rx_bps = 0, tx_bps = 0;
};

inline traffic_rates rates(const port_traffic& now, const port_traffic& prev, double dt) {
    return {double(now.rx_packets - prev.rx_packets) / dt / 1e6, double(now.tx_packets - prev.tx_packets) / dt / 1e6,
            double(now.rx_bytes - prev.rx_bytes) * 8 / dt, double(now.tx_bytes - prev.tx_bytes) * 8 / dt};
}

class status_line {
public:
    // t: seconds since the start of the run.
    explicit status_line(double t) { append("[%7.1fs]", t); }
    __attribute__((format(printf, 2, 3))) void append(const char* fmt, ...) {
        char b[320];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(b, sizeof b, fmt, ap);
        va_end(ap);
        _line += b;
    }
    void print() const {
        std::printf("%s\n", _line.c_str());
        std::fflush(stdout);
    }

private:
    std::string _line;
};

// " | workers busy 41% 63%": each worker's busy share since the last line
// (busy_cycles of its view over tsc_hz x dt), when there are several.
template <typename Pipeline>
void append_worker_busy(status_line& line, const Pipeline& p, std::uint64_t tsc_hz, double dt,
                        std::vector<std::uint64_t>& prev) {
    if (p.worker_count() < 2 || tsc_hz == 0 || dt <= 0) { return; }
    prev.resize(p.worker_count(), 0);
    line.append(" | workers busy");
    for (std::size_t k = 0; k < p.worker_count(); ++k) {
        const std::uint64_t b = read_counter(p.worker(k).busy_cycles);
        line.append(" %.0f%%", 100.0 * double(b - prev[k]) / (double(tsc_hz) * dt));
        prev[k] = b;
    }
}

}  // namespace rocelab::runtime
