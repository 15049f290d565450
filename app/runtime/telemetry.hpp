// telemetry.hpp - what the /rocelab... telemetry modules share (switch_telemetry,
// gen_telemetry): serving one pipeline to rte_telemetry callbacks.
//
// rte_telemetry callbacks take no user pointer, so each pipeline type has one
// slot per process, served<Pipeline, Info>: attach() publishes the pipeline
// (call it just before launching the worker), detach() withdraws it (after
// the worker stopped, before the pipeline is destroyed). Each command is a
// plain function
//   int cmd(const Pipeline&, const Info&, const char* params, rte_tel_data*)
// wrapped by served::command<cmd>, which holds the slot's mutex while it
// runs and answers -1 when no pipeline is attached; so detach() returns only
// once no callback uses the pipeline. Commands only read counters (relaxed
// loads) and immutable config, never the data path's hot state.
//
//   using slot = runtime::served<gen_pipeline, telemetry_info>;
//   static constexpr runtime::tel_command cmds[] = {
//       {"/rocelab_gen/info", slot::command<cmd_info>, "version, config, ..."}};
//   slot::attach(pipe, info, cmds, "rocelab-gen");
#pragma once

#include <rte_telemetry.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string>

namespace rocelab::runtime {

struct tel_command {
    const char* name;  // DPDK accepts only [A-Za-z0-9_/]
    telemetry_cb fn;
    const char* help;  // < RTE_TEL_MAX_STRING_LEN
};

// Registers the commands (a refused one is one warning line on stderr).
void register_commands(std::span<const tel_command> cmds, const char* prog);

template <typename Pipeline, typename Info>
class served {
public:
    using body = int (*)(const Pipeline&, const Info&, const char* params, rte_tel_data* d);

    template <body Fn>
    static int command(const char*, const char* params, rte_tel_data* d) {
        std::lock_guard lk(_mu);
        if (_pipe == nullptr) { return -1; }
        return Fn(*_pipe, _info, params, d);
    }

    // Serve `pipe`; the commands are registered on the first attach.
    static void attach(const Pipeline* pipe, const Info& info, std::span<const tel_command> cmds, const char* prog) {
        {
            std::lock_guard lk(_mu);
            _info = info;
            _pipe = pipe;
        }
        if (!_registered) {
            _registered = true;
            register_commands(cmds, prog);
        }
    }
    static void detach() {
        std::lock_guard lk(_mu);
        _pipe = nullptr;
    }

private:
    static inline std::mutex _mu;  // guards the two below; held by every command
    static inline const Pipeline* _pipe = nullptr;
    static inline Info _info{};
    static inline bool _registered = false;  // control thread only
};

// Index from "<idx>" or a name (names(i) for i < n); empty = 0; -1 if neither matches.
template <typename Name>
long find_index(const char* params, std::size_t n, Name names) {
    if (params == nullptr || *params == '\0') { return n > 0 ? 0 : -1; }
    for (std::size_t i = 0; i < n; ++i) {
        if (names(i) == params) { return static_cast<long>(i); }
    }
    char* end = nullptr;
    const long v = std::strtol(params, &end, 10);
    if (end != params && *end == '\0' && v >= 0 && static_cast<std::size_t>(v) < n) { return v; }
    return -1;
}

// A new array container of the counters in `values` (relaxed loads); null when out of memory.
template <typename Values>
rte_tel_data* u64_array(const Values& values) {
    rte_tel_data* a = rte_tel_data_alloc();
    if (a == nullptr) { return nullptr; }
    rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
    for (const auto& v : values) {
        rte_tel_data_add_array_u64(a, static_cast<std::uint64_t>(__atomic_load_n(&v, __ATOMIC_RELAXED)));
    }
    return a;
}

}  // namespace rocelab::runtime
