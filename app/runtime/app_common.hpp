// app_common.hpp - what rocelab's applications share on the control path:
// the "EAL options -- application options" command line, --help/--version
// before EAL starts, the stop flag set by SIGINT/SIGTERM, one-line fatal
// errors, and the unit formatting used by status lines.
#pragma once

#include <arpa/inet.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace rocelab::runtime {

// argv[0..eal_argc) go to EAL; app_argv[0..app_argc) are the options after "--".
struct cmdline {
    int eal_argc = 0;
    int app_argc = 0;
    char** app_argv = nullptr;
};

inline cmdline split_cmdline(int argc, char** argv) {
    cmdline c;
    c.eal_argc = argc;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            c.eal_argc = i;
            c.app_argc = argc - i - 1;
            c.app_argv = argv + i + 1;
            break;
        }
    }
    return c;
}

// --help / -h / --version among the EAL options (before "--"): print and
// return true, so that `rocelab-x --help` works without starting EAL.
inline bool early_help(const cmdline& c, char** argv, const char* usage, const char* name, const char* version) {
    for (int i = 1; i < c.eal_argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(usage, stdout);
            return true;
        }
        if (std::strcmp(argv[i], "--version") == 0) {
            std::printf("%s %s\n", name, version);
            return true;
        }
    }
    return false;
}

// Set by SIGINT/SIGTERM; the control loop polls it.
inline std::atomic<bool>& stop_requested() {
    static std::atomic<bool> flag{false};
    return flag;
}

inline void install_stop_signals() {
    auto handler = +[](int) { stop_requested().store(true); };
    std::signal(SIGINT, handler);
    std::signal(SIGTERM, handler);
}

// One line on stderr, then exit (2: bad command line or configuration).
[[noreturn]] inline void die(const char* prog, int code, const std::string& msg) {
    std::fprintf(stderr, "%s: %s\n", prog, msg.c_str());
    std::exit(code);
}

// An IPv4 (first 4 bytes) or IPv6 address as text.
inline std::string ip_str(const std::array<std::uint8_t, 16>& a, bool v6) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(v6 ? AF_INET6 : AF_INET, a.data(), buf, sizeof buf);
    return buf;
}

inline std::string mac_str(const std::array<std::uint8_t, 6>& m) {
    char b[24];
    std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return b;
}

// A measured rate with its unit written out: 2.50Gbps, 812.3Mbps, 40Kbps.
inline std::string rate_str(double bps) {
    char b[32];
    if (bps >= 1e9) {
        std::snprintf(b, sizeof b, "%.2fGbps", bps / 1e9);
    } else if (bps >= 1e6) {
        std::snprintf(b, sizeof b, "%.1fMbps", bps / 1e6);
    } else {
        std::snprintf(b, sizeof b, "%.0fKbps", bps / 1e3);
    }
    return b;
}

}  // namespace rocelab::runtime
