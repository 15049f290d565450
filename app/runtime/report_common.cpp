#include "runtime/report_common.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "rocelab_version.h"

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

void write_sample_stats(json_writer& j, std::string_view what, const std::vector<std::uint64_t>& sorted,
                        std::uint64_t dropped, double mean, bool with_min) {
    const std::string w(what);
    j.kv(w + "_samples", static_cast<std::uint64_t>(sorted.size()));
    j.kv(w + "_samples_dropped", dropped);
    j.kv(w + "_p50_ns", percentile(sorted, 0.50));
    j.kv(w + "_p99_ns", percentile(sorted, 0.99));
    j.kv(w + "_max_ns", sorted.empty() ? 0 : sorted.back());
    if (with_min) {
        j.kv(w + "_min_ns", sorted.empty() ? 0 : sorted.front());
    }
    j.kv(w + "_mean_ns", mean);
}

void write_provenance_head(json_writer& j, const char* tool, const std::string& config) {
    j.kv("tool", tool);
    j.kv("version", ROCELAB_VERSION);
    j.kv("config", config);
}

std::string end_report(json_writer& j, std::string& out) {
    j.end_object();
    out += '\n';
    return out;
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
#define ROCELAB_KV(name) j.kv(#name, es.name);
    ROCELAB_ETHDEV_STATS(ROCELAB_KV)
#undef ROCELAB_KV
    j.end_object();
}

std::string stall_time_str(std::int64_t ns) {
    char b[32];
    if (ns >= 1'000'000) {
        std::snprintf(b, sizeof b, "%.1fms", double(ns) / 1e6);
    } else {
        std::snprintf(b, sizeof b, "%lldus", static_cast<long long>((ns + 500) / 1000));
    }
    return b;
}

std::string write_report_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
    if (!f) { return "cannot write report " + path; }
    return "";
}

}  // namespace rocelab::runtime
