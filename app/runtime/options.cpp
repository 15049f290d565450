#include "runtime/options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "config/units_parse.hpp"
#include "rocelab_version.h"

namespace rocelab::runtime {

std::string option_args::value(const std::string& opt) {
    if (_i + 1 >= _argc) { fail("option " + opt + " needs a value (see --help)"); }
    return _argv[++_i];
}

void option_args::unknown() const {
    fail("unknown option '" + arg() + "' (application options go after '--'; see --help)");
}

bool common_opts::parse(option_args& args, const char* usage) {
    const std::string a = args.arg();
    if (a == "-h" || a == "--help") {
        std::fputs(usage, stdout);
        std::exit(0);
    } else if (a == "-V" || a == "--version") {
        std::printf("%s %s\n", args.prog(), ROCELAB_VERSION);
        std::exit(0);
    } else if (a == "-c" || a == "--config") {
        config = args.value("--config");
    } else if (a == "-r" || a == "--report") {
        run.report = args.value("--report");
    } else if (a == "--pcap-out") {
        run.pcap_out = args.value(a);
    } else if (a == "--snaplen") {
        const std::string v = args.value(a);
        auto b = parse_bytes(v, bare_number::accepted);
        if (!b || b->v < 64 || b->v > 9216) { args.fail("--snaplen " + v + ": expected 64..9216 bytes"); }
        run.snaplen = static_cast<std::uint32_t>(b->v);
    } else if (a == "-q" || a == "--quiet") {
        run.quiet = true;
    } else if (a == "--idle-yield") {
        run.idle_yield = true;
    } else if (a == "--check-config") {
        check_config = true;
    } else if (a == "--port-workers") {
        const std::string v = args.value(a);
        port_workers.clear();
        for (std::size_t pos = 0; pos <= v.size();) {
            const std::size_t e = std::min(v.find(',', pos), v.size());
            const std::string item = v.substr(pos, e - pos);
            char* end = nullptr;
            const unsigned long n = std::strtoul(item.c_str(), &end, 10);
            if (item.empty() || *end != '\0' || n > 63) {
                args.fail("--port-workers " + v + ": '" + item +
                          "' is not a worker number 0..63 (give one per port, in port order, e.g. 0,0,1,1)");
            }
            port_workers.push_back(static_cast<unsigned>(n));
            pos = e + 1;
        }
    } else {
        return false;
    }
    return true;
}

}  // namespace rocelab::runtime
