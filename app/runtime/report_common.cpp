#include "runtime/report_common.hpp"

#include <algorithm>
#include <fstream>

namespace rocelab::runtime {

const std::string& run_report::device(std::size_t i) const {
    static const std::string none;
    return i < devices.size() ? devices[i] : none;
}

std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double q) {
    if (sorted.empty()) { return 0; }
    // Nearest rank.
    std::size_t k = static_cast<std::size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
    k = std::clamp<std::size_t>(k, 1, sorted.size());
    return sorted[k - 1];
}

void write_capture_fields(json_writer& j, const run_report& r) {
    if (r.capture) {
        j.kv("capture_frames", r.capture->frames);
        j.kv("capture_dropped", r.capture->dropped);
    }
}

void write_ethdev(json_writer& j, const run_report& r, std::size_t i) {
    const ethdev_stats es = r.port_ethdev(i);
    j.key("ethdev");
    j.begin_object();
    j.kv("ipackets", es.ipackets);
    j.kv("opackets", es.opackets);
    j.kv("imissed", es.imissed);
    j.kv("ierrors", es.ierrors);
    j.kv("oerrors", es.oerrors);
    j.kv("rx_nombuf", es.rx_nombuf);
    j.end_object();
}

std::string write_report_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
    if (!f) { return "cannot write report " + path; }
    return "";
}

}  // namespace rocelab::runtime
