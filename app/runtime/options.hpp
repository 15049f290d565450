// options.hpp - the application options (after "--") both apps share.
//
//   -c, --config FILE    -r, --report FILE    --pcap-out DIR    --snaplen BYTES
//   -q, --quiet          --check-config       -V, --version     -h, --help
//   --port-workers LIST  (which worker lcore owns each port: 0,0,1,1)    --idle-yield
//
// An app's parser walks its options with option_args and offers each to
// common_opts::parse() first; what that does not take is the app's own (or
// option_args::unknown()). Bad input is one line on stderr and exit 2;
// --help and --version print and exit 0.
//
//   runtime::option_args args(argc, argv, "rocelab-x");
//   for (; args.more(); args.next()) {
//       if (o.common.parse(args, usage_text)) { continue; }
//       const std::string a = args.arg();
//       if (a == "--foo") { o.foo = args.value(a); } else { args.unknown(); }
//   }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/app_common.hpp"
#include "runtime/app_runtime.hpp"

namespace rocelab::runtime {

class option_args {
public:
    option_args(int argc, char** argv, const char* prog) noexcept : _argc(argc), _argv(argv), _prog(prog) {}
    bool more() const noexcept { return _i < _argc; }
    void next() noexcept { ++_i; }
    std::string arg() const { return _argv[_i]; }
    const char* prog() const noexcept { return _prog; }
    // The option's value (the next argument); exits 2 naming `opt` when there is none.
    std::string value(const std::string& opt);
    [[noreturn]] void fail(const std::string& msg) const { die(_prog, 2, msg); }
    [[noreturn]] void unknown() const;

private:
    int _argc;
    char** _argv;
    const char* _prog;
    int _i = 0;
};

struct common_opts {
    std::string config;         // -c: "" = built-in defaults
    bool check_config = false;  // validate the configuration and exit 0
    run_options run;            // -r, --pcap-out, --snaplen, -q (the app sets duration and status_interval)
    std::vector<unsigned> port_workers;  // --port-workers: worker per port, in port order (empty: round-robin)

    // Takes the option at `args` (and its value) when it is one of the above.
    bool parse(option_args& args, const char* usage);

    // The app's configuration: dflt() without -c, else load(config), a
    // result<Cfg>; a file that does not load is "<prog>: <message>" on stderr
    // and exit 2.
    template <typename Default, typename Load>
    auto load_config(const char* prog, Default&& dflt, Load&& load) const {
        if (config.empty()) { return dflt(); }
        auto r = load(config);
        if (!r) { die(prog, 2, r.error().message); }
        return std::move(*r);
    }
};

}  // namespace rocelab::runtime
