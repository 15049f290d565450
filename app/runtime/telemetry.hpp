// telemetry.hpp - what the /rocelab... telemetry modules share (switch_telemetry,
// gen_telemetry): serving one pipeline to rte_telemetry callbacks.
//
// rte_telemetry callbacks take no user pointer, so each pipeline type has one
// slot per process, served<Pipeline, Info>: attach() publishes the pipeline
// (call it just before launching the worker), and telemetry_detach()
// withdraws it, whichever slot served it: run_app (app_runtime.hpp) calls it
// as soon as the workers have stopped, before the app's stopped(), so before
// the pipeline is destroyed. Each command is a plain function
//   int cmd(const Pipeline&, const Info&, const char* params, rte_tel_data*)
// wrapped by served::command<cmd>, which holds the slot's mutex while it
// runs and answers -1 when no pipeline is attached; so detaching returns only
// once no callback uses the pipeline. Commands only read counters (relaxed
// loads) and immutable config, never the data path's hot state.
//
//   using slot = runtime::served<gen_pipeline, telemetry_info>;
//   static constexpr runtime::tel_command cmds[] = {
//       {"/rocelab_gen/info", slot::command<cmd_info>, "version, config, ..."}};
//   slot::attach(pipe, info, cmds, "rocelab-gen");
// served::port_names is the "/.../ports" command both apps have, and
// find_port() the port a command's parameter names.
#pragma once

#include <rte_telemetry.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string>

#include "core/counter.hpp"
#include "runtime/worker_figs.hpp"

namespace rocelab::runtime {

struct tel_command {
    const char* name;  // DPDK accepts only [A-Za-z0-9_/]
    telemetry_cb fn;
    const char* help;  // < RTE_TEL_MAX_STRING_LEN
};

// Registers the commands (a refused one is one warning line on stderr).
void register_commands(std::span<const tel_command> cmds, const char* prog);

// Withdraws the pipeline served::attach() last published, if any: returns
// once no command uses it (commands then answer -1).
void telemetry_detach();
// For served::attach(): what telemetry_detach() calls.
void set_detach(void (*detach)());

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
        set_detach(&detach);
        if (!_registered) {
            _registered = true;
            register_commands(cmds, prog);
        }
    }
    static void detach() {
        std::lock_guard lk(_mu);
        _pipe = nullptr;
    }

    // The "/.../ports" command of every pipeline: its port names, in port order.
    static int port_names(const char* cmd, const char* params, rte_tel_data* d) {
        return command<list_port_names>(cmd, params, d);
    }

private:
    static int list_port_names(const Pipeline& p, const Info&, const char*, rte_tel_data* d) {
        rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
        for (std::size_t i = 0; i < p.port_count(); ++i) {
            rte_tel_data_add_array_string(d, p.binding(i).name.c_str());
        }
        return 0;
    }

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

// The port that `params` names (its index or its name; empty: port 0), or -1.
template <typename Pipeline>
long find_port(const Pipeline& p, const char* params) {
    return find_index(params, p.port_count(),
                      [&](std::size_t k) -> const std::string& { return p.binding(k).name; });
}

// put(name, value) into dict `d`, for the report's put_*_counters() visitors.
inline auto dict_put(rte_tel_data* d) {
    return [d](const char* k, std::uint64_t v) { rte_tel_data_add_dict_u64(d, k, v); };
}

// A new array container of the counters in `values` (relaxed loads); null when out of memory.
template <typename Values>
rte_tel_data* u64_array(const Values& values) {
    rte_tel_data* a = rte_tel_data_alloc();
    if (a == nullptr) { return nullptr; }
    rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
    for (const auto& v : values) {
        rte_tel_data_add_array_u64(a, static_cast<std::uint64_t>(read_counter(v)));
    }
    return a;
}

// The worker lcores of a pipeline with worker views (the switch, the
// generator), for a "/.../workers" command: "workers", "tsc_hz", then one
// dict per worker, "w0", "w1", ...: its ports, busy cycles, loops, longest
// poll gap, and what `extra(dict, k)` adds. Busy share = the change of
// busy_cycles over tsc_hz x the time between two reads.
template <typename Pipeline, typename Extra>
int tel_workers(const Pipeline& p, std::uint64_t tsc_hz, rte_tel_data* d, Extra&& extra) {
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "workers", p.worker_count());
    rte_tel_data_add_dict_u64(d, "tsc_hz", tsc_hz);
    const auto tot = p.poll_totals();
    for (std::size_t k = 0; k < p.worker_count(); ++k) {
        const worker_poll_figs w = poll_figs(tot, p.worker(k), p.worker_count() == 1);
        rte_tel_data* x = rte_tel_data_alloc();
        if (x == nullptr) { return -ENOMEM; }
        rte_tel_data_start_dict(x);
        rte_tel_data_add_dict_string(x, "ports", worker_ports(p, k, " ").c_str());
        rte_tel_data_add_dict_u64(x, "busy_cycles", w.busy_cycles);
        rte_tel_data_add_dict_u64(x, "loops", w.loops);
        rte_tel_data_add_dict_u64(x, "max_poll_gap_ns", static_cast<std::uint64_t>(w.max_poll_gap_ns));
        extra(x, k);
        std::string key = "w";
        key += std::to_string(k);
        rte_tel_data_add_dict_container(d, key.c_str(), x, 0);
    }
    return 0;
}

}  // namespace rocelab::runtime
